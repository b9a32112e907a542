"""Graded-gain measures: nDCG in trec_eval's form."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaeval.engine import EvalTensor
from metaeval.measures._common import log2_discount, safe_divide, top
from metaeval.measures.base import Measure, register


def ideal_dcg(grade_counts: np.ndarray, gains: np.ndarray, discount: np.ndarray,
              cutoff: int | None) -> np.ndarray:
    """DCG of the ideal ranking of every topic, from its counts of judged documents per grade.

    The ideal list holds every judged document with a positive gain, highest gain first
    (trec_eval: documents of gain <= 0 are not in the ideal list). With per-grade counts the
    ideal DCG is a sum over grades of gain x (sum of the discounts of that grade's block of
    ranks), so no list is ever materialised.

    Parameters
    ----------
    grade_counts : (T, G) counts of judged documents per grade.
    gains : (G,) gain of each grade.
    discount : (n,) discount of ranks 1..n, n >= the longest ideal list (or the cutoff).
    cutoff : ideal list cut at this rank, or None.
    """
    order = np.argsort(-gains, kind="stable")
    order = order[gains[order] > 0]
    counts = grade_counts[:, order]
    ends = np.cumsum(counts, axis=1)
    starts = ends - counts
    if cutoff is not None:
        ends, starts = np.minimum(ends, cutoff), np.minimum(starts, cutoff)
    cum = np.concatenate([[0.0], np.cumsum(discount)])
    ends, starts = np.minimum(ends, len(discount)), np.minimum(starts, len(discount))
    return ((cum[ends] - cum[starts]) * gains[order][None, :]).sum(axis=1)


@register(aliases=("ndcg",))
@dataclass(frozen=True, kw_only=True)
class nDCG(Measure):
    """Normalised discounted cumulative gain, trec_eval ``ndcg`` (``ndcg_cut`` with a cutoff).

    DCG@k = sum_{r<=k} gain(r) / log2(r + 1), gain = the document's grade (unjudged: 0);
    nDCG@k = DCG@k / DCG*@k, the ideal ranking holding every judged document of positive gain
    in decreasing gain, cut at the same k. Without a cutoff the whole list and the whole ideal
    list count. The relevance level does not apply (as in trec_eval). 0 when DCG* = 0.
    """

    cutoff: int | None = None
    name = "nDCG"
    cutoff_field = "cutoff"
    recall_normalised = True
    formula = "nDCG@k = sum_{r<=k} g(r)/log2(r+1) / ideal"
    reference = ("Jarvelin & Kekalainen, 'Cumulated gain-based evaluation of IR techniques', "
                 "ACM TOIS 2002; trec_eval ndcg")

    def gains(self, n_grades: int) -> np.ndarray:
        """Gain of grades 0 .. n_grades-1."""
        return np.arange(n_grades, dtype=np.float64)

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        codes = top(tensor, self.cutoff)
        gains = self.gains(tensor.n_grades)
        # Codes < 0 (unjudged, unpooled, past the end) have gain 0: index a padded table.
        table = np.concatenate([[0.0, 0.0], gains])
        dcg = (table[codes.astype(np.int64) + 2] * log2_discount(codes.shape[2])).sum(axis=2)
        n_ideal = int(tensor.grade_counts.sum(axis=1).max(initial=0))
        depth = n_ideal if self.cutoff is None else min(self.cutoff, n_ideal)
        ideal = ideal_dcg(tensor.grade_counts, gains, log2_discount(max(depth, 1)), self.cutoff)
        return safe_divide(dcg, ideal[None, :])
