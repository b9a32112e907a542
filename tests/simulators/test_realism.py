"""Calibration judged by the meta-evaluation it predicts (simulators.realism), and the parts of
the world model it needs (pool beyond depth k, first-stage lists, shaped system effects)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import scipy.stats as ss

from metaeval import evaluate
from metaeval.meta.discrimination import discriminative_power
from simulators import StratifiedSampling, WorldParams, calibrate, make_world
from simulators.calibrate import simulated_targets, top_agreement
from simulators.realism import (
    DP_TOLERANCE,
    STAT_TOLERANCE,
    TAU_TOLERANCE,
    check_calibration,
    fit_meta,
    meta_evaluation,
)
from simulators.worlds import _simulate

SMALL = dict(n_candidates=400, depth=100, pool_depth=10, rel_median=20.0, grade_probs=(0.7, 0.3))
MEASURES = {"AP": "AP", "P@10": "P@10", "nDCG'": "nDCG'"}


@pytest.fixture(scope="module")
def collection():
    """A small 'real' collection: a world with first stages, an active-learning pool and a
    long tail of poor systems, seen only through its qrels and runs."""
    return make_world(
        "trec_like",
        n_topics=30,
        n_systems=20,
        rng=11,
        **SMALL,
        first_stages=3,
        pool_extra=20,
        doc_strength_sd=0.8,
        system_quantiles=(-3.0, -0.5, 0.0, 0.5, 1.0),
    )


# ------------------------------------------------------------------------------- the model
def test_defaults_of_the_new_parameters_leave_the_model_unchanged():
    """With the new parameters at their defaults the model draws the world it drew before they
    existed: the digest below was computed with the simulators of the commit before them
    (5460fb4), so every committed study's simulated worlds are unchanged."""
    import hashlib

    a = make_world("trec_like", n_topics=4, n_systems=5, rng=3, **SMALL)
    digest = hashlib.sha256(
        a.ranked.tobytes() + a.qrels.grades.tobytes() + np.asarray(a.qrels.topic_index).tobytes()
    ).hexdigest()
    assert digest == "f3aff51732142ea55f1aa45d6c8121bdbbf4401d6b64bc2a72a8650a880475c0"
    assert len(a.qrels) == 132
    b = make_world(
        "trec_like",
        n_topics=4,
        n_systems=5,
        rng=3,
        **SMALL,
        doc_strength_sd=0.0,
        doc_strength_share=1.0,
        pool_extra=0,
        first_stages=0,
        system_quantiles=None,
    )
    np.testing.assert_array_equal(a.ranked, b.ranked)
    assert a.qrels == b.qrels


def test_system_quantiles_give_every_world_the_shapes_midpoint_quantiles():
    p = WorldParams(**SMALL, system_sd=0.7)
    shaped = dataclasses.replace(p, system_quantiles=(-2.0, 0.0, 0.5))
    normal = _simulate(p, 9, 3, np.random.default_rng(5)).system_effect
    got = _simulate(shaped, 9, 3, np.random.default_rng(5)).system_effect
    # b = system_sd * Q((r - 1/2) / S), r the rank of the normal draw, Q piecewise linear
    # through (0, -2), (0.5, 0), (1, 0.5)
    u = (ss.rankdata(normal) - 0.5) / 9
    expected = 0.7 * np.where(u < 0.5, -2.0 + 4.0 * u, (u - 0.5) * 1.0)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    # the same set of effects in any world: only which system gets which changes
    other = _simulate(shaped, 9, 3, np.random.default_rng(6)).system_effect
    np.testing.assert_allclose(np.sort(other), np.sort(got), rtol=1e-12, atol=1e-12)
    assert not np.allclose(other, got)


def test_topic_quantiles_give_every_world_the_shapes_midpoint_quantiles():
    # no system or interaction effect and a mean far from 0: the effect is mean + d_t
    p = WorldParams(**SMALL, effect_mean=10.0, system_sd=0.0, interaction_sd=0.0, topic_sd=0.4)
    shaped = dataclasses.replace(p, topic_quantiles=(-2.0, 0.0, 0.5))
    normal = _simulate(p, 2, 7, np.random.default_rng(5)).effect[0] - 10.0
    got = _simulate(shaped, 2, 7, np.random.default_rng(5)).effect[0] - 10.0
    u = (ss.rankdata(normal) - 0.5) / 7
    expected = 0.4 * np.where(u < 0.5, -2.0 + 4.0 * u, (u - 0.5) * 1.0)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    other = _simulate(shaped, 2, 7, np.random.default_rng(6)).effect[0] - 10.0
    np.testing.assert_allclose(np.sort(other), np.sort(got), rtol=1e-9, atol=1e-9)
    assert not np.allclose(other, got)


