"""Univariate distributions on [0, 1] ("margins") for score-level simulation of IR evaluation.

A score-level simulator (Urbano & Nagler, "Stochastic Simulation of Test Collections:
Evaluation Scores", SIGIR 2018; their R package simIReff) models the per-topic scores of each
system, e.g. AP over 50 topics, by a fitted univariate distribution on [0, 1], and the
dependence between systems by a copula. New topics are drawn as copula uniforms ``u`` mapped
through each system's quantile function, ``margin.ppf(u)``. This module provides the margins,
their fitting and selection, and the transformation that moves a margin to a given mean.

Families
--------
Continuous (scores such as AP or nDCG):

``norm``
    Normal truncated to [0, 1], maximum likelihood with ``sigma >= 0.05`` as in simIReff;
    2 parameters. See :class:`NormMargin`.
``beta``
    Beta by maximum likelihood on data capped to ``[1e-6, 1 - 1e-6]``, with
    ``alpha, beta >= 1`` as in simIReff; 2 parameters. See :class:`BetaMargin`.
``kernel``
    Gaussian kernel density estimate (Silverman's rule-of-thumb bandwidth) truncated to
    [0, 1], held on a grid of 2048 cells; effective degrees of freedom = trace of the
    smoother. See :class:`KernelMargin`.

Discrete (scores on a known finite support such as P@10, with support 0, 0.1, ..., 1):

``bbinom``
    Beta-binomial over the index 0..k of the k+1 support values, maximum likelihood with
    ``alpha, beta >= 1`` as in simIReff; 2 parameters. See :class:`BBinomMargin`.
``dkernel``
    Wang & van Ryzin ordered-kernel smoothing of the support index with a least-squares
    cross-validated bandwidth. See :class:`DKernelMargin`.

:func:`fit_margin` fits the candidate families and keeps the best by AIC, BIC or
log-likelihood; :func:`transform_mean` returns a margin with a prescribed expected value;
:meth:`Margin.to_dict` and :func:`margin_from_dict` serialise a margin exactly.

Every ``ppf`` is vectorised without Python loops over the values: the truncated normal is
inverted in closed form, the beta by ``scipy.special.betaincinv`` (exact; about 2 us a value),
the kernel and the discrete families by table look-up.

>>> import numpy as np
>>> from simulators.margins import fit_margin, transform_mean
>>> x = np.random.default_rng(1).beta(2, 5, size=50)
>>> m = fit_margin(x)                                  # best of norm, beta, kernel by AIC
>>> u = np.random.default_rng(2).random(1000)
>>> y = m.ppf(u)                                       # scores for 1000 new topics
>>> m2 = transform_mean(m, 0.4)
>>> round(m2.mean, 6)
0.4
"""

from __future__ import annotations

import abc
import functools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from scipy import optimize, special, stats

from metaeval._validation import as_generator

__all__ = [
    "CONTINUOUS_FAMILIES",
    "DISCRETE_FAMILIES",
    "Margin",
    "NormMargin",
    "BetaMargin",
    "KernelMargin",
    "BBinomMargin",
    "DKernelMargin",
    "ShiftedMargin",
    "fit_margin",
    "fit_margins",
    "transform_mean",
    "margin_from_dict",
    "silverman_bandwidth",
]

CONTINUOUS_FAMILIES = ("norm", "beta", "kernel")
DISCRETE_FAMILIES = ("bbinom", "dkernel")
CRITERIA = ("aic", "bic", "loglik")

#: Lower bound on the standard deviation of the truncated normal (as simIReff), which keeps a
#: near-constant sample from producing a degenerate spike.
NORM_MIN_SIGMA = 0.05
# Box for the truncated-normal location and scale. A truncated normal with a large sigma and a
# location far outside [0, 1] tends to an exponential tilt on [0, 1]; the box keeps the search
# finite while still reaching shapes steeper than any plausible score distribution.
_NORM_MU_BOUNDS = (-10.0, 11.0)
_NORM_MAX_SIGMA = 10.0
#: Beta data are capped to [BETA_CAP, 1 - BETA_CAP]: zeros and ones are common in IR scores
#: and would make the beta likelihood zero (or infinite).
BETA_CAP = 1e-6
#: Bounds on the beta's shapes. Both at least 1, as simIReff fits them (``effCont_beta``:
#: ``MASS::fitdistr`` with ``lower = 1``): the density is then finite on [0, 1], with no spike
#: at 0 or 1. A run with topics at AP = 0 would otherwise get a shape below 1 and be chosen as a
#: beta where simIReff's selection (AIC, BIC) chooses the truncated normal or the kernel, and
#: the simulated pairs would have more ties at 0 than the papers' (their sign test's type I
#: error rates are the measure of it).
_BETA_PARAM_BOUNDS = (1.0, 1e6)
_BBINOM_PARAM_BOUNDS = (1.0, 1e6)
#: Number of cells of the grid on which the kernel margin is held.
KERNEL_GRID = 2048
#: Discrete data must lie within this distance of a support value.
SUPPORT_TOL = 1e-9
_MIN_N = 3
# Largest log(theta) tried by transform_mean: beyond ~1e15 the powers F**theta cannot be
# resolved in double precision any more.
_MAX_LOG_THETA = 34.0

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
# The two-parameter likelihoods are maximised by SLSQP with analytic gradients and box bounds:
# it reaches the same optima as L-BFGS-B here at a tenth of the time (L-BFGS-B's per-iteration
# overhead dominates such small problems), which matters when every run of a collection is fit.
_MLE_OPTIONS = {"ftol": 1e-12, "maxiter": 1000}


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def _log_diff_exp(u, v):
    """``log(exp(u) - exp(v))`` for ``u >= v``, accurate when ``u`` and ``v`` are close."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return u + np.log(-np.expm1(v - u))


def _gauss_legendre_nodes(breaks: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of composite Gauss-Legendre quadrature over the cells ``breaks``."""
    g, w = np.polynomial.legendre.leggauss(order)
    lo, hi = breaks[:-1, None], breaks[1:, None]
    half = 0.5 * (hi - lo)
    nodes = (lo + hi) * 0.5 + half * g[None, :]
    weights = half * w[None, :]
    return nodes.ravel(), weights.ravel()


