"""Tests for metaeval.meta.significance.compare and the multiple-comparison corrections."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metaeval.meta._testing import null_scores
from metaeval.meta.discrimination import discriminative_power
from metaeval.meta.significance import benjamini_hochberg, compare, holm

COLUMNS = [
    "system_a",
    "system_b",
    "mean_a",
    "mean_b",
    "diff",
    "statistic",
    "p_value",
    "p_adjusted",
    "significant",
    "effect_size",
]


def test_columns_and_t_test_matches_scipy():
    rng = np.random.default_rng(0)
    X = rng.random((4, 15)) + np.linspace(0, 0.3, 4)[:, None]
    out = compare(X, test="t", correction=None, systems=list("abcd"))
    assert list(out.columns) == COLUMNS
    assert len(out) == 6
    for _, row in out.iterrows():
        a, b = "abcd".index(row.system_a), "abcd".index(row.system_b)
        ref = stats.ttest_rel(X[a], X[b])
        assert row.statistic == pytest.approx(ref.statistic)
        assert row.p_value == pytest.approx(ref.pvalue)
        assert row.p_adjusted == row.p_value
        z = X[a] - X[b]
        assert row["diff"] == pytest.approx(z.mean())
        assert row.effect_size == pytest.approx(z.mean() / z.std(ddof=1))


def test_randomization_exact_hand_checked_with_float_ties():
    # z = x - y = [-.3, -.5, -.7, -.1, -.6], sum -2.2. Every sign flip lowers |sum| except the
    # full flip, so 2 of the 32 sign vectors reach |sum| >= 2.2: exact p = 2/32 = .0625.
    # In floats the permuted sums miss the observed one by an ulp; without the tolerance the
    # count would be 0.
    X = np.array([[4, 0, 0, 1, 0], [7, 5, 7, 2, 6]]) / 10
    out = compare(X, test="randomization", correction=None, B=32, rng=0)
    assert out["p_value"].iloc[0] == 2 / 32
    assert out["statistic"].iloc[0] == pytest.approx(-0.44)


def test_randomization_exact_equals_enumeration():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 11, (3, 8)) / 10
    out = compare(X, test="randomization", correction=None, B=256, rng=0)
    signs = np.array(list(itertools.product((1, -1), repeat=8)))
    for _, row in out.iterrows():
        zi = np.rint((X[row.system_a] - X[row.system_b]) * 10).astype(int)
        exact = np.mean(np.abs(signs @ zi) >= abs(zi.sum()))
        assert row.p_value == exact
        assert row.p_value >= 2 / 256  # the identity and the full flip always count


def test_randomization_sampled_close_to_exact_and_phipson_smyth():
    rng = np.random.default_rng(2)
    X = rng.random((2, 12)) + np.array([[0.0], [0.12]])
    exact = compare(X, test="randomization", correction=None, B=4096, rng=0)["p_value"].iloc[0]
    sampled = compare(X, test="randomization", correction=None, B=20000, rng=0)["p_value"].iloc[0]
    assert sampled == pytest.approx(exact, abs=0.01)
    # a sampled p-value is never 0: (1 + count) / (B + 1)
    far = np.vstack([np.zeros(30), np.full(30, 0.5) + rng.random(30) * 0.01])
    p = compare(far, test="randomization", correction=None, B=999, rng=0)["p_value"].iloc[0]
    assert p == 1 / 1000


def test_bootstrap_is_the_discriminative_power_machinery():
    rng = np.random.default_rng(3)
    X = rng.random((5, 20)) + np.linspace(0, 0.3, 5)[:, None]
    out = compare(X, test="bootstrap", correction=None, B=400, rng=7)
    dp = discriminative_power(X, B=400, rng=7)
    np.testing.assert_array_equal(out["p_value"], dp.pairs["asl"])
    np.testing.assert_array_equal(out["statistic"], dp.pairs["statistic"])


def test_holm_and_bh_hand_checked():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # Holm: sorted [.005,.01,.03,.04] x [4,3,2,1] = [.02,.03,.06,.04], running max
    # [.02,.03,.06,.06], back in input order:
    np.testing.assert_allclose(holm(p), [0.03, 0.06, 0.06, 0.02])
    # BH: sorted x 4/rank = [.02,.02,.04,.04], running min from the top: unchanged.
    np.testing.assert_allclose(benjamini_hochberg(p), [0.02, 0.04, 0.04, 0.02])
    np.testing.assert_allclose(holm([0.5, 0.9]), [1.0, 1.0])


def test_corrections_applied_in_compare():
    rng = np.random.default_rng(4)
    X = rng.random((4, 20)) + np.linspace(0, 0.2, 4)[:, None]
    raw = compare(X, test="t", correction=None)
    h = compare(X, test="t", correction="holm")
    b = compare(X, test="t", correction="bh")
    np.testing.assert_allclose(h["p_adjusted"], holm(raw["p_value"]))
    np.testing.assert_allclose(b["p_adjusted"], stats.false_discovery_control(raw["p_value"]))
    np.testing.assert_array_equal(h["significant"], h["p_adjusted"] < 0.05)
    assert (h["p_adjusted"] >= raw["p_value"]).all()


def test_baseline_mode():
    X = np.random.default_rng(5).random((4, 10))
    out = compare(X, systems=["base", "r1", "r2", "r3"], baseline="base")
    assert list(out["system_a"]) == ["r1", "r2", "r3"]
    assert (out["system_b"] == "base").all()
    np.testing.assert_allclose(out["diff"], X[1:].mean(1) - X[0].mean())
    with pytest.raises(ValueError, match="baseline"):
        compare(X, baseline="nope")


@pytest.mark.parametrize("test", ["t", "bootstrap", "randomization"])
def test_degenerate_pairs(test):
    base = np.random.default_rng(6).random(12)
    X = np.vstack([base, base, base + 0.1])
    out = compare(X, test=test, correction=None, B=500, rng=0).set_index(["system_a", "system_b"])
    assert out.loc[(0, 1), "p_value"] == 1.0
    assert out.loc[(0, 1), "effect_size"] == 0.0
    assert out.loc[(0, 2), "effect_size"] == -np.inf
    if test == "randomization":
        # exact test needs no special case: only the two constant sign vectors reach it
        assert out.loc[(0, 2), "p_value"] == pytest.approx(2 / 501)
    else:
        assert out.loc[(0, 2), "p_value"] == 0.0


def test_seeded_identical():
    X = np.random.default_rng(7).random((4, 30))
    for test in ("bootstrap", "randomization"):
        a = compare(X, test=test, B=300, rng=1)
        b = compare(X, test=test, B=300, rng=1)
        pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"test": "wilcoxon"}, ValueError, "test"),
        ({"correction": "bonferroni"}, ValueError, "correction"),
        ({"alpha": 0}, ValueError, "alpha"),
        ({"alpha": 2.0}, ValueError, "alpha"),
        ({"B": 0}, ValueError, "B"),
        ({"rng": 1.5}, TypeError, "rng"),
    ],
)
def test_validation(kwargs, exc, match):
    X = np.random.default_rng(0).random((3, 6))
    with pytest.raises(exc, match=match):
        compare(X, **kwargs)
    with pytest.raises(ValueError, match="scores"):
        compare(np.array([[0.1, np.nan], [0.1, 0.2]]))


# ----------------------------------------------------------------------------- calibration


def _null_pvalues(test, n, T, B, seed, distribution="normal"):
    rng = np.random.default_rng(seed)
    return np.array(
        [
            compare(
                null_scores(2, T, rng=rng, distribution=distribution),
                test=test,
                correction=None,
                B=B,
                rng=rng,
            )["p_value"].iloc[0]
            for _ in range(n)
        ]
    )


@pytest.mark.parametrize(
    "test, T, B, distribution, seed",
    [
        ("t", 30, 10, "normal", 101),
        ("t", 25, 10, "beta", 102),
        ("randomization", 30, 500, "beta", 103),  # sampled: 2^30 > B
        ("randomization", 10, 1024, "normal", 104),  # exact: all 2^10 sign vectors
        ("bootstrap", 40, 500, "normal", 105),
        ("bootstrap", 25, 500, "beta", 106),
    ],
)
def test_false_positive_rate_under_null(test, T, B, distribution, seed):
    # 500 independent null pairs; the share with p < alpha must lie in the binomial 99%
    # interval of alpha, for alpha = .05 and .01.
    n = 500
    p = _null_pvalues(test, n, T, B, seed=seed, distribution=distribution)
    for alpha in (0.05, 0.01):
        count = int((p < alpha).sum())
        lo, hi = stats.binom.interval(0.99, n, alpha)
        assert lo <= count <= hi, (test, alpha, count, (lo, hi))
