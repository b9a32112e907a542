"""Running studies: identical results whatever the executor, resumable, failures retried."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from metaeval.study import load_results, load_spec, make_plan, run_study
from metaeval.study.store import Store

ROOT = Path(__file__).resolve().parents[2]


def results(out, table="results") -> pd.DataFrame:
    return load_results(out, table).reset_index(drop=True)


def test_jobs_1_and_2_give_identical_results(small_spec, tmp_path):
    spec = load_spec(small_spec())
    one = run_study(spec, tmp_path / "one", jobs=1, quiet=True)
    two = run_study(spec, tmp_path / "two", jobs=2, quiet=True)
    assert one.complete and two.complete and one.tasks == two.tasks == 6
    for table in ("results", "units", "asl", "stability"):
        a, b = results(tmp_path / "one", table), results(tmp_path / "two", table)
        assert len(a) > 0
        if table == "units":
            a, b = a.drop(columns="task"), b.drop(columns="task")
        pd.testing.assert_frame_equal(a, b)
    # same files, same bytes
    for p in (tmp_path / "one" / "results").rglob("*.parquet"):
        q = tmp_path / "two" / p.relative_to(tmp_path / "one")
        assert p.read_bytes() == q.read_bytes(), p.name


def test_dask_local_cluster_gives_identical_results(small_spec, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    spec = load_spec(small_spec())
    run_study(spec, tmp_path / "loky", jobs=2, quiet=True)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        summary = run_study(spec, tmp_path / "dask", scheduler=client, quiet=True)
    assert summary.complete
    for table in ("results", "asl", "stability"):
        pd.testing.assert_frame_equal(
            results(tmp_path / "loky", table), results(tmp_path / "dask", table)
        )


def test_adding_a_measure_computes_only_that_measure(small_spec, tmp_path):
    out = tmp_path / "out"
    run_study(load_spec(small_spec(("AP", "P@5"))), out, quiet=True)
    before = results(out)
    spec3 = load_spec(small_spec(("AP", "P@5", "nDCG@10")))
    plan = make_plan(spec3, Store(out).done_units())
    new = {u.measure for t in plan.tasks for u in t.units} | {
        u.other for t in plan.tasks for u in t.units
    }
    assert new <= {"nDCG@10", "AP", "P@5", ""}
    assert all("nDCG@10" in (u.measure, u.other) for t in plan.tasks for u in t.units)
    summary = run_study(spec3, out, quiet=True)
    assert summary.done_before == len(make_plan(load_spec(small_spec(("AP", "P@5")))).units)
    after = results(out)
    # the old rows are untouched, and the whole equals a one-shot run of the three measures
    old = after[
        after["measure"].isin(["AP", "P@5"])
        & after["other"].isin(["", "AP", "P@5", "full", "truth", "effect"])
    ]
    pd.testing.assert_frame_equal(old.reset_index(drop=True), before)
    run_study(spec3, tmp_path / "oneshot", quiet=True)
    pd.testing.assert_frame_equal(after, results(tmp_path / "oneshot"))


PLUGIN = '''
from dataclasses import dataclass
from pathlib import Path
from metaeval.measures import Measure, register
from metaeval.measures.binary import AP

FLAG = Path(__file__).with_name("fail.flag")

@register
@dataclass(frozen=True, kw_only=True)
class Flaky(Measure):
    """AP, but raises while fail.flag exists."""
    name = "Flaky"
    def _compute(self, tensor):
        if FLAG.exists():
            raise RuntimeError("flaky measure failed on purpose")
        return AP().compute(tensor)
'''


def test_failed_task_is_recorded_retried_and_never_done(small_spec, tmp_path):
    (tmp_path / "flaky.py").write_text(PLUGIN)
    (tmp_path / "fail.flag").write_text("")
    text = (
        small_spec(("AP", "Flaky"))
        .read_text()
        .replace("seed = 7", 'seed = 7\nplugins = ["flaky.py"]')
    )
    path = tmp_path / "flaky.toml"
    path.write_text(text)
    out = tmp_path / "out"
    first = run_study(load_spec(path), out, quiet=True)
    assert first.failed == first.tasks and first.completed == 0
    failures = Store(out).failures()
    assert len(failures) == first.tasks
    assert "flaky measure failed on purpose" in failures[0]["error"]
    assert "Traceback" in failures[0]["traceback"]
    assert Store(out).done_units() == set()
    again = run_study(load_spec(path), out, quiet=True)
    assert again.tasks == first.tasks and Store(out).failures()[0]["attempts"] == 2
    (tmp_path / "fail.flag").unlink()
    last = run_study(load_spec(path), out, quiet=True)
    assert last.complete and Store(out).failures() == []
    assert len(Store(out).done_units()) == len(make_plan(load_spec(path)).units)


def test_sigkill_then_resume_equals_an_uninterrupted_run(small_spec, tmp_path):
    spec_path = small_spec()
    text = spec_path.read_text().replace("trials = 2", "trials = 6")
    spec_path.write_text(text)
    out = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "metaeval",
            "study",
            "run",
            str(spec_path),
            "--out",
            str(out),
            "--jobs",
            "1",
            "--quiet",
        ],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    units = out / "results" / "units"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(units.glob("*.parquet"))) < 3:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()  # reaps it and closes the stderr pipe
    saved = {p.name: p.stat().st_mtime_ns for p in units.glob("*.parquet")}
    spec = load_spec(spec_path)
    total = len(make_plan(spec).tasks)
    assert 3 <= len(saved) < total, "the study finished before it could be killed"
    resumed = run_study(spec, out, quiet=True)
    assert resumed.tasks == total - len(saved)
    for name, mtime in saved.items():  # nothing saved was recomputed
        assert (units / name).stat().st_mtime_ns == mtime
    run_study(spec, tmp_path / "whole", quiet=True)
    for table in ("results", "asl", "stability"):
        pd.testing.assert_frame_equal(results(out, table), results(tmp_path / "whole", table))


def _children(pid: int) -> set[int]:
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.add(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    """Running (a zombie has ended: it only waits for whoever reaps orphans)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_workers_leave_when_the_driver_is_killed(small_spec, tmp_path):
    spec_path = small_spec()
    spec_path.write_text(spec_path.read_text().replace("trials = 2", "trials = 12"))
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "metaeval", "study", "run", str(spec_path), "--out", str(out)]
        + ["--jobs", "2", "--quiet"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    units = out / "results" / "units"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(units.glob("*.parquet"))) < 2:
        time.sleep(0.05)
    workers = {
        pid
        for pid in _children(proc.pid)
        if "LokyProcess" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
    }
    assert workers, "no worker process found"
    os.kill(proc.pid, signal.SIGKILL)  # the driver only: its workers are orphaned
    proc.wait()
    deadline = time.time() + 90  # the watchdog looks every second; a busy machine is slower
    while time.time() < deadline and any(_alive(p) for p in workers):
        time.sleep(0.2)
    alive = [p for p in workers if _alive(p)]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, "workers outlived their driver"


