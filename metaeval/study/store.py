"""Where a study keeps its results: atomic per-task parquet files, failures and a manifest.

Layout of an output folder::

    OUT/
      study.toml            the study file as last run
      claims.json           its claims, checked and with measure names in their one spelling
      manifest.json         spec hash, seed, versions, platform, data SHA-256s, runs
      plan.parquet          every unit the current study file plans
      results/<table>/<task>.<part>.parquet
                            tidy rows; written under a temporary name, then renamed; the
                            ``units`` table is written last and is the commit record of a task
      failures/<task>.json  the exception and traceback of a failed task, retried next run

Only the driver process writes. A task's files appear completely or not at all, and a task
whose ``units`` file is missing never counts as done, so a study killed at any moment resumes
where it stopped and loses nothing that was saved.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from metaeval.study.plan import UNIT_COLUMNS, Plan, Task
from metaeval.study.seeding import short_id

UNITS = "units"
RESULTS = "results"
_TMP = ".tmp"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def versions() -> dict[str, str]:
    """Versions of what computes the numbers."""
    import numpy
    import scipy

    import metaeval

    return {
        "metaeval": metaeval.__version__,
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "pandas": pd.__version__,
        "pyarrow": pa.__version__,
        "python": platform.python_version(),
    }


class Store:
    """The output folder of one study."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    # ------------------------------------------------------------------ paths
    @property
    def results_dir(self) -> Path:
        return self.root / "results"

    @property
    def failures_dir(self) -> Path:
        return self.root / "failures"

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    def exists(self) -> bool:
        return self.manifest_path.is_file()

    # ------------------------------------------------------------------ start
    def open(
        self, spec, plan: Plan, *, data: dict[str, str], allow_version_change: bool, executor: str
    ) -> dict:
        """Prepare the folder for a run: check the manifest, clean temporary files, save the
        spec, the plan and a manifest entry for this run. Returns the manifest."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            (self.results_dir / UNITS).mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise OSError(f"cannot create the output folder {self.root}: {err.strerror}") from None
        manifest = self.read_manifest() if self.exists() else {}
        mine = versions()["metaeval"]
        theirs = manifest.get("versions", {}).get("metaeval")
        if theirs is not None and theirs != mine and not allow_version_change:
            raise ValueError(
                f"the results in {self.root} were made by metaeval {theirs}; this "
                f"is {mine}. Use another output folder, or allow adding to them "
                "(--allow-version-change)"
            )
        if manifest.get("study") not in (None, spec.name):
            raise ValueError(
                f"{self.root} holds the results of study {manifest['study']!r}, "
                f"not {spec.name!r}: choose another output folder"
            )
        self.clean()
        (self.root / "study.toml").write_text(spec.text, encoding="utf-8")
        claims = [
            {"id": c.id, "text": c.text, "source": c.source, "check": c.check_dict()}
            for c in spec.claims
        ]
        _atomic_text(self.root / "claims.json", json.dumps(claims, indent=1) + "\n")
        _write_parquet(plan.frame(), self.root / "plan.parquet")
        runs = manifest.get("runs", [])
        runs.append(
            {
                "start": now(),
                "end": None,
                "executor": executor,
                "planned_units": plan.n_units,
                "done_before": plan.n_done,
                "tasks": len(plan.tasks),
            }
        )
        manifest.update(
            {
                "study": spec.name,
                "spec_sha256": spec.digest(),
                # where the study file was read: its relative data paths are relative to it,
                # so the report's "reproduce" commands name it (the copy here is for reading)
                "spec_path": str(spec.path.resolve()) if spec.path is not None else None,
                "seed": spec.seed,
                "versions": versions(),
                "platform": platform.platform(),
                "data": data,
                "plan": {"units": plan.n_units, "tasks": len(plan.tasks), "done": plan.n_done},
                "runs": runs,
            }
        )
        self.write_manifest(manifest)
        return manifest

    def finish(self, counts: dict) -> None:
        """Record the end of the current run in the manifest."""
        manifest = self.read_manifest()
        manifest["runs"][-1].update({"end": now(), **counts})
        self.write_manifest(manifest)

    def read_manifest(self) -> dict:
        try:
            return json.loads(self.manifest_path.read_text())
        except (OSError, ValueError) as err:
            raise ValueError(f"{self.manifest_path} cannot be read: {err}") from None

    def write_manifest(self, manifest: dict) -> None:
        _atomic_text(self.manifest_path, json.dumps(manifest, indent=1, sort_keys=True) + "\n")

    def clean(self) -> None:
        """Remove temporary files left by a run that was killed while writing."""
        if self.results_dir.is_dir():
            for tmp in self.results_dir.rglob(f"*{_TMP}*"):
                tmp.unlink(missing_ok=True)

    # ------------------------------------------------------------------ tasks
    def done_units(self) -> set[str]:
        """Ids of every committed unit."""
        frame = read_table(self.root, UNITS, columns=["unit"])
        return set(frame["unit"]) if len(frame) else set()

    def write_task(self, task: Task, tables: dict[str, pd.DataFrame]) -> None:
        """Save a finished task's tables; its units table last (the commit record)."""
        part = short_id(sorted(u.id for u in task.units))
        name = f"{task.id}.{part}.parquet"
        for table, frame in sorted(tables.items()):
            if table != UNITS:
                _write_parquet(frame, self.results_dir / table / name)
        _write_parquet(tables[UNITS], self.results_dir / UNITS / name)
        self.clear_failure(task.id)

    def write_claims(self, frame: pd.DataFrame) -> None:
        """Save the outcomes of the analytic claims (computed by the driver)."""
        _write_parquet(frame, self.results_dir / "claims" / "analytic.parquet")

    def write_failure(self, task: Task, error: str, traceback: str) -> int:
        """Record a failed task; returns how many times it has failed."""
        path = self.failures_dir / f"{task.id}.json"
        attempts = 1
        if path.is_file():
            with contextlib.suppress(ValueError):
                attempts = int(json.loads(path.read_text()).get("attempts", 0)) + 1
        self.failures_dir.mkdir(parents=True, exist_ok=True)
        record = {
            "task": task.id,
            "error": error,
            "traceback": traceback,
            "attempts": attempts,
            "time": now(),
            "units": len(task.units),
        }
        _atomic_text(path, json.dumps(record, indent=1) + "\n")
        return attempts

    def clear_failure(self, task_id: str) -> None:
        (self.failures_dir / f"{task_id}.json").unlink(missing_ok=True)

    def failures(self) -> list[dict]:
        if not self.failures_dir.is_dir():
            return []
        return [json.loads(p.read_text()) for p in sorted(self.failures_dir.glob("*.json"))]


