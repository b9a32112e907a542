r"""Paired comparisons of two systems, or every pair of a matrix, with effect sizes and intervals.

The statistics IR evaluation adopted with Sakai's "statistical reform" [S14]_ [S18]_: for a pair
of systems (a, b) scored on the same n topics, with per-topic differences
:math:`z_i = s_{a,i} - s_{b,i}`, report the size of the difference and an interval for it, not
only a p-value. Five paired tests, all two-sided (p-value; estimate and interval; who computes):

* ``"t"``: paired Student t; mean, t interval; ``scipy.stats.ttest_rel``.
* ``"wilcoxon"``: signed rank; Hodges-Lehmann pseudo-median, Walsh-average interval; p by
  ``scipy.stats.wilcoxon``, estimate and interval here.
* ``"sign"``: exact sign test; median, order-statistic interval; the binomial law (as
  ``scipy.stats.binomtest`` and ``scipy.stats.quantile_test``).
* ``"randomization"``: Fisher's sign flips [SAC07]_; mean, inverted-test interval; here (the
  p-value is ``scipy.stats.permutation_test``'s on the same sign vectors).
* ``"bootstrap"``: Sakai's studentised ASL [S06]_; mean, BCa or percentile interval; ASL here
  (:mod:`metaeval.meta`'s machinery), intervals by ``scipy.stats.bootstrap``.

Every function works on per-topic score vectors (one pair) or on a systems x topics matrix
(:func:`paired_comparisons`, vectorised over all the pairs of a declared family). The test
suite checks every number against scipy where scipy computes the same thing, and against
brute-force enumeration where it does not.

Standardised effect sizes [S14]_ [S18]_: :math:`d_z = \bar z / s_z` (the mean difference over the
standard deviation of the differences, ddof = 1) and, given the residual variance :math:`V_E` of a
two-way ANOVA without replication over the systems x topics matrix,
:math:`d = \bar z / \sqrt{V_E}` (Sakai's textbook effect size, comparable across pairs because
every pair shares :math:`V_E`).

References
----------
.. [S14] T. Sakai (2014). Statistical reform in information retrieval? SIGIR Forum 48(1).
.. [S18] T. Sakai (2018). Laboratory Experiments in Information Retrieval: Sample Sizes, Effect
   Sizes, and Statistical Power. Springer.
.. [S06] T. Sakai (2006). Evaluating evaluation metrics based on the bootstrap. SIGIR 2006.
.. [SAC07] M. D. Smucker, J. Allan, B. Carterette (2007). A comparison of statistical
   significance tests for information retrieval evaluation. CIKM 2007.
.. [PS10] B. Phipson, G. K. Smyth (2010). Permutation p-values should never be zero. Stat. Appl.
   Genet. Mol. Biol. 9(1).
.. [HL63] J. L. Hodges, E. L. Lehmann (1963). Estimates of location based on rank tests. Ann.
   Math. Statist. 34(2).
.. [E87] B. Efron (1987). Better bootstrap confidence intervals. JASA 82(397).
.. [C99] W. J. Conover (1999). Practical Nonparametric Statistics, 3rd ed., §3.6 (sign test,
   confidence interval for a quantile).
.. [LR05] E. L. Lehmann, J. P. Romano (2005). Testing Statistical Hypotheses, 3rd ed., §3.5
   (confidence sets by inverting tests).
"""

from __future__ import annotations

import functools
import itertools
import math
import types
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from metaeval._validation import as_generator, check_alpha, check_choice, check_real
from metaeval._warnings import warn
from metaeval.meta._resampling import (
    STAT_ATOL,
    STAT_RTOL,
    Resamples,
    bootstrap_core,
    check_B,
    observed_t,
    score_matrix,
)
from metaeval.meta._resampling import resamples as draw_resamples
from metaeval.meta.significance import DEFAULT_COMPARE_B, _exact, benjamini_hochberg, holm

__all__ = [
    "TESTS",
    "FAMILIES",
    "TTestResult",
    "WilcoxonResult",
    "SignTestResult",
    "RandomizationResult",
    "BootstrapResult",
    "paired_t_test",
    "wilcoxon_test",
    "sign_test",
    "randomization_test",
    "bootstrap_test",
    "paired_comparisons",
    "anova_residual_variance",
]

TESTS = ("t", "wilcoxon", "sign", "randomization", "bootstrap")
FAMILIES = ("all_pairs", "baseline")

# Columns of every result's to_frame() and of paired_comparisons (which adds p_adjusted and
# significant after p_value).
COLUMNS = [
    "system_a",
    "system_b",
    "test",
    "n_topics",
    "mean_a",
    "mean_b",
    "diff",
    "estimand",
    "estimate",
    "statistic",
    "p_value",
    "ci_low",
    "ci_high",
    "ci_level",
    "ci_method",
    "margin_of_error",
    "effect_size",
    "effect_size_ve",
]

# (pairs x resamples) elements held at once by the randomisation interval (five such float
# arrays, ~40 MB) and by the bootstrap intervals.
_BLOCK_ELEMENTS = 1_000_000
# (pairs x Walsh averages) elements held at once by the Hodges-Lehmann interval.
_WALSH_ELEMENTS = 4_000_000
# The signed-rank null distribution is enumerated exactly up to this many topics (a
# convolution of n(n+1)/2 + 1 probabilities, n times); beyond, its normal approximation.
_MAX_EXACT_SIGNRANK = 500
# Differences are rounded to this many significant digits of the pair's largest |difference|
# before the rank and sign tests: float noise (0.3 - 0.2 != 0.4 - 0.3) must neither break the
# ties of discrete measures nor turn an exact tie into a non-zero difference.
_SNAP_DIGITS = 12
# Streams of rng: one per resampling method, so that adding a test to a call does not change
# the resamples of another.
_STREAM = {"randomization": 0, "bootstrap": 1}


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _PairResult:
    system_a: object
    system_b: object
    n_topics: int
    mean_a: float
    mean_b: float
    diff: float
    effect_size: float
    differences: np.ndarray = field(repr=False)

    test = ""

    def _row(self) -> dict:
        raise NotImplementedError

    def to_frame(self) -> pd.DataFrame:
        """One row with the columns of :func:`paired_comparisons` (without the correction)."""
        base = {
            "system_a": self.system_a,
            "system_b": self.system_b,
            "test": self.test,
            "n_topics": self.n_topics,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "diff": self.diff,
            "margin_of_error": np.nan,
            "effect_size": self.effect_size,
            "effect_size_ve": np.nan,
        }
        base.update(self._row())
        return pd.DataFrame([base], columns=COLUMNS)


