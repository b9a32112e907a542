"""Tests for metaeval.meta.swap: swap-method error rates and extrapolation."""

import numpy as np
import pandas as pd
import pytest

from metaeval.meta.swap import SwapResult, swap_method

COLUMNS = ["topic_set_size", "bin", "diff_low", "diff_high", "pairs", "swaps", "error_rate"]


def _reference(X, trials, sizes, seed, bin_width=0.01, n_bins=21):
    """Plain loop over sizes, trials and pairs, with the same topic draws (disjoint halves of
    ``argsort(rng.random((trials, T)))`` per size)."""
    rng = np.random.default_rng(seed)
    S, T = X.shape
    pairs = np.zeros((len(sizes), n_bins), int)
    swaps = np.zeros((len(sizes), n_bins), int)
    for ci, c in enumerate(sizes):
        perm = np.argsort(rng.random((trials, T)), axis=1)
        for t in range(trials):
            q1, q2 = perm[t, :c], perm[t, c : 2 * c]
            for a in range(S):
                for b in range(a + 1, S):
                    d1 = X[a, q1].mean() - X[b, q1].mean()
                    d2 = X[a, q2].mean() - X[b, q2].mean()
                    k = min(int(np.floor(abs(d1) / bin_width + 1e-9)), n_bins - 1)
                    pairs[ci, k] += 1
                    swaps[ci, k] += d1 * d2 < 0
    return pairs, swaps


def test_matches_loop_reference():
    rng = np.random.default_rng(0)
    X = rng.random((5, 12)) + np.linspace(0, 0.2, 5)[:, None]
    res = swap_method(X, trials=7, rng=3)
    assert list(res.table.columns) == COLUMNS
    sizes = list(range(1, 7))
    pairs, swaps = _reference(X, 7, sizes, 3)
    np.testing.assert_array_equal(res.table["pairs"].to_numpy().reshape(6, 21), pairs)
    np.testing.assert_array_equal(res.table["swaps"].to_numpy().reshape(6, 21), swaps)
    # every pair is counted once per trial and size
    assert (res.table.groupby("topic_set_size")["pairs"].sum() == 7 * 10).all()


def test_hand_checked_always_swapped():
    # Two systems that win one topic each by 1.0: with c = 1 the two halves always disagree.
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    res = swap_method(X, trials=5, rng=0)
    row = res.table[(res.table["bin"] == 20)].iloc[0]
    assert (row["topic_set_size"], row["pairs"], row["swaps"], row["error_rate"]) == (1, 5, 5, 1.0)
    assert row["diff_low"] == pytest.approx(0.20) and row["diff_high"] == np.inf
    assert res.table.loc[res.table["bin"] < 20, "pairs"].sum() == 0
    assert res.table.loc[res.table["bin"] < 20, "error_rate"].isna().all()


def test_constant_difference_never_swaps_and_bins_exactly():
    # x - y = .05 on every topic: d1 = d2 = .05 (up to rounding, which must not push it into
    # bin 4), never a swap.
    base = np.random.default_rng(1).random(20)
    res = swap_method(np.vstack([base + 0.05, base]), trials=10, rng=0)
    nonzero = res.table[res.table["pairs"] > 0]
    assert set(nonzero["bin"]) == {5}
    assert nonzero["swaps"].sum() == 0


def test_zero_convention():
    # x = [1, .5], y = [.5, .5]. c = 1: one half gives d = .5, the other d = 0.
    X = np.array([[1.0, 0.5], [0.5, 0.5]])
    strict = swap_method(X, trials=6, rng=0)
    loose = swap_method(X, trials=6, rng=0, zero_is_swap=True)
    assert strict.table["swaps"].sum() == 0  # d1 * d2 = 0 is not a swap by default
    assert loose.table["swaps"].sum() == 6  # Dunaiski: d1 * d2 <= 0 is a swap
    assert strict.table["pairs"].sum() == loose.table["pairs"].sum() == 6


