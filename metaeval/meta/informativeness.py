"""Informativeness of evaluation measures by maximum-entropy reconstruction.

A measure is informative when its value alone says a lot about the ranked list it came from.
Following Aslam, Yilmaz and Pavlu (SIGIR 2005) and Robertson, Kanoulas and Yilmaz (SIGIR 2010):
for every ranked list, take the measure's value (and the number of relevant documents), infer
the maximum-entropy distribution of relevance over the ranks consistent with it
(:func:`metaeval.meta.maxent.maxent_distribution`), derive the precision-recall curve it
implies, and compare it with the list's actual curve.  A smaller RMS error means a more
informative measure.

Conventions (docs/methods.md §0 and §3)
---------------------------------------
* The sum constraint is the number of relevant documents the list retrieved (per grade for
  graded measures); ``R`` (per grade ``R_j``) is the topic's number of judged relevant
  documents.  Unjudged documents count as non-relevant.
* Error: ``"recall_points"`` (default) is the RMS of inferred minus actual precision at the
  ranks of the list's relevant documents (where its recall changes; Robertson et al. 2010);
  ``"interpolated"`` is the RMS over the 11 TREC interpolated-precision points (Aslam et al.
  2005).  Both are always computed; ``error`` picks the one in the ``rms`` column.
* Binary measures (AP, P@k, R-prec, RR) infer a binary distribution at their relevance level
  and are scored at that one threshold.  Graded measures (nDCG on graded qrels, GAP) infer a
  distribution over grades and are scored at every threshold ``grade >= j``, ``j = 1..G``
  (one row each).  The measure-to-expectation map is
  :func:`metaeval.meta.maxent.expectation_for`.
* List selection (``select``):

  - ``"lists"`` (default), as Aslam et al. 2005 and Robertson et al. 2010 select ranked lists:
    a (run, topic) list is scored at threshold ``j`` when it retrieved at least
    ``min_relevant`` documents of grade ``>= j``.  A graded measure is solved once for every
    list that counts at some threshold and reported at the thresholds where it counts, so
    at each threshold every measure is judged on the same lists.
  - ``"each_grade"``: the lists that retrieved at least ``min_relevant`` documents of every
    relevant grade (Robertson et al. 2010 on TREC data judged 0-2: "at least 5 relevant and
    5 highly relevant documents"), the same lists at every threshold.
  - ``"topics"``: topics with at least ``min_relevant`` judged documents at every threshold
    ``1..G`` of the qrels, all lists of those topics, whatever they retrieved.  A list that
    retrieved no document at a threshold has no recall points there: its
    ``rms_recall_points`` is NaN and it is left out of that mean (the count is reported).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from metaeval._validation import check_choice, check_int, check_real
from metaeval._warnings import warn
from metaeval.data.qrels import format_grade
from metaeval.meta.maxent import (
    Expectation,
    GradedAP,
    MaxEntConvergenceWarning,
    expectation_for,
    maxent_distribution,
    rms_interpolated,
    rms_recall_points,
    threshold_probabilities,
)
from metaeval.meta.maxent._arrays import _rev_cumsum

__all__ = [
    "InformativenessResult",
    "informativeness",
    "informativeness_tensor",
    "measure_expectation",
    "example_pr_curves",
]

ERRORS = ("recall_points", "interpolated")
COUNTS = ("retrieved", "relevant")
SELECTIONS = ("lists", "each_grade", "topics")


@dataclass(frozen=True)
class InformativenessResult:
    """Output of :func:`informativeness`.

    Attributes
    ----------
    lists : DataFrame
        The raw material: one row per run, topic, measure and threshold at which the list was
        selected: ``run, topic, measure, threshold, value, length`` (of the list as evaluated),
        ``n_relevant, n_retrieved_relevant, converged, feasible, boundary, entropy,
        rms_recall_points, rms_interpolated`` and, for every measure named in ``infer``,
        ``inferred_<name>`` (its expectation under the max-ent distribution) and
        ``actual_<name>`` (its value on the list at that threshold), then ``rms``.
    summary : DataFrame
        One row per measure and threshold: ``n_lists``, ``n_scored`` (lists with a finite
        ``rms``), ``rms`` (mean), ``rms_recall_points``, ``rms_interpolated`` (means),
        ``not_converged`` (lists whose solve did not converge, the infeasible ones
        included), ``infeasible`` (lists whose value cannot be reached with their counts,
        e.g. under ``count="relevant"``, or that have no relevant document at all) and
        ``rmse_<name>``, the RMS error of every inferred measure against its actual value.
    error : str
        Which error the ``rms`` columns hold.
    select : str
        The list selection rule, ``"lists"``, ``"each_grade"`` or ``"topics"``.
    min_relevant : int
        Its threshold.
    count : str
        The sum constraint, ``"retrieved"`` or ``"relevant"``.
    n_grades : int or None
        The judgments' grades are ``0 .. n_grades - 1`` (what graded expectations are built
        on); None when unknown.
    """

    lists: pd.DataFrame
    summary: pd.DataFrame
    error: str
    select: str = "lists"
    min_relevant: int = 5
    count: str = "retrieved"
    n_grades: int | None = None

    def to_frame(self, what: str = "summary") -> pd.DataFrame:
        """A copy of the tidy table: ``"summary"`` (one row per measure and threshold,
        default) or ``"lists"`` (one row per list, measure and threshold)."""
        check_choice("what", what, ("summary", "lists"))
        return (self.summary if what == "summary" else self.lists).copy()


def measure_expectation(
    measure: Any, n_grades: int, rel: int = 1
) -> tuple[Expectation, int | None, Any]:
    """The expectation of a metaeval measure, the threshold it is scored at, and the measure.

    A thin layer over :func:`metaeval.meta.maxent.expectation_for`, the one map from measures
    to expectations: it parses ``measure``, gives a binary measure that does not set its
    relevance level the level ``rel`` (``AP`` with ``rel=2`` is ``AP(rel=2)``; the level is
    1 by default, so ``AP(rel=1)`` written out is read the same way), and returns
    ``(expectation_for(m, n_grades), threshold, m)``.  ``threshold`` is the relevance level
    of a binary expectation and ``None`` for a graded one.

    Raises
    ------
    ValueError
        For a measure without an expectation (e.g. bpref, ERR), a condensed variant, or a
        relevance level above the highest grade.
    """
    from metaeval.measures import parse_measure
    from metaeval.measures.binary import BinaryMeasure

    m = parse_measure(measure)
    if isinstance(m, BinaryMeasure) and m.rel == 1 and rel != 1:
        m = dataclasses.replace(m, rel=rel)
    exp = expectation_for(m, n_grades)
    if exp.graded:
        return exp, None, m
    # a plugin's own expectation may not carry a level: the measure's, else the default
    threshold = getattr(exp, "rel", None) or getattr(m, "rel", None) or rel
    return exp, int(threshold), m


def informativeness(
    runs: Any,
    qrels: Any,
    measures: Any,
    *,
    select: str = "lists",
    min_relevant: int = 5,
    rel: int = 1,
    error: str = "recall_points",
    count: str = "retrieved",
    infer: Sequence[Any] = ("AP", "P@10", "Rprec"),
    tol: float = 1e-10,
    stationarity_tol: float = 1e-8,
    chunk_size: int = 400,
    depth: int | None = None,
    topics: Any = None,
    run_names: Any = None,
) -> InformativenessResult:
    """Informativeness of measures on real runs: max-ent reconstruction of every list.

    Parameters
    ----------
    runs : RunSet, Run, path(s), DataFrame or dict
        As :func:`metaeval.evaluate` accepts.
    qrels : Qrels, path, DataFrame or dict
    measures : str, Measure or list of them
        Measures with an expectation: ``AP``, ``P@k``, ``Rprec``, ``RR``, ``nDCG[@k]`` (any
        gains, log2 discount), ``GAP(g=...)``, or a measure providing ``expectation()``.
    select : {"lists", "each_grade", "topics"}
        Which lists are scored.  ``"lists"`` (default; Aslam et al. 2005): at each threshold
        ``j``, the lists that retrieved at least ``min_relevant`` documents of grade ``>= j``.
        ``"each_grade"`` (Robertson et al. 2010): the lists that retrieved at least
        ``min_relevant`` documents of every relevant grade, at every threshold.
        ``"topics"``: every list of the topics with at least ``min_relevant`` judged
        documents at every threshold ``1..G``.
    min_relevant : int
        The selection's minimum number of relevant documents (Robertson et al. 2010 use 5).
    rel : int
        Relevance level of binary measures that do not give one (TREC DL uses 2); at most
        the highest grade of the qrels.
    error : {"recall_points", "interpolated"}
        The error reported in the ``rms`` column (both are computed).
    count : {"retrieved", "relevant"}
        The sum constraint of the max-ent problem: the number of relevant documents the list
        retrieved (per grade; project default, docs/methods.md §0) or the topic's number of
        relevant documents ``R`` (per grade ``R_j``), the other reading of Aslam et al. 2005.
        With ``"relevant"``, a list shorter than ``R`` cannot meet it and is flagged
        infeasible (``converged`` and ``feasible`` False, NaN errors).
    infer : sequence of str or Measure
        Binary measures whose values are inferred from each max-ent distribution and compared
        with their actual values at the row's threshold (e.g. P@10 inferred from AP).
    tol : float
        Solver tolerance on the constraint residuals.
    stationarity_tol : float
        Solver tolerance on the fixed point of non-linear measures (see
        :func:`~metaeval.meta.maxent.maxent_distribution`); 1e-6 is ample for RMS errors
        reported to 4 digits and about halves the time of GAP.
    chunk_size : int
        Lists solved per vectorised batch (memory ~ chunk_size x depth x grades x 8 bytes x 20).
    depth : int, optional
        Evaluate only the first ``depth`` documents of each list.
    topics : str, path or list, optional
        Only these topics of the qrels (``"601-650"``, ``"601-610,612"``, a list of ids or a
        file of ids; see :func:`metaeval.data.parse_ids`).
    run_names : str, path or list, optional
        Only these runs, by name.

    Returns
    -------
    InformativenessResult

    References
    ----------
    J. A. Aslam, E. Yilmaz, V. Pavlu. The maximum entropy method for analyzing retrieval
    measures. SIGIR 2005.  S. Robertson, E. Kanoulas, E. Yilmaz. Extending average precision
    to graded relevance judgments. SIGIR 2010.
    """
    from metaeval.engine import EvalTensor
    from metaeval.evaluation import as_qrels, as_runset
    from metaeval.evaluation import select as select_subset

    runset, judged, excluded = select_subset(
        as_runset(runs), as_qrels(qrels), topics=topics, run_names=run_names
    )
    tensor = EvalTensor.build(runset, judged, depth=depth, excluded_topics=excluded)
    return informativeness_tensor(
        tensor,
        measures,
        select=select,
        min_relevant=min_relevant,
        rel=rel,
        error=error,
        count=count,
        infer=infer,
        tol=tol,
        stationarity_tol=stationarity_tol,
        chunk_size=chunk_size,
    )


def informativeness_tensor(
    tensor: Any,
    measures: Any,
    *,
    select: str = "lists",
    min_relevant: int = 5,
    rel: int = 1,
    error: str = "recall_points",
    count: str = "retrieved",
    infer: Sequence[Any] = ("AP", "P@10", "Rprec"),
    tol: float = 1e-10,
    stationarity_tol: float = 1e-8,
    chunk_size: int = 400,
) -> InformativenessResult:
    """:func:`informativeness` on an :class:`~metaeval.engine.EvalTensor`."""
    from metaeval.evaluation import as_measures

    check_choice("error", error, ERRORS)
    check_choice("count", count, COUNTS)
    check_choice("select", select, SELECTIONS)
    min_relevant = check_int("min_relevant", min_relevant, min=0)
    rel = check_int("rel", rel, min=1)
    chunk_size = check_int("chunk_size", chunk_size, min=1)
    tol = check_real("tol", tol, min=0.0, min_open=True)
    stationarity_tol = check_real("stationarity_tol", stationarity_tol, min=0.0, min_open=True)
    if not tensor.integer_grades:
        # The maximum-entropy models distribute integer grades 0..G over ranks (their gains
        # and thresholds are the grades): real-valued grades have no such model here.
        raise ValueError(
            "informativeness needs integer grades; these qrels have real-valued grades "
            f"({', '.join(format_grade(v) for v in tensor.levels[1:])}): round them to "
            "integers (or fold them) first"
        )
    G = tensor.n_grades - 1
    if G < 1:
        raise ValueError("the qrels have no relevant grade (all grades are 0)")
    if rel > G:
        raise ValueError(f"rel={rel} is above the highest grade in the qrels ({G})")
    infer_names, infer_exp = _inferred(infer)
    plans = [(str(m), *measure_expectation(m, tensor.n_grades, rel)) for m in as_measures(measures)]

    counts = tensor.grade_counts  # (T, G+1)
    R_at = _rev_cumsum(counts, axis=1)  # R_at[:, j] = #grade >= j
    present = tensor.answered & (tensor.lengths > 0)
    s_all, t_all = np.nonzero(present)
    grades = np.maximum(tensor.codes[s_all, t_all], 0).astype(np.int64)  # unjudged -> 0
    # what every list retrieved of each grade, counted once for the selection, the sum
    # constraints and the rows
    retrieved = _retrieved(grades, G)
    ret_at = _rev_cumsum(retrieved, axis=1)  # ret_at[:, j] = #grade >= j retrieved
    eligible = _eligible(select, retrieved, R_at[t_all], min_relevant)
    lengths = tensor.lengths[s_all, t_all].astype(int)
    runs = np.asarray(tensor.runs, dtype=object)[s_all]
    topics = np.asarray(tensor.topics, dtype=object)[t_all]
    ctx = _Context(
        grades=grades,
        lengths=lengths,
        runs=runs,
        topics=topics,
        t_idx=t_all,
        counts=counts,
        R_at=R_at,
        retrieved=retrieved,
        ret_at=ret_at,
        G=G,
        D=tensor.depth,
        count=count,
        infer=infer_names,
        infer_exp=infer_exp,
        tol=tol,
        stol=stationarity_tol,
        chunk_size=chunk_size,
    )

    frames = []
    for name, exp, threshold, m_eval in plans:
        scores = m_eval.compute(tensor)[s_all, t_all]
        if not exp.graded:
            rows = np.flatnonzero(eligible[:, threshold - 1])
            frames.append(_binary_rows(ctx, name, exp, threshold, scores, rows))
        else:
            frames.append(_graded_rows(ctx, name, exp, scores, eligible))
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if "rms_" + error in table:
        table["rms"] = table["rms_" + error]
    return InformativenessResult(
        lists=table,
        summary=_summary(table, infer_names),
        error=error,
        select=select,
        min_relevant=min_relevant,
        count=count,
        n_grades=tensor.n_grades,
    )


def _inferred(infer) -> tuple[list[str], list[Any]]:
    """Names (as their parsed measures print) and binary expectations of ``infer``."""
    from metaeval.measures import Measure, canonical_name

    if isinstance(infer, (str, Measure)):
        infer = [infer]
    names, exps = [], []
    for x in infer:
        exp = expectation_for(x)
        name = canonical_name(x) if isinstance(x, (str, Measure)) else str(getattr(exp, "name", x))
        if exp.graded:
            raise ValueError(f"infer: {name} is graded; give binary measures (AP, P@k, Rprec, RR)")
        names.append(name)
        exps.append(exp)
    return names, exps


def _retrieved(grades, G) -> np.ndarray:
    """(lists, G+1) int: the documents of grade j = 0..G in each list of ``grades`` (lists,
    D; ranks past the end of a list hold grade 0, so that column 0 counts them too)."""
    n = len(grades)
    flat = (np.arange(n)[:, None] * (G + 1) + grades).ravel()
    return np.bincount(flat, minlength=n * (G + 1)).reshape(n, G + 1)


def _eligible(select, retrieved, R_at, min_relevant) -> np.ndarray:
    """(lists, G) bool: the list is scored at threshold j = 1..G.

    ``retrieved`` (lists, G+1) counts each list's documents of grade j (:func:`_retrieved`),
    ``R_at`` (lists, G+1) its topic's judged documents of grade >= j.
    """
    G = retrieved.shape[1] - 1
    if select == "topics":
        ok = (R_at[:, 1:] >= min_relevant).all(axis=1)
    elif select == "each_grade":
        # retrieved at least min_relevant documents of grade exactly g, for every g = 1..G
        ok = (retrieved[:, 1:] >= min_relevant).all(axis=1)
    else:
        # retrieved at least min_relevant documents of grade >= j
        return _rev_cumsum(retrieved, axis=1)[:, 1:] >= min_relevant
    return np.repeat(ok[:, None], G, axis=1)


@dataclass(frozen=True)
class _Context:
    """What every measure's rows need: the candidate lists and the solver settings."""

    grades: np.ndarray  # (lists, D) grade at each rank, unjudged as 0
    lengths: np.ndarray
    runs: np.ndarray
    topics: np.ndarray
    t_idx: np.ndarray  # topic index of each list
    counts: np.ndarray  # (T, G+1) judged documents per grade
    R_at: np.ndarray  # (T, G+1) judged documents of grade >= j
    retrieved: np.ndarray  # (lists, G+1) documents of grade j each list retrieved
    ret_at: np.ndarray  # (lists, G+1) documents of grade >= j each list retrieved
    G: int
    D: int
    count: str
    infer: list
    infer_exp: list
    tol: float
    stol: float
    chunk_size: int


