"""Reading and writing TREC run and qrels files (plain or gzip)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from metaeval._warnings import warn
from metaeval.data._arrow import as_string_array
from metaeval.data._parse import parse_table
from metaeval.data.errors import TrecFormatError
from metaeval.data.qrels import Qrels, encode_grades
from metaeval.data.run import Run, RunSet, check_ties

PathLike = str | os.PathLike


def read_qrels(path: PathLike) -> Qrels:
    """Read a TREC qrels file: ``topic iteration doc grade`` per line, whitespace-separated.

    The iteration column is ignored. Grades are integers (every TREC file) or real numbers
    (``0.5``, ``1.33``: judgments graded by a model or averaged over assessors; see
    :attr:`Qrels.levels`). A negative grade means "pooled but not judged" (kept as -1, as
    trec_eval does). Raises :class:`TrecFormatError` naming the file and line for a wrong
    number of fields (with a hint when the file looks like a run), a grade that is not a
    finite number, an integer grade above 127, or the same document judged twice with
    different grades, and naming the file for more than 127 distinct positive grades; exact
    duplicate lines are merged with a warning.
    """
    table, line_of = parse_table(path, kind="qrels")

    def fail(row, problem):
        raise TrecFormatError(path, None if row is None else line_of(row), problem)

    codes, levels = encode_grades(table["grade"].to_numpy(), fail)
    return Qrels(
        table["topic"], table["doc"], codes, levels=levels, source=Path(path), _line_of=line_of
    )


def read_run(
    path: PathLike, *, name: str | None = None, ties: str = "trec_eval", extra_fields: str = "error"
) -> Run:
    """Read a TREC run file: ``topic Q0 doc rank score tag`` per line, whitespace-separated.

    The run is named by its tag column (``name`` overrides it). A file whose lines carry
    several tags is read as one run named by the first tag, with a warning. Ranking order
    follows trec_eval (see :class:`Run`); the rank column is ignored.

    Blank lines and lines starting with ``#`` are skipped, as trec_eval skips them. A line with
    more than six fields is an error unless ``extra_fields="ignore"``, which drops the trailing
    fields as trec_eval does.
    """
    check_ties(ties)
    return _make_run(_parse_run(path, name, extra_fields), ties)


def _parse_run(path: PathLike, name: str | None, extra_fields: str):
    """The parsed columns of a run file, its name and the line of each row."""
    table, line_of = parse_table(path, kind="run", extra_fields=extra_fields)
    tags = table["tag"].combine_chunks()
    first = tags[0].as_py()
    # A dictionary of one tag (what reading almost always gives) needs no look at the rows.
    several = not pa.types.is_dictionary(tags.type) or len(tags.dictionary) > 1
    if name is None and several:
        changed = pc.not_equal(tags, first).to_numpy(zero_copy_only=False)
        if changed.any():
            row = int(np.flatnonzero(changed)[0])
            warn(
                f"{path}: several run tags in one file (first {first!r}, then "
                f"{tags[row].as_py()!r} at line {line_of(row)}); read as one run named "
                f"{first!r}"
            )
    return path, first if name is None else name, table, line_of


def _make_run(parsed, ties: str, interned=None) -> Run:
    path, name, table, line_of = parsed
    return Run(
        name,
        table["topic"],
        table["doc"],
        table["score"].to_numpy(),
        ties=ties,
        source=Path(path),
        _line_of=line_of,
        _interned=interned,
    )


def _workers(n_tasks: int) -> int:
    """Threads for ``n_tasks`` independent file tasks: no more than the CPUs this process may
    use (its affinity, not the machine's count: a process held to one CPU gains nothing from
    threads, and their switching costs)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(4, n_tasks, cpus or 1))


def _map(function, items: list, workers: int) -> list:
    if workers == 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(function, items))


#: Bits that keep the first n bytes of a little-endian word, by n.
_BYTE_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(8)], dtype=np.uint64)


def _numeric_ids(column: pa.ChunkedArray) -> np.ndarray | None:
    """Every id as the number it writes, when each is a decimal number written the one way
    (digits only, no leading zero, at most 18 digits), so that two ids are equal exactly when
    their numbers are; else None. MS MARCO's documents and passages are numbered so."""
    if not len(column) or not str(column[0].as_py()).isdigit():
        return None  # not worth a cast that will fail
    try:
        value = pc.cast(column, pa.int64()).to_numpy()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if value.max() >= 10**18:  # the judged ids are matched as numbers of up to 18 digits
        return None
    # "+5" and "05" cast to 5 too: each id must start with a digit other than 0, or be "0".
    for chunk in column.chunks:
        offsets = np.frombuffer(
            chunk.buffers()[1], dtype=np.int32, count=len(chunk) + 1, offset=4 * chunk.offset
        )
        lead = np.frombuffer(chunk.buffers()[2] or b"", dtype=np.uint8)[offsets[:-1]]
        if not (((lead >= 49) & (lead <= 57)) | ((lead == 48) & (np.diff(offsets) == 1))).all():
            return None
    return value


