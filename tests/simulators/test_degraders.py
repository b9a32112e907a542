"""Degraders: exact counts (docs/methods.md §4.1, §4.2), nesting, invariants, registry, fast path."""

import dataclasses
import itertools
import math
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import metaeval
from metaeval import EvalTensor, Qrels
from metaeval.engine.tensor import UNJUDGED, UNPOOLED
from simulators import (
    AssessorNoise,
    Degrader,
    FewerTeams,
    LeaveOneGroupOut,
    PoolDepth,
    StratifiedSampling,
    UniformSampling,
    make_degrader,
    make_world,
    pool_mask,
    register_degrader,
    registered_degraders,
)


def hand_qrels():
    """Topic a: R = 23 (grades 1-3), N = 157; b: R = 25, N = 5; c: R = 0, N = 40;
    d: R = 1, N = 12 and 3 rows pooled-but-unjudged (-1)."""
    rows = []

    def add(topic, grades):
        rows.extend((topic, f"{topic}{i:04d}", g) for i, g in enumerate(grades))

    rng = np.random.default_rng(0)
    add("a", rng.permutation([1] * 10 + [2] * 8 + [3] * 5 + [0] * 157))
    add("b", rng.permutation([1] * 25 + [0] * 5))
    add("c", [0] * 40)
    add("d", [1] + [0] * 12 + [-1] * 3)
    return Qrels.from_df(pd.DataFrame(rows, columns=["topic", "doc", "grade"]))


def per_topic(q: Qrels, mask, cond):
    return np.bincount(q.topic_index[mask & cond], minlength=len(q.topics))


@pytest.fixture(scope="module")
def world():
    return make_world(
        "trec_like",
        n_topics=8,
        n_systems=9,
        rng=np.random.default_rng(5),
        n_candidates=400,
        depth=150,
        pool_depth=30,
        team_size=3,
    )


@pytest.fixture(scope="module")
def tensor(world):
    return EvalTensor.build(world.runs, world.qrels)


# ------------------------------------------------------------------- stratified sampling
@pytest.mark.parametrize(
    "rounding, expected",
    [
        # (rate, [R_P per topic a b c d], [N_P per topic a b c d]) worked by hand from
        # R_P = min(R, max(1, f(P R/100))), N_P = min(N, max(10, f(P N/100))).
        (
            "trunc",
            {
                90: ([20, 22, 0, 1], [141, 5, 36, 10]),
                50: ([11, 12, 0, 1], [78, 5, 20, 10]),
                10: ([2, 2, 0, 1], [15, 5, 10, 10]),
                1: ([1, 1, 0, 1], [10, 5, 10, 10]),
            },
        ),
        (
            "round",
            {
                90: ([21, 23, 0, 1], [141, 5, 36, 11]),
                50: ([12, 13, 0, 1], [79, 5, 20, 10]),
                10: ([2, 3, 0, 1], [16, 5, 10, 10]),
                1: ([1, 1, 0, 1], [10, 5, 10, 10]),
            },
        ),
    ],
)
def test_stratified_exact_counts(rounding, expected):
    q = hand_qrels()
    d = StratifiedSampling(rates=list(expected), rounding=rounding)
    rel, non = q.grades >= 1, q.grades == 0
    for j in d.generate(q, rng=np.random.default_rng(1)):
        r_p, n_p = expected[j.level]
        assert per_topic(q, j.keep, rel).tolist() == r_p
        assert per_topic(q, j.keep, non).tolist() == n_p
        assert j.keep[q.grades == -1].all()  # unjudged rows are left alone
        out = j.to_qrels()  # dropped rows are absent (unpooled)
        assert len(out) == j.keep.sum()


