"""Informativeness of evaluation measures by maximum-entropy reconstruction.

A measure is informative when its value alone says a lot about the ranked list it came from.
Following Aslam, Yilmaz and Pavlu (SIGIR 2005) and Robertson, Kanoulas and Yilmaz (SIGIR 2010):
for every ranked list, take the measure's value (and the number of relevant documents), infer
the maximum-entropy distribution of relevance over the ranks consistent with it
(:func:`metaeval.meta.maxent.maxent_distribution`), derive the precision-recall curve it
implies, and compare it with the list's actual curve.  A smaller RMS error means a more
informative measure.

Conventions (METHODS.md sections 0 and 3)
-----------------------------------------
* The sum constraint is the number of relevant documents the list retrieved (per grade for
  graded measures); ``R`` (per grade ``R_j``) is the topic's number of judged relevant
  documents.  Unjudged documents count as non-relevant.
* Error: ``"recall_points"`` (default) is the RMS of inferred minus actual precision at the
  ranks of the list's relevant documents (where its recall changes; Robertson et al. 2010);
  ``"interpolated"`` is the RMS over the 11 TREC interpolated-precision points (Aslam et al.
  2005).  Both are always computed; ``error`` picks the one in the ``rms`` column.
* Binary measures (AP, P@k, R-prec, RR) infer a binary distribution at their relevance level
  and are scored at that one threshold.  Graded measures (nDCG, GAP) infer a distribution
  over grades and are scored at every threshold ``grade >= j``, ``j = 1..G`` (one row each).
* List selection as in Robertson et al. 2010: topics with at least ``min_relevant`` judged
  documents at every threshold ``1..G`` of the qrels, all lists of those topics (so every
  measure is judged on the same lists).  A list that retrieved no document at a threshold
  has no recall points there: its ``rms_recall_points`` is NaN and it is left out of that
  mean (the count is reported).
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from metaeval.meta.maxent import (
    Expectation,
    GradedAP,
    GradedNDCG,
    MaxEntConvergenceWarning,
    expectation_for,
    maxent_distribution,
    rms_interpolated,
    rms_recall_points,
    threshold_probabilities,
)

__all__ = ["InformativenessResult", "informativeness", "informativeness_tensor", "measure_expectation"]

ERRORS = ("recall_points", "interpolated")
COUNTS = ("retrieved", "relevant")


@dataclass
class InformativenessResult:
    """Output of :func:`informativeness`.

    Attributes
    ----------
    lists : DataFrame
        One row per run, topic, measure and threshold: ``run, topic, measure, threshold,
        value, n_relevant, n_retrieved_relevant, rms, rms_recall_points, rms_interpolated,
        converged, boundary, entropy`` and, for every measure named in ``infer``,
        ``inferred_<name>`` (its expectation under the max-ent distribution) and
        ``actual_<name>`` (its value on the list at that threshold).
    summary : DataFrame
        One row per measure and threshold: ``n_lists``, ``n_scored`` (lists with a finite
        ``rms``), ``rms`` (mean), ``rms_recall_points``, ``rms_interpolated`` (means),
        ``not_converged``, ``infeasible`` and ``rmse_<name>``, the RMS error of every inferred
        measure against its actual value.
    error : str
        Which error the ``rms`` columns hold.
    """

    lists: pd.DataFrame
    summary: pd.DataFrame
    error: str


def measure_expectation(measure: Any, n_grades: int, rel: int = 1) -> tuple[Expectation, int | None, Any]:
    """The expectation of a metaeval measure, the threshold it is scored at, and the measure.

    Returns ``(expectation, threshold, measure)``; ``threshold`` is the relevance level of a
    binary measure and ``None`` for a graded one.  ``rel`` replaces a binary measure's default
    relevance level 1 (a level given in the name, ``AP(rel=2)``, is kept).

    Raises
    ------
    ValueError
        For a measure without an expectation (e.g. bpref, ERR) or a condensed variant.
    """
    from metaeval.measures import parse_measure
    from metaeval.measures.binary import AP, RR, BinaryMeasure, P, Rprec
    from metaeval.measures.graded import GAP, nDCG

    m = parse_measure(measure)
    if getattr(m, "judged_only", False):
        raise ValueError(f"{m}: condensed-list measures have no max-ent expectation here")
    if hasattr(m, "expectation"):
        exp = m.expectation()
        return exp, (None if exp.graded else getattr(m, "rel", rel)), m
    if isinstance(m, BinaryMeasure) and not isinstance(m, (AP, P, Rprec, RR)):
        raise ValueError(f"measure {m} has no maximum-entropy expectation; supported: AP, P@k, "
                         "Rprec, RR, nDCG[@k], GAP, or a measure with an expectation() method")
    if isinstance(m, BinaryMeasure):
        if m.rel == 1 and rel != 1:
            m = dataclasses.replace(m, rel=rel)
        if isinstance(m, AP):
            if m.cutoff is not None:
                raise ValueError(f"{m}: AP with a cutoff has no expectation here")
            exp = expectation_for("AP")
        elif isinstance(m, P):
            exp = expectation_for(f"P@{m.cutoff}")
        elif isinstance(m, Rprec):
            exp = expectation_for("Rprec")
        else:
            if m.cutoff is not None:
                raise ValueError(f"{m}: RR with a cutoff has no expectation here")
            exp = expectation_for("RR")
        return exp, int(m.rel), m
    if isinstance(m, nDCG):
        if m.discount != "log2":
            raise ValueError(f"{m}: only the trec_eval log2 discount has an expectation here")
        gains = tuple(float(x) for x in m.gain_values(n_grades))
        return GradedNDCG(k=m.cutoff, gains=gains), None, m
    if isinstance(m, GAP):
        return GradedAP(g=tuple(m.thresholds(n_grades)[1:])), None, m
    raise ValueError(f"measure {m} has no maximum-entropy expectation; supported: AP, P@k, "
                     "Rprec, RR, nDCG[@k], GAP, or a measure with an expectation() method")


def informativeness(
    runs: Any,
    qrels: Any,
    measures: Any,
    *,
    min_relevant: int = 5,
    rel: int = 1,
    error: str = "recall_points",
    count: str = "retrieved",
    infer: Sequence[str] = ("AP", "P@10", "Rprec"),
    tol: float = 1e-10,
    stationarity_tol: float = 1e-8,
    chunk_size: int = 400,
    depth: int | None = None,
) -> InformativenessResult:
    """Informativeness of measures on real runs: max-ent reconstruction of every list.

    Parameters
    ----------
    runs : RunSet, Run, path(s), DataFrame or dict
        As :func:`metaeval.evaluate` accepts.
    qrels : Qrels, path, DataFrame or dict
    measures : str, Measure or list of them
        Measures with an expectation: ``AP``, ``P@k``, ``Rprec``, ``RR``, ``nDCG[@k]``,
        ``GAP(g=...)``, or a measure providing ``expectation()``.
    min_relevant : int
        Keep the topics with at least this many judged documents at every relevance
        threshold ``1..G`` (Robertson et al. 2010 use 5).
    rel : int
        Relevance level of binary measures that do not give one (TREC DL uses 2).
    error : {"recall_points", "interpolated"}
        The error reported in the ``rms`` column (both are computed).
    count : {"retrieved", "relevant"}
        The sum constraint of the max-ent problem: the number of relevant documents the list
        retrieved (per grade; project default, METHODS.md section 0) or the topic's number of
        relevant documents ``R`` (per grade ``R_j``), the other reading of Aslam et al. 2005.
        With ``"relevant"``, a list shorter than ``R`` cannot meet it and is flagged
        infeasible (``converged`` False, NaN errors).
    infer : sequence of str
        Binary measures whose values are inferred from each max-ent distribution and compared
        with their actual values (e.g. P@10 inferred from AP).
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
    from metaeval.evaluate import as_qrels, as_runset

    tensor = EvalTensor.build(as_runset(runs), as_qrels(qrels), depth=depth)
    return informativeness_tensor(tensor, measures, min_relevant=min_relevant, rel=rel,
                                  error=error, count=count, infer=infer, tol=tol,
                                  stationarity_tol=stationarity_tol, chunk_size=chunk_size)


