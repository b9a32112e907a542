"""The paper studies on a TREC collection they were not written for: only the worlds' paths are
edited (and the simulated worlds, the criteria's bootstrap and the topic resamples made small,
for time). Every claim must get a verdict row, the audit must exit 0, and what the studies rely
on (Robertson et al.'s list selection, the 15 best runs, the easy/hard topic criterion) must do
what it says."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from metaeval.cli import run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def collection(trec_collection):
    """A small TREC collection judged 0-2, as files."""
    return trec_collection(
        "other-trec",
        n_topics=14,
        n_systems=18,
        rng=np.random.default_rng(11),
        n_candidates=500,
        rel_median=40.0,
        depth=150,
        pool_depth=40,
    )


def _edited(study: str, collection: Path) -> str:
    """The study file with its TREC worlds pointed at ``collection`` (nothing else of them
    changed) and its simulated worlds and resampling (B and the topic resamples) made small."""
    text = (ROOT / "studies" / study).read_text()
    text = re.sub(r'qrels = "[^"]*"', f'qrels = "{collection / "qrels.txt"}"', text)
    text = re.sub(r'runs = "[^"]*"', f'runs = "{collection / "runs" / "*"}"', text)
    text = re.sub(r"n_topics = \d+", "n_topics = 10", text)
    text = re.sub(r"n_systems = \d+", "n_systems = 16", text)
    text = re.sub(r"replicates = \d+", "replicates = 1", text)
    text = re.sub(r"trials = \d+", "trials = 2", text)
    text = text.replace("B = 1000", "B = 100")
    # every statistic is still recomputed on topic resamples: 20 instead of the default 200
    text = re.sub(r"(?m)^topic_resamples = \d+\n", "", text)
    text = text.replace("[study]", "[study]\n# edited for a test\ntopic_resamples = 20", 1)
    return text.replace('preset = "trec_like"', 'preset = "trec_like"\nparams = { n_candidates = 300, rel_median = 25.0, depth = 100, pool_depth = 30 }')  # fmt: skip


def _claim_ids(study: str) -> list[str]:
    return re.findall(r'^id = "([A-Z]+\d+[a-z]?)"', (ROOT / "studies" / study).read_text(), re.M)


@pytest.mark.parametrize("study", ["sakai-kando-2008.toml", "robertson-kanoulas-yilmaz-2010.toml"])
def test_audit_on_another_trec_collection_with_only_the_paths_edited(
    study, collection, tmp_path, capsys
):
    path = tmp_path / study
    path.write_text(_edited(study, collection))
    code = run(["audit", str(path), "--out", str(tmp_path / "out"), "--jobs", "2", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    ids = _claim_ids(study)
    assert len(ids) >= 10
    for claim in ids:
        assert re.search(rf"^{claim}\s", out, flags=re.M), f"{claim} has no verdict"
    # the TREC worlds were read from the edited paths, and judged
    trec = [w for w in re.findall(r'^id = "([a-z0-9_]+)"', path.read_text(), re.M) if "dl" in w]
    for world in trec:
        assert re.search(rf"\s{world}\s+(holds|does not hold|inconclusive)", out), world
    report = (tmp_path / "out" / "report" / "index.md").read_text()
    assert "Verdicts, claim by world" in report


def test_each_grade_selects_the_lists_with_enough_documents_of_every_grade():
    from metaeval.meta.informativeness import _eligible, _retrieved

    grades = np.array(
        [
            [1] * 5 + [2] * 5,  # 5 of each: in
            [1] * 4 + [2] * 6,  # 4 relevant: out (it has 10 of grade >= 1 and 6 of grade 2)
            [2] * 10,  # no grade 1: out
        ]
    )
    R_at = np.zeros((3, 3))
    retrieved = _retrieved(grades, 2)
    chosen = _eligible("each_grade", retrieved, R_at, 5)
    assert chosen.tolist() == [[True, True], [False, False], [False, False]]
    per_threshold = _eligible("lists", retrieved, R_at, 5)
    assert per_threshold.tolist() == [[True, True], [True, True], [True, True]]


def test_best_runs_keeps_the_runs_with_the_best_mean(collection, tmp_path):
    from metaeval import EvalTensor, read_qrels, read_runs
    from metaeval.measures import parse_measure
    from metaeval.study import load_results, load_spec, run_study
    from metaeval.study.worlds import load_world

    text = f"""
