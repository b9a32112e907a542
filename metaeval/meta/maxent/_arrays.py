"""Array helpers shared by the expectations, the solver and the curves (private)."""

from __future__ import annotations

from typing import Any

import numpy as np


def _as_binary(p: Any) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    if p.ndim < 1:
        raise ValueError(f"p must have at least one dimension (ranks), got shape {p.shape}")
    return p


def _as_graded(P: Any) -> np.ndarray:
    P = np.asarray(P, dtype=float)
    if P.ndim < 2 or P.shape[-1] < 2:
        raise ValueError(
            f"P must have shape (..., N, G+1) with at least two grades, got shape {P.shape}"
        )
    return P


def _rev_cumsum(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.flip(np.cumsum(np.flip(x, axis=axis), axis=axis), axis=axis)


def _shift_right(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Exclusive prefix along ``axis``: y[i] = x[i-1], y[0] = 0."""
    x = np.moveaxis(x, axis, -1)
    y = np.zeros_like(x)
    y[..., 1:] = x[..., :-1]
    return np.moveaxis(y, -1, axis)
