"""Robustness, topic-subset stability and agreement against independent computations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from metaeval.meta.rankcorr import tau_ap
from metaeval.meta.robustness import mean_drift, rank_correlations, robustness
from metaeval.meta.stability import (
    default_sizes,
    draw_topic_subsets,
    measure_agreement,
    topic_subset_stability,
)


def test_rank_correlations_match_scipy():
    rng = np.random.default_rng(3)
    ref = rng.random(12)
    est = np.round(rng.random((5, 12)), 1)  # ties
    out = rank_correlations(ref, est, ("tau_b", "tau_a", "tau_ap"))
    for k in range(5):
        assert out["tau_b"][k] == pytest.approx(stats.kendalltau(ref, est[k]).statistic)
        assert out["tau_ap"][k] == pytest.approx(tau_ap(ref, est[k]))
    with pytest.raises(ValueError, match="statistics"):
        rank_correlations(ref, est, ("rho",))


def test_mean_drift():
    assert mean_drift([0.5, 0.3], [0.4, 0.1]) == pytest.approx(-0.15)
    assert np.allclose(mean_drift([0.5, 0.3], [[0.4, 0.1], [0.5, 0.5]]), [-0.15, 0.1])


def test_subsets_are_disjoint_and_nested_in_the_permutation():
    a, b = draw_topic_subsets(20, 7, rng=1)
    assert len(a) == len(b) == 7 and not set(a) & set(b)
    a2, b2 = draw_topic_subsets(20, 11, rng=1)
    assert b2 is None and len(a2) == 11
    assert default_sizes(50) == (5, 10, 15, 20, 25)
    assert default_sizes(7) == (1, 2, 3)


def test_stability_equals_a_brute_force_loop():
    rng = np.random.default_rng(0)
    X = rng.random((7, 16))
    Y = X + 0.3 * rng.random((7, 16))
    res = topic_subset_stability({"x": X, "y": Y}, sizes=(3, 8), repeats=4, rng=11)
    # the same subsets, drawn by hand in the documented order, and scipy's tau_b
    gen = np.random.default_rng(11)
    expect = []
    for n in (3, 8):
        for r in range(4):
            a, b = draw_topic_subsets(16, n, rng=gen)
            for name, M in (("x", X), ("y", Y)):
                sub = stats.kendalltau(M.mean(1), M[:, a].mean(1)).statistic
                expect.append((name, n, r, "tau_subset", sub))
                split = stats.kendalltau(M[:, a].mean(1), M[:, b].mean(1)).statistic
                expect.append((name, n, r, "tau_split", split))
    got = {tuple(row[:4]): row[4] for row in res.frame.itertuples(index=False)}
    assert len(got) == len(expect)
    for *key, value in expect:
        assert got[tuple(key)] == value  # kendall_tau is scipy's to the last bit
    summary = res.summary()
    assert set(summary.columns) >= {"measure", "size", "statistic", "mean", "p025", "p975"}


def test_agreement_matrix():
    rng = np.random.default_rng(2)
    scores = {m: rng.random((6, 10)) for m in ("A", "B", "C")}
    res = measure_agreement(scores, statistics=("tau_b", "tau_ap"))
    means = {m: s.mean(1) for m, s in scores.items()}
    mat = res.matrix("tau_b")
    assert mat.loc["A", "B"] == pytest.approx(stats.kendalltau(means["A"], means["B"]).statistic)
    assert mat.loc["B", "A"] == mat.loc["A", "B"] and mat.loc["C", "C"] == 1.0
    ap = res.matrix("tau_ap")
    assert ap.loc["A", "B"] == pytest.approx(tau_ap(means["A"], means["B"]))
    assert ap.loc["B", "A"] == pytest.approx(tau_ap(means["B"], means["A"]))
    sub = measure_agreement(scores, statistics=("tau_b",), topics=[0, 2, 4])
    assert sub.n_topics == 3
    assert sub.matrix().loc["A", "C"] == pytest.approx(
        stats.kendalltau(
            scores["A"][:, [0, 2, 4]].mean(1), scores["C"][:, [0, 2, 4]].mean(1)
        ).statistic
    )


def test_robustness_on_a_simulated_world_against_the_per_call_functions():
    from metaeval.measures import parse_measure
    from metaeval.meta import discriminative_power, significance_inconsistency
    from simulators import StratifiedSampling, make_world

    world = make_world(
        "trec_like",
        n_topics=10,
        n_systems=6,
        rng=3,
        n_candidates=300,
        rel_median=15.0,
        depth=100,
        pool_depth=20,
    )
    from metaeval.engine import EvalTensor

    tensor = EvalTensor.build(world.runs, world.qrels, warn_extra_topics=False)
    sets = StratifiedSampling(rates=(50, 20)).generate(tensor, trials=2, rng=4)
    res = robustness(tensor, ["AP", "P@5"], sets, truth=world.truth_tensor(), B=200, rng=5)
    frame = res.to_frame()
    ap = parse_measure("AP")
    full = ap.compute(tensor)
    j = sets[3]  # trial 1, level 20
    red = ap.compute(j.apply(tensor))
    row = frame[(frame.level == 20) & (frame.trial == 1) & (frame.measure == "AP")]
    val = row.set_index(["against", "statistic"])["value"]
    assert val["full", "tau_b"] == pytest.approx(
        stats.kendalltau(full.mean(1), red.mean(1)).statistic
    )
    assert val["truth", "tau_b"] == pytest.approx(
        stats.kendalltau(ap.compute(world.truth_tensor()).mean(1), red.mean(1)).statistic
    )
    assert val["full", "mean_drift"] == pytest.approx((red.mean(1) - full.mean(1)).mean())
    # significance: the same resamples as one draw with the same seed
    from metaeval.meta import resamples

    shared = resamples("bootstrap", n_topics=10, n_systems=6, B=200, rng=5)
    inc = significance_inconsistency(discriminative_power(full, resamples=shared), red)
    assert val["full", "false_alarms"] == inc.n_absent
    assert val["full", "misses"] == inc.n_missed
    assert val["", "power"] == pytest.approx(discriminative_power(red, resamples=shared).power)
    summary = res.summary()
    assert (summary["trials"] == 2).all()