def test_doc_strength_share_one_keeps_the_shared_strength_and_below_one_adds_each_systems_own():
    p = WorldParams(**SMALL, doc_strength_sd=0.9, doc_share=0.3)
    # rho = 1 draws exactly what the shared strength alone drew (no extra draws)
    a = _simulate(p, 6, 3, np.random.default_rng(1))
    b = _simulate(dataclasses.replace(p, doc_strength_share=1.0), 6, 3, np.random.default_rng(1))
    np.testing.assert_array_equal(a.ranked, b.ranked)
    # the less of the strength is shared, the less the systems agree on which relevant
    # documents they rank high
    agreement = [
        top_agreement(
            make_world(
                dataclasses.replace(p, doc_strength_share=rho), n_topics=8, n_systems=12, rng=4
            ).pool_tensor()
        )
        for rho in (1.0, 0.5, 0.05)
    ]
    assert agreement[0] > agreement[1] > agreement[2], agreement


def test_top_agreement_against_a_two_way_decomposition_by_loops(collection):
    """The document share of the variance of the reciprocal ranks of relevant documents,
    computed system by system and document by document from the ranked lists."""
    w = collection
    tensor = w.pool_tensor()
    codes, index = tensor.codes, tensor.doc_index
    doc_var = inter_var = 0.0
    for t in range(tensor.n_topics):
        rows = [r for r in np.flatnonzero(tensor.judgment_topic == t) if tensor.judgments[r] >= 1]
        if len(rows) < 3:
            continue
        x = np.zeros((tensor.n_runs, len(rows)))
        for s in range(tensor.n_runs):
            for j, row in enumerate(rows):
                at = np.flatnonzero((index[s, t] == row) & (codes[s, t] >= 1))
                if len(at):
                    x[s, j] = 1.0 / (at[0] + 1)
        grand = x.mean()
        doc = x.mean(axis=0) - grand
        system = x.mean(axis=1) - grand
        resid = x - grand - doc[None, :] - system[:, None]
        doc_var += tensor.n_runs * (doc**2).sum()
        inter_var += (resid**2).sum()
    assert top_agreement(tensor) == pytest.approx(doc_var / (doc_var + inter_var), rel=1e-12)


def test_first_stages_restrict_every_run_to_one_shared_list():
    p = WorldParams(**SMALL, first_stages=1, doc_share=0.3)
    w = make_world(p, n_topics=3, n_systems=6, rng=2)
    for t in range(3):
        sets = {frozenset(w.ranked[s, t][w.ranked[s, t] >= 0]) for s in range(6)}
        assert len(sets) == 1  # one first stage: every run re-ranks the same 100 candidates
    free = make_world(dataclasses.replace(p, first_stages=0), n_topics=3, n_systems=6, rng=2)
    assert len({frozenset(free.ranked[s, 0]) for s in range(6)}) > 1


def test_pool_extra_judges_that_many_retrieved_unpooled_documents(collection):
    w = collection
    depth_pool = w.pool_mask(w.params.pool_depth)
    extra = w.official & ~depth_pool
    C = w.params.n_candidates
    per_topic = extra.reshape(-1, C).sum(axis=1)
    retrieved = np.zeros(len(w.truth), dtype=bool)
    r = w.ranked
    retrieved[(r + (np.arange(w.n_topics) * C)[None, :, None])[r >= 0]] = True
    available = (retrieved & ~depth_pool).reshape(-1, C).sum(axis=1)
    np.testing.assert_array_equal(per_topic, np.minimum(20, available))
    assert not (extra & ~retrieved).any()
    # the learner is as good as the best systems: its picks are richer in relevant documents
    # than the retrieved, unpooled candidates it chose from
    g = w.truth.grades
    assert (g[extra] > 0).mean() > (g[retrieved & ~depth_pool] > 0).mean()
    assert len(w.qrels) == int(w.official.sum())