def _packed_ids(column: pa.ChunkedArray) -> np.ndarray | None:
    """Each id of at most 7 bytes as one integer (its bytes, and its length in the top byte),
    equal exactly when the ids are; None when some id is longer."""
    parts = []
    for chunk in column.chunks:
        offsets = np.frombuffer(
            chunk.buffers()[1], dtype=np.int32, count=len(chunk) + 1, offset=4 * chunk.offset
        )
        lengths = np.diff(offsets)
        if len(lengths) and lengths.max() > 7:
            return None
        data = np.frombuffer(chunk.buffers()[2] or b"", dtype=np.uint8)[: offsets[-1]]
        # Eight bytes from the start of every id, read as a word (zeros past the data's end),
        # keep the id's own bytes.
        padded = np.concatenate([data, np.zeros(8, dtype=np.uint8)])
        windows = np.lib.stride_tricks.as_strided(padded, (len(padded) - 7, 8), (1, 1))
        words = windows[offsets[:-1]].view("<u8").ravel()
        parts.append((words & _BYTE_MASKS[lengths]) | (lengths.astype(np.uint64) << np.uint64(56)))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)


def _intern(docs: list[pa.ChunkedArray]) -> tuple[pa.Array, list[np.ndarray], np.ndarray | None]:
    """One vocabulary for the documents of several runs, each run's rows as codes into it, and
    the numbers of the vocabulary's ids when they are numbered (ascending), else None.

    One hash of every retrieved id, which the duplicate check of each run would otherwise do
    on its own; an evaluation then matches the few hundred thousand distinct ids against the
    judgments instead of every one of the millions retrieved (see ``EvalTensor.build``).
    Codes number the ids in order of first appearance, or, when every id is a number written
    the one way, in order of their numbers.
    """
    column = pa.chunked_array([chunk for c in docs for chunk in c.chunks], type=pa.string())
    numbers, known = _numeric_ids(column), None
    # Numbered ids (MS MARCO): a table with a cell per number up to the largest (a byte,
    # then four), when that is not far beyond the rows' count; 0.2 s instead of 0.45 s for
    # DL 2020's 3 million ids.
    if numbers is not None and int(numbers.max()) <= 8 * len(numbers) + (1 << 20):
        present = np.zeros(int(numbers.max()) + 1, dtype=bool)
        present[numbers] = True
        known = np.flatnonzero(present)
        code_of = np.empty(len(present), dtype=np.int32)  # read only where present
        code_of[known] = np.arange(len(known), dtype=np.int32)
        codes = code_of[numbers]
        vocab = pc.cast(pa.array(known), pa.string())
    elif (packed := _packed_ids(column)) is not None:
        # Other ids of at most 7 bytes hash as integers: 0.5 s instead of 0.8 s for 3 million
        # ids, with the packing.
        codes, _ = pd.factorize(packed)
        # Codes in order of first appearance: an id appears first where the running
        # maximum of the codes grows.
        first = np.flatnonzero(np.diff(np.maximum.accumulate(codes), prepend=-1) > 0)
        vocab = column.take(first).combine_chunks()
        codes = codes.astype(np.int32)
    else:
        encoded = pc.dictionary_encode(column)
        # One hash table serves every chunk, and its codes never change as it grows: the
        # last chunk's dictionary holds every id, and the codes of every chunk index it.
        vocab = encoded.chunks[-1].dictionary
        codes = np.concatenate(
            [chunk.indices.to_numpy(zero_copy_only=False) for chunk in encoded.chunks]
        ).astype(np.int32, copy=False)
    bounds = np.cumsum([len(c) for c in docs])
    return vocab, np.split(codes, bounds[:-1]), known


def read_runs(
    paths: Iterable[PathLike], *, ties: str = "trec_eval", extra_fields: str = "error"
) -> RunSet:
    """Read several run files into a :class:`RunSet`.

    Runs are named by their tags. Two files with the same tag are kept apart: each such run is
    renamed ``"tag (file name)"`` with a warning, so no run silently replaces another.

    The runs' document ids are interned together (:attr:`Run.interned`): one vocabulary for
    all, which makes their evaluation match each distinct id once.
    """
    check_ties(ties)
    if isinstance(paths, (str, os.PathLike)):  # one path, not the characters of one
        paths = [paths]
    paths = [Path(p) for p in paths]
    if not paths:
        raise ValueError("paths is empty: give at least one run file")
    _check_distinct(paths)
    # Decompression and Arrow parsing release the GIL, so threads overlap files.
    workers = _workers(len(paths))
    parsed = _map(lambda p: _parse_run(p, None, extra_fields), paths, workers)
    vocab, codes, numbers = _intern([table["doc"] for _, _, table, _ in parsed])
    runs = _map(
        lambda i: _make_run(parsed[i], ties, (vocab, codes[i])), range(len(parsed)), workers
    )
    for run in runs:
        run._numbers = numbers
    counts = Counter(r.name for r in runs)
    clashes = {n for n, c in counts.items() if c > 1}
    if clashes:
        warn(
            f"several files carry the run tag(s) {sorted(clashes)}; those runs are named "
            "'tag (file name)' to keep them apart"
        )
        runs = [
            r.renamed(f"{r.name} ({p.name})") if r.name in clashes else r
            for r, p in zip(runs, paths)
        ]
        counts = Counter(r.name for r in runs)
        if any(c > 1 for c in counts.values()):  # same file name in different folders
            runs = [
                r.renamed(f"{r.name.rsplit(' (', 1)[0]} ({p})") if counts[r.name] > 1 else r
                for r, p in zip(runs, paths)
            ]
    return RunSet(runs)


