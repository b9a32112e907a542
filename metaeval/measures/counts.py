"""Counting measures (trec_eval ``num_ret``, ``num_rel``, ``num_rel_ret``) and judgment coverage."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaeval.engine import EvalTensor
from metaeval.measures._common import ranked_hits, tied_hits
from metaeval.measures.base import Measure, register
from metaeval.measures.binary import BinaryMeasure
from metaeval.measures.bounds import (
    JUDGMENTS_ONLY,
    monotone_bounds,
    unknown_counts,
)

_COUNT = (0.0, float("inf"))


@register(aliases=("num_ret",))
@dataclass(frozen=True, kw_only=True)
class NumRet(Measure):
    """Number of documents retrieved for the topic (trec_eval ``num_ret``)."""

    name = "NumRet"
    order_free = True
    summed_by_trec_eval = True
    bounds = _COUNT
    formula = "|ranked list|"
    reference = "trec_eval num_ret"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        return tensor.lengths.astype(np.float64)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        return self._compute(tensor)  # grades do not change it


@register(aliases=("num_rel",))
@dataclass(frozen=True, kw_only=True)
class NumRel(BinaryMeasure):
    """Number of judged documents with grade >= rel for the topic (trec_eval ``num_rel``)."""

    name = "NumRel"
    order_free = True
    summed_by_trec_eval = True
    bounds = _COUNT
    formula = "R = |{d : grade(d) >= rel}|"
    reference = "trec_eval num_rel"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        n_rel = tensor.n_relevant(self.rel).astype(np.float64)
        return np.broadcast_to(n_rel[None, :], (tensor.n_runs, tensor.n_topics)).copy()

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        if side == "lo":
            return self._compute(tensor)
        return self._compute(tensor) + sum(unknown_counts(tensor))


@register(aliases=("num_rel_ret",))
@dataclass(frozen=True, kw_only=True)
class NumRelRet(BinaryMeasure):
    """Number of relevant documents retrieved (trec_eval ``num_rel_ret``)."""

    name = "NumRelRet"
    order_free = True
    summed_by_trec_eval = True
    bounds = _COUNT
    formula = "C(|list|)"
    reference = "trec_eval num_rel_ret"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        return self.relevant_hits(tensor).counts().astype(np.float64)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        return monotone_bounds(self._compute, tensor, side)


@register
@dataclass(frozen=True, kw_only=True)
class Judged(Measure):
    """Fraction of the top k documents that are judged (qrels grade >= 0): the count over k.

    It equals ir_measures' ``Judged@k`` on lists of at least k documents without pooled but
    unjudged entries (tested against ir_measures). It differs from it in three documented
    ways: the denominator is k even for a list shorter than k (ir_measures divides by the
    list's length, so a 3-document list of judged documents is 1.0 there and 0.3 here at
    k = 10); a qrels entry with grade -1 (pooled but unjudged) does not count as judged
    (ir_measures counts any qrels entry); equal scores are ordered as trec_eval orders them
    (document id descending; ir_measures ascending).
    """

    cutoff: int | None = None
    name = "Judged"
    without_bounds = JUDGMENTS_ONLY
    cutoff_field = "cutoff"
    cutoff_required = True
    formula = "Judged@k = |{r <= k : judged(r)}| / k"
    reference = "Sakai, 'Alternatives to bpref', SIGIR 2007; cf. ir_measures Judged@k"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        judged = ranked_hits(tensor, lambda codes: codes >= 0, self.cutoff)
        return judged.counts() / float(self.cutoff)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        return _expected_judged(tensor, self.cutoff) / float(self.cutoff)


@register(aliases=("unj",))
@dataclass(frozen=True, kw_only=True)
class Unjudged(Measure):
    """Fraction of the top k ranks holding an unjudged document (trec_eval 10 ``unj_k``).

    Unjudged@k = |{r <= min(k, n) : unjudged(r)}| / k, n the list length; unjudged means not
    in the qrels or in it with a negative grade (pooled but unjudged). The denominator is k
    even for a shorter list: trec_eval counts the missing ranks as judged non-relevant
    ("15 docs of which 4 unjudged give unj_20 = 4/20"). A topic the run did not answer scores
    0, as in trec_eval 10 with ``-c``; the condensed variant (trec_eval ``-J``) is always 0.

    It is not 1 - :class:`Judged`@k: the two add up to min(k, n) / k, short of 1 on a list
    shorter than k. A "red flag" of judgment coverage: high values at small k mean the run
    is poorly covered by the pool.

    References
    ----------
    trec_eval 10.0, ``m_unjudged.c`` (measures ``unj_5``, ``unj_10``, ``unj_20``).
    """

    cutoff: int | None = None
    name = "Unjudged"
    without_bounds = JUDGMENTS_ONLY
    cutoff_field = "cutoff"
    cutoff_required = True
    formula = "Unjudged@k = |{r <= min(k, n) : unjudged(r)}| / k"
    reference = "trec_eval 10.0 unj (m_unjudged.c)"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        judged = ranked_hits(tensor, lambda codes: codes >= 0, self.cutoff).counts()
        seen = np.minimum(tensor.lengths, self.cutoff)
        return (seen - judged) / float(self.cutoff)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        seen = np.minimum(tensor.lengths, self.cutoff)
        return (seen - _expected_judged(tensor, self.cutoff)) / float(self.cutoff)


def _expected_judged(tensor: EvalTensor, cutoff: int) -> np.ndarray:
    """(S, T) expected number of judged documents in the top ``cutoff`` over tied orderings:
    a judged document of a tie group is there in J of its n positions."""
    hits = tied_hits(tensor, lambda codes: codes >= 0, cutoff)
    return hits.total(hits.inside(cutoff) / hits.tie_size)
