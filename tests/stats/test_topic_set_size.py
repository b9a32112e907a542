"""Tests for metaeval.stats.topic_set_size: Sakai's topic-set-size design.

Oracles: statsmodels' power functions (TTestPower, FTestAnovaPower), brute-force scans over n,
simulated experiments in worlds with the designed effect, and statsmodels' ANOVA for V_E.
Sakai's Excel tools' outputs and his papers' tables are not in the stored references, so no
published number is checked here.
"""

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import special, stats
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.power import FTestAnovaPower, TTestPower

from metaeval.stats.topic_set_size import (
    VarianceEstimate,
    expected_ci_width,
    min_detectable_difference_anova,
    min_detectable_difference_paired_t,
    power_anova,
    power_paired_t,
    residual_variance,
    topic_set_size_anova,
    topic_set_size_ci,
    topic_set_size_paired_t,
)

# (min_d, variance, alpha, beta): from a large standardised effect (a few topics) to the small
# differences of IR measures (hundreds of topics)
T_CASES = [
    (0.5, 1.0, 0.05, 0.20),
    (1.5, 1.0, 0.05, 0.20),
    (0.10, 0.05, 0.05, 0.20),
    (0.05, 0.04, 0.01, 0.10),
    (0.02, 0.03, 0.05, 0.30),
]
# (min_d, variance, m, alpha, beta)
F_CASES = [
    (0.10, 0.02, 10, 0.05, 0.20),
    (0.20, 0.05, 2, 0.05, 0.20),
    (0.05, 0.01, 50, 0.01, 0.10),
    (0.15, 0.03, 5, 0.05, 0.50),
]


def _long(X):
    S, T = X.shape
    return pd.DataFrame(
        {
            "system": np.repeat(np.arange(S), T).astype(str),
            "topic": np.tile(np.arange(T), S).astype(str),
            "value": X.ravel(),
        }
    )


# --------------------------------------------------------------------------------------------
# Against statsmodels
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("min_d", "var", "alpha", "beta"), T_CASES)
def test_paired_t_design_matches_statsmodels_ttestpower(min_d, var, alpha, beta):
    # TTestPower is the one-sample (= paired) t-test in standardised units: effect_size is
    # minD / sigma_d, nobs the number of topics (pairs).
    effect = min_d / math.sqrt(var)
    design = topic_set_size_paired_t(min_d, var, alpha=alpha, beta=beta)
    n = design.n_topics
    ref = TTestPower()
    for k in (n - 1, n, n + 7):
        if k >= 2:
            ours = power_paired_t(k, min_d, var, alpha=alpha)
            theirs = ref.power(effect_size=effect, nobs=k, alpha=alpha, alternative="two-sided")
            assert ours == pytest.approx(theirs, rel=1e-10, abs=1e-12)
    n_sm = ref.solve_power(effect_size=effect, alpha=alpha, power=1 - beta, alternative="two-sided")
    assert n == math.ceil(n_sm)
    assert design.power >= 1 - beta
    assert n == 2 or power_paired_t(n - 1, min_d, var, alpha=alpha) < 1 - beta
    assert design.power == power_paired_t(n, min_d, var, alpha=alpha)


@pytest.mark.parametrize(("min_d", "var", "m", "alpha", "beta"), F_CASES)
def test_anova_design_matches_statsmodels_ftestanovapower(min_d, var, m, alpha, beta):
    # FTestAnovaPower's parametrisation: effect_size is Cohen's f, sqrt(sum (mu_i - mu)^2 /
    # (m sigma^2)), here sqrt(minD^2 / (2 m sigma^2)) (best and worst at +-minD/2, the rest at
    # the grand mean); nobs is the TOTAL number of observations, m n, not n; k_groups = m.
    # Its noncentrality f^2 m n = n minD^2 / (2 sigma^2) and denominator df m n - m = m(n-1)
    # are then those of the design.
    f = math.sqrt(min_d**2 / (2 * m * var))
    design = topic_set_size_anova(min_d, var, m, alpha=alpha, beta=beta)
    n = design.n_topics
    ref = FTestAnovaPower()
    for k in (n - 1, n, 2 * n):
        if k >= 2:
            ours = power_anova(k, min_d, var, m, alpha=alpha)
            theirs = ref.power(effect_size=f, nobs=m * k, alpha=alpha, k_groups=m)
            assert ours == pytest.approx(theirs, rel=1e-10, abs=1e-12)
    total = ref.solve_power(effect_size=f, nobs=None, alpha=alpha, power=1 - beta, k_groups=m)
    assert n == math.ceil(total / m)  # power grows with the total m n
    assert design.power >= 1 - beta
    assert n == 2 or power_anova(n - 1, min_d, var, m, alpha=alpha) < 1 - beta