@functools.lru_cache(maxsize=1)
def _graded_nodes() -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes on [0, 1] for smooth CDFs with algebraic behaviour at the ends.

    Composite 10-point Gauss-Legendre on 256 equal cells in [1/64, 1 - 1/64] and on cells
    halving geometrically towards 0 and towards 1 (down to ~1e-14). The geometric grading
    gives exponential convergence for integrands such as ``1 - x**a`` with a fractional ``a``
    (a beta CDF near 0, raised to a power), which a uniform mesh would resolve only slowly.
    """
    edge = 1.0 / 64.0
    geo = edge * 0.5 ** np.arange(1, 41)
    geo = geo[geo > 1e-14]
    inner = np.linspace(edge, 1.0 - edge, 257)
    breaks = np.concatenate(([0.0], geo[::-1], inner, 1.0 - geo, [1.0]))
    x, w = _gauss_legendre_nodes(breaks, 10)
    x.setflags(write=False)
    w.setflags(write=False)
    return x, w


def _frozen(a) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


def _as_float_array(x, what: str = "x") -> np.ndarray:
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} must be numeric: {exc}") from None


def _check_scores(x, what: str = "x") -> np.ndarray:
    """A validated 1-D float array of at least 3 finite scores within [0, 1]."""
    arr = _as_float_array(x, what)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be 1-D, got shape {arr.shape}")
    if arr.size < _MIN_N:
        raise ValueError(f"{what} needs at least {_MIN_N} values, got {arr.size}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{what} has a non-finite value ({float(arr[i])}) at index {i}")
    out = (arr < 0.0) | (arr > 1.0)
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise ValueError(f"{what} has a value outside [0, 1] ({float(arr[i])!r}) at index {i}")
    return arr


def _check_support(support) -> np.ndarray:
    """The support as a sorted array of distinct values within [0, 1]."""
    s = _as_float_array(support, "support")
    if s.ndim != 1:
        raise ValueError(f"support must be 1-D, got shape {s.shape}")
    if s.size < 2:
        raise ValueError(f"support needs at least 2 values, got {s.size}")
    if not np.all(np.isfinite(s)):
        raise ValueError("support has a non-finite value")
    if s.min() < 0.0 or s.max() > 1.0:
        raise ValueError("support has a value outside [0, 1]")
    s = np.sort(s)
    if np.any(np.diff(s) <= 2 * SUPPORT_TOL):
        raise ValueError(f"support values must be distinct (more than {2 * SUPPORT_TOL} apart)")
    return s


def _support_index(x: np.ndarray, support: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of the nearest support value for each ``x`` and whether it is within tolerance."""
    j = np.clip(np.searchsorted(support, x), 1, support.size - 1)
    left = support[j - 1]
    right = support[j]
    with np.errstate(invalid="ignore"):
        take_left = np.abs(x - left) <= np.abs(right - x)
    idx = np.where(take_left, j - 1, j)
    with np.errstate(invalid="ignore"):
        ok = np.abs(x - support[idx]) <= SUPPORT_TOL
    return idx, ok


def _match_support(x: np.ndarray, support: np.ndarray) -> np.ndarray:
    """Support indices of validated discrete data, or a ValueError naming the stray value."""
    idx, ok = _support_index(x, support)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise ValueError(
            f"value {float(x[i])!r} at index {i} is not within {SUPPORT_TOL} of any support value"
        )
    return idx


# --------------------------------------------------------------------------------------------
# base class
# --------------------------------------------------------------------------------------------


class Margin(abc.ABC):
    """A univariate distribution on [0, 1] for the scores of one system.

    Attributes
    ----------
    family : str
        ``"norm"``, ``"beta"``, ``"kernel"``, ``"bbinom"``, ``"dkernel"``, or
        ``"shift(<base family>)"`` for a margin moved by :func:`transform_mean`.
    discrete : bool
        Whether the margin is a distribution on the finite ``support``.
    df : float
        (Effective) number of parameters, the penalty of :meth:`aic` and :meth:`bic`.
    support : numpy.ndarray or None
        Discrete margins: the sorted possible values. ``None`` for continuous margins.

    Notes
    -----
    ``ppf`` is the left-continuous quantile function ``Q(p) = inf{x : F(x) >= p}``, so that
    ``ppf(U)`` with ``U`` uniform on (0, 1) has exactly the distribution described by
    ``cdf``, ``mean`` and ``var``; ``ppf`` returns NaN for ``p`` outside [0, 1].
    """

    family: ClassVar[str] = ""
    discrete: ClassVar[bool] = False
    # ``support`` is declared by each subclass: a ClassVar None (continuous), a dataclass field
    # (discrete) or a property (shifted); a default here would leak into the dataclass fields.
    support: np.ndarray | None

    # ---- distribution ----
    @abc.abstractmethod
    def cdf(self, x) -> np.ndarray:
        """``F(x) = P(X <= x)``, elementwise over any shape."""

    @abc.abstractmethod
    def ppf(self, p) -> np.ndarray:
        """Quantile function ``Q(p) = inf{x : F(x) >= p}``, elementwise; values in [0, 1]."""

    @abc.abstractmethod
    def logpdf(self, x) -> np.ndarray:
        """Log density (continuous) or log probability mass (discrete), elementwise."""

    @property
    @abc.abstractmethod
    def _moments(self) -> tuple[float, float]:
        """The exact mean and variance of the distribution that :meth:`ppf` samples from."""

    @property
    def mean(self) -> float:
        """Exact expected value of the distribution that :meth:`ppf` samples from."""
        return self._moments[0]

    @property
    def var(self) -> float:
        """Exact variance of the distribution that :meth:`ppf` samples from."""
        return self._moments[1]

    @property
    @abc.abstractmethod
    def df(self) -> float:
        """(Effective) number of parameters."""

    @abc.abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """JSON-able description from which :func:`margin_from_dict` rebuilds the margin."""

    # ---- derived ----
    def pdf(self, x) -> np.ndarray:
        """Density (continuous) or probability mass (discrete): ``exp(logpdf(x))``."""
        return np.exp(self.logpdf(x))

    @property
    def sd(self) -> float:
        """Standard deviation, ``sqrt(var)``."""
        return math.sqrt(max(self.var, 0.0))

    def loglik(self, x) -> float:
        """Log-likelihood ``sum_i logpdf(x_i)`` of the scores ``x``."""
        return float(np.sum(self.logpdf(_as_float_array(x))))

    def aic(self, x) -> float:
        """Akaike information criterion ``2 df - 2 loglik(x)``."""
        return 2.0 * self.df - 2.0 * self.loglik(x)

    def bic(self, x) -> float:
        """Bayesian information criterion ``log(n) df - 2 loglik(x)``, ``n = len(x)``."""
        n = np.size(x)
        return math.log(n) * self.df - 2.0 * self.loglik(x)

    def sample(self, n, rng=None) -> np.ndarray:
        """``n`` draws (an int or a shape) by inversion: ``ppf`` of uniforms from ``rng``.

        ``rng`` is None, an int seed, a :class:`numpy.random.SeedSequence` or a
        :class:`numpy.random.Generator` (used as is, so its stream continues).
        """
        return self.ppf(as_generator(rng).random(n))

    # ---- internals shared by the subclasses ----
    def _lower(self) -> float:
        """Infimum of the support (0 for continuous margins)."""
        return 0.0 if self.support is None else float(self.support[0])

    def _upper(self) -> float:
        """Supremum of the support (1 for continuous margins)."""
        return 1.0 if self.support is None else float(self.support[-1])

    def _density_points(self, x: np.ndarray) -> np.ndarray:
        """Where the density is evaluated for ``x``: ``x`` itself except for the beta (capped)."""
        return x

    def _quad_nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """Quadrature nodes and weights on [0, 1] suited to integrals of functions of the CDF."""
        return _graded_nodes()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(family={self.family!r}, mean={self.mean:.6g}, df={self.df:.4g})"
        )


class _DiscreteMixin:
    """cdf/ppf/logpdf/mean/var of a distribution given by ``support`` and the table ``_cdf``."""

    support: np.ndarray
    _cdf: np.ndarray  # cumulative probabilities at the support values, last exactly 1

    @property
    def pmf_table(self) -> np.ndarray:
        """Probability of each support value."""
        return np.diff(self._cdf, prepend=0.0)

    def cdf(self, x) -> np.ndarray:
        x = _as_float_array(x)
        # The tolerance makes a score that is a support value up to rounding count as that value.
        with np.errstate(invalid="ignore"):
            j = np.searchsorted(self.support, x + SUPPORT_TOL, side="right") - 1
        out = np.where(j >= 0, self._cdf[np.clip(j, 0, None)], 0.0)
        return np.where(np.isnan(x), np.nan, out)

    def ppf(self, p) -> np.ndarray:
        p = _as_float_array(p)
        # First index whose cdf >= p; the last cdf is exactly 1, so no index runs past the end.
        j = np.searchsorted(self._cdf, p, side="left")
        out = self.support[np.minimum(j, self.support.size - 1)]
        with np.errstate(invalid="ignore"):
            bad = ~((p >= 0.0) & (p <= 1.0))
        if bad.any():
            out = np.where(bad, np.nan, out)
        return out

    def logpdf(self, x) -> np.ndarray:
        x = _as_float_array(x)
        idx, ok = _support_index(x, self.support)
        with np.errstate(divide="ignore"):
            logp = np.log(self.pmf_table)
        return np.where(ok, logp[idx], np.where(np.isnan(x), np.nan, -np.inf))

    @functools.cached_property
    def _moments(self) -> tuple[float, float]:
        pmf = self.pmf_table
        mean = float(np.dot(pmf, self.support))
        var = float(np.dot(pmf, (self.support - mean) ** 2))
        return mean, var


