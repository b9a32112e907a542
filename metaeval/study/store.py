"""Where a study keeps its results: atomic per-task parquet files, failures and a manifest.

Layout of an output folder::

    OUT/
      study.toml            the study file as last run
      claims.json           its claims, checked and with measure names in their one spelling
      manifest.json         spec hash, seed, versions, platform, data SHA-256s, runs
      plan.parquet          every unit the current study file plans
      results/<table>/<task>.<part>.parquet
                            tidy rows; written under a temporary name, then renamed; the
                            ``units`` table is written last and is the commit record of a task:
                            its units, and the tables the task wrote with their row counts
      failures/<task>.json  the exception and traceback of a failed task, retried next run

Only the driver process writes. A task's files appear completely or not at all. A unit is done
only when its task's commit record *and* every table file the record names exist and read with
the recorded number of rows: :meth:`Store.saved` alone decides it, and planning, resuming,
:func:`load_results`, ``metaeval study status`` and the report all ask it. A study killed at
any moment resumes where it stopped; a results file deleted or damaged afterwards is recomputed
at the next run, and the user is told. A unit's id holds everything that changes its numbers
(see :mod:`metaeval.study.plan`), and a folder made under another seed refuses to take the
results of this one, so results made under different settings are never mixed.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from metaeval.study.plan import UNIT_COLUMNS, Plan, Task
from metaeval.study.seeding import short_id

UNITS = "units"
RESULTS = "results"
#: Tables the driver writes itself, outside any task (no unit, no commit record).
DRIVER_TABLES = ("claims",)
_TMP = ".tmp"
#: The suffix a damaged file is moved aside with (it no longer matches ``*.parquet``).
CORRUPT = ".corrupt"
#: Key of a commit record's parquet metadata: the task's tables and their row counts.
_TABLES_KEY = b"metaeval.tables"
#: The files of the folder's top level that belong to the store (``--replace`` removes them).
_OWN_FILES = ("plan.parquet", "claims.json", "study.toml")


class StoreError(ValueError):
    """An output folder that cannot take or give results as it is: the message is one line
    saying what differs or what is damaged, what is kept, and what to do."""


class StoreWarning(UserWarning):
    """Saved results that do not count (a file missing or damaged, units no longer planned)."""


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


# ---------------------------------------------------------------------- what is saved
@dataclass(frozen=True)
class SavedTask:
    """One commit record (a ``units`` file) that could be read."""

    name: str  # the file name every table file of the task shares: <task>.<part>.parquet
    units: frozenset[str]
    tables: dict[str, int] | None  # table -> rows; None: saved before records named tables

    @property
    def task(self) -> str:
        return _task_of(self.name)


@dataclass(frozen=True)
class Problem:
    """A saved file that does not count: ``kind`` is ``missing`` or ``unreadable`` (a table
    file a commit record names), ``changed`` (it reads, with other rows than were saved),
    ``record`` (the commit record itself cannot be read) or ``uncommitted`` (a task's files
    without their commit record, which is ``path``)."""

    kind: str
    path: Path
    task: str
    units: frozenset[str] = frozenset()
    detail: str = ""


@dataclass(frozen=True)
class Saved:
    """What an output folder holds, checked: the one answer to "which units are done".

    Attributes
    ----------
    tasks : tuple of SavedTask
        Complete tasks: the commit record and every table file it names read.
    broken : tuple of SavedTask
        Tasks whose record reads but one of whose files is missing or damaged.
    problems : tuple of Problem
        Every file that makes a task broken, every record that cannot be read, and every
        record missing beside its task's other files.
    """

    root: Path
    tasks: tuple[SavedTask, ...] = ()
    broken: tuple[SavedTask, ...] = ()
    problems: tuple[Problem, ...] = ()

    @cached_property
    def done(self) -> frozenset[str]:
        """Ids of the units whose results are all saved and readable."""
        return frozenset().union(*(t.units for t in self.tasks))

    @cached_property
    def recorded(self) -> frozenset[str]:
        """Ids of every unit a readable commit record names (done or not)."""
        return self.done.union(*(t.units for t in self.broken))

    def files(self, table: str) -> list[Path]:
        """The files of ``table`` that hold done units (one per complete task that wrote it)."""
        folder = self.root / "results" / table
        if table == UNITS:
            return [folder / t.name for t in self.tasks]
        return [
            folder / t.name
            for t in self.tasks
            if (table in t.tables if t.tables is not None else (folder / t.name).is_file())
        ]

    def lost(self, problem: Problem, planned: set[str] | frozenset[str] | None = None):
        """The units a problem leaves unsaved: not saved again since by another task, and
        (given ``planned``) still planned."""
        lost = problem.units - self.done
        return lost if planned is None else lost & planned

    def messages(self, *, running: bool, planned: set[str] | None = None) -> list[str]:
        """One line per kind of problem, naming the file (the first, and how many more):
        what happened, what it costs, what is done about it. ``running``: said by a run,
        which recomputes those units now and moves damaged files aside. ``planned``: the ids
        of the units planned (a problem costing only units no longer planned is not told)."""
        lines = []
        for kind in ("missing", "unreadable", "changed", "record", "uncommitted"):
            found = [
                p
                for p in self.problems
                if p.kind == kind and (kind in _WHOLE_TASK or self.lost(p, planned))
            ]
            if found:
                lines.append(self._line(kind, found, running, planned))
        return lines

    def unused(self, planned: set[str] | frozenset[str]) -> str | None:
        """A line saying how many saved units the plan no longer has, if any."""
        n = len(self.recorded - planned)
        if not n:
            return None
        return (
            f"{n} saved unit(s) are not in the current plan (the study file, its data, its "
            "plugins or metaeval changed since): kept but not used; --replace discards every "
            "saved result"
        )

    def _line(self, kind: str, found: list[Problem], running: bool, planned) -> str:
        one, first = len(found) == 1, found[0]
        subject = str(first.path) if one else f"{first.path} and {len(found) - 1} other file(s)"
        if kind in _WHOLE_TASK:  # the units it holds cannot be known: the task is
            tasks = ", ".join(p.task for p in found[:3]) + (", ..." if len(found) > 3 else "")
            subject += (
                f" (the record of what task {tasks} saved"
                if one
                else (f" (the records of what tasks {tasks} saved")
            )
            if kind == "uncommitted":
                subject += "; its other files are there" if one else "; their other files are there"
            subject += ")"
            cost = "the task" if one else "those tasks"
        else:
            n = len(frozenset().union(*(self.lost(p, planned) for p in found)))
            cost = f"{'its' if one else 'their'} {n} unit(s)"
        if kind in ("missing", "uncommitted"):
            what = "is missing" if one else "are missing"
        elif kind == "changed":
            what = (
                f"does not hold the rows that were saved ({first.detail})"
                if one
                else "do not hold the rows that were saved"
            )
        else:
            what = "cannot be read (truncated or damaged)"
        if running:
            tail = f"{cost} will be recomputed"
            if kind in ("unreadable", "changed", "record"):
                tail += (
                    f"; the file is moved aside as {first.path.name}{CORRUPT}"
                    if one
                    else f"; the files are moved aside (*{CORRUPT})"
                )
        else:
            singular = one and kind in _WHOLE_TASK
            tail = (
                f"{cost} {'counts' if singular else 'count'} as not saved; run the study again "
                f"to recompute {'it' if singular else 'them'}"
            )
        return f"{subject} {what}: {tail}"


#: Problems whose units cannot be read: their whole task counts as not saved.
_WHOLE_TASK = ("record", "uncommitted")


def _task_of(name: str) -> str:
    """The task id of a file ``<task>.<part>.parquet``."""
    stem = name[: -len(".parquet")] if name.endswith(".parquet") else name
    return stem.rsplit(".", 1)[0]


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
        return self.root / "manifest.json"

    @property
    def plan_path(self) -> Path:
        return self.root / "plan.parquet"

    def exists(self) -> bool:
        return self.manifest_path.is_file()

    # ------------------------------------------------------------------ what is done
    def saved(self) -> Saved:
        """Which units are done, and every saved file that does not count (and why).

        The one place that decides it: a unit is done when the commit record of its task
        (its ``units`` file) reads, and every table file the record names exists and holds
        the recorded number of rows (read from the file's footer, not its data). Reads only.
        """
        folder = self.results_dir / UNITS
        names = sorted(p.name for p in folder.glob("*.parquet")) if folder.is_dir() else []
        tasks, broken, problems = [], [], []
        for name in names:
            path = folder / name
            try:
                table = pq.read_table(path, columns=["unit"])
                units = frozenset(table.column("unit").to_pylist())
                meta = (table.schema.metadata or {}).get(_TABLES_KEY)
                tables = None if meta is None else {k: int(v) for k, v in json.loads(meta).items()}
            except Exception as err:  # whatever the damage: the record does not count
                problems.append(Problem("record", path, _task_of(name), detail=str(err)))
                continue
            task = SavedTask(name, units, tables)
            found = [] if tables is None else self._check_files(task)
            problems += found
            (broken if found else tasks).append(task)
        # the files of a task whose record is gone (deleted, or a run stopped between them)
        recorded = set(names)
        for name in sorted({p.name for p in self._task_files()} - recorded):
            problems.append(Problem("uncommitted", folder / name, _task_of(name)))
        return Saved(self.root, tuple(tasks), tuple(broken), tuple(problems))

    def _task_files(self) -> list[Path]:
        """Every table file written by tasks (not the commit records, not the driver's)."""
        if not self.results_dir.is_dir():
            return []
        return [
            path
            for folder in sorted(self.results_dir.iterdir())
            if folder.is_dir() and folder.name not in (UNITS, *DRIVER_TABLES)
            for path in sorted(folder.glob("*.parquet"))
        ]

    def _check_files(self, task: SavedTask) -> list[Problem]:
        """The problems of a task's table files (missing, unreadable, other rows)."""
        problems = []
        for table, rows in sorted(task.tables.items()):
            path = self.results_dir / table / task.name
            if not path.is_file():
                problems.append(Problem("missing", path, task.task, task.units))
                continue
            try:
                found = pq.read_metadata(path).num_rows
            except Exception as err:
                problems.append(Problem("unreadable", path, task.task, task.units, str(err)))
                continue
            if found != rows:
                detail = f"{found} rows, {rows} saved"
                problems.append(Problem("changed", path, task.task, task.units, detail))
        return problems

    def done_units(self) -> frozenset[str]:
        """Ids of every done unit (see :meth:`saved`)."""
        return self.saved().done

    def planned(self) -> pd.DataFrame | None:
        """The units the study file as last run plans (``plan.parquet``), or None when the
        folder has no plan."""
        if not self.plan_path.is_file():
            return None
        try:
            return pq.read_table(self.plan_path).to_pandas()
        except Exception as err:
            raise StoreError(
                f"{self.plan_path} cannot be read ({_short(err)}): run the study again to "
                "rewrite it"
            ) from None

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
        for path in self._task_files():
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
    ) -> dict:
        """Prepare the folder for a run: check the manifest (:meth:`check`), clean temporary
        files, move damaged files aside (:meth:`repair`), save the spec, the plan and a
        manifest entry for this run. Returns the manifest."""
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
                "plan": {"units": plan.n_units, "tasks": len(plan.tasks), "done": plan.n_done},
                "runs": runs,
            }
        )
        self.write_manifest(manifest)
        return manifest

    def discard(self) -> None:
        """Remove everything the store saved here (results, failures, plan, claims, the study
        file as run, and the manifest, last), and nothing else: other files and folders,
        such as a report, stay.

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
        if not self.manifest_path.exists() and any(self.root.iterdir()):
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


# ---------------------------------------------------------------------- reading
def read_table(root: str | Path, table: str, columns: list[str] | None = None) -> pd.DataFrame:
    """Every saved row of one table, concatenated, unfiltered by the plan.

    The rows of the tasks that count (:meth:`Store.saved`: commit record and every file
    present and readable), or, for a table the driver writes itself (``claims``), every file.
    """
    root = Path(root)
    folder = root / "results" / table
    if table in DRIVER_TABLES:
        files = (
            sorted(p for p in folder.glob("*.parquet") if _TMP not in p.name)
            if folder.is_dir()
            else []
        )
    else:
        files = Store(root).saved().files(table)
    return _read_files(files, columns)


def _read_files(files: list[Path], columns: list[str] | None = None) -> pd.DataFrame:
    if not files:
        return pd.DataFrame(columns=columns or [])
    frames = []
    for path in files:
        try:
            frames.append(pq.read_table(path, columns=columns).to_pandas())
        except Exception as err:  # its footer read, its data does not
            raise StoreError(
                f"{path} cannot be read ({_short(err)}): delete it and run the study again "
                "to recompute it"
            ) from None
    return pd.concat(frames, ignore_index=True)


def load_results(directory: str | Path, table: str = RESULTS) -> pd.DataFrame:
    """The tidy results of a study as one DataFrame.

    Reads only what the study saved: the rows of ``table`` whose unit is done (its task's
    commit record and every file of the task are saved and read, see :meth:`Store.saved`)
    and planned by the study file as last run (results of units that a later edit of the
    study file no longer plans are left out). A saved file that is missing or damaged is
    named in a :class:`StoreWarning` (its units are left out, and the next run recomputes
    them).

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

    Raises
    ------
    StoreError
        When the manifest or the plan cannot be read, or a file that seemed whole cannot.
    """
    from metaeval._warnings import warn

    root = Path(directory)
    store = Store(root)
    if not store.manifest_path.is_file():
        raise StoreError(f"{root} is not a study output folder (no manifest.json)")
    if table in DRIVER_TABLES:  # the analytic claims: computed by the driver, not by units
        return read_table(root, table)
    saved = store.saved()
    planned = store.planned()
    planned = None if planned is None else set(planned["unit"])
    for line in saved.messages(running=False, planned=planned):
        warn(line, StoreWarning)
    keep = saved.done if planned is None else saved.done & planned
    frame = _read_files(saved.files(table))
    if frame.empty or "unit" not in frame.columns:
        return frame
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


def _short(err: BaseException) -> str:
    """An error's text on one line, without pyarrow's long explanations."""
    text = " ".join(str(err).split()) or type(err).__name__
    return text if len(text) <= 120 else text[:117] + "..."


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


__all__ = [
    "Store",
    "Saved",
    "SavedTask",
    "Problem",
    "StoreError",
    "StoreWarning",
    "load_results",
    "read_table",
    "versions",
    "UNITS",
    "RESULTS",
    "DRIVER_TABLES",
]