# ------------------------------------------------------------------------------- meta-evaluation
def test_meta_evaluation_against_independent_computations(collection):
    w = collection
    got = meta_evaluation(w.qrels, w.runs, measures=MEASURES, trials=2, B=200, rng=4)
    boot_seed, sample_seed = np.random.default_rng(4).integers(0, 2**32, size=2)
    full = evaluate(w.runs, w.qrels, list(MEASURES.values()), per_topic=True)
    for label, name in MEASURES.items():
        m = full[full.measure == name].pivot(index="run", columns="topic", values="value")
        m = m.loc[w.runs.names]
        power = discriminative_power(m.to_numpy(), B=200, rng=int(boot_seed)).power
        assert got.loc[label, "power"] == pytest.approx(power)
    # tau: the reduced judgments written as qrels and evaluated from scratch, scipy's tau-b
    sets = StratifiedSampling(rates=(10,)).generate(w.qrels, trials=2, rng=int(sample_seed))
    for label, name in MEASURES.items():
        base = full[full.measure == name].groupby("run").value.mean().loc[w.runs.names].round(12)
        taus = []
        for j in sets:
            red = evaluate(w.runs, j.to_qrels(), [name], missing="zero")
            red = red.groupby("run").value.mean().loc[w.runs.names].round(12)
            taus.append(ss.kendalltau(base, red).statistic)
        assert got.loc[label, "tau"] == pytest.approx(np.mean(taus), abs=1e-12)


def test_check_calibration_flags_follow_the_tolerances(collection):
    w = collection
    res = check_calibration(
        w.qrels, w.runs, w.params, replicates=2, measures=MEASURES, trials=2, B=200, rng=1
    )
    m = res.measures
    np.testing.assert_array_equal(
        m["power_ok"], (m["sim_power"] - m["power"]).abs() <= DP_TOLERANCE
    )
    np.testing.assert_array_equal(m["tau_ok"], (m["sim_tau"] - m["tau"]).abs() <= TAU_TOLERANCE)
    assert res.spearman == pytest.approx(ss.spearmanr(m["tau"], m["sim_tau"]).statistic)
    st = res.statistics
    inside = (st["sim_low"] <= st["real"]) & (st["real"] <= st["sim_high"])
    close = (st["sim"] - st["real"]).abs() <= STAT_TOLERANCE * st["real"].abs()
    np.testing.assert_array_equal(st["ok"], inside | close)
    assert set(res.passed) == {
        "power within 0.05",
        "tau within 0.05",
        "order of measures by tau (Spearman >= 0.8)",
        "collection statistics",
    }
    assert "of 4 requirements met" in repr(res)


def test_check_calibration_is_reproducible(collection):
    w = collection
    kw = dict(replicates=1, measures={"AP": "AP"}, trials=1, B=100)
    a = check_calibration(w.qrels, w.runs, w.params, rng=7, **kw)
    b = check_calibration(w.qrels, w.runs, w.params, rng=7, **kw)
    assert a.measures.equals(b.measures) and a.statistics.equals(b.statistics)


def test_the_worlds_on_two_workers_give_the_same_results(collection):
    """Each world has its own seeds: the check and the second and third stages give the same
    numbers whether their worlds are made in this process or on worker processes."""
    w = collection
    kw = dict(replicates=3, measures={"AP": "AP"}, trials=1, B=100, rng=7)
    one = check_calibration(w.qrels, w.runs, w.params, jobs=1, **kw)
    two = check_calibration(w.qrels, w.runs, w.params, jobs=2, **kw)
    assert one.measures.equals(two.measures) and one.statistics.equals(two.statistics)
    start = dataclasses.replace(w.params, system_sd=0.3)
    kw = dict(evaluations=3, measures={"AP": "AP"}, trials=1, B=100, reference_trials=2, rng=3)
    assert fit_meta(w.qrels, w.runs, start, jobs=1, **kw) == fit_meta(
        w.qrels, w.runs, start, jobs=2, **kw
    )
    assert calibrate(w.qrels, w.runs, iterations=2, rng=5, jobs=1) == calibrate(
        w.qrels, w.runs, iterations=2, rng=5, jobs=2
    )
    with pytest.raises(ValueError, match="jobs"):
        check_calibration(w.qrels, w.runs, w.params, jobs=0)


# ------------------------------------------------------------------------------- fitting
def _loss(qrels, runs, params, seeds):
    real = meta_evaluation(qrels, runs, measures=MEASURES, trials=3, B=300, rng=0).to_numpy()
    sims = []
    for s in seeds:
        world = make_world(params, n_topics=len(qrels.topics), n_systems=len(runs), rng=s)
        sims.append(
            meta_evaluation(world.qrels, world.runs, measures=MEASURES, trials=3, B=300, rng=s)
        )
    return float((((np.mean(sims, axis=0) - real) / 0.05) ** 2).sum())


