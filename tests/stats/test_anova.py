"""Tests for metaeval.stats.anova: two-way ANOVA without replication and Tukey's HSD test.

Oracles: statsmodels' OLS ANOVA table and pairwise_tukeyhsd, scipy's studentized_range and
paired t-test, exact enumeration of the within-topic permutations, the published values of
Sakai's textbook example, and null worlds for the family-wise error rate.
"""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.multicomp import pairwise_tukeyhsd

from metaeval.meta import discriminative_power, resamples
from metaeval.meta._testing import null_scores
from metaeval.stats.anova import anova, randomized_tukey_hsd, tukey_hsd

# Sakai (2015), 情報アクセス評価方法論, Table 5.1: 3 systems x 20 topics, the worked example of
# two-way ANOVA without replication and Tukey HSD. The scores and the published values below
# are transcribed from the tests of kampersanda/elinor (a Rust IR evaluation library), which
# check against the values printed in the book.
SAKAI_TABLE_5_1 = np.array(
    [
        [.70, .30, .20, .60, .40, .40, .00, .70, .10, .30, .50, .40, .00, .60, .50, .30, .10, .50, .20, .10],
        [.50, .10, .00, .20, .40, .30, .00, .50, .30, .30, .40, .40, .10, .40, .20, .10, .10, .60, .30, .20],
        [.00, .00, .20, .10, .30, .30, .10, .20, .40, .40, .40, .30, .30, .20, .20, .20, .10, .50, .40, .30],
    ]
)  # fmt: skip


def _long(X):
    S, T = X.shape
    return pd.DataFrame(
        {
            "system": np.repeat([f"s{i}" for i in range(S)], T),
            "topic": np.tile([f"t{j:03d}" for j in range(T)], S),
            "value": X.ravel(),
        }
    )


def _matrices():
    rng = np.random.default_rng(11)
    continuous = rng.random((5, 30)) + np.linspace(0, 0.2, 5)[:, None]
    # P@10-like: discrete, with ties and a strong topic effect
    topic = rng.uniform(0.1, 0.9, 25)
    discrete = np.round(np.clip(topic + rng.normal(0, 0.15, (7, 25)), 0, 1) * 10) / 10
    return {"continuous": continuous, "discrete": discrete, "sakai": SAKAI_TABLE_5_1}


# --------------------------------------------------------------------------------------------
# ANOVA
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["continuous", "discrete", "sakai"])
def test_two_way_anova_matches_statsmodels(name):
    X = _matrices()[name]
    ref = anova_lm(smf.ols("value ~ C(system) + C(topic)", data=_long(X)).fit())
    res = anova(X)
    t = res.to_frame()
    for ours, theirs in [("system", "C(system)"), ("topic", "C(topic)"), ("residual", "Residual")]:
        assert t.loc[ours, "ss"] == pytest.approx(ref.loc[theirs, "sum_sq"], rel=1e-10, abs=1e-12)
        assert t.loc[ours, "df"] == ref.loc[theirs, "df"]
        assert t.loc[ours, "ms"] == pytest.approx(ref.loc[theirs, "mean_sq"], rel=1e-10, abs=1e-12)
    for ours, theirs in [("system", "C(system)"), ("topic", "C(topic)")]:
        assert t.loc[ours, "F"] == pytest.approx(ref.loc[theirs, "F"], rel=1e-10)
        assert t.loc[ours, "p"] == pytest.approx(ref.loc[theirs, "PR(>F)"], rel=1e-8, abs=1e-12)
    ve, f_system = res.V_E, res.F
    assert ve == pytest.approx(ref.loc["Residual", "mean_sq"], rel=1e-10)
    assert res.df_E == (X.shape[0] - 1) * (X.shape[1] - 1)
    assert t.loc["total", "ss"] == pytest.approx(t["ss"].iloc[:3].sum(), rel=1e-12)
    assert f_system == t.loc["system", "F"] and res.p == t.loc["system", "p"]


def test_one_way_anova_matches_statsmodels():
    X = _matrices()["continuous"]
    ref = anova_lm(smf.ols("value ~ C(system)", data=_long(X)).fit())
    res = anova(X, design="one-way")
    t = res.to_frame()
    assert list(t.index) == ["system", "residual", "total"]
    assert t.loc["system", "ss"] == pytest.approx(ref.loc["C(system)", "sum_sq"], rel=1e-10)
    assert t.loc["system", "F"] == pytest.approx(ref.loc["C(system)", "F"], rel=1e-10)
    assert t.loc["system", "p"] == pytest.approx(ref.loc["C(system)", "PR(>F)"], rel=1e-8)
    ve = res.V_E
    assert ve == pytest.approx(ref.loc["Residual", "mean_sq"], rel=1e-10)
    assert res.df_E == ref.loc["Residual", "df"] == 5 * 29