def _cdf_table(pmf: np.ndarray) -> np.ndarray:
    """Cumulative sums of a probability table, normalised and ending exactly at 1."""
    pmf = np.clip(np.asarray(pmf, dtype=float), 0.0, None)
    c = np.cumsum(pmf / pmf.sum())
    # Guard the last value against rounding so that ppf(1) and ppf(p ~ 1) stay in the support.
    c = np.minimum(np.maximum.accumulate(c), 1.0)
    c[-1] = 1.0
    return _frozen(c)


# --------------------------------------------------------------------------------------------
# truncated normal
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class NormMargin(Margin):
    r"""Normal ``N(mu, sigma^2)`` truncated to [0, 1].

    .. math::

        f(x) = \frac{\phi((x - \mu)/\sigma)}{\sigma\,[\Phi(b) - \Phi(a)]},\quad
        a = -\mu/\sigma,\; b = (1 - \mu)/\sigma,\qquad 0 \le x \le 1.

    All functions are evaluated in log space (``log_ndtr``), reflecting the interval to the
    lower tail of the standard normal when ``a > 0``, so that far-off locations lose no
    precision. ``ppf`` is closed-form: ``Q(p) = mu + sigma * Phi^{-1}(Phi(a) + p [Phi(b) -
    Phi(a)])`` computed as ``ndtri_exp`` of a log-sum. ``mean`` and ``var`` are
    :class:`scipy.stats.truncnorm`'s.

    Parameters
    ----------
    mu, sigma : float
        Location and scale of the parent normal (not the mean and sd of the margin).
    """

    mu: float
    sigma: float
    family: ClassVar[str] = "norm"
    support: ClassVar[None] = None

    def __post_init__(self):
        if not (math.isfinite(self.mu) and math.isfinite(self.sigma) and self.sigma > 0):
            raise ValueError(
                f"norm margin needs finite mu and sigma > 0, got {self.mu}, {self.sigma}"
            )
        object.__setattr__(self, "_consts", _truncnorm_consts(self.mu, self.sigma))

    @property
    def df(self) -> float:
        return 2.0

    def cdf(self, x) -> np.ndarray:
        x = _as_float_array(x)
        flip, lo_log, hi_log, log_z = self._consts
        z = (np.clip(x, 0.0, 1.0) - self.mu) / self.sigma
        if flip:
            # P(a <= Z <= z) = P(-z <= Z' <= -a) = Phi(-a) - Phi(-z), Z' = -Z in the lower tail
            out = np.exp(_log_diff_exp(hi_log, special.log_ndtr(-z)) - log_z)
        else:
            out = np.exp(_log_diff_exp(special.log_ndtr(z), lo_log) - log_z)
        out = np.where(x >= 1.0, 1.0, np.where(x <= 0.0, 0.0, out))
        return np.where(np.isnan(x), np.nan, np.clip(out, 0.0, 1.0))

    def ppf(self, p) -> np.ndarray:
        p = _as_float_array(p)
        flip, lo_log, hi_log, _ = self._consts
        with np.errstate(divide="ignore", invalid="ignore"):
            log_p, log_q = np.log(p), np.log1p(-p)
            if flip:
                # quantile 1 - p of Z' = -Z on [-b, -a], which lies in the lower tail
                z = -special.ndtri_exp(np.logaddexp(lo_log + log_p, hi_log + log_q))
            else:
                z = special.ndtri_exp(np.logaddexp(lo_log + log_q, hi_log + log_p))
        out = np.clip(self.mu + self.sigma * z, 0.0, 1.0)
        with np.errstate(invalid="ignore"):
            bad = ~((p >= 0.0) & (p <= 1.0))
        if bad.any():
            out = np.where(bad, np.nan, out)
        return out

    def logpdf(self, x) -> np.ndarray:
        x = _as_float_array(x)
        z = (x - self.mu) / self.sigma
        out = -0.5 * z * z - _LOG_SQRT_2PI - math.log(self.sigma) - self._consts[3]
        with np.errstate(invalid="ignore"):
            inside = (x >= 0.0) & (x <= 1.0)
        return np.where(inside, out, np.where(np.isnan(x), np.nan, -np.inf))

    @functools.cached_property
    def _moments(self) -> tuple[float, float]:
        a, b = -self.mu / self.sigma, (1.0 - self.mu) / self.sigma
        m, v = stats.truncnorm.stats(a, b, loc=self.mu, scale=self.sigma, moments="mv")
        return float(m), float(v)

    def to_dict(self) -> dict[str, Any]:
        return {"family": "norm", "mu": float(self.mu), "sigma": float(self.sigma)}


def _truncnorm_consts(mu: float, sigma: float) -> tuple[bool, float, float, float]:
    """(flip, log Phi(lo), log Phi(hi), log Z) for the standardised interval, lower-tail side.

    ``[lo, hi] = [a, b]``, or ``[-b, -a]`` when ``a > 0`` (flip), so that ``Phi`` is never
    evaluated where it is close to 1 and differences of it lose precision.
    """
    a, b = -mu / sigma, (1.0 - mu) / sigma
    flip = a > 0.0
    lo, hi = (-b, -a) if flip else (a, b)
    lo_log, hi_log = float(special.log_ndtr(lo)), float(special.log_ndtr(hi))
    return flip, lo_log, hi_log, float(_log_diff_exp(hi_log, lo_log))


def _truncnorm_negloglik(params: np.ndarray, x: np.ndarray) -> tuple[float, np.ndarray]:
    """Negative log-likelihood of the truncated normal and its gradient in (mu, log sigma).

    ``l = -sum z_i^2 / 2 - n log sigma - n log Z`` with ``z_i = (x_i - mu)/sigma``;
    ``dl/dmu = sum z_i / sigma + n (phi(b) - phi(a)) / (sigma Z)`` and
    ``dl/dsigma = sum z_i^2 / sigma - n / sigma + n (b phi(b) - a phi(a)) / (sigma Z)``.
    """
    mu, log_sigma = float(params[0]), float(params[1])
    sigma = math.exp(log_sigma)
    n = x.size
    z = (x - mu) / sigma
    _, _, _, log_z = _truncnorm_consts(mu, sigma)
    a, b = -mu / sigma, (1.0 - mu) / sigma
    ll = -0.5 * float(np.dot(z, z)) - n * (_LOG_SQRT_2PI + log_sigma + log_z)
    # phi(a)/Z and phi(b)/Z in log space: both may be tiny over a tiny Z
    ra = math.exp(-0.5 * a * a - _LOG_SQRT_2PI - log_z)
    rb = math.exp(-0.5 * b * b - _LOG_SQRT_2PI - log_z)
    d_mu = float(z.sum()) / sigma + n * (rb - ra) / sigma
    d_sigma = float(np.dot(z, z)) / sigma - n / sigma + n * (b * rb - a * ra) / sigma
    return -ll, -np.array([d_mu, d_sigma * sigma])