def test_designs_are_the_smallest_n_found_by_a_scan():
    # The search (bracketing and bisection from an approximate start) against a plain scan.
    for min_d, var, alpha, beta in T_CASES[:3]:
        n = topic_set_size_paired_t(min_d, var, alpha=alpha, beta=beta).n_topics
        scan = next(
            k for k in range(2, 10_000) if power_paired_t(k, min_d, var, alpha=alpha) >= 1 - beta
        )
        assert n == scan
    for min_d, var, m, alpha, beta in F_CASES[:2]:
        n = topic_set_size_anova(min_d, var, m, alpha=alpha, beta=beta).n_topics
        scan = next(
            k for k in range(2, 10_000) if power_anova(k, min_d, var, m, alpha=alpha) >= 1 - beta
        )
        assert n == scan
    for width, var in [(0.1, 0.02), (0.05, 0.04), (2.0, 1.0), (20.0, 1.0)]:
        n = topic_set_size_ci(width, var).n_topics
        scan = next(k for k in range(2, 10_000) if expected_ci_width(k, var) <= width)
        assert n == scan


# --------------------------------------------------------------------------------------------
# Against simulation
# --------------------------------------------------------------------------------------------


def test_paired_t_design_power_by_simulation():
    # Worlds with the designed effect: two systems on n topics, x = topic effect + system
    # effect + N(0, sigma^2) noise, so the per-topic differences are N(minD, 2 sigma^2): the
    # design's sigma_d^2 = 2 V_E. 10,000 simulated experiments at the designed n.
    sigma2, min_d, target = 0.02, 0.05, 0.80
    design = topic_set_size_paired_t(min_d, 2 * sigma2, beta=1 - target)
    n = design.n_topics
    assert abs(design.power - target) < 0.01  # n is large: the design hits its target closely
    rng = np.random.default_rng(2016)
    reps = 10_000
    topic = rng.uniform(0.1, 0.9, (reps, 1, n))
    x = topic + np.array([[min_d], [0.0]]) + rng.normal(0, math.sqrt(sigma2), (reps, 2, n))
    d = x[:, 0] - x[:, 1]
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))
    empirical = np.mean(np.abs(t) >= stats.t.isf(0.025, n - 1))
    assert abs(empirical - target) <= 0.02, (empirical, design)
    assert abs(empirical - design.power) <= 4 * math.sqrt(target * (1 - target) / reps)


