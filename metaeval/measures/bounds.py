"""Bounds of a measure over the grades of the unjudged documents (``AP_lo``, ``P_hi@10``).

The unknown documents of a topic are those a run retrieved without a judgment (absent from the
qrels, or in them with a negative grade) and the qrels' rows without one (pooled but unjudged,
or removed by a degrader). Every other document keeps its grade, and documents neither
retrieved nor in the qrels stay non-relevant, as in trec_eval. ``M_lo`` and ``M_hi`` are the
least and the greatest value of M over every assignment of grades to the unknown documents, so
the value under any completion of the judgments lies between them (docs/methods.md §6.7).

- Measures that never fall when a document's grade rises and that do not divide by what the
  judgments hold (P, Success, RR, RBP, ERR, NumRelRet, the C/W/L measures of fixed weights):
  ``lo`` is the measure with every unknown document non-relevant (its usual value), ``hi``
  with every unknown document it retrieved at the top grade (:func:`top_grade_view`).
- nCG: the same, as a gain within the cutoff never lowers it (:func:`ncg_bounds`).
- nDCG, nERR: the list's value and the ideal both rise with any gain, so the least value over
  the greatest ideal and the greatest value over the least ideal hold them
  (:func:`ratio_bounds`); these hold, but are not always the least and greatest values. Q's
  bounds hold the same way, term by term (``Q._bounds``).
- Recall: the highest value makes relevant the unknown documents within the cutoff, the
  lowest every other unknown one (a relevant document within the cutoff raises C(k)/R).
- AP: moving a relevant document up past a non-relevant one never lowers the sum of C(r)/r
  over the relevant ranks, so among the assignments with s unknown relevant documents in the
  list the best puts them on the first s unknown ranks and the worst on the last s;
  :func:`ap_bounds` takes the best (the worst) over s, with every other unknown document
  non-relevant (relevant). YAAP rises with the same sum and falls with R, so the same scan
  gives it; GAP and eGAP get bounds that hold from AP's at each threshold, infAP from AP's.
- xGAP, bpref and interpolated precision: bounds that hold, from what the unknown documents
  above a rank can change (their measures' ``_bounds``).
- The C/W/L measures whose C(i) follows the gains: bounds that hold, from the range of C(i)
  (``CWLMeasure._adaptive_bounds``).
- R-prec: :func:`rprec_bounds`, a scan of R; at a multiple of R (``Rprec(mult=...)``), a scan
  of every R a completion can give (``rprec_mult_bounds`` in binary.py).
- Set measures (``SetP``...): functions of num_rel_ret and R, at their two ends (sets.py).
- binG: with s unknown documents relevant, the best puts them on the first s unknown ranks and
  the worst on the last s; a scan over s (``BinG._bounds``).
- G: bounds that hold, from the least and greatest ideal cost and gain above each rank
  (``G._bounds``); nDCG_rel: bounds that hold, from the least and greatest of each of the
  nDCG ratios it averages and of how many it averages (``nDCG_rel._bounds``); Rndcg: the
  least and greatest nDCG at any rank where a block of its ideal list can end
  (``RnDCG._bounds``).

A condensed measure's bounds are the measure's: every completion of the judgments leaves no
document unjudged.
"""

from __future__ import annotations

import numpy as np

from metaeval.engine import EvalTensor
from metaeval.measures._common import RankedHits, group_sizes, ranks, safe_divide, top

#: Why the measures of the judgments themselves have no bounds (``Measure.without_bounds``).
JUDGMENTS_ONLY = "it measures the judgments themselves: given grades, no document stays unjudged"
#: The built-in measures without bounds, in words.
WITHOUT_BOUNDS = (
    "Judged, Unjudged, RBP_resid and the C/W/L residuals, which measure the judgments themselves"
)


def top_grade_view(tensor: EvalTensor, code: int | None = None) -> EvalTensor:
    """The tensor with every document a run retrieved without a judgment at grade ``code``
    (default the top grade; a measure whose gains do not rise with the grade gives the code
    of its highest gain).

    A dense view whose codes are changed, its judgments (and so R and the ideal lists) as they
    were: only for measures that read neither.
    """
    codes = tensor.codes.copy()
    codes[(codes < 0) & tensor.valid()] = tensor.n_grades - 1 if code is None else code
    view = tensor._derived(path="dense")
    view.__dict__["codes"] = codes
    return view


