"""The evaluation tensor: every run's ranked lists as grade codes, runs x topics x ranks.

This is the one internal representation that every measure reads. It is built once from a
:class:`~metaeval.data.RunSet` and a :class:`~metaeval.data.Qrels`; re-evaluating under a
reduced or perturbed judgment set is one vectorised gather through :attr:`EvalTensor.doc_index`
(:meth:`EvalTensor.with_judgments`, :meth:`EvalTensor.with_grades`), with no re-parsing and no
re-sorting of the runs.

Memory: 5 bytes per run x topic x rank of the deepest list (``codes``, int8, and
``doc_index``, int32), plus 5 bytes per judgment; a condensed view, once asked for, adds the
same again for the judged ranks. 100 runs x 50 topics x 1000 ranks take 25 MB.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metaeval._warnings import warn
from metaeval.data import Qrels, Run, RunSet

#: Code of a retrieved document that is not in the qrels ("not pooled"; trec_eval RELVALUE_NONPOOL).
#: Positions past the end of a list hold this code too; ``lengths`` tells them apart.
UNPOOLED = -1
#: Code of a retrieved document that is in the qrels with a negative grade ("pooled but
#: unjudged"; trec_eval RELVALUE_UNJUDGED). infAP treats it differently from UNPOOLED.
UNJUDGED = -2

TOPIC_POLICIES = ("zero", "skip")


@dataclass(frozen=True, eq=False)
class EvalTensor:
    """Runs x topics x ranks grade codes, with what every measure needs beside them.

    Attributes
    ----------
    runs : list of str
        Run names, the S axis.
    topics : ndarray of str
        Topic ids of the qrels, the T axis (trec_eval ``-c``: every judged topic is evaluated).
    codes : ndarray of int8, shape (S, T, D)
        Grade of the document at each rank (>= 0), :data:`UNPOOLED` (-1) when it is not in the
        qrels or the list has ended, :data:`UNJUDGED` (-2) when it is pooled but not judged.
    lengths : ndarray of int32, shape (S, T)
        Length of each ranked list (0 when the run did not answer the topic).
    answered : ndarray of bool, shape (S, T)
        Whether the run answered the topic at all (used by ``missing="skip"``).
    doc_index : ndarray of int32, shape (S, T, D)
        Row of the retrieved document in the qrels table (:attr:`judgments`), or ``n_judgments``
        (a sentinel row that always reads :data:`UNPOOLED`) when it is not in the qrels.
    judgments : ndarray of int8, shape (Q,)
        Current code of every qrels row: a grade, :data:`UNJUDGED`, or :data:`UNPOOLED` for a
        judgment removed by a degrader.
    judgment_topic : ndarray of int64, shape (Q,)
        Topic position of every qrels row.
    n_grades : int
        One more than the highest grade in the original qrels (grades 0 .. n_grades-1).
    judged_only : bool
        True for a condensed view (unjudged documents removed, Sakai 2007).
    """

    runs: list[str]
    topics: np.ndarray
    codes: np.ndarray
    lengths: np.ndarray
    answered: np.ndarray
    doc_index: np.ndarray
    judgments: np.ndarray
    judgment_topic: np.ndarray
    n_grades: int
    judged_only: bool = False
    qrels: Qrels | None = field(default=None, repr=False)

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
        if depth is not None and (not isinstance(depth, (int, np.integer)) or depth < 1):
            raise ValueError(f"depth must be a positive integer or None, got {depth!r}")

        topics = qrels.topics
        n_topics, n_runs = len(topics), len(runs)
        # Map every run row to (run, topic position, rank).
        run_ids, topic_ids, ranks, docs = [], [], [], []
        extra: set[str] = set()
        answered = np.zeros((n_runs, n_topics), dtype=bool)
        for s, run in enumerate(runs):
            pos = np.searchsorted(topics, run.topics)
            pos_clip = np.minimum(pos, n_topics - 1)
            known = topics[pos_clip] == run.topics
            if not known.all():
                extra.update(map(str, run.topics[~known]))
            answered[s, pos_clip[known]] = True
            sizes = np.diff(run.offsets)
            row_topic = np.repeat(np.where(known, pos_clip, -1), sizes)
            row_rank = np.arange(len(run)) - np.repeat(run.offsets[:-1], sizes)
            keep = row_topic >= 0
            if depth is not None:
                keep &= row_rank < depth
            run_ids.append(np.full(int(keep.sum()), s, dtype=np.int64))
            topic_ids.append(row_topic[keep])
            ranks.append(row_rank[keep])
            docs.append(run.docs.filter(pa.array(keep)) if not keep.all() else run.docs)
        extra -= set(map(str, excluded_topics))
        if extra and warn_extra_topics:
            shown = ", ".join(sorted(extra)[:5]) + (", ..." if len(extra) > 5 else "")
            warn(
                f"{len(extra)} topic(s) retrieved by the runs have no judgments and are not "
                f"evaluated (as in trec_eval): {shown}"
            )
        run_ids = np.concatenate(run_ids)
        topic_ids = np.concatenate(topic_ids)
        ranks = np.concatenate(ranks)
        all_docs = pa.concat_arrays(docs) if docs else pa.array([], pa.string())

        doc_rows = _lookup_judgments(qrels, topic_ids, all_docs)
        lengths = np.bincount(run_ids * n_topics + topic_ids, minlength=n_runs * n_topics)
        lengths = lengths.reshape(n_runs, n_topics).astype(np.int32)
        max_depth = int(lengths.max()) if lengths.size else 0
        max_depth = max(max_depth, 1)
        n_q = len(qrels)
        doc_index = np.full((n_runs, n_topics, max_depth), n_q, dtype=np.int32)
        doc_index.reshape(-1)[(run_ids * n_topics + topic_ids) * max_depth + ranks] = doc_rows
        judgments = np.where(qrels.grades >= 0, qrels.grades, UNJUDGED).astype(np.int8)
        return cls.from_index(
            runs=runs.names,
            topics=topics,
            lengths=lengths,
            answered=answered,
            doc_index=doc_index,
            judgments=judgments,
            judgment_topic=qrels.topic_index,
            n_grades=max(int(qrels.grades.max()) + 1, 1),
            qrels=qrels,
        )

    @classmethod
    def from_index(cls, *, doc_index: np.ndarray, judgments: np.ndarray, **kwargs) -> EvalTensor:
        """A tensor from its index: ``codes`` are gathered from ``judgments`` through
        ``doc_index`` (the sentinel row ``len(judgments)`` reads :data:`UNPOOLED`).

        For code that knows where every retrieved document sits in the judgment table without
        matching ids (a simulated world built from candidate indices, a re-judged view).
        ``kwargs`` are the other fields: ``runs, topics, lengths, answered, judgment_topic,
        n_grades`` and optionally ``judged_only`` and ``qrels``.
        """
        lookup = np.append(judgments, np.int8(UNPOOLED))
        codes = lookup[doc_index]
        return cls(codes=codes, doc_index=doc_index, judgments=judgments, **kwargs)

    # ------------------------------------------------------------------ shape
    @property
    def shape(self) -> tuple[int, int, int]:
        return self.codes.shape

    @property
    def n_runs(self) -> int:
        return self.codes.shape[0]

    @property
    def n_topics(self) -> int:
        return self.codes.shape[1]

    @property
    def depth(self) -> int:
        return self.codes.shape[2]

    def __repr__(self) -> str:
        kind = ", judged only" if self.judged_only else ""
        return (
            f"EvalTensor({self.n_runs} runs x {self.n_topics} topics x depth {self.depth}, "
            f"{len(self.judgments)} judgments{kind})"
        )

    # ------------------------------------------------------------------ judgment statistics
    @cached_property
    def grade_counts(self) -> np.ndarray:
        """(T, n_grades) number of judged documents of each grade per topic."""
        judged = self.judgments >= 0
        flat = self.judgment_topic[judged] * self.n_grades + self.judgments[judged]
        counts = np.bincount(flat, minlength=self.n_topics * self.n_grades)
        return counts.reshape(self.n_topics, self.n_grades)

    def n_relevant(self, rel: int = 1) -> np.ndarray:
        """(T,) number of judged documents with grade >= ``rel`` per topic."""
        return self.grade_counts[:, max(rel, 0) :].sum(axis=1)

    def n_nonrelevant(self, rel: int = 1) -> np.ndarray:
        """(T,) number of judged documents with grade < ``rel`` per topic."""
        return self.grade_counts[:, : max(rel, 0)].sum(axis=1)

    def relevant(self, rel: int = 1) -> np.ndarray:
        """(S, T, D) bool: the document at this rank is judged with grade >= ``rel``."""
        return self.codes >= rel

    def judged(self) -> np.ndarray:
        """(S, T, D) bool: the document at this rank has a judgment (grade >= 0)."""
        return self.codes >= 0

    def valid(self) -> np.ndarray:
        """(S, T, D) bool: this rank is inside the ranked list."""
        return np.arange(self.depth) < self.lengths[:, :, None]

    # ------------------------------------------------------------------ derived views
    def with_judgments(self, keep: np.ndarray, *, dropped: str = "unpooled") -> EvalTensor:
        """The tensor under a reduced judgment set, by one vectorised gather.

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
        return self.with_grades(np.where(keep, self.judgments, code).astype(np.int8))

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
        return EvalTensor.from_index(
            runs=self.runs,
            topics=self.topics,
            lengths=self.lengths,
            answered=self.answered,
            doc_index=self.doc_index,
            judgments=judgments.astype(np.int8),
            judgment_topic=self.judgment_topic,
            n_grades=self.n_grades,
            qrels=self.qrels,
        )

    @cached_property
    def _condensed(self) -> EvalTensor:
        judged = self.codes >= 0
        # A stable sort of "not judged" keeps the judged documents in their ranking order.
        order = np.argsort(~judged, axis=2, kind="stable")
        lengths = judged.sum(axis=2).astype(np.int32)
        depth = max(int(lengths.max()) if lengths.size else 0, 1)
        order = order[:, :, :depth]
        doc_index = np.take_along_axis(self.doc_index, order, axis=2)
        doc_index[np.arange(depth) >= lengths[:, :, None]] = len(self.judgments)
        return EvalTensor.from_index(
            runs=self.runs,
            topics=self.topics,
            lengths=lengths,
            answered=self.answered,
            doc_index=doc_index,
            judgments=self.judgments,
            judgment_topic=self.judgment_topic,
            n_grades=self.n_grades,
            judged_only=True,
            qrels=self.qrels,
        )

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
        return self.qrels.with_grades(grades, keep=keep)


