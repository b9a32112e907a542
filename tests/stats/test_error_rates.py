"""Type I, II and III error rates of the paired tests: counted by hand, against the single-pair
tests one decision at a time, and on simulated worlds whose truth is known."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from metaeval.stats import paired
from metaeval.stats.error_rates import (
    COUNTS,
    TESTS,
    ErrorRates,
    _wilcoxon_p,
    error_rates,
    rates_of,
)

# Six topics' worth of scores the pairs below are built on.
BASE = np.array([0.1, 0.5, 0.3, 0.7, 0.2, 0.9, 0.4, 0.6])
# Small, distinct, alternating noise: no difference is constant and no |difference| is tied.
NOISE = 0.01 * np.array([1, -1, 2, -2, 3, -3, 4, -4]) / 4


def _hand_case():
    """Four systems whose decisions are plain to see on all 8 topics.

    sys1 is sys0 + 0.3 (both effects 0: a null pair every test rejects, a type I error);
    sys2 is sys0 give or take 0.02 with a mean difference of 0 (effect 1: a true difference
    no test finds, a type II error); sys3 is sys0 - 0.4 (effect -1). Pair (1, 2): sys1 is
    0.3 above sys2 while its effect is lower, and every test rejects (a type III error).
    Pairs (0, 3), (1, 3), (2, 3) are found in the right direction.
    """
    X = np.vstack(
        [
            BASE,
            BASE + 0.3 + NOISE,
            BASE + 0.02 * np.array([1, -1, 1, -1, 1, -1, 1, -1]),
            BASE - 0.4 + NOISE[::-1],
        ]
    )
    return X, np.array([0.0, 0.0, 1.0, -1.0])


def test_counts_by_hand():
    X, effects = _hand_case()
    res = error_rates(X, effects, sizes=[8], B=500, rng=1)
    # pairs in order (0,1) (0,2) (0,3) (1,2) (1,3) (2,3)
    assert res.pairs.tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
    assert res.null.tolist() == [True, False, False, False, False, False]
    assert res.true_sign.tolist() == [0, -1, 1, -1, 1, 1]
    for t in TESTS:
        assert res.rejected[(8, t)][:, 0].tolist() == [True, False, True, True, True, True], t
    assert res.direction[8][:, 0].tolist() == [-1, 0, 1, 1, 1, 1]
    frame = res.to_frame()
    assert frame["test"].tolist() == list(TESTS)
    assert (frame["n_topics"] == 8).all() and (frame["subsets"] == 1).all()
    assert (frame[["n_null", "n_type1"]] == 1).all().all()
    assert (frame["n_different"] == 5).all()
    assert (frame[["n_type2", "n_type3"]] == 1).all().all()
    assert np.allclose(frame["type1_rate"], 1.0)
    assert np.allclose(frame[["type2_rate", "type3_rate"]], 0.2)
    assert np.allclose(frame["power"], 0.6)


def _single_pair_p(test: str, x, y, draws: dict, B: int) -> float:
    if test == "t":
        return paired.paired_t_test(x, y).p_value
    if test == "wilcoxon":
        return paired.wilcoxon_test(x, y).p_value
    if test == "sign":
        return paired.sign_test(x, y).p_value
    if test == "randomization":
        if draws["randomization"] is None:  # every sign vector, as this B alone gives
            return paired.randomization_test(x, y, B=B).p_value
        return paired.randomization_test(x, y, resamples=draws["randomization"]).p_value
    return paired.bootstrap_test(x, y, resamples=draws["bootstrap"]).p_value


def test_every_decision_is_the_single_pair_tests():
    """Loop over pairs, subsets and tests with the one-pair functions on the same draws, and
    count the errors by hand: the vectorised counts must agree decision by decision."""
    rng = np.random.default_rng(3)
    # Rounded scores: tied and zero differences, so the Wilcoxon test takes scipy's
    # permutation path on the small subsets and its normal approximation on the larger.
    X = np.round(rng.uniform(size=(5, 16)), 1)
    X[4] = X[3]  # identical systems: every difference 0
    effects = np.array([0.0, 0.0, 0.5, 0.7, 0.7])
    sizes, B, alpha = [5, 9, 16], 200, 0.1
    res = error_rates(X, effects, sizes=sizes, repeats=3, B=B, alpha=alpha, rng=7)
    assert res.resamples[5]["randomization"] is None  # 2^5 <= B: every sign vector
    assert res.resamples[9]["randomization"].B == B
    expected = []
    for n in sizes:
        subsets = res.subsets[n]
        assert subsets.shape == ((3, n) if n < 16 else (1, 16))
        for t in TESTS:
            counts = dict.fromkeys(COUNTS, 0)
            counts["subsets"] = subsets.shape[0]
            for p, (a, b) in enumerate(itertools.combinations(range(5), 2)):
                for k, sub in enumerate(subsets):
                    x, y = X[a, sub], X[b, sub]
                    pv = _single_pair_p(t, x, y, res.resamples[n], B)
                    rejected = pv < alpha
                    assert res.rejected[(n, t)][p, k] == rejected, (n, t, a, b, k, pv)
                    gap = effects[a] - effects[b]
                    observed = np.sign(np.round(x.mean() - y.mean(), 12))
                    if gap == 0:
                        counts["n_null"] += 1
                        counts["n_type1"] += rejected
                    else:
                        counts["n_different"] += 1
                        counts["n_type2"] += not rejected
                        counts["n_type3"] += rejected and observed != np.sign(gap)
            expected.append({"n_topics": n, "test": t, **counts})
    pd.testing.assert_frame_equal(res.counts, pd.DataFrame(expected), check_dtype=False)


@pytest.mark.parametrize("n", [2, 3, 6, 10, 13, 14, 30, 51])
def test_wilcoxon_p_values_are_scipys(n):
    rng = np.random.default_rng(n)
    # scipy ranks every row again for each of the 2^n sign vectors: few tied rows at n = 13
    tied = 150 if n < 10 else 4 if n <= 13 else 100
    Z = np.round(rng.normal(size=(tied + 45, n)), 1)  # ties and zeros
    Z[:40] = rng.normal(size=(40, n))  # neither
    Z[40:45] = 0.0
    expected = paired._wilcoxon_core(Z, 0.95)["p_value"]
    assert np.array_equal(_wilcoxon_p(Z), expected)


def test_rates_and_pooling():
    counts = pd.DataFrame(
        {
            "n_topics": [10, 10],
            "test": ["t", "sign"],
            "subsets": [2, 2],
            "n_null": [20, 0],
            "n_type1": [3, 0],
            "n_different": [40, 60],
            "n_type2": [10, 30],
            "n_type3": [2, 0],
        }
    )
    r = rates_of(counts)
    assert r["type1_rate"].tolist()[0] == pytest.approx(0.15) and np.isnan(r["type1_rate"][1])
    assert r["type2_rate"].tolist() == pytest.approx([0.25, 0.5])
    assert r["type3_rate"].tolist() == pytest.approx([0.05, 0.0])
    assert r["power"].tolist() == pytest.approx([0.7, 0.5])
    X, effects = _hand_case()
    one = error_rates(X, effects, sizes=[6, 8], repeats=2, tests=["t", "sign"], rng=1)
    two = error_rates(X, effects, sizes=[6, 8], repeats=2, tests=["t", "sign"], rng=2)
    pooled = ErrorRates.pooled([one, two])
    summed = one.counts[list(COUNTS)] + two.counts[list(COUNTS)]
    assert (pooled[list(COUNTS)].to_numpy() == summed.to_numpy()).all()
    assert pooled["type1_rate"].tolist() == pytest.approx(
        (summed["n_type1"] / summed["n_null"]).tolist()
    )


def test_null_tolerance_defines_the_null_pairs():
    X, _ = _hand_case()
    effects = np.array([0.0, 0.04, 0.5, 1.0])
    assert error_rates(X, effects, tests=["t"]).null.tolist() == [False] * 6
    near = error_rates(X, effects, tests=["t"], null_tolerance=0.05)
    assert near.null.tolist() == [True, False, False, False, False, False]
    assert near.true_sign.tolist() == [0, -1, -1, -1, -1, -1]
    # effects by name, for a tidy frame whose rows are its runs sorted by name
    frame = pd.DataFrame(
        [(f"s{i}", t, X[i, t]) for i in range(4) for t in range(8)],
        columns=["run", "topic", "value"],
    )
    named = error_rates(frame, {f"s{i}": e for i, e in enumerate(effects)}, tests=["t"])
    pd.testing.assert_frame_equal(named.counts, error_rates(X, effects, tests=["t"]).counts)


def test_draws_depend_on_the_seed_and_the_size_alone():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 30))
    e = np.zeros(6)
    kw = dict(repeats=4, B=100, rng=5)
    one = error_rates(X, e, sizes=[10], **kw)
    both = error_rates(X, e, sizes=[10, 20], tests=["randomization", "bootstrap"], **kw)
    assert np.array_equal(one.subsets[10], both.subsets[10])
    for t in ("randomization", "bootstrap"):
        assert np.array_equal(one.rejected[(10, t)], both.rejected[(10, t)])
    assert np.array_equal(
        one.resamples[10]["bootstrap"].indices, both.resamples[10]["bootstrap"].indices
    )
    again = error_rates(X, e, sizes=[10], **kw)
    pd.testing.assert_frame_equal(one.counts, again.counts)
    assert not np.array_equal(one.subsets[10], error_rates(X, e, sizes=[10], rng=6).subsets[10])
    # given pairs: four disjoint ones
    some = error_rates(X, e, sizes=[10], pairs=[[0, 1], [2, 3], [4, 5], [1, 0]], **kw)
    assert (some.counts["n_null"] == 16).all()


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"sizes": [1]}, ValueError, r"sizes\[0\] must be an integer >= 2"),
        ({"sizes": [5, 9]}, ValueError, r"sizes\[1\] must be an integer <= 8"),
        ({"sizes": [5, 5]}, ValueError, "sizes must not repeat"),
        ({"sizes": []}, ValueError, "sizes must not be empty"),
        ({"repeats": 0}, ValueError, "repeats"),
        ({"tests": ["z"]}, ValueError, "tests must be one of"),
        ({"tests": []}, ValueError, "tests must name"),
        ({"alpha": 1.5}, ValueError, "alpha"),
        ({"null_tolerance": -0.1}, ValueError, "null_tolerance"),
        ({"B": 0}, ValueError, "B must be"),
        ({"pairs": [[0, 0]]}, ValueError, "two different systems"),
        ({"pairs": [[0, 4]]}, ValueError, "row indices in 0..3"),
        ({"pairs": [0, 1]}, ValueError, r"\(P, 2\)"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs, error, match):
    X, effects = _hand_case()
    with pytest.raises(error, match=match):
        error_rates(X, effects, **kwargs)


def test_bad_effects():
    X, _ = _hand_case()
    with pytest.raises(ValueError, match="one number per system"):
        error_rates(X, [0.0, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        error_rates(X, [0.0, 1.0, np.nan, 2.0])
    with pytest.raises(ValueError, match="no value for system 3"):
        error_rates(X, {0: 0.0, 1: 0.0, 2: 1.0})


# ------------------------------------------------------------------------------ simulated
_SMALL = dict(n_candidates=300, rel_median=15.0, depth=100, pool_depth=20)


def _world_scores(preset: str, seed: int, n_topics: int, **params):
    from metaeval.engine import EvalTensor
    from metaeval.measures import parse_measure
    from simulators import make_world

    world = make_world(preset, n_topics=n_topics, n_systems=10, rng=seed, **{**_SMALL, **params})
    tensor = EvalTensor.build(world.runs, world.qrels, warn_extra_topics=False)
    return parse_measure("AP").compute(tensor), world.system_effect


def test_type1_within_alpha_on_null_worlds():
    """On the null preset every pair is null. The t and randomisation tests must reject about
    alpha of them: within 3 Monte-Carlo standard errors, taken over 60 independent worlds
    (the decisions within one world are not independent), and those errors small enough that
    a test at alpha / 2 or 2 alpha would fail."""
    per_world = []
    for seed in range(60):
        X, effects = _world_scores("null", 1000 + seed, n_topics=40)
        assert (effects == 0).all()
        res = error_rates(
            X, effects, sizes=[10, 20], repeats=20, tests=["t", "randomization"], rng=seed
        )
        assert (res.counts["n_different"] == 0).all()
        per_world.append(res.to_frame())
    rates = pd.concat(per_world).groupby(["n_topics", "test"])["type1_rate"]
    mean, se = rates.mean(), rates.std() / np.sqrt(rates.count())
    assert (se < 0.006).all(), se
    z = (mean - 0.05) / se
    assert (z.abs() <= 3).all(), pd.DataFrame({"mean": mean, "se": se, "z": z})


def test_large_effects_type3_near_zero_type2_falls():
    """Systems far apart (system_sd = 1, no shallow or tied runs, whose scores would not
    follow their effects): tests almost never reject in the wrong direction, and miss fewer
    true differences with more topics."""
    results = []
    for seed in range(3):
        X, effects = _world_scores(
            "trec_like", seed, n_topics=50, system_sd=1.0, shallow_fraction=0.0, tie_fraction=0.0
        )
        results.append(error_rates(X, effects, sizes=[5, 10, 25, 50], repeats=10, rng=seed))
    pooled = ErrorRates.pooled(results)
    assert (pooled["n_null"] == 0).all() and pooled["type1_rate"].isna().all()
    assert (pooled["type3_rate"] <= 0.01).all(), pooled
    for test, rows in pooled.groupby("test"):
        type2 = rows.sort_values("n_topics")["type2_rate"].to_numpy()
        assert (np.diff(type2) < 0).all(), (test, type2)
        assert type2[-1] < 0.35, (test, type2)