def _solve_chunks(ctx, name, exp, values, lengths, n_rel, n_ret, graded):
    """Solve the lists in chunks (bounded memory); pad every p to depth D."""
    B = len(values)
    D = ctx.D
    G1 = n_rel.shape[-1] + 1 if graded else None
    P = np.zeros((B, D, G1)) if graded else np.zeros((B, D))
    if graded:
        P[..., 0] = 1.0
    conv = np.zeros(B, bool)
    feas = np.zeros(B, bool)
    bound = np.zeros(B, bool)
    ent = np.full(B, np.nan)
    # similar problems converge in similar iteration counts: sort by length then value so
    # that a chunk is not held up by one slow list more than necessary
    order = np.lexsort((values, lengths))
    for start in range(0, B, ctx.chunk_size):
        idx = order[start : start + ctx.chunk_size]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MaxEntConvergenceWarning)
            r = maxent_distribution(
                exp,
                values[idx],
                length=lengths[idx],
                n_relevant=n_rel[idx],
                n_retrieved_relevant=n_ret[idx],
                tol=ctx.tol,
                stationarity_tol=ctx.stol,
                warn=False,
            )
        n = r.p.shape[1]
        P[idx, :n] = r.p
        conv[idx], feas[idx], bound[idx], ent[idx] = r.converged, r.feasible, r.boundary, r.entropy
    nbad = int((~conv).sum())
    if nbad:
        warn(
            f"informativeness({name}): {nbad} of {B} lists did not converge or were "
            f"infeasible ({int((~feas).sum())} infeasible); they are flagged in the "
            "'converged' and 'feasible' columns",
            MaxEntConvergenceWarning,
        )
    return P, conv, feas, bound, ent


