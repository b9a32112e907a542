"""Tests for metaeval.stats.gtheory: G-study, D-study, topics needed, the link to Kendall's tau.

Oracles: Brennan's (2001) printed tables for Synthetic Data Sets No. 1 and No. 4; statsmodels'
ANOVA; hand computation of the formulas; a leave-out loop for the jackknife; simulation from
the random-effects model for the intervals and for the expected tau.
"""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metaeval.stats.gtheory import (
    GStudy,
    d_study,
    expected_tau,
    g_study,
    simulate_tau,
    topics_needed,
)

# Brennan (2001), Synthetic Data Set No. 4 (Table 3.2, p. 73), recast as a p x i design on
# p. 182: 10 persons (here: systems, rows) x 12 items (topics, columns). Transcribed from
# Urbano's gt4ireval (``gt4ireval.test.R``, data ``synthetic4``).
SYNTHETIC4 = np.array(
    [
        [5, 6, 5, 5, 5, 3, 4, 5, 6, 7, 3, 3],
        [9, 3, 7, 7, 7, 5, 5, 5, 7, 7, 5, 2],
        [3, 4, 3, 3, 5, 3, 3, 5, 6, 5, 1, 6],
        [7, 5, 5, 3, 3, 1, 4, 3, 5, 3, 3, 5],
        [9, 2, 9, 7, 7, 7, 3, 7, 2, 7, 5, 3],
        [3, 4, 3, 5, 3, 3, 6, 3, 4, 5, 1, 2],
        [7, 3, 7, 7, 7, 5, 5, 7, 5, 5, 5, 4],
        [5, 8, 5, 7, 7, 5, 5, 4, 3, 2, 1, 1],
        [9, 9, 8, 8, 6, 6, 6, 5, 5, 8, 1, 1],
        [4, 4, 4, 3, 3, 5, 6, 5, 5, 7, 1, 1],
    ],
    dtype=float,
)

