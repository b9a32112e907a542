"""Relevance judgments (qrels)."""

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


class Qrels:
    """Graded relevance judgments: one grade per (topic, document).

    Grades are small integers (0 = judged non-relevant, higher = more relevant); a negative
    grade means "pooled but not judged" (trec_eval's convention, used by infAP) and is stored as
    -1. Rows are kept sorted by topic and document, so every topic's judgments are one
    contiguous block: that block is the topic's *judgment table*, which an
    :class:`~metaeval.engine.EvalTensor` indexes.

    Build one with :func:`metaeval.read_qrels`, :meth:`from_df` or :meth:`from_dict`.
    """

    def __init__(
        self,
        topics: pa.Array,
        docs: pa.Array,
        grades: np.ndarray,
        *,
        source: str | Path | None = None,
        _line_of=None,
    ):
        frame = pa.table(
            {
                "topic": as_string_array(topics),
                "doc": as_string_array(docs),
                "grade": pa.array(np.asarray(grades, dtype=np.int8)),
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
                raise TrecFormatError(
                    source,
                    line,
                    f"topic {topic[i].as_py()!r}, document {doc[i].as_py()!r} is judged twice "
                    f"with different grades, {grade[i - 1]} and {grade[i]}{first}",
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
        ``doc``/``doc_id``/``docno``, ``grade``/``relevance``/``rel``) unless given.
        """
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
        tcol = _pick(frame, topic, _TOPIC_ALIASES, "topic")
        dcol = _pick(frame, doc, _DOC_ALIASES, "document")
        gcol = _pick(frame, grade, _GRADE_ALIASES, "grade")
        _check_id_columns(frame, {"topic": tcol, "document": dcol})
        g = pd.to_numeric(frame[gcol], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        bad = ~np.isfinite(g) | (g != np.round(g)) | (g > 127)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            shown = frame[gcol].iloc[i]
            shown = shown.item() if isinstance(shown, np.generic) else shown
            raise ValueError(
                f"grade column {gcol!r}, row {i}: {shown!r} is not an integer grade in [-1, 127]"
            )
        return cls(
            frame[tcol].to_numpy(), frame[dcol].to_numpy(), np.maximum(g, -1).astype(np.int8)
        )

    @classmethod
    def from_dict(cls, judgments: Mapping[str, Mapping[str, int]]) -> Qrels:
        """From ``{topic: {doc: grade}}`` (the pytrec_eval / ir_measures shape)."""
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
        """Grade of every judgment (int8, -1 = pooled but unjudged), in table order."""
        return self._grade

    @property
    def docs(self) -> pa.Array:
        """Document id of every judgment, in table order."""
        return self._doc

    @property
    def topic_index(self) -> np.ndarray:
        """Topic position (into :attr:`topics`) of every judgment."""
        return np.repeat(np.arange(len(self._topics)), np.diff(self._offsets))

    @property
    def max_grade(self) -> int:
        return int(self._grade.max())

    def __len__(self) -> int:
        return len(self._grade)

    def __repr__(self) -> str:
        return (
            f"Qrels({len(self._topics)} topics, {len(self)} judgments, "
            f"grades {sorted(set(self._grade.tolist()))})"
        )

    def __eq__(self, other) -> bool:
        if not isinstance(other, Qrels):
            return NotImplemented
        return (
            len(self) == len(other)
            and np.array_equal(self._grade, other._grade)
            and self._topic.equals(other._topic)
            and self._doc.equals(other._doc)
        )

    def to_df(self) -> pd.DataFrame:
        """A DataFrame with columns ``topic, doc, grade`` sorted by topic and document."""
        return pd.DataFrame(
            {
                "topic": self._topic.to_numpy(zero_copy_only=False).astype(object),
                "doc": self._doc.to_numpy(zero_copy_only=False).astype(object),
                "grade": self._grade.astype(np.int64),
            }
        )

    def to_dict(self) -> dict[str, dict[str, int]]:
        """``{topic: {doc: grade}}``."""
        out: dict[str, dict[str, int]] = {}
        docs = self._doc.to_pylist()
        grades = self._grade.tolist()
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

        Parameters
        ----------
        top_grades : int
            How many of the highest grades stay relevant (at least 1).

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
        return self.with_grades(folded.astype(np.int8))

    def with_grades(self, grades: np.ndarray, *, keep: np.ndarray | None = None) -> Qrels:
        """A copy with new grades (aligned with this table) and optionally only rows ``keep``."""
        grades = np.asarray(grades)
        if grades.shape != self._grade.shape:
            raise ValueError(f"grades must have shape {self._grade.shape}, got {grades.shape}")
        topic_rows = self._topic
        if keep is None:
            return Qrels(topic_rows, self._doc, grades, source=self.source)
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != self._grade.shape:
            raise ValueError(f"keep must have shape {self._grade.shape}, got {keep.shape}")
        mask = pa.array(keep)
        return Qrels(
            topic_rows.filter(mask), self._doc.filter(mask), grades[keep], source=self.source
        )
