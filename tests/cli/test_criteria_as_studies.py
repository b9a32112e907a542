"""The commands that run a study criterion give the numbers of the study.

``metaeval robustness``, ``stability``, ``discriminate`` and ``correlate`` run their criterion
as a study of one TREC world: for the same seed, each prints the values a study file with the
same world, criterion and seed gives when run by ``metaeval study run`` (values are compared,
not their formatting). ``metaeval informativeness`` keeps its own path (its table has columns
the criterion does not compute), and its ``rms`` and ``n_lists`` are the criterion's.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import metaeval
from metaeval.study import load_results, load_spec

# JSON keeps 10 decimals
CLOSE = {"rel": 1e-8, "abs": 1e-9}


@pytest.fixture(scope="module")
def collection(trec_collection):
    """(qrels, run files, run names) of 6 simulated runs over 12 topics, judged 0-2."""
    root = trec_collection(
        "criteria_as_studies",
        n_topics=12,
        n_systems=6,
        rng=np.random.default_rng(4),
        n_candidates=300,
        rel_median=15.0,
        depth=100,
        pool_depth=20,
    )
    runs = sorted(str(p) for p in (root / "runs").iterdir())
    names = sorted(metaeval.read_runs(runs).names)
    return str(root / "qrels.txt"), runs, names


def as_json(cli, argv) -> list[dict]:
    code, out, err = cli(argv)
    assert code == 0, err
    return json.loads(out)


def run_study(cli, tmp_path: Path, collection, seed: int, body: str, table: str = "results"):
    """Run a study file of the collection's one world with ``body`` (its degraders, measures
    and criteria) by ``metaeval study run``, and read ``table`` back."""
    qrels, runs, _ = collection
    path = tmp_path / "study.toml"
    path.write_text(
        f'schema = 1\n\n[study]\nname = "same-numbers"\nseed = {seed}\n\n'
        f'[[worlds]]\nid = "trec"\nkind = "trec"\nqrels = {json.dumps(qrels)}\n'
        f"runs = {json.dumps(runs)}\n\n{body}"
    )
    out = tmp_path / "out"
    code, _, err = cli(["study", "run", path, "--out", out, "--quiet"])
    assert code == 0, err
    return load_results(out, table)


def value(v) -> float:
    """A JSON value as a float (JSON writes NaN as null)."""
    return math.nan if v is None else float(v)


def assert_same(have: dict, want: dict) -> None:
    assert have.keys() == want.keys()
    assert len(have) > 0
    for key, v in want.items():
        assert have[key] == pytest.approx(v, nan_ok=True, **CLOSE), key


@pytest.mark.parametrize("significance", [True, False])
def test_robustness_prints_the_study_numbers(cli, collection, tmp_path, significance):
    qrels, runs, _ = collection
    argv = ["robustness", qrels, *runs, "-m", "AP", "-m", "P@5", "--levels", "70,40"]
    argv += ["--trials", "3", "-B", "200", "--seed", "7", "--no-summary", "--format", "json"]
    if not significance:
        argv.append("--no-significance")
    got = as_json(cli, argv)
    body = (
        '[[degraders]]\nmethod = "stratified"\nlevels = [70, 40]\ntrials = 3\n\n'
        '[measures]\nnames = ["AP", "P@5"]\n\n[[criteria]]\nkind = "robustness"\n'
    )
    if significance:
        body += '\n[[criteria]]\nkind = "significance_changes"\nB = 200\n'
    study = run_study(cli, tmp_path, collection, 7, body)
    want = {
        (r.level, r.trial, r.measure, r.statistic): r.value
        for r in study.itertuples()
        if r.level != "full"
    }
    have = {
        (str(r["level"]), r["trial"], r["measure"], r["statistic"]): value(r["value"]) for r in got
    }
    assert_same(have, want)
    statistics = {r["statistic"] for r in got}
    assert ("false_alarms" in statistics) is significance
    # every trial damages the judgments anew: the comparison is not of constants
    drifts = {r["value"] for r in got if r["statistic"] == "mean_drift"}
    assert len(drifts) > 1


def test_stability_with_its_defaults_is_the_bare_criterion(cli, collection, tmp_path):
    """The command's defaults are the criterion's: a study file that states none of them
    draws the same topic subsets."""
    qrels, runs, _ = collection
    got = as_json(
        cli,
        ["stability", qrels, *runs, "-m", "AP", "--seed", "11", "--no-summary", "--format", "json"],
    )
    body = '[measures]\nnames = ["AP"]\n\n[[criteria]]\nkind = "stability"\n'
    detail = run_study(cli, tmp_path, collection, 11, body, table="stability")
    want = {(r.measure, r.size, r.repeat, r.statistic): r.value for r in detail.itertuples()}
    have = {(r["measure"], r["size"], r["repeat"], r["statistic"]): value(r["value"]) for r in got}
    assert_same(have, want)


def test_stability_options_and_summary(cli, collection, tmp_path):
    qrels, runs, _ = collection
    argv = ["stability", qrels, *runs, "-m", "AP", "-m", "nDCG@10", "--sizes", "6,3"]
    argv += ["--repeats", "20", "--no-split-half", "--seed", "3", "--format", "json"]
    got = as_json(cli, argv)
    body = (
        '[measures]\nnames = ["AP", "nDCG@10"]\n\n[[criteria]]\nkind = "stability"\n'
        "sizes = [6, 3]\nrepeats = 20\nsplit_half = false\n"
    )
    results = run_study(cli, tmp_path, collection, 3, body)
    want = {(r.measure, int(r.x), r.statistic): r.value for r in results.itertuples()}
    have = {}
    for r in got:
        for column, end in (("mean", ""), ("p025", "_p025"), ("p975", "_p975")):
            have[r["measure"], r["size"], r["statistic"] + end] = value(r[column])
    assert_same(have, want)
    # in the order given, as the command always printed them
    assert [r["size"] for r in got] == [6, 3, 6, 3]


@pytest.mark.parametrize("method", ["bootstrap", "tukey"])
def test_discriminate_prints_the_study_numbers(cli, collection, tmp_path, method):
    qrels, runs, _ = collection
    argv = ["discriminate", qrels, *runs, "-m", "AP", "-m", "P@5", "--method", method]
    got = as_json(cli, [*argv, "-B", "300", "--seed", "5", "--format", "json"])
    body = (
        '[measures]\nnames = ["AP", "P@5"]\n\n[[criteria]]\nkind = "discriminative_power"\n'
        f'method = "{method}"\nB = 300\n'
    )
    results = run_study(cli, tmp_path, collection, 5, body)
    want = {(r.measure, r.statistic): r.value for r in results.itertuples()}
    columns = {
        "power": "power",
        "diff_required": "diff_required",
        "n_significant": "significant",
        "n_pairs": "pairs",
    }
    have = {(r["measure"], s): value(r[c]) for r in got for s, c in columns.items()}
    assert_same(have, want)
    assert {(r["method"], r["B"], r["runs"], r["topics"]) for r in got} == {(method, 300, 6, 12)}


def test_correlate_prints_the_study_numbers(cli, collection, tmp_path):
    """With --max-relevant: the study's topic filter keeps the same topics."""
    qrels, runs, _ = collection
    judged = metaeval.read_qrels(qrels).to_df()
    relevant = (judged["grade"] >= 1).groupby(judged["topic"]).sum()  # per topic, 0 included
    at_most = int(relevant.median())
    argv = ["correlate", qrels, *runs, "-m", "AP", "-m", "P@5", "-m", "nDCG@10"]
    argv += ["--max-relevant", str(at_most), "--format", "json"]
    got = as_json(cli, argv)
    body = (
        '[measures]\nnames = ["AP", "P@5", "nDCG@10"]\n\n[[criteria]]\nkind = "agreement"\n'
        f"topic_filter = {{ grade = 1, at_most = {at_most} }}\n"
    )
    results = run_study(cli, tmp_path, collection, 1, body)
    want = {(r.measure, r.other, r.statistic): r.value for r in results.itertuples()}
    have = {(r["measure"], r["other"], r["statistic"]): value(r["value"]) for r in got}
    assert_same(have, want)
    assert 2 <= (relevant <= at_most).sum() < len(relevant)  # the filter filters
    code, out, _ = cli([*argv[:-2], "--format", "table"])
    assert code == 0 and f"({(relevant <= at_most).sum()} topics;" in out