def test_fit_meta_brings_the_meta_evaluation_closer(collection):
    w = collection
    wrong = dataclasses.replace(w.params, system_sd=0.08, interaction_sd=1.5)
    fitted = fit_meta(
        w.qrels,
        w.runs,
        wrong,
        evaluations=30,
        replicates=3,
        measures=MEASURES,
        trials=3,
        B=300,
        reference_trials=10,
        rng=3,
    )
    seeds = [101, 102, 103]  # worlds the fit never saw
    assert _loss(w.qrels, w.runs, fitted, seeds) < 0.25 * _loss(w.qrels, w.runs, wrong, seeds)


def test_calibration_converges_from_three_starts(collection):
    """Three different starting worlds: the fitted worlds agree with each other within the
    spread of one world's own replicates."""
    w = collection
    starts = [
        WorldParams(),
        dataclasses.replace(WorldParams(), effect_mean=0.5, system_sd=1.5, doc_share=0.1),
        dataclasses.replace(WorldParams(), effect_mean=4.0, topic_sd=0.1, rel_median=5.0),
    ]
    # 20 steps: from the farthest start (effect_mean 0.5), 12 left the mean nDCG 0.04 short
    # once the grades' preference and proportions were fitted too
    fits = [calibrate(w.qrels, w.runs, iterations=20, start=s, rng=0) for s in starts]
    S, T = w.n_systems, w.n_topics
    keys = ["mean", "system_sd", "topic_sd", "residual_sd", "judged", "distinct10", "top_agreement"]
    stats = [[simulated_targets(p, S, T, rng=seed) for seed in range(6)] for p in fits]
    means = np.array([[np.mean([s[k] for s in one]) for k in keys] for one in stats])
    noise = np.array([[np.std([s[k] for s in one], ddof=1) for k in keys] for one in stats])
    spread = means.max(axis=0) - means.min(axis=0)
    assert (spread <= 3 * noise.max(axis=0) + 1e-9).all(), dict(zip(keys, spread))


def test_calibrate_reports_its_progress_step_by_step(collection):
    w = collection
    lines = []
    calibrate(w.qrels, w.runs, iterations=2, meta_evaluations=2, rng=0, progress=lines.append)
    assert [line.split(":")[0] for line in lines] == [
        "stage 1",
        "moments, step 1 of 2",
        "moments, step 2 of 2",
        "meta-evaluation, evaluation 1 of at most 2",
        "meta-evaluation, evaluation 2 of at most 2",
    ]


def test_calibrate_cli(tmp_path, collection):
    from typer.testing import CliRunner

    from metaeval.cli import app
    from metaeval.data import write_qrels, write_runs

    w = collection
    write_qrels(w.qrels, tmp_path / "qrels.txt")
    paths = write_runs(w.runs, tmp_path / "runs")
    out = tmp_path / "fit"
    args = ["calibrate", str(tmp_path / "qrels.txt"), *map(str, paths), "--iterations", "3"]
    args += ["--meta-evaluations", "0", "--check", "1", "--seed", "5", "--out", str(out)]
    args += ["--top-grades", "1"]  # grades 1 and 2 -> 1
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    params = WorldParams.from_dict(json.loads((out / "params.json").read_text()))
    assert params.system_quantiles is not None and len(params.grade_probs) == 1
    assert (out / "measures.csv").is_file() and (out / "statistics.csv").is_file()
    assert "Spearman" in result.output
    # a study world takes the file as it is
    from metaeval.study import load_spec

    spec_file = tmp_path / "study.toml"
    spec_file.write_text(
        'schema = 1\n[study]\nname = "s"\nseed = 1\n'
        '[[worlds]]\nid = "fitted"\nkind = "simulator"\nn_topics = 5\nn_systems = 4\n'
        'params = "fit/params.json"\n'
        '[measures]\nnames = ["AP"]\n[[criteria]]\nkind = "discriminative_power"\n'
    )
    world = load_spec(spec_file).worlds[0]
    assert WorldParams.from_dict(dict(world.params)) == params
    (out / "params.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="params.*JSON object"):
        load_spec(spec_file)


def test_world_targets_equal_the_file_path_and_the_fast_path(collection):
    """The statistics stage 3 keeps, three ways: from the world's arrays, from its qrels and
    runs as a real collection's, and from the calibration's string-free simulation."""
    from simulators.calibrate import _fast_stats, calibration_targets, world_targets

    deep = make_world(
        "trec_like",
        n_topics=6,
        n_systems=10,
        rng=11,
        n_candidates=700,
        depth=300,
        first_stages=2,
        rerank_depth=100,
        tail_noise_sd=0.5,
    )  # lists deeper than 100: the agreement of their tails is a number
    for w in (collection, deep):
        got = world_targets(w)
        kw = dict(abs=1e-12, nan_ok=True)
        assert got == pytest.approx(calibration_targets(w.qrels, w.runs), **kw)
        assert got == pytest.approx(_fast_stats(w.params, w.n_systems, w.n_topics, 11), **kw)
    assert 0 < got["tail_agreement"] < 1


def test_calibrate_cli_bad_collection(tmp_path, collection):
    from typer.testing import CliRunner

    from metaeval.cli import app
    from metaeval.data import write_qrels, write_runs

    w = collection
    flat = w.qrels.with_grades(np.zeros(len(w.qrels), dtype=np.int8))
    write_qrels(flat, tmp_path / "qrels.txt")
    paths = write_runs(w.runs, tmp_path / "runs")
    args = ["calibrate", str(tmp_path / "qrels.txt"), *map(str, paths), "--seed", "1"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "fit")])
    assert result.exit_code != 0
    assert "no relevant grade" in result.output and "Traceback" not in result.output