def _rows(ctx, base, p, rel_vec, R):
    out = dict(base)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out["rms_recall_points"] = rms_recall_points(p, rel_vec, R)
        out["rms_interpolated"] = rms_interpolated(p, rel_vec, R)
    for name, e in zip(ctx.infer, ctx.infer_exp):
        out[f"inferred_{name}"] = e.value(p, R)
        out[f"actual_{name}"] = e.value(rel_vec, R)
    return pd.DataFrame(out)


def _binary_rows(ctx, name, exp, threshold, scores, rows):
    grades, t_idx = ctx.grades[rows], ctx.t_idx[rows]
    scores, lengths = scores[rows], ctx.lengths[rows]
    rel_vec = (grades >= threshold).astype(float)
    R = ctx.R_at[t_idx, threshold].astype(float)
    n_ret = ctx.ret_at[rows, threshold].astype(float)
    m = n_ret if ctx.count == "retrieved" else R
    ok = R > 0  # without a relevant document the problem is not defined: infeasible
    p = np.full_like(rel_vec, np.nan)  # unsolved lists have no inferred curve
    conv = np.zeros(len(R), bool)
    feas = np.zeros(len(R), bool)
    bound = np.zeros(len(R), bool)
    ent = np.full(len(R), np.nan)
    if ok.any():
        p[ok], conv[ok], feas[ok], bound[ok], ent[ok] = _solve_chunks(
            ctx, name, exp, scores[ok], lengths[ok], R[ok], m[ok], graded=False
        )
    base = dict(
        run=ctx.runs[rows],
        topic=ctx.topics[rows],
        measure=name,
        threshold=threshold,
        value=scores,
        length=lengths,
        n_relevant=R,
        n_retrieved_relevant=n_ret,
        converged=conv,
        feasible=feas,
        boundary=bound,
        entropy=ent,
    )
    Rs = np.where(ok, R, 1.0)
    return _rows(ctx, base, p, rel_vec, Rs)


