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
    # as trec_eval -q prints a run: its topics' lines, then runid, then the lines of "all"
    blocks: dict[str, dict] = {}
    topic_lines, run = {}, None
    for name, topic, value in lines:
        if name.strip() == "runid":
            run, blocks[value], topic_lines = value, topic_lines, {}
        elif topic == "all":
            blocks[run][name.strip(), topic] = float(value)
        else:
            topic_lines[name.strip(), topic] = float(value)
    assert len(blocks) == 2 and not topic_lines
    assert all(any(t != "all" for _, t in block) for block in blocks.values())
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


def _lines(out: str) -> list[tuple[str, str, str]]:
    return [tuple(x.strip() for x in line.split("\t")) for line in out.strip().splitlines()]


def test_names_of_several_values_alone_take_trec_eval_defaults(files, run_ok):
    qrels, runs = files
    args = ["evaluate", str(qrels), str(runs[0]), "--format", "trec_eval", "-l", "2"]
    names = [name for name, _, _ in _lines(run_ok([*args, "-m", "P", "-m", "success"]))]
    cuts = ["5", "10", "15", "20", "30", "100", "200", "500", "1000"]
    assert names == ["runid", *(f"P_{k}" for k in cuts), "success_1", "success_5", "success_10"]
    official = [name for name, _, _ in _lines(run_ok([*args, "-m", "official"]))]
    assert official[:9] == [
        *("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec"),
        "bpref",
    ]
    assert len(official) == 10 + 11 + 9  # 11 iprec_at_recall levels, 9 P cutoffs
    assert len(set(official)) == len(official)


def test_summary_line_sums_counts_and_gm_map_is_the_geometric_mean(files, run_ok):
    qrels, runs = files
    args = ["evaluate", str(qrels), str(runs[0]), "-l", "2", "-q", "--format", "trec_eval"]
    lines = _lines(run_ok([*args, "-m", "num_ret", "-m", "num_q", "-m", "gm_map", "-m", "map"]))
    per_topic = [float(v) for name, topic, v in lines if name == "num_ret" and topic != "all"]
    summary = {name: float(v) for name, topic, v in lines if topic == "all" and name != "runid"}
    assert summary["num_ret"] == sum(per_topic) and summary["num_q"] == len(per_topic) == 43
    assert "gm_map" not in {name for name, topic, _ in lines if topic != "all"}
    frame = metaeval.evaluate(runs[0], qrels, ["AP(rel=2)", "gm_map(rel=2)"], per_topic=False)
    gmean = metaeval.evaluate(runs[0], qrels, ["AP(rel=2)"], per_topic=False, agg="gmean")
    assert list(frame["measure"]) == ["AP(rel=2)", "gm_map(rel=2)"]
    assert frame["value"].iloc[1] == pytest.approx(gmean["value"].iloc[0], abs=1e-15)
    assert summary["gm_map"] == pytest.approx(gmean["value"].iloc[0], abs=5.01e-5)


def test_judged_only_and_depth_options_are_trec_eval_j_and_m(files, run_ok):
    qrels, runs = files
    args = ["evaluate", str(qrels), str(runs[0]), "-q", "--format", "json", "-l", "2"]
    flagged = run_ok([*args, "-m", "map", "-m", "P.10", "-J", "-M", "50"])
    spelled = run_ok([*args, "-m", "AP'", "-m", "P'@10", "--depth", "50"])
    values = [r["value"] for r in metaeval_json(flagged)]
    assert values == [r["value"] for r in metaeval_json(spelled)]
    assert {r["measure"] for r in metaeval_json(flagged)} == {"map", "P.10"}  # as given


def metaeval_json(out: str) -> list[dict]:
    import json

    return json.loads(out)


def test_run_lines_with_trailing_fields_read_with_the_option(tmp_path, files, cli):
    qrels, runs = files
    run = tmp_path / "extra.run"
    run.write_text("19335 Q0 D1 1 2.5 tag more words\n19335 Q0 D2 2 1.5 tag more\n")
    code, _, err = cli(["evaluate", str(qrels), str(run), "-m", "P.2"])
    assert code == 2 and "--extra-fields ignore" in err and err.count("\n") == 1
    code, out, err = cli(
        ["evaluate", str(qrels), str(run), "-m", "P.2", "--extra-fields", "ignore"]
    )
    assert code == 0, err


def test_names_that_are_not_scores_per_topic_say_what_they_are(files):
    qrels, runs = files
    for name, says in [
        ("num_q", "metaeval evaluate -m num_q prints it"),
        ("relstring", "metaeval does not print it"),
        ("gm_map", "the geometric mean over topics of AP"),
    ]:
        with pytest.raises(ValueError, match=says):
            metaeval.parse_measure(name)
    with pytest.raises(ValueError, match="'num_q' is a line of trec_eval's output"):
        metaeval.evaluate(runs[0], qrels, ["map", "num_q"])
    # in a set they are left out of the library's table (the command line prints them)
    frame = metaeval.evaluate(runs[0], qrels, "official", per_topic=False)
    assert len(frame) == 28 and "num_q" not in set(frame["measure"])
