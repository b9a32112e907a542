"""Worlds: determinism, the generative model's parameters, presets, and the null world."""

import dataclasses
import itertools
import math

import numpy as np
import pytest
from scipy import stats

import metaeval
from metaeval import EvalTensor, Run, write_qrels, write_runs
from simulators import PRESETS, WorldParams, make_world

SMALL = dict(n_candidates=400, depth=150, pool_depth=20)


def small(preset="trec_like", seed=1, n_topics=8, n_systems=6, **kw):
    return make_world(
        preset,
        n_topics=n_topics,
        n_systems=n_systems,
        rng=np.random.default_rng(seed),
        **{**SMALL, **kw},
    )


def _bytes(world, folder):
    folder.mkdir()
    write_qrels(world.truth, folder / "truth")
    write_qrels(world.qrels, folder / "qrels")
    paths = write_runs(world.runs, folder / "runs")
    return [(folder / "truth").read_bytes(), (folder / "qrels").read_bytes()] + [
        p.read_bytes() for p in paths
    ]


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_same_seed_same_bytes_different_seed_differs(preset, tmp_path):
    a = _bytes(small(preset, seed=5, tie_fraction=0.5), tmp_path / "a")
    b = _bytes(small(preset, seed=5, tie_fraction=0.5), tmp_path / "b")
    c = _bytes(small(preset, seed=6, tie_fraction=0.5), tmp_path / "c")
    assert a == b
    assert a[0] != c[0] or a[1] != c[1]
    assert a[2:] != c[2:]


def test_fast_runs_equal_runs_built_and_sorted_by_run():
    # make_world builds Run objects without re-sorting; Run(...) sorts by trec_eval order.
    # With heavy ties the docno tie-break is exercised.
    w = small(tie_fraction=0.5, tie_resolution=0.5, shallow_fraction=0.5, shallow_depth=30)
    for run in w.runs:
        df = run.to_df()
        shuffled = df.iloc[np.random.default_rng(0).permutation(len(df))]
        rebuilt = Run(
            run.name,
            shuffled["topic"].to_numpy(),
            shuffled["doc"].to_numpy(),
            shuffled["score"].to_numpy(),
        )
        assert rebuilt.to_df().equals(df)
        assert list(rebuilt.topics) == list(run.topics)
        assert np.array_equal(rebuilt.offsets, run.offsets)
    ties = [1 - len(set(r.scores)) / len(r.scores) for r in w.runs]
    # half the systems round to 0.5 (most scores tied), the others have continuous scores
    assert sum(t > 0.3 for t in ties) == 3 and sum(t == 0 for t in ties) == 3


def test_truth_tensor_equals_string_built_tensor():
    w = small(tie_fraction=0.5, shallow_fraction=0.4, shallow_depth=40)
    fast = w.truth_tensor()
    slow = EvalTensor.build(w.runs, w.truth)
    assert np.array_equal(fast.codes, slow.codes)
    assert np.array_equal(fast.doc_index, slow.doc_index)
    assert np.array_equal(fast.lengths, slow.lengths)


def test_shape_ids_groups_depths():
    w = small(n_topics=7, n_systems=9, shallow_fraction=1 / 3, shallow_depth=25, team_size=3)
    assert w.n_topics == 7 and w.n_systems == 9
    assert len(w.truth) == 7 * 400
    assert list(w.truth.topics) == [f"q{t:03d}" for t in range(1, 8)]
    df = w.truth.to_df()
    assert df.groupby("topic").doc.nunique().eq(400).all()
    assert not df.doc.duplicated().any()
    lengths = sorted(int(np.diff(r.offsets)[0]) for r in w.runs)
    assert lengths == [25] * 3 + [150] * 6
    assert set(w.groups) == set(w.runs.names)
    assert len(set(w.groups.values())) == 3
    # every team has at least one run
    assert all(list(w.groups.values()).count(t) >= 1 for t in set(w.groups.values()))


def test_relevant_counts_and_grade_proportions():
    w = make_world(
        "trec_like",
        n_topics=300,
        n_systems=2,
        rng=np.random.default_rng(2),
        n_candidates=600,
        depth=50,
        rel_median=40,
        rel_sigma=0.5,
        grade_probs=(0.7, 0.3),
        grade_concentration=math.inf,
    )
    df = w.truth.to_df()
    R = df[df.grade >= 1].groupby("topic").size().reindex(w.truth.topics, fill_value=0)
    # log R ~ N(log 40, 0.5^2): median and log-sd within sampling error for 300 topics
    assert np.median(R) == pytest.approx(40, rel=0.1)
    assert np.log(R).std() == pytest.approx(0.5, abs=0.06)
    share = (df.grade == 2).sum() / (df.grade >= 1).sum()
    assert share == pytest.approx(0.3, abs=0.02)


