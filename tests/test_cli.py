"""The `metaeval` command line: evaluate, measures, quickstart, and errors without tracebacks.

Commands run in this process through :func:`metaeval.cli.run`, what the console script calls:
it is what turns an error into one line and an exit status."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import metaeval

RUN = "q1 Q0 d1 1 3.0 sysA\nq1 Q0 d2 2 2.0 sysA\nq2 Q0 d9 1 1.0 sysA\n"
QRELS = "q1 0 d1 0\nq1 0 d2 1\nq2 0 d9 2\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "run").write_text(RUN)
    (tmp_path / "qrels").write_text(QRELS)
    return str(tmp_path / "qrels"), str(tmp_path / "run")


def test_evaluate_tsv_per_topic_matches_library(cli, files, capsys):
    qrels, run = files
    code, out, err = cli(
        ["evaluate", qrels, run, "-m", "AP", "-m", "P(rel=2)@1", "--per-topic", "--format", "tsv"],
        capsys,
    )
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out), sep="\t", dtype={"topic": str})
    # the "all" rows (trec_eval's -q) hold the means over topics
    overall = got[got.topic == "all"].set_index("measure")["value"]
    got = got[got.topic != "all"]
    assert overall.to_dict() == pytest.approx(got.groupby("measure")["value"].mean().to_dict())
    expected = metaeval.evaluate(run, qrels, ["AP", "P(rel=2)@1"])
    pd.testing.assert_frame_equal(
        got.sort_values(["topic", "measure"]).reset_index(drop=True),
        expected.sort_values(["topic", "measure"]).reset_index(drop=True),
        check_dtype=False,
    )
    assert got.set_index(["topic", "measure"]).loc[("q1", "AP"), "value"] == pytest.approx(0.5)


def test_evaluate_table_json_and_aggregates(cli, files, capsys):
    qrels, run = files
    code, table, _ = cli(["evaluate", qrels, run, "-m", "AP", "-m", "nDCG"], capsys)
    assert code == 0 and "sysA" in table and "0.7500" in table
    _, out, _ = cli(
        ["evaluate", qrels, run, "-m", "AP", "--format", "json", "--agg", "gmean"], capsys
    )
    records = json.loads(out)
    assert records == [{"run": "sysA", "measure": "AP", "value": pytest.approx(0.5**0.5)}]


def test_evaluate_condensed_and_depth(cli, files, capsys):
    qrels, run = files
    _, out, _ = cli(
        ["evaluate", qrels, run, "-m", "P@1", "--depth", "1", "--format", "json", "--per-topic"],
        capsys,
    )
    assert [r["value"] for r in json.loads(out)] == [0.0, 1.0, 0.5]  # q1, q2, all


@pytest.mark.parametrize(
    "args, message",
    [
        (["-m", "Nope"], "unknown measure"),
        (["-m", "Success"], "needs a cutoff"),
        (["-m", "AP(rel=0)"], "rel must be"),
        (["--missing", "drop"], "missing"),
        (["--agg", "harmonic"], "aggregate"),
    ],
)
def test_evaluate_bad_options_fail_cleanly(cli, files, args, message, capsys):
    qrels, run = files
    code, _, err = cli(["evaluate", qrels, run, *args], capsys)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_evaluate_malformed_file_names_file_and_line(cli, files, tmp_path, capsys):
    qrels, _ = files
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 3.0 s\nq1 Q0 d2 2 oops s\n")
    code, _, err = cli(["evaluate", qrels, bad], capsys)
    assert code == 2
    assert "bad.run, line 2" in err and "not a number" in err
    code, _, err = cli(["evaluate", files[1], files[1]], capsys)
    assert code == 2 and "looks like a run file" in err


def test_measures_lists_every_registered_measure(cli, capsys):
    code, out, _ = cli(["measures", "--format", "json"], capsys)
    assert code == 0
    names = {d["name"] for d in json.loads(out)}
    assert {
        "AP",
        "P",
        "Rprec",
        "RR",
        "R",
        "nDCG",
        "Bpref",
        "infAP",
        "Success",
        "NumRet",
        "NumRel",
        "NumRelRet",
        "Judged",
    } <= names
    _, text, _ = cli(["measures"], capsys)
    assert "formula" in text and "reference" in text


def test_evaluate_the_bundled_example_collection(cli, capsys):
    folder = Path(metaeval.__file__).parent / "datasets" / "tiny"
    runs = sorted(str(p) for p in folder.glob("*.run"))
    code, out, err = cli(["evaluate", folder / "tiny.qrels", *runs], capsys)
    assert code == 0, err
    assert "neural" in out and "AP" in out


def test_console_script_entry_point():
    """The installed `metaeval` command (what the README's first command runs)."""
    out = subprocess.run(
        [sys.executable, "-m", "metaeval", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "evaluate" in out.stdout


def test_process_exits_cleanly_after_reading_files():
    """Arrow's CSV reader threads used to abort the process at exit now and then
    ("terminate called without an active exception", about 1 run in 4 through the CLI;
    apache/arrow#34314). Fifteen runs (two at a time) without one abort."""
    folder = Path(metaeval.__file__).parent / "datasets" / "tiny"
    args = [str(folder / "tiny.qrels"), *sorted(str(p) for p in folder.glob("*.run"))]
    command = [sys.executable, "-m", "metaeval", "evaluate", *args]
    # two processes at a time (this one only waits): each still starts, reads the files and
    # exits on its own, in about half the wall time on two cores
    for start in range(0, 15, 2):
        procs = [
            subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(min(2, 15 - start))
        ]
        errs = [proc.communicate()[1] for proc in procs]
        for proc, err in zip(procs, errs):
            assert proc.returncode == 0, err[-500:]
            assert "terminate called" not in err