def _check_int(name, value, lo):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}")


def informativeness_tensor(
    tensor: Any,
    measures: Any,
    *,
    min_relevant: int = 5,
    rel: int = 1,
    error: str = "recall_points",
    count: str = "retrieved",
    infer: Sequence[str] = ("AP", "P@10", "Rprec"),
    tol: float = 1e-10,
    stationarity_tol: float = 1e-8,
    chunk_size: int = 400,
) -> InformativenessResult:
    """:func:`informativeness` on an :class:`~metaeval.engine.EvalTensor`."""
    from metaeval.evaluate import as_measures

    if error not in ERRORS:
        raise ValueError(f"error must be one of {ERRORS}, got {error!r}")
    if count not in COUNTS:
        raise ValueError(f"count must be one of {COUNTS}, got {count!r}")
    _check_int("min_relevant", min_relevant, 0)
    _check_int("rel", rel, 1)
    _check_int("chunk_size", chunk_size, 1)
    infer = [str(x) for x in infer]
    infer_exp = [expectation_for(x) for x in infer]
    for name, e in zip(infer, infer_exp):
        if e.graded:
            raise ValueError(f"infer: {name} is graded; give binary measures (AP, P@k, Rprec, RR)")
    measures = as_measures(measures)
    G = tensor.n_grades - 1
    if G < 1:
        raise ValueError("the qrels have no relevant grade (all grades are 0)")

    counts = tensor.grade_counts  # (T, G+1)
    R_at = np.flip(np.cumsum(np.flip(counts, 1), 1), 1)  # R_at[:, j] = #grade >= j
    topic_ok = (R_at[:, 1:] >= min_relevant).all(axis=1)
    lists = tensor.answered & (tensor.lengths > 0) & topic_ok[None, :]
    s_idx, t_idx = np.nonzero(lists)
    grades = np.maximum(tensor.codes[s_idx, t_idx], 0).astype(np.int64)  # unjudged -> 0
    lengths = tensor.lengths[s_idx, t_idx].astype(int)
    D = tensor.depth
    runs = np.asarray(tensor.runs, dtype=object)[s_idx]
    topics = np.asarray(tensor.topics, dtype=object)[t_idx]

    frames = []
    for m in measures:
        exp, threshold, m_eval = measure_expectation(m, tensor.n_grades, rel)
        scores = m_eval.compute(tensor)[s_idx, t_idx]
        if not exp.graded:
            frames.append(_binary_rows(exp, threshold, str(m), scores, grades, lengths, R_at,
                                       t_idx, runs, topics, infer, infer_exp, tol, stationarity_tol,
                                       chunk_size, D, count))
        else:
            frames.append(_graded_rows(exp, str(m), scores, grades, lengths, counts, R_at, t_idx,
                                       runs, topics, infer, infer_exp, tol, stationarity_tol,
                                       chunk_size, D, G, count))
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    table["rms"] = table["rms_" + error]
    return InformativenessResult(lists=table, summary=_summary(table, infer), error=error)