def test_anova_sakai_textbook_example():
    # Published values (Sakai 2015, Table 5.1 example), printed to 4 decimals (p to 3).
    res = anova(SAKAI_TABLE_5_1)
    t = res.to_frame()
    assert t.loc["system", "ss"] == pytest.approx(0.1083, abs=1e-4)
    assert t.loc["topic", "ss"] == pytest.approx(1.0293, abs=1e-4)
    assert t.loc["residual", "ss"] == pytest.approx(0.8317, abs=1e-4)
    assert t.loc["total", "ss"] == pytest.approx(1.9693, abs=1e-4)
    assert t.loc["system", "ms"] == pytest.approx(0.0542, abs=1e-4)
    assert t.loc["topic", "ms"] == pytest.approx(0.0542, abs=1e-4)
    ve = res.V_E
    assert ve == pytest.approx(0.0219, abs=1e-4)
    assert t.loc["system", "F"] == pytest.approx(2.475, abs=1e-3)
    assert t.loc["system", "p"] == pytest.approx(0.098, abs=1e-3)
    assert t.loc["topic", "p"] == pytest.approx(0.009, abs=1e-3)
    assert res.df_E == 38


def test_anova_tidy_frame_and_names():
    X = _matrices()["continuous"]
    names = [f"run{i}" for i in range(X.shape[0])]
    frame = pd.DataFrame(
        {
            "run": np.repeat(names, X.shape[1]),
            "topic": np.tile(np.arange(X.shape[1]), X.shape[0]),
            "value": X.ravel(),
        }
    )
    a, b = anova(X, systems=names), anova(frame)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame(), rtol=1e-12)
    assert b.systems == tuple(names) and b.n_topics == X.shape[1]
    # a selection of topics is the ANOVA of those columns
    sub = anova(frame.assign(topic=frame["topic"].astype(str)), topics=["0", "1", "2", "3"])
    ve_sub, ve_cols = sub.V_E, anova(X[:, :4]).V_E
    assert ve_sub == pytest.approx(ve_cols, rel=1e-12)


def test_anova_exactly_additive_matrix():
    # system effect + topic effect and nothing else: V_E = 0 (not float noise), F infinite
    X = np.array([0.1, 0.3, 0.2])[:, None] + np.linspace(0, 0.5, 8)[None, :]
    res = anova(X)
    ve, f_system = res.V_E, res.F
    assert ve == 0.0
    assert f_system == np.inf and res.p == 0.0
    tk = tukey_hsd(X)
    assert (tk.pairs["p"] == 0).all() and np.isinf(tk.pairs["statistic"]).all()
    same = tukey_hsd(np.tile(np.linspace(0, 0.5, 8), (3, 1)))  # identical systems
    assert (same.pairs["p"] == 1).all() and (same.pairs["effect_size"] == 0).all()
    assert np.isnan(anova(np.tile(np.linspace(0, 0.5, 8), (3, 1))).F)


# --------------------------------------------------------------------------------------------
# Studentised Tukey HSD
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["continuous", "discrete", "sakai"])
def test_two_way_tukey_matches_studentized_range_by_hand(name):
    X = _matrices()[name]
    S, T = X.shape
    alpha = 0.05
    # The two-way oracle by hand: V_E and its df from statsmodels' OLS table, the studentised
    # range distribution from scipy.
    ref = anova_lm(smf.ols("value ~ C(system) + C(topic)", data=_long(X)).fit())
    VE, dfE = ref.loc["Residual", "mean_sq"], ref.loc["Residual", "df"]
    res = tukey_hsd(X, alpha=alpha)
    pairs = res.to_frame()
    means = X.mean(axis=1)
    qcrit = stats.studentized_range.ppf(1 - alpha, S, dfE)
    assert res.q_crit == pytest.approx(qcrit, rel=1e-10)
    assert res.critical_difference == pytest.approx(qcrit * math.sqrt(VE / T), rel=1e-10)
    for row, (i, j) in zip(pairs.itertuples(), itertools.combinations(range(S), 2)):
        d = means[i] - means[j]
        q = abs(d) / math.sqrt(VE / T)
        assert row.diff == pytest.approx(d, abs=1e-14)
        assert row.statistic == pytest.approx(q, rel=1e-10, abs=1e-12)
        assert row.p == pytest.approx(stats.studentized_range.sf(q, S, dfE), rel=1e-8, abs=1e-12)
        assert row.ci_low == pytest.approx(d - qcrit * math.sqrt(VE / T), rel=1e-10)
        assert row.ci_high == pytest.approx(d + qcrit * math.sqrt(VE / T), rel=1e-10)
        assert row.effect_size == pytest.approx(d / math.sqrt(VE), rel=1e-10, abs=1e-14)

    # pairwise_tukeyhsd is the one-way test, and it would be wrong here: it treats the T
    # scores of a system as independent replicates, so (1) the topic effect, the largest part
    # of the variation of IR scores, stays in its error variance instead of being removed as a
    # block, and (2) its df is S(T-1) instead of (S-1)(T-1). On paired topic scores its error
    # variance is inflated and its p-values far too large. It gives a different answer:
    oneway = pairwise_tukeyhsd(_long(X)["value"], _long(X)["system"], alpha=alpha)
    if name != "continuous":  # the discrete and Sakai matrices have strong topic effects
        assert not np.allclose(oneway.pvalues, pairs["p"], rtol=0.05)
        assert (oneway.pvalues >= pairs["p"] - 1e-12).all()


