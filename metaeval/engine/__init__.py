"""The dense evaluation tensor (runs x topics x ranks) that every measure reads."""

from metaeval.engine.tensor import UNJUDGED, UNPOOLED, EvalTensor

__all__ = ["EvalTensor", "UNJUDGED", "UNPOOLED"]