def _solve_chunks(exp, values, lengths, n_rel, n_ret, tol, stol, chunk_size, D, graded):
    """Solve the lists in chunks (bounded memory); pad every p to depth D."""
    B = len(values)
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
    for start in range(0, B, chunk_size):
        idx = order[start:start + chunk_size]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MaxEntConvergenceWarning)
            r = maxent_distribution(exp, values[idx], length=lengths[idx], n_relevant=n_rel[idx],
                                    n_retrieved_relevant=n_ret[idx], tol=tol,
                                    stationarity_tol=stol, warn=False)
        n = r.p.shape[1]
        P[idx, :n] = r.p
        conv[idx], feas[idx], bound[idx], ent[idx] = r.converged, r.feasible, r.boundary, r.entropy
    nbad = int((~conv).sum())
    if nbad:
        warnings.warn(f"informativeness({exp.name}): {nbad} of {B} lists did not converge or were "
                      f"infeasible ({int((~feas).sum())} infeasible); they are flagged in the "
                      "'converged' column", MaxEntConvergenceWarning, stacklevel=4)
    return P, conv, feas, bound, ent


def _rows(base, infer, infer_exp, p, rel_vec, R):
    out = dict(base)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out["rms_recall_points"] = rms_recall_points(p, rel_vec, R)
        out["rms_interpolated"] = rms_interpolated(p, rel_vec, R)
    for name, e in zip(infer, infer_exp):
        out[f"inferred_{name}"] = e.value(p, R)
        out[f"actual_{name}"] = e.value(rel_vec, R)
    return pd.DataFrame(out)


