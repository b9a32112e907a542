"""Score-level worlds in studies, and the error-rate options of the 2019 paper's protocol.

Oracles: the bootstrap test of the mean and the sign test with a tie tolerance re-done one pair
at a time (a loop over the resamples; scipy's binomtest), and the null pairs' type I rate of the
t-test within its Monte-Carlo error of alpha.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metaeval.report import build
from metaeval.stats.error_rates import _mean_bootstrap_p, error_rates
from metaeval.study import SpecError, load_spec
from metaeval.study.runner import run_study
from metaeval.study.saved import load_results

# ------------------------------------------------------------------------------ options


def test_mean_bootstrap_p_equals_a_loop_over_the_resamples():
    rng = np.random.default_rng(0)
    Z = rng.normal(0.02, 0.1, size=(7, 15))
    Z[3] = 0.0  # identical systems: every resample reaches |zbar| = 0
    counts = rng.multinomial(15, np.full(15, 1 / 15), size=500)
    got = _mean_bootstrap_p(Z, counts)
    for z, p in zip(Z, got):
        w = z - z.mean()
        means = np.array([(c * w).sum() / 15 for c in counts])
        assert p == np.mean(np.abs(means) >= abs(z.mean()) - 1e-12)
    assert got[3] == 1.0


def test_error_rates_bootstrap_mean_rejects_as_the_loop_does():
    rng = np.random.default_rng(1)
    X = rng.normal(0.4, 0.1, size=(6, 20)) + rng.normal(0, 0.1, size=20)
    res = error_rates(X, np.zeros(6), tests=["bootstrap"], bootstrap="mean", B=400, rng=5)
    counts = res.resamples[20]["bootstrap"].counts()
    for k, (a, b) in enumerate(res.pairs):
        z = X[a] - X[b]
        w = z - z.mean()
        p = np.mean(np.abs(counts @ w / 20) >= abs(z.mean()) - 1e-12)
        assert res.rejected[(20, "bootstrap")][k, 0] == (p < 0.05)


def test_sign_tolerance_counts_small_differences_as_ties():
    rng = np.random.default_rng(2)
    X = np.round(rng.uniform(size=(5, 30)), 2)
    res = error_rates(X, np.zeros(5), tests=["sign"], sign_tolerance=0.05, alpha=0.3, rng=1)
    for k, (a, b) in enumerate(res.pairs):
        d = X[a] - X[b]
        pos, neg = int(np.sum(d > 0.05)), int(np.sum(d < -0.05))
        p = stats.binomtest(pos, pos + neg).pvalue if pos + neg else 1.0
        assert res.rejected[(30, "sign")][k, 0] == (p < 0.3)


def test_unknown_bootstrap_is_refused():
    with pytest.raises(ValueError, match="bootstrap must be one of"):
        error_rates(np.random.default_rng(0).random((3, 10)), np.zeros(3), bootstrap="percentile")


# ------------------------------------------------------------------------------ studies


def _matrix(path: Path, seed: int, runs: int = 8, topics: int = 40) -> Path:
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0, 1, topics)
    skill = rng.normal(0, 0.5, runs)
    x = stats.norm.cdf(difficulty[:, None] + skill[None, :] + rng.normal(0, 0.7, (topics, runs)))
    pd.DataFrame(np.round(x, 4), columns=[f"run{i + 1}" for i in range(runs)]).to_csv(
        path, index=False
    )
    return path


def _study(tmp_path: Path, world: str, criteria: str, measures: str = '["AP"]') -> Path:
    _matrix(tmp_path / "c1_ap.csv", 1)
    _matrix(tmp_path / "c2_ap.csv", 2, runs=6)
    (tmp_path / "bad.csv").write_text("r1,r2\n0.1,0.2\n0.3,1.5\n0.2,0.2\n")
    (tmp_path / "headless.csv").write_text("0.1,0.2\n0.3,0.5\n0.2,0.2\n0.4,0.1\n")
    text = f"""schema = 1
[study]
name = "scores"
seed = 3
topic_resamples = 20

