"""Graded-relevance measures: nDCG (trec_eval, Burges and Jarvelin-Kekalainen forms), nCG,
the Q-measure, rank-biased precision and its residual, ERR / nERR, the graded average
precision family GAP, xGAP, eGAP, and trec_eval's experimental binG, G, ndcg_rel and Rndcg.

Conventions shared by every measure here (docs/methods.md §0, §6.4):

* Grades are the qrels' grade values, :attr:`EvalTensor.levels` (one per grade code): 0 .. c
  for integer grades, c = the highest grade in the qrels, or 0.0 and the distinct real-valued
  grades (0.5, 1.33, 2). The linear gain of a grade is its value, the exponential one
  2^value - 1. Unjudged and unpooled documents have gain 0.
* ``gains=`` maps grades to gains, written ``{1:1,2:3,3:7}`` (or ``{0.5:1,1.33:4}``); it
  overrides the gain of the grades it names (a key equal to a grade of the qrels) and leaves
  the other grades at the measure's default gain (trec_eval's ``ndcg_p`` convention,
  ``-m ndcg_p.1=3.5,2=9``); a key that is no grade of the qrels is ignored. Gains must be
  finite and >= 0.
* A topic for which the ideal value is 0 (nothing relevant) scores 0, as in trec_eval.

Everything is vectorised over (runs, topics, ranks) on the grade codes; the only Python loops
run over grades. Gains are looked up per code (a table of ``n_grades`` values), so real-valued
grades cost nothing more than integer ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Real
from typing import ClassVar

import numpy as np

from metaeval._constraints import Boolean, Described, Distribution, Interval, OneOf, Optional
from metaeval._validation import whole_as_int
from metaeval.engine import EvalTensor
from metaeval.measures._common import (
    RankedHits,
    cumulative,
    grid_rows,
    log2_discount,
    log_choose,
    log_none,
    ranked_hits,
    ranks,
    safe_divide,
    tied_hits,
)
from metaeval.measures.base import Measure, MeasureValueError, refuse_costly_ties, register
from metaeval.measures.binary import BinaryMeasure
from metaeval.measures.bounds import (
    JUDGMENTS_ONLY,
    ap_bounds,
    monotone_bounds,
    ncg_bounds,
    ratio_bounds,
    top_grade_view,
    unknown_counts,
    unknown_elsewhere,
    unknown_ranks,
    with_unknown_at,
)

#: Type of a ``gains=`` parameter once normalised: sorted ((grade, gain), ...) pairs, a
#: whole-number grade as an int, another as a float.
GainsMap = tuple[tuple[int | float, float], ...]

GAIN_FORMS = ("linear", "exp")
#: What RBP divides its gains by: the qrels' highest gain, or trec_eval 10's per-topic rule.
RBP_NORMALISE = ("qrels", "topic")
DISCOUNTS = ("log2", "jk")


# ---------------------------------------------------------------------------- helpers
#: Largest gain or beta accepted. Larger values overflow: a ratio such as Q's
#: (C + beta CG) / (r + beta CG*) becomes inf / inf. Up to 1e12, every sum over a million
#: ranks stays finite in double precision, far beyond any setting in the literature.
MAX_PARAMETER = 1e12

#: RBP's and RBP_resid's persistence p.
PERSISTENCE = Described(Interval(Real, 0, 1, closed="neither"))


def normalise_gains(owner: str, gains) -> GainsMap | None:
    """Check a ``gains=`` mapping and return it as a sorted tuple of (grade, float gain).

    Accepts a mapping or an iterable of pairs (what the parser produces from ``{1:1,2:3}``).
    A grade is a finite number >= 0 (real-valued grades: ``{0.5:1,1.33:3}``); a whole number
    is kept as an int, so ``{2.0:3}`` is ``{2:3}``. Raises
    :class:`~metaeval.measures.base.MeasureValueError` for the parameter ``gains``, its
    message starting with ``owner`` (the measure's name), when a grade is not a finite number
    >= 0 or a gain is not a finite number in [0, MAX_PARAMETER].
    """
    if gains is None:
        return None

    def refuse(problem: str) -> MeasureValueError:
        return MeasureValueError("gains", problem, message=f"{owner}: gains {problem}")

    items = gains.items() if isinstance(gains, Mapping) else gains
    shape = f"must map grades to gains, e.g. {{1:1,2:3}}, got {gains!r}"
    try:
        pairs = [tuple(p) for p in items]
    except TypeError:
        raise refuse(shape) from None
    out: dict[int | float, float] = {}
    for pair in pairs:
        if len(pair) != 2:
            raise refuse(shape)
        grade, gain = pair
        if (
            isinstance(grade, bool)
            or not isinstance(grade, (int, float, np.integer, np.floating))
            or not math.isfinite(grade)
            or grade < 0
        ):
            raise refuse(f"keys must be grades, finite numbers >= 0, got {grade!r}")
        grade = whole_as_int(grade)
        if (
            isinstance(gain, bool)
            or not isinstance(gain, (int, float, np.integer, np.floating))
            or not math.isfinite(gain)
            or gain < 0
            or gain > MAX_PARAMETER
        ):
            limit = f"[0, {MAX_PARAMETER:g}]"
            raise refuse(f"values must be finite numbers {limit}, got {gain!r} for grade {grade}")
        if grade in out:
            raise refuse(f"gives grade {grade} twice")
        out[grade] = float(gain)
    if not out:
        raise refuse("is empty; omit it to use the default gains")
    return tuple(sorted(out.items()))


def as_levels(levels) -> np.ndarray:
    """The grade value of each code: ``levels`` (an :attr:`EvalTensor.levels`), or for an int
    n the integer grades 0 .. n-1 (what a number of grades meant before real grades)."""
    if isinstance(levels, (int, np.integer)) and not isinstance(levels, bool):
        return np.arange(levels, dtype=np.float64)
    return np.asarray(levels, dtype=np.float64)


def override_gains(table: np.ndarray, levels, gains: GainsMap | None) -> np.ndarray:
    """``table`` (one gain per code, changed in place) with the gain of every grade that
    ``gains`` names: a key equal to a level; other keys (grades the qrels do not have) are
    ignored."""
    levels = as_levels(levels)
    for grade, gain in gains or ():
        at = int(np.searchsorted(levels, grade))
        if at < len(levels) and levels[at] == grade:
            table[at] = gain
    return table


def gain_table(levels, form: str = "linear", gains: GainsMap | None = None) -> np.ndarray:
    """Gain of every grade code: the grade value (linear) or 2^value - 1 (exp), then
    overridden by the ``gains`` mapping where it names a grade (other keys are ignored).

    Parameters
    ----------
    levels : ndarray of float, or int
        The grade value of each code (:attr:`EvalTensor.levels`); an int n stands for the
        integer grades 0 .. n-1.
    form : {"linear", "exp"}
    gains : GainsMap, optional
    """
    grades = as_levels(levels)
    table = grades.copy() if form == "linear" else np.exp2(grades) - 1.0
    return override_gains(table, grades, gains)


def positive_at(table: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """(S, T, D) bool: the grade at this rank has a positive ``table`` value (codes < 0: no)."""
    grades = np.flatnonzero(np.asarray(table) > 0)
    if len(grades) and grades[-1] == len(table) - 1 and np.all(np.diff(grades) == 1):
        return codes >= grades[0]  # the usual case, grades k..c: a comparison, not a gather
    positive = np.concatenate([[False, False], np.asarray(table) > 0])
    return positive[codes.astype(np.intp) + 2]


def ideal_per_rank(
    grade_counts: np.ndarray, table: np.ndarray, depth: int, grades: np.ndarray | None = None
) -> np.ndarray:
    """(T, depth) value of ``table`` at each rank of every topic's ideal list.

    The ideal list holds the judged documents of the given ``grades`` (default: every grade
    with a positive value) ordered by decreasing value; ranks past its end hold 0. Built one
    block of equal grades at a time, so no per-document loop.
    """
    table = np.asarray(table, dtype=np.float64)
    if grades is None:
        grades = np.flatnonzero(table > 0)
    grades = np.asarray(grades, dtype=np.intp)
    order = grades[np.argsort(-table[grades], kind="stable")]
    counts = grade_counts[:, order]
    ends = np.cumsum(counts, axis=1)
    starts = ends - counts
    r = np.arange(depth)[None, :]
    out = np.zeros((grade_counts.shape[0], depth), dtype=np.float64)
    for b, grade in enumerate(order):
        block = (r >= starts[:, b : b + 1]) & (r < ends[:, b : b + 1])
        out[block] = table[grade]
    return out


def ideal_cumulative_at(counts: np.ndarray, gains: np.ndarray, grades: np.ndarray, hits):
    """CG*(r) at every hit's rank r of the ideal list of its (run, topic) row of ``counts``
    ((S * T, G) documents per grade code, the ``grades`` in it, highest gain first), as
    :func:`ideal_per_rank` would give, without building the lists."""
    order = grades[np.argsort(-gains[grades], kind="stable")]
    blocks = counts[:, order]
    starts = (np.cumsum(blocks, axis=1) - blocks)[hits.group]
    taken = np.clip(hits.rank0[:, None] + 1 - starts, 0, blocks[hits.group])
    return taken @ gains[order]


def ideal_depth(tensor: EvalTensor, cutoff: int | None) -> int:
    """Ranks an ideal list can fill: the most judged documents of any topic, at most the
    cutoff, and at least 1 (so discount tables are never empty)."""
    return counts_depth(tensor.grade_counts, cutoff)


def counts_depth(grade_counts: np.ndarray, cutoff: int | None) -> int:
    """:func:`ideal_depth` of rows of counts of judged documents per grade code."""
    longest = int(grade_counts.sum(axis=1).max(initial=0))
    return max(longest if cutoff is None else min(cutoff, longest), 1)


def ideal_dcg(
    grade_counts: np.ndarray, gains: np.ndarray, discount: np.ndarray, cutoff: int | None
) -> np.ndarray:
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


def jk_discount(depth: int, base: float) -> np.ndarray:
    """1 / disc(r) for r = 1..depth, disc(r) = 1 for r <= b and log_b(r) otherwise
    (Jarvelin & Kekalainen 2002; NTCIREVAL's nDCG with b = 2)."""
    r = ranks(depth)
    disc = np.where(r <= base, 1.0, np.log(np.maximum(r, 1.0)) / math.log(base))
    return 1.0 / disc


# ---------------------------------------------------------------------------- gain mixin
@dataclass(frozen=True, kw_only=True)
class GainMeasure(Measure):
    """A measure with a gain form (``gain=linear|exp``) and an optional ``gains=`` mapping."""

    gain: str = "linear"
    gains: GainsMap | None = None
    _constraints: ClassVar[dict] = {"gain": OneOf(*GAIN_FORMS)}

    def _validate(self) -> None:
        object.__setattr__(self, "gains", normalise_gains(self.name, self.gains))

    def gain_values(self, levels) -> np.ndarray:
        """Gain of every grade code, from the grade values ``levels`` (:attr:`EvalTensor.levels`;
        an int n: the integer grades 0 .. n-1)."""
        return gain_table(levels, self.gain, self.gains)


# ---------------------------------------------------------------------------- nDCG, nCG
@register(aliases=("ndcg",))
@dataclass(frozen=True, kw_only=True)
class nDCG(GainMeasure):
    """Normalised discounted cumulative gain; by default exactly trec_eval ``ndcg`` / ``ndcg_cut``.

    DCG@k = sum_{r<=k} gain(r) * w(r) and nDCG@k = DCG@k / DCG*@k, where the ideal ranking holds
    every judged document of positive gain in decreasing gain, cut at the same k (no cutoff:
    the whole list and the whole ideal list). Unjudged documents have gain 0; the relevance
    level does not apply (as in trec_eval). 0 when DCG* = 0.

    Parameters
    ----------
    gain : {"linear", "exp"}
        ``linear``: gain = grade (trec_eval, Jarvelin & Kekalainen). ``exp``: gain = 2^grade - 1
        (Burges et al. 2005, gdeval). Real-valued grades are their own gains (linear) or
        2^grade - 1 of their value (exp).
    gains : mapping grade -> gain, optional
        Overrides the gain of the grades it names, e.g. ``nDCG(gains={1:1,2:3,3:7})`` or, on
        real-valued grades, ``nDCG(gains={0.5:1,1.33:4})``; other grades keep the ``gain``
        form (trec_eval ``ndcg_p.1=3.5,2=9`` semantics).
    discount : {"log2", "jk"}
        ``log2``: w(r) = 1/log2(r + 1) (trec_eval, Burges). ``jk``: w(r) = 1/disc(r) with
        disc(r) = 1 for r <= base and log_base(r) otherwise (Jarvelin & Kekalainen 2002,
        NTCIREVAL's nDCG).
    base : float
        The log base b of ``discount="jk"`` (default 2); must stay 2 with ``log2``.
    cutoff : int, optional
        ``nDCG@k``.

    References
    ----------
    Jarvelin & Kekalainen, "Cumulated gain-based evaluation of IR techniques", ACM TOIS 2002.
    Burges et al., "Learning to rank using gradient descent", ICML 2005.
    """

    cutoff: int | None = None
    discount: str = "log2"
    base: float = 2.0
    _constraints: ClassVar[dict] = {
        "discount": OneOf(*DISCOUNTS),
        "base": Described(Interval(Real, 1, closed="neither")),
    }
    name = "nDCG"
    cutoff_field = "cutoff"
    recall_normalised = True
    formula = (
        "nDCG@k = sum_{r<=k} g(r) w(r) / ideal; w(r) = 1/log2(r+1) (log2), or 1 for "
        "r <= b and 1/log_b(r) beyond (jk); g = grade (linear), 2^grade-1 (exp) or gains"
    )
    reference = (
        "Jarvelin & Kekalainen, 'Cumulated gain-based evaluation of IR techniques', "
        "ACM TOIS 2002; Burges et al., ICML 2005; trec_eval ndcg"
    )

    def _validate(self) -> None:
        super()._validate()
        object.__setattr__(self, "base", float(self.base))
        if self.discount == "log2" and self.base != 2.0:
            raise MeasureValueError(
                "base",
                "applies to discount=jk only",
                message=f"{self.name}: base applies to discount=jk only; "
                f"write {self.name}(discount=jk,base={self.base:g})",
            )

    def weights(self, depth: int) -> np.ndarray:
        """Discount weight w(r) of ranks 1..depth."""
        if self.discount == "log2":
            return log2_discount(depth)
        return jk_discount(depth, self.base)

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        gains = self.gain_values(tensor.levels)
        # Only ranks with a positive gain add to the DCG, usually a small share of the list.
        hits = ranked_hits(tensor, lambda codes: positive_at(gains, codes), self.cutoff)
        dcg = hits.total(gains[hits.grade] * self.weights(hits.depth)[hits.rank0])
        return safe_divide(dcg, self._ideal(tensor, gains)[None, :])

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        gains = self.gain_values(tensor.levels)

        def dcg(view):
            hits = ranked_hits(view, lambda codes: positive_at(gains, codes), self.cutoff)
            return hits.total(gains[hits.grade] * self.weights(hits.depth)[hits.rank0])

        def ideal(counts):
            weights = self.weights(counts_depth(counts, self.cutoff))
            return ideal_dcg(counts, gains, weights, self.cutoff)

        return ratio_bounds(tensor, side, gains, dcg, ideal)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        # A document's expected discount is the mean discount of its tie group's ranks.
        gains = self.gain_values(tensor.levels)
        hits = tied_hits(tensor, lambda codes: positive_at(gains, codes), self.cutoff)
        discount = hits.mean_weight(cumulative(self.weights(tensor.depth)), self.cutoff)
        dcg = hits.total(gains[hits.grade] * discount)
        return safe_divide(dcg, self._ideal(tensor, gains)[None, :])

    def _ideal(self, tensor: EvalTensor, gains: np.ndarray) -> np.ndarray:
        depth = ideal_depth(tensor, self.cutoff)
        return ideal_dcg(tensor.grade_counts, gains, self.weights(depth), self.cutoff)


@register(aliases=("ncg",))
@dataclass(frozen=True, kw_only=True)
class nCG(GainMeasure):
    """Normalised cumulative gain: nDCG without a discount (Jarvelin & Kekalainen 2002).

    nCG@k = sum_{r<=k} g(r) / sum_{r<=k} g*(r), the ideal list holding every judged document
    of positive gain in decreasing gain, cut at k. Without a cutoff this is the share of the
    topic's total gain that the list retrieves (a graded recall). Gains as in :class:`nDCG`.
    """

    cutoff: int | None = None
    name = "nCG"
    cutoff_field = "cutoff"
    recall_normalised = True
    formula = "nCG@k = sum_{r<=k} g(r) / sum_{r<=k} g*(r)"
    reference = (
        "Jarvelin & Kekalainen, 'Cumulated gain-based evaluation of IR techniques', ACM TOIS 2002"
    )

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        gains = self.gain_values(tensor.levels)
        # Ranks of gain 0 add nothing: sum over the positive-gain ranks alone.
        hits = ranked_hits(tensor, lambda codes: positive_at(gains, codes), self.cutoff)
        return safe_divide(hits.total(gains[hits.grade]), self._ideal(tensor, gains)[None, :])

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        gains = self.gain_values(tensor.levels)
        hits = tied_hits(tensor, lambda codes: positive_at(gains, codes), self.cutoff)
        cg = hits.total(gains[hits.grade] * hits.inside(self.cutoff) / hits.tie_size)
        return safe_divide(cg, self._ideal(tensor, gains)[None, :])

    def _ideal(self, tensor: EvalTensor, gains: np.ndarray) -> np.ndarray:
        depth = ideal_depth(tensor, self.cutoff)
        return ideal_dcg(tensor.grade_counts, gains, np.ones(depth), self.cutoff)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        gains = self.gain_values(tensor.levels)

        def ideal(counts):
            return ideal_dcg(counts, gains, np.ones(counts_depth(counts, self.cutoff)), self.cutoff)

        return ncg_bounds(tensor, gains, self.cutoff, side, ideal)


# ---------------------------------------------------------------------------- Q-measure
@register(aliases=("q", "Qmeasure"))
@dataclass(frozen=True, kw_only=True)
class Q(GainMeasure, BinaryMeasure):
    """Q-measure (Sakai): average precision blended with cumulative gain.

    BR(r) = (C(r) + beta CG(r)) / (r + beta CG*(r)) and Q = (1/R) sum over relevant ranks r of
    BR(r), where C(r) counts the relevant documents (grade >= ``rel``) in ranks 1..r, CG(r) is
    the cumulative gain of the list and CG*(r) that of the ideal list (every relevant document
    sorted by gain), padded with CG*(R) for r > R. Q@l divides by min(l, R) (NTCIREVAL).
    Grades below ``rel`` have gain 0 (NTCIREVAL: only gain levels L1.. are relevant), which
    keeps BR(r) <= 1. Q(beta=0) is AP; a larger beta weights the gains more.

    With beta > 0, moving a relevant document above a non-relevant one can *lower* Q: an early
    low-gain document is compared with an ideal prefix that already holds the high-gain ones
    (e.g. R = {3, 1}: ranking grades 0,0,3,1 gives 0.661, 0,1,3,0 gives 0.595). That is the
    definition, as NTCIREVAL computes it.

    Parameters
    ----------
    beta : float
        Persistence weight, >= 0 (default 1).
    gain : {"linear", "exp"}
        Gain form: the grade (default) or 2^grade - 1 (of the grade's value, for real grades).
    gains : mapping grade -> gain, optional
        Overrides the gain of the grades it names (NTCIREVAL's ``-g 1:2:3`` is
        ``gains={1:1,2:2,3:3}``).
    rel : int or float
        Relevance level for C(r) and R (default 1): grade >= rel is relevant; any number > 0
        on real-valued grades.
    cutoff : int, optional
        Q@l.

    References
    ----------
    Sakai, "New performance metrics based on multigrade relevance", NTCIR-4, 2004;
    Sakai, "On the reliability of information retrieval metrics based on graded relevance",
    Information Processing & Management 2007.
    """

    cutoff: int | None = None
    beta: float = 1.0
    _constraints: ClassVar[dict] = {
        "beta": Described(
            Interval(Real, 0, MAX_PARAMETER), f"a finite number in [0, {MAX_PARAMETER:g}]"
        )
    }
    name = "Q"
    cutoff_field = "cutoff"
    recall_normalised = True
    formula = "Q = (1/R) sum_{r: rel(r)} (C(r) + beta CG(r)) / (r + beta CG*(r))"
    reference = (
        "Sakai, 'On the reliability of information retrieval metrics based on graded "
        "relevance', IP&M 2007; NTCIREVAL"
    )

    def _validate(self) -> None:
        super()._validate()
        object.__setattr__(self, "beta", float(self.beta))

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        gains = self.relevant_gains(tensor)
        total = self._terms(
            tensor,
            gains,
            lambda hits: self.ideal_cumulative(tensor, gains, hits.depth)[hits.topic, hits.rank0],
        )
        return self.per_relevant(tensor, total)

    def _terms(self, view: EvalTensor, gains: np.ndarray, ideal_at) -> np.ndarray:
        """(S, T) sum over the relevant ranks r of (C(r) + beta CG(r)) / (r + beta CG*(r)),
        ``ideal_at(hits)`` giving CG*(r) at each relevant rank."""
        # Only relevant ranks add a term, and only they have a gain: C(r) and CG(r) at those
        # ranks are cumulative sums over the relevant ranks alone.
        hits = self.relevant_hits(view, self.cutoff)
        count = hits.cumsum(np.ones(len(hits.rank), dtype=np.int64))
        cg = hits.cumsum(gains[hits.grade])
        return hits.total((count + self.beta * cg) / (hits.rank + self.beta * ideal_at(hits)))

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        # Bounds that hold (docs/methods.md §6.7): every term's numerator rises with the
        # gains, its denominator with the ideal's, and R with the relevant documents.
        # Highest: the unknown documents it retrieved relevant at the highest gain, over the
        # least ideal and the least R; lowest: the judged relevant ones alone, over the
        # ideal and R with every unknown document relevant at the highest gain.
        gains = self.relevant_gains(tensor)
        if not gains.any():  # nothing can be relevant
            return np.zeros((tensor.n_runs, tensor.n_topics))
        best = int(np.argmax(gains))
        grades = np.arange(tensor.code_at_least(self.rel), tensor.n_grades)
        if side == "hi":
            high = self._terms(
                top_grade_view(tensor, best),
                gains,
                lambda hits: self.ideal_cumulative(tensor, gains, tensor.depth)[
                    hits.topic, hits.rank0
                ],
            )
            # 1 / R (1 / min(R, k)), or 0 where R = 0
            inverse = self.per_relevant(tensor, np.ones((tensor.n_runs, tensor.n_topics)))
            return np.where(inverse > 0, np.minimum(1.0, high * inverse), (high > 0) * 1.0)
        counts = with_unknown_at(tensor, best, all_unknown=True)
        low = self._terms(
            tensor, gains, lambda hits: ideal_cumulative_at(counts, gains, grades, hits)
        )
        n_rel = counts[:, grades].sum(axis=1).reshape(tensor.n_runs, tensor.n_topics)
        if self.cutoff is not None:
            n_rel = np.minimum(n_rel, self.cutoff)
        return safe_divide(low, n_rel)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        # At position j of its tie group (rank a + j + 1, size n), a relevant document of gain
        # g has E[C(r) + beta CG(r)] = B + 1 + beta (CG_B + g) + j ((m - 1) + beta (G - g))/(n - 1)
        # (B, CG_B: relevant documents and gain of earlier groups; m, G: of its group), over a
        # denominator r + beta CG*(r) fixed by the rank: sums over j of 1/D and of rank/D.
        gains = self.relevant_gains(tensor)
        hits = self.tied_relevant(tensor, self.cutoff)
        g = gains[hits.grade]
        a, n = hits.tie_start.astype(np.int64), hits.tie_size.astype(np.float64)
        inside = hits.inside(self.cutoff)
        rank0 = np.arange(tensor.depth, dtype=np.float64)
        den = rank0 + 1.0 + self.beta * self.ideal_cumulative(tensor, gains, tensor.depth)
        by_rank = np.concatenate([np.zeros((tensor.n_topics, 1)), np.cumsum(1.0 / den, axis=1)], 1)
        by_rank0 = np.concatenate(
            [np.zeros((tensor.n_topics, 1)), np.cumsum(rank0 / den, axis=1)], 1
        )
        t = hits.topic
        inverse = by_rank[t, a + inside] - by_rank[t, a]
        position = by_rank0[t, a + inside] - by_rank0[t, a] - a * inverse  # sum of j / D
        level = hits.hits_before + 1.0 + self.beta * (hits.before_tie(g) + g)
        slope = safe_divide(hits.tie_hits - 1.0 + self.beta * (hits.tie_total(g) - g), n - 1.0)
        return self.per_relevant(tensor, hits.total((level * inverse + slope * position) / n))

    def relevant_gains(self, tensor: EvalTensor) -> np.ndarray:
        """Gain of every grade code, 0 below the relevance level."""
        gains = self.gain_values(tensor.levels)
        gains[: tensor.code_at_least(self.rel)] = 0.0
        return gains

    def ideal_cumulative(self, tensor: EvalTensor, gains: np.ndarray, depth: int) -> np.ndarray:
        """(T, depth) CG*(r) of every topic's ideal list of relevant documents; it stops
        growing after rank R (the CG*(R) padding)."""
        relevant_grades = np.arange(tensor.code_at_least(self.rel), tensor.n_grades)
        ideal = ideal_per_rank(tensor.grade_counts, gains, depth, relevant_grades)
        return np.cumsum(ideal, axis=1)

    def per_relevant(self, tensor: EvalTensor, total: np.ndarray) -> np.ndarray:
        """``total`` divided by R (by min(R, k) with a cutoff), 0 when R = 0."""
        n_rel = tensor.n_relevant(self.rel)
        if self.cutoff is not None:
            n_rel = np.minimum(n_rel, self.cutoff)
        return safe_divide(total, n_rel[None, :])


# ---------------------------------------------------------------------------- RBP
@register
@dataclass(frozen=True, kw_only=True)
class RBP(Measure):
    """Rank-biased precision (Moffat & Zobel 2008).

    RBP = (1 - p) sum_{r<=d} g(r) p^(r-1), with g(r) = grade / c, c the highest grade in the
    qrels (binary qrels: g = 1 for relevant; real-valued grades: their value over the highest
    value), d the list length (or the cutoff). The true value
    of a list whose unjudged documents and unseen tail are unknown lies in
    [RBP, RBP + RBP_resid]. An ideal list with R documents of the top grade scores 1 - p^R.

    Parameters
    ----------
    p : float
        Persistence, 0 < p < 1 (default 0.8, as MATTERS; the paper uses 0.5, 0.8, 0.95; trec_eval
        0.9; NTCIREVAL 0.95).
    gains : mapping grade -> gain, optional
        Raw gains, as for nDCG and Q: ``gains={1:1,2:3}`` (grades it does not name keep
        gain = grade). They are divided by the highest gain of the qrels' grades, so that the
        top grade has gain 1 (Moffat & Zobel 2008; Sakai & Kando 2008 normalise by the
        highest gain, 3).
    normalise : {"qrels", "topic"}
        What the gains are divided by. ``qrels`` (default): the highest gain of the grades of
        the whole qrels, as above. ``topic``: trec_eval 10's ``rbp`` rule, per topic: the
        gain table holds the grades 0 .. c_t (c_t the topic's highest judged grade) plus every
        grade named in ``gains``; when its highest gain G_t exceeds 1 every gain is divided by
        G_t, else the gains are kept as they are. With default gains that is grade / c_t, and
        a topic judged 0/1 only has gain 1 for grade 1 even when other topics go up to 3.
        trec_eval's ``rbp`` is ``RBP(p=0.9,normalise=topic)``. On real-valued grades the same
        rule holds with the grade values (grades up to 0.8 only are then kept as they are).
    cutoff : int, optional
        Evaluate the first k documents only.

    References
    ----------
    Moffat & Zobel, "Rank-biased precision for measurement of retrieval effectiveness",
    ACM TOIS 27(1), 2008; trec_eval 10.0 ``m_rbp.c``.
    """

    cutoff: int | None = None
    p: float = 0.8
    gains: GainsMap | None = None
    normalise: str = "qrels"
    _constraints: ClassVar[dict] = {
        "p": PERSISTENCE,
        "normalise": Described(OneOf(*RBP_NORMALISE), f"one of {', '.join(RBP_NORMALISE)}"),
    }
    name = "RBP"
    cutoff_field = "cutoff"
    formula = "RBP = (1-p) sum_r g(r) p^(r-1), g = gain / highest gain (default: grade / c)"
    reference = (
        "Moffat & Zobel, 'Rank-biased precision for measurement of retrieval "
        "effectiveness', ACM TOIS 2008"
    )

    def _validate(self) -> None:
        object.__setattr__(self, "p", float(self.p))
        object.__setattr__(self, "gains", normalise_gains(self.name, self.gains))

    def gain_values(self, levels) -> np.ndarray:
        """Gain of every grade code (``levels`` as :func:`gain_table` takes them), divided by
        the highest: grade / c by default."""
        table = gain_table(levels, "linear", self.gains)
        top_gain = table.max(initial=0.0)
        return table / top_gain if top_gain > 0 else table

    def topic_divisors(self, tensor: EvalTensor) -> np.ndarray:
        """(T,) what each topic's raw gains are divided by under ``normalise="topic"``.

        trec_eval 10 (``m_rbp.c`` with ``setup_gains``): the largest gain of the table of
        grades 0 .. c_t and of every grade named in ``gains``, or 1 when it is at most 1
        (gains already in [0, 1] are kept).
        """
        counts = tensor.grade_counts  # (T, G): judged documents per grade code
        codes = np.arange(counts.shape[1])
        top = np.where(counts > 0, codes[None, :], 0).max(axis=1, initial=0)  # c_t's code
        return self.divisor_up_to(tensor, top)

    def divisor_up_to(self, tensor: EvalTensor, top: np.ndarray) -> np.ndarray:
        """:meth:`topic_divisors` of topics whose highest judged grade codes are ``top``."""
        codes = np.arange(tensor.n_grades)
        named = dict(self.gains or ())
        levels = tensor.levels
        default = np.array([0.0 if float(v) in named else float(v) for v in levels])
        # The highest default gain among grades 0 .. c_t not named in gains.
        kept = np.where(codes[None, :] <= top[:, None], default[None, :], 0.0).max(axis=1)
        largest = np.maximum(kept, max(named.values(), default=0.0))
        return np.where(largest > 1.0, largest, 1.0)

    def _gains(self, tensor: EvalTensor) -> np.ndarray:
        """The gain of every grade code: raw under ``normalise="topic"`` (divided per topic
        by :meth:`_per_topic`), else over the qrels' highest gain."""
        if self.normalise == "topic":
            return gain_table(tensor.levels, "linear", self.gains)
        return self.gain_values(tensor.levels)

    def _per_topic(self, tensor: EvalTensor, values: np.ndarray) -> np.ndarray:
        if self.normalise == "topic":
            return values / self.topic_divisors(tensor)[None, :]
        return values

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        gains = self._gains(tensor)
        hits = ranked_hits(tensor, lambda codes: positive_at(gains, codes), self.cutoff)
        values = hits.total((1.0 - self.p) * gains[hits.grade] * self.p**hits.rank0)
        return self._per_topic(tensor, values)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        if self.normalise != "topic":
            return monotone_bounds(self._compute, tensor, side, self._gains(tensor))
        # Per topic, the raw gains are divided by D(c), which rises with the highest judged
        # grade c; an unknown document can raise c to any grade. The least value: the judged
        # sum K over D at the highest grade the completion can reach. The greatest: the best,
        # over that highest grade c' >= c_t, of (K + the unknown ranks' weight times the
        # largest raw gain of grades <= c') / D(c'). Bounds that hold.
        raw = gain_table(tensor.levels, "linear", self.gains)
        hits = ranked_hits(tensor, lambda codes: positive_at(raw, codes), self.cutoff)
        judged = hits.total((1.0 - self.p) * raw[hits.grade] * self.p**hits.rank0)
        counts = tensor.grade_counts
        codes = np.arange(tensor.n_grades)
        top = np.where(counts > 0, codes[None, :], 0).max(axis=1, initial=0)
        # any unknown document, in the list or not, below the cutoff or not, can raise c
        open_ = sum(unknown_counts(tensor)) > 0  # (S, T)
        if side == "lo":
            highest = self.divisor_up_to(tensor, np.full(tensor.n_topics, tensor.n_grades - 1))
            return judged / np.where(open_, highest[None, :], self.divisor_up_to(tensor, top))
        listed = unknown_ranks(tensor, self.cutoff)
        weight = listed.total((1.0 - self.p) * self.p**listed.rank0)
        best = np.full(judged.shape, -np.inf)
        for c in range(tensor.n_grades):
            reach = (c >= top)[None, :] & (open_ | (c == top)[None, :])
            divisor = self.divisor_up_to(tensor, np.full(tensor.n_topics, c))[None, :]
            value = (judged + weight * max(raw[: c + 1].max(), 0.0)) / divisor
            best = np.where(reach, np.maximum(best, value), best)
        return best

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        gains = self._gains(tensor)
        hits = tied_hits(tensor, lambda codes: positive_at(gains, codes), self.cutoff)
        weight = hits.mean_weight(_rbp_cumulative(self.p, tensor.depth), self.cutoff)
        return self._per_topic(tensor, hits.total(gains[hits.grade] * weight))


@register(aliases=("RBP.resid", "RBPResid"))
@dataclass(frozen=True, kw_only=True)
class RBP_resid(Measure):
    """Residual of rank-biased precision: the weight RBP could still gain (Moffat & Zobel 2008).

    resid = p^d + (1 - p) sum_{r<=d, r unjudged} p^(r-1), d = the list length (or the cutoff
    when the list is longer): the unseen tail beyond the list plus every unjudged or unpooled
    rank inside it. Nothing judged at depth 10 gives p^10 (docs/methods.md §8, O8).

    Parameters
    ----------
    p : float
        Persistence, 0 < p < 1 (default 0.8, as :class:`RBP`).
    tail_if_judged : bool
        True (default, Moffat & Zobel): the tail p^d counts whatever the list holds, so an
        empty list (a topic the run did not answer) has residual 1. False: trec_eval 10's
        ``rbp_resid``, which is 0 when the first d ranks hold no unjudged document (an empty
        list included, and always under ``-J``), and the formula above otherwise.
        trec_eval's ``rbp_resid`` is ``RBP_resid(p=0.9,tail_if_judged=False)``.
    cutoff : int, optional
        Evaluate the first k documents only.

    References
    ----------
    Moffat & Zobel, ACM TOIS 2008; Webber's ``rbp_eval``; trec_eval 10.0 ``m_rbp_resid.c``.
    """

    cutoff: int | None = None
    p: float = 0.8
    tail_if_judged: bool = True
    _constraints: ClassVar[dict] = {
        "p": PERSISTENCE,
        "tail_if_judged": Described(Boolean(), "True or False"),
    }
    name = "RBP_resid"
    without_bounds = JUDGMENTS_ONLY
    cutoff_field = "cutoff"
    formula = "resid = p^d + (1-p) sum_{r<=d, unjudged(r)} p^(r-1)"
    reference = (
        "Moffat & Zobel, 'Rank-biased precision for measurement of retrieval "
        "effectiveness', ACM TOIS 2008; Webber rbp_eval"
    )

    def _validate(self) -> None:
        object.__setattr__(self, "p", float(self.p))
        object.__setattr__(self, "tail_if_judged", bool(self.tail_if_judged))

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        # p^d + (1-p) sum over unjudged r <= d of p^(r-1) = 1 - (1-p) sum over judged r <= d
        # of p^(r-1), since all weights of ranks 1..d plus p^d add up to 1. Judged ranks are
        # few, and they are always inside the list.
        hits = ranked_hits(tensor, lambda codes: codes >= 0, self.cutoff)
        judged = hits.total((1.0 - self.p) * self.p**hits.rank0)
        if self.tail_if_judged:
            return 1.0 - judged
        seen = tensor.lengths if self.cutoff is None else np.minimum(tensor.lengths, self.cutoff)
        return np.where(seen > hits.counts(), 1.0 - judged, 0.0)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        hits = tied_hits(tensor, lambda codes: codes >= 0, self.cutoff)
        judged = hits.total(hits.mean_weight(_rbp_cumulative(self.p, tensor.depth), self.cutoff))
        if self.tail_if_judged:
            return 1.0 - judged
        # 0 when the first d ranks are all judged, which they are (leaving 1 - judged weight
        # = p^d) only if every tie group within them puts judged documents on all its J
        # positions there: the expected value is E[1 - judged weight] - P(all judged) p^d.
        seen = tensor.lengths if self.cutoff is None else np.minimum(tensor.lengths, self.cutoff)
        at = hits.tie_blocks
        inside = hits.inside(seen.reshape(-1)[hits.group])[at]
        n = tensor.n_runs * tensor.n_topics
        covered = np.bincount(hits.group[at], weights=inside, minlength=n).reshape(seen.shape)
        log_all = log_none(hits.tie_size[at], hits.tie_size[at] - hits.tie_hits[at], inside)
        all_judged = np.exp(np.bincount(hits.group[at], weights=log_all, minlength=n))
        all_judged = np.where(covered == seen, all_judged.reshape(seen.shape), 0.0)
        return 1.0 - judged - all_judged * self.p**seen


def _rbp_cumulative(p: float, depth: int) -> np.ndarray:
    """Cumulative RBP weights (1 - p) p^r of the 0-based ranks r < x, for x = 0 .. depth."""
    return cumulative((1.0 - p) * p ** np.arange(depth, dtype=np.float64))


# ---------------------------------------------------------------------------- ERR
@dataclass(frozen=True, kw_only=True)
class _Cascade(Measure):
    cutoff: int | None = None
    gains: GainsMap | None = None
    cutoff_field = "cutoff"

    def _validate(self) -> None:
        object.__setattr__(self, "gains", normalise_gains(self.name, self.gains))

    def stop_probabilities(self, levels) -> np.ndarray:
        """Chapelle's stopping probability (2^g - 1) / 2^gmax of every grade code, g the grade
        value (or ``gains[grade]``); ``levels`` as :func:`gain_table` takes them."""
        g = gain_table(levels, "linear", self.gains)
        g_max = g.max(initial=0.0)
        if g_max <= 0:
            return np.zeros(len(g))
        return (np.exp2(g) - 1.0) / np.exp2(g_max)


def _err_sparse(tensor: EvalTensor, cutoff: int | None, stop: np.ndarray) -> np.ndarray:
    """(S, T) ERR of the tensor's lists (cut at ``cutoff``), from the stopping probability per
    grade.

    Only ranks with a positive stopping probability change the product prod_{i<r} (1 - R_i),
    so it is a cumulative sum of log(1 - R_i) over those ranks alone.
    """
    hits = ranked_hits(tensor, lambda codes: positive_at(stop, codes), cutoff)
    r = stop[hits.grade]
    log_keep = np.log1p(-r)
    reach = np.exp(hits.cumsum(log_keep) - log_keep)
    return hits.total(r * reach / hits.rank)


def _err_expected(tensor: EvalTensor, cutoff: int | None, stop: np.ndarray) -> np.ndarray:
    """(S, T) expected ERR over the orderings of every group of tied documents.

    A tie group (first rank a + 1, size n, J of its positions within the cutoff) holds v
    documents with a stopping probability R > 0, with y = 1 - R; the others have y = 1. It is
    reached with probability P_before, the product of 1 - R over the earlier groups. Its
    document at position j (0-based) stops the user there with probability R times the
    product of y over the j documents above it, a random j-subset of the other n - 1; summed
    over the v documents, the expectation is

        P_before v sum_i H(i; n - 1, v - 1, j) (m_i - m_{i+1}),

    with H the hypergeometric probability that i of the j documents above are among the v - 1
    others of positive R, and m_i the mean of the products of i of the v values y (m_0 = 1;
    sum_d R_d e_i(y without d) = v C(v - 1, i) (m_i - m_{i+1}) for the elementary symmetric
    polynomials e_i). The means are built one value at a time as weighted averages, so no
    large binomial coefficient or cancelling difference is formed. ERR is the sum over j < J
    of that over a + j + 1, divided by n. A group with v = 1 gives R (H(a + J) - H(a)) / n.
    Groups are computed side by side: their means in rows padded to the largest v, and the
    (group, i, j) terms in flat arrays.
    """
    hits = tied_hits(tensor, lambda codes: positive_at(stop, codes), cutoff)
    r = stop[hits.grade]
    keep = 1.0 - r
    before = np.exp(hits.before_tie(np.log(keep)))
    a, n = hits.tie_start.astype(np.int64), hits.tie_size.astype(np.int64)
    inside = hits.inside(cutoff)
    harmonic = cumulative(1.0 / ranks(tensor.depth))
    value = r * before * (harmonic[a + inside] - harmonic[a]) / n  # alone in its group
    first, block = hits.tie_layout
    v = np.bincount(block, minlength=len(first))
    shared = np.flatnonzero(v > 1)  # groups with several documents of positive R
    if not len(shared):
        return hits.total(value)
    v, at = v[shared], first[shared]
    size, start, last = n[at], a[at], inside[at]
    # The means m_i of each group, its values y in a padded row, one value at a time.
    rows, col = grid_rows(v)
    members = np.flatnonzero(np.isin(block, shared))  # in group order, as rows and col
    y = np.zeros((len(shared), int(v.max())))
    y[rows, col] = keep[members]
    means = np.zeros((len(shared), y.shape[1] + 1))
    means[:, 0] = 1.0
    for k in range(1, y.shape[1] + 1):
        on = np.flatnonzero(v >= k)
        i = np.arange(1, k + 1)
        means[on, 1 : k + 1] = (
            (k - i) * means[on, 1 : k + 1] + i * y[on, k - 1, None] * means[on, :k]
        ) / k
    drop = means[:, :-1] - means[:, 1:]  # m_i - m_{i+1}
    # Every (group, i < v, j < J): the hypergeometric H(i; n - 1, v - 1, j).
    cells = v * last
    owner, t = grid_rows(cells)
    i, j = t // last[owner], t % last[owner]
    gv, gn = v[owner], size[owner]
    k = j - i  # documents without R among the j above
    valid = (k >= 0) & (k <= gn - gv)
    k = np.where(valid, k, 0)
    log_h = log_choose(gv - 1, i) + log_choose(gn - gv, k) - log_choose(gn - 1, j)
    term = np.where(valid, np.exp(log_h), 0.0) * drop[owner, i] / (start[owner] + j + 1.0)
    total = np.bincount(owner, weights=term, minlength=len(shared))
    value[members] = 0.0
    value[at] = before[at] * v * total / size
    return hits.total(value)


def _err(stop: np.ndarray) -> np.ndarray:
    """ERR of lists of stopping probabilities along the last axis."""
    depth = stop.shape[-1]
    # Probability the user is still reading at rank r: product of (1 - R_i) over i < r.
    reach = np.cumprod(1.0 - stop, axis=-1)
    reach = np.concatenate([np.ones(stop.shape[:-1] + (1,)), reach[..., :-1]], axis=-1)
    return (stop * reach / ranks(depth)).sum(axis=-1)


@register(aliases=("err",))
@dataclass(frozen=True, kw_only=True)
class ERR(_Cascade):
    """Expected reciprocal rank (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009).

    ERR@k = sum_{r<=k} (1/r) R_r prod_{i<r} (1 - R_i), with the stopping probability
    R = (2^g - 1) / 2^gmax, g the grade (or ``gains[grade]``; a real-valued grade's value) and
    gmax the highest grade in the qrels (gdeval fixes gmax = 4; NTCIREVAL uses g / (gmax + 1)
    instead). Binary qrels give R = 1/2 for a relevant document, so ERR is not RR there.
    """

    name = "ERR"
    formula = "ERR = sum_r (1/r) R_r prod_{i<r} (1 - R_i), R = (2^g - 1)/2^gmax"
    reference = (
        "Chapelle, Metzler, Zhang & Grinspan, 'Expected reciprocal rank for graded "
        "relevance', CIKM 2009"
    )

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        return _err_sparse(tensor, self.cutoff, self.stop_probabilities(tensor.levels))

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        return _err_expected(tensor, self.cutoff, self.stop_probabilities(tensor.levels))

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        stop = self.stop_probabilities(tensor.levels)
        return monotone_bounds(self._compute, tensor, side, stop)


@register(aliases=("nerr",))
@dataclass(frozen=True, kw_only=True)
class nERR(_Cascade):
    """Normalised ERR: ERR@k divided by the ERR@k of the ideal list (NTCIREVAL's nERR@l).

    The ideal list holds every judged document with a positive stopping probability, highest
    grade first; no cutoff means the whole list and the whole ideal list. 0 when nothing is
    relevant. Stopping probabilities as in :class:`ERR`.
    """

    name = "nERR"
    recall_normalised = True
    formula = "nERR@k = ERR@k / ERR*@k"
    reference = (
        "Chapelle, Metzler, Zhang & Grinspan, CIKM 2009; Sakai & Song, 'Evaluating "
        "diversified search results using per-intent graded relevance', SIGIR 2011"
    )

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        stop = self.stop_probabilities(tensor.levels)
        return safe_divide(_err_sparse(tensor, self.cutoff, stop), self._ideal(tensor, stop))

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        stop = self.stop_probabilities(tensor.levels)
        return safe_divide(_err_expected(tensor, self.cutoff, stop), self._ideal(tensor, stop))

    def _ideal(self, tensor: EvalTensor, stop: np.ndarray) -> np.ndarray:
        depth = ideal_depth(tensor, self.cutoff)
        return _err(ideal_per_rank(tensor.grade_counts, stop, depth))[None, :]

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        stop = self.stop_probabilities(tensor.levels)

        def ideal(counts):
            return _err(ideal_per_rank(counts, stop, counts_depth(counts, self.cutoff)))

        return ratio_bounds(
            tensor, side, stop, lambda view: _err_sparse(view, self.cutoff, stop), ideal
        )


# ---------------------------------------------------------------------------- GAP family
def _n_at_least(tensor: EvalTensor) -> np.ndarray:
    """(T, n_grades + 1): column j is R^(j), the judged documents of grade code >= j (the last
    column, past every code, is 0). By code, not by value: the GAP family's thresholds are
    the levels in order."""
    counts = tensor.grade_counts
    out = np.zeros((counts.shape[0], counts.shape[1] + 1), dtype=counts.dtype)
    out[:, :-1] = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1]
    return out


@dataclass(frozen=True, kw_only=True)
class _ThresholdMeasure(Measure):
    """Base of GAP, xGAP, eGAP: a distribution g over the user's relevance threshold.

    The thresholds are the grades of the qrels above 0, in increasing order: 1..c for integer
    grades, and for real-valued grades the distinct positive grades (the levels 1..c of
    :attr:`EvalTensor.levels`). g_j is the probability that the user's threshold is the j-th
    of them, so a user with threshold j finds relevant every document of grade >= that level.
    The grades' values play no other part: these measures depend on their order only.
    """

    g: tuple[float, ...] | None = None
    recall_normalised = True
    # the probability of each threshold grade 1..c
    _constraints: ClassVar[dict] = {"g": Optional(Distribution())}

    def _validate(self) -> None:
        if self.g is not None:
            # as floats, so that (1,0) and (1.0,0.0) make one measure with one name
            object.__setattr__(self, "g", tuple(float(v) for v in self.g))

    def thresholds(self, n_grades: int) -> np.ndarray:
        """g_1 .. g_L as an array of length L + 1 with a leading 0 (index = grade code).

        Default: uniform over the grades 1..c of the qrels (c = n_grades - 1). A given g must
        cover every grade of the qrels (len(g) >= c). A longer g is allowed: its extra grades
        have no documents, so users with those thresholds find nothing relevant (GAP and
        xGAP/eGAP then behave as for a topic without documents of those grades).
        """
        c = n_grades - 1
        if self.g is None:
            if c < 1:
                return np.zeros(1)
            return np.concatenate([[0.0], np.full(c, 1.0 / c)])
        if len(self.g) < c:
            raise ValueError(
                f"{self}: g has {len(self.g)} threshold probabilities but the qrels "
                f"have grades 1..{c}; give one probability per grade"
            )
        return np.concatenate([[0.0], np.asarray(self.g, dtype=np.float64)])

    def _per_grade(self, tensor: EvalTensor, expected: bool):
        """The relevant ranks (grade code >= 1) and, per threshold j with g_j > 0, (j, g_j,
        P_j): P_j = C_j(n)/n at the ranks n of grade code >= j (0 elsewhere), with
        C_j(n) = #{m <= n : i_m >= j}; its expected value over tied orderings when
        ``expected``. Each measure is a sum of these terms with weights the order leaves
        alone, so the same code gives its value and its expected value."""
        g = self.thresholds(tensor.n_grades)
        relevant = lambda codes: codes >= 1  # noqa: E731
        hits = tied_hits(tensor, relevant) if expected else ranked_hits(tensor, relevant)
        per_grade = []
        for j in range(1, len(g)):
            if g[j] == 0:
                continue
            at = hits.grade >= j
            if expected:
                term = hits.expected_precision(at)
            else:
                term = np.where(at, hits.cumsum(at.astype(np.int64)), 0) / hits.rank
            per_grade.append((j, g[j], term))
        return g, hits, per_grade

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        return self._value(tensor, expected=False)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        return self._value(tensor, expected=True)

    def threshold_bounds(self, tensor: EvalTensor, side: str) -> list[tuple[float, np.ndarray]]:
        """(g_j, bound of AP_j) for every threshold j with g_j > 0 that a grade of the qrels
        reaches (AP_j is 0 under any grades at the others)."""
        g = self.thresholds(tensor.n_grades)
        return [
            (g[j], ap_bounds(tensor, tensor.levels[j], None, side))
            for j in range(1, min(len(g), tensor.n_grades))
            if g[j] > 0
        ]


@register(aliases=("gap",))
@dataclass(frozen=True, kw_only=True)
class GAP(_ThresholdMeasure):
    """Graded average precision (Robertson, Kanoulas & Yilmaz, SIGIR 2010).

    Grades 1..c; g_j = P(the user's relevance threshold is grade j), G(j) = sum_{i<=j} g_i,
    G(0) = 0. With i_n the grade at rank n,

        GAP = [sum_{n: i_n > 0} (1/n) sum_{m<=n} G(min(i_m, i_n))] / [sum_j R_j G(j)].

    Computed with per-threshold cumulative counts C_j(n) = #{m <= n : i_m >= j}:
    sum_{m<=n} G(min(i_m, i_n)) = sum_{j <= i_n} g_j C_j(n), so GAP = sum_j g_j R^(j) AP_j /
    sum_j g_j R^(j) with AP_j the AP at threshold j and R^(j) = #{grade >= j}. g = (1, 0, ...)
    gives AP; all mass on k gives AP(rel=k). 0 when no user would find anything relevant.

    Parameters
    ----------
    g : tuple of float, optional
        Threshold probabilities over grades 1..c, non-negative, summing to 1, e.g.
        ``GAP(g=(0.1,0.9))``. Default uniform over the grades 1..c of the qrels. A g longer
        than c is allowed (its extra thresholds have no documents: those users find nothing
        relevant); a shorter one raises ValueError when evaluated. On real-valued grades
        g_j is the probability of the j-th distinct positive grade (0, 0.5, 2: g = (g for
        0.5, g for 2)); grades count by their order, not their values.
    """

    name = "GAP"
    formula = "GAP = sum_{n: i_n>0} (1/n) sum_{m<=n} G(min(i_m,i_n)) / sum_j R_j G(j)"
    reference = (
        "Robertson, Kanoulas & Yilmaz, 'Extending average precision to graded "
        "relevance judgments', SIGIR 2010"
    )

    def _value(self, tensor: EvalTensor, expected: bool) -> np.ndarray:
        _, hits, per_grade = self._per_grade(tensor, expected)
        num = np.zeros(len(hits.group))
        den = np.zeros(tensor.n_topics)
        at_least = _n_at_least(tensor)
        for j, g_j, term in per_grade:
            num += g_j * term
            den += g_j * at_least[:, min(j, tensor.n_grades)]
        return safe_divide(hits.total(num), den[None, :])

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        # GAP is a mean of the AP_j weighted by g_j R^(j) (0 when every weight is), so it
        # lies between the least and greatest AP_j: bounds that hold, exact on one grade.
        bounds = [b for _, b in self.threshold_bounds(tensor, side)]
        if not bounds:
            return np.zeros((tensor.n_runs, tensor.n_topics))
        return (np.maximum if side == "hi" else np.minimum).reduce(bounds)


@register(aliases=("egap",))
@dataclass(frozen=True, kw_only=True)
class eGAP(_ThresholdMeasure):
    """Expected graded average precision (Ferrante, Ferro & Maistro, CLEF 2014).

    eGAP = sum_j g_j AP_j, with AP_j the binary AP when grade >= j counts as relevant and
    R^(j) = sum_{l>=j} R_l. Terms with R^(j) = 0 are dropped (they add 0, as in MATTERS): the
    users with that threshold find nothing relevant, so a topic lacking the top grades cannot
    reach 1. g as in :class:`GAP`.
    """

    name = "eGAP"
    formula = "eGAP = sum_{j: R^(j)>0} g_j AP_j"
    reference = (
        "Ferrante, Ferro & Maistro, 'Rethinking how to extend average precision to "
        "graded relevance', CLEF 2014"
    )

    def _value(self, tensor: EvalTensor, expected: bool) -> np.ndarray:
        _, hits, per_grade = self._per_grade(tensor, expected)
        at_least = _n_at_least(tensor)
        out = np.zeros(len(hits.group))
        for j, g_j, term in per_grade:
            # g_j * AP_j, term by term; R^(j) = 0 means no rank has grade >= j: nothing added.
            out += g_j * safe_divide(term, at_least[hits.topic, min(j, tensor.n_grades)])
        return hits.total(out)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        # term by term: bounds that hold, exact on one grade
        total = np.zeros((tensor.n_runs, tensor.n_topics))
        for g_j, bound in self.threshold_bounds(tensor, side):
            total = total + g_j * bound
        return total


@register(aliases=("xgap",))
@dataclass(frozen=True, kw_only=True)
class xGAP(_ThresholdMeasure):
    """Extended graded average precision (Ferrante, Ferro & Maistro, CLEF 2014).

    xGAP = sum_{n: i_n > J} (1/n) (A(i_n) / G(i_n)) sum_{m<=n} G(min(i_m, i_n)), where
    A(k) = sum_{j<=k} g_j / R^(j) is the probability that the user of FFM's model picks the
    document at rank n in step 1 (threshold j with probability g_j, then one of the R^(j)
    documents of grade >= j uniformly), G as in :class:`GAP`, and J the number of leading zero
    g_j (those grades are relevant to nobody). Terms with R^(j) = 0 are dropped; 0 when the
    topic has no document above grade J. g as in :class:`GAP`. As MATTERS computes it.

    Unlike GAP and eGAP, xGAP can fall when a grade-2 document is swapped above a grade-1
    one (the per-document weight A(i_n)/G(i_n) is not monotone in the grade).
    """

    name = "xGAP"
    formula = "xGAP = sum_{n: i_n>J} (1/n) (A(i_n)/G(i_n)) sum_{m<=n} G(min(i_m,i_n))"
    reference = (
        "Ferrante, Ferro & Maistro, 'Rethinking how to extend average precision to "
        "graded relevance', CLEF 2014"
    )

    def _value(self, tensor: EvalTensor, expected: bool) -> np.ndarray:
        g, hits, per_grade = self._per_grade(tensor, expected)
        top_grade = len(g) - 1
        # sum_{m<=n} G(min(i_m, i_n)) / n = sum_{j <= i_n} g_j C_j(n) / n.
        inner = np.zeros(len(hits.group))
        for _j, g_j, term in per_grade:
            inner += g_j * term
        # factor[t, k] = A(k) / G(k) for a document of grade k; 0 where G(k) = 0 (k <= J).
        big_g = np.cumsum(g)
        at_least = _n_at_least(tensor)
        n_rel = at_least[:, np.minimum(np.arange(top_grade + 1), tensor.n_grades)]
        share = safe_divide(np.broadcast_to(g[None, :], n_rel.shape), n_rel)
        share[:, 0] = 0.0
        factor = safe_divide(np.cumsum(share, axis=1), np.broadcast_to(big_g, n_rel.shape))
        per_doc = factor[hits.topic, np.minimum(hits.grade, top_grade)]
        return hits.total(per_doc * inner)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        # xGAP = sum_j (g_j / R^(j)) sum_{n: i_n >= j} q(n), with q(n) = sum_{m<=n}
        # G(min(i_m, i_n)) / (n G(i_n)) in [0, 1]. Under any grades of the unknown documents,
        # a judged relevant document's q(n) lies between its value with them at 0 and at the
        # top grade, R^(j) between R0_j + a and R0_j + L + E (a of the list's L unknown
        # documents at grade >= j, E elsewhere), and each of those a adds at most 1. Bounds
        # that hold, as bpref's: the judged documents' q at their least over R0_j + L + E,
        # and at their greatest plus L, over R0_j + L.
        g = self.thresholds(tensor.n_grades)
        view = top_grade_view(tensor) if side == "hi" else tensor
        _, hits, per_grade = self._per_grade(view, expected=False)
        inner = np.zeros(len(hits.group))
        for _j, g_j, term in per_grade:
            inner += g_j * term
        q = safe_divide(inner, np.cumsum(g)[np.minimum(hits.grade, len(g) - 1)])
        if side == "hi":  # the view's hits at the ranks judged relevant
            q = np.where(tensor.codes.reshape(-1)[hits.group * hits.depth + hits.rank0] >= 1, q, 0)
        at_least = _n_at_least(tensor)
        listed, elsewhere = unknown_counts(tensor)
        total = np.zeros((tensor.n_runs, tensor.n_topics))
        for j in range(1, min(len(g), tensor.n_grades)):
            if g[j] > 0:
                sums = hits.total(np.where(hits.grade >= j, q, 0.0))
                if side == "hi":
                    total += g[j] * safe_divide(sums + listed, at_least[None, :, j] + listed)
                else:
                    most = at_least[None, :, j] + listed + elsewhere
                    total += g[j] * safe_divide(sums, most)
        return total


# ---------------------------------------------------------------------------- trec_eval's G family
# trec_eval 10's experimental measures binG, G, ndcg_rel and Rndcg (m_binG.c, m_G.c,
# m_ndcg_rel.c, m_Rndcg.c). trec_eval builds each topic's gains with setup_gains: the grades
# 0 .. c_t of the topic (gain = grade unless ``gains`` names it) and walks the ideal list from
# the highest gain down, so the ideal list holds the judged documents of positive gain in
# decreasing gain, as :func:`ideal_per_rank` builds it (trec_eval's sort compares the whole
# part of two gains' difference, which can misorder gains closer than 1: see G's ``gains``).
# Unjudged and unpooled documents have gain 0 (trec_eval's get_gain finds no level for them).
def _nonrel_discount(x) -> np.ndarray:
    """binG's weight 1 / log2(2 + x) of a relevant document with x non-relevant ones above."""
    return 1.0 / np.log2(np.asarray(x, dtype=np.float64) + 2.0)


def _ideal_blocks(grade_counts: np.ndarray, gains: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The blocks of equal gain of every topic's ideal list: the distinct positive gains in
    decreasing order (B,) and each topic's documents of each (T, B). Grades of equal gain
    make one block, as trec_eval's Rndcg sees a change of the ideal gain, not of the grade."""
    values = np.unique(gains[gains > 0])[::-1]
    counts = np.zeros((grade_counts.shape[0], len(values)), dtype=np.int64)
    for b, v in enumerate(values):
        counts[:, b] = grade_counts[:, gains == v].sum(axis=1)
    return values, counts


def _ideal_prefix(tensor: EvalTensor, gains: np.ndarray) -> np.ndarray:
    """(T, depth) ideal DCG of ranks 1 .. r + 1 at every 0-based rank r (the whole ideal DCG
    once the ideal list has ended)."""
    depth = tensor.depth
    ideal = ideal_per_rank(tensor.grade_counts, gains, depth)
    return np.cumsum(ideal * log2_discount(depth)[None, :], axis=1)


@register(aliases=("binG",))
@dataclass(frozen=True, kw_only=True)
class BinG(BinaryMeasure):
    """Binary G, trec_eval's ``binG``: a relevant document's gain discounted by the
    non-relevant documents above it.

    binG = (1/R) sum over the relevant documents retrieved of 1 / log2(2 + n(r)), with n(r)
    the non-relevant documents (judged below ``rel``, unjudged or unpooled) ranked above
    rank r and R the judged documents of grade >= ``rel``; 0 when R = 0. An experimental
    measure of trec_eval (4/10/2008) that sits between AP and nDCG: relevant documents
    first score 1 whatever their rank.

    Parameters
    ----------
    rel : int or float
        Relevance level (trec_eval ``-l``): grade >= rel is relevant (default 1).

    References
    ----------
    trec_eval 10.0, ``m_binG.c`` (Buckley, experimental measures, 4/10/2008).
    """

    name = "BinG"
    recall_normalised = True
    formula = "binG = (1/R) sum_{r: rel(r)} 1 / log2(2 + n(r)), n(r) = non-relevant above r"
    reference = "trec_eval 10.0 m_binG.c (Buckley, experimental measures, 4/10/2008)"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        hits = self.relevant_hits(tensor)
        # The n-th relevant document at 0-based rank i has i - (n - 1) non-relevant above it.
        return self.per_topic(tensor, hits, _nonrel_discount(hits.rank0 - hits.count + 1.0))

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        # A relevant document of a tie group has the c = a - B non-relevant documents of the
        # earlier groups above it, and a number of its group's z = n - m non-relevant ones
        # that is uniform on 0 .. z (its place among them and itself is uniform): the mean of
        # 1 / log2(2 + c + k) over k = 0 .. z, a difference of a cumulative table.
        hits = self.tied_relevant(tensor)
        above = (hits.tie_start - hits.hits_before).astype(np.int64)
        own = (hits.tie_size - hits.tie_hits).astype(np.int64)
        table = cumulative(_nonrel_discount(np.arange(tensor.depth + 1)))
        mean = (table[above + own + 1] - table[above]) / (own + 1.0)
        return self.per_topic(tensor, hits, mean)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        return _bing_bounds(tensor, self.rel, side)


def _bing_bounds(tensor: EvalTensor, rel: float, side: str) -> np.ndarray:
    """(S, T) least (``lo``) or greatest (``hi``) binG over every assignment of grades to the
    unknown documents: exact.

    Only which unknown documents are relevant matters. Swapping relevance from a lower
    unknown document to a higher one raises its own term (fewer non-relevant documents above
    it) and the terms of the relevant documents between them, and leaves the others, so with
    s of the list's L unknown documents relevant the greatest value puts them on the first s
    unknown ranks and the least on the last s. An unknown document outside the list only adds
    to R: none relevant for the greatest value, all for the least. The greatest is then the
    best of T(s) / (R0 + s) over s = 0 .. L, T(s) the sum of terms with the first s relevant:
    T(s) - T(s - 1) adds the s-th unknown document's term and, for each judged relevant
    document below it, the change of its term, pairs of (document, s) that a scan adds up.
    The least is the least of N(s) / (R0 + E + s) with the last s relevant: adding one more
    (the next unknown rank up) adds a term and lowers the count above every relevant
    document below it, and both grow with s as 1 / log2(2 + x) is convex, so N is convex
    and the ratio falls then rises (a bisection finds its turn).
    """
    shape = (tensor.n_runs, tensor.n_topics)
    lowest = tensor.code_at_least(rel)
    if lowest >= tensor.n_grades:  # no grade reaches the level: nothing can be relevant
        return np.zeros(shape)
    codes = tensor.codes
    unknown_at = (codes < 0) & tensor.valid()
    judged_nonrel = (codes >= 0) & (codes < lowest)
    # judged non-relevant and unknown documents above every rank (exclusive counts)
    nonrel_above = (np.cumsum(judged_nonrel, axis=2, dtype=np.int32) - judged_nonrel).reshape(-1)
    unknown_above = (np.cumsum(unknown_at, axis=2, dtype=np.int32) - unknown_at).reshape(-1)
    depth = codes.shape[2]
    hits = RankedHits(codes, codes >= lowest)  # the judged relevant documents
    at = hits.group * depth + hits.rank0
    jn, u = nonrel_above[at].astype(np.int64), unknown_above[at].astype(np.int64)
    unknown = unknown_ranks(tensor)
    jn_unknown = nonrel_above[unknown.group * depth + unknown.rank0].astype(np.int64)
    index = unknown.count.astype(np.int64)  # 1-based place among the list's unknown ranks
    n_lists = shape[0] * shape[1]
    listed = unknown.counts().reshape(-1).astype(np.int64)  # L
    topic = np.arange(n_lists) % shape[1]
    n_rel = tensor.n_relevant(rel)[topic].astype(np.float64)
    if side == "hi":
        width = int(listed.max(initial=0)) + 1
        # T(s) - T(0) over s = 0 .. L in a row per list: the first s unknown terms ...
        steps = np.zeros((n_lists, width))
        steps[unknown.group, index] = _nonrel_discount(jn_unknown)
        # ... and, for a judged relevant document with U unknown documents above it, the
        # rise of its term at each s = 1 .. U (its count above falls from jn + U to jn)
        owner, k = grid_rows(u)
        rise = _nonrel_discount(jn[owner] + u[owner] - k - 1) - _nonrel_discount(
            jn[owner] + u[owner] - k
        )
        flat = hits.group[owner].astype(np.int64) * width + k + 1
        steps += np.bincount(flat, weights=rise, minlength=n_lists * width).reshape(steps.shape)
        base = hits.total(_nonrel_discount(jn + u)).reshape(-1)
        s = np.arange(width)
        values = safe_divide(base[:, None] + np.cumsum(steps, axis=1), n_rel[:, None] + s)
        values = np.where(s[None, :] <= listed[:, None], values, -np.inf)
        return values.max(axis=1).reshape(shape)
    most = n_rel + unknown_elsewhere(tensor).reshape(-1)

    def ratio(s: np.ndarray) -> np.ndarray:
        """N(s) / (R0 + E + s), the last s unknown ranks of every list relevant."""
        kept = listed - s  # unknown documents above the relevant ones, non-relevant
        judged = _nonrel_discount(jn + np.minimum(u, kept[hits.group]))
        chosen = np.flatnonzero(index > kept[unknown.group])
        group = unknown.group[chosen]
        own = _nonrel_discount(jn_unknown[chosen] + kept[group])
        total = np.bincount(hits.group, weights=judged, minlength=n_lists) + np.bincount(
            group, weights=own, minlength=n_lists
        )
        return safe_divide(total, most + s)

    low, high = np.zeros(n_lists, dtype=np.int64), listed.copy()
    while (open_ := low < high).any():
        mid = (low + high) // 2
        rising = ratio(np.minimum(mid + 1, listed)) >= ratio(mid)
        high = np.where(open_ & rising, mid, high)
        low = np.where(open_ & ~rising, mid + 1, low)
    # the ends too: a rounding tie inside the scan cannot then hide an end's smaller value
    least = np.minimum(ratio(low), np.minimum(ratio(np.zeros_like(low)), ratio(listed)))
    return least.reshape(shape)


#: What one (rank, state, gain) of :func:`_g_tied_group` costs, in the cells of
#: :data:`~metaeval.measures.base.TIED_MAXIMUM_CELLS` (an exponential and a logarithm each:
#: 1.8e8 of them took 2.8 s on TREC DL 2020, interpolated precision's cells 1 ns each).
G_TIED_CELL = 16


@register
@dataclass(frozen=True, kw_only=True)
class G(GainMeasure):
    """Normalised gain G, trec_eval's ``G``: each document's gain discounted by how far the
    gain above it falls short of the ideal's.

    G = (1/G*) sum over the ranks r of g(r) / log2(2 + C*(r) - CG(r)), with CG(r) the gain of
    ranks 1..r (the document at r included), C*(r) = sum_{k<=r} max(g*(k), 1) the ideal
    list's gain up to r, each rank costing at least 1 (trec_eval's min_cost; past the ideal
    list's end every rank costs 1), and G* the ideal list's whole gain. The ideal list holds
    every judged document of positive gain, highest first; 0 when it is empty. A document
    whose gains above keep up with the ideal's scores its whole gain (the ideal list scores
    1); one retrieved after a shortfall of gain is discounted by it, as binG discounts a
    relevant document by the non-relevant ones above it. Gains as in
    :class:`nDCG`: the grade by default (trec_eval), ``gains=`` overriding the grades it
    names; the relevance level does not apply. An experimental measure of trec_eval
    (4/10/2008).

    Parameters
    ----------
    gain : {"linear", "exp"}
        ``linear`` (default, trec_eval): gain = grade. ``exp``: 2^grade - 1.
    gains : mapping grade -> gain, optional
        Overrides the gain of the grades it names: ``G(gains={1:3.5,2:9.0})`` is trec_eval's
        ``-m G.1=3.5,2=9.0``. trec_eval orders its levels by the whole part of their gain
        difference, so gains that differ by less than 1 (3.5 and 3) may be misordered in its
        ideal list; metaeval orders them by gain, the same list whenever every two distinct
        gains differ by 1 or more (integer gains, the default included).

    References
    ----------
    trec_eval 10.0, ``m_G.c`` (Buckley, experimental measures, 4/10/2008).
    """

    name = "G"
    recall_normalised = True
    formula = "G = (1/G*) sum_r g(r) / log2(2 + C*(r) - CG(r)), C*(r) = sum_{k<=r} max(g*(k), 1)"
    reference = "trec_eval 10.0 m_G.c (Buckley, experimental measures, 4/10/2008)"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        gains = self.gain_values(tensor.levels)
        counts = with_unknown_at(tensor, 0, all_unknown=False)  # the judgments' own ideal
        return safe_divide(*_g_parts(tensor, gains, counts))

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        # Bounds that hold: with every gain between 0 and the highest, C*(r) rises and CG(r)
        # falls as an unknown document's gain does, and C*(r) >= CG(r) always. The least value
        # has the unknown documents at 0 in the list against the ideal (cost and G*) with
        # every unknown one at the highest gain; the greatest has those it retrieved at the
        # highest gain against the judgments' own ideal, each gap C*(r) - CG(r) at least 0,
        # at most 1.
        gains = self.gain_values(tensor.levels)
        best = int(np.argmax(gains))
        if side == "lo":
            counts = with_unknown_at(tensor, best, all_unknown=True)
            return safe_divide(*_g_parts(tensor, gains, counts))
        counts = with_unknown_at(tensor, best, all_unknown=False)
        total, whole = _g_parts(top_grade_view(tensor, best), gains, counts, floor=True)
        # an ideal of no gain: any gain the list has makes the value 1 at most
        return np.where(whole > 0, np.minimum(1.0, safe_divide(total, whole)), (total > 0) * 1.0)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        """Each term over the orderings of its tie group (:func:`_g_tied_group`); the terms of
        groups whose members all have one gain are fixed."""
        gains = self.gain_values(tensor.levels)
        counts = with_unknown_at(tensor, 0, all_unknown=False)
        whole = (counts @ np.where(gains > 0, gains, 0.0)).reshape(tensor.n_runs, tensor.n_topics)
        ideal = ideal_per_rank(counts, gains, tensor.depth)
        cost = np.cumsum(np.maximum(ideal, 1.0), axis=1)  # C*(r)
        hits = tied_hits(tensor, lambda codes: positive_at(gains, codes))
        g = gains[hits.grade]
        if not len(g):
            return np.zeros(whole.shape)
        first, block = hits.tie_layout
        # a group's order matters when it holds two gains, or members without gain
        mixed = (np.minimum.reduceat(g, first) < np.maximum.reduceat(g, first)) | (
            hits.tie_size[first] > hits.tie_hits[first]
        )
        gap = cost[hits.group, hits.rank0] - hits.cumsum(g)
        terms = np.where(mixed[block], 0.0, g / np.log2(2.0 + gap))
        total = hits.total(terms).reshape(-1)
        before = hits.before_tie(g)
        ends = np.append(first[1:], len(g))  # a group's hits are first[at]:ends[at]
        groups, cells = [], np.zeros(len(total))
        for at in np.flatnonzero(mixed):
            lst, start = int(hits.group[first[at]]), int(hits.tie_start[first[at]])
            size = int(hits.tie_size[first[at]])
            values, per_value = np.unique(g[first[at] : ends[at]], return_counts=True)
            groups.append((lst, start, size, values, per_value, before[first[at]]))
            cells[lst] += G_TIED_CELL * size * np.prod(per_value + 1.0) * len(per_value)
        refuse_costly_ties(self, tensor, cells)
        for lst, start, size, values, per_value, cg_before in groups:
            ranks = cost[lst, start : start + size]
            total[lst] += _g_tied_group(ranks, size, values, per_value, cg_before)
        return safe_divide(total.reshape(whole.shape), whole)


def _g_tied_group(
    cost: np.ndarray, n: int, values: np.ndarray, per_value: np.ndarray, cg_before: float
) -> float:
    """G's expected sum of terms over the orderings of one group of n tied documents.

    The group holds per_value[h] documents of gain values[h] > 0 and the rest without gain;
    ``cost`` is C*(r) at its n ranks and ``cg_before`` the gain of the ranks above it. A
    document of gain v at the group's i-th rank scores v / log2(2 + C*(r) - cg_before - s - v),
    s the gain of the i - 1 group members above it: a uniformly random subset of the others,
    whose counts c_h per gain (a multivariate hypergeometric draw) give
    P(c) = prod_h C(m_h, c_h) C(m_0, i - 1 - sum c) / C(n - 1, i - 1), m the others' counts.
    Each rank holds a document of gain values[h] with probability per_value[h] / n.
    """
    grid = np.meshgrid(*[np.arange(m + 1) for m in per_value], indexing="ij")
    chosen = np.stack([c.reshape(-1) for c in grid])  # (gains, states): c_h per state
    taken, gain = chosen.sum(axis=0), values @ chosen
    m0 = n - int(per_value.sum())  # members without gain
    above = np.arange(n)  # i - 1, the members above the group's i-th rank
    # log C(m0, r) for r = 0..m0, -inf past m0; the padding past n makes the negative r of
    # states with more members of gain than ranks above (read from the end) -inf too
    log_zero = np.full(n + 1 + int(taken.max()), -np.inf)
    log_zero[: m0 + 1] = log_choose(m0, np.arange(m0 + 1))
    log_above = log_choose(n - 1, above)
    rows = max(1, (1 << 22) // chosen.shape[1])  # ranks at a time: memory stays bounded
    expected = 0.0
    for h, v in enumerate(values):
        others = per_value.copy()
        others[h] -= 1
        keep = (chosen <= others[:, None]).all(axis=0)  # states the others can fill
        weight = log_choose(others[:, None], chosen[:, keep]).sum(axis=0)
        count, sums = taken[keep], gain[keep]
        for lo in range(0, n, rows):
            i = above[lo : lo + rows, None]
            # members without gain above: i - count, read as -inf where that is < 0
            log_p = weight + log_zero[i - count] - log_above[lo : lo + rows, None]
            p = np.exp(log_p)
            # C*(r) - CG(r) >= 0 where p > 0; elsewhere it may be < -1, and p is 0
            gap = np.maximum(cost[lo : lo + rows, None] - cg_before - sums - v, 0.0)
            expected += per_value[h] / n * float(np.sum(p * v / np.log2(2.0 + gap)))
    return expected


def _g_parts(
    tensor: EvalTensor, gains: np.ndarray, counts: np.ndarray, *, floor: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """(S, T) G's sum of terms and its divisor G*, the ideal list of each run and topic made
    of ``counts`` ((S * T, G) judged documents per grade code); ``floor``: each gap
    C*(r) - CG(r) taken at least 0."""
    # Only ranks of positive gain add a term; CG(r) at those ranks is their running sum.
    hits = ranked_hits(tensor, lambda codes: positive_at(gains, codes))
    g = gains[hits.grade]
    ideal = ideal_per_rank(counts, gains, tensor.depth)
    cost = np.cumsum(np.maximum(ideal, 1.0), axis=1)  # C*(r): min_cost 1 per rank
    gap = cost[hits.group, hits.rank0] - hits.cumsum(g)
    terms = g / np.log2(2.0 + (np.maximum(gap, 0.0) if floor else gap))
    whole = counts @ np.where(gains > 0, gains, 0.0)  # G*
    return hits.total(terms), whole.reshape(tensor.n_runs, tensor.n_topics)


@register(aliases=("ndcg_rel",))
@dataclass(frozen=True, kw_only=True)
class nDCG_rel(GainMeasure):
    """nDCG averaged over the relevant documents, trec_eval's ``ndcg_rel``.

    With N the judged documents of positive gain (the ideal list's length), DCG(r) and
    DCG*(r) the list's and the ideal list's DCG of ranks 1..r (DCG* stops growing after N):

        ndcg_rel = (1/N) [sum over the retrieved documents of positive gain, at rank r, of
                   DCG(r) / DCG*(r) + (N - n) DCG / DCG*],

    n those retrieved documents, DCG and DCG* the whole list's and the whole ideal list's:
    a relevant document not retrieved counts the nDCG of the whole list. Gain = grade and
    discount 1 / log2(r + 1), as trec_eval's ``ndcg``; 0 when N = 0. ``gains=`` as in
    :class:`G` (trec_eval's ``-m ndcg_rel.1=3.5,2=9.0``); a document of positive gain is
    relevant here, and the relevance level does not apply.

    Parameters
    ----------
    gain : {"linear", "exp"}
        ``linear`` (default, trec_eval): gain = grade. ``exp``: 2^grade - 1.
    gains : mapping grade -> gain, optional
        Overrides the gain of the grades it names (see :class:`G` for trec_eval's ordering
        of gains closer than 1).

    References
    ----------
    trec_eval 10.0, ``m_ndcg_rel.c``; Jarvelin & Kekalainen, "Cumulated gain-based
    evaluation of IR techniques", ACM TOIS 2002.
    """

    name = "nDCG_rel"
    recall_normalised = True
    formula = "ndcg_rel = (1/N) [sum_{r: g(r)>0} DCG(r)/DCG*(r) + (N - n) DCG/DCG*]"
    reference = (
        "trec_eval 10.0 m_ndcg_rel.c; Jarvelin & Kekalainen, 'Cumulated gain-based "
        "evaluation of IR techniques', ACM TOIS 2002"
    )

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        gains = self.gain_values(tensor.levels)
        hits = ranked_hits(tensor, lambda codes: positive_at(gains, codes))
        g = gains[hits.grade] * log2_discount(tensor.depth)[hits.rank0]
        prefix = _ideal_prefix(tensor, gains)[hits.topic, hits.rank0]
        return self._average(tensor, gains, hits, safe_divide(hits.cumsum(g), prefix), g)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        # The sum over relevant documents d of DCG(r_d) / DCG*(r_d) is a sum over pairs
        # (d', d), d' at or above d, of g(d') w(r_d') / DCG*(r_d): linear in pairs of
        # positions. A d' of an earlier tie group is independent of d: its mean weight times
        # d's mean of 1 / DCG*. d itself: the mean of w / DCG* over its group's ranks. Each
        # other d' of its group is above it on half of the orderings: with (p', p) uniform
        # over distinct positions, the mean of w(a + p') / DCG*(a + p) over p' < p is
        # sum_p (W(a + p) - W(a)) / DCG*(a + p) / (n (n - 1)), W the cumulative discount.
        gains = self.gain_values(tensor.levels)
        hits = tied_hits(tensor, lambda codes: positive_at(gains, codes))
        depth = tensor.depth
        weights = log2_discount(depth)
        below = cumulative(weights)  # W(x): the discounts of the ranks below x
        inverse = safe_divide(1.0, _ideal_prefix(tensor, gains))  # (T, depth)
        zero = np.zeros((tensor.n_topics, 1))
        by_rank = np.concatenate([zero, np.cumsum(inverse, axis=1)], axis=1)
        weighted = np.concatenate([zero, np.cumsum(inverse * weights, axis=1)], axis=1)
        paired = np.concatenate([zero, np.cumsum(inverse * below[None, :-1], axis=1)], axis=1)
        t, a, n = hits.topic, hits.tie_start, hits.tie_size.astype(np.float64)
        end = a + n.astype(np.int64)
        g = gains[hits.grade]
        mean_weight = hits.mean_weight(below)
        mean_inverse = (by_rank[t, end] - by_rank[t, a]) / n
        own = (weighted[t, end] - weighted[t, a]) / n
        pairs = safe_divide(
            paired[t, end] - paired[t, a] - below[a] * (by_rank[t, end] - by_rank[t, a]),
            n * (n - 1.0),
        )
        terms = (
            hits.before_tie(g * mean_weight) * mean_inverse
            + g * own
            + (hits.tie_total(g) - g) * pairs
        )
        return self._average(tensor, gains, hits, terms, g * mean_weight)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        # Bounds that hold. The value is the mean of N slots in [0, 1]: one per relevant
        # document retrieved, DCG(r) / DCG*(r) at its rank, and one per relevant document
        # missed, DCG / DCG* of the whole lists. Of the list's L unknown documents, u are made
        # relevant (each adds a slot), and e of the E elsewhere (each a missed one).
        # Lowest: every slot at its least (the list's DCG with the unknown documents at 0,
        # over the ideal with every unknown document at the highest gain), the unknown ones'
        # slots at 0 with u = L, e = 0 or E. Highest: every slot at its greatest (the unknown
        # documents it retrieved at the highest gain, over the judgments' own ideal, at most
        # 1), the best u of the unknown documents' slots, e = 0 or E.
        gains = self.gain_values(tensor.levels)
        best = int(np.argmax(gains))
        shape = (tensor.n_runs, tensor.n_topics)
        weights = log2_discount(tensor.depth)
        listed, elsewhere = (c.reshape(-1).astype(np.float64) for c in unknown_counts(tensor))
        counts = with_unknown_at(tensor, best, all_unknown=side == "lo")
        prefix = np.cumsum(ideal_per_rank(counts, gains, tensor.depth) * weights, axis=1)
        longest = int(counts[:, gains > 0].sum(axis=1).max(initial=0))
        whole_ideal = ideal_dcg(counts, gains, log2_discount(max(longest, 1)), None)
        n_judged = np.tile(tensor.grade_counts[:, gains > 0].sum(axis=1), shape[0]) + 0.0  # N0
        view = tensor if side == "lo" else top_grade_view(tensor, best)
        hits = ranked_hits(view, lambda codes: positive_at(gains, codes))
        g = gains[hits.grade] * weights[hits.rank0]
        slots = np.minimum(1.0, safe_divide(hits.cumsum(g), prefix[hits.group, hits.rank0]))
        whole = hits.total(g).reshape(-1)
        missed_slot = np.where(
            whole_ideal > 0, np.minimum(1.0, safe_divide(whole, whole_ideal)), (whole > 0) * 1.0
        )
        unknown = tensor.codes.reshape(-1, tensor.depth)[hits.group, hits.rank0] < 0
        judged = ~unknown
        base = np.bincount(hits.group[judged], weights=slots[judged], minlength=len(listed))
        found = np.bincount(hits.group[judged], minlength=len(listed)).astype(np.float64)
        missed = n_judged - found  # N0 - n0

        def mean(total, extra_slots, e, rows=slice(None)):
            """The mean of the slots: ``total`` of the retrieved ones, ``extra_slots`` of
            them the unknown documents made relevant, ``e`` more missed."""
            n = n_judged[rows] + extra_slots + e
            return safe_divide(total + (missed[rows] + e) * missed_slot[rows], n)

        if side == "lo":
            return np.minimum(mean(base, listed, 0.0), mean(base, listed, elsewhere)).reshape(shape)
        if gains[best] <= 0:  # no gain to give: the unknown documents change nothing
            return self._compute(tensor)
        # the best u of the unknown documents' slots: the u greatest, for every u = 0 .. L
        group, value = hits.group[unknown], slots[unknown]
        running = np.concatenate([[0.0], np.cumsum(value[np.lexsort((-value, group))])])
        sizes = listed.astype(np.int64) + 1
        owner, u = grid_rows(sizes)
        start = (np.cumsum(sizes - 1) - (sizes - 1))[owner]  # the list's first sorted slot
        total = base[owner] + running[start + u] - running[start]
        means = [mean(total, u, e, owner) for e in (0.0, elsewhere[owner])]
        return np.maximum.reduceat(np.maximum(*means), np.cumsum(sizes) - sizes).reshape(shape)

    def _average(
        self,
        tensor: EvalTensor,
        gains: np.ndarray,
        hits: RankedHits,
        at_relevant: np.ndarray,
        dcg_terms: np.ndarray,
    ) -> np.ndarray:
        """(1/N) [sum of ``at_relevant`` + (N - n) DCG / DCG*], ``dcg_terms`` adding up to
        each list's DCG (or its expected value)."""
        n_ideal = tensor.grade_counts[:, gains > 0].sum(axis=1)[None, :]
        depth = ideal_depth(tensor, None)
        whole = ideal_dcg(tensor.grade_counts, gains, log2_discount(depth), None)[None, :]
        missed = (n_ideal - hits.counts()) * safe_divide(hits.total(dcg_terms), whole)
        return safe_divide(hits.total(at_relevant) + missed, n_ideal)


@register(aliases=("Rndcg",))
@dataclass(frozen=True, kw_only=True)
class RnDCG(GainMeasure, BinaryMeasure):
    """nDCG averaged at the ideal list's gain boundaries, trec_eval's ``Rndcg``.

    The ideal list (every judged document of positive gain, highest first) is a block of
    documents of each positive gain; with E_1 < ... < E_m the ranks where its blocks end
    (E_m = N, its length),

        Rndcg = (1/m') [sum_b DCG@E_b / DCG*@E_b + [n >= N + 2] DCG@n / DCG*@N],

    n the list's length and m' = m + [n >= N + 2]: trec_eval adds the nDCG of the whole list
    as a last boundary (its unjudged documents have gain 0) only when the list reaches two
    ranks past the ideal list. DCG as in trec_eval's ``ndcg`` (gain = grade, discount
    1 / log2(r + 1)). 0 when no judged document reaches ``rel`` (trec_eval's R = 0), and when
    no document has a positive gain (where trec_eval divides 0 by 0 and prints nan, gains
    of 0 given to the relevant grades). ``gains=`` as in :class:`G` (trec_eval's
    ``-m Rndcg.1=3.5,2=9.0``); grades of equal gain make one block.

    Parameters
    ----------
    gain : {"linear", "exp"}
        ``linear`` (default, trec_eval): gain = grade. ``exp``: 2^grade - 1.
    gains : mapping grade -> gain, optional
        Overrides the gain of the grades it names (see :class:`G` for trec_eval's ordering
        of gains closer than 1).
    rel : int or float
        Relevance level (trec_eval ``-l``): it only decides R = 0 (default 1).

    References
    ----------
    trec_eval 10.0, ``m_Rndcg.c``; Jarvelin & Kekalainen, "Cumulated gain-based evaluation
    of IR techniques", ACM TOIS 2002.
    """

    name = "RnDCG"
    recall_normalised = True
    formula = "Rndcg = (1/m') [sum_b nDCG@E_b + [n >= N+2] nDCG@n], E_b the ideal's block ends"
    reference = (
        "trec_eval 10.0 m_Rndcg.c; Jarvelin & Kekalainen, 'Cumulated gain-based evaluation "
        "of IR techniques', ACM TOIS 2002"
    )

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        gains = self.gain_values(tensor.levels)
        hits = ranked_hits(tensor, lambda codes: positive_at(gains, codes))
        terms = gains[hits.grade] * log2_discount(tensor.depth)[hits.rank0]

        def dcg_terms(ends: np.ndarray | None) -> np.ndarray:
            return terms if ends is None else terms * (hits.rank0 < ends[hits.topic])

        return self._average(tensor, gains, hits, dcg_terms)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        # A fixed sum of DCG@k / DCG*@k over fixed k: each document's expected discount
        # within k is the mean of its tie group's discounts within k (nDCG's expectation).
        gains = self.gain_values(tensor.levels)
        hits = tied_hits(tensor, lambda codes: positive_at(gains, codes))
        below = cumulative(log2_discount(tensor.depth))
        g = gains[hits.grade]

        def dcg_terms(ends: np.ndarray | None) -> np.ndarray:
            return g * hits.mean_weight(below, None if ends is None else ends[hits.topic])

        return self._average(tensor, gains, hits, dcg_terms)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        # Bounds that hold: the value is a mean of nDCG@E over the ranks E where the ideal
        # list's blocks of equal gain end (and of the whole list's nDCG), so it lies between
        # the least and the greatest of them. With U unknown documents (the list's and the
        # qrels' others), the block of the b-th highest gain ends at some E in [C_b, C_b + U],
        # C_b the judged documents of that gain or higher. Each nDCG@E is bounded as nDCG's
        # (the list's DCG with the unknown documents at 0 or, those it retrieved, at the
        # highest gain, over the ideal with every unknown document at the highest gain or at
        # 0), and the bound is the least (greatest) over those E. A topic that can have no
        # relevant document (or no gain) scores 0.
        gains = self.gain_values(tensor.levels)
        best = int(np.argmax(gains))
        listed, elsewhere = (c.reshape(-1) for c in unknown_counts(tensor))
        unknown = (listed + elsewhere).astype(np.int64)  # U
        levels, judged = _ideal_blocks(tensor.grade_counts, gains)
        n_lists = tensor.n_runs * tensor.n_topics
        topic = np.arange(n_lists) % tensor.n_topics
        block_ends = np.cumsum(judged, axis=1)[topic]  # C_b of every list
        last = block_ends[:, -1] if len(levels) else np.zeros(n_lists, dtype=np.int64)  # N0
        # ranks 1 .. span: every block end a completion can give, and the whole list
        span = max(int((last + unknown).max(initial=0)), tensor.depth, 1)
        counts = with_unknown_at(tensor, best, all_unknown=side == "lo")
        ideal = np.cumsum(ideal_per_rank(counts, gains, span) * log2_discount(span), axis=1)
        view = tensor if side == "lo" else top_grade_view(tensor, best)
        hits = ranked_hits(view, lambda codes: positive_at(gains, codes))
        dcg = np.zeros((n_lists, span + 1))  # DCG of the list's ranks 1..E at column E
        np.add.at(
            dcg,
            (hits.group, hits.rank0 + 1),
            gains[hits.grade] * log2_discount(tensor.depth)[hits.rank0],
        )
        dcg = np.cumsum(dcg, axis=1)[:, 1:]
        if side == "lo":
            ratio = safe_divide(dcg, ideal)
        else:
            ratio = np.where(ideal > 0, np.minimum(1.0, safe_divide(dcg, ideal)), (dcg > 0) * 1.0)
        ranks = np.arange(1, span + 1)[None, :]
        possible = np.zeros((n_lists, span), dtype=bool)
        for b in range(len(levels)):
            start = np.maximum(block_ends[:, b], 1)[:, None]
            possible |= (ranks >= start) & (ranks <= (block_ends[:, b] + unknown)[:, None])
        whole = ratio[:, -1]  # the whole list against the whole ideal
        if side == "lo":
            least = np.where(possible, ratio, np.inf).min(axis=1, initial=np.inf)
            value = np.minimum(least, whole)
            empty = tensor.n_relevant(self.rel)[topic] == 0
            empty |= last == 0
        else:
            value = np.maximum(np.where(possible, ratio, 0.0).max(axis=1, initial=0.0), whole)
            empty = tensor.n_relevant(self.rel)[topic] + unknown == 0
            empty |= (last + unknown == 0) | (gains[best] <= 0)
        return np.where(empty, 0.0, value).reshape(tensor.n_runs, tensor.n_topics)

    def _average(
        self, tensor: EvalTensor, gains: np.ndarray, hits: RankedHits, dcg_terms
    ) -> np.ndarray:
        """The mean of DCG@E_b / DCG*@E_b over the boundaries, and of the whole list's nDCG
        when it reaches two ranks past the ideal list; ``dcg_terms(ends)`` gives each hit's
        part of DCG@ends (ends per topic; the whole list for None), or of its expectation."""
        values, counts = _ideal_blocks(tensor.grade_counts, gains)
        ends = np.cumsum(counts, axis=1)  # (T, B) the ranks where the blocks end
        n_ideal = ends[:, -1] if len(values) else np.zeros(tensor.n_topics, dtype=np.int64)
        below = cumulative(log2_discount(max(int(n_ideal.max(initial=0)), 1)))
        ideal = np.cumsum(values[None, :] * (below[ends] - below[ends - counts]), axis=1)
        total = np.zeros((tensor.n_runs, tensor.n_topics))
        for b in range(len(values)):
            # a gain without documents in a topic is no change of its ideal gain there
            scale = np.where(counts[:, b] > 0, safe_divide(1.0, ideal[:, b]), 0.0)
            total += hits.total(dcg_terms(ends[:, b]) * scale[hits.topic])
        whole = ideal[:, -1] if len(values) else np.zeros(tensor.n_topics)
        last = (tensor.lengths >= n_ideal[None, :] + 2) & (whole[None, :] > 0)
        total += np.where(last, safe_divide(hits.total(dcg_terms(None)), whole[None, :]), 0.0)
        value = safe_divide(total, (counts > 0).sum(axis=1)[None, :] + last)
        # trec_eval scores 0 a topic without a judged document at the relevance level
        return np.where(tensor.n_relevant(self.rel)[None, :] > 0, value, 0.0)


__all__ = [
    "nDCG",
    "nCG",
    "Q",
    "RBP",
    "RBP_resid",
    "ERR",
    "nERR",
    "GAP",
    "xGAP",
    "eGAP",
    "BinG",
    "G",
    "nDCG_rel",
    "RnDCG",
    "GainMeasure",
    "gain_table",
    "override_gains",
    "as_levels",
    "ideal_dcg",
    "ideal_per_rank",
    "normalise_gains",
    "jk_discount",
]
