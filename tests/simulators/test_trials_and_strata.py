"""Degrader.trial (one trial from its own seed), stratification by grade, level fields."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval import EvalTensor, Qrels, RunSet
from simulators import StratifiedSampling, make_degrader, make_world
from simulators.degraders import LeaveOneGroupOut, level_field, registered_degraders


@pytest.fixture(scope="module")
def world():
    return make_world(
        "few_highly_relevant",
        n_topics=6,
        n_systems=5,
        rng=3,
        n_candidates=400,
        rel_median=30.0,
        depth=100,
        pool_depth=40,
    )


def buckley_voorhees(qrels, rates, rng, *, rel=1, min_rel=1, min_nonrel=10):
    """Stratified sampling as Buckley & Voorhees describe it, written out topic by topic: the
    relevant documents, then the judged non-relevant ones, are shuffled once; at each rate P
    the first min(n, max(minimum, floor(P n / 100))) of each list are kept."""
    grades, topic = qrels.grades, qrels.topic_index
    keep = {P: grades < 0 for P in rates}  # unjudged rows are left as they are
    for t in range(len(qrels.topics)):
        rows = np.flatnonzero(topic == t)
        relevant = rows[grades[rows] >= rel]
        nonrelevant = rows[(grades[rows] >= 0) & (grades[rows] < rel)]
        for docs, minimum in ((relevant, min_rel), (nonrelevant, min_nonrel)):
            shuffled = docs[rng.permutation(len(docs))]
            for P in rates:
                quota = min(len(docs), max(minimum, P * len(docs) // 100))
                keep[P][shuffled[:quota]] = True
    return keep


def test_trial_k_from_its_own_seed_equals_generate(world):
    d = StratifiedSampling(rates=(50, 10))
    seeds = np.random.SeedSequence(11).spawn(3)
    by_trial = [
        d.trial(world.qrels, rng=np.random.default_rng(seeds[k]), trial=k) for k in range(3)
    ]
    # trial 2 alone, without drawing trials 0 and 1: the sampling of its own seed
    alone = d.trial(world.qrels, rng=np.random.default_rng(seeds[2]), trial=2)
    expected = buckley_voorhees(world.qrels, (50, 10), np.random.default_rng(seeds[2]))
    for a, b in zip(alone, by_trial[2]):
        assert a.level == b.level and a.trial == b.trial == 2
        assert np.array_equal(a.keep, expected[a.level])
        assert np.array_equal(b.keep, expected[b.level])
    # generate draws trials one after another from one generator: trial() with that generator
    gen = np.random.default_rng(5)
    manual = [j for k in range(3) for j in d.trial(world.qrels, rng=gen, trial=k)]
    auto = d.generate(world.qrels, rng=np.random.default_rng(5), trials=3)
    assert [(j.level, j.trial) for j in auto] == [(j.level, j.trial) for j in manual]
    assert all(np.array_equal(a.keep, b.keep) for a, b in zip(auto, manual))
    # nested within a trial
    high, low = by_trial[0]
    assert not (low.keep & ~high.keep).any()


def test_grade_strata_keep_every_relevant_grade():
    # one topic: 40 grade-1, 2 grade-3, 100 grade-0 documents
    judged = {f"a{i}": 1 for i in range(40)} | {"h1": 3, "h2": 3} | {f"n{i}": 0 for i in range(100)}
    qrels = Qrels.from_dict({"t": judged})
    by_grade = StratifiedSampling(rates=(50, 5), strata="grade")
    by_rel = StratifiedSampling(rates=(50, 5))
    grades = qrels.grades
    for seed in range(20):
        sets = {j.level: j.keep for j in by_grade.trial(qrels, rng=seed)}
        kept = {g: [int((sets[r] & (grades == g)).sum()) for r in (50, 5)] for g in (0, 1, 3)}
        # per grade: max(min, trunc(rate n / 100)), capped at n
        assert kept[1] == [20, 2] and kept[3] == [1, 1] and kept[0] == [50, 10]
        assert not (sets[5] & ~sets[50]).any()
        rel = {j.level: j.keep for j in by_rel.trial(qrels, rng=seed)}
        assert int((rel[5] & (grades > 0)).sum()) == 2  # trunc(0.05 x 42) = 2, any grade


def test_relevance_strata_unchanged_by_the_grade_option(world):
    # the default strata are Buckley & Voorhees' two lists, on graded judgments too
    a = StratifiedSampling(rates=(30,)).generate(world.qrels, rng=4, trials=2)
    b = StratifiedSampling(rates=(30,), strata="relevance").generate(world.qrels, rng=4, trials=2)
    gen = np.random.default_rng(4)
    expected = [buckley_voorhees(world.qrels, (30,), gen)[30] for _ in range(2)]
    assert np.unique(world.qrels.grades).tolist() == [0, 1, 2, 3]
    for x, y, keep in zip(a, b, expected):
        assert np.array_equal(x.keep, keep) and np.array_equal(y.keep, keep)
    # with one relevant grade, a stratum per grade is the relevant stratum
    binary = world.qrels.with_grades(np.minimum(world.qrels.grades, 1).astype(np.int8))
    by_grade = StratifiedSampling(rates=(30, 5), strata="grade").generate(binary, rng=4, trials=2)
    gen = np.random.default_rng(4)
    expected = [buckley_voorhees(binary, (30, 5), gen) for _ in range(2)]
    assert [j.level for j in by_grade] == [30, 5, 30, 5]
    for j in by_grade:
        assert np.array_equal(j.keep, expected[j.trial][j.level])
    with pytest.raises(ValueError, match="strata"):
        StratifiedSampling(strata="grades")


def test_every_builtin_degrader_names_its_level_field():
    for name, cls in registered_degraders().items():
        if not cls.__module__.startswith("simulators."):
            continue
        assert level_field(name) in {f.name for f in cls.__dataclass_fields__.values()}
    d = make_degrader("pool_depth", **{level_field("pool_depth"): (10, 5)})
    assert d.levels() == [10, 5]


def test_leave_one_group_out_guesses_teams_from_run_names():
    qrels = Qrels.from_dict({"t": {"a": 1, "b": 1, "c": 0}})
    runs = RunSet.from_dict(
        {
            "bm25-1": {"t": {"a": 1.0}},
            "bm25-2": {"t": {"a": 1.0}},
            "neural": {"t": {"b": 1.0, "c": 0.5}},
        }
    )
    tensor = EvalTensor.build(runs, qrels)
    out = {j.level: j.keep for j in LeaveOneGroupOut(depth=None).trial(tensor, rng=0)}
    assert set(out) == {"bm", "neural"}
    assert out["neural"].tolist() == [True, False, False]  # b and c only neural pooled
    with pytest.raises(ValueError, match="list them"):
        LeaveOneGroupOut().levels()