def _file_identity(path: Path):
    """What makes two paths the same file: device and inode when it exists, else the text."""
    try:
        st = path.stat()
        return (st.st_dev, st.st_ino)
    except OSError:
        return os.path.abspath(path)


def _check_distinct(paths: list[Path]) -> None:
    seen: dict = {}
    for p in paths:
        key = _file_identity(p)
        if key in seen:
            same = "" if str(seen[key]) == str(p) else f" (also as {seen[key]})"
            raise ValueError(f"run file {p} is given twice{same}: each run file is read once")
        seen[key] = p


def _write_table(table: pa.Table, path: PathLike, what: str) -> None:
    """Write space-separated lines without a header, through Arrow (``.gz``: gzip)."""
    path = Path(path)
    options = pa_csv.WriteOptions(
        include_header=False, delimiter=" ", quoting_style="none", batch_size=1 << 16
    )
    try:
        if path.suffix == ".gz":
            with pa.CompressedOutputStream(str(path), "gzip") as sink:
                pa_csv.write_csv(table, sink, options)
        else:
            pa_csv.write_csv(table, str(path), options)
    except pa.ArrowInvalid as err:
        path.unlink(missing_ok=True)
        raise ValueError(
            f"{what} cannot be written as a TREC file: an id holds whitespace ({err})"
        ) from None


def _constant(text: str, n: int) -> pa.Array:
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int8)), pa.array([text]))


def write_qrels(qrels: Qrels, path: PathLike) -> None:
    """Write TREC qrels (``topic 0 doc grade``), sorted by topic and document; a ``.gz``
    suffix writes gzip.

    Integer grades are written as integers; real-valued grades as the shortest decimal that
    reads back as the same number (``0.5``, ``1.33``, ``2``), unjudged rows as ``-1``.
    """
    if not isinstance(qrels, Qrels):
        raise TypeError(f"qrels must be a Qrels, got {type(qrels).__name__}")
    n = len(qrels)
    table = pa.table(
        {
            "topic": pa.DictionaryArray.from_arrays(
                qrels.topic_index.astype(np.int32), as_string_array(qrels.topics)
            ),
            "iteration": _constant("0", n),
            "doc": qrels.docs,
            # Arrow writes a double as the shortest text that reads back as the same double
            "grade": qrels.grades if qrels.integer_grades else qrels.grade_values,
        }
    )
    _write_table(table, path, "the qrels")


def _run_table(run: Run) -> pa.Table:
    """A run as the six TREC columns, in ranking order; the repeated topic ids and the
    constant Q0 and tag columns are dictionary arrays, so no string is copied per line."""
    n, sizes = len(run), np.diff(run.offsets)
    topic = np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)
    rank = np.arange(1, n + 1, dtype=np.int64) - np.repeat(run.offsets[:-1], sizes)
    return pa.table(
        {
            "topic": pa.DictionaryArray.from_arrays(topic, as_string_array(run.topics)),
            "q0": _constant("Q0", n),
            "doc": run.docs,
            "rank": rank,
            # Arrow writes a double as the shortest text that reads back as the same double,
            # so the file ranks the documents exactly as the run does.
            "score": run.scores,
            "tag": _constant(run.name.replace(" ", "_"), n),
        }
    )


def write_run(run: Run, path: PathLike) -> None:
    """Write a TREC run (``topic Q0 doc rank score tag``) in ranking order; a ``.gz`` suffix
    writes gzip.

    Each score is written as the shortest decimal that reads back as the same double (``0.1``,
    ``1e-17``, ``-0``), so reading the file gives the same scores, hence the same ranking.
    The tag is the run's name with spaces replaced by ``_``.

    Raises
    ------
    ValueError
        When an id holds whitespace (a TREC file could not be read back).
    """
    if not isinstance(run, Run):
        raise TypeError(f"run must be a Run, got {type(run).__name__}")
    _write_table(_run_table(run), path, f"run {run.name!r}")


def write_runs(runs: RunSet, folder: PathLike) -> list[Path]:
    """Write every run of a RunSet to ``folder/<name>.run``; returns the paths.

    Runs are written on parallel threads (Arrow formats and writes without the GIL).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    runs = list(runs)
    paths = [folder / f"{run.name.replace('/', '_').replace(' ', '_')}.run" for run in runs]
    clash = [p.name for p, c in Counter(paths).items() if c > 1]
    if clash:
        raise ValueError(f"several runs would be written to the same file: {sorted(clash)}")
    workers = max(1, min(4, len(runs), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(write_run, runs, paths))
    return paths


__all__ = [
    "read_qrels",
    "read_run",
    "read_runs",
    "write_qrels",
    "write_run",
    "write_runs",
    "TrecFormatError",
]