def test_informativeness_rms_is_the_criterions(cli, collection, tmp_path):
    qrels, runs, _ = collection
    argv = ["informativeness", qrels, *runs, "-m", "AP", "-m", "P@10", "--min-relevant", "1"]
    got = as_json(cli, [*argv, "--format", "json"])
    body = (
        '[measures]\nnames = ["AP", "P@10"]\n\n[[criteria]]\nkind = "informativeness"\n'
        "min_relevant = 1\n"
    )
    results = run_study(cli, tmp_path, collection, 1, body)
    want = {(r.measure, int(r.x), r.statistic): r.value for r in results.itertuples()}
    have = {(r["measure"], r["threshold"], s): value(r[s]) for r in got for s in ("rms", "n_lists")}
    assert_same(have, want)


def test_the_commands_study_is_a_study_file(collection, tmp_path):
    """What a command runs is a study file: read back, its text gives the same study."""
    from metaeval.cli._study import criterion, degrader, trec_study

    qrels, runs, names = collection
    topics = tmp_path / "topics.txt"
    topics.write_text("\n".join(list(metaeval.read_qrels(qrels).topics)[:8]) + "\n")
    criteria = [
        criterion("robustness", statistics=["tau_b", "tau_ap"]),  # the default: left out
        criterion("significance_changes", B=300, alpha=0.05),
        criterion("stability", sizes=(3, 4), repeats=50, split_half=True),
        criterion("agreement", topic_filter={"grade": 1, "at_most": 9}, statistics=["tau_a"]),
    ]
    assert criteria[0].params == () and criteria[1].params == (("B", 300),)
    assert criteria[2].params == (("sizes", (3, 4)),)
    with trec_study(
        "robustness",
        Path(qrels),
        [Path(r) for r in runs],
        ["AP", "P@5"],
        seed=3,
        topics=str(topics),
        run_names=",".join(names[:4]),
        degraders=[degrader("stratified", (70, 40.0), 2)],
    ) as study:
        spec = study.spec_with(*criteria)
    loaded = load_spec(tmp_path / "elsewhere" / "study.toml", text=spec.text)
    assert replace(loaded, path=None, text="") == replace(spec, text="")


