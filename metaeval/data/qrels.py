"""Relevance judgments (qrels), with integer or real-valued grades.

A judgment's grade is stored as a small integer *code* (int8): -1 for a document in the pool
but not judged (any negative grade, trec_eval's convention), and 0, 1, 2... for the judged
ones. What a code means is :attr:`Qrels.levels`, the grade value of every code, strictly
increasing from ``levels[0] == 0.0``:

* integer grades (every TREC qrels file): ``levels = 0, 1, ..., c``, so the code is the grade;
* real-valued grades (graded by a model, averaged over assessors: 0, 0.5, 1.33, 2): ``levels``
  is 0.0 followed by the distinct positive grades in increasing order, and a judgment's code is
  the position of its grade there. At most 127 distinct positive grades fit in the codes.

Everything that reads grades as values (the gains of graded measures, the threshold ``rel`` of
binary ones, the tables and files written back) goes through the levels; everything else (the
evaluation tensor, degraders, counts per grade) works on the codes, as it always did.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from metaeval._validation import shown_ids
from metaeval._warnings import warn
from metaeval.data._arrow import as_string_array, blocks, pair_keys
from metaeval.data.errors import TrecFormatError

#: Grade stored for a document that is in the pool but was not judged (trec_eval's qrels -1).
POOLED_UNJUDGED = -1
#: The highest grade code: codes are int8, so at most 127 distinct positive grades (and the
#: integer grades 0..127).
MAX_CODE = 127

_TOPIC_ALIASES = ("topic", "query_id", "qid", "query")
_DOC_ALIASES = ("doc", "doc_id", "docno", "docid")
_GRADE_ALIASES = ("grade", "relevance", "rel", "label")


def _pick(frame: pd.DataFrame, given: str | None, aliases: tuple[str, ...], what: str) -> str:
    if given is not None:
        if given not in frame.columns:
            raise ValueError(
                f"{what} column {given!r} not in the table (columns: {list(frame.columns)})"
            )
        return given
    for name in aliases:
        if name in frame.columns:
            return name
    raise ValueError(
        f"no {what} column: expected one of {list(aliases)}, found {list(frame.columns)}"
    )


def _check_ids(source, ids: dict, prefix: str = "") -> None:
    """Ids are text: a missing (null) topic or document id is an error, not an id "None"."""
    for what, values in ids.items():
        if values.null_count:
            i = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
            raise TrecFormatError(source, None, f"{prefix}{what} id of row {i} is missing (null)")


def _check_id_columns(frame: pd.DataFrame, columns: dict) -> None:
    for what, col in columns.items():
        missing = frame[col].isna().to_numpy()
        if missing.any():
            i = int(np.flatnonzero(missing)[0])
            raise ValueError(
                f"{what} column {col!r}, row {i}: {frame[col].iloc[i]!r} is not a {what} id"
            )


def _check_nested(data: Mapping, name: str, value: str) -> None:
    """``{topic: {doc: value}}``: every topic maps to a mapping."""
    for topic, docs in data.items():
        if not isinstance(docs, Mapping):
            raise TypeError(
                f"{name}[{topic!r}] must be a mapping doc -> {value}, got {type(docs).__name__}"
            )


def format_grade(value) -> str:
    """A grade as users write it: ``2`` for 2.0, ``0.5``, ``1.33`` (the shortest text that
    reads back as the same number)."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def encode_grades(values, fail=None, shown=None) -> tuple[np.ndarray, np.ndarray]:
    """Grade values as int8 codes and the levels the codes stand for.

    Parameters
    ----------
    values : array of numbers
        One grade per judgment; any negative grade means pooled but unjudged (code -1).
    fail : callable, optional
        ``fail(row, problem)`` raises the caller's error for the grade at position ``row``
        (None: a problem of the whole set); default a ValueError with the problem.
    shown : callable, optional
        ``shown(row)``: the grade at ``row`` as its source wrote it, for messages; default the
        number itself.

    Returns
    -------
    codes : ndarray of int8
        -1 for unjudged, else the position of the grade in ``levels``.
    levels : ndarray of float64
        ``arange(c + 1)`` when every grade is an integer (c the highest; the code is the
        grade), else 0.0 and the distinct positive grades, increasing.

    Raises
    ------
    ValueError
        (through ``fail``) For a grade that is not a finite number, an integer grade above 127,
        or more than 127 distinct positive grades.
    """

    def refuse(row, problem):
        if fail is not None:
            fail(row, problem)
        raise ValueError(problem if row is None else f"row {row}: {problem}")

    def show(row: int) -> str:
        return shown(row) if shown is not None else format_grade(values[row])

    values = np.asarray(values)
    if values.dtype.kind == "b":
        values = values.astype(np.int8)
    if values.dtype.kind not in "iuf":
        try:
            values = values.astype(np.float64)
        except (TypeError, ValueError):
            refuse(None, "grades must be numbers")
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            refuse(row, f"grade {show(row)!r} is not a finite number")
    judged = values >= 0
    positive = values[judged]
    if values.dtype.kind != "f" or np.array_equal(positive, np.floor(positive)):
        # Integer grades: the code is the grade, as it always was.
        top = values.max(initial=-1)
        if top > MAX_CODE:
            row = int(np.argmax(values))
            refuse(
                row,
                f"grade {show(row)} is above the largest supported integer grade, {MAX_CODE}",
            )
        # any negative grade (-3, -0.5) is unjudged: -1, never truncated towards 0
        codes = np.where(judged, values, -1).astype(np.int8)
        return codes, np.arange(max(int(top), 0) + 1, dtype=np.float64)
    levels = np.unique(np.concatenate([[0.0], positive.astype(np.float64)]))
    levels[0] = 0.0  # a -0.0 grade is grade 0
    if len(levels) - 1 > MAX_CODE:
        refuse(
            None,
            f"{len(levels) - 1} distinct grades above 0, more than the {MAX_CODE} supported "
            "(a grade is stored in one byte): round the grades, e.g. to 2 decimals",
        )
    codes = np.where(judged, np.searchsorted(levels, values), -1).astype(np.int8)
    return codes, levels


