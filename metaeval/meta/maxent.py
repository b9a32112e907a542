"""Maximum-entropy reconstruction of relevance distributions from a measure value.

The maximum-entropy method of Aslam, Yilmaz and Pavlu (SIGIR 2005), extended to graded
relevance by Robertson, Kanoulas and Yilmaz (SIGIR 2010), asks: knowing only the value ``v``
of an evaluation measure for a ranked list (and the number of relevant documents), what is
the *least committal* distribution of relevance over the ranks that is consistent with it?
How well that distribution reproduces the list's actual precision-recall curve measures how
*informative* the measure is.

Model
-----
A ranked list of length ``N`` is modelled by a product distribution: ranks are independent.

* Binary: ``p[i] = P(rank i+1 is relevant)``, shape ``(..., N)``.
* Graded: ``P[i, j] = P(rank i+1 has grade j)``, ``j = 0..G``, shape ``(..., N, G+1)``, each
  row on the simplex.

Problem (METHODS.md section 3)::

    maximise   H(P) = -sum_{i,j} P_ij ln P_ij      (binary: -sum p ln p + (1-p) ln(1-p))
    subject to E_P[measure] = v
               sum_i P_ij   = m_j  for every grade j >= 1   (binary: sum_i p_i = m)
               P_ij >= 0, sum_j P_ij = 1

``m_j`` is the number of documents of grade ``j`` the list retrieved (the project default,
METHODS.md section 0) or, optionally, the topic's number of relevant documents ``R_j``.

Solution method
---------------
The Lagrangian stationarity condition gives the exponential-family form::

    P_ij = softmax_j( lambda_j [j >= 1] + lambda_v * a_ij ),   a_ij = dE/dP_ij

(binary: ``p_i = sigmoid(lambda_0 + lambda_v * a_i)``).

* **Linear measures** (P@k, R-prec, nDCG): ``a`` does not depend on ``P`` and the dual
  ``Phi(lambda) = sum_i logsumexp_j z_ij - lambda . target`` is convex and smooth in the
  ``G + 1`` multipliers; it is minimised by a damped Newton method (Armijo backtracking),
  vectorised over a batch of lists.  The solution is exact up to the tolerance.
* **Non-linear measures** (AP, RR, GAP): a fixed point on the linearisation coefficients.
  Given coefficients ``a_t``, the multipliers are found by Newton's method (backtracking on
  the residual norm) such that ``P = softmax(lambda + lambda_v a_t)`` meets the *exact*
  constraints ``E_P[measure] = v`` and the counts; then ``a_{t+1} = grad E(P)``.  A fixed
  point ``a = grad E(P(a))`` satisfies the exact KKT conditions of the original problem
  (stationarity in the exponential-family form, both constraints exact).  This is a
  sequential method in which the Hessian of the Lagrangian is replaced by the dominant,
  diagonal entropy Hessian, so the outer iteration converges linearly; it is damped
  (``w`` halved whenever the change of ``P`` grows), accelerated by Anderson mixing over
  the last three iterates (Walker & Ni 2011), and safeguarded: a step whose family cannot
  meet the constraints is rejected and retried from the last accepted point with half the
  damping.  Convergence is declared on the exact residuals (``tol``) and on the change of
  ``P`` between linearisations (``stationarity_tol``), and reported per list.  While the
  coefficients still move, the inner Newton solve is stopped early (tolerance tied to the
  last change of ``P``); the final iterate is always solved to ``tol``.

Boundary values (e.g. AP equal to its maximum ``m / R``) make the dual diverge; they are
detected before solving and answered exactly by the maximum-entropy point of the optimal
face (``Expectation.extreme``): for AP the perfect list, for P@k = 1 the top ``k`` ranks
certain and the remaining mass spread uniformly, and so on.  Targets outside the achievable
range are flagged ``feasible = False`` (and raise in the single-list call).

References
----------
J. A. Aslam, E. Yilmaz, V. Pavlu. The maximum entropy method for analyzing retrieval
measures. SIGIR 2005.

S. Robertson, E. Kanoulas, E. Yilmaz. Extending average precision to graded relevance
judgments. SIGIR 2010.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metaeval.measures._common import log2_discount, ranks

__all__ = [
    "Expectation",
    "PrecisionAt",
    "RPrecision",
    "ReciprocalRank",
    "AveragePrecision",
    "BinaryNDCG",
    "GradedNDCG",
    "GradedAP",
    "expectation_for",
    "MaxEntResult",
    "maxent_distribution",
    "entropy",
    "inferred_pr_curve",
    "actual_pr_curve",
    "rms_recall_points",
    "rms_interpolated",
    "interpolated_precision",
    "threshold_probabilities",
    "MaxEntConvergenceWarning",
]


class MaxEntConvergenceWarning(RuntimeWarning):
    """Some lists of a maximum-entropy solve did not converge or were infeasible."""


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------


def _as_binary(p: Any) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    if p.ndim < 1:
        raise ValueError(f"p must have at least one dimension (ranks), got shape {p.shape}")
    return p


def _as_graded(P: Any) -> np.ndarray:
    P = np.asarray(P, dtype=float)
    if P.ndim < 2 or P.shape[-1] < 2:
        raise ValueError(
            "P must have shape (..., N, G+1) with at least two grades, " f"got shape {P.shape}"
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


# ---------------------------------------------------------------------------------------
# the Expectation protocol
# ---------------------------------------------------------------------------------------


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
            counts, length, n, self._grade_order(counts.shape[-1], side), cut,
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


@dataclass(frozen=True)
class PrecisionAt(Expectation):
    r"""Expected precision at cutoff ``k``: :math:`E[P@k] = \frac1k \sum_{i\le k} p_i`.

    The denominator is ``k`` even for lists shorter than ``k`` (trec_eval).
    """

    k: int = 10
    name: str = field(default="P@k", init=False)
    graded = False
    is_linear = True
    _flat_top = True

    def __post_init__(self):
        if int(self.k) != self.k or self.k < 1:
            raise ValueError(f"k must be a positive integer, got {self.k!r}")
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
    r"""Expected R-precision: :math:`E[RP] = \frac1R \sum_{i\le R} p_i`."""

    name: str = field(default="Rprec", init=False)
    graded = False
    is_linear = True
    _flat_top = True

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
    """

    name: str = field(default="RR", init=False)
    graded = False
    is_linear = False

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
    """

    name: str = field(default="AP", init=False)
    graded = False
    is_linear = False

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
    """

    k: int | None = None
    name: str = field(default="nDCG", init=False)
    graded = False
    is_linear = True

    def __post_init__(self):
        if self.k is not None and (int(self.k) != self.k or self.k < 1):
            raise ValueError(f"k must be a positive integer or None, got {self.k!r}")
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
        if self.k is not None and (int(self.k) != self.k or self.k < 1):
            raise ValueError(f"k must be a positive integer or None, got {self.k!r}")
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
            d[self.k:] = 0.0
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
    (METHODS.md section 6.4)::

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

    ``g=None`` means uniform over the grades of ``P`` (METHODS.md section 0).
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
# factory
# ---------------------------------------------------------------------------------------