def test_stratified_nested_one_shuffle_per_topic_and_seeded():
    q = hand_qrels()
    d = StratifiedSampling(rates=[90, 70, 50, 30, 10, 5, 1])
    sets = d.generate(q, rng=np.random.default_rng(3), trials=3)
    assert [(j.trial, j.level) for j in sets[:8]] == [(0, r) for r in d.rates] + [(1, 90)]
    for trial in range(3):
        masks = [j.keep for j in sets if j.trial == trial]
        for big, small in zip(masks, masks[1:]):
            assert not (small & ~big).any()  # nested
    assert not np.array_equal(sets[4].keep, sets[4 + 7].keep)  # trials differ
    again = d.generate(q, rng=np.random.default_rng(3), trials=3)
    assert all(np.array_equal(a.keep, b.keep) for a, b in zip(sets, again))
    other = d.generate(q, rng=np.random.default_rng(4), trials=1)
    assert not np.array_equal(other[4].keep, sets[4].keep)


def test_stratified_relevance_threshold():
    q = hand_qrels()
    j = StratifiedSampling(rates=[10], rel=2).generate(q, rng=np.random.default_rng(0))[0]
    # topic a at rel=2: R = 13, N = 167 -> R_P = 1, N_P = 16; grade-1 docs are non-relevant
    assert per_topic(q, j.keep, q.grades >= 2)[0] == 1
    assert per_topic(q, j.keep, (q.grades >= 0) & (q.grades < 2))[0] == 16


def test_stratified_uniform_over_subsets():
    # Each relevant doc of topic a is kept at 10% (R_P = 2 of 23) with probability 2/23.
    q = hand_qrels()
    d = StratifiedSampling(rates=[10])
    hits = sum(j.keep for j in d.generate(q, rng=np.random.default_rng(9), trials=2000))
    rel_a = np.flatnonzero((q.grades >= 1) & (q.topic_index == 0))
    assert hits[rel_a].mean() / 2000 == pytest.approx(2 / 23, abs=0.005)
    assert hits[rel_a].min() > 2000 * 2 / 23 * 0.7


# ------------------------------------------------------------------- uniform sampling
def test_uniform_counts_relevant_kept_and_unjudged():
    q = hand_qrels()
    d = UniformSampling(rates=[50, 10, 3, 1])
    judged = q.grades >= 0
    A = np.bincount(q.topic_index[judged], minlength=4)  # [180, 30, 40, 13]
    for j in d.generate(q, rng=np.random.default_rng(2), trials=20):
        n = per_topic(q, j.keep, judged)
        # floor(p A / 100), at least 1 on a topic with a relevant document (a, b, d)
        assert n.tolist() == [
            max(int(has), math.floor(j.level * a / 100)) for a, has in zip(A, [1, 1, 0, 1])
        ]
        got_rel = per_topic(q, j.keep, q.grades >= 1)
        assert (got_rel[[0, 1, 3]] >= 1).all()  # redraw until >= 1 relevant
        out = j.to_qrels()
        assert len(out) == len(q)  # nothing removed ...
        assert (out.grades == -1).sum() == len(q) - n.sum()  # ... unsampled become -1
        assert (out.grades >= 0).sum() == n.sum()


def test_uniform_on_tensor_marks_unjudged(world, tensor):
    j = UniformSampling(rates=[20]).generate(tensor, rng=np.random.default_rng(0))[0]
    t = j.apply(tensor)
    retrieved = tensor.doc_index < len(tensor.judgments)
    dropped_rows = ~j.keep
    is_dropped = np.append(dropped_rows, False)[tensor.doc_index]
    assert (t.codes[is_dropped & retrieved] == UNJUDGED).all()
    assert (t.codes[~retrieved] == UNPOOLED).all()
    # The fast path equals a tensor built from the written qrels (infAP uses the -1 rows).
    slow = EvalTensor.build(world.runs, j.to_qrels())
    ms = ["infAP", "AP", "Bpref", "nDCG"]
    a, b = metaeval.score_matrices(t, ms), metaeval.score_matrices(slow, ms)
    for m in ms:
        np.testing.assert_allclose(a[m], b[m], atol=1e-12)


