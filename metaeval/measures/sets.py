"""Set-based measures: the retrieved list read as an unordered set (trec_eval's ``set_*``,
``utility`` and ``num_nonrel_judged_ret``; ``set_recall`` is ``R``, recall of the whole list).

A set-based measure sees a topic through four counts only: the documents retrieved (num_ret,
the list's length after any depth cut ``-M``), the relevant ones among them (num_rel_ret, grade
>= ``rel``), the relevant documents of the topic (R) and, for utility, the documents of the
collection (N). The order of the list does not matter, so each is its own expected value over
the orderings of tied documents. They are what a filtering or a Boolean system is judged by:
``trec_eval -M 50 -m set_P`` measures the first 50 documents as a set, unlike ``P@50``, which
counts a short list's missing ranks as non-relevant.

Bounds over the grades of the unjudged documents (``SetP_lo``...): making relevant s of the L
unknown documents a list retrieved and e of the E unknown ones elsewhere gives num_rel_ret =
num_rel_ret0 + s and R = R0 + s + e. P, recall, relative P, set map and F (beta >= 0) never
fall as s grows and never rise as e grows (each is derived in its class), so the
greatest value is at s = L, e = 0 and the least at s = 0, e = E; utility is linear in s and
e. When no grade reaches the level ``rel``, no unknown document can be relevant (s = e = 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from metaeval._constraints import Described, Interval
from metaeval.engine import EvalTensor
from metaeval.measures._common import ranked_hits, safe_divide
from metaeval.measures.base import register
from metaeval.measures.binary import BinaryMeasure
from metaeval.measures.bounds import unknown_elsewhere
from metaeval.measures.graded import MAX_PARAMETER

#: Any value (utility), and any count of documents.
_ANY = (-float("inf"), float("inf"))
_COUNT = (0.0, float("inf"))
#: Largest number of documents in the collection (N): counts stay exact in double precision.
MAX_DOCS = 2**53
#: The weights a, b, c, d of trec_eval's ``utility`` (``-m utility``).
DEFAULT_WEIGHTS = (1.0, -1.0, 0.0, 0.0)


def set_counts(tensor: EvalTensor, rel: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(S, T) float arrays num_rel_ret, num_ret and R at relevance level ``rel``."""
    lowest = tensor.code_at_least(rel)
    rel_ret = ranked_hits(tensor, lambda codes: codes >= lowest).counts().astype(np.float64)
    n_ret = tensor.lengths.astype(np.float64)
    n_rel = np.broadcast_to(tensor.n_relevant(rel).astype(np.float64)[None, :], n_ret.shape)
    return rel_ret, n_ret, n_rel


def judged_retrieved(tensor: EvalTensor) -> np.ndarray:
    """(S, T) float: retrieved documents with a judgment (grade >= 0)."""
    return ranked_hits(tensor, lambda codes: codes >= 0).counts().astype(np.float64)


def unknown_set(tensor: EvalTensor, rel: float) -> tuple[np.ndarray, np.ndarray]:
    """(S, T) float: the unknown documents each list retrieved (L), and those elsewhere (E,
    the qrels' rows without a judgment that the list does not hold), both 0 when no grade of
    the qrels reaches ``rel`` (then no assignment of grades makes a document relevant)."""
    if tensor.code_at_least(rel) >= tensor.n_grades:
        zero = np.zeros((tensor.n_runs, tensor.n_topics))
        return zero, zero
    listed = tensor.lengths - judged_retrieved(tensor)
    return listed, unknown_elsewhere(tensor).astype(np.float64)


@dataclass(frozen=True, kw_only=True)
class SetMeasure(BinaryMeasure):
    """A set-based measure: a function of num_rel_ret, num_ret and R (:meth:`value`) that
    never falls as num_rel_ret and R rise together and never rises as R alone does, so that
    its bounds are its values at the two ends (see the module's docstring)."""

    order_free = True

    def value(self, rel_ret: np.ndarray, n_ret: np.ndarray, n_rel: np.ndarray) -> np.ndarray:
        """(S, T) the measure from its three counts, as trec_eval computes it."""
        raise NotImplementedError

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        return self.value(*set_counts(tensor, self.rel))

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        rel_ret, n_ret, n_rel = set_counts(tensor, self.rel)
        listed, elsewhere = unknown_set(tensor, self.rel)
        if side == "hi":  # every unknown document retrieved relevant, none elsewhere
            return self.value(rel_ret + listed, n_ret, n_rel + listed)
        return self.value(rel_ret, n_ret, n_rel + elsewhere)


