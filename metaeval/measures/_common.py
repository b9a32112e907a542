"""Vectorised building blocks shared by the measure families."""

from __future__ import annotations

import numpy as np

from metaeval.engine import EvalTensor


def top(tensor: EvalTensor, cutoff: int | None) -> np.ndarray:
    """Grade codes of the first ``cutoff`` ranks (all ranks when None), shape (S, T, k)."""
    return tensor.codes if cutoff is None else tensor.codes[:, :, :cutoff]


def ranks(depth: int) -> np.ndarray:
    """1-based ranks 1..depth as floats."""
    return np.arange(1, depth + 1, dtype=np.float64)


def safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, and 0 where den is 0 (trec_eval's policy for topics with nothing relevant)."""
    num, den = np.broadcast_arrays(np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64))
    out = np.zeros(num.shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def count_at(cumulative: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """cumulative[s, t, positions[t] - 1], 0 where positions[t] == 0; positions clipped to depth."""
    depth = cumulative.shape[2]
    pos = np.minimum(np.asarray(positions), depth)
    idx = np.broadcast_to(np.maximum(pos - 1, 0)[None, :, None], cumulative.shape[:2] + (1,))
    got = np.take_along_axis(cumulative, idx, axis=2)[:, :, 0]
    return np.where(pos[None, :] > 0, got, 0)


def log2_discount(depth: int) -> np.ndarray:
    """1 / log2(r + 1) for r = 1..depth (trec_eval ``ndcg``, Burges et al.)."""
    return 1.0 / np.log2(np.arange(2, depth + 2, dtype=np.float64))