# ------------------------------------------------------------------- pooling degraders
def test_pool_depth_matches_pool_mask_and_is_deterministic(world, tensor):
    d = PoolDepth(depths=[30, 10, 3])
    sets = d.generate(tensor, rng=np.random.default_rng(0), trials=2)
    for j in sets:
        assert np.array_equal(j.keep, pool_mask(tensor, j.level))
    assert sets[0].keep.all()  # official pool is depth 30
    assert np.array_equal(sets[1].keep, sets[4].keep)
    assert sets[2].keep.sum() < sets[1].keep.sum()
    with pytest.raises(ValueError, match="pools from runs"):
        d.generate(world.qrels, rng=np.random.default_rng(0))
    # runs= builds the tensor
    via_runs = d.generate(world.qrels, rng=np.random.default_rng(0), runs=world.runs)
    assert np.array_equal(via_runs[1].keep, sets[1].keep)


def test_leave_one_group_out_removes_exactly_the_unique_contributions(world, tensor):
    d = LeaveOneGroupOut(groups=world.groups, depth=30)
    teams = sorted(set(world.groups.values()))
    assert d.levels() == teams
    for j in d.generate(tensor, rng=np.random.default_rng(0)):
        mine = [r for r, g in world.groups.items() if g == j.level]
        others = [r for r, g in world.groups.items() if g != j.level]
        unique = pool_mask(tensor, 30, runs=mine) & ~pool_mask(tensor, 30, runs=others)
        assert unique.any()
        assert np.array_equal(j.keep, ~unique)


def test_fewer_teams(world, tensor):
    n_teams = len(set(world.groups.values()))
    d = FewerTeams(k=[1, 2, n_teams], groups=world.groups, depth=30)
    sets = d.generate(tensor, rng=np.random.default_rng(1), trials=5)
    full = pool_mask(tensor, 30)
    seen = set()
    for j in sets:
        if j.level == n_teams:
            assert np.array_equal(j.keep, full)
        # the kept set is the pool of some k teams
        team_masks = {
            t: pool_mask(tensor, 30, runs=[r for r, g in world.groups.items() if g == t])
            for t in set(world.groups.values())
        }
        assert any(
            np.array_equal(j.keep, np.logical_or.reduce([team_masks[t] for t in c]))
            for c in itertools.combinations(sorted(team_masks), j.level)
        )
        if j.level == 1:
            seen.add(j.keep.tobytes())
    assert len(seen) > 1  # different teams drawn across trials
    with pytest.raises(ValueError, match="k must be at most"):
        FewerTeams(k=[n_teams + 1], groups=world.groups)


# ------------------------------------------------------------------- assessor noise
def test_assessor_noise_rates_and_invariants():
    big = Qrels.from_df(
        pd.DataFrame(
            {
                "topic": ["t"] * 40000,
                "doc": [f"d{i}" for i in range(40000)],
                "grade": np.tile([0, 1, 2, 3], 10000),
            }
        )
    )
    d = AssessorNoise(rates=[0.0, 0.2, 1.0])
    sets = {j.level: j for j in d.generate(big, rng=np.random.default_rng(0))}
    assert np.array_equal(sets[0.0].grades, big.grades)
    changed = sets[0.2].grades != big.grades
    assert changed.mean() == pytest.approx(0.2, abs=0.01)
    assert (np.abs(sets[0.2].grades.astype(int) - big.grades) <= 1).all()  # adjacent only
    g1 = sets[1.0].grades
    assert (g1[big.grades == 0] == 1).all() and (g1[big.grades == 3] == 2).all()
    assert all(j.keep.all() for j in sets.values())
    ident = AssessorNoise(confusion=np.eye(4)).generate(big, rng=np.random.default_rng(0))[0]
    assert np.array_equal(ident.grades, big.grades)
    with pytest.raises(ValueError, match="row-stochastic"):
        AssessorNoise(confusion=[[0.5, 0.4], [0, 1]])


