"""Criteria on how a measure ranks the systems: under damaged judgments (robustness), on
topic subsets (stability, the swap method), against other measures (agreement), and how much
its value says about the ranked list (informativeness)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import pandas as pd

from metaeval._constraints import Boolean, Interval, OneOf, Optional, Sequence
from metaeval.study.criteria.base import (
    CORRELATIONS,
    Criterion,
    register_criterion,
    resample_rows,
    rows,
)


@register_criterion
@dataclass(frozen=True, kw_only=True)
class Robustness(Criterion):
    """Rank correlation of each measure's ranking under damaged judgments with its ranking
    under full judgments (``against = "full"``), with its ranking under the true judgments of
    a simulated world (``"truth"``) and with the world's latent system effect (``"effect"``);
    and the mean drift of its values (docs/methods.md §9). References a real collection does
    not have are skipped. Under full judgments only the comparisons with the truth are made.

    Statistics: ``tau_b``, ``tau_a``, ``tau_ap`` (``other`` = the reference: full, truth or
    effect) and ``mean_drift``.
    """

    statistics: tuple = ("tau_b", "tau_ap")
    against: tuple = ("full", "truth")
    kind: ClassVar[str] = "robustness"
    needs_judgments: ClassVar[bool] = True
    ranges: ClassVar[dict] = dict.fromkeys(("tau_b", "tau_a", "tau_ap"), (-1.0, 1.0))
    default_levels: ClassVar[str] = "all"
    _constraints: ClassVar[dict] = {
        "statistics": CORRELATIONS,
        "against": Sequence(OneOf("full", "truth", "effect"), unique=False),
    }

    def produces(self):
        return (*self.statistics, "mean_drift")

    def idle_at_full(self, world_kinds):
        # under full judgments only the truth (a simulated world's) and the latent effect (a
        # simulated or score-level world's) are compared with
        offered = {"truth": {"simulator"}, "effect": {"simulator", "scores"}}
        if any(world_kinds & offered.get(a, set()) for a in self.against):
            return None
        return (
            "under full judgments it compares only with the truth (of a simulated world) or "
            f"the latent effect (of a simulated or score-level one), which against = "
            f"{list(self.against)} on its {' and '.join(sorted(world_kinds))} worlds does not "
            "give"
        )

    def compute(self, ctx, measures):
        from metaeval.meta.robustness import mean_drift, rank_correlations

        out = []
        for m in measures:
            means = ctx.means(ctx.scores(m), m)
            refs = {
                "full": None if ctx.is_full else ctx.means(ctx.full_scores(m), m),
                "truth": None if ctx.truth_scores(m) is None else ctx.means(ctx.truth_scores(m), m),
                "effect": ctx.system_effect(m),
            }
            for against in self.against:
                ref = refs[against]
                if ref is None:
                    continue
                for stat, value in rank_correlations(ref, means, self.statistics).items():
                    out.append((m, against, stat, np.nan, value))
            if not ctx.is_full:
                out.append(
                    (
                        m,
                        "full",
                        "mean_drift",
                        np.nan,
                        mean_drift(ctx.means(ctx.full_scores(m), m), means),
                    )
                )
        return {"results": rows(out)}

    def compute_resamples(self, ctx, measures):
        # compute() on every resample, with the rank correlations of all resamples at once
        from metaeval.meta.robustness import mean_drift, rank_correlations

        out = []
        for m in measures:
            means = ctx.resampled_means(m)
            full = None if ctx.is_full else ctx.resampled_means(m, "full_scores")
            effect = ctx.system_effect(m)
            refs = {
                "full": full,
                "truth": ctx.resampled_means(m, "truth_scores"),
                "effect": None if effect is None else np.broadcast_to(effect, means.shape),
            }
            for against in self.against:
                if refs[against] is None:
                    continue
                for stat, values in rank_correlations(
                    refs[against], means, self.statistics
                ).items():
                    out.append((m, against, stat, np.nan, values))
            if full is not None:
                out.append((m, "full", "mean_drift", np.nan, mean_drift(full, means)))
        return resample_rows(out)


@register_criterion
@dataclass(frozen=True, kw_only=True)
class Stability(Criterion):
    """Topic-subset stability (Voorhees & Buckley 2002): tau_b between the ranking on n random
    topics and on all topics (``tau_subset``), and between two disjoint subsets of n topics
    (``tau_split``), as a function of n; the same subsets for every measure and level.

    Statistics (``x`` = the topic-set size): the mean over repeats, and ``_p025`` / ``_p975``
    percentiles. Detail table ``stability``: every repeat.
    """

    sizes: tuple | None = None
    repeats: int = 50
    split_half: bool = True
    kind: ClassVar[str] = "stability"
    ranges: ClassVar[dict] = dict.fromkeys(
        (f"{n}{end}" for n in ("tau_subset", "tau_split") for end in ("", "_p025", "_p975")),
        (-1.0, 1.0),
    )
    tables: ClassVar[tuple[str, ...]] = ("stability",)
    _constraints: ClassVar[dict] = {
        "sizes": Optional(Sequence(Interval(Integral, 1))),
        "repeats": Interval(Integral, 1),
        "split_half": Boolean(),
    }

    def produces(self):
        names = ("tau_subset", "tau_split") if self.split_half else ("tau_subset",)
        return tuple(f"{n}{end}" for n in names for end in ("", "_p025", "_p975"))

    def compute(self, ctx, measures):
        from metaeval.meta.stability import (
            default_sizes,
            draw_topic_subsets,
            topic_subset_stability,
        )

        n_topics = ctx.n_topics
        sizes = (
            default_sizes(n_topics)
            if self.sizes is None
            else tuple(n for n in self.sizes if n <= n_topics)
        )
        # the same subsets (positions) on the observed topics and on every resample of them
        key = ("subsets", dataclasses.astuple(self), n_topics)
        if key not in ctx.level_cache:
            ctx.level_cache[key] = {
                (n, r): draw_topic_subsets(n_topics, n, rng=ctx.stream("subsets", n, r))
                for n in sizes
                for r in range(self.repeats)
            }
        subsets = ctx.level_cache[key]
        res = topic_subset_stability(
            {m: ctx.scores(m) for m in measures},
            sizes,
            self.repeats,
            split_half=self.split_half,
            aggregate={m: ctx.aggregate_of(m) for m in measures},
            subsets=subsets,
        )
        out = []
        for row in res.summary().itertuples(index=False):
            out += [
                (row.measure, "", row.statistic, row.size, row.mean),
                (row.measure, "", f"{row.statistic}_p025", row.size, row.p025),
                (row.measure, "", f"{row.statistic}_p975", row.size, row.p975),
            ]
        return {"results": rows(out), "stability": res.to_frame()}


@register_criterion
@dataclass(frozen=True, kw_only=True)
class Agreement(Criterion):
    """Rank correlation between the rankings of every pair of measures on the same judgments
    (Sakai & Kando 2008, Table 6). ``tau_ap`` rows score ``other``'s ranking against
    ``measure``'s as the truth.
    """

    statistics: tuple = ("tau_b", "tau_ap")
    kind: ClassVar[str] = "agreement"
    ranges: ClassVar[dict] = dict.fromkeys(("tau_b", "tau_a", "tau_ap"), (-1.0, 1.0))
    pairwise: ClassVar[bool] = True
    _constraints: ClassVar[dict] = {"statistics": CORRELATIONS}

    def produces(self):
        return tuple(self.statistics)

    def compute(self, ctx, measures):
        from metaeval.meta.stability import measure_agreement

        out = []
        for a, b in measures:
            res = measure_agreement(
                {a: ctx.scores(a), b: ctx.scores(b)},
                statistics=self.statistics,
                aggregate={a: ctx.aggregate_of(a), b: ctx.aggregate_of(b)},
            )
            out += [
                (r.measure, r.other, r.statistic, np.nan, r.value)
                for r in res.frame.itertuples(index=False)
            ]
        return {"results": rows(out)}

    def compute_resamples(self, ctx, measures):
        # measure_agreement's rows, with the correlations of all resamples at once
        from metaeval.meta.robustness import rank_correlations

        means = {m: ctx.resampled_means(m) for pair in measures for m in pair}
        out = []
        for a, b in measures:
            ab = rank_correlations(means[a], means[b], self.statistics)
            ba = rank_correlations(
                means[b], means[a], [s for s in self.statistics if s == "tau_ap"]
            )
            for stat, values in ab.items():
                out.append((a, b, stat, np.nan, values))
                out.append((b, a, stat, np.nan, ba.get(stat, values)))
        return resample_rows(out)


@register_criterion
@dataclass(frozen=True, kw_only=True)
class Informativeness(Criterion):
    """Informativeness by the maximum-entropy method (Aslam, Yilmaz & Pavlu 2005; Robertson,
    Kanoulas & Yilmaz 2010): how well each measure's value predicts the list's precision-recall
    curve. Measures without a max-ent expectation are skipped.

    ``select`` picks the lists (:func:`metaeval.meta.informativeness_tensor`): ``"lists"``
    (at each threshold, those that retrieved ``min_relevant`` documents at or above it) or
    ``"each_grade"`` (those that retrieved ``min_relevant`` documents of every relevant grade,
    as Robertson et al. 2010 do).

    Statistics (``x`` = the relevance threshold grade): ``rms`` (mean RMS error over the
    lists) and ``n_lists``.
    """

    error: str = "recall_points"
    min_relevant: int = 5
    count: str = "retrieved"
    select: str = "lists"
    kind: ClassVar[str] = "informativeness"
    needs_judgments: ClassVar[bool] = True
    ranges: ClassVar[dict] = dict.fromkeys(("rms", "n_lists"), (0.0, np.inf))
    _constraints: ClassVar[dict] = {
        "error": OneOf("recall_points", "interpolated"),
        "min_relevant": Interval(Integral, 0),
        "count": OneOf("retrieved", "relevant"),
        "select": OneOf(lazy="metaeval.meta.informativeness:SELECTIONS"),
    }

    def produces(self):
        return ("rms", "n_lists")

    def _lists(self, ctx, m: str) -> pd.DataFrame | None:
        """Every scored list of the measure at this level, on all topics (once per level):
        ``threshold``, ``position`` (of the list's topic) and ``rms``; None when the measure
        has no max-ent expectation."""
        from metaeval.meta.informativeness import informativeness_tensor
        from metaeval.meta.maxent.expectations import NoExpectationError

        key = ("informativeness", dataclasses.astuple(self), m)
        cache = ctx.level_cache
        if key not in cache:
            try:
                res = informativeness_tensor(
                    ctx.tensor,
                    [ctx.measure(m)],
                    min_relevant=self.min_relevant,
                    rel=ctx.rel,
                    error=self.error,
                    count=self.count,
                    select=self.select,
                    infer=(),
                )
            except NoExpectationError:
                cache[key] = None
            else:
                position = {t: i for i, t in enumerate(ctx.tensor.topics)}
                lists = res.lists
                cache[key] = pd.DataFrame(
                    {
                        "threshold": lists["threshold"].to_numpy(dtype=float),
                        "position": lists["topic"].map(position).to_numpy(dtype=int),
                        "rms": lists["rms"].to_numpy(dtype=float),
                    }
                )
        return cache[key]

    def compute(self, ctx, measures):
        # The mean RMS error over the lists of the topics the context sees, each list counted
        # as often as its topic is (a topic resample draws some topics twice).
        weights = ctx.topic_weights()
        out = []
        for m in measures:
            lists = self._lists(ctx, m)
            if lists is None:
                continue
            for threshold, sub in lists.groupby("threshold", sort=True):
                w = weights[sub["position"].to_numpy()]
                rms = sub["rms"].to_numpy()
                scored = np.isfinite(rms) & (w > 0)
                mean = (
                    float(np.dot(w[scored], rms[scored]) / w[scored].sum())
                    if scored.any()
                    else np.nan
                )
                out += [
                    (m, "", "rms", float(threshold), mean),
                    (m, "", "n_lists", float(threshold), float(w.sum())),
                ]
        return {"results": rows(out)}


@register_criterion
@dataclass(frozen=True, kw_only=True)
class Swap(Criterion):
    """The swap method (Voorhees & Buckley 2002; Sakai 2006): how often two topic sets of size
    c order a pair of systems differently, per difference bin.

    Statistics (``x`` = the topic-set size): ``min_difference``, the smallest difference bin
    with a swap rate <= ``max_error``. Detail table ``swap``: error rate per size and bin.
    """

    trials: int = 50
    bin_width: float = 0.01
    n_bins: int = 21
    max_error: float = 0.05
    with_replacement: bool = False
    kind: ClassVar[str] = "swap"
    ranges: ClassVar[dict] = {"min_difference": (0.0, np.inf)}
    tables: ClassVar[tuple[str, ...]] = ("swap",)
    _constraints: ClassVar[dict] = {
        "trials": Interval(Integral, 1),
        "bin_width": Interval(Real, 0, None, closed="neither"),
        "n_bins": Interval(Integral, 1),
        "max_error": Interval(Real, 0, 1),
        "with_replacement": Boolean(),
    }

    def produces(self):
        return ("min_difference",)

    def compute(self, ctx, measures):
        from metaeval.meta.swap import swap_method

        out, details = [], []
        for m in measures:
            res = swap_method(
                ctx.scores(m),
                trials=self.trials,
                bin_width=self.bin_width,
                n_bins=self.n_bins,
                with_replacement=self.with_replacement,
                rng=ctx.stream("subsets"),
            )
            out += [
                (m, "", "min_difference", float(c), d)
                for c, d in res.min_differences(self.max_error).items()
            ]
            t = res.table.copy()
            t.insert(0, "measure", m)
            details.append(t)
        return {"results": rows(out), "swap": pd.concat(details, ignore_index=True)}


__all__ = ["Agreement", "Informativeness", "Robustness", "Stability", "Swap"]
