"""Fast, strict parsing of whitespace-separated TREC files.

Two paths, one contract. The fast path hands the bytes to Arrow's multi-threaded CSV reader when
the file uses one single-character delimiter throughout (tab or space: what almost every real
run and qrels file does). Anything else (mixed tabs and runs of spaces, a malformed line) goes
through pandas' C tokenizer with a whitespace separator, which reads every field as text so that
each problem can be reported with the file, the physical line and what is wrong. Nothing is
parsed by a Python loop over lines; only the error path walks the lines, to turn a row number
into a line number.
"""

from __future__ import annotations

import gzip
import io
import os
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from metaeval.data.errors import TrecFormatError

PathLike = str | os.PathLike


def read_bytes(path: PathLike) -> bytes:
    """Read a file, transparently decompressing gzip (recognised by its magic number)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as err:
            raise TrecFormatError(path, None, f"corrupt gzip data ({err})") from None
    return raw


def _physical_lines(data: bytes) -> np.ndarray:
    """1-based line numbers of the non-blank lines, in order (error path only)."""
    lines = data.split(b"\n")
    return np.array([i + 1 for i, line in enumerate(lines) if line.strip()], dtype=np.int64)


def _sniff_delimiter(data: bytes, n_fields: int) -> str | None:
    """The single delimiter the first line uses, if splitting on it gives exactly n_fields."""
    first = data.lstrip().split(b"\n", 1)[0].rstrip(b"\r")
    for delim in (b"\t", b" "):
        parts = first.split(delim)
        if len(parts) == n_fields and all(p and not p.isspace() and p.strip() == p for p in parts):
            return delim.decode()
    return None


def _fast_table(data: bytes, names: list[str], types: dict[str, pa.DataType]) -> pa.Table | None:
    delim = _sniff_delimiter(data, len(names))
    if delim is None:
        return None
    try:
        table = pa_csv.read_csv(
            io.BytesIO(data),
            read_options=pa_csv.ReadOptions(column_names=names),
            parse_options=pa_csv.ParseOptions(
                delimiter=delim, quote_char=False, escape_char=False, ignore_empty_lines=True
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types=types, strings_can_be_null=False, quoted_strings_can_be_null=False
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None  # let the exact path find and report the problem
    return table


def _text_table(data: bytes, path: Path, names: list[str], kind: str, other_kind: str,
                other_fields: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Every field as text, through pandas' C tokenizer; wrong field counts are reported."""
    try:
        frame = pd.read_csv(
            io.BytesIO(data), sep=r"\s+", header=None, dtype=str, na_filter=False,
            skip_blank_lines=True, engine="c", quoting=3,
        )
    except pd.errors.ParserError as err:
        # pandas reports the physical line: "Expected 6 fields in line 7, saw 7".
        msg = str(err)
        line = None
        if " in line " in msg:
            try:
                line = int(msg.split(" in line ")[1].split(",")[0])
            except ValueError:
                line = None
        saw = msg.rsplit("saw ", 1)[-1].strip() if "saw " in msg else "?"
        raise TrecFormatError(
            path, line, f"expected {len(names)} fields for a {kind} file, found {saw}"
        ) from None
    lines = _physical_lines(data)
    n_cols = frame.shape[1]
    if n_cols != len(names):
        hint = ""
        if n_cols == other_fields:
            hint = f"; this looks like a {other_kind} file"
        raise TrecFormatError(
            path, int(lines[0]),
            f"expected {len(names)} fields for a {kind} file, found {n_cols}{hint}",
        )
    frame.columns = names
    # A short line leaves empty trailing fields (na_filter=False keeps them as "").
    short = (frame[names[-1]] == "").to_numpy()
    if short.any():
        row = int(np.flatnonzero(short)[0])
        raise TrecFormatError(path, int(lines[row]),
                              f"expected {len(names)} fields for a {kind} file, found fewer")
    return frame, lines


def parse_table(path: PathLike, *, kind: str) -> tuple[pa.Table, Callable[[int], int]]:
    """Parse a TREC run (kind="run") or qrels (kind="qrels") file into typed columns.

    Returns an Arrow table with columns ``topic, doc, score, tag`` (run) or ``topic, doc, grade``
    (qrels), ids as strings, in file order, and a function from a row of that table to its
    1-based physical line, so that later checks can name the line too.
    """
    path = Path(path)
    data = read_bytes(path)
    if not data.strip():
        raise TrecFormatError(path, None, f"empty file: no {kind} lines")
    if kind == "run":
        names = ["topic", "q0", "doc", "rank", "score", "tag"]
        types = {"topic": pa.string(), "q0": pa.string(), "doc": pa.string(),
                 "rank": pa.string(), "score": pa.float64(), "tag": pa.string()}
        other_kind, other_fields = "qrels", 4
    elif kind == "qrels":
        names = ["topic", "iteration", "doc", "grade"]
        types = {"topic": pa.string(), "iteration": pa.string(), "doc": pa.string(),
                 "grade": pa.int64()}
        other_kind, other_fields = "run", 6
    else:
        raise ValueError(f"kind must be 'run' or 'qrels', got {kind!r}")

    table = _fast_table(data, names, types)
    lines = None
    if table is None:
        frame, lines = _text_table(data, path, names, kind, other_kind, other_fields)
        table = pa.Table.from_pandas(frame, preserve_index=False)

    def line_of(row: int) -> int:
        nonlocal lines
        if lines is None:
            lines = _physical_lines(data)
        return int(lines[row])

    columns = {"topic": table["topic"].cast(pa.string()).combine_chunks(),
               "doc": table["doc"].cast(pa.string()).combine_chunks()}
    if kind == "run":
        score = table["score"]
        if not pa.types.is_floating(score.type):
            text = score.to_pandas()
            num = pd.to_numeric(text, errors="coerce")
            bad = num.isna().to_numpy()
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise TrecFormatError(path, line_of(row), f"score {text.iloc[row]!r} is not a number")
            score = pa.array(num.to_numpy(dtype=np.float64))
        values = np.asarray(score, dtype=np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise TrecFormatError(path, line_of(row),
                                  f"score {values[row]!r} is not finite (NaN or infinity)")
        columns["score"] = pa.array(values)
        columns["tag"] = table["tag"].cast(pa.string()).combine_chunks()
    else:
        grade = table["grade"]
        if not pa.types.is_integer(grade.type):
            text = grade.to_pandas().astype(str)
            num = pd.to_numeric(text, errors="coerce")
            bad = (num.isna() | (num != np.round(num))).to_numpy()
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise TrecFormatError(path, line_of(row),
                                      f"grade {text.iloc[row]!r} is not an integer")
            grade = pa.array(num.to_numpy(dtype=np.int64))
        values = np.asarray(grade, dtype=np.int64)
        too_big = values > 127
        if too_big.any():
            row = int(np.flatnonzero(too_big)[0])
            raise TrecFormatError(path, line_of(row),
                                  f"grade {values[row]} is above the largest supported grade, 127")
        # Any negative value means "pooled but not judged", as in trec_eval.
        columns["grade"] = pa.array(np.maximum(values, -1).astype(np.int8))
    return pa.table(columns), line_of
