"""Fast, strict parsing of whitespace-separated TREC files.

Two paths, one contract. The fast path hands the bytes to Arrow's multi-threaded CSV reader when
the file uses one single-character delimiter throughout (tab or space: what almost every real
run and qrels file does) and has no comment line. Anything else (mixed tabs and runs of spaces,
comments, a malformed line) goes through Arrow's vectorised whitespace split, which sees every
line, so each problem is reported with the file, the physical line and what is wrong. No Python
loop runs over the lines in either path.

Lines are read as trec_eval reads them: fields separated by any whitespace, blank lines and
lines whose first non-blank character is ``#`` skipped. trec_eval also ignores anything after a
run line's sixth field; metaeval reports it as an error unless ``extra_fields="ignore"``.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from metaeval.data.errors import TrecFormatError

PathLike = str | os.PathLike

_COMMENT = re.compile(rb"(?m)^[ \t]*#")
#: What bytes.strip() does not strip (ASCII whitespace is " \t\n\r\v\f").
_NON_SPACE = re.compile(rb"[^ \t\n\r\v\f]")
#: Spaces that look like a separator but are not one (trec_eval splits on ASCII whitespace).
_UNICODE_SPACE = re.compile("[\u00a0\u1680\u2000-\u200b\u202f\u205f\u3000\ufeff]")
EXTRA_FIELDS = ("error", "ignore")

_LAYOUT = {
    "run": (["topic", "q0", "doc", "rank", "score", "tag"], "qrels", 4),
    "qrels": (["topic", "iteration", "doc", "grade"], "run", 6),
}


_BOM = b"\xef\xbb\xbf"


try:
    # ISA-L's inflate (the isal package) gives the same bytes about 3x faster than zlib: a
    # third of the time spent reading a gzip run file (DL 2020: 0.21 s instead of 0.66 s
    # for the 59 runs' 150 MB). zlib when it is not installed.
    from isal import isal_zlib as _inflate
    from isal.isal_zlib import error as _InflateError
except ImportError:  # pragma: no cover - depends on the environment
    _inflate, _InflateError = zlib, zlib.error


def _gunzip(raw: bytes) -> bytes:
    """Gzip data decompressed in one call (the CRC is checked as it inflates); a file of
    several gzip members, which one inflater stops after the first of, goes through
    :mod:`gzip`."""
    inflater = _inflate.decompressobj(wbits=31)
    data = inflater.decompress(raw)
    if not inflater.eof or inflater.unused_data:
        return gzip.decompress(raw)
    return data


#: Compressed formats recognised by their magic number, with their decompressors.
_COMPRESSED = (
    (b"\x1f\x8b", "gzip", _gunzip),
    (b"BZh", "bz2", bz2.decompress),
    (b"\xfd7zXZ\x00", "xz", lzma.decompress),
)


#: Formats that are not text a TREC parser can read, recognised by their first bytes.
_UNREADABLE = (
    (b"PK\x03\x04", "is a zip archive, which is not read: unzip it (gzip, bz2 and xz are read)"),
    (b"\x28\xb5\x2f\xfd", "is zstd-compressed, which is not read: use gzip, bz2 or xz"),
    (b"7z\xbc\xaf\x27\x1c", "is a 7z archive, which is not read: use gzip, bz2 or xz"),
    (b"\xff\xfe", "is UTF-16 or UTF-32 text (byte-order mark FF FE): save it as UTF-8"),
    (b"\xfe\xff", "is UTF-16 text (byte-order mark FE FF): save it as UTF-8"),
)


def read_bytes(path: PathLike) -> bytes:
    """The text of a file as bytes: decompressed, without a byte-order mark, with ``\n`` lines.

    Every parser reads through here. Gzip, bz2 and xz files are recognised by their magic
    number, whatever their name. Pipes and process substitutions (``/dev/stdin``,
    ``<(zcat run.gz)``) are read like files. A UTF-8 byte-order mark is removed (left in, it
    would glue itself to the first topic id), and old Mac line endings (CR only, or a lone CR
    among LF lines) become newlines; CRLF is handled by the parsers. Archives, other
    compressions, UTF-16 text and files compressed twice are errors that say so.
    """
    path = Path(path)
    if path.is_dir():
        raise TrecFormatError(path, None, "is a directory, not a file")
    try:
        with open(path, "rb") as fh:  # open(), not stat(): pipes have no size to trust
            raw = fh.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    for magic, kind, decompress in _COMPRESSED:
        if raw.startswith(magic):
            try:
                raw = decompress(raw)
            except (
                OSError,
                EOFError,
                ValueError,
                lzma.LZMAError,
                zlib.error,
                _InflateError,
            ) as err:
                raise TrecFormatError(path, None, f"corrupt {kind} data ({err})") from None
            inner = next((k for m, k, _ in _COMPRESSED if raw.startswith(m)), None)
            if inner is not None:
                raise TrecFormatError(
                    path, None, f"is compressed twice ({inner} inside {kind}): decompress it once"
                )
            break
    for magic, problem in _UNREADABLE:
        if raw.startswith(magic):
            raise TrecFormatError(path, None, problem)
    if raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
    # Files concatenated with their marks (cat a b): each would glue to a topic. The one-byte
    # search first: the three-byte one alone takes about 40% of the time parsing takes.
    if b"\xef" in raw and _BOM in raw:
        raw = re.sub(rb"(^|\n)[ \t]*\xef\xbb\xbf", rb"\1", raw)
    if b"\r" in raw:
        if b"\n" not in raw:  # old Mac line endings
            raw = raw.replace(b"\r", b"\n")
        elif raw.count(b"\r") != raw.count(b"\r\n"):  # CR alone among LF or CRLF lines
            raw = re.sub(rb"\r(?!\n)", b"\n", raw)
    return raw


def _sniff_delimiter(data: bytes, n_fields: int) -> bytes | None:
    """The single delimiter of the first line, if splitting on it gives exactly n_fields."""
    # The first line after any leading whitespace, found without copying the file's text
    # (lstrip and split would copy it twice).
    start = _NON_SPACE.search(data)
    start = start.start() if start else len(data)
    end = data.find(b"\n", start)
    first = data[start : end if end >= 0 else len(data)].rstrip(b"\r")
    for delim in (b"\t", b" "):
        parts = first.split(delim)
        if len(parts) == n_fields and all(p and p.strip() == p for p in parts):
            return delim
    return None


def _fast_table(data: bytes, names: list[str], kind: str) -> pa.Table | None:
    """Arrow's CSV reader on a cleanly delimited file; None when the file needs the exact path."""
    delim = _sniff_delimiter(data, len(names))
    # A byte search first: the multi-line regex is slow on large files and rarely needed.
    if delim is None or (b"#" in data and _COMMENT.search(data)):
        return None
    if b"\x00" in data:  # Arrow would keep a NUL inside an id: the exact path names its line
        return None
    other = b" " if delim == b"\t" else b"\t"
    if other in data or b"\r" in data:  # a field could hold whitespace trec_eval splits on
        return None
    types = {name: pa.string() for name in names}
    types[names[4] if kind == "run" else names[3]] = pa.float64()
    if kind == "run":
        # The tag repeats on every line: as a dictionary it is stored once, not copied per
        # line (a fifth of the parse's time on DL 2020's runs).
        types["tag"] = pa.dictionary(pa.int32(), pa.string())
    try:
        return pa_csv.read_csv(
            # Arrow reads the bytes in place: no copy, and no call back into Python (which
            # would take the GIL from the threads reading other files).
            pa.BufferReader(data),
            # Arrow's own CSV threads can abort the process at exit (apache/arrow#34314);
            # read_runs parallelises across files instead.
            read_options=pa_csv.ReadOptions(column_names=names, use_threads=False),
            parse_options=pa_csv.ParseOptions(
                delimiter=delim.decode(),
                quote_char=False,
                escape_char=False,
                ignore_empty_lines=True,
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types=types,
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
                # Still counted on every line, but the Q0 / iteration and rank columns that
                # trec_eval ignores are never converted.
                include_columns=[n for n in names if n not in ("q0", "rank", "iteration")],
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None  # let the exact path find and report the problem


def _exact_table(
    data: bytes, path: Path, kind: str, extra_fields: str
) -> tuple[pa.Table, np.ndarray]:
    """Every line split on whitespace; returns the fields and each row's physical line."""
    names, other_kind, other_fields = _LAYOUT[kind]
    n = len(names)
    try:
        lines = pa.array(data.split(b"\n"), type=pa.binary()).cast(pa.string())
    except pa.ArrowInvalid:
        bad = next(i for i, line in enumerate(data.split(b"\n")) if not _is_utf8(line))
        raise TrecFormatError(path, bad + 1, "the line is not valid UTF-8 text") from None
    if b"\x00" in data:
        bad = data.count(b"\n", 0, data.index(b"\x00"))
        raise TrecFormatError(path, bad + 1, "the line holds NUL bytes: this is not a text file")
    # ASCII whitespace only, as trec_eval and the fast path: a no-break space is part of an id
    parts = pc.ascii_split_whitespace(pc.ascii_trim_whitespace(lines), max_splits=n - 1)
    count = pc.list_value_length(parts).to_numpy(zero_copy_only=False)
    first = pc.list_element(parts, 0)
    blank = pc.equal(first, "").to_numpy(zero_copy_only=False)
    comment = pc.starts_with(first, "#").to_numpy(zero_copy_only=False)
    keep = ~blank & ~comment
    if not keep.any():
        raise TrecFormatError(path, None, f"no {kind} lines (the file is blank or all comments)")
    rows = np.flatnonzero(keep)
    short = keep & (count < n)
    if short.any():
        i = int(np.flatnonzero(short)[0])
        found = int(count[i])
        hint = f"; this looks like a {other_kind} file" if found == other_fields else ""
        odd = _UNICODE_SPACE.search(lines[i].as_py())
        if odd:
            hint += f"; U+{ord(odd.group()):04X} is not a field separator (use spaces or tabs)"
        raise TrecFormatError(
            path, i + 1, f"expected {n} fields for a {kind} file, found {found}{hint}"
        )
    parts = parts.filter(pa.array(keep))
    columns = {name: pc.list_element(parts, j) for j, name in enumerate(names)}
    last = columns[names[-1]]
    extra = pc.match_substring_regex(last, r"[ \t\r\f\v]").to_numpy(zero_copy_only=False)
    if extra.any():
        i = int(np.flatnonzero(extra)[0])
        found = n + len(last[i].as_py().encode().split()) - 1
        if kind == "qrels" or extra_fields == "error":
            hint = ""
            if found == other_fields:
                hint = f"; this looks like a {other_kind} file"
            elif kind == "run":
                hint = (
                    " (trec_eval ignores trailing fields: read with extra_fields='ignore', "
                    "or --extra-fields ignore on the command line)"
                )
            raise TrecFormatError(
                path,
                int(rows[i]) + 1,
                f"expected {n} fields for a {kind} file, found {found}{hint}",
            )
        columns[names[-1]] = pc.list_element(pc.ascii_split_whitespace(last, max_splits=1), 0)
    return pa.table(columns), rows + 1


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def parse_table(
    path: PathLike, *, kind: str, extra_fields: str = "error"
) -> tuple[pa.Table, Callable[[int], int]]:
    """Parse a TREC run (kind="run") or qrels (kind="qrels") file into typed columns.

    Returns an Arrow table with columns ``topic, doc, score, tag`` (run) or ``topic, doc, grade``
    (qrels), ids as strings (the tag may be dictionary-encoded) and numbers as finite float64
    (a grade may be real-valued: what grades are allowed is
    :func:`metaeval.data.qrels.encode_grades`'s to say), in file order,
    and a function from a row of that table to its 1-based physical line, so that later checks
    can name the line too.
    """
    if kind not in _LAYOUT:
        raise ValueError(f"kind must be 'run' or 'qrels', got {kind!r}")
    if extra_fields not in EXTRA_FIELDS:
        raise ValueError(f"extra_fields must be one of {EXTRA_FIELDS}, got {extra_fields!r}")
    path = Path(path)
    data = read_bytes(path)
    if _NON_SPACE.search(data) is None:  # blank (strip() would copy the whole text)
        raise TrecFormatError(path, None, f"empty file: no {kind} lines")
    names = _LAYOUT[kind][0]
    table = _fast_table(data, names, kind)
    line_numbers = None
    if table is None:
        table, line_numbers = _exact_table(data, path, kind, extra_fields)

    def line_of(row: int) -> int:
        nonlocal line_numbers
        if line_numbers is None:  # the fast path skipped only blank lines
            line_numbers = _exact_table(data, path, kind, "ignore")[1]
        return int(line_numbers[row])

    def token(row: int) -> str:  # a number as written in the file (for error messages only)
        fields = data.split(b"\n", line_of(row))[line_of(row) - 1].split()
        j = 4 if kind == "run" else 3
        return fields[j].decode("utf-8", "replace") if j < len(fields) else "?"

    columns = {"topic": table["topic"].combine_chunks(), "doc": table["doc"].combine_chunks()}
    if kind == "run":
        columns["score"] = pa.array(_numbers(table["score"], path, line_of, token, what="score"))
        columns["tag"] = table["tag"].combine_chunks()
    else:
        # integer or real-valued; what a grade may be is the qrels' to say (encode_grades)
        columns["grade"] = pa.array(_numbers(table["grade"], path, line_of, token, what="grade"))
    return pa.table(columns), line_of


def _numbers(column, path: Path, line_of, token, *, what: str) -> np.ndarray:
    """A numeric column (``what``: "score" or "grade") as float64, checked finite; errors name
    the line and show the number as written (``token(row)``)."""
    if pa.types.is_floating(column.type) or pa.types.is_integer(column.type):
        values = np.asarray(column.to_numpy(), dtype=np.float64)
    else:
        text = column.to_pandas()
        values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        shown = token(row)
        if np.isnan(values[row]) and shown.lower().lstrip("+-") != "nan":
            problem = f"{what} {shown!r} is not a number"
        elif what == "score":
            problem = f"score {shown!r} is not finite (NaN, infinity, or beyond ±1.8e308)"
        else:
            problem = f"grade {shown!r} is not a finite number"
        raise TrecFormatError(path, line_of(row), problem)
    return values