_NAME_RE = re.compile(r"^\s*([A-Za-z_\-]+)\s*(\((.*)\))?\s*(@\s*(\d+))?\s*$")


def _parse_params(text: str) -> dict:
    params: dict = {}
    if not text:
        return params
    # split on commas outside parentheses
    depth, cur, parts = 0, "", []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for part in parts:
        if not part.strip():
            continue
        if "=" not in part:
            raise ValueError(f"measure parameter {part!r} must be written name=value")
        key, val = part.split("=", 1)
        val = val.strip()
        if val.startswith("("):
            params[key.strip()] = tuple(float(x) for x in val.strip("()").split(",") if x.strip())
        else:
            try:
                params[key.strip()] = float(val) if "." in val else int(val)
            except ValueError:
                params[key.strip()] = val
    return params


def expectation_for(measure: Any, **params: Any) -> Expectation:
    """Return the expectation object for a measure name, measure object or expectation.

    Parameters
    ----------
    measure : str or object
        A name: ``"AP"``, ``"P@k"`` (e.g. ``"P@10"``), ``"Rprec"`` (also ``"R-prec"``,
        ``"RP"``), ``"RR"``, ``"nDCG"``, ``"nDCG@k"`` (binary); ``"nDCG"`` with
        ``graded=True``, ``"GAP"``, ``"GAP(g=(0.5,0.5))"`` (graded).  Or an object that
        already provides the :class:`Expectation` interface (``value``, ``grad``,
        ``graded``, ``is_linear``) -- it is returned unchanged, which is how a user-defined
        measure opts in.  Or a measure object with an ``expectation()`` method, whose result
        is used.  Or any object whose ``str()`` is one of the names above.
    **params
        Measure parameters overriding those in the name: ``k``, ``g``, ``gains``, and
        ``graded`` (bool, selects graded nDCG).

    Raises
    ------
    ValueError
        When the name is unknown or has no expectation.
    """
    if isinstance(measure, Expectation) or (
        not isinstance(measure, str)
        and all(hasattr(measure, a) for a in ("value", "grad", "graded", "is_linear"))
    ):
        return measure
    if not isinstance(measure, str) and hasattr(measure, "expectation"):
        return measure.expectation()
    if not isinstance(measure, str):
        mapped = _from_metaeval_measure(measure)
        if mapped is not None:
            return mapped
    name = str(measure)
    m = _NAME_RE.match(name)
    if m is None:
        raise ValueError(f"measure {name!r} is not a measure name with an expectation")
    base = m.group(1)
    kw = _parse_params(m.group(3) or "")
    if m.group(5) is not None:
        kw["k"] = int(m.group(5))
    kw.update(params)
    key = base.lower().replace("-", "").replace("_", "")
    graded = bool(kw.pop("graded", False))
    if key == "ap" or key == "map":
        _no_params(name, kw)
        return AveragePrecision()
    if key in ("p", "prec", "precision"):
        if "k" not in kw:
            raise ValueError(f"measure {name!r}: P needs a cutoff, e.g. 'P@10'")
        return PrecisionAt(k=int(kw.pop("k")))
    if key in ("rprec", "rp", "rprecision"):
        _no_params(name, kw)
        return RPrecision()
    if key in ("rr", "recip", "reciprank", "mrr"):
        _no_params(name, kw)
        return ReciprocalRank()
    if key == "ndcg":
        k = kw.pop("k", None)
        gains = kw.pop("gains", kw.pop("gain", None))
        if isinstance(gains, str):
            raise ValueError(f"measure {name!r}: gains must be a tuple of numbers")
        _no_params(name, kw)
        if graded or gains is not None:
            return GradedNDCG(k=k, gains=gains)
        return BinaryNDCG(k=k)
    if key == "gap":
        g = kw.pop("g", None)
        _no_params(name, kw)
        return GradedAP(g=g)
    raise ValueError(
        f"measure {name!r} has no expectation; known: AP, P@k, Rprec, RR, nDCG, nDCG@k, "
        "GAP(g=...), or pass an object implementing Expectation"
    )