def test_anova_design_power_by_simulation():
    # One-way ANOVA worlds with the least favourable configuration: best at +minD/2, worst at
    # -minD/2, the other m - 2 systems at the grand mean, within-system variance sigma^2.
    sigma2, min_d, m, target = 0.03, 0.12, 6, 0.80
    design = topic_set_size_anova(min_d, sigma2, m, beta=1 - target)
    n = design.n_topics
    assert abs(design.power - target) < 0.01
    mu = np.zeros(m)
    mu[0], mu[-1] = min_d / 2, -min_d / 2
    rng = np.random.default_rng(19)
    reps = 10_000
    x = mu[None, :, None] + rng.normal(0, math.sqrt(sigma2), (reps, m, n))
    means = x.mean(axis=2)
    ss_a = n * ((means - means.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    ss_e = ((x - means[:, :, None]) ** 2).sum(axis=(1, 2))
    f_stat = (ss_a / (m - 1)) / (ss_e / (m * (n - 1)))
    empirical = np.mean(f_stat >= stats.f.isf(0.05, m - 1, m * (n - 1)))
    assert abs(empirical - target) <= 0.02, (empirical, design)
    assert abs(empirical - design.power) <= 4 * math.sqrt(target * (1 - target) / reps)


def test_ci_design_expected_width_by_simulation():
    # The expected width with E[sd] = c4(n) sigma, against the mean width of simulated
    # intervals; c4 from Gamma directly (not log-gamma) where it does not overflow.
    var, width = 0.04, 0.1
    design = topic_set_size_ci(width, var)
    n = design.n_topics
    assert design.expected_width <= width < expected_ci_width(n - 1, var)
    c4 = math.sqrt(2 / (n - 1)) * special.gamma(n / 2) / special.gamma((n - 1) / 2)
    formula = 2 * stats.t.isf(0.025, n - 1) * c4 * math.sqrt(var / n)
    assert design.expected_width == pytest.approx(formula, rel=1e-12)
    rng = np.random.default_rng(4)
    reps = 40_000
    d = rng.normal(0.03, math.sqrt(var), (reps, n))
    widths = 2 * stats.t.isf(0.025, n - 1) * d.std(axis=1, ddof=1) / math.sqrt(n)
    se = widths.std() / math.sqrt(reps)
    assert abs(widths.mean() - design.expected_width) <= 4 * se
    # without the c4 correction (E[sd] taken as sigma) the width would be off by many SEs
    assert abs(widths.mean() - formula / c4) > 10 * se
    # and the intervals cover the true difference 95% of the time
    half = widths / 2
    cover = np.mean(np.abs(d.mean(axis=1) - 0.03) <= half)
    assert abs(cover - 0.95) < 4 * math.sqrt(0.95 * 0.05 / reps)


def test_expected_ci_width_decreases_with_n():
    w = np.array([expected_ci_width(n, 1.0) for n in range(2, 2000)])
    assert np.all(np.diff(w) < 0)
    assert expected_ci_width(5000, 1.0) == pytest.approx(2 * 1.959964 / math.sqrt(5000), rel=1e-3)


# --------------------------------------------------------------------------------------------
# Inverses
# --------------------------------------------------------------------------------------------


def test_min_detectable_differences_invert_the_power():
    for n in (5, 30, 200):
        d = min_detectable_difference_paired_t(n, 0.04, alpha=0.05, beta=0.2)
        assert power_paired_t(n, d, 0.04) == pytest.approx(0.8, abs=1e-9)
        e = min_detectable_difference_anova(n, 0.02, 8, alpha=0.01, beta=0.1)
        assert power_anova(n, e, 0.02, 8, alpha=0.01) == pytest.approx(0.9, abs=1e-9)
    # consistent with the designs: the designed n detects minD, one topic fewer does not
    design = topic_set_size_paired_t(0.05, 0.04)
    n = design.n_topics
    assert (
        min_detectable_difference_paired_t(n, 0.04)
        <= 0.05
        < min_detectable_difference_paired_t(n - 1, 0.04)
    )
    design = topic_set_size_anova(0.1, 0.02, 10)
    n = design.n_topics
    assert (
        min_detectable_difference_anova(n, 0.02, 10)
        <= 0.1
        < min_detectable_difference_anova(n - 1, 0.02, 10)
    )
    # minD shrinks as 1/sqrt(n) for large n
    ratio = min_detectable_difference_paired_t(400, 1.0) / min_detectable_difference_paired_t(
        1600, 1.0
    )
    assert ratio == pytest.approx(2.0, rel=0.01)
    # with no difference a test rejects at its level
    assert power_paired_t(20, 0.0, 1.0) == pytest.approx(0.05, rel=1e-10)
    assert power_anova(20, 0.0, 1.0, 4) == pytest.approx(0.05, rel=1e-10)


# --------------------------------------------------------------------------------------------
# The variance from existing data
# --------------------------------------------------------------------------------------------


def test_residual_variance_is_the_anova_residual_mean_square():
    rng = np.random.default_rng(6)
    A = rng.uniform(0.1, 0.9, 30)[None, :] + rng.normal(0, 0.1, (8, 30))
    B = rng.uniform(0.1, 0.9, 50)[None, :] + rng.normal(0, 0.15, (5, 50))
    ref = [anova_lm(smf.ols("value ~ C(system) + C(topic)", data=_long(X)).fit()) for X in (A, B)]
    one = residual_variance(A)
    assert isinstance(one, VarianceEstimate)
    assert one.residual == pytest.approx(ref[0].loc["Residual", "mean_sq"], rel=1e-10)
    assert one.df == 7 * 29 and one.difference == 2 * one.residual
    pooled = residual_variance(A, B)
    ss = sum(r.loc["Residual", "sum_sq"] for r in ref)
    df = sum(r.loc["Residual", "df"] for r in ref)
    assert pooled.residual == pytest.approx(ss / df, rel=1e-10)
    assert pooled.df == df and len(pooled.to_frame()) == 2
    # the designs take the estimate and use the right part of it
    assert topic_set_size_paired_t(0.05, pooled) == topic_set_size_paired_t(
        0.05, 2 * pooled.residual
    )
    assert topic_set_size_ci(0.1, pooled) == topic_set_size_ci(0.1, pooled.difference)
    assert topic_set_size_anova(0.1, pooled, 10) == topic_set_size_anova(0.1, pooled.residual, 10)
    assert power_paired_t(50, 0.05, pooled) == power_paired_t(50, 0.05, pooled.difference)
    # a tidy frame gives the same estimate
    frame = _long(A).rename(columns={"system": "run"})
    assert residual_variance(frame).residual == pytest.approx(one.residual, rel=1e-12)


def test_design_result_frame():
    design = topic_set_size_anova(0.1, 0.02, 10)
    row = design.to_frame()
    assert row.shape[0] == 1
    assert row.loc[0, "n_topics"] == design.n_topics and row.loc[0, "test"] == "anova"
    assert row.loc[0, "n_systems"] == 10 and row.loc[0, "power"] == design.power
    ci = topic_set_size_ci(0.1, 0.04)
    assert ci.test == "ci" and ci.power is None and ci.width == 0.1
    assert isinstance(ci.expected_width, float)


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def test_errors_name_the_parameter():
    with pytest.raises(ValueError, match="min_d"):
        topic_set_size_paired_t(0.0, 1.0)
    with pytest.raises(ValueError, match="min_d"):
        topic_set_size_anova(-0.1, 1.0, 3)
    with pytest.raises(ValueError, match="variance"):
        topic_set_size_paired_t(0.1, -1.0)
    with pytest.raises(TypeError, match="variance"):
        topic_set_size_paired_t(0.1, "0.02")
    with pytest.raises(TypeError, match="residual_variance"):
        topic_set_size_paired_t(0.1, np.ones((3, 10)))
    with pytest.raises(ValueError, match="width"):
        topic_set_size_ci(0.0, 1.0)
    with pytest.raises(ValueError, match="alpha"):
        topic_set_size_ci(0.1, 1.0, alpha=1.0)
    with pytest.raises(ValueError, match="beta"):
        topic_set_size_paired_t(0.1, 1.0, beta=0.0)
    with pytest.raises(ValueError, match="beta=0.96"):
        topic_set_size_paired_t(0.1, 1.0, alpha=0.05, beta=0.96)
    with pytest.raises(ValueError, match="n_systems"):
        topic_set_size_anova(0.1, 1.0, 1)
    with pytest.raises(TypeError, match="n_systems"):
        power_anova(10, 0.1, 1.0, 2.5)
    with pytest.raises(ValueError, match="n_topics"):
        power_paired_t(1, 0.1, 1.0)
    with pytest.raises(TypeError, match="n_topics"):
        expected_ci_width(10.5, 1.0)
    with pytest.raises(ValueError, match="more than"):
        topic_set_size_paired_t(1e-9, 1.0)
    with pytest.raises(TypeError, match="at least one"):
        residual_variance()
    # systems that differ by the same amount on every topic: no variance to design from
    x = np.linspace(0.1, 0.9, 10)
    flat = residual_variance(np.vstack([x, x + 0.1]))
    for design in (
        lambda: topic_set_size_paired_t(0.1, flat),
        lambda: topic_set_size_ci(0.1, flat),
        lambda: power_paired_t(10, 0.1, flat),
        lambda: expected_ci_width(10, flat),
    ):
        with pytest.raises(ValueError, match="residual variance of these score matrices is 0"):
            design()
    with pytest.raises(ValueError, match=r"scores\[1\] needs at least 2 systems"):
        residual_variance(np.ones((3, 5)), np.ones((1, 5)))