def _lookup_judgments(qrels: Qrels, topic_ids: np.ndarray, docs: pa.Array) -> np.ndarray:
    """Row of (topic, doc) in the qrels table, or len(qrels) when not judged; vectorised.

    Documents are hashed once against the qrels' distinct documents (Arrow's ``index_in``);
    (topic, document id) pairs are then matched through a dense topic x document table when it
    is small, else by binary search on integer keys.
    """
    n_q = len(qrels)
    vocab, inverse = np.unique(
        qrels.docs.to_numpy(zero_copy_only=False).astype(str), return_inverse=True
    )
    uid = pc.fill_null(pc.index_in(docs, value_set=pa.array(vocab)), -1)
    uid = uid.to_numpy(zero_copy_only=False).astype(np.int64)
    found = uid >= 0
    n_topics, n_vocab = len(qrels.topics), max(len(vocab), 1)
    if n_topics * n_vocab <= 50_000_000:
        table = np.full((n_topics, n_vocab + 1), n_q, dtype=np.int32)
        table[qrels.topic_index, inverse] = np.arange(n_q, dtype=np.int32)
        # uid -1 (not judged anywhere) reads the last column, which stays n_q.
        return table[topic_ids, uid]
    # Qrels rows are sorted by topic then document, so their keys are already ascending.
    qkeys = qrels.topic_index.astype(np.int64) * n_vocab + inverse.astype(np.int64)
    keys = topic_ids.astype(np.int64) * n_vocab + np.maximum(uid, 0)
    pos = np.minimum(np.searchsorted(qkeys, keys), n_q - 1)
    hit = found & (qkeys[pos] == keys)
    return np.where(hit, pos, n_q).astype(np.int32)
