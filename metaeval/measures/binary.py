"""Binary-relevance measures, exactly as trec_eval computes them.

A document is relevant when its grade is at least ``rel`` (trec_eval ``-l``; default 1, TREC DL
uses 2). With real-valued grades ``rel`` may be any number > 0 (``P(rel=0.5)@10``): relevant
means grade value >= rel, tested on the grade codes as code >= :meth:`EvalTensor.code_at_least`
(on integer grades and an integer level that is trec_eval's own test). Unjudged documents
count as non-relevant, except where a measure says otherwise (bpref and infAP skip or model
them). R is the number of judged documents with grade >= ``rel``; a topic with R = 0 scores 0
on every recall-normalised measure, as in trec_eval.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real
from typing import ClassVar

import numpy as np

from metaeval._constraints import Described, Interval, Level, OneOf, Optional, Sequence
from metaeval.engine import UNJUDGED, UNPOOLED, EvalTensor
from metaeval.measures._common import (
    RankedHits,
    TiedHits,
    grid_rows,
    group_sizes,
    laplace_nodes,
    log_choose,
    log_none,
    ranked_hits,
    safe_divide,
    tied_hits,
)
from metaeval.measures.base import Measure, MeasureValueError, refuse_costly_ties, register
from metaeval.measures.bounds import (
    ap_bounds,
    monotone_bounds,
    recall_bounds,
    rprec_bounds,
    unknown_counts,
    unknown_elsewhere,
    unknown_mask,
)

INFAP_EPSILON = 1e-5  # trec_eval's INFAP_EPSILON


@dataclass(frozen=True, kw_only=True)
class BinaryMeasure(Measure):
    """A measure of binary relevance with a relevance level ``rel`` (grade >= rel is relevant).

    ``rel`` is a number > 0: an integer on integer grades (trec_eval ``-l``), or any level on
    real-valued ones (``rel=0.5``); a whole number is kept as an int, so ``rel=2.0`` is
    ``rel=2``.
    """

    rel: int | float = 1
    _constraints: ClassVar[dict] = {"rel": Level()}

    def relevant_hits(self, tensor: EvalTensor, cutoff: int | None = None) -> RankedHits:
        """The relevant ranks (within the cutoff), grouped by run and topic.

        Relevant documents are a small share of a deep tensor, so the binary measures add their
        terms over these ranks alone instead of over every rank.
        """
        lowest = tensor.code_at_least(self.rel)  # >= 1, as rel > 0 = levels[0]
        return ranked_hits(tensor, lambda codes: codes >= lowest, cutoff)

    def tied_relevant(self, tensor: EvalTensor, cutoff: int | None = None) -> TiedHits:
        """:meth:`relevant_hits` with their groups of tied documents (``ties="expected"``)."""
        lowest = tensor.code_at_least(self.rel)
        return tied_hits(tensor, lambda codes: codes >= lowest, cutoff)

    def per_topic(self, tensor: EvalTensor, hits: RankedHits, terms: np.ndarray) -> np.ndarray:
        """(S, T) sum of ``terms`` over ``hits``, divided by R (0 when R = 0)."""
        return safe_divide(hits.total(terms), tensor.n_relevant(self.rel)[None, :])


@register(aliases=("MAP", "map"))
@dataclass(frozen=True, kw_only=True)
class AP(BinaryMeasure):
    """Average precision (trec_eval ``map``; ``map_cut`` with a cutoff).

    AP@k = (1/R) * sum over relevant ranks r <= k of C(r)/r, C(r) = relevant docs in ranks 1..r.
    """

    cutoff: int | None = None
    name = "AP"
    cutoff_field = "cutoff"
    recall_normalised = True
    formula = "AP = (1/R) sum_{r: rel(r)} C(r)/r"
    reference = (
        "Buckley & Voorhees, 'Retrieval system evaluation', TREC: Experiment and Evaluation, 2005"
    )

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        hits = self.relevant_hits(tensor, self.cutoff)
        # The n-th relevant document of a list contributes n / rank.
        return self.per_topic(tensor, hits, hits.count / hits.rank)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        hits = self.tied_relevant(tensor, self.cutoff)
        every = np.ones(len(hits.group), dtype=bool)
        return self.per_topic(tensor, hits, hits.expected_precision(every, self.cutoff))

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        return ap_bounds(tensor, self.rel, self.cutoff, side)


@register
@dataclass(frozen=True, kw_only=True)
class P(BinaryMeasure):
    """Precision at k (trec_eval ``P_k``): relevant documents in the top k, divided by k.

    The denominator is k even when fewer than k documents were retrieved.
    """

    cutoff: int | None = None
    name = "P"
    cutoff_field = "cutoff"
    cutoff_required = True
    formula = "P@k = C(k)/k"
    reference = "trec_eval P; Manning, Raghavan & Schuetze, Introduction to IR, 2008, ch. 8"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        return self.relevant_hits(tensor, self.cutoff).counts() / float(self.cutoff)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        return monotone_bounds(self._compute, tensor, side)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        # A relevant document of a tie group is within the top k in J of its n positions.
        hits = self.tied_relevant(tensor, self.cutoff)
        return hits.total(hits.inside(self.cutoff) / hits.tie_size) / float(self.cutoff)


@register(aliases=("relative_P",))
@dataclass(frozen=True, kw_only=True)
class RelP(BinaryMeasure):
    """Relative precision at k (trec_eval ``relative_P_k``): precision at k over the best
    precision a list can reach at k.

    RelP@k = C(k) / min(k, R), 0 when R = 0: precision at k while k <= R, recall at k past
    it. As for ``P@k``, a list shorter than k counts its missing ranks as non-relevant.

    Its bounds: as C(k) is at most k and at most R, RelP@k = max(C(k)/k, C(k)/R). Both
    are greatest when the unknown documents within the top k are relevant and the others
    not, and least the other way round, so those two assignments give the bounds.

    Parameters
    ----------
    cutoff : int
        k, required (``RelP@10``; trec_eval ``-m relative_P.10``).
    rel : int or float
        Relevance level (trec_eval ``-l``), default 1; any number > 0 on real-valued grades.

    References
    ----------
    trec_eval 10.0, ``m_rel_P.c``.
    """

    cutoff: int | None = None
    name = "RelP"
    cutoff_field = "cutoff"
    cutoff_required = True
    recall_normalised = True
    formula = "RelP@k = C(k) / min(k, R)"
    reference = "trec_eval 10.0 relative_P (m_rel_P.c)"

    def _best(self, n_rel) -> np.ndarray:
        """(S, T) the denominator min(k, R) for R = ``n_rel`` ((1, T) or (S, T))."""
        return np.minimum(float(self.cutoff), np.asarray(n_rel, dtype=np.float64))

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        found = self.relevant_hits(tensor, self.cutoff).counts()
        return safe_divide(found, self._best(tensor.n_relevant(self.rel)[None, :]))

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        # R does not depend on the order: E[C(k)] / min(k, R), as P@k
        hits = self.tied_relevant(tensor, self.cutoff)
        found = hits.total(hits.inside(self.cutoff) / hits.tie_size)
        return safe_divide(found, self._best(tensor.n_relevant(self.rel)[None, :]))

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        found = self.relevant_hits(tensor, self.cutoff).counts()
        n_rel = tensor.n_relevant(self.rel)[None, :]
        inside, outside = unknown_counts(tensor, self.cutoff)
        if tensor.code_at_least(self.rel) >= tensor.n_grades:  # nothing can be relevant
            inside, outside = np.zeros_like(inside), np.zeros_like(outside)
        if side == "hi":
            return safe_divide(found + inside, self._best(n_rel + inside))
        return safe_divide(found, self._best(n_rel + outside))


#: Largest multiple of R of :class:`Rprec`: far past any list, and k stays an exact integer.
MAX_MULT = 1000.0


class _WithinR:
    """``recall_normalised`` of :class:`Rprec`: on the class, True (R-precision); on an
    instance, whether its cutoff stays within R (mult <= 1), where an ideal list scores 1.
    Past R (mult > 1) it divides by k, more than any list can find."""

    def __get__(self, obj, owner=None) -> bool:
        return True if obj is None else obj.mult <= 1.0


@register
@dataclass(frozen=True, kw_only=True)
class Rprec(BinaryMeasure):
    """R-precision (trec_eval ``Rprec``), and precision at a multiple of R (trec_eval
    ``Rprec_mult``).

    Rprec = C(k)/k at the cutoff k = trunc(mult R + 0.9), R the number of relevant documents
    and C(k) the relevant documents in the top k; 0 when k = 0 (R = 0, or mult R < 0.1).
    With the default mult = 1, k = R: R-precision. A list shorter than k counts its missing
    ranks as non-relevant, as ``P@k`` does. Comparing a run at small and large multiples
    tells whether it is precision or recall oriented.

    Parameters
    ----------
    mult : float
        The multiple of R (trec_eval ``-m Rprec_mult.0.2,...``; its output names it
        ``Rprec_mult_0.20``), a number > 0; default 1.
    rel : int or float
        Relevance level (trec_eval ``-l``), default 1; any number > 0 on real-valued grades.

    References
    ----------
    Buckley & Voorhees, "Retrieval system evaluation", TREC: Experiment and Evaluation in
    Information Retrieval, 2005; trec_eval 10.0, ``m_Rprec.c`` and ``m_Rprec_mult.c``.
    """

    mult: float = 1.0
    name = "Rprec"
    recall_normalised = _WithinR()
    formula = "Rprec = C(k)/k, k = trunc(mult R + 0.9) (mult = 1: C(R)/R)"
    reference = "Buckley & Voorhees, TREC: Experiment and Evaluation, 2005; trec_eval Rprec_mult"
    _constraints: ClassVar[dict] = {
        "mult": Described(Interval(Real, 0, MAX_MULT, closed="right"), "a number in (0, 1000]")
    }

    def _validate(self) -> None:
        # one measure and one name for mult=1 and mult=1.0
        object.__setattr__(self, "mult", float(self.mult))

    def cut(self, tensor: EvalTensor) -> np.ndarray:
        """(T,) the cutoff k of every topic, as trec_eval computes it: (long) (mult R + 0.9)
        in double precision (R itself when mult = 1)."""
        n_rel = tensor.n_relevant(self.rel).astype(np.float64)
        return np.floor(self.mult * n_rel + 0.9).astype(np.int64)

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        k = self.cut(tensor)
        hits = self.relevant_hits(tensor)
        return safe_divide(hits.total(hits.rank <= k[hits.topic]), k[None, :])

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        # a relevant document of a tie group is within the top k in J of its n positions
        k = self.cut(tensor)
        hits = self.tied_relevant(tensor)
        inside = hits.inside(k[hits.topic])
        return safe_divide(hits.total(inside / hits.tie_size), k[None, :])

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        if self.mult == 1.0:
            return rprec_bounds(tensor, self.rel, side)
        return rprec_mult_bounds(tensor, self.rel, self.mult, side)


def rprec_mult_bounds(tensor: EvalTensor, rel: float, mult: float, side: str) -> np.ndarray:
    """(S, T) bounds of C(k)/k, k = trunc(mult R + 0.9), over the unknown documents.

    Making relevant s of the L unknown documents a list retrieved and e of the E elsewhere
    sets R = R0 + s + e, hence k. For a given R, C(k) is greatest with the largest
    s = min(L, R - R0) on the first unknown ranks (min(s, U(k)) of them within the top k,
    U(k) the unknown ranks there), least with the smallest s = max(0, R - R0 - E) on the last
    ones (max(0, s - (L - U(k))) within). Each bound is the best (worst) of these over every
    R = R0 .. R0 + L + E, one row per list and R: k does not follow R one rank at a time
    (mult != 1), so the ranks cannot stand for the values of R as in :func:`rprec_bounds`.
    """
    codes = tensor.codes
    n_runs, n_topics, depth = codes.shape
    lowest = tensor.code_at_least(rel)
    if lowest >= tensor.n_grades:  # no grade reaches rel: R = 0 whatever the grades, k = 0
        return np.zeros((n_runs, n_topics))
    unknown = unknown_mask(tensor)
    # C(r) and U(r) at ranks 1 .. depth, with a column of zeros for rank 0
    found = np.zeros((n_runs * n_topics, depth + 1), dtype=np.int32)
    seen = np.zeros_like(found)
    found[:, 1:] = np.cumsum(codes >= lowest, axis=2, dtype=np.int32).reshape(-1, depth)
    seen[:, 1:] = np.cumsum(unknown, axis=2, dtype=np.int32).reshape(-1, depth)
    listed = seen[:, -1].astype(np.int64)
    elsewhere = unknown_elsewhere(tensor).reshape(-1).astype(np.int64)
    sizes = listed + elsewhere + 1
    owner, extra = grid_rows(sizes)  # extra = R - R0
    n_rel = np.tile(tensor.n_relevant(rel).astype(np.int64), n_runs)[owner] + extra
    k = np.floor(mult * n_rel.astype(np.float64) + 0.9).astype(np.int64)
    at = np.minimum(k, depth)
    within = seen[owner, at]
    if side == "hi":
        chosen = np.minimum(np.minimum(listed[owner], extra), within)
    else:
        least = np.maximum(extra - elsewhere[owner], 0)
        chosen = np.maximum(least - (listed[owner] - within), 0)
    values = safe_divide(found[owner, at] + chosen, k)
    best = np.maximum if side == "hi" else np.minimum
    # every list has a row (R = R0): one reduction per list's stretch of rows
    return best.reduceat(values, np.cumsum(sizes) - sizes).reshape(n_runs, n_topics)


@register(aliases=("MRR", "recip_rank"))
@dataclass(frozen=True, kw_only=True)
class RR(BinaryMeasure):
    """Reciprocal rank (trec_eval ``recip_rank``): 1 / rank of the first relevant document."""

    cutoff: int | None = None
    name = "RR"
    cutoff_field = "cutoff"
    formula = "RR = 1/r1, 0 if no relevant document is retrieved"
    reference = "Voorhees, 'The TREC-8 question answering track report', TREC 1999"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        hits = self.relevant_hits(tensor, self.cutoff)
        groups, first = hits.first()
        out = np.zeros(tensor.n_runs * tensor.n_topics)
        out[groups] = 1.0 / (hits.rank0[first] + 1.0)
        return out.reshape(tensor.n_runs, tensor.n_topics)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        return monotone_bounds(self._compute, tensor, side)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        # E[1 / r1] over where the first relevant document falls
        hits = self.tied_relevant(tensor, self.cutoff)
        groups, owner, rank, chance = hits.first_chances(self.cutoff)
        out = np.zeros(tensor.n_runs * tensor.n_topics)
        out[groups] = np.bincount(owner, weights=chance / rank, minlength=len(groups))
        return out.reshape(tensor.n_runs, tensor.n_topics)


@register(aliases=("recall", "set_recall"))
@dataclass(frozen=True, kw_only=True)
class R(BinaryMeasure):
    """Recall (trec_eval ``recall_k``): relevant documents in the top k, divided by R."""

    cutoff: int | None = None
    name = "R"
    cutoff_field = "cutoff"
    recall_normalised = True
    formula = "R@k = C(k)/R"
    reference = "trec_eval recall"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        hits = self.relevant_hits(tensor, self.cutoff)
        return self.per_topic(tensor, hits, np.ones(len(hits.rank)))

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        hits = self.tied_relevant(tensor, self.cutoff)
        return self.per_topic(tensor, hits, hits.inside(self.cutoff) / hits.tie_size)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        return recall_bounds(tensor, self.rel, self.cutoff, side)


@register
@dataclass(frozen=True, kw_only=True)
class Success(BinaryMeasure):
    """Success at k (trec_eval ``success``): 1 if a relevant document is in the top k, else 0."""

    cutoff: int | None = None
    name = "Success"
    cutoff_field = "cutoff"
    cutoff_required = True
    formula = "Success@k = [C(k) > 0]"
    reference = "trec_eval success"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        return (self.relevant_hits(tensor, self.cutoff).counts() > 0).astype(np.float64)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        return monotone_bounds(self._compute, tensor, side)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        # Fails only when every tie group starting above k keeps its m relevant documents
        # out of its J positions within the top k (hypergeometric, independent groups).
        hits = self.tied_relevant(tensor, self.cutoff)
        at = hits.tie_blocks
        log_fail = log_none(hits.tie_size[at], hits.tie_hits[at], hits.inside(self.cutoff)[at])
        n = tensor.n_runs * tensor.n_topics
        # a sure success is a log failure of -inf, and exp(-inf) = 0
        fail = np.exp(np.bincount(hits.group[at], weights=log_fail, minlength=n))
        return (1.0 - fail).reshape(tensor.n_runs, tensor.n_topics)


@register(aliases=("bpref",))
@dataclass(frozen=True, kw_only=True)
class Bpref(BinaryMeasure):
    """Binary preference, trec_eval >= 8.0 (Buckley & Voorhees SIGIR 2004).

    bpref = (1/R) sum over retrieved relevant r of [1 - min(n_r, R) / min(N, R)], where n_r is
    the number of judged non-relevant documents ranked above r (unjudged ones are skipped), N
    the number of judged non-relevant documents of the topic, and the term is 1 when n_r = 0.
    """

    name = "Bpref"
    recall_normalised = True
    formula = "bpref = (1/R) sum_r [1 - min(n_r, R)/min(N, R)]"
    reference = "Buckley & Voorhees, 'Retrieval evaluation with incomplete information', SIGIR 2004"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        group, topic, above, _ = _bpref_parts(tensor, self.rel)
        n_rel = tensor.n_relevant(self.rel)[topic]
        n_non = tensor.n_nonrelevant(self.rel)[topic]
        terms = 1.0 - safe_divide(np.minimum(above, n_rel), np.minimum(n_non, n_rel))
        return _bpref_total(tensor, group, terms, self.rel)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        group, topic, above, tied = _bpref_tied_parts(tensor, self.rel)
        n_rel = tensor.n_relevant(self.rel)[topic]
        n_non = tensor.n_nonrelevant(self.rel)[topic]
        terms = 1.0 - safe_divide(_mean_capped(above, tied, n_rel), np.minimum(n_non, n_rel))
        return _bpref_total(tensor, group, terms, self.rel)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        def cost(n0, u, r0, m0, r_most, m_most):
            # min(n, R) / min(N, R) is at least min(n, R) / R and min(n, R) / N_most; at most
            # min(n, R) / R <= (n0 + u) / R0 when N >= R, else n / N <= (n0 + u) / (N0 + u)
            least = np.maximum(
                np.minimum(safe_divide(n0, r_most), 1.0), safe_divide(np.minimum(n0, r0), m_most)
            )
            most = np.maximum(np.minimum(safe_divide(n0 + u, r0), 1.0), safe_divide(n0 + u, m0 + u))
            return least, most

        return _bpref_bounds(tensor, self.rel, side, cost)


@register(aliases=("infap",))
@dataclass(frozen=True, kw_only=True)
class infAP(BinaryMeasure):
    """Inferred AP (Yilmaz & Aslam CIKM 2006), as trec_eval's ``infAP``.

    Three kinds of document: not in the qrels ("not pooled": skipped, but it keeps its rank),
    pooled but unjudged (qrels grade -1) and judged. At the relevant document at 0-based rank
    j > 0, with rel/nonrel/unj the judged relevant, judged non-relevant and pooled-unjudged
    documents above it: 1/(j+1) + (j/(j+1)) * ((rel+nonrel+unj)/j) * ((rel+eps)/(rel+nonrel+2 eps)),
    eps = 1e-5; 1 at j = 0. infAP = sum / R. With no unjudged entries it equals AP.
    """

    name = "infAP"
    recall_normalised = True
    formula = "E[prec@k] = 1/k + ((k-1)/k) (|pooled above|/(k-1)) ((|rel|+e)/(|rel|+|nonrel|+2e))"
    reference = (
        "Yilmaz & Aslam, 'Estimating average precision with incomplete and imperfect "
        "judgments', CIKM 2006"
    )

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        # Only pooled documents (judged or pooled-unjudged) enter the counts; unpooled ones
        # are skipped but keep their rank, which is what j counts.
        hits = ranked_hits(tensor, lambda codes: codes != UNPOOLED)
        is_rel = hits.grade >= tensor.code_at_least(self.rel)
        is_unj = hits.grade == UNJUDGED
        rel_above = hits.cumsum(is_rel) - is_rel
        nonrel_above = hits.cumsum(~is_rel & ~is_unj)  # inclusive = above, at a relevant rank
        unj_above = hits.cumsum(is_unj)
        j = hits.rank0.astype(np.float64)
        pooled_fraction = safe_divide(rel_above + nonrel_above + unj_above, j)
        rel_rate = (rel_above + INFAP_EPSILON) / (rel_above + nonrel_above + 2 * INFAP_EPSILON)
        terms = np.where(
            j == 0, 1.0, 1.0 / (j + 1.0) + (j / (j + 1.0)) * pooled_fraction * rel_rate
        )
        return self.per_topic(tensor, hits, np.where(is_rel, terms, 0.0))

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        r"""Every relevant document of a tie group has the same expected term, so it is
        computed once per group (first 0-based rank a, size n; m_r relevant, m_n judged
        non-relevant and m_u pooled-unjudged documents among the n, the rest unpooled).
        Above the document, at 0-based rank j = a + x with x uniform on 0..n-1, are the
        earlier groups' B_r, B_n, B_u and, of the other n - 1 of its group, r relevant, k
        non-relevant and t others (x = r + k + t, multivariate hypergeometric), t m_u / q
        of them pooled-unjudged on average (q = n - m_r - m_n). The term is linear in that
        count, so

        .. math:: E = \frac{H_{a+n} - H_a}{n} + \frac1n \sum_{r,k} \binom{m_r-1}{r}
                  \binom{m_n}{k} \rho(r, k) \big[(B + r + k) S_0(r + k)
                  + \tfrac{m_u}{q} S_1(r + k)\big],

        with B = B_r + B_n + B_u, rho the smoothed rate (B_r + r + eps) / (B_r + B_n + r + k
        + 2 eps), and S_i(s) = sum_t t^i C(q, t) / (C(n - 1, s + t) (a + s + t + 1)): sums over
        the t of each s = r + k, not over every (r, k, t).
        """
        hits = tied_hits(tensor, lambda codes: codes != UNPOOLED)
        is_rel = hits.grade >= tensor.code_at_least(self.rel)
        is_unj = hits.grade == UNJUDGED
        kinds = (is_rel, ~is_rel & ~is_unj, is_unj)
        first, block = hits.tie_layout
        m_r, m_n, m_u = (np.bincount(block, weights=kind, minlength=len(first)) for kind in kinds)
        b_r, b_n, b_u = (hits.before_tie(kind.astype(np.float64))[first] for kind in kinds)
        a = hits.tie_start[first].astype(np.int64)
        n = hits.tie_size[first].astype(np.int64)
        with_rel = np.flatnonzero(m_r > 0)
        per_group = np.zeros(len(first))
        per_group[with_rel] = _infap_group_terms(
            a[with_rel],
            n[with_rel],
            *(v[with_rel].astype(np.int64) for v in (m_r, m_n, m_u, b_r, b_n, b_u)),
        )
        return self.per_topic(tensor, hits, np.where(is_rel, per_group[block], 0.0))

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        # Every completion of the judgments leaves no document unjudged, and infAP is then AP
        # but for its smoothing, which moves a term at 0-based rank j by
        # eps (j - 2 rel) / ((j + 1) (j + 2 eps)), less than eps: AP's bounds widened by eps.
        if side == "hi":
            return np.minimum(ap_bounds(tensor, self.rel, None, side) + INFAP_EPSILON, 1.0)
        return np.maximum(ap_bounds(tensor, self.rel, None, side) - INFAP_EPSILON, 0.0)


def _infap_group_terms(a, n, m_r, m_n, m_u, b_r, b_n, b_u) -> np.ndarray:
    """infAP's expected term of a relevant document of each tie group (see
    :meth:`infAP._expected`): arrays of ints, one per group with m_r >= 1."""
    q = n - m_r - m_n  # the others: pooled-unjudged or unpooled
    # S_0(s) and S_1(s) for s = 0 .. m_r - 1 + m_n, summed over t = 0 .. q.
    owner, index = grid_rows((m_r + m_n) * (q + 1))
    s, t = np.divmod(index, (q + 1)[owner])
    x = s + t
    w = np.exp(log_choose(q[owner], t) - log_choose(n[owner] - 1, x)) / (a[owner] + x + 1.0)
    sums_at = np.cumsum(m_r + m_n) - (m_r + m_n)  # where each group's s = 0 is
    slot = sums_at[owner] + s
    s0 = np.bincount(slot, weights=w, minlength=int((m_r + m_n).sum()))
    s1 = np.bincount(slot, weights=w * t, minlength=len(s0))
    # The (r, k) of each group.
    owner, index = grid_rows(m_r * (m_n + 1))
    r, k = np.divmod(index, (m_n + 1)[owner])
    slot = sums_at[owner] + r + k
    rate = (b_r[owner] + r + INFAP_EPSILON) / (b_r[owner] + b_n[owner] + r + k + 2 * INFAP_EPSILON)
    unjudged_share = safe_divide(m_u.astype(np.float64), q.astype(np.float64))[owner]
    chance = np.exp(log_choose(m_r[owner] - 1, r) + log_choose(m_n[owner], k))
    above = (b_r + b_n + b_u)[owner] + r + k
    terms = chance * rate * (above * s0[slot] + unjudged_share * s1[slot])
    total = np.bincount(owner, weights=terms, minlength=len(a))
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, int((a + n).max()) + 1))])
    return (harmonic[a + n] - harmonic[a] + total) / n


def _bpref_parts(tensor: EvalTensor, rel_level: float):
    """At every retrieved relevant document: its (run, topic) group, its topic, n_r, the
    number of judged non-relevant documents ranked above it (unjudged documents skipped), and
    its 0-based rank.

    n_r = (judged documents above) - (relevant documents above); both are positions within a
    group, of the judged ranks and of the relevant ones, so no running sum over every judged
    rank is needed.
    """
    n_groups = tensor.n_runs * tensor.n_topics
    judged = ranked_hits(tensor, lambda codes: codes >= 0)  # by run, topic, then rank
    at = np.flatnonzero(judged.grade >= tensor.code_at_least(rel_level))
    rel_group = judged.group[at]
    rel_sizes = group_sizes(rel_group, n_groups)
    judged_above = at - judged.group_start[rel_group]
    rel_above = np.arange(len(at)) - (np.cumsum(rel_sizes) - rel_sizes)[rel_group]
    above = (judged_above - rel_above).astype(np.float64)
    return rel_group, rel_group % tensor.n_topics, above, judged.rank0[at]


def _bpref_bounds(tensor: EvalTensor, rel_level: float, side: str, cost) -> np.ndarray:
    """(S, T) bounds of a bpref, (1/R) sum over retrieved relevant r of (1 - c_r), that hold
    over every grade of the unknown documents (docs/methods.md §6.7).

    Under any grades, a judged relevant document r has n_r >= n0_r judged non-relevant
    documents above it, at most n0_r + u_r (u_r unknown documents above it); R lies in
    [R0, R0 + L + E] and N in [N0, N0 + L + E] (L unknown documents in the list, E
    elsewhere), and N >= N0 + (n_r - n0_r). ``cost(n0, u, R0, N0, R_most, N_most)`` gives
    per document the least and greatest c_r these allow. Highest: the judged terms at their
    greatest and the L unknown ones at 1, over R0 + L (the sum is at most R0 + s for s of
    them relevant, so it rises with s); lowest: the judged terms at their least over R0 + L
    + E.
    """
    group, topic, above, rank0 = _bpref_parts(tensor, rel_level)
    unknown = np.cumsum(unknown_mask(tensor), axis=2, dtype=np.int32)
    listed = unknown[:, :, -1].astype(np.float64)
    others = listed + unknown_elsewhere(tensor)
    n_rel = tensor.n_relevant(rel_level).astype(np.float64)[None, :]
    n_non = tensor.n_nonrelevant(rel_level).astype(np.float64)[None, :]
    most_rel, most_non = (n_rel + others).reshape(-1), (n_non + others).reshape(-1)
    least, greatest = cost(
        above,
        unknown.reshape(-1, unknown.shape[2])[group, rank0].astype(np.float64),
        n_rel[0, topic],
        n_non[0, topic],
        most_rel[group],
        most_non[group],
    )
    if side == "hi":
        sums = _bpref_sums(tensor, group, 1.0 - least) + listed
        return safe_divide(sums, n_rel + listed)
    return safe_divide(_bpref_sums(tensor, group, 1.0 - np.minimum(greatest, 1.0)), n_rel + others)


def _bpref_sums(tensor: EvalTensor, group: np.ndarray, terms: np.ndarray) -> np.ndarray:
    sums = np.bincount(group, weights=terms, minlength=tensor.n_runs * tensor.n_topics)
    return sums.reshape(tensor.n_runs, tensor.n_topics)


def _bpref_tied_parts(tensor: EvalTensor, rel_level: float):
    """:func:`_bpref_parts` over tied orderings: at every retrieved relevant document, its
    group and topic, the judged non-relevant documents of its list in earlier tie groups
    (c), and those of its own tie group (z). Unjudged documents are skipped, so the relevant
    document's place among the z is uniform: z_r = c + kappa, kappa uniform on 0 .. z."""
    judged = tied_hits(tensor, lambda codes: codes >= 0)
    nonrel = (judged.grade < tensor.code_at_least(rel_level)).astype(np.int64)
    at = np.flatnonzero(nonrel == 0)
    before = judged.before_tie(nonrel)[at].astype(np.float64)
    group = judged.group[at]
    return group, group % tensor.n_topics, before, judged.tie_total(nonrel)[at]