def _fit_norm(x: np.ndarray) -> NormMargin:
    """Truncated normal by maximum likelihood with ``sigma >= 0.05`` (SLSQP)."""
    bounds = [_NORM_MU_BOUNDS, (math.log(NORM_MIN_SIGMA), math.log(_NORM_MAX_SIGMA))]
    sd = max(float(np.std(x, ddof=1)), NORM_MIN_SIGMA)
    # The truncated normal is an exponential family on [0, 1], so its log-likelihood is concave
    # in the natural parameters (mu / sigma^2, -1 / (2 sigma^2)) and has a single maximum; the
    # second start is used only if the first run fails.
    starts = [(float(np.mean(x)), math.log(sd)), (float(np.median(x)), math.log(2 * sd))]
    best = None
    for start in starts:
        res = optimize.minimize(
            _truncnorm_negloglik,
            np.clip(start, [b[0] for b in bounds], [b[1] for b in bounds]),
            args=(x,),
            jac=True,
            method="SLSQP",
            bounds=bounds,
            options=_MLE_OPTIONS,
        )
        if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
            best = res
        if res.success and np.isfinite(res.fun):
            break
    if best is None:
        raise ValueError("truncated-normal likelihood is not finite")
    return NormMargin(float(best.x[0]), float(math.exp(best.x[1])))


# --------------------------------------------------------------------------------------------
# beta
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class BetaMargin(Margin):
    r"""Beta distribution with shape parameters ``alpha`` and ``beta`` on [0, 1].

    .. math:: f(x) = \frac{x^{\alpha - 1} (1 - x)^{\beta - 1}}{B(\alpha, \beta)}

    Scores are capped to ``[1e-6, 1 - 1e-6]`` before the density is evaluated (fitting and
    :meth:`logpdf` alike): zeros and ones are common in IR scores and have zero or infinite
    beta density. A fitted margin has both shapes at least 1, as simIReff's (any shapes > 0
    may be given). ``cdf`` is the regularised incomplete beta function and ``ppf`` its
    inverse (``scipy.special.betaincinv``).
    ``mean = alpha / (alpha + beta)``, ``var = alpha beta / ((alpha + beta)^2 (alpha + beta + 1))``.
    """

    alpha: float
    beta: float
    family: ClassVar[str] = "beta"
    support: ClassVar[None] = None

    def __post_init__(self):
        if not (self.alpha > 0 and self.beta > 0 and math.isfinite(self.alpha + self.beta)):
            raise ValueError(f"beta margin needs alpha, beta > 0, got {self.alpha}, {self.beta}")

    @property
    def df(self) -> float:
        return 2.0

    def _density_points(self, x: np.ndarray) -> np.ndarray:
        return np.clip(x, BETA_CAP, 1.0 - BETA_CAP)

    def cdf(self, x) -> np.ndarray:
        x = _as_float_array(x)
        return special.betainc(self.alpha, self.beta, np.clip(x, 0.0, 1.0))

    def ppf(self, p) -> np.ndarray:
        p = _as_float_array(p)
        return np.clip(special.betaincinv(self.alpha, self.beta, p), 0.0, 1.0)

    def _raw_logpdf(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return (
                special.xlogy(self.alpha - 1.0, x)
                + special.xlog1py(self.beta - 1.0, -x)
                - special.betaln(self.alpha, self.beta)
            )

    def logpdf(self, x) -> np.ndarray:
        x = _as_float_array(x)
        with np.errstate(invalid="ignore"):
            inside = (x >= 0.0) & (x <= 1.0)
        out = self._raw_logpdf(self._density_points(x))
        return np.where(inside, out, np.where(np.isnan(x), np.nan, -np.inf))

    @property
    def _moments(self) -> tuple[float, float]:
        s = self.alpha + self.beta
        return self.alpha / s, self.alpha * self.beta / (s * s * (s + 1.0))

    def to_dict(self) -> dict[str, Any]:
        return {"family": "beta", "alpha": float(self.alpha), "beta": float(self.beta)}


def _fit_beta(x: np.ndarray) -> BetaMargin:
    """Beta by maximum likelihood on the capped data (SLSQP on log alpha, log beta), both
    shapes in [1, 1e6] (``_BETA_PARAM_BOUNDS``).

    ``l = (alpha - 1) S1 + (beta - 1) S2 - n log B(alpha, beta)`` with ``S1 = sum log x``,
    ``S2 = sum log(1 - x)``; ``dl/dalpha = S1 - n [psi(alpha) - psi(alpha + beta)]``. The
    beta is an exponential family, so the log-likelihood is concave and the optimum unique.
    """
    xc = np.clip(x, BETA_CAP, 1.0 - BETA_CAP)
    n = xc.size
    s1, s2 = float(np.log(xc).sum()), float(np.log1p(-xc).sum())

    def nll(theta):
        a, b = math.exp(theta[0]), math.exp(theta[1])
        ll = (a - 1.0) * s1 + (b - 1.0) * s2 - n * special.betaln(a, b)
        dab = special.digamma(a + b)
        ga = s1 - n * (special.digamma(a) - dab)
        gb = s2 - n * (special.digamma(b) - dab)
        return -ll, -np.array([ga * a, gb * b])

    m, v = float(xc.mean()), float(xc.var(ddof=1))
    common = m * (1.0 - m) / v - 1.0 if v > 0 else -1.0
    start = (m * common, (1.0 - m) * common) if common > 0 else (1.0, 1.0)
    lb, ub = math.log(_BETA_PARAM_BOUNDS[0]), math.log(_BETA_PARAM_BOUNDS[1])
    res = optimize.minimize(
        nll,
        np.clip(np.log(start), lb, ub),
        jac=True,
        method="SLSQP",
        bounds=[(lb, ub), (lb, ub)],
        options=_MLE_OPTIONS,
    )
    if not np.isfinite(res.fun):
        raise ValueError("beta likelihood is not finite")
    return BetaMargin(float(math.exp(res.x[0])), float(math.exp(res.x[1])))


# --------------------------------------------------------------------------------------------
# kernel
# --------------------------------------------------------------------------------------------


def silverman_bandwidth(x: np.ndarray) -> float:
    """Silverman's rule of thumb ``h = 0.9 min(sd, IQR / 1.34) n^(-1/5)``.

    Uses the sample sd alone when the interquartile range is 0 (more than half the scores
    equal, e.g. zeros). Silverman (1986), *Density Estimation*, eq. (3.31).
    """
    x = np.asarray(x, dtype=float)
    sd = float(np.std(x, ddof=1))
    q75, q25 = np.percentile(x, [75, 25])
    iqr = float(q75 - q25) / 1.34
    spread = min(sd, iqr) if iqr > 0 else sd
    return 0.9 * spread * x.size ** (-0.2)


@dataclass(frozen=True, eq=False, repr=False)
class KernelMargin(Margin):
    r"""Gaussian kernel density estimate truncated to [0, 1], held on a grid.

    The truncated estimate has CDF

    .. math::

        F(x) = \frac{\sum_i [\Phi((x - x_i)/h) - \Phi(-x_i/h)]}
                    {\sum_i [\Phi((1 - x_i)/h) - \Phi(-x_i/h)]}, \qquad 0 \le x \le 1.

    It is evaluated exactly at the ``G + 1 = 2049`` points ``t_j = j / G`` and taken as linear
    in between, i.e. the density is piecewise constant, ``G (F(t_{j+1}) - F(t_j))`` on each
    cell. Everything is computed for that piecewise-uniform distribution: ``ppf`` by
    ``np.interp`` of the table, ``logpdf`` from the cell densities, and

    .. math::

        E X = \sum_j w_j \frac{t_j + t_{j+1}}{2},\qquad
        E X^2 = \sum_j w_j \frac{t_j^2 + t_j t_{j+1} + t_{j+1}^2}{3},
        \qquad w_j = F(t_{j+1}) - F(t_j),

    so the moments are exactly those of the draws. The grid differs from the smooth estimate by
    ``O(G^-2)`` in the CDF (~1e-6 for typical bandwidths).

    The effective number of parameters is the trace of the smoother, as in simIReff:
    ``df = mean_i K_h(0) / fhat(x_i) = sum_i 1 / sum_j exp(-(x_i - x_j)^2 / (2 h^2))`` with
    ``fhat`` the untruncated estimate.

    Parameters
    ----------
    data : array
        The scores the estimate is built from.
    bandwidth : float
        Standard deviation ``h`` of the Gaussian kernel (``fit_margin`` uses
        :func:`silverman_bandwidth`).
    """

    data: np.ndarray
    bandwidth: float
    family: ClassVar[str] = "kernel"
    support: ClassVar[None] = None
    _grid: np.ndarray = field(init=False, repr=False)
    _gcdf: np.ndarray = field(init=False, repr=False)
    _df: float = field(init=False, repr=False)

    def __post_init__(self):
        data = _frozen(self.data).ravel()
        h = float(self.bandwidth)
        if not (h > 0 and math.isfinite(h)):
            raise ValueError(f"kernel bandwidth must be positive, got {h}")
        if data.size == 0 or not np.all(np.isfinite(data)):
            raise ValueError("kernel margin needs finite data")
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "bandwidth", h)
        grid = np.linspace(0.0, 1.0, KERNEL_GRID + 1)
        raw = np.zeros(grid.size)
        for start in range(0, data.size, 256):  # blocks bound the memory of the n x G array
            xb = data[start : start + 256, None]
            # Phi((t - x_i)/h) - Phi(-x_i/h): both terms are < 1 - Phi(0) apart from the first,
            # so there is no cancellation of two numbers close to 1.
            raw += (special.ndtr((grid[None, :] - xb) / h) - special.ndtr(-xb / h)).sum(axis=0)
        if not raw[-1] > 0:
            raise ValueError("kernel estimate has no mass on [0, 1]")
        gcdf = np.maximum.accumulate(np.clip(raw / raw[-1], 0.0, 1.0))
        gcdf[0], gcdf[-1] = 0.0, 1.0
        tr = 0.0
        for start in range(0, data.size, 1024):
            d = data[start : start + 1024, None] - data[None, :]
            tr += float(np.sum(1.0 / np.exp(-0.5 * (d / h) ** 2).sum(axis=1)))
        object.__setattr__(self, "_grid", _frozen(grid))
        object.__setattr__(self, "_gcdf", _frozen(gcdf))
        object.__setattr__(self, "_df", tr)

    @property
    def df(self) -> float:
        return self._df

    @functools.cached_property
    def _inverse_table(self) -> tuple[np.ndarray, np.ndarray]:
        # Keep the last knot of every run of equal CDF values (cells of zero density), so that
        # np.interp sees strictly increasing abscissae and Q(p) is the left end of the support
        # of the next cell with mass.
        keep = np.r_[np.diff(self._gcdf) > 0, True]
        return self._gcdf[keep], self._grid[keep]

    def cdf(self, x) -> np.ndarray:
        x = _as_float_array(x)
        return np.interp(x, self._grid, self._gcdf)

    def ppf(self, p) -> np.ndarray:
        p = _as_float_array(p)
        xp, fp = self._inverse_table
        out = np.interp(p, xp, fp)
        with np.errstate(invalid="ignore"):
            bad = ~((p >= 0.0) & (p <= 1.0))
        if bad.any():
            out = np.where(bad, np.nan, out)
        return out

    @property
    def cell_density(self) -> np.ndarray:
        """The piecewise-constant density on each of the ``G`` grid cells."""
        return np.diff(self._gcdf) * KERNEL_GRID

    def logpdf(self, x) -> np.ndarray:
        x = _as_float_array(x)
        with np.errstate(invalid="ignore"):
            inside = (x >= 0.0) & (x <= 1.0)
        j = np.clip(np.floor(np.nan_to_num(x) * KERNEL_GRID), 0, KERNEL_GRID - 1).astype(np.intp)
        with np.errstate(divide="ignore"):
            logd = np.log(self.cell_density)
        return np.where(inside, logd[j], np.where(np.isnan(x), np.nan, -np.inf))

    @functools.cached_property
    def _moments(self) -> tuple[float, float]:
        w = np.diff(self._gcdf)
        t0, t1 = self._grid[:-1], self._grid[1:]
        m = float(np.dot(w, 0.5 * (t0 + t1)))
        m2 = float(np.dot(w, (t0 * t0 + t0 * t1 + t1 * t1) / 3.0))
        return m, max(m2 - m * m, 0.0)

    @functools.cached_property
    def _nodes(self) -> tuple[np.ndarray, np.ndarray]:
        # 8 Gauss-Legendre points per grid cell: the CDF is linear within a cell, so any smooth
        # function of it (a power, for transform_mean) is integrated to near machine precision.
        return _gauss_legendre_nodes(self._grid, 8)

    def _quad_nodes(self) -> tuple[np.ndarray, np.ndarray]:
        return self._nodes

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": "kernel",
            "bandwidth": float(self.bandwidth),
            "data": [float(v) for v in self.data],
        }