def _graded_rows(ctx, name, exp, scores, eligible):
    # one solve per list that counts at some threshold; rows at the thresholds where it counts
    rows = np.flatnonzero(eligible.any(axis=1))
    G, D = ctx.G, ctx.D
    grades, t_idx = ctx.grades[rows], ctx.t_idx[rows]
    scores, lengths = scores[rows], ctx.lengths[rows]
    Rj = ctx.counts[t_idx, 1:].astype(float)
    m = Rj if ctx.count == "relevant" else ctx.retrieved[rows, 1:].astype(float)
    P = np.full((len(rows), D, G + 1), np.nan)  # unsolved lists have no inferred curve
    conv, feas, bound = (np.zeros(len(rows), bool) for _ in range(3))
    ent = np.full(len(rows), np.nan)
    ok = _defined(exp, ctx.R_at[t_idx, 1:])
    if ok.any():
        P[ok], conv[ok], feas[ok], bound[ok], ent[ok] = _solve_chunks(
            ctx, name, exp, scores[ok], lengths[ok], Rj[ok], m[ok], graded=True
        )
    c = threshold_probabilities(P)
    frames = []
    for j in range(1, G + 1):
        at = eligible[rows, j - 1]
        rel_vec = (grades[at] >= j).astype(float)
        R = ctx.R_at[t_idx[at], j].astype(float)
        base = dict(
            run=ctx.runs[rows][at],
            topic=ctx.topics[rows][at],
            measure=name,
            threshold=j,
            value=scores[at],
            length=lengths[at],
            n_relevant=R,
            n_retrieved_relevant=ctx.ret_at[rows[at], j].astype(float),
            converged=conv[at],
            feasible=feas[at],
            boundary=bound[at],
            entropy=ent[at],
        )
        frames.append(_rows(ctx, base, c[at, :, j - 1], rel_vec, R))
    return pd.concat(frames, ignore_index=True)