def test_assessor_noise_keeps_unjudged_and_applies_to_tensor():
    q = hand_qrels()
    j = AssessorNoise(rates=[0.5]).generate(q, rng=np.random.default_rng(0))[0]
    assert (j.grades[q.grades == -1] == -1).all()
    assert len(j.to_qrels()) == len(q)
    run = metaeval.Run("r", ["a"] * 5, [f"a{i:04d}" for i in range(5)], [5, 4, 3, 2, 1])
    t = EvalTensor.build(run, q)
    t2 = j.apply(t)
    assert np.array_equal(t2.codes[0, 0, :5], np.append(j.grades, 0)[t.doc_index[0, 0, :5]])


# ------------------------------------------------------------------- every degrader
def all_degraders(world):
    return [
        StratifiedSampling(),
        UniformSampling(rates=[30, 5]),
        PoolDepth(depths=[10, 2]),
        LeaveOneGroupOut(groups=world.groups),
        FewerTeams(k=[2], groups=world.groups),
        AssessorNoise(rates=[0.3]),
    ]


def test_never_adds_judgments_and_fast_path_equals_qrels(world, tensor):
    source = {(t, d) for t, docs in world.qrels.to_dict().items() for d in docs}
    ms = ["AP", "nDCG", "P@10", "RR", "Bpref", "infAP"]
    for d in all_degraders(world):
        for j in d.generate(tensor, rng=np.random.default_rng(0)):
            out = j.to_qrels().to_dict()
            pairs = {(t, doc) for t, docs in out.items() for doc in docs}
            assert pairs <= source, d.name
            judged_out = sum(g >= 0 for docs in out.values() for g in docs.values())
            assert judged_out == j.n_judged <= len(world.qrels)
            fast = metaeval.score_matrices(j.apply(tensor), ms)
            slow = metaeval.score_matrices(EvalTensor.build(world.runs, j.to_qrels()), ms)
            for m in ms:
                np.testing.assert_allclose(fast[m], slow[m], atol=1e-12, err_msg=f"{d.name} {m}")


def test_seeded_identical_output(world, tensor):
    for d in all_degraders(world):
        a = d.generate(tensor, rng=np.random.default_rng(8), trials=2)
        b = d.generate(tensor, rng=np.random.default_rng(8), trials=2)
        assert all(np.array_equal(x.codes(), y.codes()) for x, y in zip(a, b)), d.name