def _fit_kernel(x: np.ndarray) -> KernelMargin:
    h = silverman_bandwidth(x)
    if not h > 0:
        raise ValueError("kernel bandwidth is 0 (all scores equal)")
    return KernelMargin(x, h)


# --------------------------------------------------------------------------------------------
# discrete families
# --------------------------------------------------------------------------------------------


def _betabinom_logpmf(j: np.ndarray, k: int, a: float, b: float) -> np.ndarray:
    """``log C(k, j) + log B(j + a, k - j + b) - log B(a, b)``."""
    return (
        special.gammaln(k + 1.0)
        - special.gammaln(j + 1.0)
        - special.gammaln(k - j + 1.0)
        + special.betaln(j + a, k - j + b)
        - special.betaln(a, b)
    )


@dataclass(frozen=True, eq=False, repr=False)
class BBinomMargin(_DiscreteMixin, Margin):
    r"""Beta-binomial over the index of a support of ``k + 1`` values.

    ``X = support[J]`` with ``J ~ BetaBinomial(k, a, b)``:

    .. math:: P(J = j) = \binom{k}{j} \frac{B(j + a, k - j + b)}{B(a, b)},\qquad j = 0..k.

    Suits P@k (support 0, 1/k, ..., 1) and, through the index, any ordered support such as
    that of RR. ``fit_margin`` estimates ``a, b >= 1`` by maximum likelihood, as simIReff.
    """

    support: np.ndarray
    a: float
    b: float
    family: ClassVar[str] = "bbinom"
    discrete: ClassVar[bool] = True
    _cdf: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        s = _check_support(self.support)
        if not (self.a > 0 and self.b > 0 and math.isfinite(self.a + self.b)):
            raise ValueError(f"bbinom margin needs a, b > 0, got {self.a}, {self.b}")
        k = s.size - 1
        logp = _betabinom_logpmf(np.arange(k + 1.0), k, self.a, self.b)
        object.__setattr__(self, "support", _frozen(s))
        object.__setattr__(self, "_cdf", _cdf_table(np.exp(logp - logp.max())))

    @property
    def df(self) -> float:
        return 2.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": "bbinom",
            "support": [float(v) for v in self.support],
            "a": float(self.a),
            "b": float(self.b),
        }


