"""Expected values of measures under a product distribution over relevance.

An :class:`Expectation` gives the expected value of a measure, and its gradient, when every
rank's relevance (binary) or grade (graded) is an independent random variable; the
maximum-entropy solver (:mod:`metaeval.meta.maxent.solver`) only needs that interface.
:func:`expectation_for` is the one map from a metaeval measure (or a measure name, read by
:func:`metaeval.measures.parse_measure`) to its expectation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metaeval._validation import check_int, check_optional_int
from metaeval.measures import (
    AP,
    GAP,
    RR,
    Measure,
    P,
    Rprec,
    log2_discount,
    nDCG,
    parse_measure,
    ranks,
)
from metaeval.meta.maxent._arrays import _as_binary, _as_graded, _rev_cumsum, _shift_right

__all__ = [
    "NoExpectationError",
    "Expectation",
    "PrecisionAt",
    "RPrecision",
    "ReciprocalRank",
    "AveragePrecision",
    "BinaryNDCG",
    "GradedNDCG",
    "GradedAP",
    "expectation_for",
]


class NoExpectationError(ValueError):
    """A measure (or a form of it) that has no maximum-entropy expectation."""


class Expectation:
    """Expected value of a measure under a product distribution over relevance.

    A measure opts in to the maximum-entropy method by providing an object with this
    interface (subclassing is convenient but not required; the solver only uses the
    attributes and methods below).

    Attributes
    ----------
    name : str
        Printable name, e.g. ``"AP"``.
    graded : bool
        ``False``: ``value``/``grad`` take binary ``p`` of shape ``(..., N)`` and
        ``n_relevant`` broadcastable to ``p.shape[:-1]``.  ``True``: they take ``P`` of shape
        ``(..., N, G+1)`` and ``n_relevant`` of shape ``(..., G)`` (counts of grades 1..G).
    is_linear : bool
        ``True`` when the expectation is linear (affine) in ``p``; the solver then uses the
        exact convex dual.
    threshold : int or None
        Binary expectations: the relevance level at which a graded list is made binary
        (``grade >= threshold`` is relevant), the ``rel`` of the measure they come from.
        ``None`` for graded ones.

    Methods
    -------
    value(p, n_relevant) -> ndarray of shape ``p.shape[:-1]`` (graded: ``P.shape[:-2]``)
    grad(p, n_relevant) -> ndarray shaped like ``p``: partial derivatives treating every
        entry as free (graded: with respect to every ``P_ij``, including grade 0).
    extreme(side, counts, length, n_relevant, n) -> optional; the maximum-entropy point of
        the face on which the expectation attains its maximum (``side="max"``) or minimum
        over the feasible set.  See :meth:`Expectation.extreme`.
    """

    name: str = "measure"
    graded: bool = False
    is_linear: bool = False

    @property
    def threshold(self) -> int | None:
        """The relevance level of a binary expectation (``rel``, default 1); None if graded."""
        return None if self.graded else int(getattr(self, "rel", 1))

    def value(self, p: Any, n_relevant: Any) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def grad(self, p: Any, n_relevant: Any) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- boundary -----------------------------------------------------------------------
    def _cutoff(self, n_relevant: np.ndarray, length: np.ndarray) -> np.ndarray | None:
        """Per-list rank beyond which the measure ignores the list (None: no cutoff)."""
        return None

    def _grade_order(self, G: int, side: str) -> np.ndarray:
        """Order in which grades fill the top ranks at the maximum (reversed at the minimum)."""
        order = np.arange(G, -1, -1)  # highest grade first
        return order if side == "max" else order[::-1]

    def extreme(
        self,
        side: str,
        counts: np.ndarray,
        length: np.ndarray,
        n_relevant: np.ndarray,
        n: int,
    ) -> np.ndarray:
        """Maximum-entropy distribution on the optimal face of the feasible set.

        Parameters
        ----------
        side : {"max", "min"}
        counts : ndarray, shape (B, G)
            Expected number of documents of grades 1..G in the list (the sum constraint).
        length : ndarray, shape (B,)
            List lengths.
        n_relevant : ndarray
            As for :meth:`value`, with leading batch dimension ``B``.
        n : int
            Padded list length (``>= length.max()``).

        Returns
        -------
        ndarray, shape (B, n, G+1)
            Grades fill the ranks above the measure's cutoff in order (highest grade first
            at the maximum, grade 0 first at the minimum); what is left of each grade is
            spread uniformly over the ranks below the cutoff, which the measure does not
            see, which is the maximum-entropy choice there.  Subclasses override this when
            their optimal face differs (e.g. reciprocal rank).
        """
        cut = self._cutoff(n_relevant, length)
        return _packed(
            counts,
            length,
            n,
            self._grade_order(counts.shape[-1], side),
            cut,
            flat=getattr(self, "_flat_top", False),
        )


def _packed(
    counts: np.ndarray,
    length: np.ndarray,
    n: int,
    order: np.ndarray,
    cutoff: np.ndarray | None,
    flat: bool = False,
) -> np.ndarray:
    """Fill ranks ``< cutoff`` with grades in ``order``; spread the rest uniformly below.

    ``counts`` (B, G) are the counts of grades 1..G; grade 0 gets ``length - sum counts``.
    Fractional counts give fractional ranks (one rank per boundary).  ``flat``: the
    measure does not distinguish the ranks above the cutoff either (P@k, R-prec), so what
    is placed there is spread uniformly too.
    """
    B, G = counts.shape
    full = np.concatenate([(length - counts.sum(-1))[:, None], counts], axis=1)  # (B, G+1)
    full = np.maximum(full, 0.0)
    length = length.astype(float)
    cut = length if cutoff is None else np.minimum(np.asarray(cutoff, float), length)
    ordered = full[:, order]  # (B, G+1)
    hi = np.cumsum(ordered, axis=1)
    lo = hi - ordered
    i = np.arange(n, dtype=float)[None, :, None]  # (1, n, 1)
    top_hi = np.minimum(i + 1, cut[:, None, None])
    frac = np.clip(np.minimum(top_hi, hi[:, None, :]) - np.maximum(i, lo[:, None, :]), 0, 1)
    # amount of each grade placed above the cutoff
    placed = np.clip(np.minimum(cut[:, None], hi) - lo, 0, None)  # (B, G+1)
    tail_n = np.maximum(length - cut, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(tail_n[:, None] > 0, (ordered - placed) / tail_n[:, None], 0.0)
    in_tail = (i[..., 0] >= cut[:, None]) & (i[..., 0] < length[:, None])  # (B, n)
    frac = np.where(in_tail[..., None], share[:, None, :], frac)
    if flat:
        with np.errstate(invalid="ignore", divide="ignore"):
            top_share = np.where(cut[:, None] > 0, placed / cut[:, None], 0.0)
        in_top = i[..., 0] < cut[:, None]
        frac = np.where(in_top[..., None], top_share[:, None, :], frac)
    P = np.zeros((B, n, G + 1))
    P[:, :, order] = frac
    beyond = i[..., 0] >= length[:, None]
    P[beyond] = 0.0
    P[..., 0][beyond] = 1.0
    return P


# ---------------------------------------------------------------------------------------
# binary expectations
# ---------------------------------------------------------------------------------------


def _check_rel(exp) -> None:
    object.__setattr__(exp, "rel", check_int("rel", exp.rel, min=1))


@dataclass(frozen=True)
class PrecisionAt(Expectation):
    r"""Expected precision at cutoff ``k``: :math:`E[P@k] = \frac1k \sum_{i\le k} p_i`.

    The denominator is ``k`` even for lists shorter than ``k`` (trec_eval).
    ``rel`` is the relevance level the list is made binary at (``grade >= rel``); it does not
    enter ``value`` or ``grad``, so expectations that differ only in ``rel`` compare equal.
    """

    k: int = 10
    rel: int = field(default=1, compare=False)
    name: str = field(default="P@k", init=False)
    graded = False
    is_linear = True
    _flat_top = True

    def __post_init__(self):
        object.__setattr__(self, "k", check_int("k", self.k, min=1))
        _check_rel(self)
        object.__setattr__(self, "name", f"P@{int(self.k)}")

    def value(self, p, n_relevant=None):
        p = _as_binary(p)
        return p[..., : self.k].sum(-1) / self.k

    def grad(self, p, n_relevant=None):
        p = _as_binary(p)
        g = np.zeros_like(p)
        g[..., : self.k] = 1.0 / self.k
        return g

    def _cutoff(self, n_relevant, length):
        return np.full(length.shape, float(self.k))


@dataclass(frozen=True)
class RPrecision(Expectation):
    r"""Expected R-precision: :math:`E[RP] = \frac1R \sum_{i\le R} p_i`.

    ``rel`` is the relevance level the list is made binary at (``grade >= rel``); it does not
    enter ``value`` or ``grad``, so expectations that differ only in ``rel`` compare equal.
    """

    rel: int = field(default=1, compare=False)
    name: str = field(default="Rprec", init=False)
    graded = False
    is_linear = True
    _flat_top = True

    def __post_init__(self):
        _check_rel(self)

    def _mask(self, p, R):
        R = np.asarray(R, dtype=float)
        if np.any(R <= 0):
            raise ValueError("n_relevant must be positive for R-precision")
        return (ranks(p.shape[-1]) <= R[..., None]) / R[..., None]

    def value(self, p, n_relevant):
        p = _as_binary(p)
        return (p * self._mask(p, n_relevant)).sum(-1)

    def grad(self, p, n_relevant):
        p = _as_binary(p)
        return np.broadcast_to(self._mask(p, n_relevant), p.shape).copy()

    def _cutoff(self, n_relevant, length):
        return np.broadcast_to(np.asarray(n_relevant, float), length.shape).copy()


@dataclass(frozen=True)
class ReciprocalRank(Expectation):
    r"""Expected reciprocal rank.

    .. math:: E[RR] = \sum_i \frac{p_i}{i} \prod_{j<i} (1 - p_j)

    Gradient: :math:`\partial E/\partial p_k = Q_k (1/k - T_k)` with
    :math:`Q_k = \prod_{j<k}(1-p_j)` and :math:`T_k = \sum_{i>k} \frac{p_i}{i}
    \prod_{k<j<i}(1-p_j)`, computed by the stable backward recursion
    :math:`T_{k} = p_{k+1}/(k+1) + (1-p_{k+1}) T_{k+1}` (a log-space product would
    underflow for long lists).

    ``rel`` is the relevance level the list is made binary at (``grade >= rel``); it does not
    enter ``value`` or ``grad``, so expectations that differ only in ``rel`` compare equal.
    """

    rel: int = field(default=1, compare=False)
    name: str = field(default="RR", init=False)
    graded = False
    is_linear = False

    def __post_init__(self):
        _check_rel(self)

    def value(self, p, n_relevant=None):
        p = _as_binary(p)
        Q = np.cumprod(1.0 - p, axis=-1)
        Q = np.concatenate([np.ones(p.shape[:-1] + (1,)), Q[..., :-1]], axis=-1)
        return (p * Q / ranks(p.shape[-1])).sum(-1)

    def grad(self, p, n_relevant=None):
        p = _as_binary(p)
        n = p.shape[-1]
        r = ranks(n)
        Q = np.cumprod(1.0 - p, axis=-1)
        Q = np.concatenate([np.ones(p.shape[:-1] + (1,)), Q[..., :-1]], axis=-1)
        T = np.zeros_like(p)
        t = np.zeros(p.shape[:-1])
        for k in range(n - 2, -1, -1):
            t = p[..., k + 1] / r[k + 1] + (1.0 - p[..., k + 1]) * t
            T[..., k] = t
        return Q * (1.0 / r - T)

    def extreme(self, side, counts, length, n_relevant, n):
        if side == "min":
            return super().extreme(side, counts, length, n_relevant, n)
        # E[RR] = 1 needs p_1 = 1 only; the rest of the mass is unconstrained and so is
        # spread uniformly (maximum entropy on the face).
        return _packed(counts, length, n, np.array([1, 0]), np.ones(length.shape))


@dataclass(frozen=True)
class AveragePrecision(Expectation):
    r"""Expected average precision (Aslam, Yilmaz, Pavlu 2005).

    .. math:: E[AP] = \frac1R \sum_{i=1}^{N} \frac{p_i}{i}\Big(1 + \sum_{j<i} p_j\Big)

    exact because :math:`x_i^2 = x_i` and ranks are independent.  Gradient:

    .. math:: \frac{\partial E}{\partial p_k} = \frac1R\Big[\frac{1 + S_{k-1}}{k}
              + \sum_{i>k} \frac{p_i}{i}\Big],\quad S_{k} = \sum_{j\le k} p_j .

    ``rel`` is the relevance level the list is made binary at (``grade >= rel``); it does not
    enter ``value`` or ``grad``, so expectations that differ only in ``rel`` compare equal.
    """

    rel: int = field(default=1, compare=False)
    name: str = field(default="AP", init=False)
    graded = False
    is_linear = False

    def __post_init__(self):
        _check_rel(self)

    @staticmethod
    def _R(n_relevant):
        R = np.asarray(n_relevant, dtype=float)
        if np.any(R <= 0):
            raise ValueError("n_relevant must be positive for AP")
        return R

    def value(self, p, n_relevant):
        p = _as_binary(p)
        R = self._R(n_relevant)
        S = _shift_right(np.cumsum(p, axis=-1))
        return (p / ranks(p.shape[-1]) * (1.0 + S)).sum(-1) / R

    def grad(self, p, n_relevant):
        p = _as_binary(p)
        R = self._R(n_relevant)
        r = ranks(p.shape[-1])
        S = _shift_right(np.cumsum(p, axis=-1))
        after = _rev_cumsum(p / r) - p / r
        return ((1.0 + S) / r + after) / R[..., None]


@dataclass(frozen=True)
class BinaryNDCG(Expectation):
    r"""Expected binary nDCG (trec_eval discount, gain 1 for relevant).

    .. math:: E[nDCG@k] = \frac{\sum_{i\le k} p_i / \log_2(i+1)}{\sum_{i\le \min(R,k)}
              1/\log_2(i+1)}

    linear in ``p``; the ideal list holds the ``R`` relevant documents (``k=None``: no cutoff).

    ``rel`` is the relevance level the list is made binary at (``grade >= rel``); it does not
    enter ``value`` or ``grad``, so expectations that differ only in ``rel`` compare equal.
    """

    k: int | None = None
    rel: int = field(default=1, compare=False)
    name: str = field(default="nDCG", init=False)
    graded = False
    is_linear = True

    def __post_init__(self):
        object.__setattr__(self, "k", check_optional_int("k", self.k, min=1))
        _check_rel(self)
        object.__setattr__(self, "name", "nDCG" if self.k is None else f"nDCG@{int(self.k)}")

    def _coef(self, n, R):
        R = np.asarray(R, dtype=float)
        kk = n if self.k is None else self.k
        d = log2_discount(n)
        d[kk:] = 0.0
        nmax = int(max(np.max(R, initial=0), 1))
        cum = np.concatenate([[0.0], np.cumsum(log2_discount(max(nmax, 1)))])
        Ri = np.minimum(R, kk if self.k is not None else np.inf).astype(int)
        ideal = cum[Ri]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(ideal[..., None] > 0, d / ideal[..., None], 0.0)

    def value(self, p, n_relevant):
        p = _as_binary(p)
        return (p * self._coef(p.shape[-1], n_relevant)).sum(-1)

    def grad(self, p, n_relevant):
        p = _as_binary(p)
        return np.broadcast_to(self._coef(p.shape[-1], n_relevant), p.shape).copy()

    def _cutoff(self, n_relevant, length):
        return None if self.k is None else np.full(length.shape, float(self.k))


# ---------------------------------------------------------------------------------------
# graded expectations
# ---------------------------------------------------------------------------------------


def _check_counts(P, n_relevant):
    R = np.asarray(n_relevant, dtype=float)
    G = P.shape[-1] - 1
    if R.shape[-1:] != (G,):
        raise ValueError(
            f"n_relevant must have a last dimension of {G} (counts of grades 1..{G}), "
            f"got shape {R.shape}"
        )
    if np.any(R < 0):
        raise ValueError("n_relevant must be non-negative")
    return R


@dataclass(frozen=True)
class GradedNDCG(Expectation):
    r"""Expected graded nDCG (trec_eval ``ndcg``): linear in ``P``.

    .. math:: E[nDCG@k] = \frac{\sum_{i\le k} \sum_j P_{ij}\, gain_j / \log_2(i+1)}{IDCG@k}

    ``gains`` maps grade ``j`` to its gain (default: the grade itself); the ideal DCG is
    computed from the per-grade counts ``n_relevant = (R_1..R_G)`` sorted by gain (only
    grades with positive gain count, as in trec_eval), cut at ``k``.
    """

    k: int | None = None
    gains: tuple | None = None
    name: str = field(default="nDCG", init=False)
    graded = True
    is_linear = True

    def __post_init__(self):
        object.__setattr__(self, "k", check_optional_int("k", self.k, min=1))
        if self.gains is not None:
            object.__setattr__(self, "gains", tuple(float(x) for x in self.gains))
        object.__setattr__(self, "name", "nDCG" if self.k is None else f"nDCG@{int(self.k)}")

    def _gain(self, G):
        if self.gains is None:
            return np.arange(G + 1, dtype=float)
        if len(self.gains) != G + 1:
            raise ValueError(f"gains must have one entry per grade 0..{G}, got {self.gains}")
        return np.asarray(self.gains)

    def _ideal(self, R, G):
        gain = self._gain(G)
        total = int(np.max(R.sum(-1), initial=0)) + 1
        kk = np.inf if self.k is None else self.k
        cum = np.concatenate([[0.0], np.cumsum(log2_discount(total))])
        order = np.argsort(-gain[1:], kind="stable")
        start = np.zeros(R.shape[:-1])
        ideal = np.zeros(R.shape[:-1])
        for j in order:
            if gain[j + 1] <= 0:
                continue
            end = start + R[..., j]
            a = np.minimum(start, kk).astype(int)
            b = np.minimum(end, kk).astype(int)
            ideal = ideal + gain[j + 1] * (cum[b] - cum[a])
            start = end
        return ideal

    def _coef(self, P, n_relevant):
        R = _check_counts(P, n_relevant)
        n, G = P.shape[-2], P.shape[-1] - 1
        d = log2_discount(n)
        if self.k is not None:
            d[self.k :] = 0.0
        ideal = self._ideal(R, G)
        a = d[:, None] * self._gain(G)[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(ideal[..., None, None] > 0, a / ideal[..., None, None], 0.0)

    def value(self, P, n_relevant):
        P = _as_graded(P)
        return (P * self._coef(P, n_relevant)).sum((-2, -1))

    def grad(self, P, n_relevant):
        P = _as_graded(P)
        return np.broadcast_to(self._coef(P, n_relevant), P.shape).copy()

    def _grade_order(self, G, side):
        order = np.argsort(-self._gain(G), kind="stable")
        return order if side == "max" else order[::-1]

    def _cutoff(self, n_relevant, length):
        return None if self.k is None else np.full(length.shape, float(self.k))


@dataclass(frozen=True)
class GradedAP(Expectation):
    r"""Expected graded average precision, GAP (Robertson, Kanoulas, Yilmaz 2010).

    With threshold probabilities ``g_t`` over grades ``1..G`` and ``G(j) = sum_{t<=j} g_t``
    (docs/methods.md §6.4)::

        GAP = [sum_{n: i_n>0} (1/n) sum_{m<=n} G(min(i_m, i_n))] / [sum_j R_j G(j)]

    Because ``G(min(a, b)) = sum_t g_t [a >= t][b >= t]``, independence across ranks gives,
    with ``c_{n,t} = P(grade at rank n >= t) = sum_{a>=t} P_{n,a}``,

    .. math:: E[\mathrm{GAP}] = \frac{\sum_t g_t \sum_n \frac{c_{n,t}}{n}
              \big(1 + \sum_{m<n} c_{m,t}\big)}{\sum_t g_t R^{(t)}},\qquad
              R^{(t)} = \sum_{j\ge t} R_j ,

    which is the expansion ``E[delta_{m,n}] = sum_{a,b} p_{m,a} p_{n,b} G(min(a,b))``
    (``m != n``) and ``sum_a p_{n,a} G(a)`` (``m = n``) summed by linearity, regrouped per
    threshold: the numerator is a ``g``-weighted sum of expected binary AP numerators.
    Gradient: :math:`\partial E/\partial P_{k,a} = \sum_{t\le a} g_t h_{k,t} / D` with
    :math:`h_{k,t} = (1 + C_{k-1,t})/k + \sum_{i>k} c_{i,t}/i`.

    ``g=None`` means uniform over the grades of ``P`` (docs/methods.md §0).
    """

    g: tuple | None = None
    name: str = field(default="GAP", init=False)
    graded = True
    is_linear = False

    def __post_init__(self):
        if self.g is not None:
            g = tuple(float(x) for x in self.g)
            if len(g) == 0 or any(x < 0 for x in g) or not math.isclose(sum(g), 1.0, abs_tol=1e-9):
                raise ValueError(f"g must be non-negative and sum to 1, got {self.g!r}")
            object.__setattr__(self, "g", g)
            object.__setattr__(self, "name", "GAP(g=(" + ",".join(f"{x:g}" for x in g) + "))")

    def _g(self, G):
        if self.g is None:
            return np.full(G, 1.0 / G)
        if len(self.g) != G:
            raise ValueError(f"g has {len(self.g)} entries but the list has {G} grades above 0")
        return np.asarray(self.g)

    def _parts(self, P, n_relevant):
        R = _check_counts(P, n_relevant)
        G = P.shape[-1] - 1
        g = self._g(G)
        c = _rev_cumsum(P, axis=-1)[..., 1:]  # (..., N, G): P(grade >= t), t = 1..G
        Rt = _rev_cumsum(R, axis=-1)  # R^(t)
        D = (Rt * g).sum(-1)
        if np.any(D <= 0):
            raise ValueError("GAP needs at least one relevant document with g > 0 weight")
        return c, g, D

    def value(self, P, n_relevant):
        P = _as_graded(P)
        c, g, D = self._parts(P, n_relevant)
        r = ranks(P.shape[-2])[:, None]
        C = _shift_right(np.cumsum(c, axis=-2), axis=-2)
        num = (c / r * (1.0 + C)).sum(-2)  # (..., G)
        return (num * g).sum(-1) / D

    def grad(self, P, n_relevant):
        P = _as_graded(P)
        c, g, D = self._parts(P, n_relevant)
        r = ranks(P.shape[-2])[:, None]
        C = _shift_right(np.cumsum(c, axis=-2), axis=-2)
        h = (1.0 + C) / r + _rev_cumsum(c / r, axis=-2) - c / r  # (..., N, G)
        gh = np.cumsum(h * g, axis=-1) / D[..., None, None]
        return np.concatenate([np.zeros(gh.shape[:-1] + (1,)), gh], axis=-1)


# ---------------------------------------------------------------------------------------
# the one map from a metaeval measure to its expectation
# ---------------------------------------------------------------------------------------

SUPPORTED = (
    "AP, P@k, Rprec, RR, nDCG[@k] (log2 discount), GAP, or a measure with an expectation() method"
)


def expectation_for(
    measure: Any, n_grades: int | None = None, *, graded: bool | None = None
) -> Expectation:
    """The maximum-entropy expectation of a measure, with the relevance level it is scored at.

    This is the one map from metaeval measures to expectations: the informativeness criterion
    and :func:`~metaeval.meta.maxent.maxent_distribution` both use it.  The expectation of a
    list whose relevance is certain (0/1, or one grade per rank) is the measure's own score
    of that list.

    Parameters
    ----------
    measure : str, Measure or Expectation
        A measure name, read by :func:`metaeval.measures.parse_measure` (``"AP"``,
        ``"P(rel=2)@10"``, ``"nDCG(gains={1:1,2:3})@10"``, ``"GAP(g=(0.2,0.8))"``, ...), or
        the parsed :class:`~metaeval.measures.Measure`.  Supported: AP, P@k, Rprec and RR
        (binary, at the measure's ``rel``), nDCG[@k] with the log2 discount and any gains,
        and GAP.  A measure object with an ``expectation()`` method (a plugin) gives that
        method's result, and an object that already has the :class:`Expectation` interface
        (``value``, ``grad``, ``graded``, ``is_linear``) is returned unchanged, which is how
        a user-defined expectation opts in.
    n_grades : int, optional
        Number of grades of the qrels (grades ``0 .. n_grades-1``, as
        :attr:`metaeval.engine.EvalTensor.n_grades`).  nDCG's gains depend on it (``gain=exp``,
        ``gains={...}``); a binary measure's ``rel`` must not exceed the highest grade; GAP's
        ``g`` must give one probability per grade.  ``None``: relevance is taken as binary
        (nDCG becomes :class:`BinaryNDCG`) and nothing is checked against the qrels.
    graded : bool, optional
        nDCG only: ``True`` asks for the graded expectation (:class:`GradedNDCG`), ``False``
        for the binary one.  By default nDCG is graded exactly when ``n_grades > 2``.  (On
        binary relevance the two agree: :class:`BinaryNDCG` is :class:`GradedNDCG` with one
        grade, in the binary ``p`` representation.)

    Returns
    -------
    Expectation
        Binary expectations carry the measure's relevance level in ``threshold`` (and
        ``rel``); graded ones have ``threshold`` None.

    Raises
    ------
    ValueError
        For a name :func:`~metaeval.measures.parse_measure` rejects, a measure without an
        expectation (e.g. bpref, ERR), a condensed (``'``) variant, AP or RR with a cutoff,
        nDCG with the ``jk`` discount or a positive gain for grade 0, a ``rel`` above the
        highest grade, or a GAP ``g`` that does not match the grades.
    TypeError
        For anything else than a string, a Measure or an expectation.
    """
    if isinstance(measure, Expectation) or (
        not isinstance(measure, (str, Measure))
        and all(hasattr(measure, a) for a in ("value", "grad", "graded", "is_linear"))
    ):
        return measure
    if isinstance(measure, str):
        m = parse_measure(measure)
    elif isinstance(measure, Measure):
        m = measure
    elif hasattr(measure, "expectation"):
        return measure.expectation()
    else:
        raise TypeError(
            "measure must be a measure name, a metaeval Measure or an Expectation, "
            f"got {type(measure).__name__}"
        )
    if n_grades is not None:
        n_grades = check_int("n_grades", n_grades, min=2)
    if graded is not None and not isinstance(graded, bool):
        raise TypeError(f"graded must be True, False or None, got {graded!r}")
    if m.judged_only:
        raise NoExpectationError(
            f"{m}: condensed-list measures have no maximum-entropy expectation"
        )
    if hasattr(m, "expectation"):
        return m.expectation()
    kind = type(m)
    if kind in (AP, P, Rprec, RR):
        return _binary_expectation(m, n_grades, graded)
    if kind is nDCG:
        return _ndcg_expectation(m, n_grades, graded)
    if kind is GAP:
        return _gap_expectation(m, n_grades, graded)
    given = (
        ""
        if not isinstance(measure, str) or measure.strip() == str(m)
        else f" (given as {measure!r})"
    )
    raise NoExpectationError(
        f"{m}{given} has no maximum-entropy expectation; supported: {SUPPORTED}"
    )


def _binary_expectation(m: Measure, n_grades: int | None, graded: bool | None) -> Expectation:
    if graded:
        raise ValueError(f"{m}: graded=True applies to nDCG; {m.name} is a binary measure")
    if n_grades is not None and m.rel > n_grades - 1:
        raise ValueError(
            f"{m}: rel={m.rel} is above the highest grade in the qrels ({n_grades - 1})"
        )
    kind = type(m)
    if kind in (AP, RR) and m.cutoff is not None:
        raise NoExpectationError(f"{m}: {m.name} with a cutoff has no maximum-entropy expectation")
    if kind is AP:
        return AveragePrecision(rel=m.rel)
    if kind is P:
        return PrecisionAt(k=m.cutoff, rel=m.rel)
    if kind is Rprec:
        return RPrecision(rel=m.rel)
    return ReciprocalRank(rel=m.rel)


def _ndcg_expectation(m: Measure, n_grades: int | None, graded: bool | None) -> Expectation:
    if m.discount != "log2":
        raise ValueError(
            f"{m}: only the log2 discount (trec_eval) has a maximum-entropy expectation"
        )
    if graded is None:
        graded = n_grades is not None and n_grades > 2
    if not graded:
        if n_grades is not None and n_grades > 2:
            raise ValueError(
                f"{m}: graded=False needs binary qrels; these have grades 0..{n_grades - 1}"
            )
        gain = m.gain_values(2)
        _no_gain_at_zero(m, gain)
        if gain[1] <= 0:
            raise ValueError(f"{m}: grade 1 has gain 0, so the measure is 0 on every list")
        # on binary relevance nDCG does not depend on the size of the one positive gain
        return BinaryNDCG(k=m.cutoff)
    if n_grades is None:
        if m.gain != "linear" or m.gains:
            raise ValueError(f"{m}: its gains depend on the qrels' grades; pass n_grades")
        return GradedNDCG(k=m.cutoff)
    gain = m.gain_values(n_grades)
    _no_gain_at_zero(m, gain)
    # the default linear gains are GradedNDCG's own default (gain = grade, any number of grades)
    same = np.array_equal(gain, np.arange(n_grades))
    return GradedNDCG(k=m.cutoff, gains=None if same else tuple(float(x) for x in gain))


def _no_gain_at_zero(m: Measure, gain: np.ndarray) -> None:
    # grade 0 of the max-ent model also holds the unjudged documents, whose gain is 0
    if gain[0] != 0:
        raise ValueError(
            f"{m}: grade 0 has gain {gain[0]:g}; the maximum-entropy model "
            "needs gain 0 for grade 0 (non-relevant and unjudged documents)"
        )


def _gap_expectation(m: Measure, n_grades: int | None, graded: bool | None) -> Expectation:
    if graded is False:
        raise ValueError(f"{m}: GAP is a graded measure; graded=False applies to nDCG")
    if n_grades is not None and m.g is not None:
        m.thresholds(n_grades)  # raises when g is shorter than the grades
        if len(m.g) != n_grades - 1:
            raise ValueError(
                f"{m}: g has {len(m.g)} threshold probabilities but the qrels have "
                f"grades 1..{n_grades - 1}; the maximum-entropy model needs one "
                "per grade"
            )
    return GradedAP(g=m.g)
