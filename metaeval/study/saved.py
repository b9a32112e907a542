"""What a study's output folder holds, checked, and reading its results.

A unit is done only when its task's commit record (its file in ``results/units/``) *and* every
table file the record names exist and read with the recorded number of rows. :func:`read_saved`
alone decides it, into a :class:`Saved`: the complete tasks, the broken ones, and every file that
does not count and why (a :class:`Problem`). Planning, resuming, :func:`load_results`,
``metaeval study status`` and the report all ask it, through :meth:`Store.saved
<metaeval.study.store.Store.saved>` or the readers here.

This module only reads; :mod:`metaeval.study.store` writes the folder (its layout is described
there). The names of the folder's files and the errors about them are defined here, once, for
both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from metaeval.study.plan import UNIT_COLUMNS

UNITS = "units"
RESULTS = "results"
#: Tables the driver writes itself, outside any task (no unit, no commit record).
DRIVER_TABLES = ("claims",)
_TMP = ".tmp"
#: The suffix a damaged file is moved aside with (it no longer matches ``*.parquet``).
CORRUPT = ".corrupt"
#: Key of a commit record's parquet metadata: the task's tables and their row counts.
_TABLES_KEY = b"metaeval.tables"
_MANIFEST = "manifest.json"
_PLAN = "plan.parquet"


class StoreError(ValueError):
    """An output folder that cannot take or give results as it is: the message is one line
    saying what differs or what is damaged, what is kept, and what to do."""


class StoreWarning(UserWarning):
    """Saved results that do not count (a file missing or damaged, units no longer planned)."""


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


def read_saved(root: str | Path) -> Saved:
    """Which units are done, and every saved file that does not count (and why).

    The one place that decides it: a unit is done when the commit record of its task
    (its ``units`` file) reads, and every table file the record names exists and holds
    the recorded number of rows (read from the file's footer, not its data). Reads only.
    """
    root = Path(root)
    results = root / "results"
    folder = results / UNITS
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
        found = [] if tables is None else _check_files(results, task)
        problems += found
        (broken if found else tasks).append(task)
    # the files of a task whose record is gone (deleted, or a run stopped between them)
    recorded = set(names)
    for name in sorted({p.name for p in task_files(root)} - recorded):
        problems.append(Problem("uncommitted", folder / name, _task_of(name)))
    return Saved(root, tuple(tasks), tuple(broken), tuple(problems))


def task_files(root: str | Path) -> list[Path]:
    """Every table file written by tasks (not the commit records, not the driver's)."""
    results = Path(root) / "results"
    if not results.is_dir():
        return []
    return [
        path
        for folder in sorted(results.iterdir())
        if folder.is_dir() and folder.name not in (UNITS, *DRIVER_TABLES)
        for path in sorted(folder.glob("*.parquet"))
    ]


def _check_files(results: Path, task: SavedTask) -> list[Problem]:
    """The problems of a task's table files (missing, unreadable, other rows)."""
    problems = []
    for table, rows in sorted(task.tables.items()):
        path = results / table / task.name
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


def read_plan(root: str | Path) -> pd.DataFrame | None:
    """The units the study file as last run plans (``plan.parquet``), or None when the
    folder has no plan."""
    path = Path(root) / _PLAN
    if not path.is_file():
        return None
    try:
        return pq.read_table(path).to_pandas()
    except Exception as err:
        raise StoreError(
            f"{path} cannot be read ({_short(err)}): run the study again to rewrite it"
        ) from None


# ---------------------------------------------------------------------- reading results
def read_table(root: str | Path, table: str, columns: list[str] | None = None) -> pd.DataFrame:
    """Every saved row of one table, concatenated, unfiltered by the plan.

    The rows of the tasks that count (:func:`read_saved`: commit record and every file
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
        files = read_saved(root).files(table)
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
    commit record and every file of the task are saved and read, see :func:`read_saved`)
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
    if not (root / _MANIFEST).is_file():
        raise StoreError(f"{root} is not a study output folder (no manifest.json)")
    if table in DRIVER_TABLES:  # the analytic claims: computed by the driver, not by units
        return read_table(root, table)
    saved = read_saved(root)
    planned = read_plan(root)
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


__all__ = [
    "Saved",
    "SavedTask",
    "Problem",
    "StoreError",
    "StoreWarning",
    "read_saved",
    "read_plan",
    "task_files",
    "read_table",
    "load_results",
    "UNITS",
    "RESULTS",
    "DRIVER_TABLES",
]
