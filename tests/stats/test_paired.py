"""Tests for metaeval.stats.paired: every p-value and interval against an oracle.

Oracles: scipy (ttest_rel, wilcoxon, binomtest, quantile_test, permutation_test, bootstrap) where
it computes the same thing; brute-force enumeration of the sign vectors, exact integer
arithmetic and hand formulas where it does not; statsmodels for the ANOVA residual variance; a
published IR worked example (Tague 1981) for the sign test.
"""

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metaeval.meta import resamples
from metaeval.meta._testing import null_scores
from metaeval.meta.significance import compare
from metaeval.stats import paired
from metaeval.stats.paired import (
    COLUMNS,
    anova_residual_variance,
    bootstrap_test,
    paired_comparisons,
    paired_t_test,
    randomization_test,
    sign_test,
    wilcoxon_test,
)


def _pair(seed=0, n=20, shift=0.05, sd=0.1):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    return x, x - shift + rng.normal(0, sd, n)


# --------------------------------------------------------------------------------------------
# t-test
# --------------------------------------------------------------------------------------------


def test_t_test_matches_scipy_and_the_hand_margin_of_error():
    x, y = _pair(0)
    r = paired_t_test(x, y, confidence=0.9)
    ref = stats.ttest_rel(x, y)
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    ci = ref.confidence_interval(confidence_level=0.9)
    assert (r.ci_low, r.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    # Hand formula: MOE = t_{n-1, 0.95} * s / sqrt(n), the interval is diff +- MOE.
    z = x - y
    n = z.size
    moe = stats.t.ppf(0.95, n - 1) * math.sqrt(((z - z.mean()) ** 2).sum() / (n - 1)) / math.sqrt(n)
    assert r.margin_of_error == pytest.approx(moe, rel=1e-12)
    assert r.ci_low == pytest.approx(z.mean() - moe, abs=1e-12)
    assert r.ci_high == pytest.approx(z.mean() + moe, abs=1e-12)
    assert r.df == n - 1
    assert r.effect_size == pytest.approx(z.mean() / z.std(ddof=1), rel=1e-12)
    assert np.isnan(r.effect_size_ve)
    assert np.array_equal(r.differences, z)


def test_t_effect_size_with_residual_variance():
    x, y = _pair(1)
    r = paired_t_test(x, y, residual_variance=0.004)
    assert r.effect_size_ve == pytest.approx((x - y).mean() / math.sqrt(0.004), rel=1e-12)
    with pytest.raises(ValueError, match="residual_variance"):
        paired_t_test(x, y, residual_variance=0.0)


def test_anova_residual_variance_matches_statsmodels():
    smf = pytest.importorskip("statsmodels.formula.api")
    rng = np.random.default_rng(2)
    X = rng.random((5, 12)) + rng.random(12)
    tidy = pd.DataFrame(
        [(f"r{s}", f"t{t}", X[s, t]) for s in range(5) for t in range(12)],
        columns=["run", "topic", "value"],
    )
    fit = smf.ols("value ~ C(run) + C(topic)", data=tidy).fit()
    assert anova_residual_variance(X) == pytest.approx(fit.mse_resid, rel=1e-10)
    assert anova_residual_variance(tidy) == pytest.approx(fit.mse_resid, rel=1e-10)
    out = paired_comparisons(X, family="all_pairs", tests=["t"], residual_variance="anova")
    assert np.allclose(out["effect_size_ve"], out["diff"] / math.sqrt(fit.mse_resid), rtol=1e-10)


def test_t_degenerate_pairs():
    x = np.linspace(0, 1, 10)
    same = paired_t_test(x, x)
    assert (same.statistic, same.p_value, same.effect_size) == (0.0, 1.0, 0.0)
    assert (same.ci_low, same.ci_high, same.margin_of_error) == (0.0, 0.0, 0.0)
    shifted = paired_t_test(x + 0.1, x)
    assert shifted.p_value == 0.0 and shifted.statistic == np.inf and shifted.effect_size == np.inf
    assert shifted.ci_low == pytest.approx(0.1) and shifted.ci_high == pytest.approx(0.1)


@pytest.mark.parametrize(
    "test", [paired_t_test, wilcoxon_test, sign_test, randomization_test, bootstrap_test]
)
def test_two_series_are_paired_by_topic_not_by_position(test):
    x, y = _pair(seed=3)
    topics = [f"t{i}" for i in range(len(x))]
    xs, ys = pd.Series(x, index=topics), pd.Series(y, index=topics)
    shuffled = ys.sample(frac=1.0, random_state=1)
    assert not shuffled.index.equals(xs.index)
    seeded = {"rng": 7} if test in (randomization_test, bootstrap_test) else {}
    paired, positional = test(xs, shuffled, **seeded), test(x, y, **seeded)
    assert pd.Series(vars(paired)).equals(pd.Series(vars(positional)))
    by_position = test(xs, shuffled.to_numpy(), **seeded)  # an array has no topics to align
    assert not pd.Series(vars(by_position)).equals(pd.Series(vars(positional)))
    with pytest.raises(ValueError, match="same topics; 1 of x's are not in y"):
        test(xs, shuffled.rename(index={"t3": "t99"}))
    twice = topics[:-1] + ["t0"]
    with pytest.raises(ValueError, match="a topic appears twice"):
        test(xs, pd.Series(y, index=twice))
    with pytest.raises(ValueError, match="a topic appears twice"):  # twice on both sides
        test(pd.Series(x, index=twice), pd.Series(y, index=twice))


# --------------------------------------------------------------------------------------------
# Wilcoxon and Hodges-Lehmann
# --------------------------------------------------------------------------------------------


def test_wilcoxon_p_values_match_scipy_row_by_row():
    # scipy picks exact / permutation / asymptotic once per batch; the vectorised core must
    # still give each pair what scipy gives it alone (clean, tied and zero rows mixed).
    rng = np.random.default_rng(3)
    for n in (8, 12, 20, 60):
        X = np.round(rng.random((5, n)), 1)
        X[0] = rng.random(n)
        X[1] = X[0] + rng.normal(0, 0.1, n)
        out = paired_comparisons(X, family="all_pairs", tests=["wilcoxon"], correction=None)
        for _, row in out.iterrows():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                # the exact decimal differences (ranks and signs are all that count)
                ref = stats.wilcoxon(np.round(X[row.system_a] - X[row.system_b], 10))
            assert row.p_value == pytest.approx(ref.pvalue, rel=1e-10)
            assert row.statistic == pytest.approx(ref.statistic, rel=1e-12)


def test_wilcoxon_float_noise_ties_are_ties():
    # 0.3 - 0.2 and 0.4 - 0.3 differ in floats; scipy on the raw differences would see no tie.
    x = np.array([0.3, 0.4, 0.5, 0.9, 0.2, 0.7, 0.6, 0.8])
    y = np.array([0.2, 0.3, 0.3, 0.1, 0.5, 0.6, 0.6, 0.3])
    r = wilcoxon_test(x, y)
    exact_diffs = (np.rint(x * 10) - np.rint(y * 10)) / 10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ref = stats.wilcoxon(exact_diffs)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    assert r.n_zeros == 1
    assert r.method == "permutation"


def test_hodges_lehmann_estimate_is_the_median_of_walsh_averages():
    x, y = _pair(4, n=11)
    z = x - y
    walsh = [(z[i] + z[j]) / 2 for i in range(11) for j in range(i, 11)]
    assert wilcoxon_test(x, y).estimate == pytest.approx(np.median(walsh), abs=1e-15)


def test_signed_rank_distribution_by_enumeration():
    n = 10
    sums = [
        sum(r for r, s in zip(range(1, n + 1), signs) if s)
        for signs in itertools.product((0, 1), repeat=n)
    ]
    counts = np.bincount(sums, minlength=n * (n + 1) // 2 + 1)
    assert np.allclose(paired._signrank_cdf(n), np.cumsum(counts) / 2**n, rtol=0, atol=1e-15)


@pytest.mark.parametrize("confidence", [0.95, 0.9])
def test_hodges_lehmann_interval_inverts_the_exact_test(confidence):
    # The interval is the set of shifts d where scipy's exact test of z - d gives p >= alpha:
    # just inside each end p >= alpha, just outside p < alpha.
    alpha = 1 - confidence
    for seed in range(4):
        x, y = _pair(seed, n=12, sd=0.2)
        r = wilcoxon_test(x, y, confidence=confidence)
        z = x - y
        eps = 1e-9

        def p(d, z=z):
            return stats.wilcoxon(z - d, method="exact").pvalue

        assert p(r.ci_low - eps) < alpha <= p(r.ci_low + eps)
        assert p(r.ci_high + eps) < alpha <= p(r.ci_high - eps)
        # attained level from the signed-rank law: 1 - 2 P(T+ <= k - 1)
        k, level, method = paired._walsh_k(12, confidence)
        assert method == "exact" and r.ci_level == level >= confidence
        walsh = np.sort([(z[i] + z[j]) / 2 for i in range(12) for j in range(i, 12)])
        assert (r.ci_low, r.ci_high) == (walsh[k - 1], walsh[-k])


def test_hodges_lehmann_interval_needs_enough_topics():
    # n = 5: P(T+ = 0) = 1/32 > 0.025, no Walsh average excludes anything at 95%.
    r = wilcoxon_test([1.0, 2, 3, 4, 5], [0.5, 0.4, 0.3, 0.2, 0.1])
    assert (r.ci_low, r.ci_high, r.ci_level) == (-np.inf, np.inf, 1.0)


# --------------------------------------------------------------------------------------------
# Sign test
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("m", [1, 2, 7, 10, 25])
def test_sign_p_values_match_binomtest_and_the_hand_sum(m):
    for k in range(m + 1):
        x = np.array([1.0] * k + [0.0] * (m - k) + [0.5, 0.5])  # two ties, dropped
        y = np.array([0.0] * k + [1.0] * (m - k) + [0.5, 0.5])
        r = sign_test(x, y)
        assert (r.n_positive, r.n_negative, r.n_zeros) == (k, m - k, 2)
        hand = min(1.0, 2 * sum(math.comb(m, i) for i in range(min(k, m - k) + 1)) / 2**m)
        assert r.p_value == pytest.approx(hand, rel=1e-12)
        assert r.p_value == pytest.approx(stats.binomtest(k, m, 0.5).pvalue, rel=1e-12)


def test_sign_interval_matches_quantile_test():
    for n in (6, 10, 20, 31):
        x, y = _pair(n, n=n)
        r = sign_test(x, y, confidence=0.95)
        res = stats.quantile_test(x - y, q=0, p=0.5)
        ci = res.confidence_interval(0.95)
        assert (r.ci_low, r.ci_high) == (ci.low, ci.high)
        assert r.p_value == pytest.approx(res.pvalue, rel=1e-12)  # no ties: the same test
        k = int(stats.binom.ppf(0.025, n, 0.5))
        assert r.ci_level == pytest.approx(1 - 2 * stats.binom.cdf(k - 1, n, 0.5))
        assert r.estimate == np.median(x - y)


def test_sign_test_published_example_tague_1981():
    # J. Tague (1981), "The pragmatics of information retrieval experimentation", in K. Sparck
    # Jones (ed.), Information Retrieval Experiment, p. 96: precision differences B - A on 10
    # queries give K = 7 plus signs; Bin(10, 1/2) gives P(K < 2 or K > 8) = 0.022 and
    # P(K < 3 or K > 7) = 0.1, so K = 7 is not significant at 0.05.
    d = np.array([0.11, 0.01, 0.01, -0.02, 0.02, 0.47, 0.11, -0.01, 0.01, -0.07])
    r = sign_test(d, np.zeros(10))
    assert r.n_positive == 7 and r.n_negative == 3
    assert r.p_value == pytest.approx(2 * 176 / 1024) and r.p_value > 0.05
    # The published tail probabilities are the two-sided p-values at K = 9 and K = 8.
    at_9 = sign_test(np.r_[np.ones(9), -1.0], np.zeros(10)).p_value
    at_8 = sign_test(np.r_[np.ones(8), -np.ones(2)], np.zeros(10)).p_value
    # 22/1024 = 0.02148 and 112/1024 = 0.109, printed as 0.022 (0.0215 rounded up) and 0.1:
    # equal within one unit of the last printed digit.
    assert at_9 == 22 / 1024 and abs(at_9 - 0.022) <= 0.001
    assert at_8 == 112 / 1024 and abs(at_8 - 0.1) <= 0.1


# --------------------------------------------------------------------------------------------
# Randomisation test
# --------------------------------------------------------------------------------------------


def test_randomization_exact_equals_integer_enumeration():
    rng = np.random.default_rng(5)
    Xi = rng.integers(0, 11, (3, 8))
    out = paired_comparisons(
        Xi / 10, family="all_pairs", tests=["randomization"], B=256, correction=None
    )
    signs = np.array(list(itertools.product((1, -1), repeat=8)))
    for _, row in out.iterrows():
        zi = Xi[row.system_a] - Xi[row.system_b]
        assert row.p_value == np.mean(np.abs(signs @ zi) >= abs(zi.sum()))
    one = randomization_test(Xi[0] / 10, Xi[1] / 10, B=256)
    assert one.exact and one.n_resamples == 256
    zi = Xi[0] - Xi[1]
    assert np.allclose(np.sort(one.null_distribution), np.sort(signs @ zi) / 80, atol=1e-15)


def test_randomization_matches_scipy_permutation_test():
    x, y = _pair(6, n=11)
    ref = stats.permutation_test(
        (x - y,), np.mean, permutation_type="samples", n_resamples=np.inf, vectorized=True
    )
    assert randomization_test(x, y, B=4096).p_value == pytest.approx(ref.pvalue, rel=1e-12)


def test_randomization_matches_compare_on_shared_resamples_and_phipson_smyth():
    rng = np.random.default_rng(7)
    X = rng.random((4, 25)) + np.linspace(0, 0.2, 4)[:, None]
    shared = resamples("randomization", n_topics=25, B=999, rng=3)
    ours = paired_comparisons(
        X, family="all_pairs", tests=["randomization"], resamples=shared, correction=None
    )
    ref = compare(X, test="randomization", resamples=shared, correction=None)
    assert np.array_equal(ours["p_value"].to_numpy(), ref["p_value"].to_numpy())
    # never 0: (1 + b) / (B + 1)
    far = np.vstack([np.zeros(25), 0.5 + rng.random(25) * 0.01])
    assert randomization_test(far[0], far[1], resamples=shared).p_value == 1 / 1000


def test_randomization_interval_inverts_the_test_by_brute_force():
    x, y = _pair(8, n=10, shift=0.1, sd=0.15)
    z = x - y
    r = randomization_test(x, y, B=1024)  # exact: 2^10 sign vectors
    signs = np.array(list(itertools.product((1, -1), repeat=10)))

    def p(d):
        w = z - d
        return np.mean(np.abs(signs @ w) >= abs(w.sum()) * (1 - 1e-12))

    eps = 1e-9
    assert p(r.ci_low - eps) < 0.05 <= p(r.ci_low + eps)
    assert p(r.ci_high + eps) < 0.05 <= p(r.ci_high - eps)
    assert p(0.0) == r.p_value
    assert r.ci_low < z.mean() < r.ci_high


def test_randomization_interval_duality_over_many_pairs():
    # 0 is in the interval exactly when the test does not reject (p >= alpha).
    rng = np.random.default_rng(9)
    X = rng.random((12, 15)) + np.linspace(0, 0.3, 12)[:, None]
    out = paired_comparisons(X, family="all_pairs", tests=["randomization"], B=2000, rng=1)
    inside = (out["ci_low"] <= 0) & (out["ci_high"] >= 0)
    assert (inside == (out["p_value"] >= 0.05)).all()
    assert 0 < (~inside).sum() < len(out)  # both kinds occur


def test_randomization_interval_unbounded_with_too_few_sign_vectors():
    r = randomization_test([0.5, 0.6, 0.7, 0.2], [0.1, 0.2, 0.3, 0.1], B=16)
    assert (r.ci_low, r.ci_high) == (-np.inf, np.inf)  # 2/16 > 0.05: nothing is rejected
    assert r.ci_level == 1.0 and r.to_frame()["ci_level"].iloc[0] == 1.0


# --------------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------------


def test_bootstrap_asl_is_compares_and_intervals_are_scipys():
    x, y = _pair(10, n=15)
    z = x - y
    shared = resamples("bootstrap", n_topics=15, B=3000, rng=11)
    r = bootstrap_test(x, y, resamples=shared)
    ref = compare(np.vstack([x, y]), test="bootstrap", resamples=shared, correction=None)
    assert r.p_value == ref["p_value"].iloc[0]
    assert r.p_value == np.mean(np.abs(r.null_distribution) >= abs(r.statistic) * (1 - 1e-10))
    assert np.allclose(r.bootstrap_distribution, z[shared.indices].mean(axis=1), atol=1e-15)
    # scipy draws its resamples as gen.integers(0, n, (B, n)): the same draws from the same seed.
    for method, (lo, hi) in (
        ("BCa", (r.ci_low, r.ci_high)),
        ("percentile", (r.percentile_low, r.percentile_high)),
    ):
        sp = stats.bootstrap(
            (z,), np.mean, n_resamples=3000, rng=np.random.default_rng(11), method=method
        )
        assert np.allclose(np.sort(sp.bootstrap_distribution), np.sort(r.bootstrap_distribution))
        assert lo == pytest.approx(sp.confidence_interval.low, abs=1e-12)
        assert hi == pytest.approx(sp.confidence_interval.high, abs=1e-12)


def test_bootstrap_constant_difference_has_a_point_interval():
    x = np.linspace(0, 1, 12)
    r = bootstrap_test(x + 0.2, x, B=200, rng=0)
    assert r.p_value == 0.0
    assert r.ci_low == pytest.approx(0.2) and r.ci_high == pytest.approx(0.2)


# --------------------------------------------------------------------------------------------
# paired_comparisons
# --------------------------------------------------------------------------------------------


def test_rows_equal_the_single_pair_functions():
    rng = np.random.default_rng(12)
    X = rng.random((4, 18)) + np.linspace(0, 0.2, 4)[:, None]
    names = ["a", "b", "c", "d"]
    out = paired_comparisons(
        X,
        family="all_pairs",
        tests=paired.TESTS,
        systems=names,
        B=500,
        rng=4,
        correction=None,
        alpha=0.1,
    )
    assert list(out.columns[:11]) == COLUMNS[:11]
    assert "p_adjusted" in out.columns and "significant" in out.columns
    assert len(out) == 6 * 5
    single = {
        "t": lambda a, b, k: paired_t_test(a, b, confidence=0.9, names=k),
        "wilcoxon": lambda a, b, k: wilcoxon_test(a, b, confidence=0.9, names=k),
        "sign": lambda a, b, k: sign_test(a, b, confidence=0.9, names=k),
        "randomization": lambda a, b, k: randomization_test(
            a, b, B=500, rng=4, confidence=0.9, names=k
        ),
        "bootstrap": lambda a, b, k: bootstrap_test(a, b, B=500, rng=4, confidence=0.9, names=k),
    }
    for _, row in out.iterrows():
        i, j = names.index(row.system_a), names.index(row.system_b)
        ref = single[row.test](X[i], X[j], (row.system_a, row.system_b)).to_frame().iloc[0]
        for col in COLUMNS:
            if col == "effect_size_ve":
                continue
            if isinstance(ref[col], str) or col in ("system_a", "system_b"):
                assert row[col] == ref[col], col
            else:
                assert row[col] == pytest.approx(ref[col], rel=1e-12, abs=1e-15, nan_ok=True), col


def test_rng_policy_same_seed_same_result_generator_continues():
    x, y = _pair(15, n=30)
    ss = np.random.SeedSequence(9)
    assert randomization_test(x, y, rng=ss).p_value == randomization_test(x, y, rng=ss).p_value
    assert bootstrap_test(x, y, B=300, rng=3).ci_low == bootstrap_test(x, y, B=300, rng=3).ci_low
    gen = np.random.default_rng(1)
    first = randomization_test(x, y, B=300, rng=gen).null_distribution
    second = randomization_test(x, y, B=300, rng=gen).null_distribution
    assert not np.array_equal(first, second)


def test_adding_a_test_keeps_the_others_resamples():
    X = null_scores(4, 25, rng=0)
    alone = paired_comparisons(X, family="all_pairs", tests=["bootstrap"], B=300, rng=5)
    both = paired_comparisons(
        X, family="all_pairs", tests=["randomization", "bootstrap"], B=300, rng=5
    )
    boot = both[both["test"] == "bootstrap"].reset_index(drop=True)
    pd.testing.assert_frame_equal(alone, boot)


def test_baseline_family_and_corrections():
    rng = np.random.default_rng(13)
    X = rng.random((5, 20)) + np.linspace(0, 0.3, 5)[:, None]
    names = list("abcde")
    out = paired_comparisons(X, family="baseline", baseline="c", systems=names, tests=["t", "sign"])
    assert list(out["system_b"].unique()) == ["c"]
    assert list(out.loc[out["test"] == "t", "system_a"]) == ["a", "b", "d", "e"]
    for test in ("t", "sign"):
        part = out[out["test"] == test]
        assert np.allclose(part["diff"], X[[0, 1, 3, 4]].mean(1) - X[2].mean())
        from statsmodels.stats.multitest import multipletests

        assert np.allclose(part["p_adjusted"], multipletests(part["p_value"], method="holm")[1])
    bh = paired_comparisons(X, family="all_pairs", tests=["t"], correction="bh")
    from statsmodels.stats.multitest import multipletests

    assert np.allclose(bh["p_adjusted"], multipletests(bh["p_value"], method="fdr_bh")[1])
    assert (bh["significant"] == (bh["p_adjusted"] < 0.05)).all()


def test_tidy_frame_input():
    rng = np.random.default_rng(14)
    X = rng.random((3, 10))
    tidy = pd.DataFrame(
        [(r, f"q{t}", X[i, t]) for i, r in enumerate("xyz") for t in range(10)],
        columns=["run", "topic", "value"],
    )
    a = paired_comparisons(tidy, family="all_pairs", tests=["t"])
    b = paired_comparisons(X, family="all_pairs", tests=["t"], systems=list("xyz"))
    pd.testing.assert_frame_equal(a, b)


def test_errors_name_the_parameter():
    X = np.random.default_rng(0).random((3, 10))
    with pytest.raises(TypeError, match="family"):
        paired_comparisons(X)
    with pytest.raises(ValueError, match="family"):
        paired_comparisons(X, family="pairs")
    with pytest.raises(ValueError, match="baseline"):
        paired_comparisons(X, family="baseline")
    with pytest.raises(ValueError, match="baseline"):
        paired_comparisons(X, family="all_pairs", baseline=0)
    with pytest.raises(ValueError, match="baseline"):
        paired_comparisons(X, family="baseline", baseline="nope")
    with pytest.raises(ValueError, match="tests"):
        paired_comparisons(X, family="all_pairs", tests=["anova"])
    with pytest.raises(ValueError, match="confidence"):
        paired_t_test(X[0], X[1], confidence=1.5)
    with pytest.raises(ValueError, match="x and y"):
        paired_t_test(X[0], X[1][:5])
    with pytest.raises(TypeError, match="rng"):
        randomization_test(X[0], X[1], B=100, rng="seed")
    with pytest.raises(ValueError, match="B=5"):
        randomization_test(X[0], X[1], B=5, resamples=resamples("randomization", n_topics=10))


# --------------------------------------------------------------------------------------------
# Calibration on null matrices
# --------------------------------------------------------------------------------------------


def test_t_and_randomization_reject_at_alpha_under_the_null():
    # 400 null matrices of 5 exchangeable systems x 30 topics, 10 pairs each: the share of the
    # 4000 tests with p < 0.05. Pairs of one matrix share systems, so the band allows a design
    # effect of 2: 0.05 +- 3 sqrt(0.05 * 0.95 * 2 / 4000) = [0.035, 0.065]. A test at twice its
    # level (0.10) or with no rejections fails it.
    ss = np.random.SeedSequence(2024)
    rejected = {"t": 0, "randomization": 0}
    total = 0
    for child in ss.spawn(400):
        data_rng, test_rng = np.random.default_rng(child).spawn(2)
        X = null_scores(5, 30, rng=data_rng)
        out = paired_comparisons(
            X,
            family="all_pairs",
            tests=["t", "randomization"],
            correction=None,
            B=500,
            rng=test_rng,
        )
        for test in rejected:
            rejected[test] += int((out.loc[out["test"] == test, "p_value"] < 0.05).sum())
        total += 10
    band = 3 * math.sqrt(0.05 * 0.95 * 2 / total)
    for test, k in rejected.items():
        assert abs(k / total - 0.05) <= band, (test, k / total)