def test_calibrate_reads_first_stages_and_the_shapes_of_systems_and_topics_off_the_runs(collection):
    """Stage 1: runs re-ranking shared lists are recognised (and runs that do not are not),
    and the system effects and topic difficulties take the shapes of the systems' and topics'
    mean nDCG."""
    from simulators.calibrate import _shared_list_share

    w = collection
    share = _shared_list_share(w.runs, w.qrels.topics, 100)
    # brute force: per topic, the share of run pairs whose top 100 share 90% of the longer list
    heads = [run.to_df().groupby("topic").doc.apply(lambda d: set(d[:100])) for run in w.runs]
    per_topic = []
    for t in w.qrels.topics:
        tops = [head.get(t, set()) for head in heads]
        pairs = [
            len(a & b) >= 0.9 * max(len(a), len(b))
            for i, a in enumerate(tops)
            for b in tops[i + 1 :]
        ]
        per_topic.append(np.mean(pairs))
    assert share == pytest.approx(np.median(per_topic), abs=1e-12)
    assert share > 0.2
    assert 2 <= calibrate(w.qrels, w.runs, iterations=0).first_stages <= 6
    free = make_world("trec_like", n_topics=30, n_systems=20, rng=11, **SMALL)
    assert _shared_list_share(free.runs, free.qrels.topics, 100) == 0
    p = calibrate(free.qrels, free.runs, iterations=0)
    assert p.first_stages == 0
    # run names sys001, sys002... guess to one team, which says nothing: the start's team size
    assert p.team_size == WorldParams().team_size
    teams = calibrate(free.qrels, free.runs, groups=free.groups, iterations=0).team_size
    assert teams == pytest.approx(20 / len(set(free.groups.values())))
    ndcg = evaluate(free.runs, free.qrels, ["nDCG"]).groupby("run").value.mean()
    z = (ndcg - ndcg.mean()) / ndcg.std(ddof=1)
    np.testing.assert_allclose(p.system_quantiles, np.quantile(z, np.linspace(0, 1, 20)))
    topics = evaluate(free.runs, free.qrels, ["nDCG"]).groupby("topic").value.mean()
    z = (topics - topics.mean()) / topics.std(ddof=1)
    np.testing.assert_allclose(p.topic_quantiles, np.quantile(z, np.linspace(0, 1, 21)))