def _from_metaeval_measure(m: Any) -> Expectation | None:
    """Expectation of a :class:`metaeval.measures.Measure` object (None if not one).

    The relevance level of a binary measure does not enter its expectation (it decides which
    grades count as relevant when ``p`` is built).  nDCG maps to the graded expectation with
    the measure's gains when they do not depend on the qrels (linear gain, no mapping).
    """
    try:
        from metaeval.measures.base import Measure
        from metaeval.measures.binary import AP, RR, P, Rprec
        from metaeval.measures.graded import GAP, nDCG
    except ImportError:  # pragma: no cover - the measures package is part of metaeval
        return None
    if not isinstance(m, Measure):
        return None
    if getattr(m, "judged_only", False):
        raise ValueError(f"{m}: condensed-list measures have no expectation")
    if isinstance(m, AP) and m.cutoff is None:
        return AveragePrecision()
    if isinstance(m, P):
        return PrecisionAt(k=m.cutoff)
    if isinstance(m, Rprec):
        return RPrecision()
    if isinstance(m, RR) and m.cutoff is None:
        return ReciprocalRank()
    if isinstance(m, nDCG):
        if m.discount != "log2" or m.gain != "linear" or m.gains:
            raise ValueError(f"{m}: its gains depend on the qrels; use "
                             "metaeval.meta.informativeness.measure_expectation(m, n_grades)")
        return GradedNDCG(k=m.cutoff)
    if isinstance(m, GAP):
        return GradedAP(g=m.g)
    raise ValueError(f"measure {m} has no expectation; known: AP, P@k, Rprec, RR, nDCG, GAP")


def _no_params(name, kw):
    if kw:
        raise ValueError(f"measure {name!r}: unexpected parameters {sorted(kw)}")


# ---------------------------------------------------------------------------------------
# entropy
# ---------------------------------------------------------------------------------------