def test_one_way_tukey_matches_pairwise_tukeyhsd():
    # Where statsmodels' test applies (independent samples, design="one-way"), it is ours.
    for X in (_matrices()["continuous"], _matrices()["discrete"]):
        long = _long(X)
        for alpha in (0.05, 0.01):
            ref = pairwise_tukeyhsd(long["value"], long["system"], alpha=alpha)
            res = tukey_hsd(X, alpha=alpha, design="one-way")
            pairs = res.to_frame()
            # statsmodels' meandiffs are mean_b - mean_a (group2 - group1)
            np.testing.assert_allclose(-pairs["diff"], ref.meandiffs, rtol=1e-10, atol=1e-14)
            np.testing.assert_allclose(pairs["p"], ref.pvalues, rtol=1e-8, atol=1e-12)
            np.testing.assert_array_equal(pairs["significant"], ref.reject)
            np.testing.assert_allclose(
                -pairs[["ci_high", "ci_low"]].to_numpy(), ref.confint, rtol=1e-10, atol=1e-14
            )
            assert res.q_crit == pytest.approx(ref.q_crit, rel=1e-10)
            assert res.df_E == ref.df_total


def test_two_system_tukey_is_the_paired_t_test():
    # With two systems the studentised range is sqrt(2) |t| and V_E = var(d) / 2, with
    # df = T - 1: the two-way Tukey HSD test is the paired t-test.
    rng = np.random.default_rng(3)
    for T in (5, 20, 60):
        X = rng.random((2, T)) + np.array([[0.08], [0.0]])
        res = tukey_hsd(X)
        t = stats.ttest_rel(X[0], X[1])
        assert res.pairs["p"].iloc[0] == pytest.approx(t.pvalue, rel=1e-7)
        assert res.pairs["statistic"].iloc[0] == pytest.approx(
            math.sqrt(2) * abs(t.statistic), rel=1e-12
        )
        # and its interval is the paired t interval
        half = stats.t.isf(0.025, T - 1) * np.std(X[0] - X[1], ddof=1) / math.sqrt(T)
        assert res.critical_difference == pytest.approx(half, rel=1e-8)


def test_tukey_sakai_textbook_effect_sizes():
    # Published ES_E = (mean_i - mean_j) / sqrt(V_E) of the Table 5.1 example.
    for res in (tukey_hsd(SAKAI_TABLE_5_1), randomized_tukey_hsd(SAKAI_TABLE_5_1, B=200, rng=0)):
        es = res.pairs.set_index(["system_a", "system_b"])["effect_size"]
        assert es[(0, 1)] == pytest.approx(0.5070, abs=1e-4)
        assert es[(0, 2)] == pytest.approx(0.6760, abs=1e-4)
        assert es[(1, 2)] == pytest.approx(0.1690, abs=1e-4)


@pytest.mark.parametrize("method", ["studentized", "randomized"])
def test_significant_exactly_when_interval_excludes_zero(method):
    rng = np.random.default_rng(8)
    X = rng.random((8, 30)) + np.linspace(0, 0.4, 8)[:, None]
    if method == "studentized":
        res = tukey_hsd(X)
    else:
        res = randomized_tukey_hsd(X, B=2000, rng=1)
    p = res.pairs
    excludes = (p["ci_low"] > 0) | (p["ci_high"] < 0)
    assert 0 < p["significant"].sum() < len(p)  # both kinds present: the check bites
    np.testing.assert_array_equal(p["significant"], excludes)
    np.testing.assert_array_equal(p["significant"], p["diff"].abs() > res.critical_difference)


