"""Resamples drawn once and shared; tidy frames; selections; the rng policy in the criteria."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metaeval.meta import (
    compare,
    discriminative_power,
    kendall_tau,
    resamples,
    significance_inconsistency,
    swap_method,
    tau_ap,
)


@pytest.fixture
def X():
    rng = np.random.default_rng(0)
    return rng.random((6, 25)) + np.linspace(0, 0.3, 6)[:, None]


@pytest.mark.parametrize("method", ["bootstrap", "tukey"])
def test_resamples_give_the_result_of_the_rng_that_drew_them(X, method):
    shared = resamples(method, n_topics=25, n_systems=6, B=300, rng=7)
    a = discriminative_power(X, method=method, resamples=shared)
    b = discriminative_power(X, method=method, B=300, rng=7)
    pd.testing.assert_frame_equal(a.pairs, b.pairs)
    assert a.resamples is shared and a.power == b.power


def test_resamples_must_fit(X):
    shared = resamples("bootstrap", n_topics=20, B=100, rng=1)
    with pytest.raises(ValueError, match="drawn for 20 topics; the scores have 25"):
        discriminative_power(X, resamples=shared)
    with pytest.raises(ValueError, match="drawn for the bootstrap method, not tukey"):
        discriminative_power(X[:, :20], method="tukey", resamples=shared)
    with pytest.raises(ValueError, match="B=50 but the resamples hold 100"):
        discriminative_power(X[:, :20], B=50, resamples=shared)


def test_bootstrap_resamples_fit_any_number_of_systems(X):
    # bootstrap samples and sign vectors draw topics only: the number of systems they were
    # drawn beside does not restrict them
    shared = resamples("bootstrap", n_topics=25, n_systems=6, B=300, rng=7)
    assert shared.n_systems is None
    fewer = discriminative_power(X[:4], resamples=shared)
    # the topics of each sample, counted by hand from the indices
    counts = np.zeros((300, 25))
    for b, sample in enumerate(shared.indices):
        for t in sample:
            counts[b, t] += 1
    np.testing.assert_array_equal(shared.counts(), counts)
    pd.testing.assert_frame_equal(fewer.pairs, discriminative_power(X[:4], B=300, rng=7).pairs)
    signs = resamples("randomization", n_topics=25, n_systems=6, B=200, rng=3)
    assert signs.n_systems is None
    pd.testing.assert_frame_equal(
        compare(X[:3], test="randomization", resamples=signs),
        compare(X[:3], test="randomization", B=200, rng=3),
    )


def test_tukey_resamples_keep_their_number_of_systems(X):
    # a Tukey permutation shuffles the systems of a topic: it fits one number of systems
    shared = resamples("tukey", n_topics=25, n_systems=6, B=100, rng=7)
    assert shared.n_systems == 6
    assert discriminative_power(X, method="tukey", resamples=shared).B == 100
    with pytest.raises(ValueError, match="drawn for 6 systems; the scores have 4"):
        discriminative_power(X[:4], method="tukey", resamples=shared)
    with pytest.raises(ValueError, match="give n_systems"):
        resamples("tukey", n_topics=25, B=100, rng=7)


def test_compare_refuses_a_B_other_than_its_resamples(X):
    for test in ("bootstrap", "randomization"):
        shared = resamples(test, n_topics=25, B=500, rng=3)
        with pytest.raises(ValueError, match="B=50 but the resamples hold 500; give one or the"):
            compare(X, test=test, B=50, resamples=shared)
        # the same B is no contradiction
        pd.testing.assert_frame_equal(
            compare(X, test=test, B=500, resamples=shared), compare(X, test=test, B=500, rng=3)
        )


def test_compare_warns_when_sign_vectors_cannot_reach_alpha(X):
    # sampled: p >= 1 / (B + 1) = 1/11 > 0.05 whatever the data
    with pytest.warns(
        UserWarning,
        match=r"B=10 random sign vectors cannot give a p-value below "
        r"alpha=0.05 \(the smallest is 1/11\)",
    ) as caught:
        out = compare(X, test="randomization", B=10, rng=1, correction=None)
    assert caught[0].filename == __file__
    assert (out["p_value"] >= 1 / 11).all()
    shared = resamples("randomization", n_topics=25, B=10, rng=1)
    with pytest.warns(UserWarning, match="B=10 random sign vectors"):
        compare(X, test="randomization", resamples=shared)
    # exact (2^3 = 8 <= B sign vectors enumerated): p = count / 8, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exact = compare(X[:, :3], test="randomization", B=10, correction=None)
    assert set(exact["p_value"] * 8) <= set(range(9))


def test_compare_with_shared_resamples(X):
    for test in ("bootstrap", "randomization"):
        shared = resamples(test, n_topics=25, B=500, rng=3)
        pd.testing.assert_frame_equal(
            compare(X, test=test, resamples=shared), compare(X, test=test, B=500, rng=3)
        )


def test_inconsistency_reuses_a_full_result(X):
    rng = np.random.default_rng(1)
    reduced = X + rng.normal(0, 0.05, X.shape)
    shared = resamples("bootstrap", n_topics=25, B=400, rng=9)
    full = discriminative_power(X, resamples=shared)
    reused = significance_inconsistency(full, reduced)
    assert reused.full is full  # not recomputed
    direct = significance_inconsistency(X, reduced, B=400, rng=9)
    pd.testing.assert_frame_equal(reused.pairs, direct.pairs)
    both = significance_inconsistency(full, discriminative_power(reduced, resamples=shared))
    pd.testing.assert_frame_equal(both.to_frame(), direct.to_frame())
    other = discriminative_power(reduced, B=400, rng=10)
    with pytest.raises(ValueError, match="share their resamples"):
        significance_inconsistency(full, other)


def test_small_B_warns(X):
    with pytest.warns(
        UserWarning,
        match=r"B=10 resamples cannot give an achieved significance "
        r"level below alpha=0.05",
    ) as caught:
        discriminative_power(X, B=10, rng=1)
    assert caught[0].filename == __file__


def test_tau_functions_take_tidy_frames():
    x = pd.DataFrame({"run": ["a", "b", "c", "d"], "value": [0.1, 0.4, 0.3, 0.2]})
    y = pd.DataFrame({"run": ["d", "c", "b", "a"], "value": [0.25, 0.35, 0.3, 0.05]})
    xv, yv = [0.1, 0.4, 0.3, 0.2], [0.05, 0.3, 0.35, 0.25]
    assert kendall_tau(x, y) == pytest.approx(stats.kendalltau(xv, yv).statistic)
    # by hand: the estimate ranks c, b, d, a and the truth b, c, d, a; C(2) = 0 (c is above
    # b in the estimate, below it in the truth), C(3) = 2, C(4) = 3, so
    # tau_AP = 2/3 (0/1 + 2/2 + 3/3) - 1 = 1/3
    assert tau_ap(x, y) == pytest.approx(1 / 3, abs=1e-12)
    with pytest.raises(ValueError, match="one side only: e"):
        kendall_tau(x, pd.concat([y, pd.DataFrame({"run": ["e"], "value": [1.0]})]))
    with pytest.raises(TypeError, match="both be DataFrames"):
        kendall_tau(x, yv)


def test_frame_selections(X):
    frame = pd.DataFrame(
        [(f"r{s}", str(600 + t), X[s, t]) for s in range(6) for t in range(25)],
        columns=["run", "topic", "value"],
    )
    sub = discriminative_power(frame, B=200, rng=2, topics="600-609", runs=["r0", "r2", "r5"])
    ref = discriminative_power(X[[0, 2, 5]][:, :10], B=200, rng=2, systems=("r0", "r2", "r5"))
    assert sub.systems == ref.systems and sub.n_topics == 10
    np.testing.assert_allclose(sub.pairs["asl"], ref.pairs["asl"])
    assert swap_method(frame, topics="600-609", trials=5, rng=1).n_topics == 10
    with pytest.raises(TypeError, match="index its rows"):
        discriminative_power(X, topics="1-3")
    with pytest.raises(ValueError, match="not in the qrels: 700"):
        discriminative_power(frame, topics="700")


def test_rng_none_is_fresh_and_seed_sequences_work(X):
    seeded = discriminative_power(X, B=200, rng=np.random.SeedSequence(4))
    assert seeded.power == discriminative_power(X, B=200, rng=np.random.SeedSequence(4)).power
    zero = discriminative_power(X, B=200, rng=0).bootstrap_indices
    fresh = [discriminative_power(X, B=200).bootstrap_indices for _ in range(2)]
    assert not np.array_equal(fresh[0], zero) and not np.array_equal(fresh[0], fresh[1])


def test_results_export_tidy_frames(X):
    dp = discriminative_power(X, B=100, rng=1)
    assert list(dp.to_frame().columns)[:3] == ["system_a", "system_b", "mean_a"]
    sw = swap_method(X, trials=3, rng=1)
    assert {"topic_set_size", "bin", "error_rate"} <= set(sw.to_frame().columns)
