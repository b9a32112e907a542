"""Precision-recall curves implied by a distribution over relevance, and their errors.

The inferred curve of a product distribution is its expected precision and recall at every
rank (Aslam, Yilmaz & Pavlu, SIGIR 2005); it is compared with the list's actual curve at the
list's recall points (Robertson, Kanoulas & Yilmaz, SIGIR 2010) or at the 11 TREC
interpolated-precision points (Aslam et al. 2005).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from metaeval.measures import ranks
from metaeval.meta.maxent._arrays import _as_binary, _as_graded, _rev_cumsum

__all__ = [
    "inferred_pr_curve",
    "actual_pr_curve",
    "threshold_probabilities",
    "rms_recall_points",
    "interpolated_precision",
    "rms_interpolated",
]


def _curve(x: np.ndarray, R: Any) -> tuple[np.ndarray, np.ndarray]:
    R = np.asarray(R, dtype=float)
    if np.any(R <= 0):
        raise ValueError("R must be positive to define recall")
    C = np.cumsum(x, axis=-1)
    return C / ranks(x.shape[-1]), C / R[..., None]


def inferred_pr_curve(p: Any, R: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""Expected precision and recall at every rank under a product distribution.

    .. math:: E[\mathrm{prec}@i] = \frac1i \sum_{j\le i} p_j,\qquad
              E[\mathrm{rec}@i] = \frac1R \sum_{j\le i} p_j

    (Aslam, Yilmaz, Pavlu 2005).  ``p`` has shape ``(..., N)``; for graded ``P`` pass the
    threshold probabilities from :func:`threshold_probabilities` and ``R`` at that
    threshold.

    Returns
    -------
    precision, recall : ndarray, shape (..., N)
    """
    return _curve(_as_binary(p), R)


def actual_pr_curve(rel: Any, R: Any) -> tuple[np.ndarray, np.ndarray]:
    """Precision and recall at every rank of an actual binary relevance vector.

    ``rel`` has shape ``(..., N)`` with 1 for relevant, 0 otherwise; ``R`` is the number of
    relevant documents for the topic.
    """
    rel = np.asarray(rel, dtype=float)
    if rel.ndim < 1:
        raise ValueError("rel must have at least one dimension (ranks)")
    return _curve(rel, R)


def threshold_probabilities(P: Any) -> np.ndarray:
    """``c[..., i, t-1] = P(grade at rank i >= t)`` for thresholds ``t = 1..G``."""
    P = _as_graded(P)
    return _rev_cumsum(P, axis=-1)[..., 1:]


def rms_recall_points(p: Any, rel: Any, R: Any) -> np.ndarray:
    r"""RMS difference of inferred and actual precision at the ranks where recall changes.

    .. math:: \mathrm{RMS} = \sqrt{\frac{1}{|\mathcal R|}\sum_{i \in \mathcal R}
              \big(E[\mathrm{prec}@i] - \mathrm{prec}@i\big)^2}

    where :math:`\mathcal R` are the ranks of the retrieved relevant documents (the points
    of the actual precision-recall curve; Robertson, Kanoulas, Yilmaz SIGIR 2010, the
    project's default, docs/methods.md §0).  NaN for a list without a relevant document.
    """
    p = _as_binary(p)
    rel = np.asarray(rel, dtype=float)
    if p.shape[-1] != rel.shape[-1]:
        raise ValueError(
            f"p and rel must have the same number of ranks, got {p.shape} and {rel.shape}"
        )
    pi, _ = inferred_pr_curve(p, R)
    pa, _ = actual_pr_curve(rel, R)
    w = rel > 0
    n = w.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(np.where(w, (pi - pa) ** 2, 0.0).sum(-1) / n)


def interpolated_precision(precision: Any, recall: Any, levels: Any = None) -> np.ndarray:
    """TREC interpolated precision: at each recall level, the best precision at recall >= it.

    Parameters
    ----------
    precision, recall : array_like, shape (..., N)
        A curve with non-decreasing recall.
    levels : array_like, optional
        Recall levels; default the 11 points 0, 0.1, ..., 1.

    Returns
    -------
    ndarray, shape (..., len(levels))
        0 at a level the curve never reaches.
    """
    prec = np.asarray(precision, dtype=float)
    rec = np.asarray(recall, dtype=float)
    if prec.shape != rec.shape:
        raise ValueError(
            f"precision and recall must have the same shape, got {prec.shape} and {rec.shape}"
        )
    levels = np.linspace(0.0, 1.0, 11) if levels is None else np.asarray(levels, dtype=float)
    # best precision from each rank to the end; padded with 0 for 'never reached'
    suffix = np.flip(np.maximum.accumulate(np.flip(prec, -1), axis=-1), -1)
    suffix = np.concatenate([suffix, np.zeros(prec.shape[:-1] + (1,))], axis=-1)
    out = np.empty(prec.shape[:-1] + (levels.size,))
    for k, lev in enumerate(levels):
        # recall is non-decreasing, so the first rank reaching the level is a count;
        # the 1e-12 slack keeps e.g. 3/10 >= 0.3 despite rounding
        first = (rec < lev - 1e-12).sum(-1)
        out[..., k] = np.take_along_axis(suffix, first[..., None], axis=-1)[..., 0]
    return out


def rms_interpolated(p: Any, rel: Any, R: Any, levels: Any = None) -> np.ndarray:
    r"""RMS difference of the 11-point interpolated precision of inferred and actual curves.

    .. math:: \mathrm{RMS} = \sqrt{\frac1{11}\sum_{l \in \{0, .1, \dots, 1\}}
              \big(P^{\mathrm{interp}}_{\mathrm{inferred}}(l)
              - P^{\mathrm{interp}}_{\mathrm{actual}}(l)\big)^2}

    (Aslam, Yilmaz, Pavlu SIGIR 2005).
    """
    p = _as_binary(p)
    rel = np.asarray(rel, dtype=float)
    if p.shape[-1] != rel.shape[-1]:
        raise ValueError(
            f"p and rel must have the same number of ranks, got {p.shape} and {rel.shape}"
        )
    ii = interpolated_precision(*inferred_pr_curve(p, R), levels)
    ia = interpolated_precision(*actual_pr_curve(rel, R), levels)
    return np.sqrt(((ii - ia) ** 2).mean(-1))