def _defined(exp, R_at) -> np.ndarray:
    """Lists whose graded expectation is defined: GAP needs sum_t g_t R^(t) > 0, with
    ``R_at[:, t-1]`` = R^(t) the judged documents of grade >= t (a topic can lack the grades
    ``g`` weighs); the others always are."""
    if isinstance(exp, GradedAP):
        G = R_at.shape[1]
        g = np.full(G, 1.0 / G) if exp.g is None else np.asarray(exp.g, dtype=float)
        return (R_at * g).sum(1) > 0
    return np.ones(len(R_at), bool)


def _summary(table: pd.DataFrame, infer: Sequence[str]) -> pd.DataFrame:
    if table.empty:
        return pd.DataFrame()
    rows = []
    for (measure, threshold), sub in table.groupby(["measure", "threshold"], sort=False):
        row = {
            "measure": measure,
            "threshold": threshold,
            "n_lists": len(sub),
            "n_scored": int(np.isfinite(sub["rms"]).sum()),
            "rms": float(np.nanmean(sub["rms"])) if np.isfinite(sub["rms"]).any() else np.nan,
            "rms_recall_points": float(np.nanmean(sub["rms_recall_points"]))
            if np.isfinite(sub["rms_recall_points"]).any()
            else np.nan,
            "rms_interpolated": float(np.nanmean(sub["rms_interpolated"]))
            if np.isfinite(sub["rms_interpolated"]).any()
            else np.nan,
            "not_converged": int((~sub["converged"]).sum()),
            "infeasible": int((~sub["feasible"]).sum()),
        }
        for name in infer:
            d = sub[f"inferred_{name}"] - sub[f"actual_{name}"]
            row[f"rmse_{name}"] = (
                float(np.sqrt(np.nanmean(d**2))) if np.isfinite(d).any() else np.nan
            )
        rows.append(row)
    return pd.DataFrame(rows)