def test_known_item_and_few_highly_relevant_presets():
    ki = make_world(
        "known_item",
        n_topics=20,
        n_systems=3,
        rng=np.random.default_rng(0),
        n_candidates=300,
        depth=100,
    )
    df = ki.truth.to_df()
    assert (df.groupby("topic").grade.sum() == 1).all()
    fh = make_world(
        "few_highly_relevant",
        n_topics=40,
        n_systems=3,
        rng=np.random.default_rng(0),
        n_candidates=600,
        depth=100,
    )
    g = fh.truth.to_df().groupby("topic").grade.value_counts().unstack(fill_value=0)
    assert (g[3] >= 1).all()  # min_top_grade = 1
    assert g[1].sum() >= 10 * g[3].sum()  # R(1) >= 10 R(3) overall
    assert (g[1] >= 10 * g[3]).mean() > 0.5  # and on most topics


def test_better_systems_score_better():
    w = make_world(
        "trec_like",
        n_topics=40,
        n_systems=12,
        rng=np.random.default_rng(4),
        n_candidates=500,
        depth=200,
        pool_depth=50,
        system_sd=0.8,
    )
    ap = metaeval.score_matrices(w.truth_tensor(), ["AP"])["AP"].mean(axis=1)
    rho = stats.spearmanr(w.system_effect, ap).statistic
    assert rho > 0.85


def test_null_world_no_system_systematically_better():
    # Every pair of systems compared by a paired t-test on per-topic AP over 100 topics. Under
    # the null preset the rejection rate at alpha = 0.05 must be near 0.05 (we allow up to
    # 0.10: the 66 pairs share systems, so the rate is noisy); under trec_like (system_sd 0.5)
    # most pairs differ, which shows the check has power.
    def reject_rate(preset):
        w = make_world(
            preset,
            n_topics=100,
            n_systems=12,
            rng=np.random.default_rng(11),
            n_candidates=400,
            depth=100,
            pool_depth=30,
        )
        ap = metaeval.score_matrices(w.pool_tensor(), ["AP"])["AP"]
        p = [stats.ttest_rel(ap[i], ap[j]).pvalue for i, j in itertools.combinations(range(12), 2)]
        return np.mean(np.asarray(p) < 0.05), ap

    null_rate, ap = reject_rate("null")
    assert null_rate <= 0.10
    # system means within sampling noise: one-way spread vs the standard error of a mean
    means = ap.mean(axis=1)
    se = ap.std(axis=1, ddof=1).mean() / math.sqrt(ap.shape[1])
    assert means.std(ddof=1) < 2 * se
    alt_rate, _ = reject_rate("trec_like")
    assert alt_rate > 0.5


def test_overrides_and_validation():
    w = small(pool_depth=5)
    assert w.params.pool_depth == 5
    with pytest.raises(ValueError, match="unknown world parameter"):
        small(bogus=1)
    with pytest.raises(ValueError, match="preset must be one of"):
        make_world("nope", n_topics=2, n_systems=2, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng must be None, an int seed"):
        make_world("trec_like", n_topics=2, n_systems=2, rng=7.5)
    # the one rng policy: an int is a seed, None is fresh entropy (never seed 0)
    seeded = make_world("trec_like", n_topics=2, n_systems=2, rng=7)
    assert (
        seeded.qrels
        == make_world("trec_like", n_topics=2, n_systems=2, rng=np.random.default_rng(7)).qrels
    )
    zero = make_world("trec_like", n_topics=2, n_systems=2, rng=0).truth
    assert make_world("trec_like", n_topics=2, n_systems=2).truth != zero
    with pytest.raises(ValueError, match="n_topics"):
        make_world("trec_like", n_topics=0, n_systems=2, rng=np.random.default_rng(0))
    for bad, name in (
        (dict(depth=5000), "depth"),
        (dict(doc_share=0.6, team_share=0.5), "team_share"),
        (dict(system_sd=-1.0), "system_sd"),
        (dict(grade_probs=()), "grade_probs"),
        (dict(tie_fraction=2.0), "tie_fraction"),
        (dict(grade_quality=(0, 1)), "grade_quality"),
    ):
        with pytest.raises(ValueError, match=name):
            dataclasses.replace(PRESETS["trec_like"], **bad)


def test_params_json_round_trip():
    p = PRESETS["dl_like"]
    assert WorldParams.from_dict(p.to_dict()) == p
    q = dataclasses.replace(p, grade_concentration=math.inf)
    assert WorldParams.from_dict(q.to_dict()) == q