# ---------------------------------------------------------------------- reading
def read_table(root: str | Path, table: str, columns: list[str] | None = None) -> pd.DataFrame:
    """Every saved file of one table, concatenated (no filtering)."""
    folder = Path(root) / "results" / table
    files = (
        sorted(p for p in folder.glob("*.parquet") if _TMP not in p.name) if folder.is_dir() else []
    )
    if not files:
        return pd.DataFrame(columns=columns or [])
    frames = [pq.read_table(p, columns=columns).to_pandas() for p in files]
    return pd.concat(frames, ignore_index=True)


def load_results(directory: str | Path, table: str = RESULTS) -> pd.DataFrame:
    """The tidy results of a study as one DataFrame.

    Reads only what the study saved: the rows of ``table`` whose unit is committed (its task
    finished) and planned by the study file as last run (results of units that a later edit
    of the study file no longer plans are left out).

    Parameters
    ----------
    directory : str or Path
        The study's output folder.
    table : str
        ``"results"`` (one row per statistic: ``world, replicate, degrader, level, trial,
        criterion, measure, other, statistic, x, value``), ``"units"`` (what is done), a
        criterion's detail table (``"asl"``, ``"stability"``, ``"swap"``), or ``"claims"``
        (the outcomes of the analytic claims, which no unit of work computes).

    Returns
    -------
    pandas.DataFrame
    """
    root = Path(directory)
    if not (root / "manifest.json").is_file():
        raise FileNotFoundError(f"{root} is not a study output folder (no manifest.json)")
    units = read_table(root, UNITS, columns=["unit"])
    planned = (
        pq.read_table(root / "plan.parquet", columns=["unit"]).to_pandas()
        if (root / "plan.parquet").is_file()
        else units
    )
    keep = set(units["unit"]) & set(planned["unit"])
    frame = read_table(root, table)
    if frame.empty or "unit" not in frame.columns:
        return frame  # the analytic claims: computed by the driver, not by units of work
    frame = frame[frame["unit"].isin(keep)]
    order = [c for c in UNIT_COLUMNS if c in frame.columns and c not in ("unit", "task")]
    extra = [c for c in frame.columns if c not in UNIT_COLUMNS]
    last = [c for c in ("task", "unit") if c in frame.columns]
    frame = frame[order + extra + last]
    keys = order + [
        c
        for c in ("statistic", "x", "rank", "size", "repeat", "topic_set_size", "bin")
        if c in extra
    ]
    return frame.sort_values(keys, kind="stable").reset_index(drop=True)


# ---------------------------------------------------------------------- writing
def _write_parquet(frame: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}{_TMP}-{os.getpid()}")
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp)
    os.replace(tmp, path)


def _atomic_text(path: Path, text: str) -> None:
    tmp = path.with_name(f"{path.name}{_TMP}-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


__all__ = ["Store", "load_results", "read_table", "versions", "UNITS", "RESULTS"]