def example_pr_curves(
    result: InformativenessResult,
    runs: Any,
    qrels: Any,
    *,
    rel: int = 1,
    run: str | None = None,
    topic: str | None = None,
) -> pd.DataFrame:
    """Inferred and actual precision-recall curves of one list, for a figure.

    The list is ``(run, topic)``, by default the list with the median value of the first
    measure of ``result``. Every measure is drawn as ``result`` scored it, from its row of
    ``result.lists``: its max-ent distribution is inferred from the row's value, the list's
    length as evaluated and the sum constraint ``result.count``, and its curve is drawn at the
    row's threshold with the row's ``R`` (a binary measure at its relevance level, a graded
    measure at ``rel``). A measure that did not score the list (at ``rel`` for a graded
    measure), or whose solve was infeasible, is left out. The actual curve is drawn at every
    threshold an inferred curve is drawn at (at ``rel`` when there is none).

    Parameters
    ----------
    result : InformativenessResult
    runs : RunSet, Run, path(s), DataFrame or dict
        The runs ``result`` was computed on; only the list itself is read from them.
    qrels : Qrels, path, DataFrame or dict
        The judgments ``result`` was computed on.
    rel : int
        The threshold of the graded measures' curves.
    run, topic : str, optional
        The list (both are needed; otherwise the median list is drawn).

    Returns
    -------
    DataFrame
        ``curve`` ("inferred from M = v", then "actual", or "actual (grade >= j)" when the
        curves are drawn at several thresholds), ``actual`` (whether it is the list's own
        curve), ``recall``, ``precision``, ``run``, ``topic``, ``threshold``.
    """
    from metaeval.engine import EvalTensor
    from metaeval.evaluation import as_qrels, as_runset
    from metaeval.meta.maxent import actual_pr_curve, inferred_pr_curve

    rel = check_int("rel", rel, min=1)
    lists = result.lists
    if lists.empty:
        raise ValueError("the result holds no list to draw")
    if run is None or topic is None:
        first = lists[lists["measure"] == lists["measure"].iloc[0]]
        ex = first.sort_values("value", kind="stable").iloc[len(first) // 2]
        run, topic = ex["run"], ex["topic"]
    rows = lists[(lists["run"] == run) & (lists["topic"] == topic)]
    if rows.empty:
        raise ValueError(f"the result did not score the list of run {run!r} on topic {topic!r}")
    # The values, counts and R come from the result; only the list's grades are read, from a
    # tensor of that one list against the whole qrels (its topic's judged grades).
    tensor = EvalTensor.build(
        as_runset(runs)[run].subset([topic]), as_qrels(qrels), warn_extra_topics=False
    )
    t_i = list(tensor.topics).index(topic)
    n_grades = result.n_grades or tensor.n_grades
    length = int(rows["length"].iloc[0])
    grades = np.maximum(tensor.codes[0, t_i, :length], 0)
    Rj = tensor.grade_counts[t_i, 1:n_grades].astype(float)  # judged documents per grade
    frames, drawn = [], {}
    retrieved = _retrieved(grades[None, :], n_grades - 1)[0, 1:].astype(float)  # per grade
    for name, sub in rows.groupby("measure", sort=False):
        # the one threshold of a binary measure is its relevance level (graded ones ignore it)
        exp, _, _ = measure_expectation(name, n_grades, int(sub["threshold"].iloc[0]))
        if exp.graded:
            sub = sub[sub["threshold"] == rel]
        if sub.empty or not sub["feasible"].iloc[0]:
            continue
        row = sub.iloc[0]
        th, R, value = int(row["threshold"]), float(row["n_relevant"]), float(row["value"])
        if exp.graded:
            m = Rj if result.count == "relevant" else retrieved
            r = maxent_distribution(
                exp, value, length=length, n_relevant=Rj, n_retrieved_relevant=m, warn=False
            )
            p = r.p[:, th:].sum(-1)
        else:
            m = R if result.count == "relevant" else float(row["n_retrieved_relevant"])
            r = maxent_distribution(
                exp, value, length=length, n_relevant=R, n_retrieved_relevant=m, warn=False
            )
            p = r.p
        if not r.feasible:
            continue
        prec, rec = inferred_pr_curve(p, R)
        label = f"inferred from {name} = {value:.3f}"
        frames.append(
            pd.DataFrame(
                {"curve": label, "actual": False, "recall": rec, "precision": prec, "threshold": th}
            )
        )
        drawn[th] = R
    if not drawn and tensor.n_relevant(rel)[t_i] > 0:
        drawn[rel] = float(tensor.n_relevant(rel)[t_i])
    for th, R in sorted(drawn.items()):
        prec, rec = actual_pr_curve((grades >= th).astype(float), R)
        label = "actual" if len(drawn) == 1 else f"actual (grade >= {th})"
        frames.append(
            pd.DataFrame(
                {"curve": label, "actual": True, "recall": rec, "precision": prec, "threshold": th}
            )
        )
    columns = ["curve", "actual", "recall", "precision", "run", "topic", "threshold"]
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True).assign(run=run, topic=topic)[columns]
