"""Calibration: statistics of real collections, recovery on simulated data, realism of dl_like.

Tolerances (stated here and in reports/simulator-realism/README.md):
- ``collection_stats`` on DL 2019 reproduces values computed independently with pandas.
- ``calibrate`` on a simulated world: stage-1 quantities are recovered exactly (depth, shallow
  and tied runs) or within 0.05 (grade proportions); after 8 simulated-moment iterations the
  fitted model's mean nDCG is within 0.03 of the target and its system sd within 35%.
- ``dl_like`` at DL 2020's size vs the nearer of real DL 2019 and DL 2020 (the preset averages
  the two fits): mean nDCG within 0.08, system sd of nDCG within a factor 1.6, median R (grade
  >= 2) within a factor 1.6, judged per topic within a factor 1.3, share of grade-0 judgments
  within 0.12, half-split Kendall tau within 0.15, median system-pair correlation within 0.1,
  judged@10 >= 0.85.
"""

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval import Qrels
from simulators import calibrate, collection_stats, make_world
from simulators.calibrate import calibration_targets, simulated_targets, teams_from_names
from simulators.worlds import PRESETS

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
needs_data = pytest.mark.skipif(
    not (DATA / "trec-dl-2019").is_dir(),
    reason=f"TREC DL data not found at {DATA} (a fresh checkout without ../shared/data)",
)


def load(year):
    folder = DATA / f"trec-dl-{year}"
    return (
        metaeval.read_qrels(folder / "qrels.txt"),
        metaeval.read_runs(sorted(folder.glob("runs/*.gz"))),
    )


@pytest.fixture(scope="module")
def dl2019():
    return load("2019")


@needs_data
def test_collection_stats_dl2019_known_values(dl2019):
    qrels, runs = dl2019
    st = collection_stats(qrels, runs, rel=2)
    df = qrels.to_df()
    # Independent pandas computations of the same quantities.
    r2 = df[df.grade >= 2].groupby("topic").size().reindex(qrels.topics, fill_value=0)
    assert np.array_equal(st.rel_per_topic, r2.to_numpy())
    assert st.judged_per_topic.mean() == pytest.approx(9260 / 43)
    np.testing.assert_allclose(st.grade_props, df.grade.value_counts(normalize=True).sort_index())
    assert st.grade_props.round(3).tolist() == [0.557, 0.173, 0.195, 0.075]
    assert st.n_systems == 37 and st.n_topics == 43
    assert st.mean_ndcg.mean() == pytest.approx(0.612, abs=5e-4)
    assert st.map.mean() == pytest.approx(0.372, abs=5e-4)
    # judged fraction of the retrieved documents at ranks <= k (shallow lists count only the
    # ranks they have); computed with a pandas merge of the runs' top k with the qrels.
    assert st.judged_at[10] == pytest.approx(0.999937, abs=1e-6)
    assert st.judged_at[100] == pytest.approx(0.531284, abs=1e-6)
    assert st.distinct_at[1000] == 4368 and st.distinct_at[10] == 57
    assert st.half_tau.min() >= -1 and st.half_tau.max() <= 1 and len(st.half_tau) == 200
    assert len(st.pair_corr) == 37 * 36 // 2
    # Official NIST value for one run (official-summaries.json, passages-eval, map at rel 2).
    i = runs.names.index("ICT-BERT2")
    assert st.map[i] == pytest.approx(0.2421, abs=5e-5)


@needs_data
def test_dl_like_preset_is_realistic(dl2019):
    # dl_like averages the fits to both years, so each statistic is compared with the nearer of
    # the two real values.
    real = [
        collection_stats(*dl2019, rel=2).summary(),
        collection_stats(*load("2020"), rel=2).summary(),
    ]
    w = make_world("dl_like", n_topics=54, n_systems=59, rng=np.random.default_rng(0))
    sim = collection_stats(w, rel=2).summary()

    def near(key, *, abs=None, factor=None):
        if abs is not None:
            gap = min(math.fabs(sim[key] - r[key]) for r in real)
            assert gap <= abs, (key, sim[key], [r[key] for r in real])
        else:
            gap = min(max(sim[key] / r[key], r[key] / sim[key]) for r in real)
            assert gap <= factor, (key, sim[key], [r[key] for r in real])

    near("nDCG mean", abs=0.08)
    near("nDCG sd over systems", factor=1.6)
    near("R median (grade >= 2)", factor=1.6)
    near("judged per topic", factor=1.3)
    near("grade 0 share", abs=0.12)
    near("half-split tau (nDCG)", abs=0.15)
    near("system pair corr (nDCG)", abs=0.1)
    assert sim["judged@10"] >= 0.85 and all(r["judged@10"] >= 0.85 for r in real)