[[worlds]]
{world}

[measures]
names = {measures}

{criteria}
"""
    path = tmp_path / "study.toml"
    path.write_text(text)
    return path


PAIRS = """id = "pairs"
kind = "scores"
scores = "c*_ap.csv"
measure = "AP"
design = "pairs"
pairs = 400
n_topics = 50
replicates = 3"""

ERRORS = """[[criteria]]
kind = "error_rates"
tests = ["t", "sign", "randomization"]
sizes = [25, 50]
repeats = 1
B = 200
sign_tolerance = 0.01"""


def test_a_study_of_null_pairs_counts_type_i_errors(tmp_path):
    spec = load_spec(_study(tmp_path, PAIRS, ERRORS))
    run_study(spec, tmp_path / "out", jobs=1)
    res = load_results(tmp_path / "out")
    rates = res[res.statistic == "type1_rate"]
    assert set(rates.other) == {"t", "sign", "randomization"}
    assert set(rates.x) == {25.0, 50.0}
    n_null = res[(res.statistic == "n_null")].value
    assert (n_null == 400).all()
    t = rates[rates.other == "t"].value.mean()
    # 3 x 2 x 400 null decisions: the t-test keeps its level within Monte-Carlo error
    assert abs(t - 0.05) < 4 * np.sqrt(0.05 * 0.95 / 2400) + 0.01
    # the same results on two workers, and on a Dask cluster
    run_study(spec, tmp_path / "out2", jobs=2)
    outs = [tmp_path / "out2"]
    distributed = pytest.importorskip("dask.distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        run_study(spec, tmp_path / "dask", scheduler=client, quiet=True)
    outs.append(tmp_path / "dask")
    key = list(res.columns[:8])
    for out in outs:
        pd.testing.assert_frame_equal(
            res.sort_values(key).reset_index(drop=True),
            load_results(out).sort_values(key).reset_index(drop=True),
        )


def test_a_systems_world_serves_score_criteria(tmp_path):
    world = """id = "sys"
kind = "scores"
scores = "c1_ap.csv"
measure = "AP"
n_topics = 30
replicates = 2
drop_bottom = 0.0"""
    criteria = """[[criteria]]
kind = "discriminative_power"
B = 200

[[criteria]]
kind = "reliability"

[[criteria]]
kind = "swap"

[[criteria]]
kind = "stability"

[[criteria]]
kind = "topic_set_size"
"""
    spec = load_spec(_study(tmp_path, world, criteria))
    run_study(spec, tmp_path / "out", jobs=1)
    res = load_results(tmp_path / "out")
    kinds = {"discriminative_power", "reliability", "swap", "stability", "topic_set_size"}
    assert kinds == set(res.criterion)
    # (the swap method's smallest difference with few swaps is undefined for 8 runs)
    assert res[res.statistic != "min_difference"].value.notna().all()
    title, blocks, _ = build(tmp_path / "out")
    assert blocks and "score-level: AP scores of c1_ap.csv" in str(blocks[0:3])
    assert set(res.replicate) == {0, 1}


def _p10(path: Path, ap: Path, seed: int) -> Path:
    """A P@10-like matrix of the runs and topics of ``ap``: AP's scores moved by noise of their
    own and rounded to tenths."""
    frame = pd.read_csv(ap)
    rng = np.random.default_rng(seed)
    noisy = np.clip(frame.to_numpy() + rng.normal(0, 0.15, frame.shape), 0, 1)
    pd.DataFrame(np.round(noisy * 10) / 10, columns=frame.columns).to_csv(path, index=False)
    return path


TWO_MEASURES = """id = "sys"
kind = "scores"
scores = ["c1_ap.csv", "c1_p10.csv"]
measure = ["AP", "P@10"]
support = { "P@10" = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1] }
n_topics = 30
replicates = 2
drop_bottom = 0.0"""


BOTH = '["AP", "P@10"]'


def test_a_world_of_two_measures_serves_the_agreement_between_them(tmp_path):
    criteria = """[[criteria]]