def _fit_bbinom(idx: np.ndarray, support: np.ndarray) -> BBinomMargin:
    """Beta-binomial by maximum likelihood with ``a, b >= 1`` (SLSQP on log a, log b).

    With counts ``c_j`` of each index, ``dl/da = sum_j c_j [psi(j + a) - psi(k + a + b)]
    - n [psi(a) - psi(a + b)]`` and symmetrically for ``b``.
    """
    k = support.size - 1
    j = np.arange(k + 1.0)
    c = np.bincount(idx, minlength=k + 1).astype(float)
    n = c.sum()

    def nll(theta):
        a, b = math.exp(theta[0]), math.exp(theta[1])
        ll = float(np.dot(c, _betabinom_logpmf(j, k, a, b)))
        dk = special.digamma(k + a + b)
        dab = special.digamma(a + b)
        ga = float(np.dot(c, special.digamma(j + a) - dk)) - n * (special.digamma(a) - dab)
        gb = float(np.dot(c, special.digamma(k - j + b) - dk)) - n * (special.digamma(b) - dab)
        return -ll, -np.array([ga * a, gb * b])

    lb, ub = math.log(_BBINOM_PARAM_BOUNDS[0]), math.log(_BBINOM_PARAM_BOUNDS[1])
    m = float(np.dot(c, j) / (n * k))
    v = float(np.dot(c, (j / k - m) ** 2) / n)
    common = m * (1.0 - m) / v - 1.0 if v > 0 else 10.0
    starts = [(1.0, 1.0)]
    if common > 0 and 0 < m < 1:
        starts.append((m * common, (1.0 - m) * common))
    # the beta-binomial likelihood need not be concave: keep the best of two starts
    best = None
    for start in starts:
        res = optimize.minimize(
            nll,
            np.clip(np.log(np.maximum(start, 1e-300)), lb, ub),
            jac=True,
            method="SLSQP",
            bounds=[(lb, ub), (lb, ub)],
            options=_MLE_OPTIONS,
        )
        if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        raise ValueError("beta-binomial likelihood is not finite")
    return BBinomMargin(support, float(math.exp(best.x[0])), float(math.exp(best.x[1])))


def _wang_ryzin_matrix(lam: float, ix: np.ndarray, iy: np.ndarray) -> np.ndarray:
    """Wang & van Ryzin kernel ``l(x, y) = 1 - lam`` if ``x = y``, else
    ``(1 - lam)/2 * lam^|x - y|``, for all pairs of ``ix`` and ``iy``."""
    d = np.abs(ix[:, None] - iy[None, :]).astype(float)
    with np.errstate(invalid="ignore"):
        return np.where(d == 0, 1.0 - lam, 0.5 * (1.0 - lam) * np.power(lam, d))


def _dkernel_cv_ls(idx: np.ndarray) -> float:
    r"""Least-squares cross-validated Wang-van Ryzin bandwidth of ordered data ``idx``.

    The criterion is that of statsmodels' ``KDEMultivariate(var_type="o", bw="cv_ls")``
    (Li & Racine 2007, eq. 2.4):

    .. math::

        CV(\lambda) = \frac{1}{n^2} \sum_{u \in U} \Big(\sum_i l(x_i, u)\Big)^2
        - \frac{2}{n (n - 1)} \sum_i \sum_{j \ne i} l(x_j, x_i),

    ``U`` the distinct observed values, minimised by the same Nelder-Mead search from the same
    start (``1.06 sd n^(-1/5)``, ``xtol = 1e-3``) and the same bounds (negative values become
    1e-10, values above 1 become 1). statsmodels evaluates it with Python loops over the
    observations (~0.5 s per fit at n = 50); here it is a few vectorised operations on the
    counts of the distinct values.
    """
    u, c = np.unique(idx, return_counts=True)
    c = c.astype(float)
    n = float(idx.size)

    def crit(bw):
        lam = float(np.asarray(bw).ravel()[0])
        K = _wang_ryzin_matrix(lam, u, u)
        g = K @ c  # g(u) = sum_i l(x_i, u)
        first = float(np.dot(g, g)) / n**2
        loo = float(np.dot(c, g - (1.0 - lam)))
        return first - 2.0 * loo / (n * (n - 1.0))

    h0 = 1.06 * float(np.std(idx.astype(float))) * n ** (-1.0 / 5.0)
    bw = optimize.fmin(crit, x0=np.array([h0]), maxiter=1000, maxfun=1000, disp=0, xtol=1e-3)
    lam = float(bw[0])
    if lam < 0:
        lam = 1e-10
    return min(lam, 1.0)


@dataclass(frozen=True, eq=False, repr=False)
class DKernelMargin(_DiscreteMixin, Margin):
    r"""Ordered-kernel (Wang & van Ryzin 1981) smoothing over the index of the support.

    .. math::

        p(s_k) \propto \frac{1}{n} \sum_i l(k, j_i),\qquad
        l(k, j) = \begin{cases} 1 - \lambda & k = j \\
        \tfrac{1 - \lambda}{2} \lambda^{|k - j|} & k \ne j \end{cases}

    with ``j_i`` the support index of score ``i``, normalised over the support (the kernel
    loses mass beyond the ends). ``fit_margin`` chooses ``lambda`` by least-squares
    cross-validation (:func:`_dkernel_cv_ls`, statsmodels' criterion), as simIReff does with
    R's ``np``. Effective number of parameters, as simIReff:
    ``df = mean_i (1 - lambda) / p(x_i)``.

    Parameters
    ----------
    support : array
        The possible values.
    index : array of int
        Support index of each observed score.
    bandwidth : float
        ``lambda`` in [0, 1).
    """

    support: np.ndarray
    index: np.ndarray
    bandwidth: float
    family: ClassVar[str] = "dkernel"
    discrete: ClassVar[bool] = True
    _cdf: np.ndarray = field(init=False, repr=False)
    _df: float = field(init=False, repr=False)

    def __post_init__(self):
        s = _check_support(self.support)
        idx = np.asarray(self.index)
        if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError("dkernel index must be a non-empty 1-D integer array")
        if idx.min() < 0 or idx.max() >= s.size:
            raise ValueError("dkernel index out of the support's range")
        lam = float(self.bandwidth)
        if not (0.0 <= lam < 1.0):
            raise ValueError(f"dkernel bandwidth must be in [0, 1), got {lam}")
        idx = idx.astype(np.intp)
        idx.setflags(write=False)
        k = np.arange(s.size)
        dens = _wang_ryzin_matrix(lam, k, idx).mean(axis=1)
        if not dens.sum() > 0:
            raise ValueError("dkernel estimate has no mass")
        pmf = dens / dens.sum()
        with np.errstate(divide="ignore"):
            df = float(np.mean((1.0 - lam) / pmf[idx]))
        object.__setattr__(self, "support", _frozen(s))
        object.__setattr__(self, "index", idx)
        object.__setattr__(self, "bandwidth", lam)
        object.__setattr__(self, "_cdf", _cdf_table(pmf))
        object.__setattr__(self, "_df", df)

    @property
    def df(self) -> float:
        return self._df

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": "dkernel",
            "support": [float(v) for v in self.support],
            "index": [int(v) for v in self.index],
            "bandwidth": float(self.bandwidth),
        }


def _fit_dkernel(idx: np.ndarray, support: np.ndarray) -> DKernelMargin:
    lam = _dkernel_cv_ls(idx)
    if lam >= 1.0:
        raise ValueError("cross-validated bandwidth is 1 (no information)")
    return DKernelMargin(support, idx, lam)


# --------------------------------------------------------------------------------------------
# mean transformation
# --------------------------------------------------------------------------------------------