# --------------------------------------------------------------------------------------------
# Randomised Tukey HSD
# --------------------------------------------------------------------------------------------


def _exact_blocked_p(X):
    """Exact permutation p-values: every assignment of each topic's scores to the systems."""
    S, T = X.shape
    perms = list(itertools.permutations(range(S)))
    means = X.mean(axis=1)
    d = [abs(means[i] - means[j]) for i, j in itertools.combinations(range(S), 2)]
    ranges = []
    for choice in itertools.product(perms, repeat=T):
        m = [sum(X[choice[t][s], t] for t in range(T)) / T for s in range(S)]
        ranges.append(max(m) - min(m))
    ranges = np.array(ranges)
    return np.array([np.mean(ranges >= x - 1e-12) for x in d])


def test_randomized_matches_exact_enumeration_of_permutations():
    # 3 systems x 5 topics: (3!)^5 = 7776 within-topic permutations, all enumerated.
    rng = np.random.default_rng(5)
    topic = rng.uniform(0.1, 0.9, 5)
    X = np.clip(topic + rng.normal(0, 0.1, (3, 5)) + np.array([[0.12], [0.05], [0.0]]), 0, 1)
    exact = _exact_blocked_p(X)
    B = 40_000
    res = randomized_tukey_hsd(X, B=B, rng=7)
    se = np.sqrt(exact * (1 - exact) / B)
    assert np.all(np.abs(res.pairs["p"] - exact) <= 4.5 * se + 1e-3), (res.pairs["p"], exact)
    # It is topic-blocked, never one-way: shuffling all 15 scores across topics (the one-way
    # randomisation test) gives other p-values, here far larger (the topic effects dominate).
    gen = np.random.default_rng(9)
    flat = X.ravel()
    shuffled = np.array([gen.permutation(flat).reshape(3, 5).mean(axis=1) for _ in range(20_000)])
    oneway_r = shuffled.max(axis=1) - shuffled.min(axis=1)
    means = X.mean(axis=1)
    d = np.array([abs(means[i] - means[j]) for i, j in itertools.combinations(range(3), 2)])
    oneway_p = np.array([np.mean(oneway_r >= x) for x in d])
    assert np.max(np.abs(oneway_p - exact)) > 0.1
    assert np.all(np.abs(res.pairs["p"] - exact) < np.abs(oneway_p - exact))


def test_randomized_two_systems_is_the_sign_flip_test():
    # With two systems a within-topic permutation flips the sign of the topic's difference:
    # Fisher's randomisation test, enumerated exactly over all 2^12 sign vectors.
    rng = np.random.default_rng(2)
    X = rng.random((2, 12)) + np.array([[0.15], [0.0]])
    z = X[0] - X[1]
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=12)))
    exact = np.mean(np.abs(signs @ z) / 12 >= abs(z.mean()) - 1e-12)
    B = 40_000
    res = randomized_tukey_hsd(X, B=B, rng=4)
    assert abs(res.pairs["p"].iloc[0] - exact) <= 4.5 * math.sqrt(exact * (1 - exact) / B) + 1e-3