@pytest.fixture(scope="module")
def small_world():
    return make_world(
        "trec_like",
        n_topics=30,
        n_systems=15,
        rng=np.random.default_rng(2),
        n_candidates=600,
        depth=200,
        pool_depth=20,
        shallow_fraction=0.2,
        shallow_depth=30,
        tie_fraction=0.4,
        tie_resolution=0.3,
        grade_probs=(0.5, 0.3, 0.2),
        effect_mean=2.5,
        system_sd=0.6,
        # relevant documents of unequal strength, partly each system's own: the calibration
        # starts from unequal documents and its second stage fits only how much of their
        # strength the systems share (stage 3 fits the spread)
        doc_strength_sd=1.0,
        doc_strength_share=0.6,
    )


def test_calibrate_stage_one_recovers_observables(small_world):
    w = small_world
    p = calibrate(w.qrels, w.runs, groups=w.groups, iterations=0)
    assert p.depth == 200
    assert p.shallow_fraction == pytest.approx(3 / 15) and p.shallow_depth == 30
    assert p.tie_fraction == pytest.approx(6 / 15)
    assert p.team_size == pytest.approx(15 / len(set(w.groups.values())))
    # Grade proportions and R are read off the *pooled* judgments: the model's truth (0.5, 0.3,
    # 0.2) is not recovered, because higher grades reach the pool more often (pool bias); the
    # simulated-moment stage corrects both.
    rel = w.qrels.to_df().query("grade >= 1")
    counts = rel.grade.value_counts(normalize=True).sort_index()
    np.testing.assert_allclose(p.grade_probs, counts.to_numpy(), atol=1e-12)
    R = rel.groupby("topic").size()
    assert p.rel_median == pytest.approx(np.exp(np.log(R).mean()))
    assert p.rel_sigma == pytest.approx(np.log(R).std(ddof=1))
    assert 0.5 <= p.grade_concentration <= 1000


def test_calibrate_simulated_moments_converge(small_world):
    w = small_world
    target = calibration_targets(w.qrels, w.runs)

    def fitted(p):  # the mean over four worlds other than the fit's own
        stats = [simulated_targets(p, 15, 30, rng=100 + k) for k in range(4)]
        return {k: np.mean([s[k] for s in stats]) for k in ("mean", "system_sd", "judged")}

    far = dataclasses.replace(PRESETS["trec_like"], effect_mean=0.6)
    start = fitted(calibrate(w.qrels, w.runs, iterations=0, start=far, rng=0))
    got = fitted(calibrate(w.qrels, w.runs, iterations=8, start=far, rng=0))
    assert abs(start["mean"] - target["mean"]) > 0.03  # the start is off ...
    assert got["mean"] == pytest.approx(target["mean"], abs=0.03)  # ... the fit is not
    assert got["system_sd"] == pytest.approx(target["system_sd"], rel=0.35)
    assert got["judged"] == pytest.approx(target["judged"], rel=0.2)


def test_top_grade_shares_are_those_of_precision_at_10_by_grade(small_world):
    from metaeval.engine import EvalTensor
    from metaeval.evaluation import score_matrices
    from simulators.calibrate import _top_grade_shares

    w = small_world
    tensor = EvalTensor.build(w.runs, w.qrels)
    P = score_matrices(tensor, [f"P(rel={g})@10" for g in (1, 2, 3)])
    at_least = [P[f"P(rel={g})@10"].sum() for g in (1, 2, 3)] + [0.0]
    expected = [(at_least[g - 1] - at_least[g]) / at_least[0] for g in (1, 2, 3)]
    np.testing.assert_allclose(_top_grade_shares(tensor), expected, rtol=1e-12)


def test_stage_two_fits_the_preference_for_higher_grades_and_their_proportions(small_world):
    w = small_world
    target = calibration_targets(w.qrels, w.runs)
    p = calibrate(w.qrels, w.runs, iterations=8, rng=0)
    got = simulated_targets(p, 15, 30, rng=0)
    for g in (1, 2):
        assert got[f"top{g}"] == pytest.approx(target[f"top{g}"], abs=0.05)
    for g in (1, 2, 3):
        assert got[f"share{g}"] == pytest.approx(target[f"share{g}"], rel=0.25)
    # the world's own q(g) (trec_like: 1/3, 2/3) is what the preference in the top 10 recovers
    np.testing.assert_allclose(p.quality()[1:3], [1 / 3, 2 / 3], atol=0.15)


def test_a_plain_pool_keeps_the_depth_read_off_the_judgments(small_world):
    """A plain pool's depth is a fact of the judgments, not a free parameter: stage 1 reads
    it off, rank by rank (the share of the top k stays above 99% some way below the pool, as
    the other runs' pooled documents are judged: it read 114 for a pool of depth 100), and
    stage 2 keeps it, moving the runs' shared noise to match the judged documents per topic
    instead (a depth moved to make up for runs that overlap too little hid that misfit)."""
    w = small_world
    read = calibrate(w.qrels, w.runs, iterations=0, rng=0)
    fitted = calibrate(w.qrels, w.runs, iterations=8, rng=0)
    assert read.pool_extra == fitted.pool_extra == 0
    assert read.pool_depth == w.params.pool_depth == 20 and fitted.pool_depth == 20
    assert fitted.doc_share != read.doc_share


