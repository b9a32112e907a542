r"""Ranking stability over topic subsets, and agreement between measures (docs/methods.md §9).

**Topic-subset stability** (Voorhees & Buckley 2002; Sakai 2006). For a topic-set size n and a
repeat r, draw n of the T topics without replacement and rank the systems on them; report

* ``tau_subset``: Kendall's :math:`\tau_b` between that ranking and the ranking on all T topics;
* ``tau_split``: :math:`\tau_b` between the rankings on two *disjoint* subsets of n topics each
  (split-half; needs :math:`2n \le T`).

Curves of mean tau against n show how many topics a measure needs before its ranking settles:
a measure that needs fewer is more stable. The same subsets serve every measure (common random
numbers), so differences between measures are not sampling noise.

**Measure-vs-measure agreement** (Sakai & Kando 2008, Table 6; Ferrante et al. 2014, Tables
1-3): :math:`\tau_b` and :math:`\tau_{AP}` between the system rankings of every pair of measures
on the same judgments, on all topics or on a subset (e.g. topics with few highly relevant
documents).

References
----------
.. [VB02] E. M. Voorhees and C. Buckley (2002). The effect of topic set size on retrieval
   experiment error. SIGIR 2002, 316-323.
.. [S06] T. Sakai (2006). Evaluating evaluation metrics based on the bootstrap. SIGIR 2006.
.. [SK08] T. Sakai and N. Kando (2008). On information retrieval metrics designed for
   evaluation with incomplete relevance assessments. Information Retrieval 11(5), 447-470.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from metaeval._summary import interval_summary
from metaeval._validation import as_generator, check_int
from metaeval.aggregate import parse_aggregate
from metaeval.meta.rankcorr import kendall_tau
from metaeval.meta.robustness import rank_correlations


def default_sizes(n_topics: int) -> tuple[int, ...]:
    """Topic-set sizes 5, 10, 15, ... up to T/2 (or 1..T/2 for fewer than 10 topics)."""
    half = n_topics // 2
    if half < 1:
        raise ValueError(f"topic-subset stability needs at least 2 topics, got {n_topics}")
    sizes = tuple(range(5, half + 1, 5)) if half >= 5 else tuple(range(1, half + 1))
    return sizes


def draw_topic_subsets(n_topics: int, size: int, *, rng) -> tuple[np.ndarray, np.ndarray | None]:
    """Two disjoint random subsets of ``size`` topics (the second is None if 2 size > T).

    The first ``size`` topics of one random permutation form the subset, the next ``size`` the
    split-half partner, so the first subset is the same whether or not a partner is drawn.
    """
    n_topics = check_int("n_topics", n_topics, min=1)
    size = check_int("size", size, min=1, max=n_topics)
    order = as_generator(rng).permutation(n_topics)
    first = np.sort(order[:size])
    second = np.sort(order[size : 2 * size]) if 2 * size <= n_topics else None
    return first, second


def _aggregates(aggregate, data: Mapping) -> dict:
    """One parsed aggregate per measure, from one spelling or a mapping."""
    if isinstance(aggregate, Mapping):
        missing = [m for m in data if m not in aggregate]
        if missing:
            raise ValueError(f"aggregate names no aggregate for {missing}")
        return {m: parse_aggregate(aggregate[m]) for m in data}
    agg = parse_aggregate(aggregate)
    return dict.fromkeys(data, agg)


@dataclass(frozen=True, eq=False)
class StabilityResult:
    """Result of :func:`topic_subset_stability`.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per measure, size, repeat and statistic: columns ``measure, size, repeat,
        statistic, value`` with statistic ``tau_subset`` or ``tau_split``.
    n_topics : int
    """

    frame: pd.DataFrame
    n_topics: int

    def to_frame(self) -> pd.DataFrame:
        return self.frame.copy()

    def summary(self) -> pd.DataFrame:
        """Mean and 2.5 / 97.5 percentiles over repeats, per measure, size and statistic."""
        return interval_summary(self.frame, ["measure", "size", "statistic"], count="repeats")


def _score_map(scores) -> dict[str, np.ndarray]:
    items = scores.items() if isinstance(scores, Mapping) else [("", scores)]
    out = {}
    shape = None
    for name, x in items:
        x = np.asarray(x, dtype=float)
        if x.ndim != 2:
            raise ValueError(
                f"scores of {name or 'the measure'} must be a 2-D (systems x "
                f"topics) array, got shape {x.shape}"
            )
        if shape is not None and x.shape != shape:
            raise ValueError(
                f"every measure's scores must have the same shape; got {shape} and {x.shape}"
            )
        shape = x.shape
        out[str(name)] = x
    if not out:
        raise ValueError("scores is empty: give at least one measure")
    if shape[0] < 2:
        raise ValueError(f"stability needs at least 2 systems, got {shape[0]}")
    return out


def topic_subset_stability(
    scores,
    sizes: Sequence[int] | None = None,
    repeats: int = 50,
    *,
    split_half: bool = True,
    aggregate: str = "mean",
    rng=None,
    subsets=None,
) -> StabilityResult:
    """Kendall's tau_b of rankings on random topic subsets, against all topics and split-half.

    Parameters
    ----------
    scores : array_like (S, T) or mapping of measure name -> (S, T)
        Per-topic scores. Several measures share the same subsets.
    sizes : sequence of int, optional
        Topic-set sizes n (default :func:`default_sizes`). ``tau_split`` is reported for sizes
        with 2n <= T only.
    repeats : int
        Subsets drawn per size.
    split_half : bool
        Also report the split-half tau.
    aggregate : str or mapping of measure name -> str
        How per-topic scores become system scores (one for all measures, or per measure).
    rng : None, int, SeedSequence or Generator
        Draws the subsets, size by size and repeat by repeat (ignored with ``subsets``).
    subsets : mapping (size, repeat) -> (subset, partner or None), optional
        Topic index arrays drawn beforehand (a study draws each from its own seeded stream).

    Returns
    -------
    StabilityResult
    """
    data = _score_map(scores)
    n_topics = next(iter(data.values())).shape[1]
    sizes = (
        default_sizes(n_topics)
        if sizes is None
        else tuple(check_int(f"sizes[{i}]", n, min=1, max=n_topics) for i, n in enumerate(sizes))
    )
    repeats = check_int("repeats", repeats, min=1)
    aggs = _aggregates(aggregate, data)
    gen = as_generator(rng) if subsets is None else None
    drawn = {}
    for n in sizes:
        for r in range(repeats):
            drawn[n, r] = (
                subsets[n, r] if subsets is not None else draw_topic_subsets(n_topics, n, rng=gen)
            )
    rows = []
    for name, x in data.items():
        agg = aggs[name]
        all_means = agg(x, axis=1)
        for n in sizes:
            # (repeats, S): every repeat's system scores at once, topics on the last axis
            firsts = agg(x[:, np.stack([drawn[n, r][0] for r in range(repeats)])], axis=-1).T
            taus = kendall_tau(all_means, firsts)
            rows.extend((name, n, r, "tau_subset", float(t)) for r, t in enumerate(taus))
            if split_half and 2 * n <= n_topics:
                partners = agg(x[:, np.stack([drawn[n, r][1] for r in range(repeats)])], axis=-1).T
                # every repeat's subset ranking against its partner's, row by row, in one call
                taus = kendall_tau(firsts, partners)
                rows.extend((name, n, r, "tau_split", float(t)) for r, t in enumerate(taus))
    frame = pd.DataFrame(rows, columns=["measure", "size", "repeat", "statistic", "value"])
    return StabilityResult(frame=frame, n_topics=n_topics)


@dataclass(frozen=True, eq=False)
class AgreementResult:
    """Result of :func:`measure_agreement`.

    Attributes
    ----------
    frame : pandas.DataFrame
        Columns ``measure, other, statistic, value``: for every ordered pair of distinct
        measures. ``tau_b`` is symmetric; ``tau_ap`` is :math:`\\tau_{AP}` of ``other``'s
        ranking scored against ``measure``'s ranking as the truth.
    n_topics : int
        Topics used.
    """

    frame: pd.DataFrame
    n_topics: int

    def to_frame(self) -> pd.DataFrame:
        return self.frame.copy()

    def matrix(self, statistic: str = "tau_b") -> pd.DataFrame:
        """Measure x measure table of one statistic (rows: ``measure``; diagonal 1)."""
        f = self.frame[self.frame["statistic"] == statistic]
        if f.empty:
            raise ValueError(
                f"statistic {statistic!r} was not computed; computed: "
                f"{sorted(self.frame['statistic'].unique())}"
            )
        names = list(dict.fromkeys([*f["measure"], *f["other"]]))
        m = f.pivot(index="measure", columns="other", values="value").reindex(
            index=names, columns=names
        )
        for n in names:
            m.loc[n, n] = 1.0
        return m


def measure_agreement(
    scores: Mapping[str, np.ndarray],
    *,
    statistics: Sequence[str] = ("tau_b", "tau_ap"),
    topics=None,
    aggregate: str = "mean",
) -> AgreementResult:
    """Rank correlation between the system rankings of every pair of measures.

    Parameters
    ----------
    scores : mapping of measure name -> (S, T) per-topic scores
        At least two measures, on the same systems and topics.
    statistics : sequence of {"tau_b", "tau_a", "tau_ap"}
    topics : array_like of bool (T,) or of int, optional
        Only these topics (a mask, or topic positions).
    aggregate : str or mapping of measure name -> str
        One aggregate for all measures (``mean``, ``gmean``...), or one per measure.

    Returns
    -------
    AgreementResult
    """
    data = _score_map(scores)
    if len(data) < 2:
        raise ValueError("agreement needs at least two measures")
    n_topics = next(iter(data.values())).shape[1]
    cols = np.arange(n_topics) if topics is None else np.asarray(topics)
    if cols.dtype == bool:
        if cols.shape != (n_topics,):
            raise ValueError(f"topics mask must have {n_topics} entries, got {cols.shape}")
        cols = np.flatnonzero(cols)
    if cols.size == 0:
        raise ValueError("topics selects no topic")
    aggs = _aggregates(aggregate, data)
    means = {name: aggs[name](x[:, cols], axis=1) for name, x in data.items()}
    names = list(means)
    rows = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            ab = rank_correlations(means[a], means[b], statistics)
            ba = rank_correlations(means[b], means[a], [s for s in statistics if s == "tau_ap"])
            for stat, value in ab.items():
                rows.append((a, b, stat, float(value)))
                rows.append((b, a, stat, float(ba.get(stat, value))))
    frame = pd.DataFrame(rows, columns=["measure", "other", "statistic", "value"])
    return AgreementResult(frame=frame, n_topics=int(cols.size))


__all__ = [
    "default_sizes",
    "draw_topic_subsets",
    "topic_subset_stability",
    "StabilityResult",
    "measure_agreement",
    "AgreementResult",
]
