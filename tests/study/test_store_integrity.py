"""A study folder never mixes results: seed and plugin edits, lost and damaged files.

Each fault ends either in a recomputation of exactly what it touched (and a line naming it) or
in one error line saying what differs and what to do; never in a silent wrong result.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from metaeval.study import load_results, load_spec, make_plan, run_study
from metaeval.study.saved import StoreError, StoreWarning
from metaeval.study.store import Store
from tests.study.conftest import write_spec

TINY = """
schema = 1

[study]
name = "tiny"
seed = {seed}
plugins = {plugins}

[[worlds]]
id = "sim"
kind = "simulator"
preset = "trec_like"
n_topics = 8
n_systems = 5
params = {{ n_candidates = 200, rel_median = 10.0, depth = 50, pool_depth = 10 }}

[[degraders]]
id = "bv"
method = "stratified"
levels = [50]
trials = 2

[measures]
names = {measures}

[[criteria]]
kind = "robustness"
against = ["full", "truth"]

[[criteria]]
kind = "agreement"
"""

# v1 is AP; the edit makes it 1 - AP (the reverse ranking)
PLUGIN = '''
from dataclasses import dataclass
from metaeval.measures import Measure, register
from metaeval.measures.binary import AP

@register
@dataclass(frozen=True, kw_only=True)
class Flip(Measure):
    """AP, or its complement."""
    name = "Flip"
    def _compute(self, tensor):
        return {expression}
'''


def tiny(folder: Path, *, seed=7, measures=("AP", "P@5"), plugins=(), name="tiny.toml") -> Path:
    text = TINY.format(
        seed=seed,
        measures=json.dumps(list(measures)),
        plugins=json.dumps(list(plugins)),
    )
    return write_spec(folder, text, name)


def run(path: Path, out: Path, **kwargs):
    return run_study(load_spec(path), out, quiet=True, **kwargs)


def files(out: Path) -> dict[str, bytes]:
    """Every results file of a folder (and its plan), by relative path."""
    paths = [*(out / "results").rglob("*.parquet"), out / "plan.parquet"]
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(paths)}


def task_file(out: Path, table: str, task: str) -> Path:
    (path,) = (out / "results" / table).glob(f"{task}.*.parquet")
    return path


def assert_same_results(a: Path, b: Path) -> None:
    for table in ("results", "units"):
        x, y = load_results(a, table), load_results(b, table)
        assert len(x) > 0
        pd.testing.assert_frame_equal(x, y)


# ------------------------------------------------------------------------------ the seed
def test_another_seed_is_refused_and_replace_equals_a_fresh_run(tmp_path, cli):
    out = tmp_path / "out"
    run(tiny(tmp_path), out)
    before = files(out)
    (out / "report").mkdir()
    (out / "report" / "index.md").write_text("an old report")
    eight = tiny(tmp_path, seed=8, name="eight.toml")

    code, _, err = cli(["study", "run", eight, "--out", out, "-q"])
    assert code == 2, err
    assert err.splitlines() == [
        f"error: {out} holds results made with seed 7, and the study file now has seed 8: use "
        "another output folder (--out) to keep both, or --replace to discard the saved results"
    ]
    assert files(out) == before  # nothing was touched
    with pytest.raises(StoreError, match="seed 7"):
        run(eight, out)

    code, _, err = cli(["study", "run", eight, "--out", out, "-q", "--replace"])
    assert code == 0, err
    run(eight, tmp_path / "fresh")
    assert files(out) == files(tmp_path / "fresh")  # the same files, the same bytes
    assert files(out) != before
    assert json.loads((out / "manifest.json").read_text())["seed"] == 8
    assert len(json.loads((out / "manifest.json").read_text())["runs"]) == 1
    assert (out / "report" / "index.md").read_text() == "an old report"  # not the store's


def test_the_seed_is_part_of_every_unit(tmp_path):
    seven = make_plan(load_spec(tiny(tmp_path)))
    eight = make_plan(load_spec(tiny(tmp_path, seed=8, name="eight.toml")))
    assert len(seven.units) == len(eight.units) == 7
    assert not {u.id for u in seven.units} & {u.id for u in eight.units}


def test_replace_refuses_a_folder_that_is_not_a_study(tmp_path, cli):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    code, _, err = cli(["study", "run", tiny(tmp_path), "--out", out, "-q", "--replace"])
    assert code == 2
    assert err.splitlines() == [
        f"error: {out} holds no study results (no manifest.json) and is not empty: --replace "
        "only discards a study's results; use another output folder (--out)"
    ]
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_dropped_units_are_named_and_left_out(tmp_path):
    out = tmp_path / "out"
    run(tiny(tmp_path, measures=("AP", "P@5", "nDCG@10")), out)
    with pytest.warns(StoreWarning, match=r": 5 saved units are not in the current plan"):
        summary = run(tiny(tmp_path, measures=("AP", "P@5")), out)
    assert summary.tasks == 0 and summary.done_before == 7 and len(summary.notices) == 1
    assert set(load_results(out)["measure"]) == {"AP", "P@5"}
    run(tiny(tmp_path, measures=("AP", "P@5"), name="fresh.toml"), tmp_path / "fresh")
    assert_same_results(out, tmp_path / "fresh")


# ------------------------------------------------------------------------------ plugins
def test_editing_a_plugin_recomputes_exactly_its_units(tmp_path, registry):
    plugin = tmp_path / "flip.py"
    plugin.write_text(PLUGIN.format(expression="AP().compute(tensor)"))
    path = tiny(tmp_path, measures=("AP", "P@5", "Flip"), plugins=["flip.py"])
    out = tmp_path / "out"
    run(path, out, jobs=2)
    before = load_results(out)
    units = make_plan(load_spec(path)).units
    flip = {u.id for u in units if "Flip" in (u.measure, u.other)}
    assert 0 < len(flip) < len(units)

    plugin.write_text(PLUGIN.format(expression="1.0 - AP().compute(tensor)"))
    spec = load_spec(path)
    plan = make_plan(spec, Store(out).done_units())
    assert {u.id for t in plan.tasks for u in t.units} == {
        u.id for u in plan.units if "Flip" in (u.measure, u.other)
    }
    assert len({u.id for u in plan.units} - {u.id for u in units}) == len(flip)
    with pytest.warns(
        StoreWarning, match=rf": {len(flip)} saved units are not in the current plan"
    ):
        summary = run(path, out, jobs=2)  # the first run's workers are reused: they reload
    assert summary.complete and summary.units == len(flip)
    after = load_results(out)

    def tau(frame, level):
        rows = frame[
            (frame["criterion"] == "agreement")
            & (frame["statistic"] == "tau_b")
            & (frame["measure"] == "AP")
            & (frame["other"] == "Flip")
            & (frame["level"] == level)
        ]
        return rows["value"].tolist()

    assert tau(before, "full") == [pytest.approx(1.0)]
    assert tau(after, "full") == [pytest.approx(-1.0)]  # the new code's numbers
    untouched = ~after["measure"].eq("Flip") & ~after["other"].eq("Flip")
    pd.testing.assert_frame_equal(
        after[untouched].reset_index(drop=True),
        before[~before["measure"].eq("Flip") & ~before["other"].eq("Flip")].reset_index(drop=True),
    )
    run(path, tmp_path / "fresh", jobs=1)
    assert_same_results(out, tmp_path / "fresh")


# ------------------------------------------------------------------------------ lost files
@pytest.mark.parametrize(
    ("table", "status", "warning"),
    [
        (
            "results",
            "{lost} is missing: its 2 units count as not saved; run the study again to "
            "recompute them",
            "{lost} is missing: its 2 units will be recomputed",
        ),
        (
            "units",
            "{lost} (the record of what task sim.r0.bv.t1 saved; its other files are there) "
            "is missing: the task counts as not saved; run the study again to recompute it",
            "{lost} (the record of what task sim.r0.bv.t1 saved; its other files are there) "
            "is missing: the task will be recomputed",
        ),
    ],
    ids=["results", "units"],
)
def test_a_deleted_file_is_named_and_recomputed(tmp_path, cli, table, status, warning):
    path = tiny(tmp_path)
    out = tmp_path / "out"
    run(path, out)
    whole = files(out)
    lost = task_file(out, table, "sim.r0.bv.t1")
    lost.unlink()

    code, text, err = cli(["study", "status", out])
    assert code == 0 and err == ""
    assert "5/7 units saved (incomplete)" in text
    assert f"  {status.format(lost=lost)}\n" in text
    with pytest.warns(StoreWarning, match="is missing"):
        assert len(load_results(out, "units")) == 5
    with pytest.warns(StoreWarning, match="is missing"):
        assert set(load_results(out)["trial"]) == {0}  # the full judgments and trial 0

    code, _, err = cli(["study", "run", path, "--out", out, "-q"])
    assert code == 0
    assert err.splitlines() == [f"warning: {warning.format(lost=lost)}"]
    assert files(out) == whole  # exactly that task again, the same bytes
    code, text, err = cli(["study", "status", out])
    assert "7/7 units saved;" in text and "missing" not in text + err


@pytest.mark.parametrize("table", ["results", "units"])
def test_a_truncated_file_is_named_moved_aside_and_recomputed(tmp_path, cli, table):
    path = tiny(tmp_path)
    out = tmp_path / "out"
    run(path, out)
    whole = files(out)
    damaged = task_file(out, table, "sim.r0.full.t0")
    damaged.write_bytes(damaged.read_bytes()[:200])

    code, text, err = cli(["study", "status", out])
    assert code == 0 and err == ""
    assert "4/7 units saved (incomplete)" in text
    assert f"{damaged}" in text and "cannot be read (truncated or damaged)" in text
    code, _, err = cli(["report", out, "--format", "md"])
    assert code == 0
    assert "4 of 7 planned units are saved" in (out / "report" / "index.md").read_text()
    assert f"warning: {damaged}" in err

    with pytest.warns(StoreWarning, match="cannot be read"):
        summary = run(path, out)
    assert summary.tasks == 1 and summary.done_before == 4
    (line,) = summary.notices
    assert line.startswith(f"{damaged}") and line.endswith(
        f"will be recomputed; the file is moved aside as {damaged.name}.corrupt"
    )
    assert damaged.with_name(damaged.name + ".corrupt").is_file()
    assert files(out) == whole


def test_a_file_with_other_rows_does_not_count(tmp_path):
    path = tiny(tmp_path)
    out = tmp_path / "out"
    run(path, out)
    whole = files(out)
    a, b = task_file(out, "results", "sim.r0.full.t0"), task_file(out, "results", "sim.r0.bv.t0")
    a.write_bytes(b.read_bytes())  # a file of another task, readable, with other rows
    saved = Store(out).saved()
    assert len(saved.done) == 4
    (line,) = saved.messages(running=False)
    assert line.startswith(f"{a} does not hold the rows that were saved (")
    with pytest.warns(StoreWarning, match="does not hold the rows"):
        assert run(path, out).tasks == 1
    assert files(out) == whole


def test_a_damaged_manifest_is_one_line(tmp_path, cli):
    path = tiny(tmp_path)
    out = tmp_path / "out"
    run(path, out)
    whole = files(out)
    (out / "manifest.json").write_text('{"study": "tin')
    expected = (
        f"error: {out / 'manifest.json'} cannot be read (Unterminated string starting at: "
        "line 1 column 11 (char 10)): restore it, or run the study with --replace to discard "
        f"the results saved in {out}"
    )
    for argv in (["study", "run", path, "--out", out, "-q"], ["study", "status", out]):
        code, _, err = cli(argv)
        assert (code, err.splitlines()) == (2, [expected])
    code, _, err = cli(["report", out])
    assert code == 2 and err.splitlines() == [expected]
    code, _, err = cli(["study", "run", path, "--out", out, "-q", "--replace"])
    assert code == 0, err
    assert files(out) == whole


# ------------------------------------------------------------------------------ agreement
def test_status_plan_load_results_and_report_agree(tmp_path, cli):
    path = tiny(tmp_path, measures=("AP", "P@5", "nDCG@10"))
    out = tmp_path / "out"
    run(path, out)
    task_file(out, "results", "sim.r0.bv.t0").unlink()
    units = task_file(out, "units", "sim.r0.full.t0")
    units.write_bytes(b"garbage")

    with pytest.warns(StoreWarning):
        saved = load_results(out, "units")
    per_criterion = saved.groupby("criterion").size().to_dict()
    code, text, _ = cli(["study", "status", out])
    assert code == 0
    for criterion, n in per_criterion.items():
        total = sum(u.criterion == criterion for u in make_plan(load_spec(path)).units)
        assert f"  {criterion}: {n}/{total} units" in text
    assert f"{len(saved)}/12 units saved (incomplete)" in text
    code, text, _ = cli(["study", "plan", path, "--out", out, "--no-estimate"])
    assert f"12 units, {len(saved)} saved in {out}; 2 tasks to run" in text
    assert Store(out).done_units() == frozenset(saved["unit"])
    with pytest.warns(StoreWarning):
        rows = load_results(out)
    assert set(saved["task"]) == {"sim.r0.bv.t1"} and set(rows["trial"]) == {1}
    assert set(rows["unit"]) == set(saved["unit"])


def test_audit_refuses_another_seed_and_takes_replace(tmp_path, cli):
    out = tmp_path / "out"
    run(tiny(tmp_path), out)
    eight = tiny(tmp_path, seed=8, name="eight.toml")
    code, _, err = cli(["audit", eight, "--out", out, "-q"])
    assert code == 2 and len(err.splitlines()) == 1
    assert "seed 7, and the study file now has seed 8" in err and "--replace" in err
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    code, _, err = cli(["audit", eight, "--out", other, "-q", "--replace"])
    assert code == 2 and "holds no study results (no manifest.json)" in err
    assert [p.name for p in other.iterdir()] == ["notes.txt"]


def test_another_number_of_topic_resamples_recomputes_the_resampled_units(tmp_path):
    """The resamples a unit saves are part of what it is: a study that asks for more of them
    plans new units for every resampled criterion."""
    path = tiny(tmp_path)
    spec = load_spec(path)
    before = {u.id for u in make_plan(spec).units}
    path.write_text(path.read_text().replace("seed = 7", "seed = 7\ntopic_resamples = 50"))
    after = {u.id for u in make_plan(load_spec(path)).units}
    assert before.isdisjoint(after)
    run_study(load_spec(path), tmp_path / "out", quiet=True)
    draws = load_results(tmp_path / "out", "resamples")
    assert {len(v) for v in draws["values"]} == {50}
    assert len(draws) == len(load_results(tmp_path / "out"))