def _where_positive(test: np.ndarray, compute) -> np.ndarray:
    """``compute()`` where ``test`` holds, 0 elsewhere (trec_eval leaves those values at 0),
    without a warning for the divisions by 0 computed and thrown away."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(test, compute(), 0.0)


@register(aliases=("set_P",))
@dataclass(frozen=True, kw_only=True)
class SetP(SetMeasure):
    """Set precision (trec_eval ``set_P``): the share of the retrieved documents that are
    relevant.

    SetP = num_rel_ret / num_ret, 0 when nothing is retrieved. Unlike ``P@k``, whose
    denominator is k, a list shorter than the depth is not filled with non-relevant
    documents: ``SetP`` under ``depth=50`` (trec_eval ``-M 50 -m set_P``) differs from
    ``P@50`` on lists shorter than 50.

    Parameters
    ----------
    rel : int or float
        Relevance level (trec_eval ``-l``), default 1; any number > 0 on real-valued grades.

    References
    ----------
    trec_eval 10.0, ``m_set_P.c`` (formerly ``exact_prec``).
    """

    name = "SetP"
    formula = "SetP = num_rel_ret / num_ret"
    reference = "trec_eval 10.0 set_P (m_set_P.c)"

    def value(self, rel_ret, n_ret, n_rel):
        return safe_divide(rel_ret, n_ret)


@register(aliases=("set_relative_P",))
@dataclass(frozen=True, kw_only=True)
class SetRelP(SetMeasure):
    """Relative set precision (trec_eval ``set_relative_P``): set precision over the best a
    set of that size can reach.

    SetRelP = num_rel_ret / min(num_ret, R), 0 when num_ret = 0 or R = 0. As num_rel_ret is
    at most num_ret and at most R, it is max(SetP, recall): precision for a set smaller than R,
    recall for a larger one. Both rise with the unknown documents retrieved made relevant
    and fall with those elsewhere, so its bounds are those of the two at the same ends.

    Parameters
    ----------
    rel : int or float
        Relevance level (trec_eval ``-l``), default 1; any number > 0 on real-valued grades.

    References
    ----------
    trec_eval 10.0, ``m_set_rel_P.c`` (formerly ``exact_relative_prec``).
    """

    name = "SetRelP"
    recall_normalised = True
    formula = "SetRelP = num_rel_ret / min(num_ret, R)"
    reference = "trec_eval 10.0 set_relative_P (m_set_rel_P.c)"

    def value(self, rel_ret, n_ret, n_rel):
        return safe_divide(rel_ret, np.minimum(n_ret, n_rel))


@register(aliases=("set_map",))
@dataclass(frozen=True, kw_only=True)
class SetAP(SetMeasure):
    """Set map (trec_eval ``set_map``): unranked average precision, SetP x recall.

    SetAP = num_rel_ret^2 / (num_ret R), 0 when num_ret = 0 or R = 0: every relevant
    document retrieved counts the set's precision, every one missed 0. A product of two
    non-negative factors that both rise with the unknown documents retrieved made relevant
    (the first does not read R, the second falls with R alone), so its bounds are at the same
    ends as theirs.

    Parameters
    ----------
    rel : int or float
        Relevance level (trec_eval ``-l``), default 1; any number > 0 on real-valued grades.

    References
    ----------
    trec_eval 10.0, ``m_set_map.c`` (formerly ``exact_unranked_avg_prec``).
    """

    name = "SetAP"
    formula = "SetAP = num_rel_ret^2 / (num_ret R)"
    reference = "trec_eval 10.0 set_map (m_set_map.c)"

    def value(self, rel_ret, n_ret, n_rel):
        return safe_divide(rel_ret * rel_ret, n_ret * n_rel)


@register(aliases=("set_F",))
@dataclass(frozen=True, kw_only=True)
class SetF(SetMeasure):
    """Set F measure (trec_eval ``set_F``): a weighted harmonic mean of set precision and
    set recall.

    SetF = (beta + 1) P rec / (beta P + rec), P = SetP and rec the recall of the whole
    list), 0 when no relevant document is retrieved. As in trec_eval, ``beta`` enters as it
    is, not squared: it is the beta^2 of van Rijsbergen's F_beta = (1 + beta^2) P rec /
    (beta^2 P + rec), so ``SetF(beta=4)`` is F_2. beta = 1 is the harmonic mean F1, beta = 0
    is P, and a larger beta weighs recall more.

    Per topic it equals (beta + 1) num_rel_ret / (num_ret + beta R), which rises with the
    unknown documents retrieved made relevant (as num_ret + beta (R - num_rel_ret) > 0) and
    falls with those elsewhere: its bounds are at those ends.

    Parameters
    ----------
    beta : float
        trec_eval's parameter x (``-m set_F.x``), a number >= 0; default 1.
    rel : int or float
        Relevance level (trec_eval ``-l``), default 1; any number > 0 on real-valued grades.

    References
    ----------
    trec_eval 10.0, ``m_set_F.c``; van Rijsbergen, Information Retrieval, 2nd ed.,
    Butterworths, 1979, ch. 7.
    """

    beta: float = 1.0
    name = "SetF"
    formula = (
        "SetF = (beta + 1) P rec / (beta P + rec), P = num_rel_ret/num_ret, rec = num_rel_ret/R"
    )
    reference = "trec_eval 10.0 set_F (m_set_F.c); van Rijsbergen, Information Retrieval, 1979"
    _constraints: ClassVar[dict] = {
        "beta": Described(Interval(Real, 0, MAX_PARAMETER), "a number in [0, 1e12]")
    }

    def _validate(self) -> None:
        # one name for beta=1 and beta=1.0
        object.__setattr__(self, "beta", float(self.beta))

    def value(self, rel_ret, n_ret, n_rel):
        x = self.beta

        def f():  # trec_eval's own arithmetic, from P and R
            p, r = rel_ret / n_ret, rel_ret / n_rel
            return (x + 1.0) * p * r / (x * p + r)

        return _where_positive(rel_ret > 0, f)


@register(aliases=("utility",))
@dataclass(frozen=True, kw_only=True)
class Utility(BinaryMeasure):
    """Set utility (trec_eval ``utility``): a weighted sum of the contingency table of the
    retrieved set.

    Utility = a rel_ret + b (ret - rel_ret) + c (R - rel_ret) + d (N + rel_ret - ret - R):
    a for each relevant document retrieved, b for each non-relevant one retrieved, c for each
    relevant one missed and d for each non-relevant one not retrieved, with rel_ret =
    num_rel_ret, ret = num_ret and N the documents of the collection (trec_eval ``-N``; the
    qrels and runs do not tell it, so with d != 0 it must be given). The default, a = 1,
    b = -1, is the TREC filtering tracks' linear utility. The mean over topics is trec_eval's
    summary too.

    A topic the run did not answer scores as under trec_eval ``-c``, which ranks one
    document outside the qrels for it: 0 with the default weights (trec_eval's ``-m utility``
    sets it to 0), else the utility of that list of one non-relevant document, b + c R +
    d (N - 1 - R), or of an empty list for the condensed variant (``-J`` drops the
    document), c R + d (N - R).

    Its bounds: each unknown document retrieved made relevant adds a - b, each unknown one
    elsewhere c - d, so the highest value makes relevant those whose term is positive and
    the lowest those whose term is negative.

    Parameters
    ----------
    a : float
        Worth of each relevant document retrieved, default 1 (trec_eval
        ``-m utility.a,b,c,d``, its first weight).
    b : float
        Worth of each non-relevant document retrieved, default -1.
    c : float
        Worth of each relevant document not retrieved, default 0.
    d : float
        Worth of each non-relevant document not retrieved, default 0.
    num_docs : int
        N, the documents in the collection (trec_eval ``-N``), default 0.
    rel : int or float
        Relevance level (trec_eval ``-l``), default 1; any number > 0 on real-valued grades.

    References
    ----------
    trec_eval 10.0, ``m_utility.c``; Hull & Robertson, "The TREC-8 filtering track final
    report", TREC 1999.
    """

    a: float = 1.0
    b: float = -1.0
    c: float = 0.0
    d: float = 0.0
    num_docs: int = 0
    name = "Utility"
    order_free = True
    bounds = _ANY
    formula = (
        "Utility = a rel_ret + b (ret - rel_ret) + c (R - rel_ret) + d (N + rel_ret - ret - R)"
    )
    reference = "trec_eval 10.0 utility (m_utility.c); Hull & Robertson, TREC-8 filtering, 1999"
    _constraints: ClassVar[dict] = {
        **{
            w: Described(Interval(Real, -MAX_PARAMETER, MAX_PARAMETER), "a number in [-1e12, 1e12]")
            for w in "abcd"
        },
        "num_docs": Described(Interval(Integral, 0, MAX_DOCS)),
    }

    def _validate(self) -> None:
        # one name however the weights were written (1 or 1.0)
        for w in "abcd":
            object.__setattr__(self, w, float(getattr(self, w)))

    def _utility(self, tensor, rel_ret, n_ret, n_rel) -> np.ndarray:
        # trec_eval -c ranks one document outside the qrels for a topic without results (none
        # is left of it under -J), and sets the utility of such a topic to 0 when asked for
        # by its bare name, with the default weights
        n_ret = np.where(tensor.answered, n_ret, 0.0 if self.judged_only else 1.0)
        value = (
            self.a * rel_ret
            + self.b * (n_ret - rel_ret)
            + self.c * (n_rel - rel_ret)
            + self.d * (float(self.num_docs) + rel_ret - n_ret - n_rel)
        )
        if (self.a, self.b, self.c, self.d) == DEFAULT_WEIGHTS:
            return np.where(tensor.answered, value, 0.0)
        return value

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        return self._utility(tensor, *set_counts(tensor, self.rel))

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        rel_ret, n_ret, n_rel = set_counts(tensor, self.rel)
        listed, elsewhere = unknown_set(tensor, self.rel)
        # s unknown retrieved documents made relevant add s (a - b), e elsewhere e (c - d)
        pick = np.greater if side == "hi" else np.less
        s = np.where(pick(self.a - self.b, 0.0), listed, 0.0)
        e = np.where(pick(self.c - self.d, 0.0), elsewhere, 0.0)
        return self._utility(tensor, rel_ret + s, n_ret, n_rel + s + e)


@register(aliases=("num_nonrel_judged_ret",))
@dataclass(frozen=True, kw_only=True)
class NumNonrelJudgedRet(BinaryMeasure):
    """Judged non-relevant documents retrieved (trec_eval ``num_nonrel_judged_ret``).

    NumNonrelJudgedRet = |{retrieved d : 0 <= grade(d) < rel}|: the retrieved documents
    with a judgment (grade >= 0), less the relevant ones. Documents outside the qrels and
    pooled but unjudged ones (negative grade) are not counted. trec_eval's summary line is
    its sum over the topics, not its mean.

    Its bounds: every unknown document retrieved gets a grade under any assignment, and
    counts unless it is made relevant; the least value makes them all relevant (the value
    itself) and the greatest none. (When no grade reaches ``rel``, every assignment counts
    them all; the lower bound stays the value, which the unknown documents do not enter.)

    Parameters
    ----------
    rel : int or float
        Relevance level (trec_eval ``-l``), default 1; any number > 0 on real-valued grades.

    References
    ----------
    trec_eval 10.0, ``m_num_nonrel_judged_ret.c``.
    """

    name = "NumNonrelJudgedRet"
    order_free = True
    summed_by_trec_eval = True
    bounds = _COUNT
    formula = "|{retrieved d : 0 <= grade(d) < rel}|"
    reference = "trec_eval 10.0 num_nonrel_judged_ret (m_num_nonrel_judged_ret.c)"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        rel_ret, _, _ = set_counts(tensor, self.rel)
        return judged_retrieved(tensor) - rel_ret

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        value = self._compute(tensor)
        if side == "lo":
            return value
        # every unknown document retrieved judged non-relevant
        return value + (tensor.lengths - judged_retrieved(tensor))