def test_a_run_from_a_pipe_and_no_file_left(cli, collection, tmp_path, monkeypatch):
    """A pipe is read once into the temporary folder, which is removed afterwards."""
    qrels, runs, _ = collection
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    fifo = tmp_path / "run.pipe"
    os.mkfifo(fifo)
    data = Path(runs[0]).read_bytes()

    def feed():
        with open(fifo, "wb") as f:
            f.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    tail = ["-m", "AP", "--repeats", "5", "--seed", "2", "--format", "json"]
    piped = as_json(cli, ["stability", qrels, fifo, *runs[1:], *tail])
    writer.join()
    assert piped == as_json(cli, ["stability", qrels, *runs, *tail])
    assert list(scratch.iterdir()) == []


FAILS_LATER = """
from dataclasses import dataclass
import numpy as np
from metaeval.measures import Measure, register

CALLS = []

@register
@dataclass(frozen=True, kw_only=True)
class FailsLater(Measure):
    name = "FailsLaterCLI"
    def _compute(self, tensor):
        CALLS.append(1)
        if len(CALLS) > 1:
            raise ValueError("computed once only")
        return np.full((tensor.n_runs, tensor.n_topics), 0.5)
"""


def test_a_task_that_fails_is_one_error_line(cli, collection, tmp_path, registry):
    """A measure that fails under the damaged judgments fails in a task: the command says so
    as it says any bad input, in one line naming the measure, without the task's name."""
    qrels, runs, _ = collection
    plugin = tmp_path / "fails_later.py"
    plugin.write_text(FAILS_LATER)
    code, out, err = cli(
        ["robustness", qrels, *runs, "-m", "FailsLaterCLI", "--plugin", plugin, "--levels", "50"]
        + ["--trials", "1", "-B", "50", "--seed", "1"]
    )
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and out == "" and "Traceback" not in err
    assert errors == ["error: FailsLaterCLI: computed once only"]
