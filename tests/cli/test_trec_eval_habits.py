"""trec_eval's habits in ``metaeval evaluate``: its measure names, ``-q`` with an ``all`` row,
and its output format; checked against trec_eval itself (through pytrec_eval)."""

from __future__ import annotations

import pytest

import metaeval
from tests.conftest import need_data

pytrec_eval = pytest.importorskip("pytrec_eval")

NAMES = ["map", "P.10", "ndcg_cut.10", "recip_rank", "recall.100"]


@pytest.fixture(scope="module")
def files():
    folder = need_data("trec-dl-2019")
    runs = sorted((folder / "runs").glob("*.gz"))[:2]
    return folder / "qrels.txt", runs


@pytest.fixture
def run_ok(cli):
    def call(args):
        code, out, err = cli(args)
        assert code == 0, err
        return out

    return call


def test_trec_eval_format_with_q_equals_trec_eval(files, run_ok):
    qrels, runs = files
    args = ["evaluate", str(qrels), *map(str, runs), "--format", "trec_eval", "-q"]
    out = run_ok([*args, *[x for n in NAMES for x in ("-m", n)]])
    lines = [line.split("\t") for line in out.strip().splitlines()]
    blocks: dict[str, dict] = {}
    for name, topic, value in lines:
        if name.strip() == "runid":
            run = value
            blocks[run] = {}
        else:
            blocks[run][name.strip(), topic] = float(value)
    assert len(blocks) == 2
    judged = metaeval.read_qrels(qrels)
    trec_names = {"map", "P_10", "ndcg_cut_10", "recip_rank", "recall_100"}
    evaluator = pytrec_eval.RelevanceEvaluator(judged.to_dict(), trec_names)
    for run in metaeval.read_runs(runs):
        per_topic = evaluator.evaluate(run.to_dict())
        got = blocks[run.name]
        for topic, values in per_topic.items():
            for name, value in values.items():
                assert got[name, topic] == pytest.approx(value, abs=5.01e-5), (name, topic)
        for name in trec_names:  # all: the mean over the judged topics (trec_eval -c)
            mean = sum(v[name] for v in per_topic.values()) / len(judged.topics)
            assert got[name, "all"] == pytest.approx(mean, abs=5.01e-5), name


def test_q_adds_an_all_row_with_the_aggregate(files, run_ok):
    qrels, runs = files
    base = ["evaluate", str(qrels), str(runs[0]), "-m", "P.10", "--format", "csv"]
    per_topic = run_ok([*base, "-q", "--agg", "median"])
    overall = run_ok([*base, "--agg", "median"])
    rows = [line.split(",") for line in per_topic.strip().splitlines()[1:]]
    all_rows = [r for r in rows if r[1] == "all"]
    assert len(all_rows) == 1
    assert float(all_rows[0][3]) == pytest.approx(
        float(overall.strip().splitlines()[1].split(",")[-1])
    )
    topics = [r for r in rows if r[1] != "all"]
    assert len(topics) == len(metaeval.read_qrels(qrels).topics)


def test_unknown_trec_eval_name_suggests_the_right_one(files, cli):
    qrels, runs = files
    code, _, err = cli(["evaluate", qrels, runs[0], "-m", "ndcg_cutt.10"])
    assert code == 2 and err.count("\n") == 1
    assert "did you mean 'ndcg_cut.10'" in err


def test_level_option_is_trec_eval_l_and_its_absence_is_noted(files, cli):
    qrels, runs = files
    args = ["evaluate", str(qrels), str(runs[0]), "--format", "trec_eval", "-m", "P.10"]
    code, out, err = cli([*args, "-m", "map", "-m", "P(rel=3)@5", "-l", "2"])
    assert code == 0 and not err, err
    got = {line.split("\t")[0].strip(): float(line.split("\t")[2]) for line in out.splitlines()[1:]}
    run = metaeval.read_runs([runs[0]])[0].to_dict()
    judged = metaeval.read_qrels(qrels).to_dict()
    per_topic = pytrec_eval.RelevanceEvaluator(judged, {"P_10", "map"}, relevance_level=2).evaluate(
        run
    )
    for name in ("P_10", "map"):  # named as trec_eval names them, whatever the level
        mean = sum(v[name] for v in per_topic.values()) / len(per_topic)
        assert got[name] == pytest.approx(mean, abs=5.01e-5), name
    # a level written in the name is kept: P(rel=3)@5 is not moved to 2
    strict = pytrec_eval.RelevanceEvaluator(judged, {"P_5"}, relevance_level=3).evaluate(run)
    assert got["P(rel=3)@5"] == pytest.approx(
        sum(v["P_5"] for v in strict.values()) / len(strict), abs=5.01e-5
    )
    # without -l on graded qrels, one line says which measures count grade 1 as relevant
    code, out, err = cli([*args, "-m", "nDCG@10"])
    assert code == 0 and err.count("\n") == 1
    assert "P.10 counts every grade >= 1 as relevant" in err and "nDCG" not in err


def test_several_cutoffs_in_one_name_as_trec_eval_m(files, run_ok):
    qrels, runs = files
    args = ["evaluate", str(qrels), str(runs[0]), "--format", "trec_eval", "-l", "2"]
    together = run_ok([*args, "-m", "P.5,10", "-m", "ndcg_cut.5,10,20"])
    apart = run_ok([*args, *[x for n in ("P.5", "P.10", "ndcg_cut.5", "ndcg_cut.10",
                                          "ndcg_cut.20") for x in ("-m", n)]])  # fmt: skip
    assert together == apart and together.count("\n") == 6
    frame = metaeval.evaluate(
        metaeval.read_runs([runs[0]]),
        metaeval.read_qrels(qrels),
        ["map_cut.5,100"],
        per_topic=False,
    )
    assert list(frame["measure"]) == ["AP@5", "AP@100"]
