"""The evaluation tensor: every run's ranked lists as grade codes, runs x topics x ranks.

This is the one internal representation that every measure reads. It is built once from a
:class:`~metaeval.data.RunSet` and a :class:`~metaeval.data.Qrels` by one hash join of the
retrieved documents against the judgments over (topic, document) keys; re-evaluating under a
reduced or perturbed judgment set (:meth:`EvalTensor.with_judgments`,
:meth:`EvalTensor.with_grades`) needs no re-parsing, no re-sorting and no new join.

Grades are held as int8 codes; :attr:`EvalTensor.levels` (the qrels' grade values, one per
code: 0, 1, ..., c for integer grades, else 0.0 and the real-valued grades) says what each code
is worth. Measures read values only through it: gains per code, and relevance at a level
``rel`` as a code threshold (:meth:`EvalTensor.code_at_least`). Every derived tensor keeps the
levels, so real-valued grades cost nothing more than integer ones.

Memory model
------------
The tensor is stored sparsely. An *entry* is a (run, topic, rank) whose document has a row in
the qrels: only there can a code other than :data:`UNPOOLED` appear, whatever judgment set is
applied later. Per entry the tensor keeps its (run, topic) group, its rank and its qrels row
(int32 each, 12 bytes), plus one byte for its current code once a measure has asked for it.
Per run x topic it keeps the list length (int32) and whether the run answered (bool), 5 bytes;
per judgment its code (int8) and topic (int64), 9 bytes.

The dense arrays :attr:`EvalTensor.codes` (int8) and :attr:`EvalTensor.doc_index` (int32), 5
bytes per run x topic x rank of the deepest list, are built on first access and cached: the
built-in measures never ask for them on the sparse path, a plugin measure that reads
``codes`` does. A tensor derived by :meth:`~EvalTensor.with_grades` shares the entries of its
parent and adds one byte per entry for its codes (plus, once a degrader has removed a quarter
of them or more, the 9 bytes per entry of those that remain); a condensed view holds its
judged entries.

TREC DL 2020 (59 runs x 54 topics x depth 1000: 3.2 million ranks, 325,605 of them judged)
takes 4 MB, and 16 MB more once dense. 1,000 runs x 250 topics x depth 1000 with 30% of the
ranks judged (75 million entries) take 0.9 GB, and would take 1.25 GB more once dense.

Cost
----
Re-judging is O(judgments) and computing a measure O(entries) when the entries are at most
:data:`SPARSE_SHARE` of S x T x D (:attr:`EvalTensor.sparse`); on a denser tensor the
measures read the dense codes, which is then the cheaper pass. Both paths give identical
values (they produce the same ranked hits, in the same order).
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metaeval._validation import shown_ids
from metaeval._warnings import warn
from metaeval.data import Qrels, Run, RunSet

#: Code of a retrieved document that is not in the qrels ("not pooled"; trec_eval RELVALUE_NONPOOL).
#: Positions past the end of a list hold this code too; ``lengths`` tells them apart.
UNPOOLED = -1
#: Code of a retrieved document that is in the qrels with a negative grade ("pooled but
#: unjudged"; trec_eval RELVALUE_UNJUDGED). infAP treats it differently from UNPOOLED.
UNJUDGED = -2

TOPIC_POLICIES = ("zero", "skip")
PATHS = ("auto", "sparse", "dense")

#: Measures read the entries instead of the dense codes when the entries are at most this
#: share of S x T x D. Past it, a pass over the int8 codes costs about as much as the same pass
#: over the entries' group, rank and code (9 bytes each), and less as the share grows
#: (measured on collections with 10-90% of the ranks judged: benchmarks/bench_scale.py).
SPARSE_SHARE = 0.5

#: Run rows hashed against the judgments at once: bounds the build's temporary memory (about
#: 30 bytes per row) without making the join any slower.
_JOIN_ROWS = 1 << 23
#: Threads joining batches of runs (Arrow's hash lookups and most of numpy release the GIL).
_THREADS = max(
    1,
    min(
        4,
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1),
    ),
)
#: A join of at least twice this many rows is split into batches joined on parallel threads:
#: on TREC DL 2020 (3 million rows) two threads build the tensor in 18 ms instead of 29 ms on an
#: idle 2-core machine; below a million rows a thread's start costs more than it saves.
_PARALLEL_ROWS = 1 << 20
#: Above this share of judged ids (estimated on ``_SAMPLE_IDS`` of a batch), the join looks
#: each id up (``index_in``) rather than joining (Arrow's hash join); the two cost the same at
#: about 35-40% (measured on 1.5 million 7-character ids against 11,000 judged ones).
_JOIN_MATCH_SHARE = 0.4
_SAMPLE_IDS = 4096
#: Largest topics x distinct judged documents for which the join's integer side is a dense
#: table (4 bytes a cell); past it, a binary search over sorted (topic, document) keys.
_TABLE_CELLS = 50_000_000


@dataclass(frozen=True, eq=False, repr=False)
class EvalTensor:
    """Runs x topics x ranks grade codes, with what every measure needs beside them.

    Build one with :meth:`build` (or :meth:`from_index` when the position of every retrieved
    document in the judgment table is known without matching ids).

    Attributes
    ----------
    runs : list of str
        Run names, the S axis.
    topics : ndarray of str
        Topic ids of the qrels, the T axis (trec_eval ``-c``: every judged topic is evaluated).
    codes : ndarray of int8, shape (S, T, D)
        Grade code of the document at each rank (>= 0; its grade is ``levels[code]``),
        :data:`UNPOOLED` (-1) when it is not in the qrels or the list has ended,
        :data:`UNJUDGED` (-2) when it is pooled but not judged. Built on first access (see
        the module's memory model).
    lengths : ndarray of int32, shape (S, T)
        Length of each ranked list (0 when the run did not answer the topic).
    answered : ndarray of bool, shape (S, T)
        Whether the run answered the topic at all (used by ``missing="skip"``).
    doc_index : ndarray of int32, shape (S, T, D)
        Row of the retrieved document in the qrels table (:attr:`judgments`), or ``n_judgments``
        (a sentinel row that always reads :data:`UNPOOLED`) when it is not in the qrels. Built on
        first access.
    judgments : ndarray of int8, shape (Q,)
        Current code of every qrels row: a grade code, :data:`UNJUDGED`, or :data:`UNPOOLED`
        for a judgment removed by a degrader.
    judgment_topic : ndarray of int64, shape (Q,)
        Topic position of every qrels row.
    n_grades : int
        One more than the highest grade code in the original qrels (codes 0 .. n_grades-1).
    levels : ndarray of float64, shape (n_grades,)
        The grade value of each code (:attr:`metaeval.data.Qrels.levels` of the original
        qrels): ``0, 1, ..., n_grades - 1`` for integer grades (the default), else 0.0 and
        the real-valued grades. Every derived tensor keeps them; measures read grade values
        (gains, the threshold ``rel``) through them.
    judged_only : bool
        True for a condensed view (unjudged documents removed, Sakai 2007).
    entry_group, entry_rank, entry_row : ndarray of int32, shape (E,)
        The entries, every (run, topic, rank) whose document is in the qrels, in (run, topic,
        rank) order: group ``run * T + topic``, 0-based rank and qrels row.
    ties : tuple of two ndarrays of int32, shape (E,), or None
        For runs read with ``ties="expected"``: the group of tied documents (equal scores) of
        every entry, as the 0-based rank of the group's first document and the group's size
        (:meth:`~metaeval.data.Run.tie_groups`); measures then give their expected value over
        the orderings of each group (:meth:`tied_entries`, :attr:`order_ties`). None otherwise.
    """

    runs: list[str]
    topics: np.ndarray
    lengths: np.ndarray
    answered: np.ndarray
    judgments: np.ndarray
    judgment_topic: np.ndarray
    n_grades: int
    #: (entry_group, entry_rank, entry_row), or None for a tensor made from a dense index, whose
    #: entries are derived from it when first needed.
    given_entries: tuple | None = field(default=None, repr=False)
    depth: int = 1
    judged_only: bool = False
    qrels: Qrels | None = field(default=None, repr=False)
    path: str = "auto"
    levels: np.ndarray | None = field(default=None, repr=False)
    ties: tuple | None = field(default=None, repr=False)

    def __post_init__(self):
        # Entries are shared by every view of a tensor and handed to measures without copies:
        # nothing may write to them.
        for arr in (self.given_entries or ()) + (self.ties or ()):
            arr.flags.writeable = False
        if self.levels is None:
            levels = np.arange(self.n_grades, dtype=np.float64)  # integer grades: code = grade
        else:
            levels = np.asarray(self.levels, dtype=np.float64)
            if levels.shape != (self.n_grades,) or levels[0] != 0.0 or (np.diff(levels) <= 0).any():
                raise ValueError(
                    f"levels must be {self.n_grades} increasing grade values from 0.0 "
                    f"(one per code), got {levels!r}"
                )
            if levels.flags.writeable:
                levels = levels.copy()  # shared by every view: nobody may write to it
        levels.flags.writeable = False
        object.__setattr__(self, "levels", levels)

    # ------------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        runs: RunSet | Run,
        qrels: Qrels,
        *,
        depth: int | None = None,
        warn_extra_topics: bool = True,
        excluded_topics=(),
    ) -> EvalTensor:
        """Build the tensor of ``runs`` against ``qrels``.

        Every retrieved document is matched to its judgment by one hash join over (topic,
        document) keys: the documents are hashed in Arrow against the distinct judged
        documents, and (topic, document) pairs then meet in an integer table. Ids are never
        converted to Python or numpy strings. Runs interned in one vocabulary
        (:func:`~metaeval.read_runs` interns the runs it reads, see
        :attr:`~metaeval.data.Run.interned`) are matched through it: each distinct id is
        hashed once, and each retrieved one costs an integer gather.

        Parameters
        ----------
        runs : RunSet or Run
        qrels : Qrels
        depth : int, optional
            Keep only the first ``depth`` ranks of every list (trec_eval ``-M``).
        warn_extra_topics : bool
            Warn when a run answers topics that have no judgments; such topics cannot be
            evaluated and are left out, as trec_eval leaves them out.
        excluded_topics : iterable of str
            Topics left out of ``qrels`` on purpose (a topic subset): never warned about.
        """
        if isinstance(runs, Run):
            runs = RunSet([runs])
        if not isinstance(runs, RunSet):
            raise TypeError(f"runs must be a RunSet or Run, got {type(runs).__name__}")
        if not isinstance(qrels, Qrels):
            raise TypeError(f"qrels must be a Qrels, got {type(qrels).__name__}")
        if depth is not None and (
            isinstance(depth, bool)
            or not isinstance(depth, (int, np.integer))
            or not 1 <= depth <= np.iinfo(np.int32).max
        ):
            raise ValueError(
                f"depth must be a positive integer (at most 2**31 - 1) or None, got {depth!r}"
            )

        topics = qrels.topics
        n_topics, n_runs = len(topics), len(runs)
        lengths = np.zeros((n_runs, n_topics), dtype=np.int32)
        answered = np.zeros((n_runs, n_topics), dtype=bool)
        # Per ranked list (one topic block of one run): its topic position (-1 for a topic
        # without judgments) and how many of its ranks are kept.
        list_topic, list_keep = [], []
        extra: set[str] = set()
        for s, run in enumerate(runs):
            pos = np.searchsorted(topics, run.topics)
            pos = np.minimum(pos, n_topics - 1)
            known = topics[pos] == run.topics
            if not known.all():
                extra.update(map(str, run.topics[~known]))
            sizes = np.diff(run.offsets)
            kept = sizes if depth is None else np.minimum(sizes, depth)
            lengths[s, pos[known]] = kept[known]
            answered[s, pos[known]] = True
            list_topic.append(np.where(known, pos, -1))
            list_keep.append(np.where(known, kept, 0))
        extra -= set(map(str, excluded_topics))
        if extra and warn_extra_topics:
            warn(
                f"{len(extra)} topic(s) retrieved by the runs have no judgments and are not "
                f"evaluated (as in trec_eval): {shown_ids(sorted(extra))}"
            )

        joiner = _Join(qrels, *_shared_vocab(runs))
        # Matching interned runs is integer gathers, too little work to share among threads.
        threads = 1 if joiner.by_code is not None else _THREADS
        batches = _batches([len(run) for run in runs], threads)
        if len(batches) == 1:
            parts = [joiner.entries(runs, batches[0], list_topic, list_keep, n_topics)]
        else:
            # Arrow's hash lookups and numpy release the GIL: the batches join in parallel.
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=min(len(batches), threads)) as pool:
                parts = list(
                    pool.map(
                        lambda b: joiner.entries(runs, b, list_topic, list_keep, n_topics),
                        batches,
                    )
                )
        group, rank, row = (np.concatenate(p) for p in zip(*parts))
        if len(group) > 1 and not (group[1:] >= group[:-1]).all():
            # Lists given out of topic order (Run.from_ranked trusts its caller): restore the
            # (run, topic, rank) order every measure relies on.
            order = np.lexsort((rank, group))
            group, rank, row = group[order], rank[order], row[order]
        ties = None
        if any(run.ties == "expected" for run in runs):
            ties = _entry_ties(runs, group, rank, list_topic, list_keep, n_topics)
        return cls(
            runs=runs.names,
            topics=topics,
            lengths=lengths,
            answered=answered,
            judgments=np.where(qrels.grades >= 0, qrels.grades, UNJUDGED).astype(np.int8),
            judgment_topic=qrels.topic_index,
            n_grades=len(qrels.levels),
            given_entries=(group, rank, row),
            depth=max(int(lengths.max(initial=0)), 1),
            qrels=qrels,
            levels=qrels.levels,
            ties=ties,
        )

    @classmethod
    def from_index(cls, *, doc_index: np.ndarray, judgments: np.ndarray, **kwargs) -> EvalTensor:
        """A tensor from its dense index: the document at each rank is qrels row
        ``doc_index[s, t, r]``, or the sentinel ``len(judgments)`` (:data:`UNPOOLED`).

        For code that knows where every retrieved document sits in the judgment table without
        matching ids (a simulated world built from candidate indices, a re-judged view).
        ``kwargs`` are the other fields: ``runs, topics, lengths, answered, judgment_topic,
        n_grades`` and optionally ``levels`` (default: integer grades), ``judged_only``,
        ``qrels`` and ``path``.
        """
        doc_index = np.asarray(doc_index)
        judgments = np.asarray(judgments, dtype=np.int8)
        if doc_index.ndim != 3:
            raise ValueError(f"doc_index must be (runs, topics, ranks), got {doc_index.shape}")
        tensor = cls(judgments=judgments, depth=doc_index.shape[2], **kwargs)
        # The dense index is the tensor: its entries are derived from it only if a measure
        # takes the sparse path (a dense world judged everywhere never needs them).
        tensor.__dict__["doc_index"] = doc_index
        return tensor

    @classmethod
    def concat(cls, tensors: Iterable[EvalTensor]) -> EvalTensor:
        """One tensor holding the runs of several tensors, in order (the run axis joined).

        For collections whose runs do not fit in memory at once: read or generate the runs in
        chunks, build a tensor of each chunk against the same qrels, drop the runs, and join
        the tensors (only their entries are kept, see the module's memory model).

        Raises
        ------
        ValueError
            When the tensors have different topics or judgments, are condensed views, or share
            a run name.
        """
        tensors = list(tensors)
        if not tensors:
            raise ValueError("tensors is empty: give at least one EvalTensor")
        first = tensors[0]
        for t in tensors:
            if not isinstance(t, EvalTensor):
                raise TypeError(f"concat takes EvalTensors, got {type(t).__name__}")
            if t.judged_only:
                raise ValueError("concatenate full tensors, then take .condensed()")
            if not (
                np.array_equal(t.topics, first.topics)
                and np.array_equal(t.judgments, first.judgments)
                and np.array_equal(t.judgment_topic, first.judgment_topic)
                and t.n_grades == first.n_grades
                and np.array_equal(t.levels, first.levels)
            ):
                raise ValueError(
                    "the tensors must be built against the same qrels (same topics and judgments)"
                )
        names = [name for t in tensors for name in t.runs]
        if len(set(names)) != len(names):
            raise ValueError("two tensors hold a run of the same name; run names must be unique")
        n_topics = len(first.topics)
        offsets = np.cumsum([0] + [t.n_runs for t in tensors])
        dtype = _group_dtype(int(offsets[-1]), n_topics)
        return cls(
            runs=names,
            topics=first.topics,
            lengths=np.concatenate([t.lengths for t in tensors]),
            answered=np.concatenate([t.answered for t in tensors]),
            judgments=first.judgments,
            judgment_topic=first.judgment_topic,
            n_grades=first.n_grades,
            given_entries=(
                np.concatenate(
                    [
                        t.entry_group.astype(dtype) + dtype(o * n_topics)
                        for t, o in zip(tensors, offsets)
                    ]
                ),
                np.concatenate([t.entry_rank for t in tensors]),
                np.concatenate([t.entry_row for t in tensors]),
            ),
            depth=max(t.depth for t in tensors),
            qrels=first.qrels,
            path=first.path,
            levels=first.levels,
            ties=None
            if all(t.ties is None for t in tensors)
            else tuple(
                np.concatenate(part)
                for part in zip(
                    *(
                        t.ties
                        or (t.entry_rank.astype(np.int32), np.ones(t.n_entries, dtype=np.int32))
                        for t in tensors
                    )
                )
            ),
        )

    def _derived(self, **changes) -> EvalTensor:
        """A new tensor with these fields changed: no cached array is carried over."""
        return replace(self, **changes)

    # ------------------------------------------------------------------ shape
    @property
    def shape(self) -> tuple[int, int, int]:
        return (len(self.runs), len(self.topics), self.depth)

    @property
    def n_runs(self) -> int:
        return len(self.runs)

    @property
    def n_topics(self) -> int:
        return len(self.topics)

    @cached_property
    def _entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self.given_entries is not None:
            return self.given_entries
        doc_index = self.doc_index
        flat = np.flatnonzero(doc_index.reshape(-1) < len(self.judgments))
        group = flat // self.depth
        rank = flat - group * self.depth
        entries = (
            group.astype(_group_dtype(self.n_runs, self.n_topics)),
            rank.astype(np.int32),
            doc_index.reshape(-1)[flat].astype(np.int32),
        )
        for arr in entries:
            arr.flags.writeable = False
        return entries

    @property
    def entry_group(self) -> np.ndarray:
        return self._entries[0]

    @property
    def entry_rank(self) -> np.ndarray:
        return self._entries[1]

    @property
    def entry_row(self) -> np.ndarray:
        return self._entries[2]

    @cached_property
    def n_entries(self) -> int:
        """Number of entries: ranks whose document is in the qrels."""
        if self.given_entries is None and "_entries" not in self.__dict__:
            return int(np.count_nonzero(self.doc_index < len(self.judgments)))
        return len(self.entry_row)

    def __repr__(self) -> str:
        kind = ", judged only" if self.judged_only else ""
        return (
            f"EvalTensor({self.n_runs} runs x {self.n_topics} topics x depth {self.depth}, "
            f"{len(self.judgments)} judgments{kind})"
        )

    def __getstate__(self) -> dict:
        # Derived arrays are rebuilt on demand: pickling (to a worker process) sends the
        # entries only, or the dense index of a tensor made from one.
        keep = set() if self.given_entries is not None else {"doc_index"}
        return {k: v for k, v in self.__dict__.items() if k not in _CACHED or k in keep}

    # ------------------------------------------------------------------ the two paths
    @property
    def sparse(self) -> bool:
        """Whether measures read the entries (True) or the dense codes.

        ``path="auto"`` chooses the entries when they are at most :data:`SPARSE_SHARE` of
        S x T x D; :meth:`using` fixes the choice. Values are identical either way.
        """
        if self.path != "auto":
            return self.path == "sparse"
        cells = self.n_runs * self.n_topics * self.depth
        return self.n_entries <= SPARSE_SHARE * cells

    def using(self, path: str) -> EvalTensor:
        """The same tensor, with its measures computed on the given path.

        Parameters
        ----------
        path : {"auto", "sparse", "dense"}
            ``sparse``: over the entries; ``dense``: over :attr:`codes`; ``auto``: the cheaper.
        """
        if path not in PATHS:
            raise ValueError(f"path must be one of {PATHS}, got {path!r}")
        if path == self.path:
            return self
        view = self._derived(path=path)
        for name in ("doc_index", "codes", "entry_codes", "_entries", "n_entries"):
            if name in self.__dict__:
                view.__dict__[name] = self.__dict__[name]
        return view

    # ------------------------------------------------------------------ codes
    @cached_property
    def entry_codes(self) -> np.ndarray:
        """(E,) int8 current code of every entry (a grade, UNJUDGED or UNPOOLED)."""
        codes = self.judgments[self.entry_row]
        codes.flags.writeable = False
        return codes

    @cached_property
    def _kept(self) -> np.ndarray | None:
        """The entries measures read (positions), or None for all of them."""
        codes = self.entry_codes
        removed = int(np.count_nonzero(codes == UNPOOLED))
        # Judgments removed by a degrader leave entries that no measure reads; past a quarter
        # of them, one filtering pass costs less than every measure skipping them.
        if 4 * removed < len(codes):
            return None
        return np.flatnonzero(codes != UNPOOLED)

    @cached_property
    def _current(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        keep, codes = self._kept, self.entry_codes
        if keep is None:
            return self.entry_group, self.entry_rank, codes
        return self.entry_group[keep], self.entry_rank[keep], codes[keep]

    def tied_entries(self) -> tuple[np.ndarray, ...]:
        """(group, rank, code, tie start, tie size) of the entries under the current
        judgments: :meth:`entries` and, for each, its group of tied documents (see
        :attr:`ties`; every entry alone in its group when the runs were not read with
        ``ties="expected"``)."""
        group, rank, codes = self._current
        if self.ties is None:
            return group, rank, codes, rank, np.ones(len(rank), dtype=np.int32)
        start, size = self.ties
        if self._kept is not None:
            start, size = start[self._kept], size[self._kept]
        return group, rank, codes, start, size

    @cached_property
    def _mixed_tie_groups(self) -> tuple[np.ndarray, ...]:
        """The groups of tied documents whose order changes what a measure sees: two
        documents of different codes (two grades, or a judged document and one outside the
        qrels). Returns (positions, first, ends): the tied entries' positions among
        :meth:`tied_entries`, in order, and each such group's slice ``first[i]:ends[i]`` of
        them."""
        group, _, codes, start, size = self.tied_entries()
        tied = np.flatnonzero(size > 1)
        if not len(tied):
            return tied, tied, tied
        group, start, size, codes = group[tied], start[tied], size[tied], codes[tied]
        opens = np.ones(len(tied), dtype=bool)
        opens[1:] = (group[1:] != group[:-1]) | (start[1:] != start[:-1])
        first = np.flatnonzero(opens)
        ends = np.append(first[1:], len(tied))
        low = np.minimum.reduceat(codes, first)
        high = np.maximum.reduceat(codes, first)
        # Members that are not entries are outside the qrels: they read UNPOOLED.
        partial = ends - first < size[first]
        mixed = (low != high) | (partial & (high != UNPOOLED))
        return tied, first[mixed], ends[mixed]

    @cached_property
    def order_ties(self) -> bool:
        """Whether the order of some group of tied documents changes what a measure sees.

        True when a group (see :attr:`ties`) holds two documents of different codes: two
        grades, or a judged document and one outside the qrels. Only then do measures give
        their expected value over the orderings (those without a closed form score each of
        them, :meth:`tie_orderings`).
        """
        return self.ties is not None and len(self._mixed_tie_groups[1]) > 0

    def tie_orderings(self, limit: int, total: int, *, cells: int = 1 << 24) -> Iterator:
        """Every ordering of the tied documents that changes what a measure sees, as tensors.

        Each list (run, topic) holding a group of tied documents of different codes (see
        :attr:`order_ties`) is written out once per distinct arrangement of the codes of its
        groups, taken jointly, as a run of its own. When the documents of each group are in
        uniformly random order, the distinct arrangements of its codes are equally likely: a
        measure's expected value over the orderings is its mean over these runs.

        Parameters
        ----------
        limit, total : int
            Most orderings of one list, and of all lists.
        cells : int
            Most runs x ranks of one tensor yielded.

        Returns
        -------
        iterator of (lists, tensor)
            ``tensor`` holds P runs without ties on one topic of this tensor (its judgments
            those of the topic); ``lists[i]``, int64, is the list its run i stands for, as
            run * n_topics + topic.

        Raises
        ------
        ValueError
            When a list has more than ``limit`` orderings or all of them more than ``total``
            (the message says which and how many), before anything is yielded.
        """
        plan = self._ordering_plan(limit, total)
        return self._orderings(plan, max(1, cells // self.depth))

    def mixed_tie_groups(self) -> tuple[np.ndarray, list[tuple[int, np.ndarray, np.ndarray]]]:
        """The groups of tied documents whose order matters (see :attr:`order_ties`).

        Returns
        -------
        lists : ndarray of int64
            The list each group is in, as run * n_topics + topic, in (list, rank) order.
        groups : list of (start, codes, rows)
            Each group's 0-based first rank and the codes and qrels rows of its n members;
            members outside the qrels read UNPOOLED, row -1 (as removed judgments do).
        """
        tied, first, ends = self._mixed_tie_groups
        group, _, codes, start, size = self.tied_entries()
        rows = self.entry_row if self._kept is None else self.entry_row[self._kept]
        groups = []
        for a, b in zip(first, ends):
            members = tied[a:b]
            n = int(size[members[0]])
            member_codes = np.full(n, UNPOOLED, dtype=codes.dtype)
            member_codes[: len(members)] = codes[members]
            member_rows = np.full(n, -1, dtype=np.int64)
            member_rows[: len(members)] = rows[members]
            groups.append((int(start[members[0]]), member_codes, member_rows))
        return group[tied[first]].astype(np.int64), groups

    def _ordering_plan(self, limit: int, total: int) -> list[tuple]:
        """Per list with mixed groups: (list, fixed ranks, fixed rows, [(start, codes, rows)
        of each mixed group's n members]), after checking the number of orderings."""
        tied, first, ends = self._mixed_tie_groups
        if not len(first):
            return []
        group, rank, codes, _, _ = self.tied_entries()
        rows = self.entry_row if self._kept is None else self.entry_row[self._kept]
        group_lists, groups = self.mixed_tie_groups()
        # log of the number of distinct arrangements: n! / prod over codes of count!
        log_counts = np.array([log_arrangements(member_codes) for _, member_codes, _ in groups])
        lists, which = np.unique(group_lists, return_inverse=True)
        per_list = np.bincount(which, weights=log_counts)
        over = np.flatnonzero(per_list > math.log(limit) + 1e-9)
        if len(over):
            s, t = divmod(int(lists[over[0]]), self.n_topics)
            raise ValueError(
                f"run {self.runs[s]!r}, topic {self.topics[t]!r} has about "
                f"{_exp_text(per_list[over[0]])} orderings of its tied documents, more "
                f"than the {limit:,} enumerated"
            )
        if np.exp(per_list).sum() > total:
            raise ValueError(
                f"the runs have about {np.exp(per_list).sum():.3g} orderings of tied documents "
                f"in all, more than the {total:,} enumerated"
            )
        mixed = np.zeros(len(group), dtype=bool)
        mixed[tied[np.concatenate([np.arange(a, b) for a, b in zip(first, ends)])]] = True
        keep = ~mixed & (codes != UNPOOLED)
        # each list's groups: the groups sorted by list, cut where the list changes
        by_list = np.split(np.argsort(which, kind="stable"), np.cumsum(np.bincount(which))[:-1])
        plan = []
        for lst, mine in zip(lists, by_list):
            a, b = np.searchsorted(group, [lst, lst + 1])
            fixed = np.arange(a, b)[keep[a:b]]
            plan.append((int(lst), rank[fixed], rows[fixed], [groups[g] for g in mine]))
        return plan

    def _orderings(self, plan: list[tuple], per_tensor: int) -> Iterator:
        T = self.n_topics
        plan = sorted(plan, key=lambda item: (item[0] % T, item[0]))  # topic by topic
        # blocks (list, ranks, rows): one row of ranks and of qrels rows per ordering
        pending: list[tuple[int, np.ndarray, np.ndarray]] = []
        held = 0
        for i, (lst, fixed_ranks, fixed_rows, groups) in enumerate(plan):
            parts = [_arrangements(start, codes, rows) for start, codes, rows in groups]
            count = math.prod(len(r) for r, _ in parts)
            j, stride = np.arange(count), 1
            ranks = [np.broadcast_to(fixed_ranks, (count, len(fixed_ranks)))]
            rows = [np.broadcast_to(fixed_rows, (count, len(fixed_rows)))]
            for r, w in parts:  # every combination of the groups' arrangements
                pick = (j // stride) % len(r)
                ranks.append(r[pick])
                rows.append(w[pick])
                stride *= len(r)
            pending.append((lst, np.concatenate(ranks, axis=1), np.concatenate(rows, axis=1)))
            held += count
            last_of_topic = i + 1 == len(plan) or plan[i + 1][0] % T != lst % T
            while held >= per_tensor or (held and last_of_topic):
                chunk, taken = [], 0
                while pending and taken < per_tensor:  # whole blocks, the last one cut
                    block_list, block_ranks, block_rows = pending.pop(0)
                    keep = min(len(block_ranks), per_tensor - taken)
                    chunk.append((block_list, block_ranks[:keep], block_rows[:keep]))
                    if keep < len(block_ranks):
                        pending.insert(0, (block_list, block_ranks[keep:], block_rows[keep:]))
                    taken += keep
                held -= taken
                yield self._ordering_tensor(chunk)

    def _ordering_tensor(self, blocks: list[tuple]) -> tuple[np.ndarray, EvalTensor]:
        """Blocks (list, ranks, qrels rows) of orderings of lists of one topic, a run per
        row of each block, as a tensor of that topic alone."""
        lists = np.concatenate([np.full(len(r), lst, dtype=np.int64) for lst, r, _ in blocks])
        s, t = np.divmod(lists, self.n_topics)
        topic = int(t[0])
        topic_rows = np.flatnonzero(self.judgment_topic == topic)
        P = len(lists)
        per_run = np.concatenate([np.full(len(r), r.shape[1]) for _, r, _ in blocks])
        group = np.repeat(np.arange(P, dtype=np.int32), per_run)
        rank = np.concatenate([r.reshape(-1) for _, r, _ in blocks]).astype(np.int32)
        row = np.searchsorted(topic_rows, np.concatenate([w.reshape(-1) for _, _, w in blocks]))
        order = np.lexsort((rank, group))
        tensor = EvalTensor(
            runs=[f"ordering {i}" for i in range(P)],
            topics=self.topics[topic : topic + 1],
            lengths=self.lengths[s, t][:, None],
            answered=self.answered[s, t][:, None],
            judgments=self.judgments[topic_rows],
            judgment_topic=np.zeros(len(topic_rows), dtype=self.judgment_topic.dtype),
            n_grades=self.n_grades,
            given_entries=(group[order], rank[order], row[order].astype(np.int32)),
            depth=self.depth,
            judged_only=self.judged_only,
            path=self.path,
            levels=self.levels,
        )
        return lists, tensor

    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(group, rank, code) of the entries under the current judgments, in (run, topic,
        rank) order: what the measures read on the sparse path.

        Entries whose judgment a degrader removed (code :data:`UNPOOLED`) are left out when
        they are many; the others may still be there, so a test of the codes must reject
        :data:`UNPOOLED`, as every test of relevance or judgedness does. Computed once per
        tensor.
        """
        return self._current

    def _flat(self) -> np.ndarray:
        return self.entry_group.astype(np.int64) * self.depth + self.entry_rank

    @cached_property
    def doc_index(self) -> np.ndarray:
        out = np.full(self.n_runs * self.n_topics * self.depth, len(self.judgments), np.int32)
        out[self._flat()] = self.entry_row
        return out.reshape(self.shape)

    @cached_property
    def codes(self) -> np.ndarray:
        if "doc_index" in self.__dict__:
            # One gather through the index, as cheap as a scatter and already in memory.
            lookup = np.append(self.judgments, np.int8(UNPOOLED))
            return lookup[self.doc_index]
        out = np.full(self.n_runs * self.n_topics * self.depth, UNPOOLED, np.int8)
        out[self._flat()] = self.entry_codes
        return out.reshape(self.shape)

    # ------------------------------------------------------------------ judgment statistics
    @cached_property
    def grade_counts(self) -> np.ndarray:
        """(T, n_grades) number of judged documents of each grade per topic."""
        judged = self.judgments >= 0
        flat = self.judgment_topic[judged] * self.n_grades + self.judgments[judged]
        counts = np.bincount(flat, minlength=self.n_topics * self.n_grades)
        return counts.reshape(self.n_topics, self.n_grades)

    @property
    def integer_grades(self) -> bool:
        """Whether the grades are the integers 0 .. n_grades-1 (code = grade)."""
        return bool(np.array_equal(self.levels, np.arange(self.n_grades)))

    def code_at_least(self, rel: float) -> int:
        """The lowest grade code whose grade is >= ``rel``: a judged document is relevant at
        level ``rel`` exactly when its code is at least this (``n_grades`` when no grade
        reaches ``rel``; 0 for ``rel <= 0``). On integer grades and an integer ``rel`` it is
        ``rel`` itself (clipped to 0 .. n_grades), so code >= it is grade >= rel."""
        return int(np.searchsorted(self.levels, rel, side="left"))

    def n_relevant(self, rel: float = 1) -> np.ndarray:
        """(T,) number of judged documents with grade >= ``rel`` per topic."""
        return self.grade_counts[:, self.code_at_least(rel) :].sum(axis=1)

    def n_nonrelevant(self, rel: float = 1) -> np.ndarray:
        """(T,) number of judged documents with grade < ``rel`` per topic."""
        return self.grade_counts[:, : self.code_at_least(rel)].sum(axis=1)

    def relevant(self, rel: float = 1) -> np.ndarray:
        """(S, T, D) bool: the document at this rank is judged with grade >= ``rel``."""
        return self.codes >= self.code_at_least(rel)

    def judged(self) -> np.ndarray:
        """(S, T, D) bool: the document at this rank has a judgment (grade >= 0)."""
        return self.codes >= 0

    def valid(self) -> np.ndarray:
        """(S, T, D) bool: this rank is inside the ranked list."""
        return np.arange(self.depth) < self.lengths[:, :, None]

    # ------------------------------------------------------------------ derived views
    def with_judgments(self, keep: np.ndarray, *, dropped: str = "unpooled") -> EvalTensor:
        """The tensor under a reduced judgment set.

        Costs one pass over the judgments; the entries are shared with this tensor, and a
        measure then reads the codes of the entries only (see the module's memory model).

        Parameters
        ----------
        keep : ndarray of bool, shape (Q,)
            Which rows of the qrels table stay judged (aligned with ``qrels`` order).
        dropped : {"unpooled", "unjudged"}
            What a dropped judgment becomes: a document outside the pool (trec_eval: absent from
            the qrels; stratified sampling, shallow pools) or a pooled but unjudged one (qrels
            grade -1; uniform sampling for infAP).
        """
        keep = np.asarray(keep)
        if keep.shape != self.judgments.shape or keep.dtype != bool:
            raise ValueError(
                f"keep must be a bool array of shape {self.judgments.shape}, "
                f"got {keep.dtype} {keep.shape}"
            )
        if dropped not in ("unpooled", "unjudged"):
            raise ValueError(f"dropped must be 'unpooled' or 'unjudged', got {dropped!r}")
        code = UNPOOLED if dropped == "unpooled" else UNJUDGED
        return self.with_grades(np.where(keep, self.judgments, np.int8(code)))

    def with_grades(self, judgments: np.ndarray) -> EvalTensor:
        """The tensor under new codes for the qrels rows (a grade, UNJUDGED or UNPOOLED each).

        Used for assessor noise (changed grades) and by :meth:`with_judgments`.
        """
        judgments = np.asarray(judgments)
        if judgments.shape != self.judgments.shape:
            raise ValueError(
                f"judgments must have shape {self.judgments.shape}, got {judgments.shape}"
            )
        if judgments.min(initial=0) < UNJUDGED or judgments.max(initial=0) >= self.n_grades:
            raise ValueError(f"judgment codes must lie in [{UNJUDGED}, {self.n_grades - 1}]")
        if self.judged_only:
            raise ValueError("re-judge the full tensor, then take .condensed()")
        entries = self.given_entries
        if entries is None and ("_entries" in self.__dict__ or self.sparse):
            entries = self._entries  # derived once here, not once per re-judged view
        view = self._derived(judgments=judgments.astype(np.int8), given_entries=entries)
        if "doc_index" in self.__dict__:
            view.__dict__["doc_index"] = self.__dict__["doc_index"]  # shared, never written
        return view

    @cached_property
    def _condensed(self) -> EvalTensor:
        judged = np.flatnonzero(self.entry_codes >= 0)
        group = self.entry_group[judged]
        sizes = group_sizes(group, self.n_runs * self.n_topics)
        # The judged entries keep their order; their new rank is their position in the group.
        start = np.cumsum(sizes) - sizes
        rank = (np.arange(len(judged)) - start[group]).astype(np.int32)
        lengths = sizes.reshape(self.n_runs, self.n_topics).astype(np.int32)
        ties = None
        if self.ties is not None:
            # A group of tied documents keeps its judged members, in the condensed ranks.
            old = self.ties[0][judged]
            opens = np.ones(len(judged), dtype=bool)
            opens[1:] = (group[1:] != group[:-1]) | (old[1:] != old[:-1])
            first = np.flatnonzero(opens)
            block = np.cumsum(opens) - 1
            sizes_of = np.diff(np.append(first, len(judged))).astype(np.int32)
            ties = (rank[first][block], sizes_of[block])
        view = self._derived(
            lengths=lengths,
            given_entries=(group, rank, self.entry_row[judged]),
            depth=max(int(lengths.max(initial=0)), 1),
            judged_only=True,
            ties=ties,
        )
        view.__dict__["entry_codes"] = self.entry_codes[judged]
        return view

    def condensed(self) -> EvalTensor:
        """The condensed-list view: unjudged documents removed, order kept (Sakai SIGIR 2007).

        Matches trec_eval's ``-J``. Computed once per tensor and cached.
        """
        return self if self.judged_only else self._condensed

    def judged_qrels(self) -> Qrels:
        """The current judgment set as Qrels (removed rows dropped, unjudged rows as -1)."""
        if self.qrels is None:
            raise ValueError("this tensor was built without its Qrels")
        keep = self.judgments != UNPOOLED
        grades = np.where(self.judgments >= 0, self.judgments, -1)
        return self.qrels.with_grades(grades, keep=keep, levels=self.levels)


#: Arrays derived from the fields and cached on first use (never pickled).
_CACHED = (
    "codes",
    "doc_index",
    "entry_codes",
    "grade_counts",
    "n_entries",
    "order_ties",
    "_mixed_tie_groups",
    "_condensed",
    "_current",
    "_entries",
    "_kept",
)


def _batches(sizes: list[int], threads: int) -> list[list[int]]:
    """Runs (by position) in contiguous batches of about equal rows: about ``_JOIN_ROWS`` at
    most each, and one per thread when there are enough rows to share."""
    total = sum(sizes)
    n = max(-(-total // _JOIN_ROWS), min(threads, total // _PARALLEL_ROWS), 1)
    bounds = np.cumsum(sizes)
    # Run s goes to the batch its last row falls in.
    which = np.minimum((bounds - 1) * n // max(total, 1), n - 1)
    return [b for b in (np.flatnonzero(which == k).tolist() for k in range(n)) if b]


def group_sizes(group: np.ndarray, n_groups: int) -> np.ndarray:
    """Number of occurrences of each of 0..n_groups-1 in ``group``, which is sorted.

    A search of the group bounds in the sorted array, a few thousand binary searches, instead
    of a bincount's pass over every element.
    """
    return np.diff(np.searchsorted(group, np.arange(n_groups + 1, dtype=group.dtype)))


def _entry_ties(
    runs: RunSet,
    group: np.ndarray,
    rank: np.ndarray,
    list_topic: list,
    list_keep: list,
    n_topics: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(start, size) of the group of tied documents of every entry (:attr:`EvalTensor.ties`):
    from :meth:`~metaeval.data.Run.tie_groups` for runs read with ``ties="expected"``, the
    entry alone for the others.

    Raises
    ------
    ValueError
        When a depth cut splits a group of tied documents: which of them are kept would
        depend on an order the expected value averages over.
    """
    start, size = rank.astype(np.int32), np.ones(len(rank), dtype=np.int32)
    for s, run in enumerate(runs):
        if run.ties != "expected":
            continue
        run_start, run_size = run.tie_groups()
        keep = list_keep[s]
        cut = np.flatnonzero((keep > 0) & (keep < np.diff(run.offsets)))
        last = run.offsets[cut] + keep[cut] - 1  # the last row kept of each cut list
        split = run_start[last] + run_size[last] > keep[cut]
        if split.any():
            i = cut[np.argmax(split)]
            raise ValueError(
                f"run {run.name!r}, topic {run.topics[i]!r}: the depth cut at {keep[i]} "
                "splits a group of tied documents; ties='expected' needs whole groups (cut "
                "deeper, or order ties by trec_eval or input)"
            )
        a, b = np.searchsorted(group, [s * n_topics, (s + 1) * n_topics])
        if a == b:
            continue
        which = np.full(n_topics, -1)
        known = list_topic[s] >= 0
        which[list_topic[s][known]] = np.flatnonzero(known)
        rows = run.offsets[which[group[a:b] - s * n_topics]] + rank[a:b]
        start[a:b], size[a:b] = run_start[rows], run_size[rows]
    return start, size


def _group_dtype(n_runs: int, n_topics: int):
    return np.int32 if n_runs * n_topics < 2**31 else np.int64


def _exp_text(log_value: float) -> str:
    """exp(log_value) written as 1.85e+05, however large (a float would overflow)."""
    exponent = math.floor(log_value / math.log(10))
    mantissa = float(f"{math.exp(log_value - exponent * math.log(10)):.3g}")
    if mantissa >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.3g}e+{exponent:02d}"


def log_arrangements(items: np.ndarray) -> float:
    """The log of the number of distinct arrangements of ``items``: n! / prod over the
    distinct values of count!."""
    _, counts = np.unique(items, return_counts=True)
    return math.lgamma(len(items) + 1) - sum(math.lgamma(c + 1) for c in counts)


def distinct_arrangements(items: np.ndarray) -> np.ndarray:
    """Every distinct arrangement of ``items`` (equal items are interchangeable), as an
    (A, n) array: where each value's items go, value by value."""
    values, counts = np.unique(items, return_counts=True)
    n = len(items)
    placed: list[np.ndarray] = []

    def place(arrangement: np.ndarray, free: list[int], i: int) -> None:
        if i == len(values) - 1:
            arrangement = arrangement.copy()
            arrangement[free] = values[i]
            placed.append(arrangement)
            return
        for chosen in itertools.combinations(range(len(free)), int(counts[i])):
            taken = set(chosen)
            here = arrangement.copy()
            here[[free[c] for c in chosen]] = values[i]
            place(here, [f for c, f in enumerate(free) if c not in taken], i + 1)

    place(np.empty(n, dtype=items.dtype), list(range(n)), 0)
    return np.array(placed)


def _arrangements(start: int, codes: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every distinct arrangement of one group of tied documents: (A, m) ranks and qrels
    rows of its m members in the qrels, the group opening at rank ``start``. ``codes`` and
    ``rows`` are its n members' (UNPOOLED, row -1: outside the qrels); members of one code are
    interchangeable, so an arrangement is where each code's members go."""
    values = np.unique(codes)
    arrangements = distinct_arrangements(codes)  # (A, n) codes by position
    A = len(arrangements)
    ranks, member_rows = [], []
    for value in values[values != UNPOOLED]:
        of_value = rows[codes == value]
        _, position = np.nonzero(arrangements == value)  # by arrangement, then position
        ranks.append(start + position.reshape(A, len(of_value)))
        member_rows.append(np.broadcast_to(of_value, (A, len(of_value))))
    return np.concatenate(ranks, axis=1), np.concatenate(member_rows, axis=1)


def _shared_vocab(runs: RunSet) -> tuple[pa.Array | None, np.ndarray | None]:
    """The vocabulary every run's documents are interned in, if they all share one, and the
    numbers of its ids when they are numbered (:attr:`~metaeval.data.Run.interned`)."""
    first = runs[0].interned
    if first is None:
        return None, None
    vocab = first[0]
    if not all(r.interned is not None and r.interned[0] is vocab for r in runs):
        return None, None
    return vocab, runs[0]._numbers


class _Join:
    """The hash join of run documents against the judgments, over (topic, document) keys.

    The build side is the qrels: its distinct documents, numbered (the hash table, Arrow's),
    and a (topic, document number) -> row table, dense when topics x distinct documents is
    small, else sorted keys. The probe side is the runs, a batch of runs at a time: their ids
    hashed, or, for runs interned in one vocabulary (``vocab``), their codes, through the
    number of each vocabulary entry (:attr:`by_code`, -1 when not judged), found once.
    """

    def __init__(
        self, qrels: Qrels, vocab: pa.Array | None = None, numbers: np.ndarray | None = None
    ):
        encoded = pc.dictionary_encode(qrels.docs)
        self.vocab = encoded.dictionary
        #: Number of every entry of the runs' shared vocabulary among the judged documents.
        self.by_code = None
        if numbers is not None:
            # Numbered ids: the judged ones that are numbers written the one way are found by
            # a binary search among the vocabulary's numbers (ascending), not by hashing it.
            self.by_code = np.full(len(numbers), -1, dtype=np.int32)
            plain = pc.match_substring_regex(self.vocab, r"^(0|[1-9][0-9]{0,17})$")
            uid = np.flatnonzero(plain.to_numpy(zero_copy_only=False))
            judged = pc.cast(self.vocab.take(uid), pa.int64()).to_numpy()
            at = np.minimum(np.searchsorted(numbers, judged), len(numbers) - 1)
            hit = numbers[at] == judged
            self.by_code[at[hit]] = uid[hit]
        elif vocab is not None:
            # A hash of each distinct retrieved id (375,627 on DL 2020) instead of each
            # retrieved one (3 million): the rest of the match is integer gathers.
            found = pc.index_in(vocab, value_set=self.vocab)
            self.by_code = found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32)
        if self.by_code is not None:
            self.judged_code = self.by_code >= 0
        vocab = self.vocab
        self.numbered = pa.table(
            {"doc": vocab, "uid": pa.array(np.arange(len(vocab), dtype=np.int32))}
        )
        uid = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        topic = qrels.topic_index.astype(np.int64)
        self.n_judgments = len(qrels)
        self.n_vocab = max(len(vocab), 1)
        rows = np.arange(len(qrels), dtype=np.int32)
        if len(qrels.topics) * self.n_vocab <= _TABLE_CELLS:
            self.table = np.full((len(qrels.topics), self.n_vocab), len(qrels), dtype=np.int32)
            self.table[topic, uid] = rows
        else:
            self.table = None
            keys = topic * self.n_vocab + uid
            order = np.argsort(keys, kind="stable")
            self.keys, self.rows = keys[order], rows[order]

    def rows_of(self, topic: np.ndarray, uid: np.ndarray) -> np.ndarray:
        """Qrels row of each (topic, document code), or n_judgments when not judged."""
        if self.table is not None:
            return self.table[topic, uid]
        keys = topic.astype(np.int64) * self.n_vocab + uid
        at = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        return np.where(self.keys[at] == keys, self.rows[at], self.n_judgments).astype(np.int32)

    def lookup(self, docs: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
        """Positions of the judged ids among ``docs``, ascending, and their numbers.

        Two Arrow kernels give the same answer at different costs. Its hash join hashes a batch
        of ids at a time and outputs only the matches: the faster when few ids are judged (1.5x
        on TREC DL, 11% of ids judged); ``index_in`` looks each id up and outputs one value per
        id: the faster when most are (2x when all are). The share judged is estimated on a
        sample of the ids, and decides.
        """
        n = len(docs)
        sample = docs.take(np.linspace(0, n - 1, min(n, _SAMPLE_IDS), dtype=np.int64))
        judged = 1 - pc.index_in(sample, value_set=self.vocab).null_count / max(len(sample), 1)
        if judged > _JOIN_MATCH_SHARE:
            found = pa.concat_arrays(pc.index_in(docs, value_set=self.vocab).chunks)
            at = _valid_positions(found)
            values = np.frombuffer(found.buffers()[1], dtype=np.int32, count=found.offset + n)
            return at, values[found.offset :][at]
        probe = pa.table({"doc": docs, "at": pa.array(np.arange(n, dtype=np.int32))})
        # on this thread (use_threads=False): batches join on threads of ours, side by side
        found = probe.join(self.numbered, keys="doc", join_type="inner", use_threads=False)
        at, uid = (found[c].to_numpy() for c in ("at", "uid"))
        if len(at) > 1 and not (at[1:] > at[:-1]).all():  # the join keeps probe order, in fact
            order = np.argsort(at, kind="stable")
            at, uid = at[order], uid[order]
        return at, uid

    def lookup_codes(self, codes: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`lookup` for documents given as codes into the runs' shared vocabulary, one
        array per run (positions count through the runs in turn)."""
        ats, uids, base = [], [], 0
        for c in codes:  # per run, not per document: the codes are not copied together
            # A gather of one byte per document from a table that stays in cache (one per
            # distinct id), then the numbers of the few judged ones only.
            at = np.flatnonzero(np.take(self.judged_code, c))
            ats.append(at + base)
            uids.append(self.by_code[c[at]])
            base += len(c)
        return np.concatenate(ats), np.concatenate(uids)

    def entries(self, runs: RunSet, batch: list[int], list_topic, list_keep, n_topics: int):
        """(group, rank, row) of every entry of the runs at positions ``batch``, in order."""
        if self.by_code is not None:
            at, uid = self.lookup_codes([runs[s].interned[1] for s in batch])
        else:
            # One hash lookup per retrieved document; ids stay in Arrow, in their own buffers
            # (a chunk per run, no copy).
            docs = pa.chunked_array([runs[s].docs for s in batch], type=pa.string())
            at, uid = self.lookup(docs)
        # Every ranked list of the batch: first row, (run, topic) group, topic and kept length
        # (0 for a topic without judgments, so none of its ranks is kept).
        starts, group, topic, keep = [], [], [], []
        base = 0
        for s in batch:
            run = runs[s]
            starts.append(base + run.offsets[:-1])
            group.append(s * n_topics + list_topic[s])
            topic.append(list_topic[s])
            keep.append(list_keep[s])
            base += len(run)
        starts, group = np.concatenate(starts), np.concatenate(group)
        topic, keep = np.concatenate(topic), np.concatenate(keep)
        # Both sides are sorted: how many found rows each list holds, from a search of the few
        # list starts among the found rows (not of every found row among the starts).
        ends = np.append(starts, base)
        counts = np.diff(np.searchsorted(at, ends))
        rank = (at - np.repeat(starts, counts)).astype(np.int32)
        group = np.repeat(group.astype(_group_dtype(len(runs), n_topics)), counts)
        topic = np.repeat(topic, counts)
        if (keep < np.diff(ends)).any():  # a depth cut, or a topic without judgments (keep 0)
            inside = np.flatnonzero(rank < np.repeat(keep, counts))
            rank, group, topic, uid = rank[inside], group[inside], topic[inside], uid[inside]
        rows = self.rows_of(topic, uid)
        hit = np.flatnonzero(rows < self.n_judgments)
        return group[hit], rank[hit], rows[hit]


def _valid_positions(arr: pa.Array) -> np.ndarray:
    """Positions of the non-null values of an Arrow array (read from its validity bitmap)."""
    if arr.null_count == 0:
        return np.arange(len(arr))
    # numpy unpacks the bitmap and finds the set bits about 3x faster than Arrow's
    # is_valid + indices_nonzero
    bits = np.unpackbits(
        np.frombuffer(arr.buffers()[0], dtype=np.uint8),
        count=arr.offset + len(arr),
        bitorder="little",
    )
    return np.flatnonzero(bits[arr.offset :].view(bool))