def _mean_capped(low: np.ndarray, spread: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """The mean of min(v, cap) over the integers v = low .. low + spread.

    With S(x) = sum_{v=0}^{x} min(v, cap) = x (x + 1)/2 up to cap, then cap (cap + 1)/2 +
    (x - cap) cap, the mean is (S(low + spread) - S(low - 1)) / (spread + 1).
    """
    cap = np.asarray(cap, dtype=np.float64)

    def upto(x):
        return np.where(x <= cap, x * (x + 1.0) / 2.0, cap * (cap + 1.0) / 2.0 + (x - cap) * cap)

    return (upto(low + spread) - upto(low - 1.0)) / (spread + 1.0)


def _bpref_total(tensor: EvalTensor, group: np.ndarray, terms: np.ndarray, rel_level: float):
    return safe_divide(_bpref_sums(tensor, group, terms), tensor.n_relevant(rel_level)[None, :])


@register(aliases=("bpref_R",))
@dataclass(frozen=True, kw_only=True)
class Bpref_R(BinaryMeasure):
    """bpref as defined in the paper, Sakai's bpref_R (Buckley & Voorhees 2004; Sakai 2007).

    bpref_R = (1/R) sum over retrieved relevant r of [1 - min(n_r, R)/R], n_r the number of
    judged non-relevant documents ranked above r (unjudged documents are skipped). It differs
    from trec_eval's :class:`Bpref` only when N < R (trec_eval divides by min(N, R)).
    """

    name = "Bpref_R"
    recall_normalised = True
    formula = "bpref_R = (1/R) sum_r [1 - min(n_r, R)/R]"
    reference = "Buckley & Voorhees, SIGIR 2004; Sakai, 'Alternatives to bpref', SIGIR 2007"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        group, topic, above, _ = _bpref_parts(tensor, self.rel)
        n_rel = tensor.n_relevant(self.rel)[topic]
        terms = 1.0 - safe_divide(np.minimum(above, n_rel), n_rel)
        return _bpref_total(tensor, group, terms, self.rel)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        group, topic, above, tied = _bpref_tied_parts(tensor, self.rel)
        n_rel = tensor.n_relevant(self.rel)[topic]
        terms = 1.0 - safe_divide(_mean_capped(above, tied, n_rel), n_rel)
        return _bpref_total(tensor, group, terms, self.rel)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        def cost(n0, u, r0, m0, r_most, m_most):  # min(n, R) / R
            least = np.minimum(safe_divide(n0, r_most), 1.0)
            return least, np.minimum(safe_divide(n0 + u, r0), 1.0)

        return _bpref_bounds(tensor, self.rel, side, cost)


@register(aliases=("bpref_N",))
@dataclass(frozen=True, kw_only=True)
class Bpref_N(BinaryMeasure):
    """Sakai's bpref_N: every judged non-relevant document above a relevant one costs 1/N.

    bpref_N = (1/R) sum over retrieved relevant r of [1 - n_r/N], n_r as in :class:`Bpref_R` and
    N the number of judged non-relevant documents of the topic (a topic with N = 0 has n_r = 0,
    and every retrieved relevant document scores 1).
    """

    name = "Bpref_N"
    recall_normalised = True
    formula = "bpref_N = (1/R) sum_r [1 - n_r/N]"
    reference = "Sakai, 'Alternatives to bpref', SIGIR 2007; NTCIREVAL"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        group, topic, above, _ = _bpref_parts(tensor, self.rel)
        terms = 1.0 - safe_divide(above, tensor.n_nonrelevant(self.rel)[topic])
        return _bpref_total(tensor, group, terms, self.rel)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        group, topic, above, tied = _bpref_tied_parts(tensor, self.rel)
        terms = 1.0 - safe_divide(above + tied / 2.0, tensor.n_nonrelevant(self.rel)[topic])
        return _bpref_total(tensor, group, terms, self.rel)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        def cost(n0, u, r0, m0, r_most, m_most):  # n / N, with N >= N0 + (n - n0)
            return safe_divide(n0, m_most), safe_divide(n0 + u, m0 + u)

        return _bpref_bounds(tensor, self.rel, side, cost)


# ---------------------------------------------------------------------------- trec_eval 10
#: Recall levels of trec_eval's ``iprec_at_recall`` and ``11pt_avg``: 0, 0.1, ..., 1.
ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: How a recall level x becomes a number of relevant documents c from R:
#: ``nearest`` = lround(x R) (trec_eval >= 10.0), ``trec9`` = trunc(x R + 0.9) (trec_eval <= 9).
ROUNDINGS = ("nearest", "trec9")


def recall_cut(levels: np.ndarray, n_rel: np.ndarray, rounding: str) -> np.ndarray:
    """(L, T) number of relevant documents c at which each recall level is reached.

    ``nearest``: c = lround(x R), halves rounded up (C's lround; numpy's round would send 0.5
    to 0). ``trec9``: c = (long)(x R + 0.9). x R is the same double product as in C, and the
    rounding is done exactly (floor plus a comparison of the exact fractional part), so the
    cut equals trec_eval's even where x R lands near a half.
    """
    v = np.asarray(levels, dtype=np.float64)[:, None] * n_rel.astype(np.float64)[None, :]
    if rounding == "trec9":
        return np.floor(v + 0.9).astype(np.int64)
    whole = np.floor(v)
    return (whole + (v - whole >= 0.5)).astype(np.int64)


#: A recall level x, in [0, 1].
RECALL_LEVEL = Described(Interval(Real, 0, 1), "a recall level in [0, 1]")
ROUNDING = Described(OneOf(*ROUNDINGS), f"one of {', '.join(ROUNDINGS)} (trec_eval 10 / 9)")


def _tie_group_at_most(
    c0: int, k0: int, a: int, b: int, firsts: list[int], s: np.ndarray
) -> np.ndarray:
    """(len(firsts), len(s)): P(M <= s) for each threshold of ``s`` (ascending), M the best
    precision of the relevant documents j >= first of one group of tied documents, over its
    orderings, for each ``first``.

    The group starts after rank k0 and c0 relevant documents; it holds a relevant and b other
    documents in uniformly random order. Its j-th relevant document has x_j of the others
    above it (0 <= x_1 <= ... <= x_a <= b, each of the C(a + b, a) sequences equally likely)
    and precision (c0 + j) / (k0 + j + x_j). M <= s when each x_j, j >= first, is at least
    the number of x whose precision exceeds s. The sequences that do are counted from the
    last step back: the completions from each x_j = x that keep every later constraint, by
    cumulative sums over x, times the C(x + first - 1, first - 1) free beginnings that end at
    x_first = x. One pass serves every ``first`` (every recall level).
    """
    x = np.arange(b + 1)
    out = np.zeros((len(firsts), len(s)))
    wanted = {f: [i for i, g in enumerate(firsts) if g == f] for f in set(firsts)}
    log_all = log_choose(a + b, a)  # every sequence
    completions = np.ones((b + 1, len(s)))  # from step a + 1: one way, whatever x
    log_scale = 0.0  # completions are kept in range: their true value is exp(log_scale) times
    for j in range(a, min(firsts) - 1, -1):
        if j < a:
            # completions from x_j = x: the sum over x_{j+1} >= x, row by row from the end
            # (numpy's cumulative sum along this axis is 6x slower)
            later = completions[b]
            for row in completions[b - 1 :: -1]:
                row += later
                later = row
        # x_j = x breaks the thresholds below its precision: a prefix of the sorted thresholds
        broken = np.searchsorted(s, (c0 + j) / (k0 + j + x), side="left")
        for i in np.flatnonzero(broken):
            completions[i, : broken[i]] = 0.0
        if j in wanted:
            log_begin = log_choose(x + j - 1, np.full(b + 1, j - 1))
            top = log_begin.max()
            total = np.exp(log_begin - top) @ completions
            with np.errstate(divide="ignore"):
                out[wanted[j]] = np.exp(np.log(total) + top + log_scale - log_all)
        peak = completions.max()
        if peak > 1e200:
            completions /= peak
            log_scale += float(np.log(peak))
    return np.minimum(out, 1.0)


def _expected_tied_maximum(floor: float, groups: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """E[max(floor, M_1, ..., M_g)] for independent groups of tied documents, each given as
    (values v, ascending, among them ``floor`` and every value M_g can take above it; P(M_g <=
    v) at each).

    E = floor + integral from floor of (1 - prod_g P(M_g <= v)) dv, a step function that
    changes only at the groups' possible values: summed exactly over them.
    """
    points = np.unique(np.concatenate([grid[grid >= floor] for grid, _ in groups]))
    at_most = np.ones(len(points))
    for grid, cdf in groups:
        at_most *= cdf[np.searchsorted(grid, points, side="right") - 1]
    return floor + float(np.sum(np.diff(points) * (1.0 - at_most[:-1])))


@dataclass(frozen=True, kw_only=True)
class _Interpolated(BinaryMeasure):
    """Interpolated precision at recall levels, as trec_eval's ``iprec_at_recall``.

    Subclasses declare ``rounding: str = "nearest"`` after their levels, so that names print
    the level first: ``IPrec(recall=0.5,rounding=trec9)``.
    """

    recall_normalised = True
    _constraints: ClassVar[dict] = {"rounding": ROUNDING}

    def interpolated(self, tensor: EvalTensor, levels: tuple[float, ...]) -> np.ndarray:
        """(L, S, T) interpolated precision at each recall level.

        With r_n the rank of the n-th relevant document retrieved and c the cut of the level
        (:func:`recall_cut`), the value is max_{n >= max(c, 1)} n / r_n: precision only rises
        at relevant ranks, so the best precision at any rank at or below r_c is taken at one
        of them. 0 when c exceeds the relevant documents retrieved (or none is retrieved).
        """
        hits = self.relevant_hits(tensor)
        n_rel = tensor.n_relevant(self.rel)[hits.topic]
        return self._best_precision(tensor, hits, hits.count, n_rel, levels)

    def interpolated_bounds(self, tensor: EvalTensor, levels: tuple[float, ...], side: str):
        """(L, S, T) bounds of the interpolated precision at each level over the grades of the
        unknown documents; they hold, but are not always the least and greatest values.

        Under any grades, rank r holds J(r) + a relevant documents, a of its U(r) unknown ones
        above it, and R0 + a <= R <= R0 + L + E (L unknown documents in the list, E
        elsewhere). The cut rises by at most one when R does, so a rank that reaches its cut
        with some a reaches it with a = U(r): the highest bound is the best (J(r) + U(r)) / r
        over the ranks reaching the cut of R0 + U(r) with J(r) + U(r); the lowest the best
        J(r) / r over the relevant ranks reaching the cut of R0 + L + E with J(r).
        """
        codes, n_rel = tensor.codes, tensor.n_relevant(self.rel)
        unknown = unknown_mask(tensor)
        if side == "hi":
            hits = RankedHits(codes, (codes >= tensor.code_at_least(self.rel)) | unknown)
            seen = hits.cumsum(hits.grade < 0)
            return self._best_precision(tensor, hits, hits.count, n_rel[hits.topic] + seen, levels)
        hits = self.relevant_hits(tensor)
        most = n_rel[None, :] + unknown.sum(axis=2) + unknown_elsewhere(tensor)
        return self._best_precision(tensor, hits, hits.count, most.reshape(-1)[hits.group], levels)

    def _best_precision(self, tensor, hits: RankedHits, found, n_rel, levels) -> np.ndarray:
        """(L, S, T) the greatest found / rank over the hits where ``found`` (relevant
        documents down to the hit) reaches the cut of each level for ``n_rel`` (R, per hit)."""
        cut = recall_cut(np.asarray(levels), n_rel, self.rounding)
        need = np.maximum(cut, 1)  # (L, hits)
        values = np.where(found[None, :] >= need, (found / hits.rank)[None, :], 0.0)
        out = np.zeros((len(levels), tensor.n_runs * tensor.n_topics))
        groups, first = hits.first()
        if len(groups):
            # Hits are grouped by (run, topic) in order: a max over each group's slice.
            out[:, groups] = np.maximum.reduceat(values, first, axis=1)
        return out.reshape(len(levels), tensor.n_runs, tensor.n_topics)

    def expected_interpolated(self, tensor: EvalTensor, levels: tuple[float, ...]) -> np.ndarray:
        """(L, S, T) expected interpolated precision over the orderings of tied documents.

        The value max_{n >= need} n / r_n is the greatest of a floor, the precisions of the
        eligible relevant documents whose rank no ordering changes, and, for each group of
        tied documents holding relevant and other documents, the best precision M_g of its
        eligible relevant documents. The groups are ordered independently and every earlier
        group's documents are above a group whatever the order, so the M_g are independent and
        E[max] = floor + integral of (1 - prod_g P(M_g <= v)) dv, computed exactly at the
        values the M_g can take (:func:`_expected_tied_maximum`). Groups whose best possible
        value (no other document above their relevant ones) does not pass the floor are
        left out. Refused past :data:`~metaeval.measures.base.TIED_MAXIMUM_CELLS` of work.
        """
        n_lists = tensor.n_runs * tensor.n_topics
        out = np.zeros((len(levels), n_lists))
        hits = self.tied_relevant(tensor)
        if not len(hits.group):
            return out.reshape(len(levels), tensor.n_runs, tensor.n_topics)
        n_rel = tensor.n_relevant(self.rel)[hits.topic]
        need = np.maximum(recall_cut(np.asarray(levels), n_rel, self.rounding), 1)  # (L, hits)
        found = hits.count
        size, members = hits.tie_size.astype(np.int64), hits.tie_hits.astype(np.int64)
        certain = size == members  # a group of relevant documents only: its ranks are fixed
        values = np.where(certain & (found >= need), found / hits.rank, 0.0)
        groups, first = hits.first()
        out[:, groups] = np.maximum.reduceat(values, first, axis=1)
        blocks = hits.tie_blocks
        mixed = blocks[size[blocks] > members[blocks]]
        c0 = hits.hits_before[mixed].astype(np.int64)
        a, k0 = members[mixed], hits.tie_start[mixed].astype(np.int64)
        b, owner = size[mixed] - a, hits.group[mixed]
        uses: dict[int, list] = {}  # group -> [(level, eligible from, floor)]
        for level in range(len(levels)):
            eligible_from = np.maximum(need[level, mixed] - c0, 1)
            live = (eligible_from <= a) & ((c0 + a) / (k0 + a) > out[level, owner])
            for i in np.flatnonzero(live):
                uses.setdefault(int(i), []).append(
                    (level, int(eligible_from[i]), out[level, owner[i]])
                )
        plans, cells = [], np.zeros(n_lists)
        for i, use in uses.items():
            c, k, m, n = int(c0[i]), int(k0[i]), int(a[i]), int(b[i])
            first = min(f for _, f, _ in use)
            j = np.arange(first, m + 1)[:, None]
            value = (c + j) / (k + j + np.arange(n + 1)[None, :])
            # M_g is at least the last relevant document's precision with every other
            # document above it: no value below that is taken (P(M_g <= v) = 0 there)
            floor = min(f for _, _, f in use)
            taken = value[(value > floor) & (value >= (c + m) / (k + m + n))]
            grid = np.unique(np.concatenate([taken, [f for _, _, f in use]]))
            plans.append((i, (c, k, m, n), use, grid))
            cells[owner[i]] += (m - first + 1) * len(grid) * (n + 1)
        refuse_costly_ties(self, tensor, cells)
        work: dict[tuple[int, int], list] = {}  # (level, list) -> [(values, P(M_g <= v))]
        for i, group, use, grid in plans:
            firsts = [f for _, f, _ in use]
            cdfs = _tie_group_at_most(*group, firsts, grid)
            for (level, _, _), cdf in zip(use, cdfs):
                work.setdefault((level, int(owner[i])), []).append((grid, cdf))
        for (level, lst), parts in work.items():
            out[level, lst] = _expected_tied_maximum(out[level, lst], parts)
        return out.reshape(len(levels), tensor.n_runs, tensor.n_topics)


@register(aliases=("iprec",))
@dataclass(frozen=True, kw_only=True)
class IPrec(_Interpolated):
    """Interpolated precision at a recall level (trec_eval ``iprec_at_recall_x``).

    IPrec(x) = max over ranks k at or below the c-th relevant document of P(k), with
    c = lround(x R) (trec_eval >= 10.0) or trunc(x R + 0.9) (``rounding=trec9``, trec_eval
    <= 9 and pytrec_eval); equivalently max_{n >= max(c, 1)} n / r_n over the relevant ranks
    r_n. 0 when fewer than c relevant documents are retrieved, and when none is.

    Under ``-J``, trec_eval 10.0 divides 0 by 0 on a list without a judged document (and on
    a topic the run did not answer, under ``-c -J``): it prints NaN at the levels whose cut
    is 0 (always at recall 0). metaeval scores 0 there.

    Parameters
    ----------
    recall : float
        The recall level x in [0, 1]; required, e.g. ``IPrec(recall=0.5)``.
    rounding : {"nearest", "trec9"}
        How x R becomes a number of documents: ``nearest`` = lround(x R), trec_eval 10.0's
        rule (default); ``trec9`` = trunc(x R + 0.9), the rule of trec_eval 9 and earlier
        (pytrec_eval). They differ when the fraction of x R lies in (0.1, 0.5), e.g.
        x = 0.1, R = 3: c = 0 under 10.0, 1 under 9.
    rel : int or float
        Relevance level (trec_eval ``-l``), default 1; any number > 0 on real-valued grades.

    References
    ----------
    trec_eval 10.0, ``m_iprec_at_recall.c`` (CHANGELOG 10.0: "Breaking fix: change uses of int
    truncation to round"); Manning, Raghavan & Schuetze, Introduction to IR, 2008, sec. 8.4.
    """

    example_params: ClassVar[dict] = {"recall": 0.5}
    recall: float | None = None
    rounding: str = "nearest"
    name = "IPrec"
    formula = "IPrec(x) = max_{n >= max(c,1)} n / r_n, c = lround(x R) (trec9: trunc(x R + 0.9))"
    reference = "trec_eval 10.0 iprec_at_recall (m_iprec_at_recall.c); Manning et al. 2008, 8.4"
    # None is the default only so that the missing level is asked for with an example
    _constraints: ClassVar[dict] = {"recall": Optional(RECALL_LEVEL)}

    def _validate(self) -> None:
        if self.recall is None:
            raise MeasureValueError(
                "recall",
                "is required",
                message=f"{self.name} needs a recall level, e.g. IPrec(recall=0.5)",
            )
        object.__setattr__(self, "recall", float(self.recall))

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        return self.interpolated(tensor, (self.recall,))[0]

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        return self.expected_interpolated(tensor, (self.recall,))[0]

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        return self.interpolated_bounds(tensor, (self.recall,), side)[0]


@register
@dataclass(frozen=True, kw_only=True)
class IPrecAvg(_Interpolated):
    """Interpolated precision averaged over recall levels (trec_eval ``11pt_avg``).

    IPrecAvg = (1/L) sum over the levels x of IPrec(x); by default the 11 levels 0, 0.1, ...,
    1 (the TREC 11-point average). Rounding of x R and the relevance level as in
    :class:`IPrec`: ``IPrecAvg(rounding=trec9)`` is trec_eval 9's (and pytrec_eval's)
    ``11pt_avg``. Under ``-J``, trec_eval 10.0 prints NaN for a list without a judged
    document (see :class:`IPrec`); metaeval scores 0 there.

    Parameters
    ----------
    levels : tuple of float
        Recall levels in [0, 1] (trec_eval ``-m 11pt_avg.0.2,0.5,0.8``), default the 11 points.
    rounding : {"nearest", "trec9"}
        trec_eval 10.0's lround (default) or trec_eval 9's trunc(x R + 0.9).
    rel : int or float
        Relevance level (trec_eval ``-l``), default 1; any number > 0 on real-valued grades.

    References
    ----------
    trec_eval 10.0, ``m_11pt_avg.c``; Harman, "Overview of the first TREC conference", 1993.
    """

    levels: tuple[float, ...] = ELEVEN_POINTS
    rounding: str = "nearest"
    name = "IPrecAvg"
    formula = "IPrecAvg = (1/L) sum_x IPrec(x), x in 0, 0.1, ..., 1"
    reference = "trec_eval 10.0 11pt_avg (m_11pt_avg.c); Harman, TREC-1 overview, 1993"
    # repeats are allowed: a level given twice weighs twice in the average
    _constraints: ClassVar[dict] = {"levels": Sequence(RECALL_LEVEL, scalar=(Real,), unique=False)}

    def _validate(self) -> None:
        # the levels as floats, so that 1 and 1.0 make one measure with one name
        object.__setattr__(self, "levels", tuple(float(x) for x in self.levels))

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        return self._average(self.interpolated(tensor, self.levels))

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        return self._average(self.expected_interpolated(tensor, self.levels))

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        return self._average(self.interpolated_bounds(tensor, self.levels, side))

    def _average(self, values: np.ndarray) -> np.ndarray:
        # Summed level by level, in order, then divided: trec_eval's sum / num_params.
        total = np.zeros(values.shape[1:])
        for level in values:
            total = total + level
        return total / len(self.levels)


@register(aliases=("yaap",))
@dataclass(frozen=True, kw_only=True)
class YAAP(BinaryMeasure):
    """Yet another average precision, Robertson's smoothed AP (trec_eval ``yaap``).

    YAAP = ln((1 + S) / (1 + R - S)), S = sum over relevant ranks r of C(r)/r = R * AP, so it
    is monotone in AP for one topic, in [-ln(1 + R), ln(1 + R)], and 0 when R = 0. A topic the
    run did not answer scores -ln(1 + R), as in trec_eval 10 with ``-c`` (it evaluates such a
    topic on a list of one document absent from the qrels), not 0.

    Parameters
    ----------
    rel : int or float
        Relevance level (trec_eval ``-l``), default 1; any number > 0 on real-valued grades.

    References
    ----------
    Robertson, "On smoothing average precision", ECIR 2012, LNCS 7224, pp. 158-169;
    trec_eval ``m_yaap.c`` (since 9.0.4).
    """

    name = "YAAP"
    bounds = (-float("inf"), float("inf"))
    formula = "YAAP = ln((1 + S)/(1 + R - S)), S = sum_{r: rel(r)} C(r)/r"
    reference = "Robertson, 'On smoothing average precision', ECIR 2012; trec_eval yaap"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        hits = self.relevant_hits(tensor)
        s = hits.total(hits.count / hits.rank)
        n_rel = tensor.n_relevant(self.rel)[None, :].astype(np.float64)
        return _yaap(s, n_rel)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        """E[YAAP] over the orderings of tied documents, by its Laplace transform.

        With S = S_0 + sum_g S_g (S_0 the precisions no ordering changes, S_g those of a
        group of tied relevant and other documents), Frullani's integral gives
        ln((1 + S)/(1 + R - S)) = int_0^inf (exp(-t (1 + R - S)) - exp(-t (1 + S))) dt / t,
        and the groups are ordered independently, so E[exp(+-t S)] = exp(+-t S_0) prod_g
        E[exp(+-t S_g)]. Each factor is a sum over the group's orderings of a product of one
        term per relevant document (:func:`_tied_sum_transform`). The integral is taken at the
        nodes of :func:`~metaeval.measures._common.laplace_nodes` for 1 + R - S and 1 + S in
        [1, 1 + R]. Lists without such a group keep their value.
        """
        hits = self.tied_relevant(tensor)
        n_rel = tensor.n_relevant(self.rel).astype(np.float64)
        size, members = hits.tie_size.astype(np.int64), hits.tie_hits.astype(np.int64)
        mixed = size > members
        fixed = hits.total(np.where(mixed, 0.0, hits.count / hits.rank))
        out = _yaap(fixed, n_rel[None, :])
        blocks = hits.tie_blocks
        blocks = blocks[mixed[blocks]]
        if not len(blocks):
            return out
        c0 = hits.hits_before[blocks].astype(np.int64)
        a, k0 = members[blocks], hits.tie_start[blocks].astype(np.int64)
        b, owner = size[blocks] - a, hits.group[blocks]
        # 1 + R - S and 1 + S lie in [1, 1 + R]
        t, weights = laplace_nodes(1.0 + float(n_rel.max()))
        t = t / (1.0 + float(n_rel.max()))
        refuse_costly_ties(
            self,
            tensor,
            np.bincount(owner, weights=YAAP_CELL * 2 * len(t) * a * (b + 1), minlength=out.size),
        )
        lists, slot = np.unique(owner, return_inverse=True)
        # log E[exp(t (S_g - max S_g))] and log E[exp(-t (S_g - min S_g))], summed per list,
        # and the sums of max S_g and of min S_g
        up, down = np.zeros((len(lists), len(t))), np.zeros((len(lists), len(t)))
        high, low = np.zeros(len(lists)), np.zeros(len(lists))
        for i in range(len(blocks)):
            group = int(c0[i]), int(k0[i]), int(a[i]), int(b[i])
            log_up, most = _tied_sum_transform(*group, t)
            log_down, least = _tied_sum_transform(*group, -t)
            up[slot[i]] += log_up
            down[slot[i]] += log_down
            high[slot[i]] += most
            low[slot[i]] += least
        flat = out.reshape(-1)
        s0 = fixed.reshape(-1)[lists][:, None]
        r = n_rel[lists % tensor.n_topics][:, None]
        # both terms are at most exp(-t): S <= R
        above = np.exp(up - t * (1.0 + r - s0 - high[:, None]))
        below = np.exp(down - t * (1.0 + s0 + low[:, None]))
        flat[lists] = (above - below) @ weights
        return out

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        # it rises with S and falls with R, as AP does
        return ap_bounds(tensor, self.rel, None, side, _yaap)


def _yaap(s: np.ndarray, n_rel: np.ndarray) -> np.ndarray:
    return np.log((1.0 + s) / (1.0 + n_rel - s))


#: Units of work (about a nanosecond each, as the limit counts them) of one node, relevant
#: document and position of a group's transform: 17-33 ns on TREC DL.
YAAP_CELL = 16


def _tied_sum_transform(
    c0: int, k0: int, a: int, b: int, tau: np.ndarray
) -> tuple[np.ndarray, float]:
    """(log E[exp(tau (S_g - S*))] for each tau, S*) over the orderings of a group of tied
    documents, the tau all of one sign and S* = max S_g for tau > 0, min S_g for tau < 0 (so
    the terms stay at most 1).

    The group starts after rank k0 and c0 relevant documents and holds a relevant and b other
    documents; its j-th relevant document has x_j others above it, 0 <= x_1 <= ... <= x_a <=
    b, each of the C(a + b, a) sequences equally likely, and adds p_j(x_j) = (c0 + j) / (k0 +
    j + x_j) to S_g. The sum over the sequences of prod_j exp(tau p_j(x_j)) is built forward:
    F_j(x) = exp(tau p_j(x)) sum_{x' <= x} F_{j-1}(x'), kept in range by a running scale.
    """
    x = np.arange(b + 1)
    total = None
    log_scale = np.zeros(len(tau))
    reference = 0.0
    for j in range(1, a + 1):
        value = (c0 + j) / (k0 + j + x)
        best = value[0] if tau[0] > 0 else value[-1]  # no others above it, or all of them
        reference += best
        step = np.exp(tau[:, None] * (value - best)[None, :])
        total = step if total is None else step * np.cumsum(total, axis=1)
        peak = total.max(axis=1)
        peak[peak <= 0] = 1.0
        total /= peak[:, None]
        log_scale += np.log(peak)
    with np.errstate(divide="ignore"):
        return np.log(total.sum(axis=1)) + log_scale - log_choose(a + b, a), reference