# ------------------------------------------------------------------------------- re-ranking depth
def test_list_agreement_is_the_mean_spearman_over_runs_holding_the_same_documents():
    """Brute force: sets, the 90% rule, the head/tail split and scipy's Spearman."""
    from simulators.calibrate import list_agreement

    rng = np.random.default_rng(4)
    S, T, D, k = 6, 3, 60, 20
    ranked = np.full((S, T, D), -1, dtype=np.int32)
    for t in range(T):
        docs = rng.permutation(200)[:D]
        base = rng.standard_normal(D)
        for s in range(S):
            key = base + (0.5 + s / 4) * rng.standard_normal(D)
            order = docs[np.argsort(-key)]
            if s == 4:  # shorter list of the same documents: 55 / 60 >= 0.9, a pair
                order = order[:55]
            if s == 5:  # a quarter of its documents are others: never a pair
                order = np.concatenate([order[:45], 500 + np.arange(15)])
            ranked[s, t, : len(order)] = order
    expected = {"head": [], "tail": []}
    for t in range(T):
        lists = [list(ranked[s, t][ranked[s, t] >= 0]) for s in range(S)]
        for a in range(S):
            for b in range(a + 1, S):
                A, B = lists[a], lists[b]
                if len(set(A) & set(B)) / max(len(A), len(B)) < 0.9:
                    continue
                for part, keep in (
                    ("head", lambda i, j: i < k and j < k),
                    ("tail", lambda i, j: i >= k and j >= k),
                ):
                    common = [d for d in A if d in B and keep(A.index(d), B.index(d))]
                    if len(common) >= 10:
                        rho = ss.spearmanr(
                            [A.index(d) for d in common], [B.index(d) for d in common]
                        )
                        expected[part].append(rho.statistic)
    got = list_agreement(ranked, k)
    assert len(expected["tail"]) == 3 * 10  # the pairs among runs 0-4, in every topic
    assert 20 <= len(expected["head"]) < 30  # some pairs share fewer than 10 head documents
    for part in ("head", "tail"):
        assert got[part] == pytest.approx(np.mean(expected[part]), abs=1e-12)
    # at most max_pairs pairs a topic, evenly spaced in (a, b) order: the first and the last
    few = list_agreement(ranked[:, :1], k, max_pairs=2)
    assert few["tail"] == pytest.approx(np.mean([expected["tail"][0], expected["tail"][9]]))
    assert np.isnan(list_agreement(ranked[5:, :, :], k)["head"])  # no pair at all


def test_rerank_depth_keeps_the_first_stage_order_below_the_head():
    p = WorldParams(**SMALL, first_stages=1, doc_share=0.3, rerank_depth=20)
    w = make_world(p, n_topics=3, n_systems=6, rng=2)
    for t in range(3):
        lists = [list(w.ranked[s, t]) for s in range(6)]
        assert len({frozenset(x) for x in lists}) == 1  # one first stage: the same documents
        tails = [x[20:] for x in lists]
        for a, b in ((0, 1), (2, 5)):
            common = [d for d in tails[a] if d in tails[b]]
            assert [d for d in tails[b] if d in tails[a]] == common  # the first stage's order
    # the systems' own noise moves the tails apart, not the heads (the same draws up to then)
    noisy = make_world(dataclasses.replace(p, tail_noise_sd=1.0), n_topics=3, n_systems=6, rng=2)
    np.testing.assert_array_equal(noisy.ranked[:, :, :20], w.ranked[:, :, :20])
    assert not np.array_equal(noisy.ranked[:, :, 20:], w.ranked[:, :, 20:])
    # the runs' scores stay in trec_eval order (descending), head above tail
    scores = np.concatenate([run.scores for run in w.runs])
    offsets = np.cumsum([0] + [len(run.scores) for run in w.runs])
    assert all(
        (np.diff(scores[a:b].reshape(3, -1), axis=1) <= 0).all()
        for a, b in zip(offsets[:-1], offsets[1:])
    )


def test_rerank_depth_of_the_whole_list_is_the_model_without_it():
    p = WorldParams(**SMALL, first_stages=2, tie_fraction=0.5)
    plain = make_world(p, n_topics=3, n_systems=6, rng=8)
    for extra in (dict(rerank_depth=SMALL["depth"]), dict(tail_noise_sd=0.7)):
        other = make_world(dataclasses.replace(p, **extra), n_topics=3, n_systems=6, rng=8)
        np.testing.assert_array_equal(other.ranked, plain.ranked)
    from metaeval._validation import ParamError

    with pytest.raises(ParamError, match="rerank_depth.*first_stages"):
        WorldParams(rerank_depth=100)


def test_calibrate_fits_how_far_runs_depart_from_their_first_stage():
    """Stage 1 sets the head's depth when the runs re-rank shared lists deeper than it; stage 2
    moves tail_noise_sd until the runs' tails agree as the collection's do."""
    truth = dict(n_candidates=700, depth=300, pool_depth=10, rel_median=20.0, grade_probs=(1.0,))
    w = make_world(
        "trec_like",
        n_topics=20,
        n_systems=12,
        rng=3,
        **truth,
        first_stages=2,
        rerank_depth=100,
        tail_noise_sd=1.0,
    )
    fit = calibrate(w.qrels, w.runs, iterations=12, rng=0)
    assert fit.rerank_depth == 100
    assert fit.tail_noise_sd == pytest.approx(1.0, rel=0.25)  # from a start of 0.5