def test_randomized_p_values_equal_a_loop_over_its_permutations():
    # Brute force over the very permutations the test drew. A permutation depends on the seed
    # of the resamples and on (B, T, S) only, never on the values permuted (the contract of
    # metaeval.meta.Resamples): drawing them on an array of system indices reproduces them.
    rng = np.random.default_rng(12)
    S, T, B = 4, 6, 300
    X = np.round(rng.random((S, T)) * 10) / 10  # discrete: ties at the observed differences
    X[0] += 0.2
    shared = resamples("tukey", n_topics=T, n_systems=S, B=B, rng=3)
    res = randomized_tukey_hsd(X, resamples=shared)
    idx = np.broadcast_to(np.arange(S), (B, T, S))
    perm = np.random.default_rng(shared.seed).permuted(idx, axis=2)  # (B, T, S): topic rows
    means = X.mean(axis=1)
    pairs = list(itertools.combinations(range(S), 2))
    count = np.zeros(len(pairs))
    ranges = []
    for b in range(B):
        m = [sum(X[perm[b, t, s], t] for t in range(T)) / T for s in range(S)]
        r = max(m) - min(m)
        ranges.append(r)
        for k, (i, j) in enumerate(pairs):
            d = abs(means[i] - means[j])
            count[k] += r >= d - (1e-10 + 1e-10 * d)
    np.testing.assert_allclose(res.range_distribution, ranges, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(res.pairs["p"], count / B)
    k = math.ceil(0.05 * B)
    assert res.critical_difference == pytest.approx(sorted(ranges, reverse=True)[k - 1], rel=1e-12)


def test_randomized_equals_discriminative_power_tukey():
    X = null_scores(6, 25, rng=4) + np.linspace(0, 0.15, 6)[:, None]
    res = randomized_tukey_hsd(X, B=3000, rng=21)
    dp = discriminative_power(X, method="tukey", B=3000, rng=21)
    np.testing.assert_array_equal(res.pairs["p"], dp.pairs["asl"])
    assert res.critical_difference == dp.diff_required
    np.testing.assert_array_equal(res.range_distribution, dp.range_distribution)
    # shared resamples give the same result as the rng they were drawn from
    shared = resamples("tukey", n_topics=25, n_systems=6, B=3000, rng=21)
    np.testing.assert_array_equal(
        randomized_tukey_hsd(X, resamples=shared).pairs["p"], res.pairs["p"]
    )


@pytest.mark.parametrize("distribution", ["normal", "beta"])
def test_randomized_familywise_error_near_alpha_on_null_worlds(distribution):
    # Null worlds (exchangeable systems within every topic): the chance that *any* of the 10
    # pairs is declared significant is the family-wise error rate, alpha for this test.
    rng = np.random.default_rng(100)
    worlds, alpha = 600, 0.05
    hits = 0
    for _ in range(worlds):
        X = null_scores(5, 30, rng=rng, distribution=distribution)
        hits += randomized_tukey_hsd(X, B=400, alpha=alpha, rng=rng).n_significant > 0
    rate = hits / worlds
    assert abs(rate - alpha) < 3.5 * math.sqrt(alpha * (1 - alpha) / worlds), rate


def test_randomized_result_keeps_its_raw_material():
    X = null_scores(4, 20, rng=1)
    res = randomized_tukey_hsd(X, B=500, rng=2)
    assert res.B == 500 and res.range_distribution.shape == (500,)
    assert not res.range_distribution.flags.writeable
    assert res.anova.to_frame().loc["residual", "ms"] == res.V_E
    frame = res.to_frame()
    frame.loc[0, "p"] = -1.0  # a copy
    assert res.pairs.loc[0, "p"] != -1.0
    assert list(frame.columns) == [
        "system_a", "system_b", "mean_a", "mean_b", "diff", "effect_size", "statistic", "p",
        "significant", "ci_low", "ci_high",
    ]  # fmt: skip
    assert "randomized" in repr(res) and "B=500" in repr(res)
    assert res.resamples.seed is not None
    # the same integer seed gives the same result; different seeds, other permutations
    again = randomized_tukey_hsd(X, B=500, rng=2)
    np.testing.assert_array_equal(again.range_distribution, res.range_distribution)
    other = randomized_tukey_hsd(X, B=500, rng=3)
    assert not np.array_equal(other.range_distribution, res.range_distribution)


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def test_errors_name_the_parameter():
    X = null_scores(3, 10, rng=0)
    with pytest.raises(ValueError, match="design"):
        anova(X, design="three-way")
    with pytest.raises(ValueError, match="design"):
        tukey_hsd(X, design="paired")
    with pytest.raises(ValueError, match="alpha"):
        tukey_hsd(X, alpha=1.5)
    with pytest.raises(ValueError, match="alpha"):
        randomized_tukey_hsd(X, alpha=0.0, rng=0)
    with pytest.raises(ValueError, match="B"):
        randomized_tukey_hsd(X, B=0, rng=0)
    with pytest.raises(TypeError, match="B"):
        randomized_tukey_hsd(X, B=1.5, rng=0)
    with pytest.raises(TypeError, match="rng"):
        randomized_tukey_hsd(X, B=10, rng="seed")
    with pytest.raises(ValueError, match="at least 2 systems"):
        anova(X[:1])
    with pytest.raises(ValueError, match="at least 2 topics"):
        tukey_hsd(X[:, :1])
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        anova(bad)
    shared = resamples("tukey", n_topics=10, n_systems=3, B=100, rng=0)
    with pytest.raises(ValueError, match="B=200"):
        randomized_tukey_hsd(X, B=200, resamples=shared)
    with pytest.raises(ValueError, match="3 systems"):
        randomized_tukey_hsd(null_scores(4, 10, rng=0), resamples=shared)
    with pytest.raises(ValueError, match="tukey"):
        randomized_tukey_hsd(X, resamples=resamples("bootstrap", n_topics=10, B=100, rng=0))
    with pytest.raises(TypeError, match="resamples"):
        randomized_tukey_hsd(X, resamples=42)
    with pytest.warns(UserWarning, match="B=10"):
        randomized_tukey_hsd(X, B=10, rng=0)
