"""Studies on TREC files (subsets, grade folding), plugins, the manifest, signals, the CLI."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval.cli import run
from metaeval.study import load_results, load_spec, make_plan, run_study
from tests.study.conftest import write_spec

ROOT = Path(__file__).resolve().parents[2]

TREC = """
schema = 1

[study]
name = "trec"
seed = 3
plugins = {plugins}
topic_resamples = 20

[[worlds]]
id = "files"
kind = "trec"
qrels = "{root}/qrels.txt"
rel = 1
runs = "{root}/runs/*.run"
topics = ["q001", "q002", "q003", "q004", "q005", "q006", "q007", "q008"]
run_names = ["sys001", "sys002", "sys003", "sys004", "sys005"]

[[degraders]]
id = "bv"
method = "{method}"
levels = [50, 20]
trials = 2

[measures]
names = ["AP", "nDCG@10", {{ name = "AP", aggregate = "gmean", label = "GMAP" }}]

[[criteria]]
kind = "robustness"

[[criteria]]
kind = "agreement"
statistics = ["tau_b"]
{extra}
"""


def trec_spec(tmp_path, trec_files, *, plugins="[]", method="stratified", extra=""):
    text = TREC.format(root=trec_files, plugins=plugins, method=method, extra=extra)
    return write_spec(tmp_path, text, "trec.toml")


def test_a_trec_world_with_subsets_and_aggregates(tmp_path, trec_files):
    spec = load_spec(trec_spec(tmp_path, trec_files))
    summary = run_study(spec, tmp_path / "out", jobs=1, quiet=True)
    assert summary.complete
    res = load_results(tmp_path / "out")
    # the agreement of AP with GMAP under full judgments, recomputed by hand on the subset
    from scipy import stats

    import metaeval

    def system_scores(agg):
        return metaeval.evaluate(
            sorted(str(p) for p in (trec_files / "runs").glob("*.run")),
            str(trec_files / "qrels.txt"),
            ["AP"],
            per_topic=False,
            agg=agg,
            topics=[f"q00{i}" for i in range(1, 9)],
            run_names=[f"sys00{i}" for i in range(1, 6)],
        )

    sub, gm = system_scores("mean"), system_scores("gmean")

    tau = stats.kendalltau(sub["value"], gm["value"]).statistic
    row = res[
        (res["criterion"] == "agreement") & (res["measure"] == "AP") & (res["other"] == "GMAP")
    ]
    assert row["value"].iloc[0] == pytest.approx(tau)
    assert set(res["measure"]) == {"AP", "nDCG@10", "GMAP"}
    # a real collection has no truth: robustness has nothing to say at full judgments, and
    # the identity columns keep their types
    assert res["replicate"].dtype.kind == "i" and res["trial"].dtype.kind == "i"


def test_a_malformed_run_file_stops_the_study_before_any_task(tmp_path, trec_files):
    """The run files are read with the qrels before the tasks: a malformed one is one error
    naming its line, not a failure of every task."""
    import shutil

    from metaeval.data import TrecFormatError

    root = tmp_path / "data"
    shutil.copytree(trec_files, root)
    bad = sorted((root / "runs").glob("*.run"))[-1]
    lines = bad.read_text().splitlines(keepends=True)
    bad.write_text(
        "".join(lines[:2]) + lines[2].replace(lines[2].split()[4], "high") + "".join(lines[3:])
    )
    spec = load_spec(trec_spec(tmp_path, root))
    with pytest.raises(TrecFormatError, match=rf"{re.escape(bad.name)}, line 3: score 'high'"):
        run_study(spec, tmp_path / "out", jobs=1, quiet=True)
    assert not (tmp_path / "out" / "failures").exists()


def test_fold_grades_keeps_the_top_grades():
    from metaeval import Qrels

    q = Qrels.from_dict({"t": {"a": 0, "b": 1, "c": 2, "d": 3, "e": -1}})
    folded = q.fold_grades(2).to_dict()["t"]
    assert folded == {"a": 0, "b": 0, "c": 1, "d": 2, "e": -1}
    three = Qrels.from_dict({"t": {"a": 0, "b": 1, "c": 2}})
    assert three.fold_grades(2).to_dict() == three.to_dict()  # a 0-2 collection is unchanged
    binary = Qrels.from_dict({"t": {"a": 0, "b": 1, "c": -1}})
    assert binary.fold_grades(2).to_dict() == binary.to_dict()  # a binary one too
    with pytest.raises(ValueError, match="top_grades"):
        q.fold_grades(0)


CRITERION_PLUGIN = '''
from dataclasses import dataclass
from typing import ClassVar
import numpy as np
from metaeval.study import Criterion, register_criterion
from metaeval.study.criteria import rows
from simulators.degraders import Degrader, register_degrader

@register_criterion
@dataclass(frozen=True, kw_only=True)
class MeanScore(Criterion):
    """The mean of each measure's system scores: a user's criterion."""
    kind: ClassVar[str] = "mean_score"
    default_levels: ClassVar[str] = "all"
    def compute(self, ctx, measures):
        return {"results": rows([(m, "", "mean", np.nan, float(ctx.means(ctx.scores(m), m).mean()))
                                 for m in measures])}

@register_degrader
@dataclass(frozen=True, kw_only=True)
class KeepFirst(Degrader):
    """Keep the first n% of every topic's judgments, in qrels order: a user's degrader."""
    rates: tuple = (50,)
    name: ClassVar[str] = "keep_first"
    level_field: ClassVar[str] = "rates"
    random: ClassVar[bool] = False
    def levels(self):
        return list(self.rates)
    def _trial(self, qrels, tensor, rng):
        pos = np.arange(len(qrels)) - np.repeat(qrels.offsets[:-1], np.diff(qrels.offsets))
        size = np.repeat(np.diff(qrels.offsets), np.diff(qrels.offsets))
        return {r: pos < np.ceil(size * r / 100) for r in self.rates}
'''


def test_criterion_and_degrader_plugins(tmp_path, trec_files, registry):
    (tmp_path / "plugin.py").write_text(CRITERION_PLUGIN)
    text = TREC.format(
        root=trec_files,
        plugins='["plugin.py"]',
        method="keep_first",
        extra='[[criteria]]\nkind = "mean_score"\n',
    )
    # keep_first is deterministic: one trial
    spec = load_spec(write_spec(tmp_path, text.replace("trials = 2", ""), "plugged.toml"))
    summary = run_study(spec, tmp_path / "out", jobs=2, quiet=True)
    assert summary.complete, summary.failures
    res = load_results(tmp_path / "out")
    means = res[res["criterion"] == "mean_score"]
    assert set(means["level"]) == {"full", "50", "20"}
    full = means[(means["level"] == "full") & (means["measure"] == "AP")]["value"].iloc[0]
    assert 0 < full < 1


def test_another_version_refuses_to_resume(tmp_path, small_spec):
    spec = load_spec(small_spec(("AP", "P@5")))
    run_study(spec, tmp_path / "o", quiet=True)
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    manifest["versions"]["metaeval"] = "0.0.1"
    (tmp_path / "o" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="made by metaeval 0.0.1"):
        run_study(spec, tmp_path / "o", quiet=True)
    assert run_study(spec, tmp_path / "o", quiet=True, allow_version_change=True).tasks == 0


def test_sigterm_keeps_finished_tasks_and_exits_130(tmp_path, small_spec):
    path = small_spec()
    # 10 tasks: when two are saved, eight are left for the signal to stop
    path.write_text(path.read_text().replace("trials = 2", "trials = 4"))
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "metaeval",
            "study",
            "run",
            str(path),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--quiet",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    units = out / "results" / "units"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(units.glob("*.parquet"))) < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and err.strip().startswith("interrupted:"), err
    assert "Traceback" not in err
    saved = len(list(units.glob("*.parquet")))
    spec = load_spec(path)
    total = len(make_plan(spec).tasks)
    if saved < total:  # it was stopped before the end: the rest runs now, nothing again
        assert run_study(spec, out, quiet=True).tasks == total - saved
    assert len(load_results(out, "units")) == len(make_plan(spec).units)


def test_study_commands(tmp_path, small_spec, capsys):
    path = small_spec(("AP", "P@5"))
    out = tmp_path / "out"
    assert run(["study", "plan", str(path), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "6 tasks to run" in text and "robustness" in text
    assert "estimated time:" in text and "with 1 worker" in text
    assert run(["study", "run", str(path), "--out", str(out), "--jobs", "2", "--quiet"]) == 0
    assert run(["study", "plan", str(path), "--out", str(out)]) == 0
    assert "0 tasks to run" in capsys.readouterr().out
    assert run(["study", "status", str(out)]) == 0
    status = capsys.readouterr().out
    assert "0 failed tasks" in status and "units saved" in status
    assert run(["report", str(out)]) == 0
    assert (out / "report" / "index.html").is_file()
    bad = tmp_path / "bad.toml"
    bad.write_text(path.read_text().replace("seed = 7", "seed = -7"))
    assert run(["study", "run", str(bad)]) == 2
    assert "bad.toml: study.seed: must be a non-negative integer" in capsys.readouterr().err


def test_plan_saves_its_timings_and_later_plans_and_runs_reuse_them(tmp_path, small_spec, capsys):
    import json

    from metaeval.study import Store
    from metaeval.study.estimate import saved_estimate

    path = small_spec(("AP", "P@5"))
    out = tmp_path / "out"
    assert run(["study", "plan", str(path), "--out", str(out), "-j", "2"]) == 0
    first = capsys.readouterr().out
    assert "saved in estimate.json" in first
    saved = json.loads((out / "estimate.json").read_text())
    assert {c for _, c, _ in saved["unit_seconds"]} == {
        "robustness", "discriminative_power", "significance_changes", "stability", "agreement"
    }  # fmt: skip
    # the same study again: not timed, the same estimate
    assert run(["study", "plan", str(path), "--out", str(out), "-j", "2"]) == 0
    again = capsys.readouterr().out
    assert "timed by an earlier plan" in again
    estimate = re.compile(r"estimated time: (\d+) s of worker time, about (\d+) s")
    assert estimate.search(again).groups() == estimate.search(first).groups()
    # a folder holding only them is the store's own, and --replace keeps them; the run
    # weighs its progress by each task's estimated seconds
    assert run(["study", "run", str(path), "--out", str(out), "--replace"]) == 0
    assert re.search(r"tasks 6/6 done, 0 failed, ETA 0 s", capsys.readouterr().err)
    assert (out / "estimate.json").is_file()
    spec = load_spec(path)
    plan = make_plan(spec)
    cost, _ = saved_estimate(Store(out), spec, plan)
    weights = cost.task_seconds(plan)
    assert set(weights) == {t.id for t in plan.tasks} and min(weights.values()) > 0
    assert sum(weights.values()) == pytest.approx(cost.table["seconds"].sum())
    # the progress counts work by those seconds, not by tasks
    from metaeval.study.runner import _Progress

    bar = _Progress(2, 0, quiet=True, weights={"slow": 9.0, "fast": 1.0})
    bar.update(True, "slow")
    assert (bar.work, bar.work_done, bar.done) == (10.0, 9.0, 1)
    unweighted = _Progress(2, 0, quiet=True)
    unweighted.update(True, "slow")
    assert (unweighted.work, unweighted.work_done) == (2.0, 1.0)
    # another study file text: timed again
    path.write_text(path.read_text().replace("seed = 7", "seed = 8"))
    assert run(["study", "plan", str(path), "--out", str(tmp_path / "other")]) == 0
    assert "saved in estimate.json" in capsys.readouterr().out


def test_cost_estimate_covers_every_unit_left(small_spec):
    from metaeval.study import load_spec, make_plan
    from metaeval.study.estimate import estimate_cost

    spec = load_spec(small_spec(("AP", "P@5")))
    plan = make_plan(spec)
    done = {u.id for u in plan.units if u.criterion == "robustness"}
    rest = make_plan(spec, done)
    cost = estimate_cost(spec, rest)
    assert cost.table["units"].sum() == rest.n_missing < plan.n_missing
    assert "robustness" not in set(cost.table["criterion"])
    assert (cost.table["seconds"] > 0).all() and cost.seconds > 0
    assert cost.wall_seconds(2) < cost.seconds
    assert set(cost.load_seconds) == {"sim"} and cost.load_seconds["sim"][1] == 2  # replicates


def test_cost_estimate_times_units_as_tasks_run_them(small_spec, monkeypatch):
    # A unit's cost is its tests on the observed topics and on every topic resample, each
    # computed afresh: the probe's repeated calls must not find the first call's tests in a
    # cache, nor leave out the resamples (it did both, and estimated minutes for hours).
    from metaeval.meta import discrimination
    from metaeval.study import load_spec, make_plan
    from metaeval.study.estimate import estimate_cost

    calls = {"observed": 0, "resampled": 0}
    observed, resampled = discrimination.pair_tests, discrimination.pair_tests_many

    def count_observed(*args, **kwargs):
        calls["observed"] += 1
        return observed(*args, **kwargs)

    def count_resampled(*args, **kwargs):
        calls["resampled"] += 1
        return resampled(*args, **kwargs)

    monkeypatch.setattr(discrimination, "pair_tests", count_observed)
    monkeypatch.setattr(discrimination, "pair_tests_many", count_resampled)
    spec = load_spec(small_spec(("AP", "P@5")))
    spec = dataclasses.replace(
        spec, criteria=[c for c in spec.criteria if c.kind == "discriminative_power"]
    )
    assert spec.topic_resamples > 0
    estimate_cost(spec, make_plan(spec))
    # a warm-up call and at least one timed call, each with its own tests
    assert calls["observed"] >= 2 and calls["resampled"] >= 2


def test_criteria_commands_on_files(trec_files, capsys):
    qrels = str(trec_files / "qrels.txt")
    runs = sorted(str(p) for p in (trec_files / "runs").glob("*.run"))
    assert (
        run(
            [
                "robustness",
                qrels,
                *runs,
                "-m",
                "AP",
                "-m",
                "P@5",
                "--levels",
                "50,20",
                "--trials",
                "2",
                "-B",
                "200",
                "--seed",
                "1",
                "--format",
                "csv",
            ]
        )
        == 0
    )
    table = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert {"level", "measure", "statistic", "mean", "p025", "p975"} <= set(table.columns)
    assert set(table["statistic"]) >= {"tau_b", "tau_ap", "mean_drift", "power", "false_alarms"}
    assert (
        run(
            [
                "stability",
                qrels,
                *runs,
                "-m",
                "AP",
                "--sizes",
                "2,4",
                "--repeats",
                "5",
                "--seed",
                "1",
                "--format",
                "csv",
            ]
        )
        == 0
    )
    stab = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert set(stab["size"]) == {2, 4}
    assert run(["correlate", qrels, *runs, "-m", "AP", "-m", "nDCG@10", "-m", "P@5"]) == 0
    text = capsys.readouterr().out
    assert "tau_b" in text and "nDCG@10" in text
    assert run(["correlate", qrels, *runs, "-m", "AP"]) == 2
    assert np.isfinite(table["mean"]).any()


def test_an_unusable_scheduler_is_named_in_one_line(tmp_path, small_spec, capsys):
    pytest.importorskip("dask.distributed")
    code = run(
        [
            "study",
            "run",
            str(small_spec()),
            "--out",
            str(tmp_path / "o"),
            "--scheduler",
            "bogus://x",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2, err
    assert (
        "error: --scheduler bogus://x: cannot use the Dask scheduler (unknown address scheme" in err
    )


def test_a_trec_world_can_score_the_expected_value_over_tied_orderings(tmp_path, trec_files):
    from metaeval.study.spec import SpecError
    from metaeval.study.worlds import clear_cache, load_world

    plain = load_spec(trec_spec(tmp_path, trec_files))
    text = Path(trec_spec(tmp_path, trec_files)).read_text()
    tied_path = tmp_path / "tied.toml"
    tied_path.write_text(text.replace('kind = "trec"', 'kind = "trec"\nties = "expected"'))
    tied = load_spec(tied_path)
    # trec_eval's order keeps the identity earlier studies were saved under
    assert "ties" not in plain.worlds[0].identity()
    assert tied.worlds[0].identity()["ties"] == "expected"
    clear_cache()
    world = load_world(tied, "files", 0)
    assert world.tensor.ties is not None
    assert load_world(plain, "files", 0).tensor.ties is None
    tied_path.write_text(text.replace('kind = "trec"', 'kind = "trec"\nties = "random"'))
    with pytest.raises(SpecError, match="ties.*must be one of trec_eval, input, expected"):
        load_spec(tied_path)


def test_the_width_of_the_bounds_grows_as_judgments_are_removed(tmp_path, trec_files):
    from metaeval.report import write_report
    from metaeval.study.spec import SpecError

    path = trec_spec(tmp_path, trec_files, extra='[[criteria]]\nkind = "bound_width"')
    assert run_study(load_spec(path), tmp_path / "out", jobs=1, quiet=True).complete
    res = load_results(tmp_path / "out")
    width = res[res["statistic"] == "width"].groupby(["measure", "level"])["value"].mean()
    for m in ("AP", "nDCG@10", "GMAP"):
        assert width[(m, "full")] <= width[(m, "50")] <= width[(m, "20")], m
        assert width[(m, "20")] > 0
    page = write_report(tmp_path / "out", formats=["md"])["md"].read_text()
    assert "bound_width" in page and "width" in page
    # a measure without bounds is refused when the study is read
    Path(path).write_text(Path(path).read_text().replace('"nDCG@10"', '"Judged@10"'))
    with pytest.raises(SpecError, match="Judged@10 has none"):
        load_spec(path)