def unknown_mask(tensor: EvalTensor, cutoff: int | None = None) -> np.ndarray:
    """(S, T, k) whether each rank within the cutoff (and the list) holds a document without
    a judgment."""
    codes = top(tensor, cutoff)
    return (codes < 0) & (np.arange(codes.shape[2]) < tensor.lengths[:, :, None])


def unknown_ranks(tensor: EvalTensor, cutoff: int | None = None) -> RankedHits:
    """The ranks within the cutoff (and the list) whose document has no judgment."""
    return RankedHits(top(tensor, cutoff), unknown_mask(tensor, cutoff))


def unknown_counts(tensor: EvalTensor, cutoff: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(S, T) unknown documents within each list's first ``cutoff`` ranks, and elsewhere
    (:func:`unknown_elsewhere`)."""
    return unknown_mask(tensor, cutoff).sum(axis=2), unknown_elsewhere(tensor, cutoff)


def unknown_elsewhere(tensor: EvalTensor, cutoff: int | None = None) -> np.ndarray:
    """(S, T) unknown documents outside each list's first ``cutoff`` ranks: the qrels' rows
    without a judgment that the list does not hold there, and the documents it retrieved
    below the cutoff that are absent from the qrels."""
    per_topic = np.bincount(tensor.judgment_topic[tensor.judgments < 0], minlength=tensor.n_topics)
    # every entry, also those a degrader's removal leaves out of entries()
    unknown = tensor.entry_codes < 0
    cut = tensor.depth if cutoff is None else cutoff
    inside = tensor.entry_rank < cut
    n_groups = tensor.n_runs * tensor.n_topics

    def per_list(mask):
        return np.bincount(tensor.entry_group[mask], minlength=n_groups).reshape(
            tensor.n_runs, tensor.n_topics
        )

    # unknown ranks below the cutoff that are not qrels rows (those are counted per topic)
    below = unknown_mask(tensor)[:, :, cut:].sum(axis=2)
    return per_topic[None, :] - per_list(unknown & inside) + below - per_list(unknown & ~inside)


def monotone_bounds(compute, tensor: EvalTensor, side: str, gains=None) -> np.ndarray:
    """(S, T) bounds of a measure that never falls when a document's gain rises and does
    not divide by what the judgments hold: ``compute`` (its computation from the codes) with
    the unknown documents non-relevant, or with those it retrieved at the top grade (of the
    highest of ``gains``, the gain of each code, when given)."""
    if side == "lo":
        return compute(tensor)
    return compute(top_grade_view(tensor, None if gains is None else int(np.argmax(gains))))


def ncg_bounds(
    tensor: EvalTensor, gains: np.ndarray, cutoff: int | None, side: str, ideal
) -> np.ndarray:
    """(S, T) bounds of nCG@k = CG(k) / CG*(k) over the unknown documents.

    A gain a added within the top k raises CG(k) by a and CG*(k) by at most a, so it never
    lowers the ratio (CG(k) <= CG*(k)); a gain outside raises CG*(k) only. The highest value
    gives the unknown documents within the top k the highest gain and the others 0, the
    lowest the reverse. ``ideal(counts)`` is CG*(k) from (S * T, G) counts of judged documents
    per grade code (:func:`with_unknown_at`).
    """
    codes = top(tensor, cutoff)
    judged = RankedHits(codes, codes >= 0)
    cg = judged.total(gains[judged.grade])
    best = int(np.argmax(gains))
    extra = unknown_counts(tensor, cutoff)[0 if side == "hi" else 1]
    counts = with_unknown_at(tensor, best, all_unknown=False)
    counts[:, best] += extra.reshape(-1)
    ideal_value = ideal(counts).reshape(extra.shape)
    if side == "hi":
        cg = cg + extra * gains[best]
    return safe_divide(cg, ideal_value)


def with_unknown_at(tensor: EvalTensor, code: int, *, all_unknown: bool) -> np.ndarray:
    """(S * T, G) judged documents per grade code of each list's topic, plus, at ``code``,
    every unknown document of the list (``all_unknown``: those it retrieved and the qrels'
    rows without a judgment; else none)."""
    counts = np.broadcast_to(
        tensor.grade_counts, (tensor.n_runs, tensor.n_topics, tensor.grade_counts.shape[1])
    ).copy()
    if all_unknown:
        counts[:, :, code] += sum(unknown_counts(tensor))
    return counts.reshape(-1, counts.shape[2])


def ratio_bounds(tensor: EvalTensor, side: str, gains: np.ndarray, value, ideal) -> np.ndarray:
    """(S, T) bounds of a measure value / ideal in [0, 1] whose value and ideal both rise
    with any document's gain (nDCG, nERR): the least value over the greatest ideal (every
    unknown document at the highest gain), and the greatest value (the unknown documents it
    retrieved at the highest gain) over the least ideal (every unknown document at 0), at
    most 1. Bounds that hold, not always the least and greatest values.

    ``value(tensor)`` is (S, T); ``ideal(counts)`` the ideal of (S * T, G) counts of judged
    documents per grade code.
    """
    best = int(np.argmax(gains))
    shape = (tensor.n_runs, tensor.n_topics)
    if side == "lo":
        top = ideal(with_unknown_at(tensor, best, all_unknown=True)).reshape(shape)
        return safe_divide(value(tensor), top)
    high = value(top_grade_view(tensor, best))
    least = ideal(with_unknown_at(tensor, best, all_unknown=False)).reshape(shape)
    # an ideal of 0 holds no gain: any gain the list has then makes the value 1 at most
    return np.where(least > 0, np.minimum(1.0, safe_divide(high, least)), (high > 0) * 1.0)


def recall_bounds(tensor: EvalTensor, rel: float, cutoff: int | None, side: str) -> np.ndarray:
    """(S, T) bounds of R@k = C(k)/R over the unknown documents."""
    lowest = tensor.code_at_least(rel)
    found = RankedHits(top(tensor, cutoff), top(tensor, cutoff) >= lowest).counts()
    n_rel = tensor.n_relevant(rel)[None, :]
    if side == "hi":
        inside = unknown_mask(tensor, cutoff).sum(axis=2)
        return safe_divide(found + inside, n_rel + inside)
    return safe_divide(found, n_rel + unknown_elsewhere(tensor, cutoff))


def ap_bounds(
    tensor: EvalTensor, rel: float, cutoff: int | None, side: str, value=safe_divide
) -> np.ndarray:
    """(S, T) bounds of AP@k over the unknown documents (see the module's docstring), or of
    ``value(S, R)`` of the sum S of C(r)/r and R when given (YAAP): any function that rises
    with S and falls with R.

    With the unknown ranks u_1 < ... < u_L of a list within the cutoff, J(u) its judged
    relevant documents at ranks <= u and T(u) the sum of 1/r over those below u, making u_s
    relevant after u_1 .. u_{s-1} adds (J(u_s) + s)/u_s + T(u_s) to the sum of C(r)/r; making
    u_i relevant after u_{i+1} .. u_L adds (J(u_i) + 1)/u_i + T(u_i) + sum_{i'>i} 1/u_{i'}.
    The bound is the best (worst) of sum / (R + s) over s = 0 .. L, R counting, for the
    worst, every unknown document outside the cutoff too.
    """
    lowest = tensor.code_at_least(rel)
    codes = top(tensor, cutoff)
    hits = RankedHits(codes, codes >= lowest)
    unknown = unknown_ranks(tensor, cutoff)
    base = hits.total(hits.count / hits.rank).reshape(-1)  # sum of C(r)/r, judged only
    n_rel = np.broadcast_to(tensor.n_relevant(rel)[None, :], hits.shape).reshape(-1)
    if side == "lo":
        n_rel = n_rel + unknown_elsewhere(tensor, cutoff).reshape(-1)
    # J(u) and T(u): a search of u among the judged relevant ranks, keyed by list and rank
    width = np.int64(codes.shape[2] + 1)
    keys = hits.group.astype(np.int64) * width + hits.rank0
    below = np.searchsorted(keys, unknown.group.astype(np.int64) * width + unknown.rank0, "right")
    start = hits.group_start[unknown.group]
    J = below - start
    inverse = np.concatenate([[0.0], np.cumsum(1.0 / hits.rank)])
    T = inverse[start + hits.counts().reshape(-1)[unknown.group]] - inverse[below]
    u = unknown.rank
    if side == "hi":  # the first s unknown ranks relevant
        added = unknown.cumsum((J + unknown.count) / u + T)
        chosen = unknown.count
    else:  # the last s
        later = _within_from_end(unknown, 1.0 / u) - 1.0 / u
        added = _within_from_end(unknown, (J + 1.0) / u + T + later)
        chosen = _count_from_end(unknown)
    values = value(base[unknown.group] + added, n_rel[unknown.group] + chosen)
    out = value(base, n_rel)  # s = 0
    groups, first = unknown.first()
    if len(groups):
        best = np.maximum if side == "hi" else np.minimum
        out[groups] = best(out[groups], best.reduceat(values, first))
    return out.reshape(hits.shape)


def rprec_bounds(tensor: EvalTensor, rel: float, side: str) -> np.ndarray:
    """(S, T) bounds of R-precision, C(R)/R, over the unknown documents.

    Making relevant some of the unknown documents a list retrieved (s of its L) and some of
    those elsewhere (e of E) sets R = R0 + s + e; for a given R, C(R) is greatest with the
    largest s = min(L, R - R0) on the first unknown ranks, least with the smallest
    s = max(0, R - R0 - E) on the last ones. Each bound is the best (worst) over R = R0 ..
    R0 + L + E: a scan of the ranks 1 .. depth, and beyond them, where C(R) no longer
    changes with R, the R at which its ratio turns.
    """
    codes = tensor.codes
    depth = codes.shape[2]
    found = np.cumsum(codes >= tensor.code_at_least(rel), axis=2, dtype=np.int32)
    seen = np.cumsum(unknown_mask(tensor), axis=2, dtype=np.int32)
    r0 = tensor.n_relevant(rel).astype(np.float64)[None, :, None]
    listed = seen[:, :, -1:].astype(np.float64)
    elsewhere = unknown_elsewhere(tensor).astype(np.float64)[:, :, None]
    most = r0 + listed + elsewhere

    def precision(n_rel, found, seen):
        if side == "hi":
            chosen = np.minimum(np.minimum(listed, n_rel - r0), seen)
        else:
            chosen = np.maximum(np.maximum(n_rel - r0 - elsewhere, 0.0) - (listed - seen), 0.0)
        return safe_divide(found + chosen, n_rel)

    n_rel = ranks(depth)[None, None, :]
    values = precision(n_rel, found, seen)
    # beyond the depth: the ratio turns at R0 + L (highest) or R0 + E (lowest)
    start = np.broadcast_to(np.maximum(r0, depth + 1.0), most.shape)
    beyond = np.concatenate(
        [start, np.clip(r0 + listed, start, most), np.clip(r0 + elsewhere, start, most), most],
        axis=2,
    )
    values = np.concatenate([values, precision(beyond, found[:, :, -1:], seen[:, :, -1:])], axis=2)
    reached = np.concatenate(
        [(n_rel >= r0) & (n_rel <= most), np.broadcast_to(start <= most, beyond.shape)], axis=2
    )
    # R = 0 (nothing relevant) scores 0
    empty = np.broadcast_to(r0[:, :, 0] == 0, values.shape[:2])
    if side == "hi":
        out = np.where(reached, values, -np.inf).max(axis=2)
        return np.where(empty, np.maximum(out, 0.0), out)
    out = np.where(reached, values, np.inf).min(axis=2)
    return np.where(empty, np.minimum(out, 0.0), out)


def _within_from_end(hits: RankedHits, values: np.ndarray) -> np.ndarray:
    """Per hit, the sum of ``values`` over the hits of its list at or below it."""
    total = hits.total(values).reshape(-1)[hits.group]
    return total - hits.cumsum(values) + values


def _count_from_end(hits: RankedHits) -> np.ndarray:
    """Per hit, how many hits of its list are at or below it."""
    sizes = group_sizes(hits.group, hits.shape[0] * hits.shape[1])[hits.group]
    return sizes - hits.count + 1.0
