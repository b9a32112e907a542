"""Tests for metaeval.meta.rankcorr: Kendall tau-a/b, tau_AP and its tie policy, bootstrap CI."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from metaeval.meta.rankcorr import kendall_tau, tau_ap, tau_bootstrap_ci

# ----------------------------------------------------------------------------- Kendall


def test_o7_kendall_with_ties():
    # docs/methods.md O7: C = 7, D = 1, n0 = 10, n1 = n2 = 1.
    x = [0.1, 0.2, 0.2, 0.3, 0.5]
    y = [0.1, 0.3, 0.2, 0.2, 0.4]
    assert kendall_tau(x, y, variant="a") == pytest.approx(0.6, abs=1e-12)
    assert kendall_tau(x, y, variant="b") == pytest.approx(6 / 9, abs=1e-12)
    assert kendall_tau(x, y) == pytest.approx(0.6667, abs=5e-5)


def _tau_a_loop(x, y):
    m = len(x)
    s = 0
    for i in range(m):
        for j in range(i + 1, m):
            s += np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])
    return s / (m * (m - 1) / 2)


def test_kendall_matches_scipy_and_loop_on_tied_data():
    rng = np.random.default_rng(3)
    for _ in range(30):
        m = int(rng.integers(3, 25))
        x = rng.integers(0, 5, m).astype(float)  # many ties
        y = rng.integers(0, 5, m).astype(float)
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            continue
        assert kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
        assert kendall_tau(x, y, variant="a") == pytest.approx(_tau_a_loop(x, y), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=3, max_size=15).filter(
        lambda v: len({a for a, _ in v}) > 1 and len({b for _, b in v}) > 1
    )
)
def test_kendall_b_matches_scipy_property(pairs):
    x = np.array([a for a, _ in pairs], float)
    y = np.array([b for _, b in pairs], float)
    assert kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


def test_kendall_vectorised_rows_match_single_calls():
    rng = np.random.default_rng(4)
    x = rng.integers(0, 6, 12).astype(float)
    Y = rng.integers(0, 6, (7, 12)).astype(float)
    for variant in ("a", "b"):
        out = kendall_tau(x, Y, variant=variant)
        assert out.shape == (7,)
        np.testing.assert_allclose(out, [kendall_tau(x, y, variant=variant) for y in Y], atol=1e-15)


def test_kendall_constant_vector():
    # tau_b has a zero denominator (as scipy: NaN); tau_a counts no concordance at all.
    assert np.isnan(kendall_tau([1, 1, 1], [1, 2, 3]))
    assert kendall_tau([1, 1, 1], [1, 2, 3], variant="a") == 0.0
    # identical tied vectors: tau_b = 1, tau_a < 1 (tied pairs count 0).
    assert kendall_tau([1, 1, 2], [1, 1, 2]) == pytest.approx(1.0)
    assert kendall_tau([1, 1, 2], [1, 1, 2], variant="a") == pytest.approx(2 / 3)


# ----------------------------------------------------------------------------- tau_AP


def test_tau_ap_hand_checked_untied():
    # Truth: A > B > C > D (scores 4, 3, 2, 1). Kendall tau is 4/6 for both estimates below.
    truth = [4, 3, 2, 1]
    # E = B, A, C, D (error at the top). Positions in E: i=2 (A): above = {B}, T has B below A
    # -> C=0; i=3 (C): {B, A} both above C in T -> 2/2; i=4 (D): 3/3.
    # tau_AP = 2/3 * (0 + 1 + 1) - 1 = 1/3.
    assert tau_ap(truth, [3, 4, 2, 1]) == pytest.approx(1 / 3, abs=1e-12)
    # E = A, B, D, C (error at the bottom): i=2: 1/1, i=3 (D): 2/2, i=4 (C): {A, B, D}, D is
    # below C in T -> 2/3. tau_AP = 2/3 * (1 + 1 + 2/3) - 1 = 7/9.
    assert tau_ap(truth, [4, 3, 1, 2]) == pytest.approx(7 / 9, abs=1e-12)
    assert kendall_tau(truth, [3, 4, 2, 1]) == pytest.approx(kendall_tau(truth, [4, 3, 1, 2]))


def test_tau_ap_matters_example():
    # The worked example in MATTERS' apCorr.m: apTau(c1, c2) = apCorr(X(:, c1), X(:, c2)),
    # i.e. truth = column c1 and estimate = column c2.
    X = np.array([[6, 1, 6], [2, 6, 5], [3, 4, 2], [4, 5, 3], [5, 3, 4], [1, 2, 1]], float)
    expected = np.array([[1.0, -0.4, 0.5667], [-0.5467, 1.0, -0.1467], [0.7, 0.3333, 1.0]])
    for a in range(3):
        for b in range(3):
            assert tau_ap(X[:, a], X[:, b]) == pytest.approx(expected[a, b], abs=5e-5)


def test_tau_ap_identical_and_reversed():
    rng = np.random.default_rng(5)
    for m in (2, 3, 10, 40):
        x = rng.permutation(m).astype(float)
        assert tau_ap(x, x) == pytest.approx(1.0, abs=1e-12)
        assert tau_ap(x, -x) == pytest.approx(-1.0, abs=1e-12)
        y = rng.permutation(m).astype(float)
        assert -1.0 - 1e-12 <= tau_ap(x, y) <= 1.0 + 1e-12


def test_tau_ap_two_systems_equals_kendall():
    # With m = 2 both coefficients are +1 / -1 and, under ties, the expectation 0.
    for x, y in [([1, 2], [1, 2]), ([1, 2], [2, 1]), ([1, 1], [1, 2]), ([1, 2], [3, 3])]:
        assert tau_ap(x, y) == pytest.approx(kendall_tau(x, y, variant="a"), abs=1e-12)


def test_tau_ap_asymmetric_and_symmetric_mean():
    t = [6, 2, 3, 4, 5, 1]  # MATTERS example, columns 1 and 2
    e = [1, 6, 4, 5, 3, 2]
    a, b = tau_ap(t, e), tau_ap(e, t)
    assert a == pytest.approx(-0.4, abs=5e-5)
    assert b == pytest.approx(-0.5467, abs=5e-5)
    assert tau_ap(t, e, symmetric=True) == pytest.approx((a + b) / 2)


def _brute_force(truth, estimate, coupled):
    """Average of tau_AP over every tie-breaking (shared order, or independent orders)."""
    m = len(truth)
    perms = list(itertools.permutations(range(m)))

    def strict(scores, order):
        prio = np.empty(m)
        prio[list(order)] = np.arange(m)
        # higher score first, ties by priority: strict scores with the same order
        keys = np.lexsort((-prio, scores))
        out = np.empty(m)
        out[keys] = np.arange(m)
        return out

    vals = []
    if coupled:
        for p in perms:
            vals.append(tau_ap(strict(truth, p), strict(estimate, p)))
    else:
        for p in perms:
            for q in perms:
                vals.append(tau_ap(strict(truth, p), strict(estimate, q)))
    return np.mean(vals)


def test_tau_ap_tie_closed_form_equals_enumeration():
    rng = np.random.default_rng(7)
    for _ in range(25):
        m = int(rng.integers(2, 6))
        t = rng.integers(0, 3, m).astype(float)
        e = rng.integers(0, 3, m).astype(float)
        assert tau_ap(t, e) == pytest.approx(_brute_force(t, e, True), abs=1e-12)
        if m <= 4:  # (m!)^2 orders
            assert tau_ap(t, e, ties="independent") == pytest.approx(
                _brute_force(t, e, False), abs=1e-12
            )


def test_tau_ap_ties_hand_checked():
    # truth A > B > C, estimate ties A and B on top. Breaking the tie A, B gives the truth
    # (tau_AP = 1); B, A gives positions: A at 2 with B above but below A in T -> 0, C at 3 ->
    # 2/2, so 2/2 * (0 + 1) - 1 = 0. Expectation: 0.5.
    assert tau_ap([3, 2, 1], [1, 1, 0]) == pytest.approx(0.5, abs=1e-12)
    # identical vectors with ties: the shared tie-breaking order keeps them identical.
    assert tau_ap([1, 1, 0, 2], [1, 1, 0, 2]) == pytest.approx(1.0, abs=1e-12)
    # independent tie-breaking of the same vector D > {A, B} > C: half of the time both lists
    # break the tie alike (tau_AP = 1); otherwise E = D, B, A, C against T = D, A, B, C gives
    # 2/3 * (1/1 + 1/2 + 3/3) - 1 = 2/3. Expectation 5/6.
    assert tau_ap([1, 1, 0, 2], [1, 1, 0, 2], ties="independent") == pytest.approx(5 / 6, abs=1e-12)
    # an estimate that ties everything carries no information: 0 against a strict truth.
    assert tau_ap([4, 3, 2, 1, 0], [1, 1, 1, 1, 1]) == pytest.approx(0.0, abs=1e-12)


def test_tau_ap_policies_agree_without_ties():
    rng = np.random.default_rng(8)
    t = rng.random(12)
    e = rng.random(12)
    a = tau_ap(t, e)
    assert tau_ap(t, e, ties="independent") == pytest.approx(a, abs=1e-12)
    assert tau_ap(t, e, ties="sample", n_samples=3, rng=0) == pytest.approx(a, abs=1e-12)


def test_tau_ap_sample_policy_converges_to_closed_form_and_is_seeded():
    t = np.array([3, 3, 2, 1, 1, 0.0])
    e = np.array([1, 2, 2, 0, 1, 1.0])
    exact = tau_ap(t, e)
    s1 = tau_ap(t, e, ties="sample", n_samples=4000, rng=11)
    s2 = tau_ap(t, e, ties="sample", n_samples=4000, rng=11)
    assert s1 == s2
    # the sd of one draw is < 0.5, so 4000 draws give a standard error < 0.008
    assert s1 == pytest.approx(exact, abs=0.03)


def test_tau_ap_vectorised_and_broadcast():
    rng = np.random.default_rng(9)
    truth = rng.integers(0, 8, 15).astype(float)
    E = rng.integers(0, 8, (6, 15)).astype(float)
    out = tau_ap(truth, E)
    assert out.shape == (6,)
    np.testing.assert_allclose(out, [tau_ap(truth, e) for e in E], atol=1e-14)
    T2 = rng.integers(0, 8, (6, 15)).astype(float)
    np.testing.assert_allclose(
        tau_ap(T2, E, symmetric=True),
        [tau_ap(a, b, symmetric=True) for a, b in zip(T2, E)],
        atol=1e-14,
    )


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: tau_ap([1, 2, np.nan], [1, 2, 3]), "truth"),
        (lambda: tau_ap([1, 2, 3], [1, 2]), "same number"),
        (lambda: tau_ap([1], [1]), "at least 2"),
        (lambda: tau_ap([1, 2], [1, 2], ties="drop"), "ties"),
        (lambda: tau_ap([1, 2], [1, 2], ties="sample", n_samples=0), "n_samples"),
        (lambda: kendall_tau([1, 2], [1, 2], variant="c"), "variant"),
        (lambda: kendall_tau(np.ones((2, 2, 2)), [1, 2]), "x"),
        (lambda: kendall_tau(np.ones((2, 3)), np.ones((3, 3))), "rankings"),
    ],
)
def test_rankcorr_validation(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ----------------------------------------------------------------------------- bootstrap CI


def test_tau_bootstrap_ci_seeded_and_consistent():
    rng = np.random.default_rng(12)
    X = rng.random((8, 30)) + np.linspace(0, 0.4, 8)[:, None]
    Y = X + rng.normal(0, 0.1, X.shape)
    a = tau_bootstrap_ci(X, Y, B=300, rng=5)
    b = tau_bootstrap_ci(X, Y, B=300, rng=5)
    np.testing.assert_array_equal(a.distribution, b.distribution)
    assert a.estimate == pytest.approx(kendall_tau(X.mean(1), Y.mean(1)))
    assert a.low <= a.high
    assert a.distribution.shape == (300,)
    assert a.low == pytest.approx(np.quantile(a.distribution, 0.025))
    # identical matrices: the same topics are resampled for both, so every sample gives 1
    same = tau_bootstrap_ci(X, X, statistic="tau_ap", B=50, rng=1)
    assert same.low == same.high == same.estimate == pytest.approx(1.0)


def test_tau_bootstrap_ci_validation():
    X = np.zeros((3, 4))
    with pytest.raises(ValueError, match="statistic"):
        tau_bootstrap_ci(X, X, statistic="rho")
    with pytest.raises(ValueError, match="B"):
        tau_bootstrap_ci(X, X, B=0)
    with pytest.raises(ValueError, match="level"):
        tau_bootstrap_ci(X, X, level=1.0)
    with pytest.raises(ValueError, match="same shape"):
        tau_bootstrap_ci(X, np.zeros((3, 5)))
    with pytest.raises(TypeError, match="rng"):
        tau_bootstrap_ci(X, X, rng="seed")


def test_kendall_b_is_scipys_to_the_last_bit():
    # the same integers divided in scipy's order: equal floats, not just close ones, so that
    # every tau_b of the package (stability, agreement, collection statistics) is scipy's
    rng = np.random.default_rng(8)
    for _ in range(40):
        k, m = int(rng.integers(1, 6)), int(rng.integers(2, 40))
        x = rng.random((k, m))
        y = x + rng.normal(0, rng.choice([0.01, 0.3, 3.0]), (k, m))
        if rng.random() < 0.5:  # ties
            x, y = np.round(x, 1), np.round(y, 1)
        if rng.random() < 0.2:
            x[0] = x[0, 0]  # a constant ranking: NaN
        expected = [stats.kendalltau(a, b).statistic for a, b in zip(x, y)]
        np.testing.assert_array_equal(kendall_tau(x, y), expected)
    assert kendall_tau(np.arange(30.0), np.arange(30.0)) == 1.0  # clipped as scipy clips
