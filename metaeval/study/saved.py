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
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from metaeval._validation import counted
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
            f"{counted(n, 'saved unit')} {'is' if n == 1 else 'are'} not in the current plan "
            "(the study file, its data, its "
            "plugins or metaeval changed since): kept but not used; --replace discards every "
            "saved result"
        )

    def _line(self, kind: str, found: list[Problem], running: bool, planned) -> str:
        one, first = len(found) == 1, found[0]
        others = counted(len(found) - 1, "other file")
        subject = str(first.path) if one else f"{first.path} and {others}"
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
            cost = f"{'its' if one else 'their'} {counted(n, 'unit')}"
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
            table = _read_arrow(path, ["unit"])
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


def _read_files(
    files: list[Path], columns: list[str] | None = None, *, objects: bool = False
) -> pd.DataFrame:
    """The rows of ``files``, concatenated. ``objects``: string columns as Python strings
    (object dtype, missing values NaN) rather than pandas' Arrow-backed strings."""
    if not files:
        return pd.DataFrame(columns=columns or [])
    tables = []
    for path in files:
        try:
            tables.append(_read_arrow(path, columns, dictionaries=objects))
        except Exception as err:  # its footer read, its data does not
            raise StoreError(
                f"{path} cannot be read ({_short(err)}): delete it and run the study again "
                "to recompute it"
            ) from None
    if objects and all(t.schema.equals(tables[0].schema) for t in tables[1:]):
        # one conversion of the files' rows (of one schema) instead of one per file: most
        # of the time of many small files
        return _to_pandas(pa.concat_tables(tables))
    convert = _to_pandas if objects else pa.Table.to_pandas
    return pd.concat([convert(t) for t in tables], ignore_index=True)


def _read_arrow(path: Path, columns: list[str] | None, *, dictionaries: bool = False) -> pa.Table:
    """One parquet file as an Arrow table (``dictionaries``: its string columns
    dictionary-encoded, as parquet stores them, so each distinct string is decoded once).

    Read through :class:`pyarrow.parquet.ParquetFile`, several times cheaper per file than
    :func:`pyarrow.parquet.read_table` (which sets up a dataset for every call); a file that
    does not read is read again by ``read_table`` so that the error is the one it words.
    """
    try:
        strings = None
        if dictionaries:
            schema = pq.read_schema(path)
            strings = [f.name for f in schema if _is_string(f.type)] or None
        with pq.ParquetFile(path, read_dictionary=strings) as parquet:
            return parquet.read(columns=columns)
    except Exception:
        return pq.read_table(path, columns=columns)  # raises, in its own words


def _is_string(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _to_pandas(table: pa.Table) -> pd.DataFrame:
    """An Arrow table as a DataFrame whose string columns hold Python strings (object dtype,
    missing values NaN, as pandas' own strings have them).

    Why: a report filters, groups and iterates the results thousands of times, and on
    Arrow-backed strings every boolean filter is an Arrow ``take`` per column and every
    iteration a boxing of each value; on object columns both are numpy operations. Each
    distinct string becomes one Python object, shared by the rows holding it.
    """
    # an index a file's pandas metadata names is left to pandas (it is not a column)
    stored = (table.schema.pandas_metadata or {}).get("index_columns", [])
    index = {i for i in stored if isinstance(i, str)}  # (a range index is not stored)
    strings = [
        name
        for name, field in zip(table.column_names, table.schema, strict=True)
        if name not in index
        and (
            _is_string(field.type)
            or (pa.types.is_dictionary(field.type) and _is_string(field.type.value_type))
        )
    ]
    rest = table.drop_columns(strings).to_pandas() if strings else table.to_pandas()
    if not strings:
        return rest
    # on the positions 0..n-1, as the string columns are (the rows are concatenated with
    # their index ignored in any case)
    rest = rest.reset_index(drop=True)
    columns = {}
    for name in table.column_names:
        if name in strings:
            columns[name] = pd.Series(_python_strings(table.column(name)), dtype=object)
        elif name in rest.columns:
            columns[name] = rest[name]
    return pd.DataFrame(columns)


def _python_strings(column: pa.ChunkedArray) -> np.ndarray:
    """A string column as an object array of Python strings, NaN where missing."""
    if not pa.types.is_dictionary(column.type):
        column = column.dictionary_encode()
    if column.num_chunks == 0:
        return np.empty(0, dtype=object)
    column = column.unify_dictionaries()  # every chunk's codes index one dictionary
    # interned: the same string read from several files is one object, which compares and
    # hashes by identity first
    words = [sys.intern(w) for w in column.chunk(0).dictionary.to_pylist()]
    # one more entry, NaN, for the missing values
    lookup = np.empty(len(words) + 1, dtype=object)
    lookup[:-1] = words
    lookup[-1] = np.nan
    codes = np.concatenate(
        [chunk.indices.fill_null(len(words)).to_numpy() for chunk in column.chunks]
    )
    return lookup[codes]


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
        Its string columns hold Python strings (object dtype, NaN where missing), which
        filter and group several times faster than Arrow-backed ones.

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
    # strings as Python objects: what is read here is filtered and grouped again and again
    frame = _read_files(saved.files(table), objects=True)
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
    return frame.take(_stable_order(frame, keys)).reset_index(drop=True)


def _stable_order(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """The positions of ``frame.sort_values(keys, kind="stable")`` (missing values last).

    Why: pandas sorts a column of Python strings by making it a categorical, which first
    copies every value into an Arrow string array; ranking each column's distinct values and
    sorting the ranks is the same order, without the copies. A column of another kind
    (not numbers, not strings) leaves the sort to pandas.
    """
    ranks = []
    for key in keys:
        values = frame[key].to_numpy()
        if values.dtype.kind in "biuf":
            ranks.append(values)  # numpy sorts NaN last, as pandas does
            continue
        if values.dtype != object:
            return frame.reset_index(drop=True).sort_values(keys, kind="stable").index.to_numpy()
        codes, distinct = pd.factorize(values)  # a missing value is -1
        try:
            rank = np.argsort(np.argsort(distinct, kind="stable"), kind="stable")
        except TypeError:  # values that do not compare (strings and numbers)
            return frame.reset_index(drop=True).sort_values(keys, kind="stable").index.to_numpy()
        ranks.append(np.append(rank, len(distinct))[codes])  # -1: last
    return np.lexsort(ranks[::-1]) if ranks else np.arange(len(frame))


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
