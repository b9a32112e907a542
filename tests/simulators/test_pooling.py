"""Pools: equal to the union of every run's top k (plain Python reference), nested in depth."""

import numpy as np
import pytest

from metaeval import EvalTensor
from simulators import make_world, pool_mask, pool_qrels, pool_size


@pytest.fixture(scope="module")
def world():
    # Heavy ties (tie_fraction 0.5) and shallow runs exercise trec_eval's tie order and short lists.
    return make_world(
        "trec_like",
        n_topics=6,
        n_systems=7,
        rng=np.random.default_rng(3),
        n_candidates=300,
        depth=120,
        pool_depth=15,
        tie_fraction=0.5,
        tie_resolution=0.3,
        shallow_fraction=0.3,
        shallow_depth=8,
    )


def reference_pool(runs, qrels, k, names=None):
    """{(topic, doc): grade} of the depth-k pool, by sorting each run's dict in Python."""
    truth = {(t, d): g for t, docs in qrels.to_dict().items() for d, g in docs.items()}
    pooled = set()
    for run in runs:
        if names is not None and run.name not in names:
            continue
        for topic, scores in run.to_dict().items():
            ranked = sorted(scores, key=lambda d: (scores[d], d), reverse=True)  # trec_eval
            pooled.update((topic, d) for d in ranked[:k])
    return {key: truth[key] for key in pooled if key in truth}


@pytest.mark.parametrize("k", [1, 5, 15, 200])
def test_pool_equals_union_of_top_k(world, k):
    got = pool_qrels(world.runs, k, qrels=world.truth).to_dict()
    flat = {(t, d): g for t, docs in got.items() for d, g in docs.items()}
    assert flat == reference_pool(world.runs, world.truth, k)


def test_pool_from_subset_of_runs(world):
    names = ["sys002", "sys005"]
    got = pool_qrels(world.runs, 10, qrels=world.truth, runs=names).to_dict()
    flat = {(t, d): g for t, docs in got.items() for d, g in docs.items()}
    assert flat == reference_pool(world.runs, world.truth, 10, names)
    t = world.truth_tensor()
    assert np.array_equal(pool_mask(t, 10, runs=names), pool_mask(t, 10, runs=[1, 4]))


def test_official_qrels_are_the_pool_at_pool_depth(world):
    flat = {(t, d): g for t, docs in world.qrels.to_dict().items() for d, g in docs.items()}
    assert flat == reference_pool(world.runs, world.truth, 15)


def test_pools_nested_in_depth_and_never_add(world):
    t = world.truth_tensor()
    masks = [pool_mask(t, k) for k in (1, 3, 10, 50, None)]
    for small, large in zip(masks, masks[1:]):
        assert not (small & ~large).any()
        assert small.sum() < large.sum()
    # intersected with a reference judgment set (the official qrels): never outside it
    official = EvalTensor.build(world.runs, world.qrels)
    m = pool_mask(official, 50)
    assert m.shape == (len(world.qrels),)
    sizes = pool_size(official, 50)
    assert sizes.sum() == m.sum() == len(world.qrels)  # official pool is depth 15 < 50


def test_validation(world):
    t = world.truth_tensor()
    with pytest.raises(ValueError, match="depth must be an integer >= 1, got 0"):
        pool_mask(t, 0)
    with pytest.raises(TypeError, match="depth must be an integer, got 2.5"):
        pool_mask(t, 2.5)
    with pytest.raises(ValueError, match="no run named"):
        pool_mask(t, 5, runs=["nope"])
    n = t.n_runs
    with pytest.raises(ValueError, match=rf"runs\[1\] must be an integer <= {n - 1}, got {n}"):
        pool_mask(t, 5, runs=[0, n])
    with pytest.raises(ValueError, match=r"runs\[0\] must be an integer >= 0, got -1"):
        pool_mask(t, 5, runs=[-1])
    with pytest.raises(ValueError, match="qrels is required"):
        pool_mask(world.runs, 5)
    assert not pool_mask(t, 5, runs=[]).any()