# ------------------------------------------------------------------- registry and validation
def test_registry_and_user_degrader():
    assert {
        "stratified",
        "uniform",
        "pool_depth",
        "leave_one_group_out",
        "fewer_teams",
        "assessor_noise",
    } <= set(registered_degraders())
    assert make_degrader("stratified", rates=[10]).rates == (10,)

    @register_degrader
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class DropTopGrade(Degrader):
        """Remove every judgment of the top grade (a user's degrader)."""

        grade: int = 3
        name: ClassVar[str] = "drop_top_grade_test"

        def levels(self):
            return [self.grade]

        def _trial(self, qrels, tensor, rng):
            return {self.grade: qrels.grades != self.grade}

    q = hand_qrels()
    j = make_degrader("drop_top_grade_test").generate(q, rng=np.random.default_rng(0))[0]
    assert j.keep.sum() == len(q) - 5
    with pytest.raises(ValueError, match="already registered"):

        @register_degrader
        @dataclasses.dataclass(frozen=True, kw_only=True)
        class Clash(Degrader):
            name: ClassVar[str] = "stratified"

    with pytest.raises(ValueError, match="unknown degrader"):
        make_degrader("nope")
    with pytest.raises(ValueError, match="stratified: rate is not a parameter"):
        make_degrader("stratified", rate=10)


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: StratifiedSampling(rates=[0]), "rates"),
        (lambda: StratifiedSampling(rates=[10, 10]), "rates"),
        (lambda: StratifiedSampling(rounding="ceil"), "rounding"),
        (lambda: StratifiedSampling(min_rel=-1), "min_rel"),
        (lambda: UniformSampling(rates=[101]), "rates"),
        (lambda: PoolDepth(depths=[0]), "depths"),
        (lambda: LeaveOneGroupOut(groups=42), "groups"),
        (lambda: AssessorNoise(rates=[1.5]), "rates"),
        (lambda: FewerTeams(depth=0), "depth"),
    ],
)
def test_bad_parameters_name_the_parameter(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_generate_validation(tensor):
    d = StratifiedSampling()
    with pytest.raises(TypeError, match="rng"):
        d.generate(tensor, rng=1.5)
    # the one rng policy: an int seed is a seed
    assert all(
        np.array_equal(a.keep, b.keep)
        for a, b in zip(d.generate(tensor, rng=1), d.generate(tensor, rng=np.random.default_rng(1)))
    )
    with pytest.raises(ValueError, match="trials"):
        d.generate(tensor, rng=np.random.default_rng(0), trials=0)
    with pytest.raises(ValueError, match="groups has no team"):
        LeaveOneGroupOut(groups={"sys001": "x"}).generate(tensor, rng=np.random.default_rng(0))


# ------------------------------------------------------------------- properties and real data
@settings(max_examples=60, deadline=None)
@given(
    topics=st.lists(
        st.tuples(st.integers(0, 40), st.integers(0, 60), st.integers(0, 3)), min_size=1, max_size=5
    ),
    rate=st.sampled_from([90, 80, 70, 60, 50, 40, 30, 25, 20, 15, 10, 5, 4, 3, 2, 1]),
    rounding=st.sampled_from(["trunc", "round"]),
    min_rel=st.integers(0, 3),
    min_nonrel=st.integers(0, 12),
    seed=st.integers(0, 2**32 - 1),
)
def test_stratified_counts_property(topics, rate, rounding, min_rel, min_nonrel, seed):
    rows = []
    for i, (R, N, U) in enumerate(topics):
        grades = [2] * R + [0] * N + [-1] * U + ([0] if R + N + U == 0 else [])
        rows += [(f"t{i}", f"d{j}", g) for j, g in enumerate(grades)]
    q = Qrels.from_df(pd.DataFrame(rows, columns=["topic", "doc", "grade"]))
    d = StratifiedSampling(rates=[rate], rounding=rounding, min_rel=min_rel, min_nonrel=min_nonrel)
    keep = d.generate(q, rng=np.random.default_rng(seed))[0].keep
    f = math.floor if rounding == "trunc" else (lambda x: math.floor(x + 0.5))
    for i, (R, N, U) in enumerate(topics):
        N = N + (R + N + U == 0)
        in_topic = q.topic_index == i
        assert (keep & in_topic & (q.grades >= 1)).sum() == min(R, max(min_rel, f(rate * R / 100)))
        assert (keep & in_topic & (q.grades == 0)).sum() == min(
            N, max(min_nonrel, f(rate * N / 100))
        )
        assert (keep & in_topic & (q.grades == -1)).sum() == U


DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


@pytest.mark.skipif(
    not (DATA / "trec-dl-2019").is_dir(), reason=f"TREC DL data not found at {DATA}"
)
def test_stratified_counts_on_dl2019_qrels():
    q = metaeval.read_qrels(DATA / "trec-dl-2019" / "qrels.txt")
    df = q.to_df()
    R = (df.grade >= 2).groupby(df.topic).sum().to_numpy()
    N = (df.grade < 2).groupby(df.topic).sum().to_numpy()
    d = StratifiedSampling(rates=[90, 50, 10, 2], rel=2)
    for j in d.generate(q, rng=np.random.default_rng(0)):
        got_r = np.bincount(q.topic_index[j.keep & (q.grades >= 2)], minlength=len(R))
        got_n = np.bincount(q.topic_index[j.keep & (q.grades < 2)], minlength=len(N))
        assert got_r.tolist() == [min(r, max(1, r * j.level // 100)) for r in R]
        assert got_n.tolist() == [min(n, max(10, n * j.level // 100)) for n in N]