# Brennan (2001), Synthetic Data Set No. 1: 10 persons x 12 dichotomous items, transcribed
# from GeneralizIT's tests (``tests/fixtures/design1_fixtures.py``).
SYNTHETIC1 = np.array(
    [
        [1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        [1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0],
        [1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0],
        [1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0],
        [1, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
        [1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0],
        [1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
        [1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 0],
        [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0],
        [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    ],
    dtype=float,
)

# A printed value with k decimals is matched to half a unit of its last digit.
P3, P4 = 5e-4, 5e-5


def _random_matrix(rng, S=12, T=20, var=(0.02, 0.03, 0.01)):
    s = rng.normal(0, math.sqrt(var[0]), (S, 1))
    t = rng.normal(0, math.sqrt(var[1]), (1, T))
    e = rng.normal(0, math.sqrt(var[2]), (S, T))
    return 0.3 + s + t + e


# ------------------------------------------------------------------ Brennan's printed tables


def test_brennan_synthetic4_table_6_2_components_and_jackknife_intervals():
    # Brennan (2001) Table 6.2 (p. 182), as checked by gt4ireval's test.gstudy.R: mean squares
    # and variance components to 4 decimals, 80% jackknife intervals to 3.
    g = g_study(SYNTHETIC4, ci="jackknife", level=0.80)
    assert (g.n_systems, g.n_topics) == (10, 12)
    assert g.ms_s == pytest.approx(10.2963, abs=P4)
    assert g.ms_t == pytest.approx(11.6273, abs=P4)
    assert g.ms_st == pytest.approx(2.7872, abs=P4)
    assert g.var_s == pytest.approx(0.6258, abs=P4)
    assert g.var_t == pytest.approx(0.8840, abs=P4)
    assert g.var_st == pytest.approx(2.7872, abs=P4)
    assert (g.var_s_low, g.var_s_high) == pytest.approx((0.078, 1.174), abs=P3)
    assert (g.var_t_low, g.var_t_high) == pytest.approx((0.169, 1.599), abs=P3)
    assert (g.var_st_low, g.var_st_high) == pytest.approx((2.070, 3.505), abs=P3)


def test_brennan_synthetic4_table_6_5_d_study_intervals():
    # Brennan (2001) Table 6.5 (p. 198): n' = 12, 80% intervals; Feldt for Erho2, Arteaga et
    # al. for Phi (gt4ireval's test.dstudy.R).
    d = d_study(g_study(SYNTHETIC4), level=0.80)
    assert d.n_topics.tolist() == [12]
    assert (d.erho2[0], d.erho2_low[0], d.erho2_high[0]) == pytest.approx(
        (0.729, 0.541, 0.876), abs=P3
    )
    assert (d.phi[0], d.phi_low[0], d.phi_high[0]) == pytest.approx((0.672, 0.457, 0.845), abs=P3)


def test_brennan_synthetic1_anova_components_and_coefficients():
    # Brennan's Synthetic Data Set No. 1 (p x i, n_p = 10, n_i = 12), the values GeneralizIT
    # tests against: SS, MS, variance components (4 decimals), Erho2 and Phi (3 decimals).
    g = g_study(SYNTHETIC1)
    assert (g.ss_s, g.ss_t, g.ss_st) == pytest.approx((7.3417, 9.6917, 12.5583), abs=P4)
    assert (g.ms_s, g.ms_t, g.ms_st) == pytest.approx((0.8157, 0.8811, 0.1269), abs=P4)
    assert (g.var_s, g.var_t, g.var_st) == pytest.approx((0.0574, 0.0754, 0.1269), abs=P4)
    assert (g.df_s, g.df_t, g.df_st) == (9, 11, 99)
    d = g.d_study()
    assert d.erho2[0] == pytest.approx(0.844, abs=P3)
    assert d.phi[0] == pytest.approx(0.773, abs=P3)


# ------------------------------------------------------------------ ANOVA against statsmodels


def test_mean_squares_match_statsmodels_anova():
    smf = pytest.importorskip("statsmodels.formula.api")
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(11)
    X = _random_matrix(rng, S=9, T=15)
    tidy = pd.DataFrame(
        [
            {"run": f"r{s}", "topic": f"t{t:02d}", "value": X[s, t]}
            for s in range(X.shape[0])
            for t in range(X.shape[1])
        ]
    )
    table = sm.stats.anova_lm(smf.ols("value ~ C(run) + C(topic)", data=tidy).fit(), typ=1)
    for g in (g_study(X), g_study(tidy)):  # the array and the tidy frame alike
        assert g.ms_s == pytest.approx(table.loc["C(run)", "mean_sq"], abs=1e-10)
        assert g.ms_t == pytest.approx(table.loc["C(topic)", "mean_sq"], abs=1e-10)
        assert g.ms_st == pytest.approx(table.loc["Residual", "mean_sq"], abs=1e-10)
        assert g.ss_st == pytest.approx(table.loc["Residual", "sum_sq"], abs=1e-10)
        assert (g.df_s, g.df_t, g.df_st) == (8, 14, 8 * 14)
        assert g.var_s == pytest.approx((g.ms_s - g.ms_st) / 15, abs=1e-12)
        assert g.var_t == pytest.approx((g.ms_t - g.ms_st) / 9, abs=1e-12)


def test_tidy_frame_selection_by_runs():
    rng = np.random.default_rng(2)
    X = _random_matrix(rng, S=5, T=6)
    tidy = pd.DataFrame(
        [{"run": f"r{s}", "topic": t, "value": X[s, t]} for s in range(5) for t in range(6)]
    )
    g = g_study(tidy, runs=["r0", "r1", "r3"])
    assert g.ms_s == pytest.approx(g_study(X[[0, 1, 3]]).ms_s, abs=1e-12)


# ------------------------------------------------------------------ negative components


def test_negative_component_is_set_to_zero_and_reported():
    # Every topic has the same mean: SS_t = 0, so the ANOVA estimate of sigma^2(t) is
    # -MS_st / S < 0.
    X = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [0.6, 0.4, 0.2], [0.4, 0.6, 0.8]])
    X = X + np.array([[0.0], [1.0], [2.0], [3.0]])  # distinct systems, topic means still equal
    g = g_study(X)
    assert g.var_t_raw == pytest.approx(-g.ms_st / 4, abs=1e-12)
    assert g.var_t == 0.0
    assert g.negative == ("topic",)
    # The Satterthwaite interval of a non-positive estimate is undefined.
    assert math.isnan(g.var_t_low) and math.isnan(g.var_t_high)
    frame = g.to_frame()
    assert frame.loc[1, "variance"] == 0.0 and frame.loc[1, "variance_raw"] < 0
    assert frame["percent"].sum() == pytest.approx(100.0)


# ------------------------------------------------------------------ intervals


def test_satterthwaite_matches_hand_computation():
    g = g_study(SYNTHETIC4, level=0.90)
    T, S = 12, 10
    # sigma^2(s) = (MS_s - MS_st) / T: nu = est^2 / ((MS_s/T)^2/df_s + (MS_st/T)^2/df_st).
    est = (g.ms_s - g.ms_st) / T
    nu = est**2 / ((g.ms_s / T) ** 2 / 9 + (g.ms_st / T) ** 2 / 99)
    lo, hi = nu * est / stats.chi2.ppf(0.95, nu), nu * est / stats.chi2.ppf(0.05, nu)
    assert (g.var_s_low, g.var_s_high) == pytest.approx((lo, hi), rel=1e-12)
    est = (g.ms_t - g.ms_st) / S
    nu = est**2 / ((g.ms_t / S) ** 2 / 11 + (g.ms_st / S) ** 2 / 99)
    lo, hi = nu * est / stats.chi2.ppf(0.95, nu), nu * est / stats.chi2.ppf(0.05, nu)
    assert (g.var_t_low, g.var_t_high) == pytest.approx((lo, hi), rel=1e-12)
    # sigma^2(st,e) = MS_st: the exact chi-square interval with 99 df.
    lo, hi = 99 * g.ms_st / stats.chi2.ppf(0.95, 99), 99 * g.ms_st / stats.chi2.ppf(0.05, 99)
    assert (g.var_st_low, g.var_st_high) == pytest.approx((lo, hi), rel=1e-12)


def test_satterthwaite_coverage_under_the_normal_model():
    # 2000 matrices from known components: the interaction interval is exact (coverage .90 up
    # to Monte-Carlo error, 4 SE = .027); the other two are Satterthwaite's approximation.
    rng = np.random.default_rng(20240601)
    true = (0.02, 0.03, 0.01)
    reps = 2000
    hit = np.zeros((reps, 3), bool)
    for r in range(reps):
        g = g_study(_random_matrix(rng, S=10, T=15, var=true), level=0.90)
        bounds = [
            (g.var_s_low, g.var_s_high),
            (g.var_t_low, g.var_t_high),
            (g.var_st_low, g.var_st_high),
        ]
        hit[r] = [lo <= v <= hi for (lo, hi), v in zip(bounds, true)]
    cover = hit.mean(axis=0)
    se = math.sqrt(0.9 * 0.1 / reps)
    assert abs(cover[2] - 0.90) < 4 * se
    assert 0.82 < cover[0] < 0.97
    assert 0.82 < cover[1] < 0.97


def _jackknife_loop(X, level):
    """Brennan's jackknife for p x i, by explicit leave-out G-studies (the slow definition)."""

    def comps(A):
        g = g_study(A)
        return np.array([g.var_s_raw, g.var_t_raw, g.var_st_raw])

    S, T = X.shape
    full = comps(X)
    no_s = [comps(np.delete(X, s, axis=0)) for s in range(S)]
    no_t = [comps(np.delete(X, t, axis=1)) for t in range(T)]
    pseudo = np.empty((3, S, T))
    for s, t in itertools.product(range(S), range(T)):
        both = comps(np.delete(np.delete(X, s, axis=0), t, axis=1))
        pseudo[:, s, t] = (
            S * T * full - (S - 1) * T * no_s[s] - S * (T - 1) * no_t[t] + (S - 1) * (T - 1) * both
        )
    q = stats.t.ppf((1 + level) / 2, S * T - 1)
    out = []
    for k in range(3):
        gp = g_study(pseudo[k])
        se = math.sqrt(gp.var_s_raw / S + gp.var_t_raw / T + gp.var_st_raw / (S * T))
        out.append((max(full[k] - q * se, 0.0), max(full[k] + q * se, 0.0)))
    return out


def test_fast_jackknife_matches_leave_out_loop():
    rng = np.random.default_rng(5)
    X = _random_matrix(rng, S=6, T=7)
    g = g_study(X, ci="jackknife", level=0.9)
    expected = _jackknife_loop(X, 0.9)
    got = [(g.var_s_low, g.var_s_high), (g.var_t_low, g.var_t_high), (g.var_st_low, g.var_st_high)]
    for (elo, ehi), (lo, hi) in zip(expected, got):
        assert lo == pytest.approx(elo, abs=1e-10)
        assert hi == pytest.approx(ehi, abs=1e-10)


# ------------------------------------------------------------------ D-study and topics needed


def test_d_study_formulas_by_hand():
    g = g_study(SYNTHETIC4)
    vs, vt, ve = g.var_s, g.var_t, g.var_st
    d = d_study(g, [1, 12, 50, 200])
    for n, e, p in zip([1, 12, 50, 200], d.erho2, d.phi):
        assert e == pytest.approx(vs / (vs + ve / n), rel=1e-13)
        assert p == pytest.approx(vs / (vs + (vt + ve) / n), rel=1e-13)
    assert np.all(d.phi <= d.erho2)  # the topic effect only adds error
    assert np.all((d.erho2_low <= d.erho2) & (d.erho2 <= d.erho2_high))
    assert np.all((d.phi_low <= d.phi) & (d.phi <= d.phi_high))
    # Feldt by hand at n' = 50, 95%.
    F = g.ms_s / g.ms_st
    r_low = (F / stats.f.ppf(0.975, 9, 99) - 1) / 12
    assert d.erho2_low[2] == pytest.approx(50 * r_low / (1 + 50 * r_low), rel=1e-12)
    frame = d.to_frame()
    assert list(frame.columns[:3]) == ["n_topics", "erho2", "erho2_low"]
    assert len(frame) == 4


def test_topics_needed_by_hand_and_by_the_d_study():
    g = g_study(SYNTHETIC4)
    need = topics_needed(g, [0.8, 0.9, 0.95])
    for target, n_e, n_p in zip([0.8, 0.9, 0.95], need.erho2, need.phi):
        assert n_e == math.ceil(target * g.var_st / (g.var_s * (1 - target)))
        assert n_p == math.ceil(target * (g.var_t + g.var_st) / (g.var_s * (1 - target)))
        # The smallest n' that reaches the target.
        e = d_study(g, [int(n_e) - 1, int(n_e)]).erho2
        assert e[0] < target <= e[1]
        ph = d_study(g, [int(n_p) - 1, int(n_p)]).phi
        assert ph[0] < target <= ph[1]
    assert np.all(need.erho2_low <= need.erho2) and np.all(need.erho2 <= need.erho2_high)
    assert np.all(need.phi_low <= need.phi) and np.all(need.phi <= need.phi_high)
    # The interval of the needed n' is the inverse of the D-study interval: at the upper bound
    # n', the *lower* Erho2 bound reaches the target.
    n_hi = int(need.erho2_high[1])
    assert d_study(g, n_hi).erho2_low[0] >= 0.9 > d_study(g, n_hi - 1).erho2_low[0]
    assert len(need.to_frame()) == 3


def test_topics_needed_exact_integer_ratio_is_not_rounded_up():
    # var_s = var_st: target .8 needs exactly 0.8 / 0.2 = 4 topics, not 5.
    g = g_study(SYNTHETIC4)
    fake = GStudy(**{**g.__dict__, "var_s": 0.1, "var_st": 0.1, "var_t": 0.0})
    assert topics_needed(fake, 0.8).erho2[0] == 4


def test_zero_system_variance_needs_infinitely_many_topics():
    X = np.random.default_rng(0).normal(0, 0.1, (4, 5))
    X = X - X.mean(axis=1, keepdims=True)  # equal system means: MS_s = 0
    g = g_study(X)
    assert g.var_s == 0.0 and "system" in g.negative
    assert topics_needed(g, 0.9).erho2[0] == math.inf
    assert d_study(g, 10).erho2[0] == 0.0


# ------------------------------------------------------------------ link to Kendall's tau


def _simulated_taus(g, n_topics, against, B, rng):
    """Independent Monte-Carlo: B collections from the fitted components, tau per collection
    (scipy's kendalltau), between two disjoint n-topic sets or against the universe scores."""
    S = g.n_systems
    out = np.empty(B)
    for b in range(B):
        mu = rng.normal(0, math.sqrt(g.var_s), S)

        def mean_over_topics(mu=mu):
            topics = rng.normal(0, math.sqrt(g.var_t), n_topics)
            resid = rng.normal(0, math.sqrt(g.var_st), (S, n_topics))
            return (mu[:, None] + topics[None, :] + resid).mean(axis=1)

        ref = mean_over_topics() if against == "split" else mu
        out[b] = stats.kendalltau(ref, mean_over_topics()).statistic
    return out


@pytest.mark.parametrize("against", ["split", "truth"])
@pytest.mark.parametrize("n_topics", [5, 25])
def test_expected_tau_against_simulation_from_fitted_components(against, n_topics):
    g = g_study(SYNTHETIC4)
    taus = _simulated_taus(g, n_topics, against, B=3000, rng=np.random.default_rng(n_topics))
    expected = expected_tau(d_study(g, n_topics).erho2[0], against=against)
    se = taus.std(ddof=1) / math.sqrt(taus.size)
    assert abs(taus.mean() - expected) < 4 * se, (taus.mean(), expected, se)


def test_simulate_tau_agrees_with_the_closed_form():
    g = g_study(SYNTHETIC4)
    for against in ("split", "truth"):
        sim = simulate_tau(g, 12, against=against, B=4000, rng=7)
        expected = expected_tau(d_study(g, 12).erho2[0], against=against)
        assert abs(sim.mean - expected) < 4 * sim.se
        assert sim.values.shape == (4000,)
    ap = simulate_tau(g, 12, statistic="tau_ap", B=500, rng=1)
    assert -1 <= ap.mean <= 1 and len(ap.to_frame()) == 1


def test_simulate_tau_is_reproducible_from_a_seed():
    g = g_study(SYNTHETIC1)
    a = simulate_tau(g, 8, B=50, rng=3).values
    b = simulate_tau(g, 8, B=50, rng=np.random.default_rng(3)).values
    assert np.array_equal(a, b)


def test_urbano2013_power_law_matches_gt4ireval():
    # gt4ireval's vignette: gt2tau(Erho2 = 0.95) is 0.86412 (5 significant digits).
    assert expected_tau(0.95, relation="urbano2013") == pytest.approx(0.86412, abs=5e-6)
    e = np.array([0.5, 0.8, 0.95])
    assert expected_tau(e, relation="urbano2013", statistic="tau_ap") == pytest.approx(
        e**3.98652984123827
    )


def test_expected_tau_closed_form_values():
    assert expected_tau(0.0) == 0.0
    assert expected_tau(1.0) == 1.0
    assert expected_tau(0.5) == pytest.approx(1 / 3)  # 2/pi * pi/6
    assert expected_tau(0.25, against="truth") == pytest.approx(1 / 3)
    assert expected_tau([0.5, 1.0]).shape == (2,)


# ------------------------------------------------------------------ validation


def test_validation_errors_name_the_parameter():
    g = g_study(SYNTHETIC4)
    with pytest.raises(ValueError, match="ci"):
        g_study(SYNTHETIC4, ci="bootstrap")
    with pytest.raises(ValueError, match="level"):
        g_study(SYNTHETIC4, level=1.0)
    with pytest.raises(ValueError, match="jackknife"):
        g_study(SYNTHETIC4[:2], ci="jackknife")
    with pytest.raises(ValueError, match="scores"):
        g_study(np.ones(5))
    with pytest.raises(TypeError, match="GStudy"):
        d_study({"var_s": 1.0})
    with pytest.raises(ValueError, match="n_topics"):
        d_study(g, 0)
    with pytest.raises(TypeError, match="n_topics"):
        d_study(g, 2.5)
    with pytest.raises(ValueError, match="target"):
        topics_needed(g, 1.0)
    with pytest.raises(ValueError, match="erho2"):
        expected_tau(1.5)
    with pytest.raises(ValueError, match="simulate_tau"):
        expected_tau(0.5, statistic="tau_ap")
    with pytest.raises(ValueError, match="against"):
        expected_tau(0.5, relation="urbano2013", against="truth")
    with pytest.raises(TypeError, match="rng"):
        simulate_tau(g, 5, rng="seed")
    with pytest.raises(ValueError, match="B"):
        simulate_tau(g, 5, B=1)


def test_results_are_frozen():
    g = g_study(SYNTHETIC4)
    with pytest.raises(AttributeError):
        g.var_s = 1.0
    frame = g.to_frame()
    assert frame["source"].tolist() == ["system", "topic", "system x topic,e"]
    assert frame["ci"].iloc[0] == "satterthwaite"