def _b_cdf(u: np.ndarray, theta: float, up: bool) -> np.ndarray:
    """``B(u)``: ``u^theta`` (up) or ``1 - (1 - u)^theta`` (down)."""
    with np.errstate(divide="ignore"):
        if up:
            return np.exp(theta * np.log(u))
        return -np.expm1(theta * np.log1p(-u))


def _b_ppf(p: np.ndarray, theta: float, up: bool) -> np.ndarray:
    """``B^{-1}(p)``: ``p^(1/theta)`` (up) or ``1 - (1 - p)^(1/theta)`` (down)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if up:
            return np.exp(np.log(p) / theta)
        return -np.expm1(np.log1p(-p) / theta)


def _shift_moments_fn(base: Margin) -> Callable[[float, bool], tuple[float, float]]:
    """``(theta, up) -> (mean, var)`` of the margin with CDF ``B(F(x))``.

    Discrete: exact sums over the support with the new cumulative table. Continuous:
    ``E X = int_0^1 (1 - B(F(x))) dx`` and ``E X^2 = int_0^1 2 x (1 - B(F(x))) dx`` by the
    base's quadrature nodes (Gauss-Legendre per kernel grid cell, or graded at the ends);
    ``F`` is evaluated at the nodes once, so each ``theta`` costs a few array operations.
    """
    if base.discrete:
        s = base.support
        F = base.cdf(s)

        def moments(theta, up):
            c = _shifted_cdf_table(F, theta, up)
            pmf = np.diff(c, prepend=0.0)
            m = float(np.dot(pmf, s))
            return m, float(np.dot(pmf, (s - m) ** 2))

        return moments

    x, w = base._quad_nodes()
    F = np.clip(base.cdf(x), 0.0, 1.0)
    w1, w2 = w, 2.0 * w * x

    def moments(theta, up):
        tail = 1.0 - _b_cdf(F, theta, up)
        m = float(np.dot(w1, tail))
        m2 = float(np.dot(w2, tail))
        return m, max(m2 - m * m, 0.0)

    return moments


def _shifted_cdf_table(F: np.ndarray, theta: float, up: bool) -> np.ndarray:
    c = np.clip(_b_cdf(np.asarray(F, dtype=float), theta, up), 0.0, 1.0)
    c = np.maximum.accumulate(c)
    c[-1] = 1.0
    return c


@dataclass(frozen=True, eq=False, repr=False)
class ShiftedMargin(Margin):
    r"""A margin moved by a beta-CDF transformation of its CDF (Urbano & Nagler 2018).

    .. math:: F'(x) = B(F(x); a, b)

    with the one-parameter choice ``(a, b) = (theta, 1)`` to raise the mean
    (``B(u) = u^theta``, ``B^{-1}(p) = p^(1/theta)``) and ``(a, b) = (1, theta)`` to lower it
    (``B(u) = 1 - (1 - u)^theta``, ``B^{-1}(p) = 1 - (1 - p)^(1/theta)``), ``theta >= 1``.
    Hence ``ppf(p) = base.ppf(B^{-1}(p))`` (as fast as the base's), ``cdf = B(base.cdf)``, and
    for a continuous base ``logpdf = log B'(F(x)) + base.logpdf(x)`` with
    ``log B'(u) = log theta + (theta - 1) log u`` (up) or ``... log(1 - u)`` (down).

    The moments are computed, not estimated: continuous ``E X = int_0^1 (1 - F'(x)) dx`` by
    the base's quadrature nodes; discrete, exact sums with the transformed cumulative table
    (made non-decreasing, as simIReff), from which ``ppf`` then reads directly: the first
    support value with ``B(F(s)) >= p`` is the same as ``base.ppf(B^{-1}(p))``.

    Parameters
    ----------
    base : Margin
    theta : float
        ``>= 1``; 1 is the identity.
    up : bool
        True to raise the mean (``B(u) = u^theta``), False to lower it.
    """

    base: Margin
    theta: float
    up: bool

    def __post_init__(self):
        if not isinstance(self.base, Margin):
            raise ValueError("base must be a Margin")
        if not (self.theta >= 1.0 and math.isfinite(self.theta)):
            raise ValueError(f"theta must be a finite number >= 1, got {self.theta}")
        object.__setattr__(self, "theta", float(self.theta))
        object.__setattr__(self, "up", bool(self.up))
        if self.base.discrete:
            F = self.base.cdf(self.base.support)
            object.__setattr__(self, "_cdf", _frozen(_shifted_cdf_table(F, self.theta, self.up)))

    @functools.cached_property
    def _moments(self) -> tuple[float, float]:
        return _shift_moments_fn(self.base)(self.theta, self.up)

    @property
    def family(self) -> str:  # type: ignore[override]
        return f"shift({self.base.family})"

    @property
    def discrete(self) -> bool:  # type: ignore[override]
        return self.base.discrete

    @property
    def support(self) -> np.ndarray | None:  # type: ignore[override]
        return self.base.support

    @property
    def df(self) -> float:
        return self.base.df

    def _density_points(self, x: np.ndarray) -> np.ndarray:
        return self.base._density_points(x)

    def _quad_nodes(self) -> tuple[np.ndarray, np.ndarray]:
        return self.base._quad_nodes()

    def cdf(self, x) -> np.ndarray:
        if self.discrete:
            return _DiscreteMixin.cdf(self, x)
        return _b_cdf(np.clip(self.base.cdf(x), 0.0, 1.0), self.theta, self.up)

    def ppf(self, p) -> np.ndarray:
        if self.discrete:
            return _DiscreteMixin.ppf(self, p)
        p = _as_float_array(p)
        return self.base.ppf(_b_ppf(p, self.theta, self.up))

    @property
    def pmf_table(self) -> np.ndarray:
        """Discrete base: probability of each support value."""
        if not self.discrete:
            raise AttributeError("pmf_table is defined for discrete margins only")
        return np.diff(self._cdf, prepend=0.0)

    def logpdf(self, x) -> np.ndarray:
        if self.discrete:
            return _DiscreteMixin.logpdf(self, x)
        x = _as_float_array(x)
        u = np.clip(self.base.cdf(self._density_points(x)), 0.0, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.up:
                logb = math.log(self.theta) + special.xlogy(self.theta - 1.0, u)
            else:
                logb = math.log(self.theta) + special.xlog1py(self.theta - 1.0, -u)
        return logb + self.base.logpdf(x)

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "theta": float(self.theta),
            "up": bool(self.up),
            "base": self.base.to_dict(),
        }


def transform_mean(margin: Margin, mean: float, *, tol: float = 1e-10) -> ShiftedMargin:
    r"""A margin with expected value ``mean``, by a beta-CDF transformation of ``margin``.

    Urbano & Nagler (2018), section "transformation": the new CDF is ``F'(x) = B(F(x); a, b)``
    with ``B`` the beta CDF; a single parameter ``theta >= 1`` is used, ``(a, b) = (theta, 1)``
    to raise the mean and ``(1, theta)`` to lower it (see :class:`ShiftedMargin`). ``theta``
    is found by Brent's method on ``log theta`` so that the new mean (computed exactly, see
    :class:`ShiftedMargin`) is within ``tol`` of the target. The transformation keeps the
    support and the ranks: ``ppf'(p) = ppf(B^{-1}(p))`` is a monotone map of the same
    uniforms, so a copula's dependence is untouched.

    Parameters
    ----------
    margin : Margin
        Any margin, continuous or discrete (also one already shifted).
    mean : float
        Target expected value, strictly between the ends of the support ((0, 1) for a
        continuous margin).
    tol : float
        Largest accepted ``|new mean - mean|``.

    Raises
    ------
    ValueError
        The target is outside the open interval of the support, or beyond what ``theta`` up to
        ``~1e15`` reaches (a margin whose mass stops short of the support's end).
    """
    if not isinstance(margin, Margin):
        raise ValueError(f"margin must be a Margin, got {type(margin).__name__}")
    target = float(mean)
    lo, hi = margin._lower(), margin._upper()
    if not (lo < target < hi):
        raise ValueError(f"target mean {target!r} is outside the open interval ({lo}, {hi})")
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol}")
    moments = _shift_moments_fn(margin)
    m0 = moments(1.0, True)[0]
    if abs(m0 - target) <= tol:
        return ShiftedMargin(margin, 1.0, True)
    up = target > m0

    def gap(log_theta):
        return moments(math.exp(log_theta), up)[0] - target

    # the mean is monotone in theta; bracket the root by doubling log(theta)
    a, b = 0.0, 0.5
    while (gap(b) < 0) == up:
        a, b = b, 2.0 * b
        if b > _MAX_LOG_THETA:
            limit = moments(math.exp(_MAX_LOG_THETA), up)[0]
            raise ValueError(
                f"target mean {target!r} cannot be reached: the mean of this margin only goes "
                f"to {limit:.6g} by the transformation"
            )
    log_theta = optimize.brentq(gap, a, b, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500)
    out = ShiftedMargin(margin, math.exp(log_theta), up)
    if abs(out.mean - target) > tol:
        raise ValueError(f"could not match the target mean {target!r} to {tol} (got {out.mean!r})")
    return out


# --------------------------------------------------------------------------------------------
# fitting, selection, serialisation
# --------------------------------------------------------------------------------------------

_CONTINUOUS_FITTERS: dict[str, Callable[[np.ndarray], Margin]] = {
    "norm": _fit_norm,
    "beta": _fit_beta,
    "kernel": _fit_kernel,
}
_DISCRETE_FITTERS: dict[str, Callable[[np.ndarray, np.ndarray], Margin]] = {
    "bbinom": _fit_bbinom,
    "dkernel": _fit_dkernel,
}


def _check_families(families, discrete: bool) -> tuple[str, ...]:
    if families is None:
        return DISCRETE_FAMILIES if discrete else CONTINUOUS_FAMILIES
    if isinstance(families, str):
        families = (families,)
    fams = tuple(families)
    if not fams:
        raise ValueError("families is empty")
    known = CONTINUOUS_FAMILIES + DISCRETE_FAMILIES
    for f in fams:
        if f not in known:
            raise ValueError(f"unknown family {f!r}; known: {', '.join(known)}")
        if discrete and f in CONTINUOUS_FAMILIES:
            raise ValueError(f"family {f!r} is continuous but a support was given")
        if not discrete and f in DISCRETE_FAMILIES:
            raise ValueError(f"family {f!r} is discrete and needs a support")
    return fams


def fit_margin(
    x,
    *,
    families: str | Sequence[str] | None = None,
    criterion: str = "aic",
    support=None,
) -> Margin:
    """Fit candidate families to the scores ``x`` and return the best one.

    Parameters
    ----------
    x : array-like, 1-D
        At least 3 finite scores within [0, 1] (e.g. one system's AP over the topics).
    families : str or sequence of str, optional
        Candidates. Default: all of :data:`CONTINUOUS_FAMILIES` (``support`` None) or of
        :data:`DISCRETE_FAMILIES` (``support`` given).
    criterion : {"aic", "bic", "loglik"}
        Lowest AIC (``2 df - 2 loglik``), lowest BIC (``log(n) df - 2 loglik``) or highest
        log-likelihood. Ties go to the earlier family in ``families``.
    support : array-like, optional
        The possible values of a discrete measure (e.g. ``np.linspace(0, 1, 11)`` for P@10).
        Every score must be within 1e-9 of one of them.

    Returns
    -------
    Margin

    Raises
    ------
    ValueError
        Invalid input (shape, too few values, non-finite or out-of-range values, an
        off-support value, unknown family or criterion), or no family could be fitted. A
        family whose fit fails is skipped.
    """
    if criterion not in CRITERIA:
        raise ValueError(f"unknown criterion {criterion!r}; known: {', '.join(CRITERIA)}")
    arr = _check_scores(x)
    discrete = support is not None
    fams = _check_families(families, discrete)
    if discrete:
        s = _check_support(support)
        idx = _match_support(arr, s)
        fitted = _fit_each(fams, lambda f: _DISCRETE_FITTERS[f](idx, s), arr)
    else:
        fitted = _fit_each(fams, lambda f: _CONTINUOUS_FITTERS[f](arr), arr)
    return _select(fitted, arr, criterion)


def _fit_each(fams: Iterable[str], fit: Callable[[str], Margin], x: np.ndarray):
    fitted, failures = [], []
    for f in fams:
        try:
            m = fit(f)
            ll = m.loglik(x)
            if not math.isfinite(ll):
                raise ValueError("log-likelihood is not finite")
        except (ValueError, ArithmeticError, RuntimeError, np.linalg.LinAlgError) as exc:
            failures.append(f"{f}: {exc}")
            continue
        fitted.append((m, ll))
    if not fitted:
        raise ValueError("no family could be fitted (" + "; ".join(failures) + ")")
    return fitted


def _select(fitted, x: np.ndarray, criterion: str) -> Margin:
    n = x.size

    def score(item):
        m, ll = item
        if criterion == "loglik":
            return -ll
        penalty = 2.0 if criterion == "aic" else math.log(n)
        return penalty * m.df - 2.0 * ll

    return min(fitted, key=score)[0]


def fit_margins(
    X,
    *,
    families: str | Sequence[str] | None = None,
    criterion: str = "aic",
    support=None,
) -> list[Margin]:
    """:func:`fit_margin` for each row of ``X`` (systems x topics).

    Raises
    ------
    ValueError
        ``X`` is not 2-D, or a row cannot be fitted (the message names the row).
    """
    arr = _as_float_array(X, "X")
    if arr.ndim != 2:
        raise ValueError(f"X must be 2-D (systems x topics), got shape {arr.shape}")
    out = []
    for i, row in enumerate(arr):
        try:
            out.append(fit_margin(row, families=families, criterion=criterion, support=support))
        except ValueError as exc:
            raise ValueError(f"row {i}: {exc}") from None
    return out


def margin_from_dict(d: dict[str, Any]) -> Margin:
    """Rebuild a margin from :meth:`Margin.to_dict`; the result has identical ``ppf`` values."""
    if not isinstance(d, dict) or "family" not in d:
        raise ValueError("a margin dict needs a 'family' key")
    fam = d["family"]
    try:
        if fam == "norm":
            return NormMargin(float(d["mu"]), float(d["sigma"]))
        if fam == "beta":
            return BetaMargin(float(d["alpha"]), float(d["beta"]))
        if fam == "kernel":
            return KernelMargin(np.asarray(d["data"], dtype=float), float(d["bandwidth"]))
        if fam == "bbinom":
            return BBinomMargin(np.asarray(d["support"], dtype=float), float(d["a"]), float(d["b"]))
        if fam == "dkernel":
            return DKernelMargin(
                np.asarray(d["support"], dtype=float),
                np.asarray(d["index"], dtype=np.intp),
                float(d["bandwidth"]),
            )
        if isinstance(fam, str) and fam.startswith("shift("):
            return ShiftedMargin(margin_from_dict(d["base"]), float(d["theta"]), bool(d["up"]))
    except KeyError as exc:
        raise ValueError(f"margin dict for {fam!r} lacks the key {exc}") from None
    raise ValueError(f"unknown margin family {fam!r}")