schema = 1
[study]
name = "best"
seed = 3
[[worlds]]
id = "best"
kind = "trec"
qrels = "{collection / "qrels.txt"}"
rel = 1
runs = "{collection / "runs" / "*"}"
best_runs = {{ n = 5, by = "P@10" }}
[measures]
names = ["P@10"]
[[criteria]]
kind = "discriminative_power"
B = 50
"""
    (tmp_path / "best.toml").write_text(text)
    run_study(load_spec(tmp_path / "best.toml"), tmp_path / "out", quiet=True)
    results = load_results(tmp_path / "out")
    assert results.loc[results["statistic"] == "n_pairs", "value"].tolist() == [10.0]  # 5 runs
    runs = read_runs(sorted((collection / "runs").iterdir()))
    p10 = parse_measure("P@10").compute(
        EvalTensor.build(runs, read_qrels(collection / "qrels.txt"))
    )
    means = p10.mean(axis=1)
    assert np.sort(means)[-5] > np.sort(means)[-6]  # the cut is not a tie
    best = {runs.names[i] for i in np.argsort(-means)[:5]}
    spec = load_spec(tmp_path / "best.toml")
    assert spec.worlds[0].identity()["best_runs"] == {"by": "P@10", "n": 5}
    world = load_world(spec, "best", 0)
    assert set(world.tensor.runs) == best and len(world.runs) == 5


def test_topic_difficulty_plugin_ranks_on_easy_and_hard_halves(tmp_path):
    from metaeval.study import load_results, load_spec, run_study

    text = f"""
schema = 1
[study]
name = "difficulty"
seed = 4
plugins = ["{ROOT / "studies" / "plugins" / "topic_difficulty.py"}"]
[[worlds]]
id = "sim"
kind = "simulator"
preset = "trec_like"
n_topics = 12
n_systems = 8
params = {{ n_candidates = 300, rel_median = 15.0, depth = 100, pool_depth = 20 }}
[measures]
names = [{{ name = "AP", label = "MAP" }}, {{ name = "AP", aggregate = "gmean", label = "gMAP" }}]
[[criteria]]
kind = "topic_difficulty"
"""
    (tmp_path / "d.toml").write_text(text)
    run_study(load_spec(tmp_path / "d.toml"), tmp_path / "out", quiet=True)
    r = load_results(tmp_path / "out").set_index(["measure", "statistic"])["value"]
    for m in ("MAP", "gMAP"):
        assert -1 <= r[m, "tau_easy"] <= 1 and -1 <= r[m, "tau_hard"] <= 1
        assert r[m, "easy_minus_hard"] == pytest.approx(r[m, "tau_easy"] - r[m, "tau_hard"])
    (tmp_path / "bad.toml").write_text(
        text.replace('kind = "topic_difficulty"', 'kind = "topic_difficulty"\nfraction = 0.8')
    )
    with pytest.raises(ValueError, match="fraction"):
        load_spec(tmp_path / "bad.toml")


@pytest.mark.parametrize("study", sorted(p.name for p in (ROOT / "studies").glob("*.toml")))
def test_every_committed_study_loads_and_plans(study):
    """Every study file of the repository reads (its data is beside the repository) and every
    criterion gets units on some world."""
    from tests.conftest import need_data

    need_data("trec-dl-2020")
    need_data("urbano")
    from metaeval.study import load_spec
    from metaeval.study.plan import make_plan

    spec = load_spec(ROOT / "studies" / study)
    assert spec.criteria and spec.worlds
    planned = {u.criterion for u in make_plan(spec).units}
    assert planned == {c.id for c in spec.criteria}
