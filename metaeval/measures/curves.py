"""Top-heaviness curves: how much a measure rewards one relevant document by its rank.

One relevant document moves from rank 1 to rank ``max_rank`` in a list of judged non-relevant
documents, for topics with R relevant documents (Sakai & Kando 2008, Fig. 1: R = 10 and
R = 100). The curve of a measure is its value at each rank: RBP with a small p falls off at
once, AP and the Q-measure fall like 1/r (scaled by 1/R), nDCG like 1/log2(r + 1).

The synthetic qrels and run are built with :meth:`metaeval.Qrels.from_dict` and
:meth:`metaeval.Run.from_dict` and evaluated through the tensor like any real run, so the
curves show exactly what the measures compute.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from metaeval._validation import ParamError
from metaeval.data import Qrels, Run, RunSet
from metaeval.engine import EvalTensor
from metaeval.measures.base import Measure, parse_measure

DEFAULT_MEASURES = ("RBP(p=0.5)", "RBP(p=0.8)", "RBP(p=0.95)", "AP", "Q", "nDCG")


def top_heaviness_world(
    n_relevant: Sequence[int] = (10, 100), max_rank: int = 20
) -> tuple[Qrels, Run, pd.DataFrame]:
    """The synthetic collection: one topic per (R, rank of the relevant document).

    Each topic has R relevant documents (grade 1) and ``max_rank`` judged non-relevant ones;
    the run ranks ``max_rank`` documents, all non-relevant except one relevant document at
    the given rank. Returns the qrels, the run and a table ``topic, n_relevant, rank``.
    """
    n_relevant = _check_positive_ints("n_relevant", n_relevant)
    if isinstance(max_rank, bool) or not isinstance(max_rank, (int, np.integer)) or max_rank < 1:
        raise ParamError("max_rank", f"must be a positive integer, got {max_rank!r}")
    qrels, run, rows = {}, {}, []
    for big_r in n_relevant:
        judged = {f"rel{i}": 1 for i in range(big_r)} | {f"non{i}": 0 for i in range(max_rank)}
        for rank in range(1, max_rank + 1):
            topic = f"R{big_r}_r{rank:03d}"
            qrels[topic] = judged
            docs = [f"non{i}" for i in range(max_rank - 1)]
            docs.insert(rank - 1, "rel0")
            run[topic] = {d: float(max_rank - i) for i, d in enumerate(docs)}
            rows.append((topic, big_r, rank))
    frame = pd.DataFrame(rows, columns=["topic", "n_relevant", "rank"])
    return Qrels.from_dict(qrels), Run.from_dict(run, "one_relevant"), frame


def top_heaviness(
    measures: Sequence[str | Measure] = DEFAULT_MEASURES,
    *,
    n_relevant: Sequence[int] = (10, 100),
    max_rank: int = 20,
) -> pd.DataFrame:
    """Value of each measure as one relevant document moves down the ranking.

    Parameters
    ----------
    measures : measure names or Measures
        Default: RBP(p=0.5), RBP(p=0.8), RBP(p=0.95), AP, Q, nDCG (Sakai & Kando 2008, Fig. 1).
    n_relevant : ints
        The topic's number of relevant documents R (default 10 and 100).
    max_rank : int
        The relevant document visits ranks 1 .. max_rank (default 20).

    Returns
    -------
    DataFrame
        Tidy, one row per measure, R and rank: ``measure, n_relevant, rank, value, relative``,
        ``relative`` = value / value at rank 1 (the shape of the curve, comparable across
        measures of different scales; NaN when the value at rank 1 is 0).
    """
    parsed = [parse_measure(m) for m in measures]
    if not parsed:
        raise ParamError("measures", "is empty: give at least one measure, e.g. ['AP', 'nDCG']")
    qrels, run, cells = top_heaviness_world(n_relevant, max_rank)
    tensor = EvalTensor.build(RunSet([run]), qrels)
    position = pd.Series(np.arange(len(tensor.topics)), index=tensor.topics)[cells["topic"]]
    parts = []
    for m in parsed:
        values = m.compute(tensor)[0, position.to_numpy()]
        part = cells.assign(measure=str(m), value=values)
        first = part.groupby("n_relevant")["value"].transform("first")
        part["relative"] = np.where(first > 0, part["value"] / first.where(first > 0, 1.0), np.nan)
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    return out[["measure", "n_relevant", "rank", "value", "relative"]]


def plot_top_heaviness(
    frame: pd.DataFrame | None = None,
    *,
    y: str = "value",
    measures: Sequence[str | Measure] = DEFAULT_MEASURES,
    n_relevant: Sequence[int] = (10, 100),
    max_rank: int = 20,
):
    """Figure of the top-heaviness curves: one panel per R, one line per measure.

    Computes the curves when no frame is given; the figure is drawn by
    :func:`metaeval.report.figures.top_heaviness_curves`.

    Parameters
    ----------
    frame : DataFrame, optional
        Output of :func:`top_heaviness`; computed from the other arguments when omitted.
    y : {"value", "relative"}
        Plot the measure values or the curves scaled to 1 at rank 1.

    Returns
    -------
    matplotlib.figure.Figure
        Built without pyplot (so no GUI backend is touched; ``savefig`` renders with Agg).
    """
    from metaeval.report.figures import top_heaviness_curves

    if y not in ("value", "relative"):
        raise ParamError("y", f"must be 'value' or 'relative', got {y!r}")
    if frame is None:
        frame = top_heaviness(measures, n_relevant=n_relevant, max_rank=max_rank)
    return top_heaviness_curves(frame, y=y)


def _check_positive_ints(name: str, values) -> tuple[int, ...]:
    values = tuple(values) if not isinstance(values, (int, np.integer)) else (values,)
    if not values or any(
        isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1 for v in values
    ):
        raise ParamError(name, f"must be positive integers, got {values!r}")
    return tuple(int(v) for v in values)


__all__ = ["top_heaviness", "plot_top_heaviness", "top_heaviness_world", "DEFAULT_MEASURES"]
