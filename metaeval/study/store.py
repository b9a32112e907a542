"""Where a study keeps its results: atomic per-task parquet files, failures and a manifest.

Layout of an output folder::

    OUT/
      study.toml            the study file as last run
      spec.json             the study as last run, normalised: every default filled in, and
                            what each degrader's levels are (what a report reads)
      claims.json           its claims, checked and with measure names in their one spelling
      manifest.json         spec hash, seed, versions, platform, data SHA-256s, runs
      plan.parquet          every unit the current study file plans
      results/<table>/<task>.<part>.parquet
                            tidy rows; written under a temporary name, then renamed; the
                            ``units`` table is written last and is the commit record of a task:
                            its units, and the tables the task wrote with their row counts
      failures/<task>.json  the exception and traceback of a failed task, retried next run
      estimate.json         seconds per unit timed by ``metaeval study plan`` (for this study
                            file's text), reused by later plans and runs

Only the driver process writes, through :class:`Store`. A task's files appear completely or not
at all. A unit is done only when its task's commit record *and* every table file the record
names exist and read with the recorded number of rows: :func:`~metaeval.study.saved.read_saved`
alone decides it (:meth:`Store.saved` asks it), and planning, resuming,
:func:`~metaeval.study.saved.load_results`, ``metaeval study status`` and the report all ask
it. A study killed at any moment resumes where it stopped; a results file deleted or damaged
afterwards is recomputed at the next run, and the user is told. A unit's id holds everything
that changes its numbers (see :mod:`metaeval.study.plan`), and a folder made under another seed
refuses to take the results of this one, so results made under different settings are never
mixed.
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

from metaeval.study.plan import Plan, Task
from metaeval.study.saved import (
    _MANIFEST,
    _PLAN,
    _TABLES_KEY,
    _TMP,
    CORRUPT,
    UNITS,
    Saved,
    StoreError,
    _short,
    read_plan,
    read_saved,
    task_files,
)
from metaeval.study.seeding import short_id
from metaeval.study.spec import canonical_json, spec_as_dict

#: The study as last run, normalised (:func:`~metaeval.study.spec.spec_as_dict`).
SPEC = "spec.json"

#: The files of the folder's top level that belong to the store (``--replace`` removes them).
_OWN_FILES = (_PLAN, "claims.json", "study.toml", SPEC)
#: A plan's timings: the store's too, but kept by ``--replace`` (they are for a study file's
#: text, whatever results were saved).
_ESTIMATE = "estimate.json"


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


# ---------------------------------------------------------------------- the folder
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
        return self.root / _MANIFEST

    @property
    def plan_path(self) -> Path:
        return self.root / _PLAN

    def exists(self) -> bool:
        return self.manifest_path.is_file()

    # ------------------------------------------------------------------ what is done
    def saved(self) -> Saved:
        """Which units are done, and every saved file that does not count (and why): see
        :func:`~metaeval.study.saved.read_saved`, the one place that decides it. Reads only."""
        return read_saved(self.root)

    def done_units(self) -> frozenset[str]:
        """Ids of every done unit (see :meth:`saved`)."""
        return self.saved().done

    def planned(self) -> pd.DataFrame | None:
        """The units the study file as last run plans (``plan.parquet``), or None when the
        folder has no plan."""
        return read_plan(self.root)

    def repair(self, saved: Saved) -> None:
        """Make the folder hold only tasks that count, before a run recomputes the others:
        damaged files are moved aside (``*.corrupt``, kept for inspection), the commit record
        of a task with a missing or damaged file is removed, and so are the files of tasks
        without a commit record (every such task is recomputed and saved again)."""
        for problem in saved.problems:
            if problem.kind in ("unreadable", "changed", "record"):
                with contextlib.suppress(FileNotFoundError):
                    os.replace(problem.path, problem.path.with_name(problem.path.name + CORRUPT))
        for task in saved.broken:
            (self.results_dir / UNITS / task.name).unlink(missing_ok=True)
        keep = {t.name for t in saved.tasks}
        for path in task_files(self.root):
            if path.name not in keep:
                path.unlink(missing_ok=True)

    # ------------------------------------------------------------------ start
    def check(self, spec, *, allow_version_change: bool = False) -> dict:
        """The folder's manifest (empty for a new folder), once it is known that the folder
        may take the results of ``spec``: made by this metaeval version (unless allowed), for
        this study, with this seed.

        Raises
        ------
        StoreError
            One line saying what differs and what to do.
        """
        if not self.exists():
            return {}
        manifest = self.read_manifest()
        mine = versions()["metaeval"]
        theirs = manifest.get("versions", {}).get("metaeval")
        if theirs is not None and theirs != mine and not allow_version_change:
            raise StoreError(
                f"the results in {self.root} were made by metaeval {theirs}; this "
                f"is {mine}. Use another output folder, or allow adding to them "
                "(--allow-version-change)"
            )
        if manifest.get("study") not in (None, spec.name):
            raise StoreError(
                f"{self.root} holds the results of study {manifest['study']!r}, not "
                f"{spec.name!r}: use another output folder (--out), or --replace to discard "
                "the saved results"
            )
        if manifest.get("seed") is not None and manifest["seed"] != spec.seed:
            raise StoreError(
                f"{self.root} holds results made with seed {manifest['seed']}, and the study "
                f"file now has seed {spec.seed}: use another output folder (--out) to keep "
                "both, or --replace to discard the saved results"
            )
        return manifest

    def open(
        self,
        spec,
        plan: Plan,
        *,
        data: dict[str, str],
        executor: str,
        allow_version_change: bool = False,
        saved: Saved | None = None,
        worlds: dict | None = None,
    ) -> dict:
        """Prepare the folder for a run: check the manifest (:meth:`check`), clean temporary
        files, move damaged files aside (:meth:`repair`), save the study file as run, the
        normalised spec (``spec.json``), the plan and a manifest entry for this run (with
        ``worlds``, what the report says of each world). Returns the manifest."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            (self.results_dir / UNITS).mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise StoreError(
                f"cannot create the output folder {self.root}: {err.strerror}"
            ) from None
        manifest = self.check(spec, allow_version_change=allow_version_change)
        self.clean()
        self.repair(saved if saved is not None else self.saved())
        (self.root / "study.toml").write_text(spec.text, encoding="utf-8")
        _atomic_text(self.root / SPEC, canonical_json(spec_as_dict(spec)) + "\n")
        claims = [
            {"id": c.id, "text": c.text, "source": c.source, "check": c.check_dict()}
            for c in spec.claims
        ]
        _atomic_text(self.root / "claims.json", json.dumps(claims, indent=1) + "\n")
        _write_parquet(plan.frame(), self.plan_path)
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
                "worlds": worlds or {},
                "plan": {"units": plan.n_units, "tasks": len(plan.tasks), "done": plan.n_done},
                "runs": runs,
            }
        )
        # how the study file was changed on the command line (--world), for reproducing it
        if spec.world_args:
            manifest["world_args"] = list(spec.world_args)
        else:
            manifest.pop("world_args", None)
        self.write_manifest(manifest)
        return manifest

    def discard(self) -> None:
        """Remove everything the store saved here (results, failures, plan, claims, the study
        file as run and its normalised spec, and the manifest, last), and nothing else: other
        files and folders, such as a report, stay.

        Raises
        ------
        StoreError
            When the folder is not empty and has no manifest: it is not a study's, and is
            not ours to empty.
        """
        if not self.root.exists():
            return
        if not self.root.is_dir():
            raise StoreError(f"{self.root} is a file, not an output folder")
        if not self.manifest_path.exists() and any(
            p.name not in (*_OWN_FILES, _ESTIMATE) for p in self.root.iterdir()
        ):
            raise StoreError(
                f"{self.root} holds no study results (no manifest.json) and is not empty: "
                "--replace only discards a study's results; use another output folder (--out)"
            )
        owned = ("*.parquet", f"*.parquet{CORRUPT}", f"*{_TMP}-*")
        for folder in (
            [p for p in self.results_dir.iterdir() if p.is_dir()]
            if self.results_dir.is_dir()
            else []
        ):
            for pattern in owned:
                for path in folder.glob(pattern):
                    path.unlink(missing_ok=True)
        if self.failures_dir.is_dir():
            for path in self.failures_dir.glob("*.json"):
                path.unlink(missing_ok=True)
        for name in _OWN_FILES:
            (self.root / name).unlink(missing_ok=True)
        for folder in (
            [p for p in self.results_dir.iterdir() if p.is_dir()]
            if self.results_dir.is_dir()
            else []
        ):
            with contextlib.suppress(OSError):  # not empty: something that is not ours
                folder.rmdir()
        for folder in (self.results_dir, self.failures_dir):
            with contextlib.suppress(OSError):
                folder.rmdir()
        # last: a discard stopped half-way leaves a folder that is still ours to discard
        self.manifest_path.unlink(missing_ok=True)

    def finish(self, counts: dict) -> None:
        """Record the end of the current run in the manifest."""
        manifest = self.read_manifest()
        manifest["runs"][-1].update({"end": now(), **counts})
        self.write_manifest(manifest)

    def read_manifest(self) -> dict:
        """The manifest, or a :class:`StoreError` naming it and what to do."""
        try:
            manifest = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise StoreError(
                f"{self.root} is not a study output folder (no manifest.json)"
            ) from None
        except (OSError, ValueError) as err:
            raise StoreError(
                f"{self.manifest_path} cannot be read ({_short(err)}): restore it, or run the "
                f"study with --replace to discard the results saved in {self.root}"
            ) from None
        if not isinstance(manifest, dict):
            raise StoreError(
                f"{self.manifest_path} is not a study manifest: restore it, or run the study "
                f"with --replace to discard the results saved in {self.root}"
            )
        return manifest

    @property
    def estimate_path(self) -> Path:
        return self.root / _ESTIMATE

    def read_estimate(self) -> dict | None:
        """The timings a plan saved here, or None (none saved, or unreadable: they are only
        a guide, so a damaged file is timed again rather than an error)."""
        try:
            data = json.loads(self.estimate_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def write_estimate(self, data: dict) -> None:
        """Save a plan's timings (the folder is made if needed)."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            _atomic_text(self.estimate_path, json.dumps(data, indent=1, sort_keys=True) + "\n")
        except OSError as err:
            raise StoreError(
                f"cannot save the timings in {self.estimate_path}: {err.strerror}"
            ) from None

    def write_manifest(self, manifest: dict) -> None:
        _atomic_text(self.manifest_path, json.dumps(manifest, indent=1, sort_keys=True) + "\n")

    def clean(self) -> None:
        """Remove temporary files left by a run that was killed while writing."""
        if self.results_dir.is_dir():
            for tmp in self.results_dir.rglob(f"*{_TMP}*"):
                tmp.unlink(missing_ok=True)

    # ------------------------------------------------------------------ tasks
    def write_task(self, task: Task, tables: dict[str, pd.DataFrame]) -> None:
        """Save a finished task's tables; its units table last (the commit record), naming
        the tables written and their row counts, so that a file lost later is noticed."""
        part = short_id(sorted(u.id for u in task.units))
        name = f"{task.id}.{part}.parquet"
        written = {}
        for table, frame in sorted(tables.items()):
            if table != UNITS:
                _write_parquet(frame, self.results_dir / table / name)
                written[table] = len(frame)
        record = json.dumps(written, sort_keys=True).encode()
        _write_parquet(tables[UNITS], self.results_dir / UNITS / name, {_TABLES_KEY: record})
        self.clear_failure(task.id)

    def write_claims(self, frame: pd.DataFrame) -> None:
        """Save the outcomes of the analytic claims (computed by the driver)."""
        _write_parquet(frame, self.results_dir / "claims" / "analytic.parquet")

    def write_failure(self, task: Task, error: str, traceback: str) -> int:
        """Record a failed task; returns how many times it has failed."""
        path = self.failures_dir / f"{task.id}.json"
        attempts = 1
        if path.is_file():
            with contextlib.suppress(ValueError, AttributeError, TypeError):
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
        """The failure records (a damaged one says so instead of stopping the reader)."""
        if not self.failures_dir.is_dir():
            return []
        out = []
        for path in sorted(self.failures_dir.glob("*.json")):
            try:
                record = json.loads(path.read_text())
                if not isinstance(record, dict):
                    raise ValueError("not a failure record")
            except (OSError, ValueError):
                record = {"error": f"{path} cannot be read"}
            out.append({"task": path.stem, "attempts": "?", "error": "", **record})
        return out


# ---------------------------------------------------------------------- writing
def _write_parquet(frame: pd.DataFrame, path: Path, metadata: dict | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}{_TMP}-{os.getpid()}")
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if metadata:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata})
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def _atomic_text(path: Path, text: str) -> None:
    tmp = path.with_name(f"{path.name}{_TMP}-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


__all__ = ["Store", "versions", "SPEC"]
