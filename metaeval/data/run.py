"""System runs: ranked lists of documents per topic."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from metaeval._validation import shown_ids
from metaeval.data._arrow import as_string_array
from metaeval.data.errors import TrecFormatError
from metaeval.data.qrels import (
    _DOC_ALIASES,
    _TOPIC_ALIASES,
    _check_id_columns,
    _check_ids,
    _check_nested,
    _pick,
)

#: How equal scores are ordered: trec_eval's document id order, the order given, or every
#: order at once (``expected``: lists are held in trec_eval's order, and measures give the
#: mean over all orderings of each group of tied documents).
TIES = ("trec_eval", "input", "expected")
_SCORE_ALIASES = ("score", "sim")


def check_ties(ties: str) -> None:
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}")


class Run:
    """One system's ranked lists, one per topic it answered.

    Documents are held in *ranking order*: per topic, by score descending, and for equal scores
    by document id descending (trec_eval's ``strcmp`` order; ``ties="trec_eval"``, the default)
    or in the order they were given (``ties="input"``). ``ties="expected"`` holds them in
    trec_eval's order and asks every measure for its expected value over the orderings of the
    tied documents (McSherry & Najork, ECIR 2008): see :meth:`tie_groups`. The rank column of
    a TREC file is ignored, as trec_eval ignores it (docs/methods.md §0, §6.0).

    Build one with :func:`metaeval.read_run`, :meth:`from_df` or :meth:`from_dict`.
    """

    def __init__(
        self,
        name: str,
        topics,
        docs,
        scores,
        *,
        ties: str = "trec_eval",
        source: str | Path | None = None,
        _line_of=None,
        _interned: tuple[pa.Array, np.ndarray] | None = None,
    ):
        check_ties(ties)
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        scores = np.asarray(scores, dtype=np.float64)
        topic, doc = as_string_array(topics), as_string_array(docs)
        if not len(topic) == len(doc) == len(scores):
            raise ValueError(
                f"run {name!r}: {len(topic)} topics, {len(doc)} documents and {len(scores)} "
                "scores; they must be aligned"
            )
        if len(scores) == 0:
            raise TrecFormatError(source, None, f"run {name!r} has no ranked documents")
        _check_ids(source, {"topic": topic, "document": doc}, f"run {name!r}: ")
        bad = ~np.isfinite(scores)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise TrecFormatError(
                source,
                _line_of(i) if _line_of else None,
                f"score {float(scores[i])!r} is not finite (NaN or infinity)",
            )
        # Topics as integers in the order of their ids: the sort then compares one integer,
        # not a string, per row, and the topic blocks come out of it for free.
        dictionary, topic_code = _encode_blocks(topic)
        by_id = pc.sort_indices(dictionary).to_numpy()
        position = np.empty(len(by_id), dtype=np.int32)
        position[by_id] = np.arange(len(by_id), dtype=np.int32)
        topic_pos = position[topic_code]
        order = _ranking_order(topic_pos, scores, doc, ties, len(by_id))
        codes = None
        if _interned is not None:
            vocab, codes = _interned
            if len(codes) != len(doc):
                raise ValueError(f"run {name!r}: {len(codes)} document codes for {len(doc)} rows")
        if order is not None:
            topic_pos, scores = topic_pos[order], scores[order]
            if codes is None:
                doc = doc.take(order)
            else:
                # The ids in ranking order are made only if asked for (``docs``): matching
                # and the duplicate check read the codes.
                codes, doc = codes[order], None
        ids = dictionary.take(by_id).to_numpy(zero_copy_only=False).astype(object)
        if codes is None or _ranked_twice(topic_pos, codes, len(vocab)):
            ranked = doc if doc is not None else vocab.take(codes)
            identity = np.arange(len(ranked)) if order is None else order
            self._check_duplicates(topic_pos, ids, ranked, identity, name, source, _line_of)
        sizes = np.bincount(topic_pos, minlength=len(ids))
        self._set(name, ties, source, doc, scores, ids, np.concatenate([[0], np.cumsum(sizes)]))
        if codes is not None:
            self._vocab, self._codes = vocab, codes

    #: The documents as codes into a vocabulary shared by the runs read together (see
    #: :attr:`interned`); None for a run built otherwise.
    _vocab: pa.Array | None = None
    _codes: np.ndarray | None = None
    #: The numbers of the vocabulary's ids, ascending, when they are all numbered (MS MARCO):
    #: matching them to the judgments is then a search among numbers.
    _numbers: np.ndarray | None = None

    def __getstate__(self) -> dict:
        # The codes only speed up matching, and the vocabulary is shared by every run read
        # with this one: pickled with each run it would be copied once per run.
        state = dict(self.__dict__)
        state["_doc"] = self.docs
        state.pop("_vocab", None)
        state.pop("_codes", None)
        state.pop("_numbers", None)
        return state

    @property
    def interned(self) -> tuple[pa.Array, np.ndarray] | None:
        """The documents as integer codes, or None.

        Returns
        -------
        tuple of (pyarrow.Array, ndarray of int32) or None
            ``(vocab, codes)``: ``vocab[codes[i]]`` is the document at row ``i`` of
            :attr:`docs`. The runs read by one :func:`~metaeval.read_runs` share one ``vocab``
            (the same object), so an evaluation matches each distinct document once rather
            than each retrieved one. None for a run built any other way.
        """
        return None if self._codes is None else (self._vocab, self._codes)

    def _set(self, name, ties, source, doc, score, topics, offsets) -> None:
        self.name = name
        self.ties = ties
        self.source = source
        self._doc = doc
        self._score = np.ascontiguousarray(score, dtype=np.float64)
        self._topics = np.asarray(topics, dtype=object)
        self._offsets = np.asarray(offsets, dtype=np.int64)

    @classmethod
    def from_ranked(
        cls,
        name: str,
        topics: np.ndarray,
        offsets: np.ndarray,
        docs: pa.Array,
        scores: np.ndarray,
        *,
        ties: str = "trec_eval",
    ) -> Run:
        """A Run from lists that are already in ranking order, without re-sorting or checking.

        For code that builds ranked lists by construction (the simulators, subsets of a run):
        re-sorting and re-checking millions of rows would cost as much as building them.

        Parameters
        ----------
        name : str
        topics : array of str
            The sorted topic ids.
        offsets : array of int, shape (len(topics) + 1,)
            ``offsets[t]:offsets[t+1]`` is topic t's block of ``docs`` and ``scores``.
        docs : pyarrow string array
        scores : array of float
        ties : {"trec_eval", "input", "expected"}
            The order the lists are in (recorded, not applied; ``expected`` lists are in
            trec_eval's order).

        The caller guarantees the order and that no document repeats within a topic.
        """
        run = object.__new__(cls)
        run._set(name, ties, None, docs, scores, topics, offsets)
        return run

    def tie_groups(self) -> tuple[np.ndarray, np.ndarray]:
        """The group of tied documents (equal scores, one ranked list) of every row.

        Returns
        -------
        start, size : ndarray of int32, shape (len(self),)
            The 0-based rank, in its list, of the first document of the row's group, and the
            number of documents in the group (1 for a document whose score no other shares).
        """
        n = len(self._score)
        opens = np.ones(n, dtype=bool)
        opens[1:] = self._score[1:] != self._score[:-1]
        opens[self._offsets[:-1]] = True  # every list opens a group
        first = np.flatnonzero(opens)
        group = np.cumsum(opens) - 1
        sizes = np.diff(np.append(first, n))
        list_start = np.repeat(self._offsets[:-1], np.diff(self._offsets))
        return (first[group] - list_start).astype(np.int32), sizes[group].astype(np.int32)

    def with_ties(self, ties: str) -> Run:
        """This run under another tie policy. Its lists keep their order, except that
        ``trec_eval`` or ``expected`` asked of an ``input`` run re-sorts them."""
        check_ties(ties)
        if ties == self.ties:
            return self
        if ties != "input" and self.ties == "input":
            frame = self.to_df()
            run = Run(self.name, frame["topic"], frame["doc"], frame["score"], ties=ties)
            run.source = self.source
            return run
        new = self.renamed(self.name)
        new.ties = ties
        return new

    @staticmethod
    def _check_duplicates(topic_pos, ids, doc, order, name, source, line_of) -> None:
        """Raise when a document is ranked twice for one topic (rows in ranking order, topics
        as positions into ``ids``; ``order`` maps the rows back to input rows)."""
        encoded = pc.dictionary_encode(doc)
        n_docs = len(encoded.dictionary)
        if n_docs == len(doc):  # no document id repeats anywhere in the run
            return
        key = topic_pos.astype(np.int64) * n_docs + encoded.indices.to_numpy(zero_copy_only=False)
        ordered = np.sort(key)
        if not (ordered[1:] == ordered[:-1]).any():
            return
        by_key = np.argsort(key, kind="stable")
        dup = np.flatnonzero(key[by_key][1:] == key[by_key][:-1])
        i, j = int(by_key[dup[0]]), int(by_key[dup[0] + 1])
        a, b = sorted((int(order[i]), int(order[j])))
        where = f" (first at line {line_of(a)})" if line_of else ""
        raise TrecFormatError(
            source,
            line_of(b) if line_of else None,
            f"run {name!r}: document {doc[i].as_py()!r} is ranked twice for topic "
            f"{ids[topic_pos[i]]!r}{where}",
        )

    # ---------------------------------------------------------------- construction
    @classmethod
    def from_df(
        cls,
        frame: pd.DataFrame,
        name: str | None = None,
        *,
        topic: str | None = None,
        doc: str | None = None,
        score: str | None = None,
        ties: str = "trec_eval",
    ) -> Run:
        """From a DataFrame with topic, document and score columns.

        ``name`` defaults to the single value of a ``run``/``tag`` column when there is one.
        """
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
        if name is None:
            for col in ("run", "tag", "name"):
                if col in frame.columns and frame[col].nunique() == 1:
                    name = str(frame[col].iloc[0])
                    break
            else:
                raise ValueError("name is required: the table has no single-valued run/tag column")
        tcol = _pick(frame, topic, _TOPIC_ALIASES, "topic")
        dcol = _pick(frame, doc, _DOC_ALIASES, "document")
        scol = _pick(frame, score, _SCORE_ALIASES, "score")
        _check_id_columns(frame, {"topic": tcol, "document": dcol})
        values = pd.to_numeric(frame[scol], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        if np.isnan(values).any():
            i = int(np.flatnonzero(np.isnan(values))[0])
            shown = frame[scol].iloc[i]
            shown = float(shown) if isinstance(shown, (float, np.floating)) else shown
            raise ValueError(f"score column {scol!r}, row {i}: {shown!r} is not a number")
        return cls(name, frame[tcol].to_numpy(), frame[dcol].to_numpy(), values, ties=ties)

    @classmethod
    def from_dict(
        cls, scores: Mapping[str, Mapping[str, float]], name: str, *, ties: str = "trec_eval"
    ) -> Run:
        """From ``{topic: {doc: score}}`` (the pytrec_eval / ir_measures shape)."""
        if not isinstance(scores, Mapping):
            raise TypeError(
                f"scores must be a mapping topic -> {{doc: score}}, got {type(scores).__name__}"
            )
        _check_nested(scores, "scores", "score")
        rows = [(str(t), str(d), s) for t, docs in scores.items() for d, s in docs.items()]
        return cls.from_df(pd.DataFrame(rows, columns=["topic", "doc", "score"]), name, ties=ties)

    # ---------------------------------------------------------------- views
    @property
    def topics(self) -> np.ndarray:
        """Sorted ids of the topics this run answered."""
        return self._topics

    @property
    def offsets(self) -> np.ndarray:
        """``offsets[t]:offsets[t+1]`` is topic t's ranked list."""
        return self._offsets

    @property
    def docs(self) -> pa.Array:
        """Document ids in ranking order, topic by topic."""
        if self._doc is None:  # an interned run's ids, made on first use
            self._doc = self._vocab.take(self._codes)
        return self._doc

    @property
    def scores(self) -> np.ndarray:
        return self._score

    def __len__(self) -> int:
        return len(self._score)

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {len(self._topics)} topics, {len(self)} documents)"

    def to_df(self) -> pd.DataFrame:
        """``topic, doc, rank, score`` in ranking order, rank starting at 1 per topic."""
        ranks = np.arange(len(self)) - np.repeat(self._offsets[:-1], np.diff(self._offsets)) + 1
        return pd.DataFrame(
            {
                "topic": np.repeat(self._topics, np.diff(self._offsets)),
                "doc": self.docs.to_numpy(zero_copy_only=False).astype(object),
                "rank": ranks,
                "score": self._score,
            }
        )

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{topic: {doc: score}}``."""
        docs = self.docs.to_pylist()
        scores = self._score.tolist()
        return {
            str(t): dict(zip(docs[a:b], scores[a:b]))
            for t, a, b in zip(self._topics, self._offsets[:-1], self._offsets[1:])
        }

    def subset(self, topics: Iterable[str]) -> Run:
        """This run's lists for ``topics`` only (ids it did not answer are skipped).

        Raises ValueError when the run answered none of them.
        """
        wanted = {str(t) for t in ([topics] if isinstance(topics, str) else topics)}
        keep = np.flatnonzero([t in wanted for t in self._topics])
        if keep.size == 0:
            raise ValueError(
                f"run {self.name!r} answered none of the {len(wanted)} selected topic(s)"
            )
        if keep.size == len(self._topics):
            return self
        starts, ends = self._offsets[keep], self._offsets[keep + 1]
        sizes = ends - starts
        rows = np.repeat(starts - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes) + np.arange(
            int(sizes.sum())
        )
        run = Run.from_ranked(
            self.name,
            self._topics[keep],
            np.concatenate([[0], np.cumsum(sizes)]),
            self.docs.take(pa.array(rows)),
            self._score[rows],
            ties=self.ties,
        )
        run.source = self.source
        if self._codes is not None:
            run._vocab, run._codes = self._vocab, self._codes[rows]
            run._numbers = self._numbers
        return run

    def renamed(self, name: str) -> Run:
        """The same run under another name (the data is shared, not copied)."""
        new = object.__new__(Run)
        new.__dict__.update(self.__dict__)
        new.name = name
        return new


def _encode_blocks(values: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """``dictionary_encode`` of ids that come in blocks of equal values (a run's topics).

    The distinct ids, in order of first appearance, and each row's code. Only the first id
    of each block is hashed; the blocks are found by comparing each id with the next, which
    costs a third of hashing every id.
    """
    change = pc.not_equal(values.slice(1), values.slice(0, len(values) - 1))
    starts = np.concatenate([[0], np.flatnonzero(change.to_numpy(zero_copy_only=False)) + 1])
    encoded = pc.dictionary_encode(values.take(starts))
    sizes = np.diff(np.append(starts, len(values)))
    return encoded.dictionary, np.repeat(encoded.indices.to_numpy(zero_copy_only=False), sizes)


def _ranking_order(
    topic_pos: np.ndarray, scores: np.ndarray, doc: pa.Array, ties: str, n_topics: int
) -> np.ndarray | None:
    """Rows in ranking order (topic, score descending, then ``ties``), or None when they are.

    A TREC file is almost always written in rank order, one block of lines per topic, though
    not with the topics in order of their ids nor equal scores in trec_eval's order. Such
    input is put in order without a sort: the topic blocks are permuted, and each group of
    equal scores is reversed when its documents ascend (or sorted alone when they are in no
    order). Anything else is sorted by Arrow (stable, so ``ties="input"`` keeps input order
    among equal scores). Both give the same order.
    """
    n = len(scores)
    same = topic_pos[1:] == topic_pos[:-1]
    starts = np.concatenate([[0], np.flatnonzero(~same) + 1])
    if len(starts) != n_topics or not ((scores[1:] <= scores[:-1]) | ~same).all():
        keys = [("topic", "ascending"), ("score", "descending")]
        if ties != "input":  # trec_eval's order, also that of "expected"
            keys.append(("doc", "descending"))
        table = pa.table({"topic": topic_pos, "score": scores, "doc": doc})
        order = pc.sort_indices(table, sort_keys=keys).to_numpy()
        return None if np.array_equal(order, np.arange(n)) else order
    order = None
    tied = np.flatnonzero(same & (scores[1:] == scores[:-1]))  # pairs (i, i + 1)
    if ties != "input" and len(tied):
        first, second = doc.take(tied), doc.take(tied + 1)
        if not pc.all(pc.greater(first, second)).as_py():
            ascending = pc.all(pc.less(first, second)).as_py()
            order = _shift(*_order_ties(tied, doc, reverse=ascending), n)
    block = topic_pos[starts]
    if (block[1:] > block[:-1]).all():
        return order
    # Whole topic blocks move to the place of their topic; ties were fixed inside them.
    by_topic = np.argsort(block)
    sizes = np.diff(np.append(starts, n))[by_topic]
    rows = np.repeat(starts[by_topic] - (np.cumsum(sizes) - sizes), sizes) + np.arange(n)
    return rows if order is None else order[rows]


def _shift(rows: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """The identity order of ``n`` rows, except ``values`` at ``rows``."""
    order = np.arange(n)
    order[rows] = values
    return order


def _order_ties(tied: np.ndarray, doc: pa.Array, *, reverse: bool):
    """(rows, input rows) putting each group of equal scores in descending document order.

    ``tied`` are the pairs (i, i + 1) of equal scores in one topic, ascending; a group is a
    stretch of consecutive pairs. When every group's documents ascend (``reverse``), each
    group is reversed; otherwise the groups' rows alone are sorted (stable).
    """
    opens = np.concatenate([[True], tied[1:] != tied[:-1] + 1])
    first = tied[opens]
    last = np.append(tied[np.flatnonzero(opens)[1:] - 1], tied[-1]) + 1
    sizes = last - first + 1
    group = np.repeat(np.arange(len(first)), sizes)
    rows = np.repeat(first - (np.cumsum(sizes) - sizes), sizes) + np.arange(int(sizes.sum()))
    if reverse:
        return rows, first[group] + last[group] - rows
    table = pa.table({"group": group, "doc": doc.take(rows)})
    keys = [("group", "ascending"), ("doc", "descending")]
    return rows, rows[pc.sort_indices(table, sort_keys=keys).to_numpy()]


def _ranked_twice(topic_pos: np.ndarray, codes: np.ndarray, n_codes: int) -> bool:
    """Whether a document code repeats within one topic (rows in ranking order).

    Most documents occur once in a run: one scatter finds those that occur again (in any
    topic), and only their rows are sorted by (topic, code).
    """
    if n_codes > 16 * len(codes):
        # A vocabulary far larger than the run (thousands of runs read together): sorting
        # the run's keys costs less than touching tables of the vocabulary's size.
        key = np.sort(topic_pos.astype(np.int64) * n_codes + codes)
        return bool((key[1:] == key[:-1]).any())
    rows = np.arange(len(codes), dtype=np.int32)
    last = np.empty(n_codes, dtype=np.int32)
    last[codes] = rows  # of the rows of one code, the last one written stays
    again = last[codes] != rows
    if not again.any():
        return False
    repeated = np.zeros(n_codes, dtype=bool)
    repeated[codes[again]] = True
    rows = np.flatnonzero(repeated[codes])
    key = np.sort(topic_pos[rows].astype(np.int64) * n_codes + codes[rows])
    return bool((key[1:] == key[:-1]).any())


class RunSet:
    """An ordered collection of runs with unique names."""

    def __init__(self, runs: Iterable[Run]):
        self._runs: list[Run] = []
        seen: dict[str, int] = {}
        for run in runs:
            if not isinstance(run, Run):
                raise TypeError(f"RunSet holds Run objects, got {type(run).__name__}")
            if run.name in seen:
                raise ValueError(
                    f"two runs are named {run.name!r}; run names must be unique "
                    "(read_runs renames runs whose files carry the same tag)"
                )
            seen[run.name] = len(self._runs)
            self._runs.append(run)
        if not self._runs:
            raise ValueError("a RunSet needs at least one run")
        self._index = seen

    @classmethod
    def from_df(
        cls, frame: pd.DataFrame, *, run: str = "run", ties: str = "trec_eval", **columns
    ) -> RunSet:
        """From one DataFrame holding several runs, told apart by the ``run`` column."""
        if run not in frame.columns:
            raise ValueError(
                f"no {run!r} column to tell the runs apart (columns: {list(frame.columns)})"
            )
        return cls(
            Run.from_df(part, str(name), ties=ties, **columns)
            for name, part in frame.groupby(run, sort=False)
        )

    @classmethod
    def from_dict(
        cls, runs: Mapping[str, Mapping[str, Mapping[str, float]]], *, ties: str = "trec_eval"
    ) -> RunSet:
        """From ``{run_name: {topic: {doc: score}}}``."""
        return cls(Run.from_dict(scores, name, ties=ties) for name, scores in runs.items())

    @property
    def names(self) -> list[str]:
        return [r.name for r in self._runs]

    def __len__(self) -> int:
        return len(self._runs)

    def __iter__(self) -> Iterator[Run]:
        return iter(self._runs)

    def subset(self, names: Iterable[str]) -> RunSet:
        """The runs named ``names``, in that order (an unknown name is a ValueError)."""
        names = [names] if isinstance(names, str) else [str(n) for n in names]
        unknown = [n for n in names if n not in self._index]
        if unknown:
            raise ValueError(f"{len(unknown)} run(s) are not among the runs: {shown_ids(unknown)}")
        return RunSet(self[n] for n in dict.fromkeys(names))

    def __getitem__(self, key: int | str) -> Run:
        if isinstance(key, str):
            if key not in self._index:
                raise KeyError(f"no run named {key!r}; runs: {self.names}")
            return self._runs[self._index[key]]
        return self._runs[key]

    def __repr__(self) -> str:
        more = ", ..." if len(self) > 5 else ""
        return f"RunSet({len(self)} runs: {', '.join(self.names[:5])}{more})"

    def to_df(self) -> pd.DataFrame:
        """All runs in one table: ``run, topic, doc, rank, score``."""
        return pd.concat([r.to_df().assign(run=r.name) for r in self._runs], ignore_index=True)[
            ["run", "topic", "doc", "rank", "score"]
        ]

    def to_dict(self) -> dict[str, dict[str, dict[str, float]]]:
        return {r.name: r.to_dict() for r in self._runs}