kind = "agreement"
statistics = ["tau_b"]

[[criteria]]
kind = "error_rates"
tests = ["t"]
sizes = [15, 30]
repeats = 1"""
    path = _study(tmp_path, TWO_MEASURES, criteria, BOTH)
    _p10(tmp_path / "c1_p10.csv", tmp_path / "c1_ap.csv", seed=4)
    spec = load_spec(path)
    run_study(spec, tmp_path / "out", jobs=1)
    res = load_results(tmp_path / "out")
    from metaeval.study.worlds import load_world

    for rep in (0, 1):
        world = load_world(spec, "sys", rep)
        ap, p10 = (world.tensor.scores_of(m) for m in ("AP", "P@10"))
        assert ap.shape == p10.shape == (8, 30)
        assert np.isin(np.round(p10, 9), np.round(np.linspace(0, 1, 11), 9)).all()
        want = stats.kendalltau(ap.mean(axis=1), p10.mean(axis=1)).statistic
        got = res[(res.criterion == "agreement") & (res.replicate == rep) & (res.measure == "AP")]
        assert got.value.item() == pytest.approx(want, abs=1e-12)
        # each measure's truth is its own margins' means
        assert not np.allclose(world.effect_of("AP"), world.effect_of("P@10"))
    errors = res[(res.criterion == "error_rates") & (res.statistic == "power")]
    assert set(errors.measure) == {"AP", "P@10"}
    title, blocks, _ = build(tmp_path / "out")
    assert "score-level: AP, P@10 scores of c1_ap.csv, c1_p10.csv" in str(blocks[0:3])


@pytest.mark.parametrize(
    "world, measures, message",
    [
        (TWO_MEASURES, '["AP"]', "holds P@10 scores: list P@10"),
        (
            TWO_MEASURES.replace('"c1_ap.csv", "c1_p10.csv"', '"c1_ap.csv"'),
            BOTH,
            "give one file per measure (2), in the order of measure, not 1",
        ),
        (
            TWO_MEASURES.replace('"c1_p10.csv"', '"c2_ap.csv"'),
            BOTH,
            "the scores of P@10 must name the runs of AP's, in the same order "
            "(c1_ap.csv, c2_ap.csv)",
        ),
        (TWO_MEASURES + '\ndesign = "pairs"', BOTH, "a pairs world simulates one"),
        (
            TWO_MEASURES.replace('"P@10" = [', '"P@20" = ['),
            BOTH,
            "support.P@20: is not a measure of this world (AP, P@10)",
        ),
        (
            TWO_MEASURES + '\nmargins = { AP = ["bbinom"] }',
            BOTH,
            "AP has no support: its families are",
        ),
        (
            TWO_MEASURES.replace('"AP", "P@10"]', '"AP", "AP"]'),
            BOTH,
            "measure[1]: AP is listed twice",
        ),
        (
            TWO_MEASURES.replace('"AP", "P@10"]', '"AP", "XYZ"]'),
            BOTH,
            "measure[1]:",
        ),
    ],
    ids=["unlisted", "files", "runs", "pairs", "support", "families", "twice", "unknown"],
)
def test_bad_worlds_of_several_measures_are_refused_in_one_line(tmp_path, world, measures, message):
    path = _study(tmp_path, world, '[[criteria]]\nkind = "agreement"', measures)
    _p10(tmp_path / "c1_p10.csv", tmp_path / "c1_ap.csv", seed=4)
    with pytest.raises(SpecError, match=re.escape(message)) as err:
        load_spec(path)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "world, criteria, measures, message",
    [
        (PAIRS, ERRORS, '["nDCG@10"]', "holds AP scores: list AP"),
        (
            PAIRS,
            '[[criteria]]\nkind = "discriminative_power"',
            '["AP"]',
            "cannot run on a world of pairs",
        ),
        (
            PAIRS.replace('design = "pairs"', 'design = "systems"').replace("c*_ap", "c1_ap"),
            '[[criteria]]\nkind = "informativeness"',
            '["AP"]',
            "cannot run on a scores world",
        ),
        (
            PAIRS.replace('design = "pairs"', 'design = "pear"'),
            ERRORS,
            '["AP"]',
            "design: must be one of",
        ),
        (PAIRS + '\nmargins = ["gamma"]', ERRORS, '["AP"]', "margins[0]: must be one of"),
        (PAIRS + '\ncopula_families = ["tawn3"]', ERRORS, '["AP"]', "copula_families[0]"),
        (PAIRS.replace("c*_ap.csv", "none*.csv"), ERRORS, '["AP"]', "matches no file"),
        (PAIRS + "\ndrop_bottom = 1.5", ERRORS, '["AP"]', "drop_bottom: must be a share"),
        (PAIRS + "\nrel = 2", ERRORS, '["AP"]', "a scores world has no judgments"),
        (PAIRS + "\ndelta = nan", ERRORS, '["AP"]', "delta: must be a finite number, got nan"),
        (PAIRS + "\ndelta = -inf", ERRORS, '["AP"]', "delta: must be a finite number, got -inf"),
        (PAIRS + "\nsupport = [0, inf]", ERRORS, '["AP"]', "support: must list at least two"),
        (
            PAIRS.replace("c*_ap.csv", "headless.csv"),
            ERRORS,
            '["AP"]',
            "headless.csv: the first row .* holds numbers, not run names; the file needs a header",
        ),
        (
            PAIRS.replace('design = "pairs"', 'design = "systems"'),
            ERRORS,
            '["AP"]',
            "a systems world fits one collection",
        ),
        (
            PAIRS.replace("c*_ap.csv", "bad.csv"),
            ERRORS,
            '["AP"]',
            "bad.csv, line 3: the score of run 'r2' .1.5. lies outside [0, 1]",
        ),
        (
            PAIRS.replace('design = "pairs"', 'design = "systems"').replace("c*_ap", "c1_ap")
            + '\ncopula = "vine"\ncopula_families = ["gumbel", "tawn2"]',
            ERRORS,
            '["AP"]',
            "'tawn2' is fitted for a pair of runs only",
        ),
    ],
    ids=[
        "measure",
        "pairs-criterion",
        "judgments-criterion",
        "design",
        "margins",
        "copula-family",
        "no-file",
        "drop-bottom",
        "rel",
        "delta-nan",
        "delta-inf",
        "support-inf",
        "no-header",
        "systems-files",
        "bad-file",
        "vine-tawn",
    ],
)
def test_bad_scores_worlds_are_refused_in_one_line(tmp_path, world, criteria, measures, message):
    with pytest.raises(SpecError, match=message.replace("[", r"\[")) as err:
        load_spec(_study(tmp_path, world, criteria, measures))
    assert "\n" not in str(err.value)


def test_a_threshold_band_is_judged_as_equivalence(tmp_path):
    claims = """
[[claims]]
id = "band"
text = "type I of the t-test near alpha"
check = { kind = "threshold", criterion = "error_rates", statistic = "type1_rate", against = "t", x = 50, measures = ["AP"], above = 0.0, below = 0.2 }

[[claims]]
id = "narrow"
text = "type I of the t-test exactly 0.3"
check = { kind = "threshold", criterion = "error_rates", statistic = "type1_rate", against = "t", x = 50, measures = ["AP"], above = 0.29, below = 0.31 }
"""
    path = _study(tmp_path, PAIRS, ERRORS + "\n" + claims)
    spec = load_spec(path)
    run_study(spec, tmp_path / "out", jobs=1)
    verdicts = build(tmp_path / "out")[2]["claims"].set_index("claim")
    assert verdicts.loc["band", "verdict"] == "holds"
    assert verdicts.loc["narrow", "verdict"] == "does not hold"
    bad = path.read_text().replace("above = 0.29, below = 0.31", "above = 0.31, below = 0.29")
    path.write_text(bad)
    with pytest.raises(SpecError, match="below: must be above the lower bound"):
        load_spec(path)