def test_results_of_a_finished_study_are_complete(small_spec, tmp_path):
    spec = load_spec(small_spec())
    run_study(spec, tmp_path / "o", quiet=True)
    frame = results(tmp_path / "o")
    plan = make_plan(spec)
    assert set(frame["unit"]) <= {u.id for u in plan.units}
    assert set(results(tmp_path / "o", "units")["unit"]) == {u.id for u in plan.units}
    assert make_plan(spec, Store(tmp_path / "o").done_units()).tasks == ()
    assert list(frame.columns[:9]) == [
        "world",
        "replicate",
        "degrader",
        "level",
        "trial",
        "criterion",
        "measure",
        "other",
        "unit",
    ] or {"world", "level", "criterion", "measure", "statistic", "value"} <= set(frame.columns)


def test_load_results_reads_the_analytic_claims_table(tmp_path):
    """The driver saves the analytic claims without units of work: load_results still reads
    them (it used to fail with a bare KeyError)."""
    import json

    from metaeval.study.analytic import run_check

    (tmp_path / "manifest.json").write_text(json.dumps({"study": "x"}))
    check = {"kind": "analytic", "test": "value", "measure": "RBP(p=0.95)", "ideal": 10}
    Store(tmp_path).write_claims(run_check("SK8", {**check, "expect": 0.4013}))
    assert [p.parent.name for p in (tmp_path / "results").glob("*/*.parquet")] == ["claims"]
    assert list(load_results(tmp_path, "claims")["claim"]) == ["SK8"]


def test_a_warning_raised_in_workers_is_shown_once_by_the_driver(tmp_path, capfd):
    """Every task warns (the level is above every grade); with two worker processes the
    warning comes out once, in the command line's format, not raw from each worker."""
    from metaeval.cli import run

    spec = tmp_path / "warns.toml"
    spec.write_text(
        'schema = 1\n[study]\nname = "warns"\nseed = 1\ntopic_resamples = 10\n'
        '[[worlds]]\nid = "sim"\nkind = "simulator"\npreset = "trec_like"\nn_topics = 8\n'
        "n_systems = 5\nreplicates = 3\nparams = { n_candidates = 200, rel_median = 10.0, "
        "depth = 60, pool_depth = 15 }\n"
        '[measures]\nnames = ["AP", "P(rel=5)@10"]\n'
        '[[criteria]]\nkind = "discriminative_power"\nB = 50\n'
    )
    assert run(["study", "run", str(spec), "--out", str(tmp_path / "out"), "-j", "2", "-q"]) == 0
    err = capfd.readouterr().err
    assert err.count("rel=5 is above the highest grade") == 1, err
    assert err.startswith("warning: P(rel=5)@10") and "UserWarning" not in err