@dataclass(frozen=True, eq=False)
class TTestResult(_PairResult):
    """Paired t-test of one pair: t, p, the mean difference's t interval and effect sizes.

    Attributes
    ----------
    statistic : float
        :math:`t = \\bar z / (s_z / \\sqrt n)`.
    df : int
        n - 1.
    p_value : float
        Two-sided, from ``scipy.stats.ttest_rel``.
    margin_of_error : float
        :math:`t_{n-1, (1+c)/2} \\, s_z / \\sqrt n` (Sakai 2018: MOE).
    ci_low, ci_high : float
        :math:`\\bar z \\mp` margin_of_error (``TtestResult.confidence_interval``).
    confidence : float
    sd_diff : float
        :math:`s_z` (ddof = 1).
    effect_size : float
        :math:`d_z = \\bar z / s_z`.
    effect_size_ve : float
        :math:`\\bar z / \\sqrt{V_E}`, NaN without ``residual_variance``.
    residual_variance : float or None
    differences : ndarray
        The n per-topic differences a - b.
    """

    statistic: float
    df: int
    p_value: float
    margin_of_error: float
    ci_low: float
    ci_high: float
    confidence: float
    sd_diff: float
    effect_size_ve: float
    residual_variance: float | None

    test = "t"

    def _row(self) -> dict:
        return {
            "estimand": "mean",
            "estimate": self.diff,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "ci_level": self.confidence,
            "ci_method": "t",
            "margin_of_error": self.margin_of_error,
            "effect_size_ve": self.effect_size_ve,
        }


@dataclass(frozen=True, eq=False)
class WilcoxonResult(_PairResult):
    """Wilcoxon signed-rank test of one pair, with the Hodges-Lehmann estimate and interval.

    Attributes
    ----------
    statistic : float
        scipy's: :math:`\\min(R^+, R^-)`, the smaller signed-rank sum.
    p_value : float
        Two-sided, from ``scipy.stats.wilcoxon`` (zeros dropped, ``method="auto"``).
    method : str
        How scipy computed p: ``"exact"``, ``"permutation"`` (ties or zeros, n <= 13, all
        sign vectors) or ``"asymptotic"`` (normal, with tie and continuity corrections).
    n_zeros : int
        Topics with a zero difference (left out of the test).
    estimate : float
        Hodges-Lehmann: the median of the n(n+1)/2 Walsh averages :math:`(z_i + z_j)/2,
        i \\le j` (the pseudo-median).
    ci_low, ci_high : float
        :math:`[W_{(k)}, W_{(M+1-k)}]`, M = n(n+1)/2, k the lower :math:`\\alpha/2` quantile
        of the signed-rank distribution (±inf when no k reaches the confidence).
    ci_level : float
        The interval's attained confidence, :math:`1 - 2 P(T^+ \\le k - 1)`.
    ci_method : str
        ``"exact"`` (signed-rank distribution enumerated) or ``"normal"`` (n > 500).
    confidence : float
        The requested confidence.
    """

    statistic: float
    p_value: float
    method: str
    n_zeros: int
    estimate: float
    ci_low: float
    ci_high: float
    ci_level: float
    ci_method: str
    confidence: float

    test = "wilcoxon"

    def _row(self) -> dict:
        return {
            "estimand": "pseudomedian",
            "estimate": self.estimate,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "ci_level": self.ci_level,
            "ci_method": f"Walsh averages ({self.ci_method})",
        }


@dataclass(frozen=True, eq=False)
class SignTestResult(_PairResult):
    """Exact sign test of one pair, with the median difference and its distribution-free interval.

    Attributes
    ----------
    n_positive, n_negative, n_zeros : int
        Topics where a beats b, loses to b, ties with b.
    statistic : int
        n_positive.
    p_value : float
        :math:`\\min(1, 2 \\sum_{i \\le \\min(n_+, n_-)} \\binom{m}{i} 2^{-m})`,
        :math:`m = n_+ + n_-` (ties dropped; ``scipy.stats.binomtest``'s two-sided p).
    estimate : float
        The median of the n differences.
    ci_low, ci_high : float
        :math:`[z_{(k)}, z_{(n+1-k)}]`, k the lower :math:`\\alpha/2` quantile of
        Binomial(n, 1/2) (``scipy.stats.quantile_test``'s interval); ±inf when no k reaches
        the confidence.
    ci_level : float
        Attained confidence :math:`1 - 2 P(\\mathrm{Bin}(n, 1/2) \\le k - 1)`.
    confidence : float
    """

    n_positive: int
    n_negative: int
    n_zeros: int
    statistic: int
    p_value: float
    estimate: float
    ci_low: float
    ci_high: float
    ci_level: float
    confidence: float

    test = "sign"

    def _row(self) -> dict:
        return {
            "estimand": "median",
            "estimate": self.estimate,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "ci_level": self.ci_level,
            "ci_method": "order statistics (binomial)",
        }


@dataclass(frozen=True, eq=False)
class RandomizationResult(_PairResult):
    """Fisher's paired randomisation (sign-flip) test of one pair, with its inverted interval.

    Attributes
    ----------
    statistic : float
        The mean difference :math:`\\bar z`.
    p_value : float
        Share of the reference sign vectors with :math:`|\\overline{s z}| \\ge |\\bar z|`.
    exact : bool
        True: the reference set is all :math:`2^n` sign vectors; False: the identity and B
        random ones, so p = (1 + b) / (B + 1) (Phipson & Smyth 2010).
    n_resamples : int
        Size of the reference set (:math:`2^n` or B + 1).
    null_distribution : ndarray
        :math:`\\overline{s z}` for every reference sign vector s (the identity included).
    ci_low, ci_high : float
        The shifts :math:`\\delta` the test does not reject at level 1 - confidence when
        applied to :math:`z - \\delta`; ±inf when the reference set is too small.
    ci_level : float
        The confidence, or 1 for an unbounded interval.
    confidence : float
    """

    statistic: float
    p_value: float
    exact: bool
    n_resamples: int
    ci_low: float
    ci_high: float
    ci_level: float
    confidence: float
    null_distribution: np.ndarray = field(repr=False)

    test = "randomization"

    def _row(self) -> dict:
        return {
            "estimand": "mean",
            "estimate": self.diff,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "ci_level": self.ci_level,
            "ci_method": "inverted randomisation test",
        }


@dataclass(frozen=True, eq=False)
class BootstrapResult(_PairResult):
    """Sakai's paired bootstrap test of one pair, with percentile and BCa intervals.

    Attributes
    ----------
    statistic : float
        The observed t, :math:`\\bar z / (s_z / \\sqrt n)`.
    p_value : float
        Sakai's (2006) achieved significance level: the share of the B null-shifted resamples
        :math:`w^* (w = z - \\bar z)` with :math:`|t(w^*)| \\ge |t(z)|` (as
        :func:`~metaeval.meta.discriminative_power`).
    n_resamples : int
        B.
    null_distribution : ndarray
        :math:`t(w^*)` of the B null-shifted resamples.
    bootstrap_distribution : ndarray
        :math:`\\overline{z^*}` of the B resamples (the same topic draws).
    ci_low, ci_high : float
        BCa interval of the mean difference (Efron 1987), ``scipy.stats.bootstrap`` on these
        resamples.
    percentile_low, percentile_high : float
        Percentile interval, the same way.
    confidence : float
    """

    statistic: float
    p_value: float
    n_resamples: int
    ci_low: float
    ci_high: float
    percentile_low: float
    percentile_high: float
    confidence: float
    null_distribution: np.ndarray = field(repr=False)
    bootstrap_distribution: np.ndarray = field(repr=False)

    test = "bootstrap"

    def _row(self) -> dict:
        return {
            "estimand": "mean",
            "estimate": self.diff,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "ci_level": self.confidence,
            "ci_method": "BCa bootstrap",
        }