def _xlogx(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


def entropy(p: Any, *, graded: bool = False) -> np.ndarray:
    r"""Entropy (nats) of a product distribution.

    Binary: :math:`H = -\sum_i [p_i \ln p_i + (1-p_i)\ln(1-p_i)]`;
    graded (``P`` of shape ``(..., N, G+1)``): :math:`H = -\sum_{i,j} P_{ij}\ln P_{ij}`.
    """
    p = np.asarray(p, dtype=float)
    if graded:
        return -_xlogx(p).sum((-2, -1))
    return -(_xlogx(p) + _xlogx(1.0 - p)).sum(-1)


# ---------------------------------------------------------------------------------------
# the solver
# ---------------------------------------------------------------------------------------


@dataclass
class MaxEntResult:
    """Result of :func:`maxent_distribution`.

    Attributes
    ----------
    p : ndarray
        The maximum-entropy distribution: ``(length,)`` binary or ``(length, G+1)`` graded
        for a single list; with a leading batch dimension (padded to the longest list, with
        certain non-relevance beyond each list's end) for a batch.
    entropy : ndarray or float
        Its entropy in nats.
    measure_residual : ndarray or float
        ``E_p[measure] - value``.
    count_residual : ndarray
        ``sum_i p_ij - n_retrieved_relevant_j`` per grade (binary: scalar per list).
    converged : ndarray of bool or bool
        The KKT conditions hold to the tolerance.  ``False`` lists were flagged by a
        :class:`MaxEntConvergenceWarning`.
    feasible : ndarray of bool or bool
        ``False`` when the value lies outside the range achievable with the given counts
        (then ``p`` is NaN).
    boundary : ndarray of bool or bool
        The value is the extreme of its range; ``p`` is the maximum-entropy point of the
        optimal face, obtained in closed form.
    iterations : ndarray of int or int
        Newton iterations (linear measures) or linearisations (non-linear).
    multipliers : ndarray
        Lagrange multipliers ``(lambda_1..lambda_G, lambda_v)`` (binary: ``(lambda_0,
        lambda_v)``) in the exponential-family form; NaN on the boundary.
    stationarity : ndarray or float
        Largest change of ``p`` in the last linearisation (non-linear measures; 0 for linear).
    """

    p: np.ndarray
    entropy: Any
    measure_residual: Any
    count_residual: Any
    converged: Any
    feasible: Any
    boundary: Any
    iterations: Any
    multipliers: np.ndarray
    stationarity: Any


class _BinaryAsGraded:
    """View a binary expectation as a graded one with two grades (P[..., 1] = p)."""

    graded = True

    def __init__(self, exp):
        self.exp = exp
        self.is_linear = bool(exp.is_linear)

    def value(self, P, R):
        return self.exp.value(P[..., 1], R)

    def grad(self, P, R):
        g = np.zeros_like(P)
        g[..., 1] = self.exp.grad(P[..., 1], R)
        return g

    def extreme(self, side, counts, length, R, n):
        if hasattr(self.exp, "extreme"):
            return self.exp.extreme(side, counts, length, R, n)
        return None


def _softmax(z):
    zmax = np.max(z, axis=-1, keepdims=True)
    zmax = np.where(np.isfinite(zmax), zmax, 0.0)
    e = np.exp(z - zmax)
    s = e.sum(-1, keepdims=True)
    s = np.where(s > 0, s, 1.0)  # rows with every grade masked (past the end of a list)
    return e / s, zmax[..., 0] + np.log(s[..., 0])


class _LinearDual:
    """Damped Newton on the convex dual of a linear max-ent problem, batched.

    Features per (rank i, grade j): indicator of grade j (j = 1..G) and coefficient a_ij.
    z_ij = lam_j [j>=1] + lam_v a_ij ; P = softmax_j z ; constraints E_P[phi] = target.
    """

    def __init__(self, gmask, valid):
        self.gmask = gmask  # (B, G+1) grades allowed (count > 0, grade 0 if room)
        self.valid = valid  # (B, N)
        self.allowed = valid[:, :, None] & gmask[:, None, :]

    def logits(self, lam, a):
        G = a.shape[-1] - 1
        z = lam[:, -1, None, None] * a
        z[..., 1:] += lam[:, None, :G]
        return np.where(self.allowed, z, -np.inf)

    def probs(self, lam, a):
        if a.shape[-1] == 2:
            return self._probs_binary(lam, a)
        z = self.logits(lam, a)
        P, lse = _softmax(z)
        P = np.where(self.allowed, P, 0.0)
        # ranks past the end are certainly grade 0
        P[..., 0] = np.where(self.valid, P[..., 0], 1.0)
        lse = np.where(self.valid, lse, 0.0)
        return P, lse

    def _probs_binary(self, lam, a):
        # two grades: a sigmoid is several times cheaper than a softmax over a length-2 axis
        z0 = lam[:, 1, None] * a[..., 0]
        d = lam[:, 0, None] + lam[:, 1, None] * a[..., 1] - z0
        with np.errstate(over="ignore"):
            e = np.exp(-np.abs(d))
        p1 = np.where(d >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        lse = z0 + np.maximum(d, 0.0) + np.log1p(e)
        g0, g1 = self.gmask[:, 0, None], self.gmask[:, 1, None]
        p1 = np.where(g1, np.where(g0, p1, 1.0), 0.0)
        lse = np.where(g1 & g0, lse, np.where(g1, z0 + d, z0))
        p1 = np.where(self.valid, p1, 0.0)
        lse = np.where(self.valid, lse, 0.0)
        return np.stack([1.0 - p1, p1], axis=-1), lse

    def objective(self, lam, a, target):
        _, lse = self.probs(lam, a)
        return lse.sum(-1) - (lam * target).sum(-1)

    def grad_hess(self, P, a, target):
        G = a.shape[-1] - 1
        av = np.where(self.allowed, a, 0.0)
        # E[phi] per rank: phi = (e_1..e_G, a)
        Ea = (P * av).sum(-1)  # (B, N)
        m1 = np.concatenate([P[..., 1:].sum(1), Ea.sum(1)[:, None]], axis=1)
        grad = m1 - target
        K = G + 1
        H = np.empty((P.shape[0], K, K))
        # Cov(e_j, e_l) = P_j delta_jl - P_j P_l
        Pg = np.where(self.valid[..., None], P[..., 1:], 0.0)
        H[:, :G, :G] = -np.einsum("bij,bil->bjl", Pg, Pg)
        idx = np.arange(G)
        H[:, idx, idx] += Pg.sum(1)
        # Cov(e_j, a) = P_j a_j - P_j E[a]
        Ea_v = np.where(self.valid, Ea, 0.0)
        cja = (Pg * av[..., 1:]).sum(1) - (Pg * Ea_v[..., None]).sum(1)
        H[:, :G, G] = cja
        H[:, G, :G] = cja
        H[:, G, G] = (P * av * av).sum((1, 2)) - (Ea_v * Ea_v).sum(1)
        return grad, H

    def solve(self, lam, a, target, active, tol, max_iter):
        """Newton iterations on the lists in ``active``; returns lam, P, |grad|max, iters."""
        B, K = lam.shape
        lam = lam.copy()
        iters = np.zeros(B, dtype=int)
        gmax = np.full(B, np.inf)
        P, _ = self.probs(lam, a)
        free = np.concatenate([self.gmask[:, 1:], np.ones((B, 1), bool)], axis=1)
        todo = active.copy()
        for it in range(max_iter):
            grad, H = self.grad_hess(P, a, target)
            grad = np.where(free, grad, 0.0)
            gmax = np.where(active, np.abs(grad).max(-1), gmax)
            todo = active & (gmax > tol)
            if not todo.any():
                break
            b = np.flatnonzero(todo)
            Hb = H[b]
            # frozen multipliers (grades with no mass): identity rows keep them still
            fb = free[b]
            Hb = np.where(fb[:, :, None] & fb[:, None, :], Hb, 0.0)
            Hb[:, np.arange(K), np.arange(K)] += np.where(fb, 0.0, 1.0)
            scale = np.abs(Hb[:, np.arange(K), np.arange(K)]).max(-1)
            Hb[:, np.arange(K), np.arange(K)] += 1e-13 * scale[:, None] + 1e-300
            step = -np.linalg.solve(Hb, grad[b][..., None])[..., 0]
            # Armijo backtracking on the dual objective (a per-list subproblem view)
            sub = _LinearDual(self.gmask[b], self.valid[b])
            f0 = sub.objective(lam[b], a[b], target[b])
            slope = (grad[b] * step).sum(-1)
            t = np.ones(len(b))
            accepted = np.zeros(len(b), bool)
            new = lam[b].copy()
            for _ in range(40):
                trial = lam[b] + t[:, None] * step
                f1 = sub.objective(trial, a[b], target[b])
                ok = (~accepted) & np.isfinite(f1) & (f1 <= f0 + 1e-4 * t * slope + 1e-14 * np.abs(f0))
                new[ok] = trial[ok]
                accepted |= ok
                if accepted.all():
                    break
                t = np.where(accepted, t, t * 0.5)
            # a list whose line search failed is at the limit of floating point: keep it
            lam[b] = new
            iters[b] += 1
            Pb, _ = sub.probs(lam[b], a[b])
            P[b] = Pb
        grad, _ = self.grad_hess(P, a, target)
        grad = np.where(free, grad, 0.0)
        gmax = np.where(active, np.abs(grad).max(-1), gmax)
        return lam, P, gmax, iters


def _broadcast_inputs(exp, value, length, n_relevant, n_retrieved):
    value = np.asarray(value, dtype=float)
    single = value.ndim == 0
    bshape = value.shape
    value = value.reshape(-1)
    B = value.size
    length = np.broadcast_to(np.asarray(length), bshape).reshape(-1)
    if np.any(length != np.round(length)) or np.any(length < 1):
        raise ValueError(f"length must be a positive integer (per list), got {length}")
    length = length.astype(int)
    if exp.graded:
        R = np.asarray(n_relevant, dtype=float)
        if R.ndim == 0:
            raise ValueError("n_relevant must be a sequence of counts per grade 1..G for a graded measure")
        G = R.shape[-1]
        R = np.broadcast_to(R, bshape + (G,)).reshape(B, G)
        M = R if n_retrieved is None else np.broadcast_to(
            np.asarray(n_retrieved, dtype=float), bshape + (G,)).reshape(B, G)
    else:
        R = np.broadcast_to(np.asarray(n_relevant, dtype=float), bshape).reshape(B)
        M = R if n_retrieved is None else np.broadcast_to(
            np.asarray(n_retrieved, dtype=float), bshape).reshape(B)
        M = M[:, None]
        G = 1
    if np.any(R < 0) or np.any(~np.isfinite(R)):
        raise ValueError("n_relevant must be non-negative and finite")
    if np.any(M < 0) or np.any(~np.isfinite(M)):
        raise ValueError("n_retrieved_relevant must be non-negative and finite")
    return single, bshape, value, length, R, M, G


def maxent_distribution(
    measure: Any,
    value: Any,
    *,
    length: Any,
    n_relevant: Any,
    n_retrieved_relevant: Any = None,
    tol: float = 1e-10,
    max_iter: int = 300,
    boundary_tol: float = 1e-9,
    stationarity_tol: float = 1e-8,
    warn: bool = True,
) -> MaxEntResult:
    r"""Maximum-entropy distribution of relevance over ranks given a measure value.

    Solves (METHODS.md section 3; Aslam, Yilmaz, Pavlu 2005; Robertson, Kanoulas, Yilmaz
    2010)::

        max_p  H(p)   s.t.  E_p[measure] = value,  sum_i p_ij = m_j (j = 1..G),  0 <= p <= 1

    vectorised over a batch of lists (see the module docstring for the method).

    Parameters
    ----------
    measure : str or Expectation
        Anything :func:`expectation_for` accepts.
    value : float or array_like, shape (B,)
        Observed measure value(s).  An array solves a batch of lists at once.
    length : int or array_like
        List length ``N`` (per list).
    n_relevant : float or array_like
        ``R``, the topic's number of relevant documents (normaliser of AP, R-prec, ...);
        graded: counts ``R_j`` for grades ``1..G``, last dimension ``G``.
    n_retrieved_relevant : float or array_like, optional
        The sum constraint ``m`` (graded: per grade); defaults to ``n_relevant``.
        Informativeness studies pass the list's own count (METHODS.md section 0).
    tol : float
        Tolerance on the constraint residuals (measure and counts).
    max_iter : int
        Iteration limit (Newton steps or linearisations).
    stationarity_tol : float
        Non-linear measures: converged when the largest change of ``p`` between two
        linearisations is below this.  The fixed point contracts linearly, so the distance
        to the exact KKT point is of the same order; the entropy, being stationary there,
        is then exact to about its square.
    boundary_tol : float
        A value within this distance of the extreme of its feasible range is answered by the
        extreme (optimal-face) solution; beyond the extreme by more than this it is
        infeasible.
    warn : bool
        Emit a :class:`MaxEntConvergenceWarning` when some list did not converge or was
        infeasible.

    Returns
    -------
    MaxEntResult

    Raises
    ------
    ValueError
        For malformed input, and for an infeasible value in a single-list call.

    Examples
    --------
    >>> r = maxent_distribution("P@5", 0.4, length=10, n_relevant=3)
    >>> np.round(r.p, 4).tolist()
    [0.4, 0.4, 0.4, 0.4, 0.4, 0.2, 0.2, 0.2, 0.2, 0.2]
    """
    exp0 = expectation_for(measure)
    if tol <= 0:
        raise ValueError(f"tol must be positive, got {tol}")
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter}")
    single, bshape, v, length, R, M, G = _broadcast_inputs(
        exp0, value, length, n_relevant, n_retrieved_relevant
    )
    exp = exp0 if exp0.graded else _BinaryAsGraded(exp0)
    B = v.size
    N = int(length.max())
    if np.any(M.sum(-1) > length + 1e-12):
        bad = np.flatnonzero(M.sum(-1) > length + 1e-12)
        if single:
            raise ValueError(
                f"n_retrieved_relevant ({M[0].sum():g}) exceeds the list length ({length[0]})"
            )
        feasible_counts = np.ones(B, bool)
        feasible_counts[bad] = False
    else:
        feasible_counts = np.ones(B, bool)
    if np.any(~np.isfinite(v)):
        raise ValueError("value must be finite")

    valid = np.arange(N)[None, :] < length[:, None]
    counts_full = np.concatenate([(length - M.sum(-1))[:, None], M], axis=1)
    gmask = counts_full > 1e-300
    Rarg = R if exp0.graded else R

    # --- feasible range, boundaries -----------------------------------------------------
    Mc = np.where(feasible_counts[:, None], M, 0.0)
    # a user-defined expectation without ``extreme`` gets no boundary handling: its values
    # are solved as interior points (and a value outside the range fails to converge)
    ext = getattr(exp, "extreme", None)
    Pmax = ext("max", Mc, length, Rarg, N) if ext is not None else None
    Pmin = ext("min", Mc, length, Rarg, N) if ext is not None else None
    if Pmax is None or Pmin is None:
        vmax, vmin = np.full(B, np.inf), np.full(B, -np.inf)
    else:
        vmax, vmin = exp.value(Pmax, Rarg), exp.value(Pmin, Rarg)
    at_max = np.abs(v - vmax) <= boundary_tol
    at_min = np.abs(v - vmin) <= boundary_tol
    feasible = feasible_counts & (v <= vmax + boundary_tol) & (v >= vmin - boundary_tol)
    # a range of zero width (e.g. every rank forced) is the boundary
    boundary = feasible & (at_max | at_min)
    interior = feasible & ~boundary
    if single and not feasible[0]:
        raise ValueError(
            f"value {v[0]:g} is not achievable for {exp0.name} with these counts: "
            f"achievable range [{vmin[0]:g}, {vmax[0]:g}]"
        )

    P = np.full((B, N, G + 1), np.nan)
    if boundary.any():  # only possible when the extremes are known
        P[boundary & at_max] = Pmax[boundary & at_max]
        P[boundary & ~at_max] = Pmin[boundary & ~at_max]
    lam = np.full((B, G + 1), np.nan)
    iters = np.zeros(B, dtype=int)
    converged = boundary.copy()
    stat = np.zeros(B)

    if interior.any():
        b = np.flatnonzero(interior)
        Pb, lamb, itb, convb, statb = _solve_interior(
            exp, v[b], M[b], Rarg[b], length[b], valid[b], gmask[b], tol, stationarity_tol, int(max_iter)
        )
        P[b], lam[b], iters[b], converged[b], stat[b] = Pb, lamb, itb, convb, statb

    # --- residuals, entropy -------------------------------------------------------------
    ok = feasible
    Pok = np.where(ok[:, None, None], P, np.where(np.arange(G + 1) == 0, 1.0, 0.0))
    with np.errstate(invalid="ignore"):
        mres = np.where(ok, exp.value(Pok, Rarg) - v, np.nan)
        cres = np.where(ok[:, None], Pok[..., 1:].sum(1) - M, np.nan)
        H = np.where(ok, -_xlogx(Pok).sum((1, 2)), np.nan)
    converged = converged & ok
    if warn:
        nbad = int((~feasible).sum())
        nnc = int((feasible & ~converged).sum())
        if nbad or nnc:
            warnings.warn(
                f"maxent_distribution({exp0.name}): {nnc} of {B} lists did not converge and "
                f"{nbad} were infeasible (see MaxEntResult.converged / .feasible)",
                MaxEntConvergenceWarning,
                stacklevel=2,
            )

    if not exp0.graded:
        p_out = P[..., 1]
        cres = cres[:, 0]
    else:
        p_out = P

    def _shape(x, extra=()):
        if single:
            return x.reshape(x.shape[1:])[()] if x.ndim > 1 else x[0]
        return x.reshape(bshape + x.shape[1:])

    if single:
        L = length[0]
        p_single = p_out[0, :L]
        return MaxEntResult(
            p=p_single,
            entropy=float(H[0]),
            measure_residual=float(mres[0]),
            count_residual=cres[0] if exp0.graded else float(cres[0]),
            converged=bool(converged[0]),
            feasible=bool(feasible[0]),
            boundary=bool(boundary[0]),
            iterations=int(iters[0]),
            multipliers=lam[0],
            stationarity=float(stat[0]),
        )
    return MaxEntResult(
        p=_shape(p_out),
        entropy=_shape(H),
        measure_residual=_shape(mres),
        count_residual=_shape(cres),
        converged=_shape(converged),
        feasible=_shape(feasible),
        boundary=_shape(boundary),
        iterations=_shape(iters),
        multipliers=_shape(lam),
        stationarity=_shape(stat),
    )


def _init_lambda(M, length, gmask):
    """Multipliers of the uniform distribution meeting the count constraints."""
    B, G = M.shape
    frac = M / length[:, None]
    f0 = np.maximum(1.0 - frac.sum(-1), 0.0)
    with np.errstate(divide="ignore"):
        lam_g = np.where(gmask[:, 1:], np.log(np.maximum(frac, 1e-300)) - np.log(np.maximum(f0, 1e-300))[:, None], 0.0)
    lam_g = np.clip(lam_g, -700, 700)
    return np.concatenate([lam_g, np.zeros((B, 1))], axis=1)


def _solve_interior(exp, v, M, R, length, valid, gmask, tol, stol, max_iter):
    B, G = M.shape
    N = valid.shape[1]
    dual = _LinearDual(gmask, valid)
    lam = _init_lambda(M, length, gmask)
    P, _ = dual.probs(lam, np.zeros((B, N, G + 1)))
    a = exp.grad(P, R)
    c0 = exp.value(P, R) - (np.where(dual.allowed, P * a, 0.0)).sum((1, 2))
    target = np.concatenate([M, (v - c0)[:, None]], axis=1)
    everyone = np.ones(B, bool)
    if exp.is_linear:
        lam, P, gmax, iters = dual.solve(lam, a, target, everyone, tol, max_iter)
        conv = gmax <= tol
        return P, lam, iters, conv, np.zeros(B)

    # ---- linearisation fixed point ----------------------------------------------------
    # Outer: a <- a + w (grad E(P) - a).  Inner: exact constraints along the
    # exponential family P = softmax(lam + lam_v a) by Newton on the multipliers.
    # Safeguard: when the inner solve cannot meet the constraints along the new family
    # (the linearisation moved too far), the step is rejected and retried with half the
    # damping from the last accepted point.
    iters = np.zeros(B, dtype=int)
    w = np.ones(B)
    active = everyone.copy()
    conv = np.zeros(B, bool)
    stat = np.full(B, np.inf)
    prev_dP = np.full(B, np.inf)
    have_good = np.zeros(B, bool)
    hist = _History(B, a[0].size, depth=3)
    a_good = a.copy()
    g_good = a.copy()
    for outer in range(max_iter):
        b = np.flatnonzero(active)
        if b.size == 0:
            break
        sub = _LinearDual(gmask[b], valid[b])
        # inexact inner solves while the linearisation point is still moving (the outer
        # residual bounds what an exact inner solve could buy); exact at the end
        inner_tol = np.where(np.isfinite(prev_dP[b]) & have_good[b],
                             np.maximum(tol * 0.5, np.minimum(1e-6, 1e-3 * prev_dP[b])), tol * 0.5)
        lam_b, Pn, mres, cres, gn = _family_newton(
            exp, sub, lam[b], a[b], v[b], M[b], R[b], inner_tol, 30
        )
        iters[b] += 1
        met = (mres <= np.maximum(inner_tol, tol)) & (cres <= np.maximum(inner_tol, tol))
        reject = ~met & have_good[b]
        acc = ~reject
        ba, br = b[acc], b[reject]
        dP = np.abs(Pn[acc] - P[ba]).max((1, 2))
        # damping of the linearisation point: shrink when the fixed point stops contracting
        grow = dP > prev_dP[ba]
        w[ba] = np.where(grow, np.maximum(w[ba] * 0.5, 1.0 / 64), np.minimum(w[ba] * 1.25, 1.0))
        P[ba] = Pn[acc]
        lam[ba] = lam_b[acc]
        stat[ba] = dP
        prev_dP[ba] = dP
        done = (mres[acc] <= tol) & (cres[acc] <= tol) & (dP <= stol)
        conv[ba] = done
        active[ba] = ~done
        good = met[acc]
        have_good[ba] = have_good[ba] | good
        a_good[ba[good]] = a[ba[good]]
        g_good[ba[good]] = gn[acc][good]
        a[ba] = _anderson_step(hist, ba, a[ba], gn[acc] - a[ba], w[ba], ~good)
        # rejected: back to the last accepted linearisation with a shorter step
        w[br] = w[br] * 0.5
        hist.reset(br)
        a[br] = a_good[br] + w[br][:, None, None] * (g_good[br] - a_good[br])
        active[br[w[br] < 1e-6]] = False  # cannot make progress: reported unconverged
    return P, lam, iters, conv, stat


class _History:
    """Per-list history of fixed-point iterates for Anderson acceleration."""

    def __init__(self, B, n, depth):
        self.depth = depth
        self.A = np.zeros((B, depth + 1, n))
        self.F = np.zeros((B, depth + 1, n))
        self.count = np.zeros(B, dtype=int)

    def reset(self, idx):
        self.count[idx] = 0

    def push(self, idx, a, f):
        k = self.depth + 1
        pos = self.count[idx] % k
        self.A[idx, pos] = a
        self.F[idx, pos] = f
        self.count[idx] += 1


def _anderson_step(hist, idx, a, f, w, restart):
    """Anderson-accelerated update of the linearisation point (type II, depth <= 3).

    The fixed point a = grad E(P(a)) converges linearly under plain damped iteration
    a <- a + w f, f = grad E(P(a)) - a; Anderson mixing extrapolates from the last few
    (a, f) pairs by least squares on the residual differences (Walker & Ni, SIAM J. Numer.
    Anal. 2011), typically halving the number of linearisations.  ``restart`` clears the
    history of lists whose last step was not a clean contraction.
    """
    shape = a.shape
    if len(idx) == 0:
        return a
    af = a.reshape(len(idx), -1)
    ff = f.reshape(len(idx), -1)
    hist.reset(idx[restart])
    hist.push(idx, af, ff)
    out = af + w[:, None] * ff
    k = hist.depth + 1
    cnt = np.minimum(hist.count[idx], k)
    use = cnt >= 2
    if use.any():
        u = np.flatnonzero(use)
        iu = idx[u]
        # order the stored iterates oldest..newest, newest last
        last = (hist.count[iu] - 1) % k
        ords = (last[:, None] - np.arange(k)[::-1][None, :]) % k  # (n_u, k)
        A = np.take_along_axis(hist.A[iu], ords[:, :, None], axis=1)
        F = np.take_along_axis(hist.F[iu], ords[:, :, None], axis=1)
        valid = np.arange(k)[None, :] >= (k - cnt[u])[:, None]  # which slots hold iterates
        dA = np.diff(A, axis=1)
        dF = np.diff(F, axis=1)
        vd = valid[:, 1:] & valid[:, :-1]
        dA = np.where(vd[:, :, None], dA, 0.0)
        dF = np.where(vd[:, :, None], dF, 0.0)
        M = np.einsum("bin,bjn->bij", dF, dF)
        rhs = np.einsum("bin,bn->bi", dF, F[:, -1])
        scale = np.maximum(np.abs(M).max((1, 2)), 1e-300)
        # Tikhonov term for conditioning; unit diagonal on the empty slots (gamma = 0 there)
        M = M + np.eye(k - 1)[None] * (1e-10 * scale)[:, None, None] \
            + np.eye(k - 1)[None] * ((~vd) * scale[:, None])[:, :, None]
        gamma = np.linalg.solve(M, rhs[..., None])[..., 0]
        gamma = np.where(vd & np.isfinite(gamma), gamma, 0.0)
        wu = w[u][:, None]
        out[u] = A[:, -1] + wu * F[:, -1] - np.einsum("bi,bin->bn", gamma, dA + wu[:, :, None] * dF)
    return out.reshape(shape)


def _family_jacobian(dual, P, a, g):
    """Jacobian of (sum_i P_ij, E(P)) w.r.t. the multipliers of P = softmax(lam + lam_v a).

    J[k, l] = sum_i Cov_{P_i}(psi_k, phi_l) with psi = (e_1..e_G, g = grad E(P)) and
    phi = (e_1..e_G, a).  For a linear measure (g = a) it is the dual Hessian.
    """
    G = a.shape[-1] - 1
    B = P.shape[0]
    av = np.where(dual.allowed, a, 0.0)
    gv = np.where(dual.allowed, g, 0.0)
    Pg = np.where(dual.valid[..., None], P[..., 1:], 0.0)
    Ea = np.where(dual.valid, (P * av).sum(-1), 0.0)
    Eg = np.where(dual.valid, (P * gv).sum(-1), 0.0)
    J = np.empty((B, G + 1, G + 1))
    J[:, :G, :G] = -np.einsum("bij,bil->bjl", Pg, Pg)
    idx = np.arange(G)
    J[:, idx, idx] += Pg.sum(1)
    J[:, :G, G] = (Pg * av[..., 1:]).sum(1) - (Pg * Ea[..., None]).sum(1)
    J[:, G, :G] = (Pg * gv[..., 1:]).sum(1) - (Pg * Eg[..., None]).sum(1)
    J[:, G, G] = (P * gv * av).sum((1, 2)) - (Eg * Ea).sum(1)
    return J


def _family_newton(exp, dual, lam, a, v, M, R, tol, max_iter):
    """Newton on the multipliers so that P = softmax(lam + lam_v a) meets the exact constraints.

    Residual F = (sum_i P_ij - m_j, E(P) - v); backtracking on the scaled residual norm.
    Returns lam, P, |measure residual|, max |count residual|, grad E(P).
    """
    B, K = lam.shape
    lam = lam.copy()
    free = np.concatenate([dual.gmask[:, 1:], np.ones((B, 1), bool)], axis=1)
    scale = np.concatenate([np.maximum(M, 1.0), np.full((B, 1), 1e-2)], axis=1)

    def resid(lam_):
        P_, _ = dual.probs(lam_, a)
        F_ = np.concatenate([P_[..., 1:].sum(1) - M, (exp.value(P_, R) - v)[:, None]], axis=1)
        return P_, np.where(free, F_, 0.0)

    P, F = resid(lam)
    g = exp.grad(P, R)
    diag = np.arange(K)
    tol = np.broadcast_to(np.asarray(tol, dtype=float), (B,))
    for _ in range(max_iter):
        todo = np.abs(F).max(-1) > tol
        if not todo.any():
            break
        b = np.flatnonzero(todo)
        sub = _LinearDual(dual.gmask[b], dual.valid[b])
        J = _family_jacobian(sub, P[b], a[b], g[b])
        fb = free[b]
        J = np.where(fb[:, :, None] & fb[:, None, :], J, 0.0)
        J[:, diag, diag] += np.where(fb, 0.0, 1.0)
        js = np.abs(J).max((1, 2))
        J[:, diag, diag] += 1e-14 * js[:, None] + 1e-300
        try:
            step = -np.linalg.solve(J, F[b][..., None])[..., 0]
        except np.linalg.LinAlgError:  # an exactly singular Jacobian: least-squares step
            step = -(np.linalg.pinv(J) @ F[b][..., None])[..., 0]
        step = np.where(np.isfinite(step), step, 0.0)
        f0 = ((F[b] / scale[b]) ** 2).sum(-1)
        t = 1.0
        acc = np.zeros(b.size, bool)
        for _ls in range(30):
            # only the lists still searching are evaluated
            s = np.flatnonzero(~acc)
            bs = b[s]
            sub_s = _LinearDual(dual.gmask[bs], dual.valid[bs])
            trial = lam[bs] + t * step[s]
            Pt, _ = sub_s.probs(trial, a[bs])
            Ft = np.concatenate([Pt[..., 1:].sum(1) - M[bs], (exp.value(Pt, R[bs]) - v[bs])[:, None]], axis=1)
            Ft = np.where(free[bs], Ft, 0.0)
            f1 = ((Ft / scale[bs]) ** 2).sum(-1)
            ok = np.isfinite(f1) & ((f1 <= (1 - 1e-4 * t) * f0[s]) | (np.abs(Ft).max(-1) <= tol[bs]))
            lam[bs[ok]], P[bs[ok]], F[bs[ok]] = trial[ok], Pt[ok], Ft[ok]
            acc[s[ok]] = True
            if acc.all():
                break
            t *= 0.5
        if not acc.any():
            break
        upd = b[acc]
        g[upd] = exp.grad(P[upd], R[upd])
    mres = np.abs(F[:, -1])
    cres = np.abs(F[:, :-1]).max(-1) if K > 1 else np.zeros(B)
    return lam, P, mres, cres, g





# ---------------------------------------------------------------------------------------
# precision-recall curves and their errors
# ---------------------------------------------------------------------------------------


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
    project's default, METHODS.md section 0).  NaN for a list without a relevant document.
    """
    p = _as_binary(p)
    rel = np.asarray(rel, dtype=float)
    if p.shape[-1] != rel.shape[-1]:
        raise ValueError(f"p and rel must have the same number of ranks, got {p.shape} and {rel.shape}")
    pi, _ = inferred_pr_curve(p, R)
    pa, _ = actual_pr_curve(rel, R)
    w = rel > 0
    n = w.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(np.where(w, (pi - pa) ** 2, 0.0).sum(-1) / n)


def interpolated_precision(
    precision: Any, recall: Any, levels: Any = None
) -> np.ndarray:
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
        raise ValueError(f"precision and recall must have the same shape, got {prec.shape} and {rec.shape}")
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
              \big(P^{\mathrm{interp}}_{\mathrm{inferred}}(l) - P^{\mathrm{interp}}_{\mathrm{actual}}(l)\big)^2}

    (Aslam, Yilmaz, Pavlu SIGIR 2005).
    """
    p = _as_binary(p)
    rel = np.asarray(rel, dtype=float)
    if p.shape[-1] != rel.shape[-1]:
        raise ValueError(f"p and rel must have the same number of ranks, got {p.shape} and {rel.shape}")
    ii = interpolated_precision(*inferred_pr_curve(p, R), levels)
    ia = interpolated_precision(*actual_pr_curve(rel, R), levels)
    return np.sqrt(((ii - ia) ** 2).mean(-1))