def test_sizes_replacement_and_drop_worst():
    rng = np.random.default_rng(2)
    X = rng.random((8, 10)) + np.arange(8)[:, None] * 0.05
    assert sorted(swap_method(X, trials=2, rng=0).table["topic_set_size"].unique()) == [
        1,
        2,
        3,
        4,
        5,
    ]
    wr = swap_method(X, trials=2, rng=0, with_replacement=True)
    assert sorted(wr.table["topic_set_size"].unique()) == list(range(1, 11))
    dropped = swap_method(X, trials=2, rng=0, drop_worst=0.25, systems=list("abcdefgh"))
    assert dropped.systems == tuple("cdefgh")  # the two lowest means go
    assert dropped.table.groupby("topic_set_size")["pairs"].sum().iloc[0] == 2 * 15
    only = swap_method(X, trials=3, rng=0, subset_sizes=[2, 5])
    assert sorted(only.table["topic_set_size"].unique()) == [2, 5]
    with pytest.raises(ValueError, match="subset_sizes"):
        swap_method(X, subset_sizes=[6], rng=0)


def test_seeded_identical():
    X = np.random.default_rng(3).random((4, 10))
    a = swap_method(X, trials=5, rng=9)
    b = swap_method(X, trials=5, rng=9)
    pd.testing.assert_frame_equal(a.table, b.table)


def _synthetic(err):
    """A SwapResult whose table holds the given error rates {(c, bin): err}."""
    rows = []
    for (c, b), e in err.items():
        rows.append((c, b, b * 0.01, (b + 1) * 0.01, 1000, int(round(e * 1000)), e))
    table = pd.DataFrame(rows, columns=COLUMNS)
    return SwapResult(table, 50, 0.01, 21, 0.0, False, False, ("a", "b"), 50)


def test_extrapolate_recovers_exponential_and_power_models():
    sizes = [5, 10, 15, 20, 25]
    exp_err = {(c, 3): float(np.exp(-1.0 - 0.1 * c)) for c in sizes}
    exp_err.update({(c, 4): 0.0 for c in sizes})  # all-zero bin: nothing to fit
    exp_err[(5, 4)] = 0.02  # a single non-zero point: still nothing to fit
    res = _synthetic(exp_err)
    # error rates are stored as swaps / 1000 rounded, so compare with the rates themselves
    out = res.extrapolate(50).set_index("bin")
    assert out.loc[3, "slope"] == pytest.approx(-0.1, abs=1e-2)
    assert out.loc[3, "intercept"] == pytest.approx(-1.0, abs=5e-2)
    assert out.loc[3, "error_rate"] == pytest.approx(np.exp(-6.0), rel=0.2)
    assert out.loc[3, "n_points"] == 5
    assert np.isnan(out.loc[4, "error_rate"]) and out.loc[4, "n_points"] == 1
    pw = _synthetic({(c, 2): 0.5 * c**-0.7 for c in sizes}).extrapolate(100, model="power")
    assert pw.loc[0, "slope"] == pytest.approx(-0.7, abs=1e-2)
    assert pw.loc[0, "error_rate"] == pytest.approx(0.5 * 100**-0.7, rel=0.05)
    with pytest.raises(ValueError, match="model"):
        res.extrapolate(50, model="logistic")
    with pytest.raises(ValueError, match="target_size"):
        res.extrapolate(0)


def test_min_difference():
    res = _synthetic(
        {(10, 0): 0.4, (10, 1): 0.2, (10, 2): 0.04, (10, 3): 0.06, (10, 4): 0.01, (5, 1): 0.01}
    )
    assert res.min_difference() == pytest.approx(0.02)  # largest size c = 10; bin 2 is <= 5%
    assert res.min_difference(topic_set_size=5) == pytest.approx(0.01)
    assert res.min_difference(max_error=0.001) != res.min_difference(max_error=0.001)  # NaN
    with pytest.raises(ValueError, match="topic_set_size"):
        res.min_difference(topic_set_size=7)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"trials": 0}, "trials"),
        ({"bin_width": 0}, "bin_width"),
        ({"n_bins": 0}, "n_bins"),
        ({"drop_worst": 1.0}, "drop_worst"),
        ({"subset_sizes": [0]}, "subset_sizes"),
    ],
)
def test_validation(kwargs, match):
    X = np.random.default_rng(0).random((3, 6))
    with pytest.raises(ValueError, match=match):
        swap_method(X, rng=0, **kwargs)
    with pytest.raises(ValueError, match="scores"):
        swap_method(np.zeros(4), rng=0)
