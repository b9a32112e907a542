"""The maximum-entropy solver: the distribution of relevance consistent with a measure value.

See :mod:`metaeval.meta.maxent` for the problem and the method.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from metaeval._validation import check_int, check_real
from metaeval._warnings import warn as _warn
from metaeval.measures import Measure, canonical_name
from metaeval.meta.maxent.expectations import expectation_for

__all__ = ["MaxEntConvergenceWarning", "MaxEntResult", "maxent_distribution", "entropy"]


class MaxEntConvergenceWarning(RuntimeWarning):
    """Some lists of a maximum-entropy solve did not converge or were infeasible."""


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


@dataclass(frozen=True)
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
    value : ndarray or float
        The measure value(s) the distribution was solved for.
    length : ndarray or int
        The list length(s).

    A single-list call holds scalars (and ``p`` of that list); a batch call holds arrays with
    the batch's shape in front.  :meth:`to_frame` gives one row per list.
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
    value: Any = None
    length: Any = None

    def to_frame(self, ranks: bool = False) -> pd.DataFrame:
        """The result as a tidy table.

        Parameters
        ----------
        ranks : bool
            ``False`` (default): one row per list (numbered ``list`` 0.. in the batch's C
            order) with ``value, length, entropy, measure_residual, count_residual`` (graded:
            ``count_residual_1 .. count_residual_G``), ``converged, feasible, boundary,
            iterations, stationarity``.  ``True``: the distribution, one row per list and
            rank (1-based; graded: and grade) with its probability ``p``, each list to its
            own length (a batch's padding is left out).

        Returns
        -------
        DataFrame
        """
        n_lists = int(np.size(self.entropy))
        graded = np.ndim(self.p) - np.ndim(self.entropy) == 2
        length = np.broadcast_to(np.asarray(self.length), np.shape(self.entropy)).reshape(-1)
        if not ranks:
            frame = pd.DataFrame(
                {
                    "list": np.arange(n_lists),
                    "value": np.ravel(self.value),
                    "length": length,
                    "entropy": np.ravel(self.entropy),
                    "measure_residual": np.ravel(self.measure_residual),
                }
            )
            if graded:
                cres = np.reshape(self.count_residual, (n_lists, -1))
                for j in range(cres.shape[1]):
                    frame[f"count_residual_{j + 1}"] = cres[:, j]
            else:
                frame["count_residual"] = np.ravel(self.count_residual)
            for name in ("converged", "feasible", "boundary", "iterations", "stationarity"):
                frame[name] = np.ravel(getattr(self, name))
            return frame
        p = np.asarray(self.p, dtype=float)
        n_ranks = p.shape[-2] if graded else p.shape[-1]
        p = p.reshape((n_lists, n_ranks) + ((p.shape[-1],) if graded else ()))
        index = np.indices(p.shape).reshape(p.ndim, -1)
        frame = pd.DataFrame({"list": index[0], "rank": index[1] + 1})
        if graded:
            frame["grade"] = index[2]
        frame["p"] = p.reshape(-1)
        inside = index[1] < length[index[0]]
        return frame[inside].reset_index(drop=True)


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
        for _it in range(max_iter):
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
                ok = (
                    (~accepted)
                    & np.isfinite(f1)
                    & (f1 <= f0 + 1e-4 * t * slope + 1e-14 * np.abs(f0))
                )
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
            raise ValueError(
                "n_relevant must be a sequence of counts per grade 1..G for a graded measure"
            )
        G = R.shape[-1]
        R = np.broadcast_to(R, bshape + (G,)).reshape(B, G)
        M = (
            R
            if n_retrieved is None
            else np.broadcast_to(np.asarray(n_retrieved, dtype=float), bshape + (G,)).reshape(B, G)
        )
    else:
        R = np.broadcast_to(np.asarray(n_relevant, dtype=float), bshape).reshape(B)
        M = (
            R
            if n_retrieved is None
            else np.broadcast_to(np.asarray(n_retrieved, dtype=float), bshape).reshape(B)
        )
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

    Solves (docs/methods.md §3; Aslam, Yilmaz, Pavlu 2005; Robertson, Kanoulas, Yilmaz
    2010)::

        max_p  H(p)   s.t.  E_p[measure] = value,  sum_i p_ij = m_j (j = 1..G),  0 <= p <= 1

    vectorised over a batch of lists (see the module docstring for the method).

    Parameters
    ----------
    measure : str, Measure or Expectation
        Anything :func:`~metaeval.meta.maxent.expectation_for` accepts; a measure or name is
        mapped without qrels (``n_grades=None``: nDCG is binary), so for graded nDCG pass
        ``expectation_for(measure, n_grades)``.
    value : float or array_like, shape (B,)
        Observed measure value(s).  An array solves a batch of lists at once.
    length : int or array_like
        List length ``N`` (per list).
    n_relevant : float or array_like
        ``R``, the topic's number of relevant documents (normaliser of AP, R-prec, ...);
        graded: counts ``R_j`` for grades ``1..G``, last dimension ``G``.
    n_retrieved_relevant : float or array_like, optional
        The sum constraint ``m`` (graded: per grade); defaults to ``n_relevant``.
        Informativeness studies pass the list's own count (docs/methods.md §0).
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
    problem = _checked_problem(
        measure, value, length, n_relevant, n_retrieved_relevant,
        tol=tol, max_iter=max_iter, boundary_tol=boundary_tol, stationarity_tol=stationarity_tol,
    )  # fmt: skip
    return _result(problem, _solve(problem), warn)


@dataclass(frozen=True)
class _Problem:
    """The checked inputs of a solve, as a batch of B lists of at most N ranks and G grades."""

    exp0: Any  # the expectation as given (binary or graded)
    exp: Any  # graded: a binary one is solved as one grade
    label: str  # the measure as messages name it
    single: bool  # a scalar value: the result is one list's
    bshape: tuple  # the shape of the values, which the result takes
    v: np.ndarray  # (B,) values
    length: np.ndarray  # (B,) list lengths
    R: np.ndarray  # (B,) or (B, G) relevant counts
    M: np.ndarray  # (B, G) sum constraints
    G: int
    feasible_counts: np.ndarray  # (B,) the counts fit in the list
    tol: float
    max_iter: int
    boundary_tol: float
    stationarity_tol: float

    @property
    def B(self) -> int:
        return self.v.size

    @property
    def N(self) -> int:
        return int(self.length.max())


@dataclass(frozen=True)
class _Solution:
    P: np.ndarray  # (B, N, G + 1) probability of each grade at each rank
    multipliers: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray
    stationarity: np.ndarray
    feasible: np.ndarray
    boundary: np.ndarray


def _checked_problem(
    measure, value, length, n_relevant, n_retrieved_relevant, **tolerances
) -> _Problem:
    """Input checks: the measure's expectation, tolerances, and the counts broadcast to a
    batch; a ValueError for malformed input (and for counts that exceed a single list)."""
    exp0 = expectation_for(measure)
    # messages name the measure as it prints everywhere (str of the parsed measure)
    label = (
        canonical_name(measure)
        if isinstance(measure, (str, Measure))
        else getattr(exp0, "name", type(exp0).__name__)
    )
    tol = check_real("tol", tolerances["tol"], min=0.0, min_open=True)
    max_iter = check_int("max_iter", tolerances["max_iter"], min=1)
    boundary_tol = check_real("boundary_tol", tolerances["boundary_tol"], min=0.0)
    stationarity_tol = check_real(
        "stationarity_tol", tolerances["stationarity_tol"], min=0.0, min_open=True
    )
    single, bshape, v, length, R, M, G = _broadcast_inputs(
        exp0, value, length, n_relevant, n_retrieved_relevant
    )
    feasible_counts = M.sum(-1) <= length + 1e-12
    if single and not feasible_counts[0]:
        raise ValueError(
            f"n_retrieved_relevant ({M[0].sum():g}) exceeds the list length ({length[0]})"
        )
    if np.any(~np.isfinite(v)):
        raise ValueError("value must be finite")
    return _Problem(
        exp0=exp0,
        exp=exp0 if exp0.graded else _BinaryAsGraded(exp0),
        label=label,
        single=single,
        bshape=bshape,
        v=v,
        length=length,
        R=R,
        M=M,
        G=G,
        feasible_counts=feasible_counts,
        tol=tol,
        max_iter=max_iter,
        boundary_tol=boundary_tol,
        stationarity_tol=stationarity_tol,
    )


def _solve(pb: _Problem) -> _Solution:
    """Place each list: a value at an extreme of its feasible range takes the extreme
    (optimal-face) distribution, an interior value is solved by the dual (see the module
    docstring); an infeasible one is left NaN (a single list raises)."""
    B, N, G, v, exp = pb.B, pb.N, pb.G, pb.v, pb.exp
    valid = np.arange(N)[None, :] < pb.length[:, None]
    counts_full = np.concatenate([(pb.length - pb.M.sum(-1))[:, None], pb.M], axis=1)
    gmask = counts_full > 1e-300

    # --- feasible range, boundaries -----------------------------------------------------
    Mc = np.where(pb.feasible_counts[:, None], pb.M, 0.0)
    # a user-defined expectation without ``extreme`` gets no boundary handling: its values
    # are solved as interior points (and a value outside the range fails to converge)
    ext = getattr(exp, "extreme", None)
    Pmax = ext("max", Mc, pb.length, pb.R, N) if ext is not None else None
    Pmin = ext("min", Mc, pb.length, pb.R, N) if ext is not None else None
    if Pmax is None or Pmin is None:
        vmax, vmin = np.full(B, np.inf), np.full(B, -np.inf)
    else:
        vmax, vmin = exp.value(Pmax, pb.R), exp.value(Pmin, pb.R)
    at_max = np.abs(v - vmax) <= pb.boundary_tol
    at_min = np.abs(v - vmin) <= pb.boundary_tol
    feasible = pb.feasible_counts & (v <= vmax + pb.boundary_tol) & (v >= vmin - pb.boundary_tol)
    # a range of zero width (e.g. every rank forced) is the boundary
    boundary = feasible & (at_max | at_min)
    interior = feasible & ~boundary
    if pb.single and not feasible[0]:
        raise ValueError(
            f"value {v[0]:g} is not achievable for {pb.label} with these counts: "
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
            exp,
            v[b],
            pb.M[b],
            pb.R[b],
            pb.length[b],
            valid[b],
            gmask[b],
            pb.tol,
            pb.stationarity_tol,
            int(pb.max_iter),
        )
        P[b], lam[b], iters[b], converged[b], stat[b] = Pb, lamb, itb, convb, statb
    return _Solution(P, lam, iters, converged, stat, feasible, boundary)


def _result(pb: _Problem, sol: _Solution, warn: bool) -> MaxEntResult:
    """Residuals and entropy of the solution, shaped as the values were given."""
    B, G = pb.B, pb.G
    ok = sol.feasible
    Pok = np.where(ok[:, None, None], sol.P, np.where(np.arange(G + 1) == 0, 1.0, 0.0))
    with np.errstate(invalid="ignore"):
        mres = np.where(ok, pb.exp.value(Pok, pb.R) - pb.v, np.nan)
        cres = np.where(ok[:, None], Pok[..., 1:].sum(1) - pb.M, np.nan)
        H = np.where(ok, -_xlogx(Pok).sum((1, 2)), np.nan)
    converged = sol.converged & ok
    if warn:
        nbad = int((~sol.feasible).sum())
        nnc = int((sol.feasible & ~converged).sum())
        if nbad or nnc:
            _warn(
                f"maxent_distribution({pb.label}): {nnc} of {B} lists did not converge and "
                f"{nbad} were infeasible (see MaxEntResult.converged / .feasible)",
                MaxEntConvergenceWarning,
            )

    if not pb.exp0.graded:
        p_out = sol.P[..., 1]
        cres = cres[:, 0]
    else:
        p_out = sol.P

    if pb.single:
        L = pb.length[0]
        return MaxEntResult(
            p=p_out[0, :L],
            entropy=float(H[0]),
            measure_residual=float(mres[0]),
            count_residual=cres[0] if pb.exp0.graded else float(cres[0]),
            converged=bool(converged[0]),
            feasible=bool(sol.feasible[0]),
            boundary=bool(sol.boundary[0]),
            iterations=int(sol.iterations[0]),
            multipliers=sol.multipliers[0],
            stationarity=float(sol.stationarity[0]),
            value=float(pb.v[0]),
            length=int(L),
        )

    def shaped(x):
        return x.reshape(pb.bshape + x.shape[1:])

    return MaxEntResult(
        p=shaped(p_out),
        entropy=shaped(H),
        measure_residual=shaped(mres),
        count_residual=shaped(cres),
        converged=shaped(converged),
        feasible=shaped(sol.feasible),
        boundary=shaped(sol.boundary),
        iterations=shaped(sol.iterations),
        multipliers=shaped(sol.multipliers),
        stationarity=shaped(sol.stationarity),
        value=shaped(pb.v),
        length=shaped(pb.length),
    )


def _init_lambda(M, length, gmask):
    """Multipliers of the uniform distribution meeting the count constraints."""
    B, G = M.shape
    frac = M / length[:, None]
    f0 = np.maximum(1.0 - frac.sum(-1), 0.0)
    with np.errstate(divide="ignore"):
        lam_g = np.where(
            gmask[:, 1:],
            np.log(np.maximum(frac, 1e-300)) - np.log(np.maximum(f0, 1e-300))[:, None],
            0.0,
        )
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
    for _outer in range(max_iter):
        b = np.flatnonzero(active)
        if b.size == 0:
            break
        sub = _LinearDual(gmask[b], valid[b])
        # inexact inner solves while the linearisation point is still moving (the outer
        # residual bounds what an exact inner solve could buy); exact at the end
        inner_tol = np.where(
            np.isfinite(prev_dP[b]) & have_good[b],
            np.maximum(tol * 0.5, np.minimum(1e-6, 1e-3 * prev_dP[b])),
            tol * 0.5,
        )
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
        M = (
            M
            + np.eye(k - 1)[None] * (1e-10 * scale)[:, None, None]
            + np.eye(k - 1)[None] * ((~vd) * scale[:, None])[:, :, None]
        )
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
            Ft = np.concatenate(
                [Pt[..., 1:].sum(1) - M[bs], (exp.value(Pt, R[bs]) - v[bs])[:, None]], axis=1
            )
            Ft = np.where(free[bs], Ft, 0.0)
            f1 = ((Ft / scale[bs]) ** 2).sum(-1)
            ok = np.isfinite(f1) & (
                (f1 <= (1 - 1e-4 * t) * f0[s]) | (np.abs(Ft).max(-1) <= tol[bs])
            )
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