def test_the_pool_depth_is_read_rank_by_rank():
    """With many runs, most documents just below a depth-k pool are judged too (other runs
    pooled them): the share of the top k stayed above 99% down to rank 22 of this world
    pooled to depth 20. Rank by rank, the best-judged quarter of the runs falls below 99% at
    rank 21."""
    from metaeval.engine import EvalTensor
    from simulators.calibrate import _pool_start

    w = make_world(
        "trec_like",
        n_topics=20,
        n_systems=60,
        rng=np.random.default_rng(3),
        n_candidates=500,
        depth=100,
        pool_depth=20,
    )
    assert _pool_start(EvalTensor.build(w.runs, w.qrels), 100) == {
        "pool_depth": 20,
        "pool_extra": 0,
    }


def test_calibrate_validation(small_world):
    w = small_world
    with pytest.raises(ValueError, match="iterations"):
        calibrate(w.qrels, w.runs, iterations=-1)
    with pytest.raises(ValueError, match="damping"):
        calibrate(w.qrels, w.runs, damping=0)
    with pytest.raises(TypeError, match="qrels"):
        calibrate("qrels.txt", w.runs)
    flat = Qrels.from_df(
        pd.DataFrame({"topic": ["q001"] * 3, "doc": ["a", "b", "c"], "grade": [0, 0, 0]})
    )
    run = metaeval.RunSet([metaeval.Run("r", ["q001"] * 2, ["a", "b"], [2.0, 1.0])])
    with pytest.raises(ValueError, match="no relevant grade"):
        calibrate(flat, run)
    with pytest.raises(ValueError, match="rel"):
        collection_stats(w, rel=0)
    # the spreads of systems and of topics need two of each (one-line errors, not NaN)
    with pytest.raises(ValueError, match=r"at least 2 runs .* got 1 run and \d+ topics:"):
        calibrate(w.qrels, w.runs.subset(w.runs.names[:1]))
    one_topic = w.qrels.topics[:1]
    with pytest.raises(ValueError, match=r"2 judged topics, got \d+ runs and 1 topic:"):
        calibrate(w.qrels.subset(one_topic), metaeval.RunSet([r.subset(one_topic) for r in w.runs]))
    elsewhere = metaeval.RunSet(
        [metaeval.Run(f"r{i}", ["other"] * 2, ["a", "b"], [2.0, 1.0]) for i in range(2)]
    )
    with pytest.raises(ValueError, match="no run retrieves a document for a judged topic"):
        calibrate(w.qrels, elsewhere)
    # teams given for some runs only: named before the fit, not a KeyError inside it
    some = {name: "t" for name in w.runs.names[1:]}
    with pytest.raises(ValueError, match=f"groups has no team for run\\(s\\) {w.runs.names[0]}"):
        calibrate(w.qrels, w.runs, groups=some)


def test_teams_from_names():
    got = teams_from_names(
        ["TUW19-p1-f", "TUW19-p2-re", "runid2", "runid5", "p_bert", "ICT-BERT2", "1"]
    )
    assert got == {
        "TUW19-p1-f": "tuw",
        "TUW19-p2-re": "tuw",
        "runid2": "runid",
        "runid5": "runid",
        "p_bert": "p",
        "ICT-BERT2": "ict",
        "1": "1",
    }


def test_world_stats_fast_path_equals_file_path(small_world):
    # collection_stats(world) reads the world's arrays; it must equal the real-data path.
    w = small_world
    fast = collection_stats(w, rel=2, rng=0)
    slow = collection_stats(w.qrels, w.runs, rel=2, rng=0)
    # exactly equal; NaN where no pair of runs holds the same documents
    assert fast.summary() == pytest.approx(slow.summary(), rel=0, abs=0, nan_ok=True)
    np.testing.assert_array_equal(fast.ndcg, slow.ndcg)


def test_half_split_tau_is_scipys_kendall_tau(small_world):
    # The topic halves are drawn as documented (one permutation per split, from rng) and
    # the systems ranked by mean nDCG on each; tau_b is scipy's, to the last bit.
    from scipy import stats

    st = collection_stats(small_world, rel=2, rng=5, n_splits=40)
    gen = np.random.default_rng(5)
    T, h = st.n_topics, st.n_topics // 2
    expected = []
    for _ in range(40):
        p = gen.permutation(T)
        a, b = st.ndcg[:, p[:h]].mean(axis=1), st.ndcg[:, p[h : 2 * h]].mean(axis=1)
        expected.append(stats.kendalltau(a, b).statistic)
    np.testing.assert_array_equal(st.half_tau, expected)
    # one system: no ranking to compare
    one = make_world("trec_like", n_topics=4, n_systems=1, rng=1, n_candidates=300, depth=50)
    assert np.isnan(collection_stats(one, rng=0).half_tau).all()