def _check_levels(levels, codes: np.ndarray) -> np.ndarray:
    levels = np.array(levels, dtype=np.float64)  # a copy: the Qrels owns it
    if levels.ndim != 1 or not len(levels) or levels[0] != 0.0:
        raise ValueError(f"levels must be a 1-d array starting with 0.0, got {levels!r}")
    if not np.isfinite(levels).all() or (np.diff(levels) <= 0).any():
        raise ValueError(f"levels must be finite and strictly increasing, got {levels!r}")
    if len(codes) and (codes.min() < POOLED_UNJUDGED or codes.max() >= len(levels)):
        raise ValueError(
            f"grade codes must lie in [{POOLED_UNJUDGED}, {len(levels) - 1}] for "
            f"{len(levels)} levels, got [{codes.min()}, {codes.max()}]"
        )
    return levels


class Qrels:
    """Graded relevance judgments: one grade per (topic, document).

    Grades are numbers, 0 = judged non-relevant and higher = more relevant: small integers as
    in every TREC file, or real values (0.5, 1.33) from graded or averaged judgments. A
    negative grade means "pooled but not judged" (trec_eval's convention, used by infAP). Each
    grade is stored as an int8 code (:attr:`grades`, -1 for unjudged) into :attr:`levels`,
    the grade value of each code (see the module's docstring); for integer grades code and
    grade are the same. Rows are kept sorted by topic and document, so every topic's
    judgments are one contiguous block: that block is the topic's *judgment table*, which an
    :class:`~metaeval.engine.EvalTensor` indexes.

    Build one with :func:`metaeval.read_qrels`, :meth:`from_df` or :meth:`from_dict`. The
    constructor takes grade values (``levels=None``), or codes into the given ``levels``.
    """

    def __init__(
        self,
        topics: pa.Array,
        docs: pa.Array,
        grades: np.ndarray,
        *,
        levels: np.ndarray | None = None,
        source: str | Path | None = None,
        _line_of=None,
    ):
        if levels is None:
            codes, levels = encode_grades(grades)
        else:
            codes = np.asarray(grades)
            if codes.dtype.kind not in "iu":
                raise TypeError(f"grade codes must be integers, got {codes.dtype}")
            codes = np.maximum(codes, POOLED_UNJUDGED)  # any negative code: unjudged
            levels = _check_levels(levels, codes)
        frame = pa.table(
            {
                "topic": as_string_array(topics),
                "doc": as_string_array(docs),
                "grade": pa.array(codes.astype(np.int8)),
            }
        )
        if frame.num_rows == 0:
            raise TrecFormatError(source, None, "no judgments: the qrels are empty")
        _check_ids(source, {"topic": frame["topic"], "document": frame["doc"]})
        order = pc.sort_indices(frame, sort_keys=[("topic", "ascending"), ("doc", "ascending")])
        frame = frame.take(order)
        order = order.to_numpy()
        topic = frame["topic"].combine_chunks()
        doc = frame["doc"].combine_chunks()
        grade = frame["grade"].to_numpy()
        key = pair_keys(topic, doc)
        same = np.zeros(len(grade), dtype=bool)
        same[1:] = key[1:] == key[:-1]
        if same.any():
            conflict = same.copy()
            conflict[1:] &= grade[1:] != grade[:-1]
            if conflict.any():
                i = int(np.flatnonzero(conflict)[0])
                rows = sorted((int(order[i - 1]), int(order[i])))
                line = _line_of(rows[1]) if _line_of else None
                first = f" (first at line {_line_of(rows[0])})" if _line_of else ""
                shown = [
                    format_grade(levels[c]) if c >= 0 else str(POOLED_UNJUDGED)
                    for c in (grade[i - 1], grade[i])
                ]
                raise TrecFormatError(
                    source,
                    line,
                    f"topic {topic[i].as_py()!r}, document {doc[i].as_py()!r} is judged twice "
                    f"with different grades, {shown[0]} and {shown[1]}{first}",
                )
            warn(
                f"{source or 'qrels'}: {int(same.sum())} exact duplicate judgments (same "
                "topic, document and grade) were merged"
            )
            keep = pa.array(~same)
            topic, doc, grade = topic.filter(keep), doc.filter(keep), grade[~same]
        self._topic = topic
        self._doc = doc
        self._grade = np.ascontiguousarray(grade, dtype=np.int8)
        # The levels up to the highest code present: a subset without the top grade has the
        # levels of its own grades, as the grades 0..c of integer qrels always were.
        levels = levels[: max(int(self._grade.max(initial=-1)), 0) + 1]
        levels.flags.writeable = False
        self._levels = levels
        self.source = source
        self._topics, self._offsets = blocks(self._topic)

    # ---------------------------------------------------------------- construction
    @classmethod
    def from_df(
        cls,
        frame: pd.DataFrame,
        *,
        topic: str | None = None,
        doc: str | None = None,
        grade: str | None = None,
    ) -> Qrels:
        """From a DataFrame with topic, document and grade columns.

        Column names are found among common spellings (``topic``/``query_id``/``qid``,
        ``doc``/``doc_id``/``docno``, ``grade``/``relevance``/``rel``) unless given. Grades are
        numbers: integers, or real values such as 0.5 (see :attr:`levels`); a negative grade
        means pooled but unjudged.

        Raises
        ------
        ValueError
            Naming the column and row of a grade that is not a finite number, or of an integer
            grade above 127; for more than 127 distinct positive grades.
        """
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
        tcol = _pick(frame, topic, _TOPIC_ALIASES, "topic")
        dcol = _pick(frame, doc, _DOC_ALIASES, "document")
        gcol = _pick(frame, grade, _GRADE_ALIASES, "grade")
        _check_id_columns(frame, {"topic": tcol, "document": dcol})
        column = frame[gcol]
        if isinstance(column.dtype, np.dtype) and column.dtype.kind in "iu":
            g = column.to_numpy()  # integers stay integers: no round trip through floats
        else:
            g = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)

        def fail(row, problem):
            if row is None:
                raise ValueError(f"grade column {gcol!r}: {problem}")
            shown = column.iloc[row]
            shown = shown.item() if isinstance(shown, np.generic) else shown
            if isinstance(shown, str) or not np.isfinite(g[row]):
                problem = f"{shown!r} is not a finite number (a grade)"
            raise ValueError(f"grade column {gcol!r}, row {row}: {problem}")

        codes, levels = encode_grades(g, fail)
        return cls(frame[tcol].to_numpy(), frame[dcol].to_numpy(), codes, levels=levels)

    @classmethod
    def from_dict(cls, judgments: Mapping[str, Mapping[str, float]]) -> Qrels:
        """From ``{topic: {doc: grade}}`` (the pytrec_eval / ir_measures shape); grades are
        integers or real numbers, as in :meth:`from_df`."""
        if not isinstance(judgments, Mapping):
            raise TypeError(
                "judgments must be a mapping topic -> {doc: grade}, got "
                f"{type(judgments).__name__}"
            )
        _check_nested(judgments, "judgments", "grade")
        rows = [(str(t), str(d), g) for t, docs in judgments.items() for d, g in docs.items()]
        frame = pd.DataFrame(rows, columns=["topic", "doc", "grade"])
        return cls.from_df(frame)

    # ---------------------------------------------------------------- views
    @property
    def topics(self) -> np.ndarray:
        """Sorted topic ids (strings)."""
        return self._topics

    @property
    def offsets(self) -> np.ndarray:
        """``offsets[t]:offsets[t+1]`` is topic t's block of judgments."""
        return self._offsets

    @property
    def grades(self) -> np.ndarray:
        """Grade code of every judgment (int8, -1 = pooled but unjudged), in table order: the
        grade itself for integer grades, else its position in :attr:`levels`."""
        return self._grade

    @property
    def levels(self) -> np.ndarray:
        """(G,) float64 grade value of each code 0 .. G-1, strictly increasing, ``levels[0]``
        0.0: ``0, 1, ..., c`` for integer grades, else 0.0 and the distinct positive grades.

        Only the levels up to the highest code present are kept (G - 1 is the highest code).
        """
        return self._levels

    @property
    def integer_grades(self) -> bool:
        """Whether every grade is an integer (``levels`` is ``0, 1, ..., c``)."""
        return bool(np.array_equal(self._levels, np.arange(len(self._levels))))

    @property
    def grade_values(self) -> np.ndarray:
        """(Q,) float64 grade of every judgment, in table order (-1.0 = pooled but unjudged)."""
        return np.where(self._grade >= 0, self._levels[np.maximum(self._grade, 0)], -1.0)

    def code_at_least(self, rel: float) -> int:
        """The lowest code whose grade is >= ``rel`` (``len(levels)`` when none is): a grade is
        at least ``rel`` exactly when its code is at least this one."""
        return int(np.searchsorted(self._levels, rel, side="left"))

    @property
    def docs(self) -> pa.Array:
        """Document id of every judgment, in table order."""
        return self._doc

    @property
    def topic_index(self) -> np.ndarray:
        """Topic position (into :attr:`topics`) of every judgment."""
        return np.repeat(np.arange(len(self._topics)), np.diff(self._offsets))

    @property
    def max_grade(self) -> int | float:
        """The highest grade: an int for integer grades (-1 when nothing is judged), else the
        highest grade value (a float)."""
        if self.integer_grades:
            return int(self._grade.max())
        return float(self._levels[-1])

    def __len__(self) -> int:
        return len(self._grade)

    def __repr__(self) -> str:
        codes = np.unique(self._grade)
        shown = [str(POOLED_UNJUDGED) if c < 0 else format_grade(self._levels[c]) for c in codes]
        return (
            f"Qrels({len(self._topics)} topics, {len(self)} judgments, grades [{', '.join(shown)}])"
        )

    def __eq__(self, other) -> bool:
        if not isinstance(other, Qrels):
            return NotImplemented
        return (
            len(self) == len(other)
            and np.array_equal(self._grade, other._grade)
            and np.array_equal(self._levels, other._levels)
            and self._topic.equals(other._topic)
            and self._doc.equals(other._doc)
        )

    def _output_grades(self) -> np.ndarray:
        """Grades as written out: int64 for integer grades (as ever), else float64 values."""
        return self._grade.astype(np.int64) if self.integer_grades else self.grade_values

    def to_df(self) -> pd.DataFrame:
        """A DataFrame with columns ``topic, doc, grade`` sorted by topic and document; grades
        are integers for integer qrels, else floats (-1 = pooled but unjudged)."""
        return pd.DataFrame(
            {
                "topic": self._topic.to_numpy(zero_copy_only=False).astype(object),
                "doc": self._doc.to_numpy(zero_copy_only=False).astype(object),
                "grade": self._output_grades(),
            }
        )

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{topic: {doc: grade}}``; grades are ints for integer qrels, else floats."""
        out: dict[str, dict[str, float]] = {}
        docs = self._doc.to_pylist()
        grades = self._output_grades().tolist()
        for t, (a, b) in zip(self._topics, zip(self._offsets[:-1], self._offsets[1:])):
            out[str(t)] = dict(zip(docs[a:b], grades[a:b]))
        return out

    def subset(self, topics: Iterable[str]) -> Qrels:
        """The judgments of ``topics`` only (ids; an id not in the qrels is a ValueError)."""
        wanted = [str(t) for t in ([topics] if isinstance(topics, str) else topics)]
        pos = {t: i for i, t in enumerate(self._topics)}
        unknown = [t for t in wanted if t not in pos]
        if unknown:
            raise ValueError(f"{len(unknown)} topic(s) are not in the qrels: {shown_ids(unknown)}")
        if not wanted:
            raise ValueError("topics is empty: a subset needs at least one topic")
        keep = np.isin(self.topic_index, [pos[t] for t in wanted])
        return self.with_grades(self._grade, keep=keep)

    def fold_grades(self, top_grades: int) -> Qrels:
        """Keep the ``top_grades`` highest grades of the collection as 1..top_grades and make every
        lower grade 0 (non-relevant). On a collection judged 0..c with c <= top_grades this changes
        nothing (a binary collection stays binary); on TREC DL (0..3) with 2 it is the track's
        convention that grade 1 ("related") is not relevant: 0, 1 -> 0, 2 -> 1, 3 -> 2. Unjudged
        entries (negative grades) stay.

        With real-valued grades, the ``top_grades`` highest distinct grades (levels) stay
        relevant *with their values* (0, 0.5, 1.33, 2 with 2: 0, 0.5 -> 0, 1.33 and 2 stay):
        renumbering them 1, 2 would throw away what the values say.

        Parameters
        ----------
        top_grades : int
            How many of the highest grades stay relevant (at least 1). It counts distinct
            grades, so it is an integer even for real-valued grades.

        Returns
        -------
        Qrels
            A copy with the folded grades (the same judgments, in the same order).
        """
        if isinstance(top_grades, bool) or not isinstance(top_grades, (int, np.integer)):
            raise TypeError(f"top_grades must be an int, got {type(top_grades).__name__}")
        if top_grades < 1:
            raise ValueError(f"top_grades must be at least 1, got {top_grades}")
        g = self.grades.astype(np.int16)
        shift = max(int(g.max(initial=0)) - top_grades, 0)
        folded = np.where(g < 0, g, np.maximum(g - shift, 0))
        if self.integer_grades:
            levels = self._levels  # 0..c: the kept grades are renumbered 1..top_grades
        else:
            levels = np.concatenate([[0.0], self._levels[shift + 1 :]])
        return self.with_grades(folded.astype(np.int8), levels=levels)

    def with_grades(
        self,
        grades: np.ndarray,
        *,
        keep: np.ndarray | None = None,
        levels: np.ndarray | None = None,
    ) -> Qrels:
        """A copy with new grade codes (aligned with this table) and optionally only rows
        ``keep``.

        Parameters
        ----------
        grades : ndarray of int, shape (Q,)
            A code per row: -1 for unjudged, else a position in ``levels``.
        keep : ndarray of bool, shape (Q,), optional
        levels : ndarray of float, optional
            The grade value of each code; default this qrels' :attr:`levels` (integer grades
            then stay integer grades, 0 .. the highest code).
        """
        grades = np.asarray(grades)
        if grades.shape != self._grade.shape:
            raise ValueError(f"grades must have shape {self._grade.shape}, got {grades.shape}")
        if levels is None:
            levels = self._levels
            top = int(grades.max(initial=0))
            if top >= len(levels) and self.integer_grades:
                # integer grades beyond this qrels' highest (assessor noise upwards): grades
                levels = np.arange(top + 1, dtype=np.float64)
        topic_rows = self._topic
        if keep is None:
            return Qrels(topic_rows, self._doc, grades, levels=levels, source=self.source)
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != self._grade.shape:
            raise ValueError(f"keep must have shape {self._grade.shape}, got {keep.shape}")
        mask = pa.array(keep)
        return Qrels(
            topic_rows.filter(mask),
            self._doc.filter(mask),
            grades[keep],
            levels=levels,
            source=self.source,
        )
