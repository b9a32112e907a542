r"""Topic-set-size design: how many topics a test collection needs (Sakai 2016).

Given a statistical requirement and the variance of a measure, the smallest number of topics n
that meets it (Nagata 2003, as Sakai 2016 applies it to IR):

* **paired t-test**: power 1 - beta to detect a difference minD between two systems at level
  alpha, two-sided; with :math:`\Delta = \mathrm{minD} / \sigma_d`, :math:`\phi = n - 1`,
  :math:`\lambda = \sqrt n \Delta` and :math:`t' \sim t'(\phi, \lambda)` (noncentral t),
  power = :math:`P(t' \ge t_{\alpha/2}(\phi)) + P(t' \le -t_{\alpha/2}(\phi))`.
* **one-way ANOVA** over m systems: power 1 - beta when the best and worst systems differ by
  minD and the others sit at the grand mean (the least favourable configuration), so that
  :math:`\Delta = \sum_i (\mu_i - \mu)^2 / \sigma^2 = \mathrm{minD}^2 / (2\sigma^2)`;
  :math:`\phi_A = m - 1`, :math:`\phi_E = m(n - 1)`, :math:`\lambda = n\Delta` and power =
  :math:`P(F'(\phi_A, \phi_E; \lambda) \ge F_\alpha(\phi_A, \phi_E))` (noncentral F).
* **confidence interval**: the expected width of the 100(1 - alpha)% interval of a paired
  mean difference at most delta: :math:`2\, t_{\alpha/2}(n-1)\, c_4(n)\, \sigma_d / \sqrt n
  \le \delta`, where :math:`E[\hat\sigma] = c_4(n)\sigma` with
  :math:`c_4(n) = \sqrt{2/(n-1)}\,\Gamma(n/2) / \Gamma((n-1)/2)` (docs/methods.md §7).

The variance comes from existing data (:func:`residual_variance`): :math:`\hat\sigma^2 = V_E`,
the residual mean square of the two-way ANOVA of a (systems x topics) score matrix, and
:math:`\hat\sigma_d^2 = 2 V_E` for the difference of two systems on a topic, as Sakai (2016)
does. Each design function takes the variance as a number or as that estimate, of which it
uses the right part.

metaeval computes the noncentral t and F distributions exactly (scipy); Sakai's Excel tools
(samplesizeTTEST2, samplesizeANOVA2, samplesizeCI2) use normal approximations to them, so their
n can differ from metaeval's by a topic or so. The inverses, :func:`power_paired_t`,
:func:`power_anova`, :func:`min_detectable_difference_paired_t`,
:func:`min_detectable_difference_anova` and :func:`expected_ci_width`, give what a design with
n topics achieves.

References
----------
.. [N03] Y. Nagata (2003). How to Design the Sample Size (in Japanese). Asakura Shoten.
.. [S16] T. Sakai (2016). Topic set size design. Information Retrieval Journal 19(3),
   256-283.
.. [S18] T. Sakai (2018). Laboratory Experiments in Information Retrieval: Sample Sizes,
   Effect Sizes, and Statistical Power. Springer, chapter 6.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

from metaeval._validation import check_alpha, check_int, check_probability, check_real
from metaeval.stats.anova import anova

__all__ = [
    "VarianceEstimate",
    "TopicSetSize",
    "residual_variance",
    "topic_set_size_paired_t",
    "topic_set_size_anova",
    "topic_set_size_ci",
    "power_paired_t",
    "power_anova",
    "min_detectable_difference_paired_t",
    "min_detectable_difference_anova",
    "expected_ci_width",
]

# No design is searched beyond this many topics: a requirement needing more is not a design.
_MAX_TOPICS = 10**9


# --------------------------------------------------------------------------------------------
# The variance from existing data
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class VarianceEstimate:
    """Result of :func:`residual_variance`.

    Attributes
    ----------
    residual : float
        sigma^2 hat: the residual mean square V_E (pooled over the matrices given), the
        within-system variance that one-way ANOVA designs use.
    df : int
        Its degrees of freedom (their sum over the matrices).
    per_matrix : pandas.DataFrame
        One row per matrix: ``n_systems``, ``n_topics``, ``V_E``, ``df_E``.
    """

    residual: float
    df: int
    per_matrix: pd.DataFrame

    @property
    def difference(self) -> float:
        """sigma_d^2 hat = 2 V_E: the variance of the per-topic difference between two systems,
        which paired t-test and confidence-interval designs use (Sakai 2016)."""
        return 2.0 * self.residual

    def to_frame(self) -> pd.DataFrame:
        """The per-matrix estimates (a copy of :attr:`per_matrix`)."""
        return self.per_matrix.copy()

    def __repr__(self) -> str:
        return (
            f"VarianceEstimate(residual={self.residual:.6g}, difference={self.difference:.6g}, "
            f"df={self.df}, matrices={len(self.per_matrix)})"
        )


def residual_variance(*scores) -> VarianceEstimate:
    r"""The within-system variance of a measure from existing (systems x topics) scores.

    For one matrix, :math:`\hat\sigma^2 = V_E = S_E / \phi_E`, the residual mean square of the
    two-way ANOVA without replication (:func:`metaeval.stats.anova.anova`), with
    :math:`\phi_E = (S-1)(T-1)`. Several matrices (several test collections, or rounds of a
    track, scored with the same measure) are pooled by their degrees of freedom,
    :math:`\hat\sigma^2 = \sum_C S_{E,C} / \sum_C \phi_{E,C}`, the usual pooled variance.
    ``.difference`` is :math:`\hat\sigma_d^2 = 2\hat\sigma^2` (Sakai 2016).

    Parameters
    ----------
    *scores : array_like (S, T) or pandas.DataFrame
        One or more score matrices, rows = systems; or tidy frames with columns ``run``,
        ``topic``, ``value``.

    Returns
    -------
    VarianceEstimate

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.5, 0.4, 0.9], [0.3, 0.3, 0.6]])
    >>> est = residual_variance(X)
    >>> round(est.residual, 6), round(est.difference, 6)
    (0.005, 0.01)
    """
    if not scores:
        raise TypeError("residual_variance needs at least one score matrix")
    rows = []
    for k, s in enumerate(scores):
        name = "scores" if len(scores) == 1 else f"scores[{k}]"
        try:
            res = anova(s)
        except (TypeError, ValueError) as exc:
            raise type(exc)(str(exc).replace("scores", name, 1)) from exc
        rows.append(
            {"n_systems": res.n_systems, "n_topics": res.n_topics, "V_E": res.V_E, "df_E": res.df_E}
        )
    frame = pd.DataFrame(rows)
    df = int(frame["df_E"].sum())
    pooled = float((frame["V_E"] * frame["df_E"]).sum() / df)
    return VarianceEstimate(pooled, df, frame)


# --------------------------------------------------------------------------------------------
# Designs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicSetSize:
    """A topic-set-size design: the smallest number of topics meeting a requirement.

    Attributes
    ----------
    n_topics : int
        The number of topics.
    test : {"paired_t", "anova", "ci"}
    alpha : float
    variance : float
        The variance used: sigma_d^2 (paired t, ci) or sigma^2 (anova).
    beta : float or None
        The Type II error probability required (paired t, anova).
    min_d : float or None
        The minimum detectable difference (paired t, anova).
    n_systems : int or None
        anova: the number of systems m.
    power : float or None
        The power the design achieves at n_topics (>= 1 - beta).
    width : float or None
        ci: the largest expected interval width allowed, delta.
    expected_width : float or None
        ci: the expected width at n_topics (<= width).
    """

    n_topics: int
    test: str
    alpha: float
    variance: float
    beta: float | None = None
    min_d: float | None = None
    n_systems: int | None = None
    power: float | None = None
    width: float | None = None
    expected_width: float | None = None

    def to_frame(self) -> pd.DataFrame:
        """The design as a one-row frame (one column per attribute)."""
        return pd.DataFrame([asdict(self)])


def topic_set_size_paired_t(
    min_d, variance, *, alpha: float = 0.05, beta: float = 0.20
) -> TopicSetSize:
    r"""Topics needed for a paired t-test to detect ``min_d`` with power 1 - beta (Sakai 2016).

    The smallest n >= 2 with power(n) >= 1 - beta, where, with
    :math:`\Delta = \mathrm{minD}/\sigma_d`, :math:`\phi = n - 1` and
    :math:`\lambda = \sqrt n \Delta`,

    .. math::

        \mathrm{power}(n) = P(t'(\phi, \lambda) \ge t_{\alpha/2}(\phi))
            + P(t'(\phi, \lambda) \le -t_{\alpha/2}(\phi))

    (two-sided, noncentral t; scipy's exact distribution). The search starts from Nagata's
    approximation :math:`n \approx ((z_{\alpha/2} + z_\beta)/\Delta)^2 + z_{\alpha/2}^2/2`.

    Parameters
    ----------
    min_d : float
        The minimum detectable difference between two systems' means, > 0 (in the measure's
        units; with ``variance=1`` it is the standardised effect size).
    variance : float or VarianceEstimate
        :math:`\sigma_d^2`, the variance of the per-topic difference between two systems; from
        existing data, 2 V_E (``residual_variance(X)``, whose ``.difference`` is used).
    alpha : float
        Significance level, two-sided.
    beta : float
        Type II error probability (power 1 - beta), with 1 - beta > alpha.

    Returns
    -------
    TopicSetSize

    Examples
    --------
    >>> topic_set_size_paired_t(0.5, 1.0).n_topics  # Cohen's d = 0.5, power 0.8
    34
    """
    min_d = _positive("min_d", min_d)
    var = _variance(variance, difference=True)
    alpha, beta = _levels(alpha, beta)
    delta = min_d / math.sqrt(var)
    za = stats.norm.isf(alpha / 2)
    zb = stats.norm.isf(beta)
    start = ((za + zb) / delta) ** 2 + za * za / 2
    n = _smallest_n(lambda k: _power_t(k, delta, alpha) >= 1 - beta, start)
    return TopicSetSize(
        n_topics=n,
        test="paired_t",
        alpha=alpha,
        variance=var,
        beta=beta,
        min_d=min_d,
        power=_power_t(n, delta, alpha),
    )


def topic_set_size_anova(
    min_d, variance, n_systems, *, alpha: float = 0.05, beta: float = 0.20
) -> TopicSetSize:
    r"""Topics needed for a one-way ANOVA over m systems to detect ``min_d`` (Sakai 2016).

    minD is the difference between the best and the worst of the m systems, the others being
    at the grand mean (the configuration with the least power for a given range), so
    :math:`\Delta = \sum_i (\mu_i - \mu)^2/\sigma^2 = \mathrm{minD}^2/(2\sigma^2)`. The
    smallest n >= 2 with

    .. math::

        P(F'(\phi_A, \phi_E; \lambda) \ge F_\alpha(\phi_A, \phi_E)) \ge 1 - \beta, \qquad
        \phi_A = m - 1, \ \phi_E = m(n - 1), \ \lambda = n\Delta

    (noncentral F, scipy's exact distribution). In Cohen's terms the effect size is
    :math:`f = \sqrt{\Delta/m}`, with m n observations in all (``statsmodels``'
    ``FTestAnovaPower`` takes that f and the total m n).

    Parameters
    ----------
    min_d : float
        The minimum detectable range of the system means, > 0.
    variance : float or VarianceEstimate
        :math:`\sigma^2`, the within-system variance; from existing data, V_E
        (``residual_variance(X)``, whose ``.residual`` is used).
    n_systems : int
        m >= 2, the number of systems the ANOVA will compare.
    alpha, beta : float
        Significance level and Type II error probability, with 1 - beta > alpha.

    Returns
    -------
    TopicSetSize
    """
    min_d = _positive("min_d", min_d)
    var = _variance(variance, difference=False)
    m = check_int("n_systems", n_systems, min=2)
    alpha, beta = _levels(alpha, beta)
    big_delta = min_d * min_d / (2.0 * var)
    # Start: the n at which the noncentrality reaches that of a chi-square test with the same
    # power (the large-n limit), ncx2 being cheap; the search corrects it.
    chi_crit = stats.chi2.isf(alpha, m - 1)
    lam = optimize.brentq(
        lambda x: stats.ncx2.sf(chi_crit, m - 1, x) - (1 - beta), 1e-9, 1e6, xtol=1e-6
    )
    n = _smallest_n(lambda k: _power_f(k, m, big_delta, alpha) >= 1 - beta, lam / big_delta)
    return TopicSetSize(
        n_topics=n,
        test="anova",
        alpha=alpha,
        variance=var,
        beta=beta,
        min_d=min_d,
        n_systems=m,
        power=_power_f(n, m, big_delta, alpha),
    )


def topic_set_size_ci(width, variance, *, alpha: float = 0.05) -> TopicSetSize:
    r"""Topics needed for the expected width of a paired-difference CI to be <= ``width``.

    The 100(1 - alpha)% interval of the mean difference of two systems over n topics is
    :math:`\bar d \pm t_{\alpha/2}(n-1)\hat\sigma_d/\sqrt n`; its expected width uses
    :math:`E[\hat\sigma_d] = c_4(n)\sigma_d` (normal differences), with
    :math:`c_4(n) = \sqrt{2/(n-1)}\,\Gamma(n/2)/\Gamma((n-1)/2)`. The design is the smallest
    n >= 2 with

    .. math::

        2\, t_{\alpha/2}(n-1)\, c_4(n)\, \frac{\sigma_d}{\sqrt n} \le \delta

    (Sakai 2016, the CI-based design; docs/methods.md §7). The search starts from
    :math:`n \approx 4 z_{\alpha/2}^2 \sigma_d^2 / \delta^2`.

    Parameters
    ----------
    width : float
        delta > 0, the largest expected width of the interval.
    variance : float or VarianceEstimate
        :math:`\sigma_d^2`, the variance of the per-topic difference; from existing data 2 V_E
        (``residual_variance(X)``, whose ``.difference`` is used).
    alpha : float
        1 - confidence level.

    Returns
    -------
    TopicSetSize
    """
    width = _positive("width", width)
    var = _variance(variance, difference=True)
    alpha = check_alpha(alpha)
    za = stats.norm.isf(alpha / 2)
    start = 4 * za * za * var / (width * width)
    n = _smallest_n(lambda k: _ci_width(k, var, alpha) <= width, start)
    return TopicSetSize(
        n_topics=n,
        test="ci",
        alpha=alpha,
        variance=var,
        width=width,
        expected_width=_ci_width(n, var, alpha),
    )


# --------------------------------------------------------------------------------------------
# Inverses: what n topics achieve
# --------------------------------------------------------------------------------------------


def power_paired_t(n_topics, min_d, variance, *, alpha: float = 0.05) -> float:
    r"""Power of a two-sided paired t-test over n topics to detect ``min_d``.

    :math:`P(t'(n-1, \sqrt n\,\mathrm{minD}/\sigma_d) \ge t_{\alpha/2}(n-1))
    + P(t' \le -t_{\alpha/2}(n-1))`, as in :func:`topic_set_size_paired_t` (Sakai 2016).

    Parameters
    ----------
    n_topics : int
        n >= 2.
    min_d : float
        The true difference between the two systems' means, >= 0 (0 gives alpha).
    variance : float or VarianceEstimate
        :math:`\sigma_d^2`, the variance of the per-topic difference (2 V_E).
    alpha : float
        Significance level, two-sided.

    Returns
    -------
    float
    """
    n = check_int("n_topics", n_topics, min=2)
    min_d = check_real("min_d", min_d, min=0.0)
    var = _variance(variance, difference=True)
    alpha = check_alpha(alpha)
    return _power_t(n, min_d / math.sqrt(var), alpha)


def power_anova(n_topics, min_d, variance, n_systems, *, alpha: float = 0.05) -> float:
    r"""Power of a one-way ANOVA over m systems and n topics each to detect a range ``min_d``.

    :math:`P(F'(m-1, m(n-1); n\,\mathrm{minD}^2/(2\sigma^2)) \ge F_\alpha(m-1, m(n-1)))`, as
    in :func:`topic_set_size_anova` (Sakai 2016): the best and worst systems minD apart, the
    others at the grand mean.

    Parameters
    ----------
    n_topics : int
        n >= 2, the topics of each system.
    min_d : float
        The range of the system means, >= 0 (0 gives alpha).
    variance : float or VarianceEstimate
        :math:`\sigma^2`, the within-system variance (V_E).
    n_systems : int
        m >= 2.
    alpha : float
        Significance level.

    Returns
    -------
    float
    """
    n = check_int("n_topics", n_topics, min=2)
    min_d = check_real("min_d", min_d, min=0.0)
    var = _variance(variance, difference=False)
    m = check_int("n_systems", n_systems, min=2)
    alpha = check_alpha(alpha)
    return _power_f(n, m, min_d * min_d / (2.0 * var), alpha)


def min_detectable_difference_paired_t(
    n_topics, variance, *, alpha: float = 0.05, beta: float = 0.20
) -> float:
    r"""The difference a paired t-test over n topics detects with power 1 - beta.

    The minD > 0 solving power(n, minD) = 1 - beta (:func:`power_paired_t`), found by Brent's
    method on the standardised difference and multiplied by :math:`\sigma_d` (Sakai 2016).

    Parameters
    ----------
    n_topics : int
        n >= 2.
    variance : float or VarianceEstimate
        :math:`\sigma_d^2`, the variance of the per-topic difference (2 V_E).
    alpha, beta : float
        Significance level (two-sided) and Type II error probability, 1 - beta > alpha.

    Returns
    -------
    float
        minD, in the units of the scores.
    """
    n = check_int("n_topics", n_topics, min=2)
    var = _variance(variance, difference=True)
    alpha, beta = _levels(alpha, beta)
    delta = _solve_increasing(lambda x: _power_t(n, x, alpha) - (1 - beta))
    return delta * math.sqrt(var)


def min_detectable_difference_anova(
    n_topics, variance, n_systems, *, alpha: float = 0.05, beta: float = 0.20
) -> float:
    r"""The range of m system means a one-way ANOVA over n topics detects with power 1 - beta.

    The minD > 0 solving power(n, minD) = 1 - beta (:func:`power_anova`): Brent's method finds
    the noncentrality :math:`\lambda`, and :math:`\mathrm{minD} = \sqrt{2\sigma^2\lambda/n}`
    (Sakai 2016).

    Parameters
    ----------
    n_topics : int
        n >= 2, the topics of each system.
    variance : float or VarianceEstimate
        :math:`\sigma^2`, the within-system variance (V_E).
    n_systems : int
        m >= 2.
    alpha, beta : float
        Significance level and Type II error probability, 1 - beta > alpha.

    Returns
    -------
    float
        minD, the range between the best and the worst system, in the units of the scores.
    """
    n = check_int("n_topics", n_topics, min=2)
    var = _variance(variance, difference=False)
    m = check_int("n_systems", n_systems, min=2)
    alpha, beta = _levels(alpha, beta)
    lam = _solve_increasing(lambda x: _power_f_lambda(x, m, n, alpha) - (1 - beta))
    return math.sqrt(2.0 * var * lam / n)


def expected_ci_width(n_topics, variance, *, alpha: float = 0.05) -> float:
    r"""Expected width of the 100(1 - alpha)% CI of a paired mean difference over n topics.

    :math:`2\, t_{\alpha/2}(n-1)\, c_4(n)\, \sigma_d/\sqrt n`, as in :func:`topic_set_size_ci`
    (Sakai 2016).

    Parameters
    ----------
    n_topics : int
        n >= 2.
    variance : float or VarianceEstimate
        :math:`\sigma_d^2`, the variance of the per-topic difference (2 V_E).
    alpha : float
        1 - confidence level.

    Returns
    -------
    float
    """
    n = check_int("n_topics", n_topics, min=2)
    var = _variance(variance, difference=True)
    alpha = check_alpha(alpha)
    return _ci_width(n, var, alpha)


# --------------------------------------------------------------------------------------------
# Internals
# --------------------------------------------------------------------------------------------


def _power_t(n: int, delta: float, alpha: float) -> float:
    df = n - 1
    tc = stats.t.isf(alpha / 2, df)
    nc = math.sqrt(n) * delta
    lower = stats.nct.cdf(-tc, df, nc)
    if not math.isfinite(lower):
        # scipy returns NaN far in the lower tail (large noncentralities), where the tail is at
        # most P(t' <= 0) = Phi(-nc), below 1e-15 wherever it failed: nothing to add.
        lower = 0.0
    return float(stats.nct.sf(tc, df, nc) + lower)


def _power_f(n: int, m: int, big_delta: float, alpha: float) -> float:
    return _power_f_lambda(n * big_delta, m, n, alpha)


def _power_f_lambda(lam: float, m: int, n: int, alpha: float) -> float:
    """Power of the one-way ANOVA of m groups of n at noncentrality lam."""
    dfa, dfe = m - 1, m * (n - 1)
    fc = stats.f.isf(alpha, dfa, dfe)
    if lam == 0:
        # scipy's noncentral F is wrong at noncentrality 0 (it returned -0.94): use the central.
        return float(stats.f.sf(fc, dfa, dfe))
    return float(stats.ncf.sf(fc, dfa, dfe, lam))


def _c4(n: int) -> float:
    """E[sd] / sigma for n normal observations (log-gamma: Gamma overflows past n = 343)."""
    return math.exp(
        0.5 * math.log(2.0 / (n - 1)) + special.gammaln(n / 2) - special.gammaln((n - 1) / 2)
    )


def _ci_width(n: int, var: float, alpha: float) -> float:
    return float(2.0 * stats.t.isf(alpha / 2, n - 1) * _c4(n) * math.sqrt(var / n))


def _smallest_n(ok, start: float, n_min: int = 2) -> int:
    """The smallest integer n >= n_min with ok(n), for ok monotone (False then True), searched
    from the guess ``start``: bracketed by doubling, then bisected."""
    hi = max(n_min, math.ceil(start)) if math.isfinite(start) else n_min
    hi = min(hi, _MAX_TOPICS)
    lo = n_min - 1  # ok(n_min - 1) is taken as False
    if not ok(hi):
        lo = hi
        while True:
            if hi >= _MAX_TOPICS:
                raise ValueError(
                    f"the requirement needs more than {_MAX_TOPICS:,} topics; ask for a larger "
                    "difference, a wider interval or less power"
                )
            hi = min(2 * hi, _MAX_TOPICS)
            if ok(hi):
                break
            lo = hi
    elif hi - 1 > lo and not ok(hi - 1):
        return hi  # the guess is exact, as it usually is to within a topic
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _solve_increasing(f) -> float:
    """The root x > 0 of an increasing f with f(0) < 0: bracketed by doubling, then Brent."""
    hi = 1.0
    while f(hi) < 0:
        hi *= 2.0
        if hi > 1e12:
            raise ValueError("no difference reaches that power; check alpha and beta")
    return float(optimize.brentq(f, 0.0, hi, xtol=1e-14, rtol=1e-13, maxiter=500))


def _positive(name: str, value) -> float:
    return check_real(name, value, min=0.0, min_open=True)


def _levels(alpha, beta) -> tuple[float, float]:
    alpha = check_alpha(alpha)
    beta = check_probability("beta", beta, open_low=True, open_high=True)
    if 1.0 - beta <= alpha:
        raise ValueError(
            f"beta={beta:g} asks for power {1 - beta:g}, not above alpha={alpha:g}: a test has "
            "that power against no difference at all; use a smaller beta (e.g. 0.2)"
        )
    return alpha, beta


def _variance(value, *, difference: bool) -> float:
    if isinstance(value, VarianceEstimate):
        if not value.residual > 0:
            raise ValueError(
                "the residual variance of these score matrices is 0 (the systems differ by the "
                "same amount on every topic), so no topic set size, power or interval width "
                "follows from it; estimate it on matrices whose systems vary over the topics"
            )
        return value.difference if difference else value.residual
    if (isinstance(value, np.ndarray) and value.ndim == 2) or isinstance(value, pd.DataFrame):
        raise TypeError(
            "variance must be a number or residual_variance(scores), not a score matrix; "
            "estimate it first: residual_variance(scores)"
        )
    return _positive("variance", value)
