"""The evaluation tensor (runs x topics x ranks, stored as its judged entries) that every
measure reads."""

from metaeval.engine.tensor import UNJUDGED, UNPOOLED, EvalTensor

__all__ = ["EvalTensor", "UNJUDGED", "UNPOOLED"]
