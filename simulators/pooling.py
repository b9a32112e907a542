"""Depth-k pools (Zobel SIGIR 1998; Sakai 2008; docs/methods.md §4.4).

The depth-k pool of a set of runs is, per topic, the union of every run's first k documents,
ranked as trec_eval ranks them (score descending, document id descending). The judgments a pool
yields are the pooled documents with their grades in a reference judgment set (the truth of a
simulated world, or the official qrels of a real collection: a pool intersected with the
original qrels); every other document is absent (unpooled).

Pools are computed on an :class:`~metaeval.engine.EvalTensor`: ``tensor.doc_index`` already
holds, for every run, topic and rank, the row of the document in the qrels table, so a pool is
one ``bincount`` over the top-k slice, with no string matching.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from metaeval._validation import check_int, check_optional_int, shown_ids
from metaeval.data import Qrels, Run, RunSet
from metaeval.engine import EvalTensor


def _as_tensor(runs_or_tensor, qrels: Qrels | None) -> EvalTensor:
    if isinstance(runs_or_tensor, EvalTensor):
        return runs_or_tensor
    if isinstance(runs_or_tensor, (RunSet, Run)):
        if qrels is None:
            raise ValueError("qrels is required when runs are given instead of an EvalTensor")
        return EvalTensor.build(runs_or_tensor, qrels, warn_extra_topics=False)
    raise TypeError(
        f"runs must be a RunSet, Run or EvalTensor, got {type(runs_or_tensor).__name__}"
    )


def run_positions(tensor: EvalTensor, runs: Iterable[str | int] | None) -> np.ndarray:
    """Positions (into ``tensor.runs``) of the runs named or indexed in ``runs`` (None: all)."""
    if runs is None:
        return np.arange(tensor.n_runs)
    index = {name: i for i, name in enumerate(tensor.runs)}
    out = []
    for i, r in enumerate(runs):
        if isinstance(r, (int, np.integer)) and not isinstance(r, bool):
            out.append(check_int(f"runs[{i}]", r, min=0, max=tensor.n_runs - 1))
        elif r in index:
            out.append(index[r])
        else:
            raise ValueError(f"runs: no run named {r!r}; runs are {shown_ids(tensor.runs)}")
    return np.asarray(sorted(set(out)), dtype=np.int64)


def pool_mask(
    source,
    depth: int | None,
    *,
    qrels: Qrels | None = None,
    runs: Sequence[str | int] | None = None,
) -> np.ndarray:
    """Which qrels rows are in the depth-``depth`` pool of the runs.

    Parameters
    ----------
    source : EvalTensor, RunSet or Run
        The runs, as a tensor against the reference judgments, or as runs with ``qrels``.
    depth : int or None
        Pool depth k; None pools every retrieved document.
    qrels : Qrels, optional
        The reference judgments (needed when ``runs`` is not a tensor).
    runs : sequence of str or int, optional
        Pool only these runs (names or positions into the tensor); default all.

    Returns
    -------
    ndarray of bool, shape (len(qrels),)
        True for a judgment whose document some pooled run ranks in its top ``depth``.
    """
    tensor = _as_tensor(source, qrels)
    depth = check_optional_int("depth", depth, min=1)
    pos = run_positions(tensor, runs)
    n_q = len(tensor.judgments)
    if len(pos) == 0:
        return np.zeros(n_q, dtype=bool)
    k = tensor.depth if depth is None else min(depth, tensor.depth)
    rows = tensor.doc_index[pos, :, :k].reshape(-1)
    # Positions past the end of a list and unjudged documents hold the sentinel row n_q.
    hit = np.bincount(rows, minlength=n_q + 1)[:n_q] > 0
    return hit


def pool_qrels(
    source,
    depth: int | None,
    *,
    qrels: Qrels | None = None,
    runs: Sequence[str | int] | None = None,
) -> Qrels:
    """The judgments a depth-k pool yields: pooled documents with their reference grades.

    ``qrels`` (or the tensor's qrels) is the reference: the truth of a simulated world, or the
    original judgments of a real collection (then the result is the pool intersected with
    them). Documents outside the pool are absent from the result.
    """
    tensor = _as_tensor(source, qrels)
    if tensor.qrels is None:
        raise ValueError("the tensor carries no Qrels; build it with EvalTensor.build")
    mask = pool_mask(tensor, depth, runs=runs)
    if not mask.any():
        raise ValueError("the pool is empty: no pooled run retrieves a judged document")
    return tensor.qrels.with_grades(tensor.qrels.grades, keep=mask)


def pool_size(
    source,
    depth: int | None,
    *,
    qrels: Qrels | None = None,
    runs: Sequence[str | int] | None = None,
) -> np.ndarray:
    """(T,) number of pooled judgments per topic."""
    tensor = _as_tensor(source, qrels)
    mask = pool_mask(tensor, depth, runs=runs)
    return np.bincount(tensor.judgment_topic[mask], minlength=tensor.n_topics)