# --------------------------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------------------------


def _vector(name: str, v) -> np.ndarray:
    try:
        a = np.asarray(v, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric 1-D array of per-topic scores") from exc
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of per-topic scores, got shape {a.shape}")
    return a


def _two_systems(x, y, names) -> tuple[np.ndarray, tuple]:
    """(2, T) matrix and the two names, validated as :func:`score_matrix` does. Two Series
    are paired by their index (the topics), not by position."""
    both = isinstance(x, pd.Series) and isinstance(y, pd.Series)
    if both and not (x.index.is_unique and y.index.is_unique):
        raise ValueError("x and y are Series indexed by topic: a topic appears twice")
    if both and not x.index.equals(y.index):
        only_x, only_y = x.index.difference(y.index), y.index.difference(x.index)
        if len(only_x) or len(only_y):
            shown = only_x if len(only_x) else only_y
            raise ValueError(
                f"x and y must score the same topics; {len(only_x)} of x's are not in y and "
                f"{len(only_y)} of y's not in x (first: {shown[0]!r})"
            )
        y = y.reindex(x.index)
    xa, ya = _vector("x", x), _vector("y", y)
    if xa.size != ya.size:
        raise ValueError(
            f"x and y must score the same topics, one score each; got {xa.size} and "
            f"{ya.size} scores"
        )
    if isinstance(names, str) or not isinstance(names, Sequence) or len(names) != 2:
        raise ValueError(f"names must be two system names, got {names!r}")
    X, names, _ = score_matrix(np.vstack([xa, ya]), systems=tuple(names), name="x and y")
    return X, names


def _confidence(confidence) -> float:
    return check_alpha(confidence, name="confidence")


def family_pairs(names: Sequence, family: str, baseline=None) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (ia, ib) of the declared family of pairs; the difference is ia - ib.

    ``family="all_pairs"``: every pair a < b in system order. ``family="baseline"``: every
    other system against ``baseline`` (ib is the baseline, so differences are system -
    baseline), as :func:`~metaeval.meta.compare` orients them.
    """
    check_choice("family", family, FAMILIES)
    names = list(names)
    S = len(names)
    if family == "all_pairs":
        if baseline is not None:
            raise ValueError(
                "baseline is only used with family='baseline'; with family='all_pairs' every "
                "pair is compared"
            )
        ia, ib = np.triu_indices(S, 1)
        return ia, ib
    if baseline is None:
        raise ValueError(
            "family='baseline' compares every system with one baseline: give baseline=<system name>"
        )
    if baseline not in names:
        raise ValueError(f"baseline {baseline!r} is not one of the systems {names}")
    j = names.index(baseline)
    ia = np.array([i for i in range(S) if i != j], dtype=int)
    return ia, np.full(ia.size, j, dtype=int)


def _streams(rng) -> list[np.random.Generator]:
    """One generator per resampling method, seeded by draws from ``rng``.

    Not ``Generator.spawn``: spawning advances the SeedSequence a user passed in, so the same
    SeedSequence would give other resamples on a second call. Drawing the seeds keeps the
    package's rng policy: an int or SeedSequence gives the same streams every time, a
    Generator continues its stream.
    """
    seeds = as_generator(rng).integers(0, 2**63, size=len(_STREAM))
    return [np.random.default_rng(int(s)) for s in seeds]


def _generator(rng, method: str) -> np.random.Generator:
    """The stream of ``rng`` that ``method`` draws its resamples from."""
    return _streams(rng)[_STREAM[method]]


def _snap(Z: np.ndarray) -> np.ndarray:
    """Z rounded to _SNAP_DIGITS significant digits of each row's largest |value|."""
    scale = np.abs(Z).max(axis=1, keepdims=True)
    scale = np.where(scale > 0, scale, 1.0)
    return np.round(Z / scale, _SNAP_DIGITS) * scale


def _effect_sizes(Z: np.ndarray, residual_variance: float | None):
    zbar, var, _, const, zero_mean = observed_t(Z)
    with np.errstate(divide="ignore", invalid="ignore"):
        dz = zbar / np.sqrt(var)
    # sd = 0: identical systems have no effect; a constant non-zero difference is infinite.
    dz = np.where(const, np.where(zero_mean, 0.0, np.copysign(np.inf, zbar)), dz)
    if residual_variance is None:
        dve = np.full(zbar.shape, np.nan)
    else:
        dve = zbar / math.sqrt(residual_variance)
    return dz, dve


def _check_residual_variance(residual_variance) -> float | None:
    if residual_variance is None:
        return None
    return check_real("residual_variance", residual_variance, min=0.0, min_open=True)


def anova_residual_variance(scores, *, systems=None, topics=None, runs=None) -> float:
    r"""Residual variance :math:`V_E` of a two-way ANOVA without replication (systems x topics).

    .. math::

        V_E = \frac{\sum_{s,i} (x_{s,i} - \bar x_{s\cdot} - \bar x_{\cdot i} +
        \bar x_{\cdot\cdot})^2}{(S - 1)(T - 1)}

    the within-system, within-topic noise that Sakai (2014, 2018) standardises differences
    with: :math:`(\bar x_a - \bar x_b) / \sqrt{V_E}`. Computed here (it is the ``mse_resid`` of
    statsmodels' ``ols("value ~ C(run) + C(topic)")``, which the tests compare with).

    Parameters
    ----------
    scores : array_like (S, T) or pandas.DataFrame
        Per-topic scores (rows = systems) or a tidy frame with columns run, topic, value.
    systems, topics, runs : optional
        As in :func:`paired_comparisons`.

    Returns
    -------
    float
    """
    X, _, _ = score_matrix(scores, systems=systems, topics=topics, runs=runs)
    S, T = X.shape
    resid = X - X.mean(axis=1, keepdims=True) - X.mean(axis=0, keepdims=True) + X.mean()
    return float((resid * resid).sum() / ((S - 1) * (T - 1)))


# --------------------------------------------------------------------------------------------
# Cores: every pair (row of Z = XA - XB) at once. Each returns a dict of per-pair arrays.
# --------------------------------------------------------------------------------------------


def _t_core(XA: np.ndarray, XB: np.ndarray, confidence: float) -> dict:
    """Paired t per row, via scipy.stats.ttest_rel; the margin of error by its formula."""
    Z = XA - XB
    n = Z.shape[1]
    zbar, var, t_obs, const, zero_mean = observed_t(Z)
    # Degenerate pairs (sd = 0) make scipy warn and return NaN; they are overridden below.
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = stats.ttest_rel(XA, XB, axis=1)
        ci = res.confidence_interval(confidence_level=confidence)
    margin = stats.t.ppf(0.5 + confidence / 2, n - 1) * np.sqrt(var / n)
    statistic = np.where(const, t_obs, np.asarray(res.statistic, dtype=float))
    p = np.where(const, np.where(zero_mean, 1.0, 0.0), np.asarray(res.pvalue, dtype=float))
    # A constant difference is known exactly: its interval is the point.
    low = np.where(const, zbar, np.asarray(ci.low, dtype=float))
    high = np.where(const, zbar, np.asarray(ci.high, dtype=float))
    margin = np.where(const, 0.0, margin)
    return {
        "statistic": statistic,
        "p_value": p,
        "estimate": zbar,
        "ci_low": low,
        "ci_high": high,
        "ci_level": np.full(zbar.shape, confidence),
        "margin_of_error": margin,
        "sd": np.sqrt(var),
    }


@functools.lru_cache(maxsize=32)
def _signrank_cdf(n: int) -> np.ndarray:
    """P(T+ <= t), t = 0..n(n+1)/2, for n untied non-zero differences (exact)."""
    M = n * (n + 1) // 2
    p = np.zeros(M + 1)
    p[0] = 1.0
    for k in range(1, n + 1):
        # Topic k adds rank k to T+ with probability 1/2. The right side is evaluated before
        # the assignment, so it uses the previous distribution.
        p[k:] = (p[k:] + p[:-k]) / 2.0
        p[:k] /= 2.0
    cdf = np.cumsum(p)
    cdf.setflags(write=False)
    return cdf


def _walsh_k(n: int, confidence: float) -> tuple[int, float, str]:
    """(k, attained confidence, method) of the Hodges-Lehmann interval [W(k), W(M+1-k)]."""
    M = n * (n + 1) // 2
    half = (1.0 - confidence) / 2.0
    if n <= _MAX_EXACT_SIGNRANK:
        cdf = _signrank_cdf(n)
        # k = the smallest t with P(T+ <= t) >= alpha/2 (R's qsignrank); the test of z - d
        # rejects (p < alpha) exactly when fewer than k Walsh averages lie on one side of d.
        k = int(np.searchsorted(cdf, half * (1 - 1e-12), side="left"))
        level = 1.0 - 2.0 * (cdf[k - 1] if k >= 1 else 0.0)
        return k, level, "exact"
    mu, sd = M / 2.0, math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
    k = int(math.floor(mu + 0.5 + stats.norm.ppf(half) * sd))
    level = 1.0 - 2.0 * stats.norm.cdf((k - 0.5 - mu) / sd) if k >= 1 else 1.0
    return k, level, "normal"


def _wilcoxon_core(Z: np.ndarray, confidence: float) -> dict:
    """Wilcoxon signed-rank p (scipy) and the Hodges-Lehmann estimate and interval per row."""
    P, n = Z.shape
    Zs = _snap(Z)
    nonzero = Zs != 0
    n_zeros = n - nonzero.sum(axis=1)
    srt = np.sort(np.abs(Zs), axis=1)
    ties = ((srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] > 0)).any(axis=1)
    statistic = np.zeros(P)
    p = np.ones(P)
    method = np.full(P, "exact", dtype=object)
    # scipy decides exact / permutation / asymptotic once for a whole batch (ties or zeros in
    # any row change it for every row), so rows are sent in groups that share the decision.
    # Rows with every difference zero are identical systems: statistic 0, p = 1.
    live = nonzero.any(axis=1)
    for flag in (False, True):
        rows = np.nonzero(live & (((n_zeros > 0) | ties) == flag))[0]
        if rows.size == 0:
            continue
        with warnings.catch_warnings():
            # scipy warns that zeros make the exact distribution inexact: handled by its method
            # choice, reported in `method`.
            warnings.simplefilter("ignore", UserWarning)
            res = stats.wilcoxon(Zs[rows], axis=1)
        statistic[rows] = res.statistic
        p[rows] = res.pvalue
        if n > 50:
            method[rows] = "asymptotic"
        elif flag:
            method[rows] = "permutation" if n <= 13 else "asymptotic"
    method[~live] = "exact"
    # Hodges-Lehmann: the median of the Walsh averages and two of their order statistics.
    k, level, ci_method = _walsh_k(n, confidence)
    M = n * (n + 1) // 2
    iu, ju = np.triu_indices(n)
    estimate = np.empty(P)
    low = np.full(P, -np.inf)
    high = np.full(P, np.inf)
    kth = sorted({(M - 1) // 2, M // 2} | ({k - 1, M - k} if k >= 1 else set()))
    block = max(1, _WALSH_ELEMENTS // M)
    for start in range(0, P, block):
        sl = slice(start, min(P, start + block))
        # The raw differences: rounding only decides the test's zeros and ties.
        W = (Z[sl][:, iu] + Z[sl][:, ju]) / 2.0
        W.partition(kth, axis=1)
        estimate[sl] = (W[:, (M - 1) // 2] + W[:, M // 2]) / 2.0
        if k >= 1:
            low[sl] = W[:, k - 1]
            high[sl] = W[:, M - k]
    return {
        "statistic": statistic,
        "p_value": p,
        "method": method,
        "n_zeros": n_zeros,
        "estimate": estimate,
        "ci_low": low,
        "ci_high": high,
        "ci_level": np.full(P, level if k >= 1 else 1.0),
        "ci_method": ci_method,
    }


def _sign_core(Z: np.ndarray, confidence: float) -> dict:
    """Exact sign test and the median's order-statistic interval per row."""
    P, n = Z.shape
    Zs = _snap(Z)
    pos = np.count_nonzero(Zs > 0, axis=1)
    neg = np.count_nonzero(Zs < 0, axis=1)
    m = pos + neg
    # Two-sided binomial p with success probability 1/2: the law is symmetric, so the outcomes
    # at most as likely as the observed one are the two tails beyond min(pos, neg).
    with np.errstate(invalid="ignore"):
        p = np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(pos, neg), m, 0.5))
    p = np.where(m == 0, 1.0, p)
    srt = np.sort(Z, axis=1)  # raw differences: rounding only decides the signs
    half = (1.0 - confidence) / 2.0
    k = int(stats.binom.ppf(half, n, 0.5))  # 1-based rank of the lower end (quantile_test)
    if k >= 1:
        low, high = srt[:, k - 1], srt[:, n - k]
        level = 1.0 - 2.0 * float(stats.binom.cdf(k - 1, n, 0.5))
    else:
        low, high, level = np.full(P, -np.inf), np.full(P, np.inf), 1.0
    return {
        "statistic": pos.astype(float),
        "p_value": p,
        "n_positive": pos,
        "n_negative": neg,
        "n_zeros": n - m,
        "estimate": np.median(Z, axis=1),
        "ci_low": low,
        "ci_high": high,
        "ci_level": np.full(P, level),
    }


def _reference_signs(n: int, B: int, resamples: Resamples | None, gen) -> tuple[np.ndarray, bool]:
    """The reference set of sign vectors, identity first: all 2^n (exact) or identity + B."""
    if _exact(n, B):
        signs = 1.0 - 2.0 * np.array(list(itertools.product((0, 1), repeat=n)), dtype=float)
        return signs, True
    if resamples is None:
        resamples = draw_resamples("randomization", n_topics=n, B=B, rng=gen)
    # The observed labelling is one of the equally likely ones under the null: counting it
    # gives p = (1 + b) / (B + 1), never 0 (Phipson & Smyth 2010), as compare() does.
    return np.vstack([np.ones((1, n)), resamples.signs]), False


def _randomization_core(
    Z: np.ndarray, signs: np.ndarray, confidence: float, keep_null: bool = False
) -> dict:
    r"""Sign-flip p-value and the inverted interval per row of Z.

    Interval: for a shift :math:`\delta` and sign vector s, with :math:`A = \sum z_i`,
    :math:`a_s = \sum s_i z_i`, :math:`b_s = \sum s_i`, the flipped statistic of
    :math:`z - \delta` is at least as extreme as the observed one when
    :math:`(a_s - \delta b_s)^2 \ge (A - n\delta)^2`: a quadratic in :math:`\delta` with a
    negative leading coefficient (:math:`|b_s| < n`), so s counts on the closed interval between
    its roots :math:`(A - a_s)/(n - b_s)` and :math:`(A + a_s)/(n + b_s)`, which contains
    :math:`\bar z`; the two constant sign vectors (:math:`|b_s| = n`) count everywhere. p(δ) is
    thus unimodal and the acceptance set {δ : p(δ) ≥ α} is an interval whose ends are the k-th
    smallest lower root and the k-th largest upper root, k = ⌈αN⌉ - #constant vectors.
    """
    P, n = Z.shape
    N = signs.shape[0]
    zsum = Z.sum(axis=1)
    absobs = np.abs(zsum) / n
    thresh = absobs - (STAT_ATOL + STAT_RTOL * absobs)
    b = signs.sum(axis=1)
    always = np.abs(b) == n
    free = ~always
    bf = b[free]
    k = math.ceil((1.0 - confidence) * N - 1e-9) - int(always.sum())
    counts = np.empty(P, dtype=np.int64)
    low = np.full(P, -np.inf)
    high = np.full(P, np.inf)
    null = None
    block = max(1, _BLOCK_ELEMENTS // N)
    signsT = np.ascontiguousarray(signs.T)
    for start in range(0, P, block):
        sl = slice(start, min(P, start + block))
        S1 = Z[sl] @ signsT  # (pairs x sign vectors): sum of the flipped differences
        counts[sl] = np.count_nonzero(np.abs(S1) / n >= thresh[sl, None], axis=1)
        if keep_null:
            null = S1[0] / n
        if 1 <= k <= bf.size:
            A = zsum[sl, None]
            a = S1[:, free]
            r1 = (A - a) / (n - bf)
            r2 = (A + a) / (n + bf)
            lo = np.minimum(r1, r2)
            hi = np.maximum(r1, r2)
            low[sl] = np.partition(lo, k - 1, axis=1)[:, k - 1]
            high[sl] = np.partition(hi, bf.size - k, axis=1)[:, bf.size - k]
    return {
        "statistic": zsum / n,
        "p_value": counts / N,
        "estimate": zsum / n,
        "ci_low": low,
        "ci_high": high,
        # an unbounded interval (nothing can be rejected) covers with certainty
        "ci_level": np.full(P, confidence if 1 <= k <= bf.size else 1.0),
        "null": null,
    }


def _bootstrap_intervals(Z: np.ndarray, counts: np.ndarray, confidence: float, methods):
    """Percentile and/or BCa intervals of the mean per row, from shared bootstrap counts.

    The bootstrap means are computed here (one matrix product for all pairs, the same topic
    draws as the test); the intervals by ``scipy.stats.bootstrap`` given those means
    (``n_resamples=0, bootstrap_result=...``), which adds the jackknife acceleration for BCa.
    """
    P, n = Z.shape
    B = counts.shape[0]
    zbar, _, _, const, _ = observed_t(Z)
    out = {m: (np.array(zbar, copy=True), np.array(zbar, copy=True)) for m in methods}
    live = np.nonzero(~const)[0]  # a constant difference has the point as its interval
    countsT = np.ascontiguousarray(counts.T) / n
    block = max(1, _BLOCK_ELEMENTS // B)
    for start in range(0, live.size, block):
        rows = live[start : start + block]
        Zb = Z[rows]
        theta = Zb @ countsT
        # Resampled means equal to the observed one up to float rounding are ties (discrete
        # measures make them); scipy compares exactly, so they are snapped to the observed.
        hat = np.mean(Zb, axis=-1)[:, None]
        tie = np.abs(theta - hat) <= STAT_ATOL + STAT_RTOL * np.abs(hat)
        theta = np.where(tie, hat, theta)
        prior = types.SimpleNamespace(bootstrap_distribution=theta)
        for m in methods:
            res = stats.bootstrap(
                (Zb,),
                np.mean,
                n_resamples=0,
                bootstrap_result=prior,
                confidence_level=confidence,
                method=m,
                axis=-1,
                vectorized=True,
                batch=max(1, _BLOCK_ELEMENTS // (rows.size * n)),
            )
            out[m][0][rows] = res.confidence_interval.low
            out[m][1][rows] = res.confidence_interval.high
    return out


def _bootstrap_null(z: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """t of every null-shifted resample of one pair (the distribution Sakai's ASL counts in)."""
    n = z.size
    w = z - z.mean()
    S1 = counts @ w
    SS = counts @ (w * w)
    dev = SS - S1 * S1 / n
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (S1 / n) / np.sqrt(dev / ((n - 1) * n))
    flat = dev <= 1e-13 * np.maximum(SS, np.finfo(float).tiny)
    zero = np.abs(S1) / n <= 1e-12 * max(np.abs(z).max(), np.finfo(float).tiny)
    return np.where(flat, np.where(zero, 0.0, np.copysign(np.inf, S1)), t)


# --------------------------------------------------------------------------------------------
# One pair
# --------------------------------------------------------------------------------------------


def _base(X: np.ndarray, names, residual_variance=None) -> tuple[dict, float]:
    z = X[0] - X[1]
    dz, dve = _effect_sizes(z[None, :], residual_variance)
    return {
        "system_a": names[0],
        "system_b": names[1],
        "n_topics": int(z.size),
        "mean_a": float(X[0].mean()),
        "mean_b": float(X[1].mean()),
        "diff": float(X[0].mean() - X[1].mean()),
        "effect_size": float(dz[0]),
        "differences": z,
    }, float(dve[0])


def paired_t_test(
    x, y, *, confidence: float = 0.95, residual_variance=None, names=("x", "y")
) -> TTestResult:
    r"""Paired t-test with its margin of error and Sakai's standardised effect sizes.

    With :math:`z_i = x_i - y_i` over n topics, :math:`\bar z` and :math:`s_z` (ddof = 1):

    * :math:`t = \bar z / (s_z/\sqrt n)`, two-sided p from Student's t with n - 1 degrees of
      freedom (``scipy.stats.ttest_rel``);
    * the margin of error :math:`\mathrm{MOE} = t_{n-1,(1+c)/2}\, s_z/\sqrt n` and the interval
      :math:`\bar z \pm \mathrm{MOE}` (Sakai 2018, ch. 1; scipy's ``confidence_interval``);
    * :math:`d_z = \bar z / s_z` and, given ``residual_variance`` :math:`V_E`,
      :math:`\bar z / \sqrt{V_E}` (Sakai 2014, 2018; :func:`anova_residual_variance`).

    A constant difference (:math:`s_z = 0`) is not random: t and :math:`d_z` are :math:`\pm\infty`
    and p = 0 (or 0, 0 and p = 1 when it is 0), and the interval is the point :math:`\bar z`.

    Parameters
    ----------
    x, y : array_like (T,)
        Per-topic scores of the two systems, topics in the same order (two pandas Series
        are paired by their index, the topic ids).
    confidence : float
        Of the interval, in (0, 1).
    residual_variance : float, optional
        :math:`V_E > 0` from a two-way ANOVA over all the systems compared.
    names : pair of names
        Reported as ``system_a``, ``system_b``.

    Returns
    -------
    TTestResult
    """
    confidence = _confidence(confidence)
    residual_variance = _check_residual_variance(residual_variance)
    X, names = _two_systems(x, y, names)
    base, dve = _base(X, names, residual_variance)
    r = _t_core(X[:1], X[1:], confidence)
    return TTestResult(
        **base,
        statistic=float(r["statistic"][0]),
        df=base["n_topics"] - 1,
        p_value=float(r["p_value"][0]),
        margin_of_error=float(r["margin_of_error"][0]),
        ci_low=float(r["ci_low"][0]),
        ci_high=float(r["ci_high"][0]),
        confidence=confidence,
        sd_diff=float(r["sd"][0]),
        effect_size_ve=dve,
        residual_variance=residual_variance,
    )


def wilcoxon_test(x, y, *, confidence: float = 0.95, names=("x", "y")) -> WilcoxonResult:
    r"""Wilcoxon signed-rank test, with the Hodges-Lehmann estimate and its interval.

    The p-value is ``scipy.stats.wilcoxon`` (two-sided, zero differences dropped, exact for
    n <= 50 untied non-zero differences, all sign vectors for ties with n <= 13, else normal
    with tie and continuity corrections).

    Written here, as no library computes it: the Hodges-Lehmann estimate (Hodges & Lehmann
    1963), the median of the :math:`M = n(n+1)/2` Walsh averages
    :math:`W = (z_i + z_j)/2, i \le j`, and its distribution-free interval
    :math:`[W_{(k)}, W_{(M+1-k)}]`, where k is the smallest t with
    :math:`P(T^+ \le t) \ge \alpha/2` under the signed-rank distribution of n topics,
    enumerated exactly up to n = 500 (else its normal approximation). It is the set of shifts d
    for which the exact test of z - d gives p >= alpha (the tests check this against scipy),
    and its attained confidence :math:`1 - 2P(T^+ \le k - 1)` is reported. The interval
    assumes continuous differences; with zero or tied differences it need not agree with the
    p-value at the boundary. For the test, differences are rounded to 12 significant digits
    of the largest one, so that float noise neither breaks ties nor hides zeros; the estimate
    and interval use them unrounded.

    Parameters
    ----------
    x, y : array_like (T,)
    confidence : float
    names : pair of names

    Returns
    -------
    WilcoxonResult
    """
    confidence = _confidence(confidence)
    X, names = _two_systems(x, y, names)
    base, _ = _base(X, names)
    r = _wilcoxon_core(X[:1] - X[1:], confidence)
    return WilcoxonResult(
        **base,
        statistic=float(r["statistic"][0]),
        p_value=float(r["p_value"][0]),
        method=str(r["method"][0]),
        n_zeros=int(r["n_zeros"][0]),
        estimate=float(r["estimate"][0]),
        ci_low=float(r["ci_low"][0]),
        ci_high=float(r["ci_high"][0]),
        ci_level=float(r["ci_level"][0]),
        ci_method=r["ci_method"],
        confidence=confidence,
    )


def sign_test(x, y, *, confidence: float = 0.95, names=("x", "y")) -> SignTestResult:
    r"""Exact sign test, with the median difference and its order-statistic interval.

    Topics where the systems tie are dropped; with :math:`n_+` wins of x over
    :math:`m = n_+ + n_-` untied topics, p = :math:`\min(1, 2 P(\mathrm{Bin}(m, 1/2) \le
    \min(n_+, n_-)))`, the two-sided p of ``scipy.stats.binomtest`` (the tests compare with
    it and with the binomial sum by hand). A difference within 1e-12 of the pair's largest
    |difference| of 0 is a tie (float noise of equal scores).

    The interval for the median difference (Conover 1999, §3.6) is
    :math:`[z_{(k)}, z_{(n+1-k)}]` over all n sorted differences, k the lower
    :math:`\alpha/2` quantile of Bin(n, 1/2) (as ``scipy.stats.quantile_test``); its attained
    confidence :math:`1 - 2P(\mathrm{Bin}(n, 1/2) \le k - 1)` is reported, and with too few
    topics (n <= 5 at 95%) it is :math:`(-\infty, \infty)`.

    Parameters
    ----------
    x, y : array_like (T,)
    confidence : float
    names : pair of names

    Returns
    -------
    SignTestResult
    """
    confidence = _confidence(confidence)
    X, names = _two_systems(x, y, names)
    base, _ = _base(X, names)
    r = _sign_core(X[:1] - X[1:], confidence)
    return SignTestResult(
        **base,
        n_positive=int(r["n_positive"][0]),
        n_negative=int(r["n_negative"][0]),
        n_zeros=int(r["n_zeros"][0]),
        statistic=int(r["n_positive"][0]),
        p_value=float(r["p_value"][0]),
        estimate=float(r["estimate"][0]),
        ci_low=float(r["ci_low"][0]),
        ci_high=float(r["ci_high"][0]),
        ci_level=float(r["ci_level"][0]),
        confidence=confidence,
    )


def _randomization_setup(n: int, B, resamples, alpha: float, gen_source) -> tuple:
    if resamples is not None:
        if B is not None and B != resamples.B:
            raise ValueError(f"B={B} but the resamples hold {resamples.B}; give one or the other")
        B = resamples.B
    B = check_B(DEFAULT_COMPARE_B if B is None else B)
    if not _exact(n, B) and alpha * (B + 1) <= 1:
        warn(
            f"B={B} random sign vectors cannot give a p-value below alpha={alpha:g} (the "
            f"smallest is 1/{B + 1}); use B >= {math.ceil(1 / alpha)}, e.g. 10000"
        )
    gen = None if resamples is not None or _exact(n, B) else gen_source()
    return _reference_signs(n, B, resamples, gen)


def randomization_test(
    x,
    y,
    *,
    B: int | None = None,
    rng=None,
    resamples: Resamples | None = None,
    confidence: float = 0.95,
    names=("x", "y"),
) -> RandomizationResult:
    r"""Fisher's paired randomisation test (Smucker et al. 2007), with its inverted interval.

    Under the null hypothesis each :math:`z_i` is as likely to have either sign. The statistic
    is the mean difference; p is the share of the reference sign vectors s with
    :math:`|\overline{s z}| \ge |\bar z|` (with the 1e-10 tie tolerance of docs/methods.md
    §1.2). The reference set is all :math:`2^n` sign vectors when :math:`2^n \le B` and
    n <= 16 (exact), otherwise the observed labelling and B random sign vectors, so that
    p = (1 + b)/(B + 1) is never 0 (Phipson & Smyth 2010). The p-value is
    ``scipy.stats.permutation_test(..., permutation_type="samples")``'s on the same sign
    vectors, and :func:`~metaeval.meta.compare`'s (the tests check both).

    The interval, written here, inverts the test (Lehmann & Romano 2005, §3.5): the shifts
    :math:`\delta` for which the same test applied to :math:`z - \delta` gives
    p >= 1 - confidence. It is computed exactly, without a search: each sign vector counts as
    extreme on a closed interval of :math:`\delta` around :math:`\bar z` (between
    :math:`(A - a_s)/(n - b_s)` and :math:`(A + a_s)/(n + b_s)`, :math:`A = \sum z`,
    :math:`a_s = s\cdot z`, :math:`b_s = \sum s`), so the ends are order statistics of those
    roots. It is :math:`(-\infty, \infty)` when the reference set cannot reject at that level.

    Parameters
    ----------
    x, y : array_like (T,)
    B : int, optional
        Random sign vectors when the test is not exact; default 10000.
    rng : None, int, SeedSequence or Generator
        Two streams are seeded from ``rng``; the sign vectors come from the first
        (:func:`bootstrap_test` uses the second), as in :func:`paired_comparisons`.
    resamples : Resamples, optional
        Sign vectors drawn beforehand by :func:`metaeval.meta.resamples`
        (``"randomization"``), shared with other measures; ``B`` then comes from them.
    confidence : float
    names : pair of names

    Returns
    -------
    RandomizationResult
    """
    confidence = _confidence(confidence)
    X, names = _two_systems(x, y, names)
    n = X.shape[1]
    if resamples is not None:
        resamples.check("randomization", X)
    signs, exact = _randomization_setup(
        n, B, resamples, 1.0 - confidence, lambda: _generator(rng, "randomization")
    )
    base, _ = _base(X, names)
    r = _randomization_core(X[:1] - X[1:], signs, confidence, keep_null=True)
    return RandomizationResult(
        **base,
        statistic=float(r["statistic"][0]),
        p_value=float(r["p_value"][0]),
        exact=exact,
        n_resamples=int(signs.shape[0]),
        ci_low=float(r["ci_low"][0]),
        ci_high=float(r["ci_high"][0]),
        ci_level=float(r["ci_level"][0]),
        confidence=confidence,
        null_distribution=r["null"],
    )


def _bootstrap_setup(n: int, B, resamples, alpha: float, gen_source) -> Resamples:
    if resamples is not None:
        if B is not None and B != resamples.B:
            raise ValueError(f"B={B} but the resamples hold {resamples.B}; give one or the other")
        check_B(resamples.B, alpha)
        return resamples
    B = check_B(DEFAULT_COMPARE_B if B is None else B, alpha)
    return draw_resamples("bootstrap", n_topics=n, B=B, rng=gen_source())


def bootstrap_test(
    x,
    y,
    *,
    B: int | None = None,
    rng=None,
    resamples: Resamples | None = None,
    confidence: float = 0.95,
    names=("x", "y"),
) -> BootstrapResult:
    r"""Sakai's paired bootstrap test (2006), with percentile and BCa intervals of the mean.

    p is Sakai's achieved significance level, :func:`~metaeval.meta.discriminative_power`'s
    machinery: the share of the B resamples of :math:`w = z - \bar z` (shifted to the null)
    whose studentised mean reaches the observed :math:`|t|` (not (1 + b)/(B + 1): it is a
    bootstrap estimate, not a permutation count, and keeps Sakai's definition).

    The intervals use the same topic draws: the bootstrap means :math:`\overline{z^*}` give the
    percentile interval and Efron's (1987) BCa interval, both computed by
    ``scipy.stats.bootstrap`` from these means (its jackknife supplies the acceleration).

    Parameters
    ----------
    x, y : array_like (T,)
    B : int, optional
        Default 10000.
    rng : None, int, SeedSequence or Generator
        The topics are drawn from the second of two streams seeded from ``rng`` (see
        :func:`randomization_test`).
    resamples : Resamples, optional
        Bootstrap samples drawn beforehand by :func:`metaeval.meta.resamples`.
    confidence : float
    names : pair of names

    Returns
    -------
    BootstrapResult
    """
    confidence = _confidence(confidence)
    X, names = _two_systems(x, y, names)
    n = X.shape[1]
    if resamples is not None:
        resamples.check("bootstrap", X)
    res = _bootstrap_setup(n, B, resamples, 1.0 - confidence, lambda: _generator(rng, "bootstrap"))
    counts = res.counts()
    Z = X[:1] - X[1:]
    t_obs, asl, _ = bootstrap_core(Z, counts, 1.0 - confidence)
    iv = _bootstrap_intervals(Z, counts, confidence, ("BCa", "percentile"))
    base, _ = _base(X, names)
    return BootstrapResult(
        **base,
        statistic=float(t_obs[0]),
        p_value=float(asl[0]),
        n_resamples=res.B,
        ci_low=float(iv["BCa"][0][0]),
        ci_high=float(iv["BCa"][1][0]),
        percentile_low=float(iv["percentile"][0][0]),
        percentile_high=float(iv["percentile"][1][0]),
        confidence=confidence,
        null_distribution=_bootstrap_null(Z[0], counts),
        bootstrap_distribution=(counts @ Z[0]) / n,
    )


# --------------------------------------------------------------------------------------------
# Every pair of a family
# --------------------------------------------------------------------------------------------


def _split_resamples(resamples) -> dict:
    if resamples is None:
        return {}
    items = [resamples] if isinstance(resamples, Resamples) else list(resamples)
    out = {}
    for r in items:
        if not isinstance(r, Resamples):
            raise TypeError(
                "resamples must be a Resamples (metaeval.meta.resamples) or a sequence of them"
            )
        if r.method not in ("randomization", "bootstrap"):
            raise ValueError(
                f"resamples drawn for {r.method!r} do not fit a paired test; draw "
                "'randomization' or 'bootstrap' resamples"
            )
        if r.method in out:
            raise ValueError(f"two sets of {r.method} resamples given; give one")
        out[r.method] = r
    return out


def paired_comparisons(
    scores,
    *,
    family: str,
    baseline=None,
    tests=("t", "randomization"),
    correction: str | None = "holm",
    alpha: float = 0.05,
    confidence: float | None = None,
    residual_variance=None,
    B: int | None = None,
    rng=None,
    resamples=None,
    bootstrap_interval: str = "BCa",
    systems=None,
    topics=None,
    runs=None,
) -> pd.DataFrame:
    r"""Paired tests, estimates, intervals and effect sizes for every pair of a declared family.

    Vectorised over pairs: the per-test cores of :func:`paired_t_test`, :func:`wilcoxon_test`,
    :func:`sign_test`, :func:`randomization_test` and :func:`bootstrap_test` run on all pairs
    at once, the resampling tests on one draw of sign vectors or topic samples shared by every
    pair; each row equals the single-pair function's ``to_frame()`` on the same resamples.

    Parameters
    ----------
    scores : array_like (S, T) or pandas.DataFrame
        Per-topic scores (rows = systems) or a tidy frame with columns run, topic, value.
    family : {"all_pairs", "baseline"}
        The pairs compared, and the family the correction is over: every pair a < b in system
        order, or every other system against ``baseline`` (diff = system - baseline). Required:
        a corrected p-value means nothing without its family.
    baseline : system name, optional
        With ``family="baseline"``.
    tests : sequence of {"t", "wilcoxon", "sign", "randomization", "bootstrap"}
    correction : {"holm", "bh", None}
        Holm (family-wise error rate) or Benjamini-Hochberg (false discovery rate) over the
        family, per test; for Westfall-Young max-T see
        :func:`metaeval.stats.multiplicity.westfall_young`.
    alpha : float
        ``significant`` is ``p_adjusted < alpha``.
    confidence : float, optional
        Of the intervals; default 1 - alpha.
    residual_variance : float or "anova", optional
        :math:`V_E` for ``effect_size_ve`` = diff / :math:`\sqrt{V_E}`; ``"anova"`` computes it
        from all the systems of ``scores`` (:func:`anova_residual_variance`).
    B : int, optional
        Resamples of the randomisation and bootstrap tests; default 10000.
    rng : None, int, SeedSequence or Generator
        Two streams are seeded from it: sign vectors from the first, bootstrap topic samples
        from the second, so that adding a test leaves the others' resamples unchanged.
    resamples : Resamples or sequence of Resamples, optional
        Drawn beforehand by :func:`metaeval.meta.resamples` ("randomization" and/or
        "bootstrap"), shared with other measures.
    bootstrap_interval : {"BCa", "percentile"}
        Which bootstrap interval fills ``ci_low`` and ``ci_high``.
    systems : sequence, optional
        Names of the rows of an array ``scores``.
    topics, runs : selection, optional
        For a tidy frame: only these topics and runs.

    Returns
    -------
    pandas.DataFrame
        One row per pair and test (pairs in family order, tests in the given order): columns
        ``system_a, system_b, test, n_topics, mean_a, mean_b, diff, estimand, estimate,
        statistic, p_value, p_adjusted, significant, ci_low, ci_high, ci_level, ci_method,
        margin_of_error, effect_size, effect_size_ve``. ``estimand`` is what ``estimate`` and the
        interval are about: ``"mean"`` (t, randomisation, bootstrap), ``"pseudomedian"``
        (Wilcoxon's Hodges-Lehmann), ``"median"`` (sign). ``effect_size`` is :math:`d_z` of the
        pair (the same on every test's row); ``margin_of_error`` is the t test's.
    """
    if isinstance(tests, str):
        tests = (tests,)
    tests = tuple(tests)
    if not tests:
        raise ValueError(f"tests must name at least one of {', '.join(TESTS)}")
    for t in tests:
        check_choice("tests", t, TESTS)
    if len(set(tests)) != len(tests):
        raise ValueError(f"tests must not repeat a test, got {list(tests)}")
    check_choice("correction", correction, ("holm", "bh", None))
    check_choice("bootstrap_interval", bootstrap_interval, ("BCa", "percentile"))
    alpha = check_alpha(alpha)
    confidence = 1.0 - alpha if confidence is None else _confidence(confidence)
    X, names, _ = score_matrix(scores, systems=systems, topics=topics, runs=runs)
    if isinstance(residual_variance, str):
        check_choice("residual_variance", residual_variance, ("anova",))
        residual_variance = anova_residual_variance(X)
        if residual_variance <= 0:
            raise ValueError(
                "the scores fit a two-way ANOVA exactly (residual variance 0): "
                "effect_size_ve is undefined; leave residual_variance out"
            )
    residual_variance = _check_residual_variance(residual_variance)
    shared = _split_resamples(resamples)
    for method, r in shared.items():
        r.check(method, X)
    ia, ib = family_pairs(names, family, baseline)
    XA, XB = X[ia], X[ib]
    Z = XA - XB
    P, n = Z.shape
    children = []

    def child(method):
        # Spawned only when something is drawn, and then always both streams, so that a
        # method's stream does not depend on the other tests requested.
        if not children:
            children.extend(_streams(rng))
        return children[_STREAM[method]]

    results = {}
    for test in tests:
        if test == "t":
            r = _t_core(XA, XB, confidence)
            r["ci_method"] = "t"
        elif test == "wilcoxon":
            r = _wilcoxon_core(Z, confidence)
            r["ci_method"] = f"Walsh averages ({r['ci_method']})"
        elif test == "sign":
            r = _sign_core(Z, confidence)
            r["ci_method"] = "order statistics (binomial)"
        elif test == "randomization":
            signs, _ = _randomization_setup(
                n, B, shared.get("randomization"), alpha, lambda: child("randomization")
            )
            r = _randomization_core(Z, signs, confidence)
            r["ci_method"] = "inverted randomisation test"
        else:
            res = _bootstrap_setup(n, B, shared.get("bootstrap"), alpha, lambda: child("bootstrap"))
            counts = res.counts()
            t_obs, asl, _ = bootstrap_core(Z, counts, alpha)
            iv = _bootstrap_intervals(Z, counts, confidence, (bootstrap_interval,))
            zbar = Z.mean(axis=1)
            r = {
                "statistic": t_obs,
                "p_value": asl,
                "estimate": zbar,
                "ci_low": iv[bootstrap_interval][0],
                "ci_high": iv[bootstrap_interval][1],
                "ci_level": np.full(P, confidence),
                "ci_method": f"{bootstrap_interval} bootstrap",
            }
        if correction == "holm":
            r["p_adjusted"] = holm(r["p_value"])
        elif correction == "bh":
            r["p_adjusted"] = benjamini_hochberg(r["p_value"])
        else:
            r["p_adjusted"] = np.array(r["p_value"], dtype=float, copy=True)
        results[test] = r
    dz, dve = _effect_sizes(Z, residual_variance)
    means = X.mean(axis=1)
    estimand = {"wilcoxon": "pseudomedian", "sign": "median"}
    m = len(tests)
    pair = np.repeat(np.arange(P), m)
    which = np.tile(np.arange(m), P)

    def column(key, default=np.nan):
        per_test = np.empty((m, P), dtype=object if key == "ci_method" else float)
        for j, t in enumerate(tests):
            v = results[t].get(key, default)
            per_test[j] = v
        return per_test[which, pair]

    p_adj = column("p_adjusted")
    frame = pd.DataFrame(
        {
            "system_a": [names[i] for i in ia[pair]],
            "system_b": [names[i] for i in ib[pair]],
            "test": [tests[j] for j in which],
            "n_topics": n,
            "mean_a": means[ia][pair],
            "mean_b": means[ib][pair],
            "diff": (means[ia] - means[ib])[pair],
            "estimand": [estimand.get(tests[j], "mean") for j in which],
            "estimate": column("estimate"),
            "statistic": column("statistic"),
            "p_value": column("p_value"),
            "p_adjusted": p_adj,
            "significant": p_adj < alpha,
            "ci_low": column("ci_low"),
            "ci_high": column("ci_high"),
            "ci_level": column("ci_level"),
            "ci_method": column("ci_method", ""),
            "margin_of_error": column("margin_of_error"),
            "effect_size": dz[pair],
            "effect_size_ve": dve[pair],
        }
    )
    return frame
