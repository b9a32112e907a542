"""A study pointed at other data with --world / --worlds gives what the hand-edited study file
gives, and every mistake in those options is one clear line."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from metaeval.cli import run
from metaeval.study import SpecError, load_results, load_spec
from metaeval.study.spec.retarget import parse_world_option, read_worlds_file
from tests.study.conftest import write_spec

STUDY = """
schema = 1

[study]
name = "retarget"
seed = 11
topic_resamples = 10

[[worlds]]
id = "coll"
kind = "trec"
qrels = "{qrels}"
runs = "{runs}"
topics = ["q001", "q002", "q003", "q004", "q005", "q006", "q007", "q008"]
top_grades = 1

[[worlds]]
id = "sim"
kind = "simulator"
preset = "trec_like"
n_topics = 8
n_systems = 5
params = {{ n_candidates = 200, rel_median = 10.0, depth = 60, pool_depth = 15 }}

[[degraders]]
id = "bv"
method = "stratified"
levels = [50]
trials = 2

[measures]
names = ["AP", "P@5"]

[[criteria]]
kind = "robustness"
worlds = ["coll"]

[[criteria]]
kind = "discriminative_power"
B = 100

[[claims]]
id = "C1"
text = "AP is more discriminative than P@5."
check = {{ kind = "order", criterion = "discriminative_power", statistic = "power", level = "full", greater = ["AP"], than = ["P@5"], worlds = ["coll"] }}
"""


@pytest.fixture(scope="module")
def other(trec_collection):
    """The collection a user retargets the study to."""
    return trec_collection(
        "other",
        n_topics=10,
        n_systems=7,
        rng=np.random.default_rng(23),
        n_candidates=300,
        rel_median=15.0,
        depth=100,
        pool_depth=20,
    )


def _tables(out) -> dict[str, pd.DataFrame]:
    return {
        p.name: load_results(out, p.name).sort_values("unit", kind="stable").reset_index(drop=True)
        for p in sorted((out / "results").iterdir())
        if p.is_dir()
    }


def test_world_option_gives_the_results_of_the_hand_edited_file(
    tmp_path, trec_files, other, capsys
):
    original = write_spec(
        tmp_path, STUDY.format(qrels=trec_files / "qrels.txt", runs=trec_files / "runs" / "*")
    )
    # what a user would write by hand: the collection's files, no topic subset (the study's
    # was the old collection's), the world renamed everywhere; top_grades is the study's
    edited = STUDY.format(qrels=other / "qrels.txt", runs=other / "runs" / "*")
    edited = re.sub(r"(?m)^topics = .*\n", "", edited).replace('"coll"', '"robust"')
    by_hand = write_spec(tmp_path, edited, "edited.toml")

    assert run(["study", "run", str(by_hand), "--out", str(tmp_path / "hand"), "-q"]) == 0
    option = f"coll={other / 'qrels.txt'},{other / 'runs' / '*'},as=robust"
    code = run(["audit", str(original), "--world", option, "--out", str(tmp_path / "cli")])
    out = capsys.readouterr()
    assert code == 0, out.err
    # the replaced world is named, with what it kept from the study file
    assert re.search(
        r"world coll \(now robust\): .*kept from the study file: top_grades = 1", out.err
    )
    assert re.search(r"^C1\s+robust\s", out.out, re.M)

    hand, cli = _tables(tmp_path / "hand"), _tables(tmp_path / "cli")
    assert hand.keys() == cli.keys() and hand
    for name in hand:
        pd.testing.assert_frame_equal(hand[name], cli[name], check_like=True)
    assert set(hand["units"]["world"]) == {"robust", "sim"}
    # the study as run is kept, readable from anywhere (absolute paths), with the options
    saved = (tmp_path / "cli" / "study.toml").read_text()
    assert "# --world coll=" in saved
    spec = load_spec(tmp_path / "elsewhere.toml", text=saved)
    assert [w.id for w in spec.worlds] == ["robust", "sim"]
    assert spec.criteria[0].worlds == ("robust",)
    # the report says what the world is, and how to run the study again with the option
    report = (tmp_path / "cli" / "report" / "index.md").read_text()
    assert "`robust` (TREC files: qrels.txt; 10 topics, 7 runs; judged 0-2; its top 1" in report
    assert f"--world 'coll={other / 'qrels.txt'},{other / 'runs' / '*'},as=robust'" in report


def test_a_worlds_file_replaces_several_worlds(tmp_path, trec_files, other):
    original = write_spec(
        tmp_path, STUDY.format(qrels=trec_files / "qrels.txt", runs=trec_files / "runs" / "*")
    )
    (tmp_path / "data").mkdir()
    worlds = write_spec(
        tmp_path / "data",
        f"""
        [[worlds]]
        replaces = "coll"
        qrels = "{other / "qrels.txt"}"
        runs = "{other / "runs" / "*"}"
        topics = ["q001", "q002", "q003"]
        top_grades = ""

        [[worlds]]
        replaces = "sim"
        id = "sim2"
        kind = "simulator"
        preset = "trec_like"
        n_topics = 6
        n_systems = 4
        """,
        "worlds.toml",
    )
    spec = load_spec(original, changes=read_worlds_file(worlds))
    coll, sim = spec.worlds
    assert (coll.id, coll.qrels, coll.top_grades) == ("coll", other / "qrels.txt", None)
    assert coll.topics == ("q001", "q002", "q003") and len(coll.runs) == 7
    assert (sim.id, sim.n_topics, sim.kind) == ("sim2", 6, "simulator")
    assert spec.world_args == ("--worlds", str(worlds.resolve()))


def test_world_option_syntax(tmp_path):
    change = parse_world_option(
        "dl=q.txt,runs/*.gz,more/*,topics=601-610,612,as=rob,rel=2", tmp_path
    )
    t = change.table
    assert t["id"] == "rob" and t["kind"] == "trec" and t["rel"] == 2
    assert t["qrels"] == str(tmp_path / "q.txt")
    assert t["runs"] == [str(tmp_path / "runs/*.gz"), str(tmp_path / "more/*")]
    assert t["topics"] == "601-610,612"
    assert change.args[0] == "--world" and change.args[1].startswith("dl=")
    # more run files by key, and an empty value that drops a setting of the study's world
    t = parse_world_option("dl=q.txt,runs=a/*,runs=b/*,top_grades=", tmp_path).table
    assert t["runs"] == [str(tmp_path / "a/*"), str(tmp_path / "b/*")] and t["top_grades"] == ""
    # how ties are ordered, kept in the reproduce command
    change = parse_world_option("dl=q.txt,r/*,ties=expected", tmp_path)
    assert change.table["ties"] == "expected" and change.args[1].endswith(",ties=expected")


@pytest.mark.parametrize(
    "option, message",
    [
        ("dl", "expected ID=QRELS,RUNS"),
        ("=q.txt,r/*", "expected ID=QRELS,RUNS"),
        ("dl=q.txt", "(qrels and runs)"),
        ("dl=q.txt,r/*,topic=601", "unknown key 'topic'"),
        ("dl=q.txt,r/*,rel=two", "rel must be a number, got 'two'"),
        ("dl=q.txt,r/*,as=a,as=b", "as is given twice"),
    ],
)
def test_a_bad_world_option_is_one_line(option, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        parse_world_option(option)


def test_retarget_mistakes_name_the_option(tmp_path, trec_files, other, capsys):
    original = write_spec(
        tmp_path, STUDY.format(qrels=trec_files / "qrels.txt", runs=trec_files / "runs" / "*")
    )
    files = f"{other / 'qrels.txt'},{other / 'runs' / '*'}"
    cases = [
        (["--world", f"dl2019={files}"], "has no world 'dl2019'; its worlds: coll, sim"),
        (["--world", f"coll={files},as=sim"], "two worlds would be called 'sim'"),
        (["--world", f"coll={files}", "--world", f"coll={files}"], "replaced twice"),
        (["--world", f"coll={other / 'nope.txt'},{other / 'runs' / '*'}"], "nope.txt"),
    ]
    for args, message in cases:
        assert run(["study", "plan", str(original), "--no-estimate", *args]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    bad = tmp_path / "bad.toml"
    bad.write_text('[[worlds]]\nid = "x"\n')
    assert run(["study", "plan", str(original), "--no-estimate", "--worlds", str(bad)]) == 2
    assert "worlds[0].replaces: is required" in capsys.readouterr().err


def test_a_graded_world_without_a_relevance_level_warns_once(tmp_path, trec_files, other, capfd):
    original = write_spec(
        tmp_path, STUDY.format(qrels=trec_files / "qrels.txt", runs=trec_files / "runs" / "*")
    )
    files = f"{other / 'qrels.txt'},{other / 'runs' / '*'}"
    out = ["--out", str(tmp_path / "out"), "-q", "-j", "2"]
    # top_grades dropped: nothing says which grades count as relevant
    assert run(["study", "run", str(original), "--world", f"coll={files},top_grades=", *out]) == 0
    err = capfd.readouterr().err
    assert err.count("states no relevance level") == 1, err
    assert "world coll: its qrels grade up to 2 and it states no relevance level, so AP, P@5" in err
    # a stated level, even the default one, is the collection's convention: no warning
    option = f"coll={files},top_grades=,rel=1"
    assert run(["study", "run", str(original), "--world", option, *out, "--replace"]) == 0
    assert "relevance level" not in capfd.readouterr().err