def _binary_rows(exp, threshold, name, scores, grades, lengths, R_at, t_idx, runs, topics, infer,
                 infer_exp, tol, stol, chunk_size, D, count):
    rel_vec = (grades >= threshold).astype(float)
    R = R_at[t_idx, threshold].astype(float)
    m = rel_vec.sum(1) if count == "retrieved" else R
    ok = R > 0
    p = np.zeros_like(rel_vec)
    conv = np.zeros(len(R), bool)
    bound = np.zeros(len(R), bool)
    ent = np.full(len(R), np.nan)
    if ok.any():
        p[ok], conv[ok], _, bound[ok], ent[ok] = _solve_chunks(
            exp, scores[ok], lengths[ok], R[ok], m[ok], tol, stol, chunk_size, D, graded=False)
    base = dict(run=runs, topic=topics, measure=name, threshold=threshold, value=scores,
                n_relevant=R, n_retrieved_relevant=rel_vec.sum(1), converged=conv, boundary=bound,
                entropy=ent)
    Rs = np.where(ok, R, 1.0)
    return _rows(base, infer, infer_exp, p, rel_vec, Rs)


def _graded_rows(exp, name, scores, grades, lengths, counts, R_at, t_idx, runs, topics, infer,
                 infer_exp, tol, stol, chunk_size, D, G, count):
    onehot = np.zeros(grades.shape + (G + 1,))
    np.put_along_axis(onehot, grades[..., None], 1.0, axis=-1)
    valid = np.arange(D)[None, :] < lengths[:, None]
    m = (onehot[..., 1:] * valid[..., None]).sum(1)  # retrieved per grade
    Rj = counts[t_idx, 1:].astype(float)
    if count == "relevant":
        m = Rj
    P, conv, _, bound, ent = _solve_chunks(exp, scores, lengths, Rj, m, tol, stol, chunk_size, D,
                                           graded=True)
    c = threshold_probabilities(P)
    frames = []
    for j in range(1, G + 1):
        rel_vec = (grades >= j).astype(float)
        R = R_at[t_idx, j].astype(float)
        base = dict(run=runs, topic=topics, measure=name, threshold=j, value=scores,
                    n_relevant=R, n_retrieved_relevant=rel_vec.sum(1), converged=conv,
                    boundary=bound, entropy=ent)
        frames.append(_rows(base, infer, infer_exp, c[..., j - 1], rel_vec, R))
    return pd.concat(frames, ignore_index=True)


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
            if np.isfinite(sub["rms_recall_points"]).any() else np.nan,
            "rms_interpolated": float(np.nanmean(sub["rms_interpolated"])),
            "not_converged": int((~sub["converged"]).sum()),
        }
        for name in infer:
            d = sub[f"inferred_{name}"] - sub[f"actual_{name}"]
            row[f"rmse_{name}"] = float(np.sqrt(np.nanmean(d**2)))
        rows.append(row)
    return pd.DataFrame(rows)
