"""From per-topic scores to one score per system: mean, geometric mean, logit mean, median.

Aggregates are named like measures: ``mean``, ``median``, ``gmean``, ``gmean(mode=shift)``,
``gmean(eps=0.001)``, ``logit(eps=0.01)``. NaN marks a topic that does not count (a topic the
run did not answer, under ``missing="skip"``) and is left out.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, fields

import numpy as np
import pandas as pd

AGGREGATES = ("mean", "gmean", "logit", "median")


@dataclass(frozen=True)
class Aggregate:
    """An aggregation of per-topic scores over topics.

    Parameters
    ----------
    kind : {"mean", "gmean", "logit", "median"}
        ``mean``: arithmetic mean (MAP, mean nDCG, ...).
        ``gmean``: geometric mean. ``mode="floor"`` is trec_eval's ``gm_map``,
        exp(mean(ln(max(x, eps)))); ``mode="shift"`` is Robertson's (CIKM 2006)
        exp(mean(ln(x + eps))) - eps.
        ``logit``: mean of logit(x) = ln((x + eps)/(1 - x + eps)) mapped back through the
        inverse, so it stays on the measure's scale (for measures in [0, 1]).
        ``median``: the median over topics.
    eps : float
        The small constant of gmean and logit (default 1e-5, trec_eval's).
    mode : {"floor", "shift"}
        gmean only.
    """

    kind: str = "mean"
    eps: float = 1e-5
    mode: str = "floor"

    def __post_init__(self):
        if self.kind not in AGGREGATES:
            raise ValueError(f"aggregate must be one of {AGGREGATES}, got {self.kind!r}")
        if (
            isinstance(self.eps, bool)
            or not isinstance(self.eps, (int, float))
            or not 0 < self.eps < float("inf")
        ):
            raise ValueError(f"eps must be a positive finite number, got {self.eps!r}")
        if self.mode not in ("floor", "shift"):
            raise ValueError(f"mode must be 'floor' or 'shift', got {self.mode!r}")

    def __call__(self, values: np.ndarray, axis: int = -1) -> np.ndarray:
        """Aggregate ``values`` over ``axis`` (topics), ignoring NaN."""
        x = np.asarray(values, dtype=np.float64)
        with np.errstate(all="ignore"):
            if self.kind == "mean":
                return _nanmean(x, axis)
            if self.kind == "median":
                return _nan_or(np.nanmedian, x, axis)
            if self.kind == "gmean":
                if self.mode == "floor":
                    return np.exp(_nanmean(np.log(np.maximum(x, self.eps)), axis))
                return np.exp(_nanmean(np.log(x + self.eps), axis)) - self.eps
            logits = np.log((x + self.eps) / (1.0 - x + self.eps))
            m = np.exp(_nanmean(logits, axis))
            return (m * (1.0 + self.eps) - self.eps) / (1.0 + m)

    def __str__(self) -> str:
        if self.kind in ("mean", "median"):
            return self.kind
        parts = []
        if self.eps != 1e-5:
            parts.append(f"eps={self.eps!r}")
        if self.kind == "gmean" and self.mode != "floor":
            parts.append(f"mode={self.mode}")
        return self.kind + (f"({','.join(parts)})" if parts else "")


def _nanmean(x: np.ndarray, axis: int) -> np.ndarray:
    return _nan_or(np.nanmean, x, axis)


def _nan_or(fn, x: np.ndarray, axis: int) -> np.ndarray:
    """fn over axis; NaN without a warning where every value is NaN (no topic counts)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(x, axis=axis)


def parse_aggregate(text: str | Aggregate) -> Aggregate:
    """Parse ``"gmean(mode=shift,eps=0.001)"`` and the like into an :class:`Aggregate`."""
    if isinstance(text, Aggregate):
        return text
    if not isinstance(text, str):
        raise TypeError(f"an aggregate is a string or an Aggregate, got {type(text).__name__}")
    from metaeval.measures.base import split_call

    try:
        name, params, cutoff, primed = split_call(text, what="aggregate")
    except ValueError as err:
        raise ValueError(f"{err}; expected e.g. 'gmean(mode=shift)'") from None
    allowed = {f.name for f in fields(Aggregate)} - {"kind"}
    unknown = sorted(set(params) - allowed)
    if unknown or cutoff is not None or primed:
        raise ValueError(
            f"aggregate {text!r}: parameters are {sorted(allowed)}, written name=value"
        )
    return Aggregate(name, **params)


def eps_sensitivity(
    values: np.ndarray, eps_grid=None, *, kind: str = "gmean", mode: str = "floor"
) -> pd.DataFrame:
    """The aggregate of ``values`` (topics on the last axis) as a function of eps.

    Returns a tidy DataFrame with columns ``eps, system, value`` (``system`` is the row of
    ``values``; a 1-D input is one system, 0). Shows how much a GMAP or logit-mean ranking owes
    to the arbitrary constant.
    """
    x = np.atleast_2d(np.asarray(values, dtype=np.float64))
    grid = np.logspace(-8, -1, 15) if eps_grid is None else np.asarray(eps_grid, dtype=np.float64)
    rows = []
    for eps in grid:
        agg = Aggregate(kind, float(eps), mode)
        for s, v in enumerate(agg(x, axis=-1)):
            rows.append((float(eps), s, float(v)))
    return pd.DataFrame(rows, columns=["eps", "system", "value"])
