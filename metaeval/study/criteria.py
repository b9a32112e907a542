"""Criteria as a study runs them: frozen dataclasses over a :class:`~metaeval.study.Context`.

A study criterion is a thin adapter around a function of :mod:`metaeval.meta` (which works alone
on score arrays or a tensor): it reads the per-topic scores of the measures at one level of one
trial from the context, calls the function, and returns tidy rows. Its fields are its
parameters, so a study file's ``[[criteria]]`` keys are checked like a measure's parameters.

Rows of the ``results`` table (one per statistic) have the columns ``measure``, ``other`` (the
second measure of a pairwise criterion, else ""), ``statistic``, ``x`` (a numeric parameter
such as the topic-set size, else NaN) and ``value``. A criterion may also return detail tables
(ASL curves, per-repeat values) with columns of its own plus ``measure``.

A user adds a criterion by subclassing :class:`Criterion` as a frozen dataclass and decorating
it with :func:`register_criterion` in a plugin file listed under ``plugins`` in the study.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from metaeval._validation import check_alpha, check_choice, check_int, check_optional_int

RESULT_COLUMNS = ["measure", "other", "statistic", "x", "value"]

_REGISTRY: dict[str, type[Criterion]] = {}


@dataclass(frozen=True, kw_only=True)
class Criterion:
    """Base class of study criteria.

    Class attributes
    ----------------
    kind : str
        The name used in study files (``kind = "robustness"``).
    pairwise : bool
        Results are about pairs of measures (a unit of work is a pair), not single measures.
    per_measure : bool
        False for a criterion about the collection itself (one unit per level, measure "").
    at_full, at_degraded : bool
        Whether the criterion means something under the full judgments, and under damaged ones.
    default_levels : {"full", "degraded", "all"}
        Where it is computed when the study does not say.
    tables : tuple of str
        Detail tables it writes besides ``results``.
    """

    kind: ClassVar[str] = ""
    pairwise: ClassVar[bool] = False
    per_measure: ClassVar[bool] = True
    at_full: ClassVar[bool] = True
    at_degraded: ClassVar[bool] = True
    default_levels: ClassVar[str] = "full"
    tables: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self):
        self._validate()

    def _validate(self) -> None:
        """Check parameter values; raise ValueError naming the parameter."""

    def produces(self) -> tuple[str, ...] | None:
        """The statistics this criterion writes in ``results``, so that a claim naming another
        one is an error as soon as the study file is read; None when not declared (a claim's
        statistic is then only looked for in the saved results)."""
        return None

    def compute(self, ctx, measures: list) -> dict[str, pd.DataFrame]:
        """Rows for ``measures`` (names, or pairs of names when ``pairwise``) in ``ctx``.

        Returns ``{"results": frame, <detail table>: frame, ...}``; ``results`` has
        :data:`RESULT_COLUMNS`.
        """
        raise NotImplementedError


def register_criterion(cls: type[Criterion] | None = None):
    """Class decorator: make a :class:`Criterion` subclass usable in study files."""

    def wrap(klass):
        if not (inspect.isclass(klass) and issubclass(klass, Criterion)):
            raise TypeError(f"register_criterion() takes a Criterion subclass, got {klass!r}")
        if not klass.kind or not klass.kind.isidentifier():
            raise ValueError(f"{klass.__name__}.kind must be an identifier, got {klass.kind!r}")
        if "__dataclass_fields__" not in klass.__dict__:
            raise TypeError(
                f"{klass.__name__} must be decorated with @dataclass(frozen=True, kw_only=True)"
            )
        owner = _REGISTRY.get(klass.kind)
        if owner is not None and (owner.__module__, owner.__qualname__) != (
            klass.__module__,
            klass.__qualname__,
        ):
            raise ValueError(
                f"a criterion of kind {klass.kind!r} is already registered ({owner.__qualname__})"
            )
        _REGISTRY[klass.kind] = klass
        return klass

    return wrap if cls is None else wrap(cls)


def registered_criteria() -> dict[str, type[Criterion]]:
    """Every registered criterion class by kind."""
    return dict(sorted(_REGISTRY.items()))


def make_criterion(kind: str, **params) -> Criterion:
    """A criterion by kind, e.g. ``make_criterion("discriminative_power", B=1000)``."""
    if kind not in _REGISTRY:
        raise ValueError(f"unknown criterion {kind!r}; registered: {sorted(_REGISTRY)}")
    cls = _REGISTRY[kind]
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(
            f"{unknown[0]}: not a parameter of {kind}; parameters: "
            f"{', '.join(sorted(known)) or 'none'}"
        )
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in params.items()})


def rows(records: list[tuple], columns: list[str] = RESULT_COLUMNS) -> pd.DataFrame:
    """A results frame from (measure, other, statistic, x, value) tuples."""
    frame = pd.DataFrame(records, columns=columns)
    return frame.astype(
        {"measure": str, "other": str, "statistic": str, "x": float, "value": float}
    )


def _statistics(name: str, values: tuple, allowed: tuple) -> None:
    if not values:
        raise ValueError(f"{name} must not be empty")
    for v in values:
        check_choice(name, v, allowed)


# ------------------------------------------------------------------------------ built-ins
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
    default_levels: ClassVar[str] = "all"

    def _validate(self):
        from metaeval.meta.robustness import CORRELATIONS

        _statistics("statistics", self.statistics, CORRELATIONS)
        _statistics("against", self.against, ("full", "truth", "effect"))

    def produces(self):
        return (*self.statistics, "mean_drift")

    def compute(self, ctx, measures):
        from metaeval.meta.robustness import mean_drift, rank_correlations

        out = []
        for m in measures:
            means = ctx.means(ctx.scores(m), m)
            refs = {
                "full": None if ctx.is_full else ctx.means(ctx.full_scores(m), m),
                "truth": None if ctx.truth_scores(m) is None else ctx.means(ctx.truth_scores(m), m),
                "effect": ctx.system_effect,
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


@register_criterion
@dataclass(frozen=True, kw_only=True)
class DiscriminativePower(Criterion):
    """Discriminative power (Sakai 2006): the share of system pairs significant at ``alpha``,
    by the paired bootstrap or the randomised Tukey HSD, with one set of resamples shared by
    every measure and level of a world (docs/methods.md §1).

    Statistics: ``power``, ``diff_required``, ``n_significant``, ``n_pairs``. Detail table
    ``asl``: the sorted ASL of every pair (the ASL curve).
    """

    method: str = "bootstrap"
    B: int | None = None
    alpha: float = 0.05
    kind: ClassVar[str] = "discriminative_power"
    default_levels: ClassVar[str] = "all"
    tables: ClassVar[tuple[str, ...]] = ("asl",)

    def _validate(self):
        check_choice("method", self.method, ("bootstrap", "tukey"))
        check_optional_int("B", self.B, min=1)
        check_alpha(self.alpha)

    def produces(self):
        return ("power", "diff_required", "n_significant", "n_pairs")

    def compute(self, ctx, measures):
        out, curves = [], []
        for m in measures:
            res = ctx.discriminative_power(m, self)
            out += [
                (m, "", "power", np.nan, res.power),
                (m, "", "diff_required", np.nan, res.diff_required),
                (m, "", "n_significant", np.nan, res.n_significant),
                (m, "", "n_pairs", np.nan, res.n_pairs),
            ]
            curves.append(
                pd.DataFrame(
                    {
                        "measure": m,
                        "rank": np.arange(1, res.n_pairs + 1),
                        "asl": np.asarray(res.asl_sorted, dtype=float),
                    }
                )
            )
        return {"results": rows(out), "asl": pd.concat(curves, ignore_index=True)}


@register_criterion
@dataclass(frozen=True, kw_only=True)
class SignificanceChanges(Criterion):
    """Significance conclusions that change under damaged judgments (Sakai & Kando 2008,
    Table 5), with the resamples of the full-judgment test reused at every level.

    Statistics: ``n_significant`` (under the damaged judgments), ``false_alarms``,
    ``reversals``, ``misses``, ``power``.
    """

    method: str = "bootstrap"
    B: int | None = None
    alpha: float = 0.05
    kind: ClassVar[str] = "significance_changes"
    at_full: ClassVar[bool] = False
    default_levels: ClassVar[str] = "degraded"

    def _validate(self):
        check_choice("method", self.method, ("bootstrap", "tukey"))
        check_optional_int("B", self.B, min=1)
        check_alpha(self.alpha)

    def produces(self):
        return ("n_significant", "false_alarms", "reversals", "misses", "power")

    def compute(self, ctx, measures):
        from metaeval.meta.robustness import significance_changes

        out = []
        for m in measures:
            full = ctx.discriminative_power(m, self, full=True)
            changes = significance_changes(
                full, ctx.scores(m), method=self.method, alpha=self.alpha
            )
            changes.pop("n_pairs")
            out += [(m, "full", stat, np.nan, float(v)) for stat, v in changes.items()]
        return {"results": rows(out)}


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
    tables: ClassVar[tuple[str, ...]] = ("stability",)

    def _validate(self):
        if self.sizes is not None:
            if not self.sizes:
                raise ValueError("sizes must not be empty")
            for i, n in enumerate(self.sizes):
                check_int(f"sizes[{i}]", n, min=1)
        check_int("repeats", self.repeats, min=1)
        if not isinstance(self.split_half, bool):
            raise TypeError(f"split_half must be true or false, got {self.split_half!r}")

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
        subsets = {
            (n, r): draw_topic_subsets(n_topics, n, rng=ctx.stream("subsets", n, r))
            for n in sizes
            for r in range(self.repeats)
        }
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
    pairwise: ClassVar[bool] = True

    def _validate(self):
        from metaeval.meta.robustness import CORRELATIONS

        _statistics("statistics", self.statistics, CORRELATIONS)

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

    def _validate(self):
        from metaeval.meta.informativeness import SELECTIONS

        check_choice("error", self.error, ("recall_points", "interpolated"))
        check_int("min_relevant", self.min_relevant, min=0)
        check_choice("count", self.count, ("retrieved", "relevant"))
        check_choice("select", self.select, SELECTIONS)

    def produces(self):
        return ("rms", "n_lists")

    def compute(self, ctx, measures):
        from metaeval.meta.informativeness import informativeness_tensor

        out = []
        for m in measures:
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
            except ValueError as err:
                if "expectation" in str(err):
                    continue
                raise
            for row in res.summary.itertuples(index=False):
                out += [
                    (m, "", "rms", float(row.threshold), float(row.rms)),
                    (m, "", "n_lists", float(row.threshold), float(row.n_lists)),
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
    tables: ClassVar[tuple[str, ...]] = ("swap",)

    def _validate(self):
        check_int("trials", self.trials, min=1)
        check_int("n_bins", self.n_bins, min=1)
        if not isinstance(self.with_replacement, bool):
            raise TypeError(
                f"with_replacement must be true or false, got {self.with_replacement!r}"
            )

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
            sizes = sorted(res.table["topic_set_size"].unique())
            out += [
                (
                    m,
                    "",
                    "min_difference",
                    float(c),
                    res.min_difference(int(c), max_error=self.max_error),
                )
                for c in sizes
            ]
            t = res.table.copy()
            t.insert(0, "measure", m)
            details.append(t)
        return {"results": rows(out), "swap": pd.concat(details, ignore_index=True)}


@register_criterion
@dataclass(frozen=True, kw_only=True)
class Collection(Criterion):
    """What the collection itself looks like, as :func:`simulators.collection_stats` measures
    it on real and simulated collections alike: judged and relevant documents per topic, grade
    shares, MAP and nDCG and their spread over systems and topics, the split-half tau of the
    system ranking, the judged share of the top k, the distinct documents in the runs' top k.
    Used to check a simulator against the collections it imitates. Statistics: one per
    quantity (``measure`` is "")."""

    n_splits: int = 200
    kind: ClassVar[str] = "collection"
    per_measure: ClassVar[bool] = False
    at_degraded: ClassVar[bool] = False

    def _validate(self):
        check_int("n_splits", self.n_splits, min=1)

    def compute(self, ctx, measures):
        from simulators import collection_stats

        stats = collection_stats(
            ctx.world.tensor.qrels,
            ctx.world.runs,
            rel=ctx.rel,
            rng=ctx.stream("subsets"),
            n_splits=self.n_splits,
        )
        return {
            "results": rows(
                [("", "", name, np.nan, float(value)) for name, value in stats.summary().items()]
            )
        }


def criterion_levels(spec_levels: Any, criterion: Criterion, degrader_levels: tuple) -> tuple:
    """The levels (strings; "full" for the full judgments) a criterion is computed at for one
    degrader's levels."""
    from metaeval.study.spec import FULL

    levels = tuple(str(lv) for lv in degrader_levels)
    if spec_levels is None:
        wanted = {"full": (FULL,), "degraded": levels, "all": (FULL, *levels)}[
            criterion.default_levels
        ]
    elif spec_levels == "all":
        wanted = (FULL, *levels)
    else:
        wanted = tuple(lv for lv in spec_levels if lv == FULL or lv in levels)
    return tuple(
        lv
        for lv in wanted
        if (lv == FULL and criterion.at_full) or (lv != FULL and criterion.at_degraded)
    )


__all__ = [
    "Criterion",
    "register_criterion",
    "registered_criteria",
    "make_criterion",
    "RESULT_COLUMNS",
    "rows",
    "criterion_levels",
    "Robustness",
    "DiscriminativePower",
    "SignificanceChanges",
    "Stability",
    "Agreement",
    "Informativeness",
    "Swap",
    "Collection",
]
