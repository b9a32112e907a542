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
#: The table of every results row's values on the study's topic resamples (``n_topics``, and
#: ``values``: one float32 per resample), written beside ``results`` by every resampled
#: criterion.
RESAMPLES = "resamples"

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
    resampled : bool
        Its statistics are recomputed on the study's paired topic resamples (the uncertainty
        of every interval and verdict built on them). False for a criterion whose statistics
        do not rest on a sample of topics.
    needs_judgments : bool
        It reads judgments or damages them (not only per-topic scores), so it cannot run on a
        score-level world.
    """

    kind: ClassVar[str] = ""
    needs_judgments: ClassVar[bool] = False
    pairwise: ClassVar[bool] = False
    per_measure: ClassVar[bool] = True
    at_full: ClassVar[bool] = True
    at_degraded: ClassVar[bool] = True
    default_levels: ClassVar[str] = "full"
    tables: ClassVar[tuple[str, ...]] = ()
    resampled: ClassVar[bool] = True
    #: The values a statistic can take, by name (a tau lies in [-1, 1], a share in [0, 1]):
    #: an interval is cut to them, which never lowers its coverage.
    ranges: ClassVar[dict[str, tuple[float, float]]] = {}

    @classmethod
    def range_of(cls, statistic: str) -> tuple[float, float]:
        """The values ``statistic`` can take (unbounded when the criterion does not say)."""
        return cls.ranges.get(statistic, (-np.inf, np.inf))

    def __post_init__(self):
        self._validate()

    def _validate(self) -> None:
        """Check parameter values; raise ValueError naming the parameter."""

    def produces(self) -> tuple[str, ...] | None:
        """The statistics this criterion writes in ``results``, so that a claim naming another
        one is an error as soon as the study file is read; None when not declared (a claim's
        statistic is then only looked for in the saved results)."""
        return None

    def others(self) -> tuple[str, ...]:
        """What the ``other`` column of its rows names when it is not a measure (the tests of
        an error-rate criterion, say), so that a claim's ``against`` may name them."""
        return ()

    def compute(self, ctx, measures: list) -> dict[str, pd.DataFrame]:
        """Rows for ``measures`` (names, or pairs of names when ``pairwise``) in ``ctx``.

        Returns ``{"results": frame, <detail table>: frame, ...}``; ``results`` has
        :data:`RESULT_COLUMNS`.
        """
        raise NotImplementedError

    def compute_resamples(self, ctx, measures: list) -> pd.DataFrame:
        """The ``results`` rows of :meth:`compute` on every topic resample of ``ctx``:
        :data:`RESULT_COLUMNS` and ``resample`` (1 .. ``ctx.n_resamples``).

        The default calls :meth:`compute` on ``ctx.on_resample(r)`` for each r; a criterion
        overrides it when the resamples can be computed at once (reweighting per-topic values,
        say). Either way the values must be those :meth:`compute` would give on the
        resample's topics.
        """
        frames = [
            self.compute(ctx.on_resample(r), measures)["results"].assign(resample=r)
            for r in range(1, ctx.n_resamples + 1)
        ]
        if not frames:
            return rows([]).assign(resample=pd.Series(dtype=int))
        return pd.concat(frames, ignore_index=True)


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


def rows(records: list[tuple]) -> pd.DataFrame:
    """A results frame from (measure, other, statistic, x, value) tuples."""
    measure, other, statistic, x, value = zip(*records) if records else ((),) * 5
    # built column by column: a criterion makes one per topic resample, so speed matters
    return pd.DataFrame(
        {
            "measure": pd.array(measure, dtype="str"),
            "other": pd.array(other, dtype="str"),
            "statistic": pd.array(statistic, dtype="str"),
            "x": np.asarray(x, dtype=float),
            "value": np.asarray(value, dtype=float),
        }
    )


def resample_rows(records: list[tuple]) -> pd.DataFrame:
    """A long frame of values on topic resamples (:data:`RESULT_COLUMNS` and ``resample``)
    from (measure, other, statistic, x, values) tuples, ``values`` holding one value per
    resample, 1..R in order."""
    if not records:
        return rows([]).assign(resample=pd.Series(dtype=int))
    R = len(records[0][4])
    frame = rows([(m, o, s, x, np.nan) for m, o, s, x, _ in records]).loc[
        np.repeat(np.arange(len(records)), R)
    ]
    frame["value"] = np.concatenate([np.asarray(v, dtype=float) for *_, v in records])
    frame["resample"] = np.tile(np.arange(1, R + 1), len(records))
    return frame.reset_index(drop=True)


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
    needs_judgments: ClassVar[bool] = True
    ranges: ClassVar[dict] = dict.fromkeys(("tau_b", "tau_a", "tau_ap"), (-1.0, 1.0))
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

    def compute_resamples(self, ctx, measures):
        # compute() on every resample, with the rank correlations of all resamples at once
        from metaeval.meta.robustness import mean_drift, rank_correlations

        out = []
        for m in measures:
            means = ctx.resampled_means(m)
            full = None if ctx.is_full else ctx.resampled_means(m, "full_scores")
            effect = ctx.system_effect
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
    ranges: ClassVar[dict] = {
        "power": (0.0, 1.0),
        **dict.fromkeys(("diff_required", "n_significant", "n_pairs"), (0.0, np.inf)),
    }
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
            res = ctx.pair_tests(m, self)
            out += [
                (m, "", "power", np.nan, res.power),
                (m, "", "diff_required", np.nan, res.diff_required),
                (m, "", "n_significant", np.nan, res.n_significant),
                (m, "", "n_pairs", np.nan, res.n_pairs),
            ]
            if ctx.resample == 0:
                curves.append(
                    pd.DataFrame(
                        {
                            "measure": m,
                            "rank": np.arange(1, res.n_pairs + 1),
                            "asl": np.sort(res.asl),
                        }
                    )
                )
        tables = {"results": rows(out)}
        if curves:
            tables["asl"] = pd.concat(curves, ignore_index=True)
        return tables

    def compute_resamples(self, ctx, measures):
        for m in measures:  # every resample's tests at once, then compute() finds them
            ctx.pair_tests_resampled(m, self)
        return super().compute_resamples(ctx, measures)


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
    needs_judgments: ClassVar[bool] = True
    ranges: ClassVar[dict] = {
        "power": (0.0, 1.0),
        **dict.fromkeys(("n_significant", "false_alarms", "reversals", "misses"), (0.0, np.inf)),
    }
    at_full: ClassVar[bool] = False
    default_levels: ClassVar[str] = "degraded"

    def _validate(self):
        check_choice("method", self.method, ("bootstrap", "tukey"))
        check_optional_int("B", self.B, min=1)
        check_alpha(self.alpha)

    def produces(self):
        return ("n_significant", "false_alarms", "reversals", "misses", "power")

    def compute(self, ctx, measures):
        from metaeval.meta.inconsistency import change_status

        out = []
        for m in measures:
            full = ctx.pair_tests(m, self, full=True)
            reduced = ctx.pair_tests(m, self)
            status = change_status(full.significant, full.diff, reduced.significant, reduced.diff)
            changes = {
                "n_significant": reduced.n_significant,
                "false_alarms": np.count_nonzero(status == "absent"),
                "reversals": np.count_nonzero(status == "reversed"),
                "misses": np.count_nonzero(status == "missed"),
                "power": reduced.power,
            }
            out += [(m, "full", stat, np.nan, float(v)) for stat, v in changes.items()]
        return {"results": rows(out)}

    def compute_resamples(self, ctx, measures):
        for m in measures:  # every resample's tests at once, then compute() finds them
            ctx.pair_tests_resampled(m, self, full=True)
            ctx.pair_tests_resampled(m, self)
        return super().compute_resamples(ctx, measures)


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

    def _validate(self):
        from metaeval.meta.informativeness import SELECTIONS

        check_choice("error", self.error, ("recall_points", "interpolated"))
        check_int("min_relevant", self.min_relevant, min=0)
        check_choice("count", self.count, ("retrieved", "relevant"))
        check_choice("select", self.select, SELECTIONS)

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
            out += [
                (m, "", "min_difference", float(c), d)
                for c, d in res.min_differences(self.max_error).items()
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
    needs_judgments: ClassVar[bool] = True
    per_measure: ClassVar[bool] = False
    at_degraded: ClassVar[bool] = False
    resampled: ClassVar[bool] = False  # it describes the collection as it is

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


def _check_values(name: str, values, check) -> None:
    """A list parameter: a list (not a single value), each item checked, none repeated."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (tuple, list)):
        raise TypeError(f"{name} must be a list, got {values!r}")
    for i, v in enumerate(values):
        check(f"{name}[{i}]", v)
    if len(set(values)) != len(values):
        raise ValueError(f"{name} must not repeat a value, got {list(values)}")


@register_criterion
@dataclass(frozen=True, kw_only=True)
class ErrorRates(Criterion):
    r"""Type I, II and III error rates of paired significance tests on a simulated world
    (Urbano, Lima & Hanjalic 2019), by :func:`metaeval.stats.error_rates.error_rates`.

    Each replicate of the world is a fresh collection whose truth is known: every system has
    a latent effect :math:`e_s` (the simulator's ``system_effect``). At each topic-set size n
    (``sizes``; those above the topics the world has are skipped) the criterion draws
    ``repeats`` random subsets of n topics, runs every test (``tests``: t, Wilcoxon, sign,
    randomisation, bootstrap, two-sided at ``alpha``) on every pair of systems on the measure's
    per-topic scores, and counts its decisions against the truth:

    * a pair is **null** when :math:`|e_a - e_b| \le` ``null_tolerance`` (on the ``null``
      preset every effect is 0, so every pair is null; elsewhere effects are continuous and,
      with the default tolerance 0, no pair is). Rejecting a null pair is a type I error;
    * a pair that truly differs and is not rejected is a type II error; one rejected while the
      observed mean difference has the sign opposite to :math:`e_a - e_b` is a type III
      error (significant, in the wrong direction).

    The subsets and the resamples of the randomisation and bootstrap tests are drawn once per
    world replicate and size, the same for every measure and level (their differences come
    from the scores alone). The truth is the simulator's latent effect, not the measure's
    expected value: runs made shallow or with tied scores (``shallow_fraction``,
    ``tie_fraction``) score differently from what their effect says, and count as errors
    against it. Real collections have no known truth: the criterion writes nothing there.

    It is not recomputed on topic resamples: its decisions are already made on random topic
    subsets, and the uncertainty of a rate is over independent collections, the world's
    replicates (with a degrader's trials), which the report's intervals bootstrap. Give the
    world several replicates.

    Statistics (``other`` = the test, ``x`` = the topic-set size): ``type1_rate`` (rejections
    among null decisions), ``type2_rate`` and ``type3_rate`` (among decisions on truly
    different pairs), ``power`` (rejections in the right direction among them, 1 - type II -
    type III); and the counts they rest on, ``n_null``, ``n_different`` (pairs x subsets),
    ``n_type1``, ``n_type2``, ``n_type3``. A rate whose count of decisions is 0 is not written.

    Parameters
    ----------
    tests : list of {"t", "wilcoxon", "sign", "randomization", "bootstrap"}
    sizes : list of int, optional
        Topic-set sizes (>= 2); default a quarter, half and all of the world's topics.
    repeats : int
        Topic subsets per size (one when the size is all the topics).
    alpha : float
    B : int
        Sign vectors (randomisation) and bootstrap samples per size.
    null_tolerance : float
        Largest difference of latent effects between the systems of a null pair, >= 0.
    sign_tolerance : float
        Differences within it are ties for the sign test (0.01 in Urbano, Lima & Hanjalic).
    bootstrap : {"studentized", "mean"}
        Sakai's studentised bootstrap test, or the paper's test of the mean difference.

    On a score-level world of pairs (``design = "pairs"``) only the world's pairs are tested,
    each on all its topics and on random subsets of the smaller sizes.
    """

    tests: tuple = ("t", "wilcoxon", "sign", "randomization", "bootstrap")
    sizes: tuple | None = None
    repeats: int = 20
    alpha: float = 0.05
    B: int = 1000
    null_tolerance: float = 0.0
    sign_tolerance: float = 0.0
    bootstrap: str = "studentized"
    kind: ClassVar[str] = "error_rates"
    resampled: ClassVar[bool] = False  # see the docstring: replicates carry its uncertainty

    def others(self):
        return tuple(self.tests)

    def _validate(self):
        from metaeval._validation import check_real
        from metaeval.stats.paired import TESTS

        _check_values("tests", self.tests, lambda name, v: check_choice(name, v, TESTS))
        if not self.tests:
            raise ValueError(f"tests must name at least one of {', '.join(TESTS)}")
        if self.sizes is not None:
            _check_values("sizes", self.sizes, lambda name, v: check_int(name, v, min=2))
            if not self.sizes:
                raise ValueError("sizes must not be empty")
        check_int("repeats", self.repeats, min=1)
        check_alpha(self.alpha)
        check_int("B", self.B, min=1)
        check_real("null_tolerance", self.null_tolerance, min=0.0)
        check_real("sign_tolerance", self.sign_tolerance, min=0.0)
        from metaeval.stats.error_rates import BOOTSTRAPS

        check_choice("bootstrap", self.bootstrap, BOOTSTRAPS)

    def produces(self):
        return (
            "type1_rate",
            "type2_rate",
            "type3_rate",
            "power",
            "n_null",
            "n_different",
            "n_type1",
            "n_type2",
            "n_type3",
        )

    def _sizes(self, n_topics: int) -> tuple[int, ...]:
        if self.sizes is None:
            return tuple(sorted({max(2, n_topics // 4), max(2, n_topics // 2), n_topics}))
        return tuple(sorted(n for n in self.sizes if n <= n_topics))

    def compute(self, ctx, measures):
        from metaeval.stats.error_rates import error_rates

        effect = ctx.system_effect
        sizes = self._sizes(ctx.n_topics)
        if effect is None or not sizes:
            return {"results": rows([])}
        out = []
        for m in measures:
            res = error_rates(
                ctx.scores(m),
                effect,
                sizes=sizes,
                repeats=self.repeats,
                tests=self.tests,
                alpha=self.alpha,
                null_tolerance=self.null_tolerance,
                B=self.B,
                pairs=ctx.world.pairs,
                sign_tolerance=self.sign_tolerance,
                bootstrap=self.bootstrap,
                # one stream per world replicate (and criterion): every measure and level
                # sees the same subsets and resamples
                rng=ctx.stream("subsets", "error_rates"),
            )
            for r in res.to_frame().itertuples(index=False):
                x = float(r.n_topics)
                for stat in self.produces():
                    value = float(getattr(r, stat))
                    if np.isfinite(value):
                        out.append((m, r.test, stat, x, value))
        return {"results": rows(out)}


@register_criterion
@dataclass(frozen=True, kw_only=True)
class Reliability(Criterion):
    r"""The reliability of the collection by generalizability theory (Brennan 2001; Bodoff &
    Li 2007; Urbano, Marrero & Martin 2013), by :mod:`metaeval.stats.gtheory`.

    The G-study splits the variance of the measure's (systems x topics) scores into system,
    topic and system x topic (with error) components, :math:`\sigma^2(s), \sigma^2(t),
    \sigma^2(st,e)` (negative estimates set to 0); the D-study projects them onto
    :math:`n'` topics:

    .. math::

        E\rho^2(n') = \frac{\sigma^2(s)}{\sigma^2(s) + \sigma^2(st,e)/n'}, \qquad
        \Phi(n') = \frac{\sigma^2(s)}{\sigma^2(s) + (\sigma^2(t) + \sigma^2(st,e))/n'},

    the stability of the ranking of the systems and of their absolute scores; and the topics
    needed for :math:`E\rho^2` (or :math:`\Phi`) to reach a target :math:`\pi`,
    :math:`\lceil \pi\,\sigma^2(st,e) / ((1-\pi)\,\sigma^2(s)) \rceil` (with
    :math:`\sigma^2(t) + \sigma^2(st,e)` for :math:`\Phi`).

    It is recomputed on the study's topic resamples, which give every statistic its interval
    (the values depend on the topics sampled; a resample costs a millisecond or two).

    Statistics: ``var_system``, ``var_topic``, ``var_residual`` (the components); ``erho2``
    and ``phi`` at the topics the world has (``x`` empty); ``erho2_at`` and ``phi_at`` at each
    of ``n_topics`` (``x`` = n'); ``topics_erho2`` and ``topics_phi`` for each of ``targets``
    (``x`` = the target; infinite, so without a value, when the systems do not differ at all).

    Parameters
    ----------
    n_topics : list of int
        Numbers of topics n' of the D-study (>= 1).
    targets : list of float
        Targets of :math:`E\rho^2` and :math:`\Phi`, in (0, 1).
    """

    n_topics: tuple = (25, 50, 100)
    targets: tuple = (0.95,)
    kind: ClassVar[str] = "reliability"
    ranges: ClassVar[dict] = {
        **dict.fromkeys(("erho2", "phi", "erho2_at", "phi_at"), (0.0, 1.0)),
        **dict.fromkeys(
            ("var_system", "var_topic", "var_residual", "topics_erho2", "topics_phi"),
            (0.0, np.inf),
        ),
    }

    def _validate(self):
        from metaeval._validation import check_probability

        _check_values("n_topics", self.n_topics, lambda name, v: check_int(name, v, min=1))
        _check_values(
            "targets",
            self.targets,
            lambda name, v: check_probability(name, v, open_low=True, open_high=True),
        )

    def produces(self):
        out = ("var_system", "var_topic", "var_residual", "erho2", "phi")
        if self.n_topics:
            out += ("erho2_at", "phi_at")
        if self.targets:
            out += ("topics_erho2", "topics_phi")
        return out

    def compute(self, ctx, measures):
        from metaeval.stats.gtheory import d_study, g_study, topics_needed

        out = []
        for m in measures:
            # Only point estimates are used: the intervals the G- and D-study also compute
            # divide by vanishing quantiles when a component is near 0, which is no news here.
            with np.errstate(divide="ignore", invalid="ignore"):
                g = g_study(ctx.scores(m))
                # the topics seen first, then the D-study's: one call for all
                d = d_study(g, [g.n_topics, *self.n_topics])
                need = topics_needed(g, list(self.targets)) if self.targets else None
            out += [
                (m, "", "var_system", np.nan, g.var_s),
                (m, "", "var_topic", np.nan, g.var_t),
                (m, "", "var_residual", np.nan, g.var_st),
                (m, "", "erho2", np.nan, d.erho2[0]),
                (m, "", "phi", np.nan, d.phi[0]),
            ]
            for n, erho2, phi in zip(self.n_topics, d.erho2[1:], d.phi[1:]):
                out += [(m, "", "erho2_at", float(n), erho2), (m, "", "phi_at", float(n), phi)]
            if need is not None:
                for target, erho2, phi in zip(self.targets, need.erho2, need.phi):
                    out += [
                        (m, "", "topics_erho2", float(target), erho2),
                        (m, "", "topics_phi", float(target), phi),
                    ]
        return {"results": rows(out)}


@register_criterion
@dataclass(frozen=True, kw_only=True)
class TopicSetSize(Criterion):
    r"""Topic set size design (Sakai 2016), by :mod:`metaeval.stats.topic_set_size`: how many
    topics a collection like this one needs, from the residual variance :math:`V_E` of the
    two-way ANOVA (systems x topics) of the measure's scores (:mod:`metaeval.stats.anova`).

    * a paired t-test with power ``power`` to detect a difference ``min_diff`` between two
      systems at level ``alpha`` (:math:`\sigma_d^2 = 2V_E`; noncentral t);
    * a one-way ANOVA over the world's m systems with that power when the best and worst are
      ``min_diff`` apart (:math:`\sigma^2 = V_E`; noncentral F);
    * a :math:`100(1-\alpha)\%` interval of a paired difference no wider than ``ci_width`` in
      expectation;
    * and the power the world's own number of topics gives both tests.

    It is recomputed on the study's topic resamples (:math:`V_E`, hence every design, depends
    on the topics sampled), which give the intervals; a resample costs a few milliseconds.

    Statistics: ``residual_variance`` (:math:`V_E`); ``topics_paired_t``, ``topics_anova``,
    ``power_paired_t``, ``power_anova`` (``x`` = the difference ``min_diff``); ``topics_ci``
    (``x`` = the width). A requirement that would need more than a billion topics is written
    as infinite (no value); scores with no residual variance give none of the designs.

    Parameters
    ----------
    alpha : float
        Significance level (two-sided), and 1 - the interval's confidence.
    power : float
        The power required, 1 - beta, above ``alpha``.
    min_diff : list of float
        Differences to detect, > 0, in the measure's units.
    ci_width : list of float
        Widths of the interval, > 0.
    """

    alpha: float = 0.05
    power: float = 0.80
    min_diff: tuple = (0.05, 0.10)
    ci_width: tuple = (0.10,)
    kind: ClassVar[str] = "topic_set_size"
    ranges: ClassVar[dict] = {
        **dict.fromkeys(("power_paired_t", "power_anova"), (0.0, 1.0)),
        **dict.fromkeys(
            ("residual_variance", "topics_paired_t", "topics_anova", "topics_ci"), (0.0, np.inf)
        ),
    }

    def _validate(self):
        from metaeval._validation import check_probability, check_real

        check_alpha(self.alpha)
        check_probability("power", self.power, open_low=True, open_high=True)
        if self.power <= self.alpha:
            raise ValueError(
                f"power must be above alpha={self.alpha:g} (a test has that power against no "
                f"difference at all), got {self.power!r}"
            )

        def positive(name, v):
            check_real(name, v, min=0.0, min_open=True)

        _check_values("min_diff", self.min_diff, positive)
        _check_values("ci_width", self.ci_width, positive)

    def produces(self):
        out = ("residual_variance",)
        if self.min_diff:
            out += ("topics_paired_t", "topics_anova", "power_paired_t", "power_anova")
        if self.ci_width:
            out += ("topics_ci",)
        return out

    def compute(self, ctx, measures):
        from metaeval.stats import topic_set_size as tss

        beta = 1.0 - self.power
        out = []
        for m in measures:
            scores = ctx.scores(m)
            variance = tss.residual_variance(scores)
            out.append((m, "", "residual_variance", np.nan, variance.residual))
            if not variance.residual > 0:
                continue  # additive scores: no noise to design against
            S, n = scores.shape

            def needed(design, *args, **kwargs) -> float:
                try:
                    return float(design(*args, **kwargs).n_topics)
                except ValueError:  # more topics than any design searches
                    return np.inf

            a = self.alpha
            for d in self.min_diff:
                designs = {
                    "topics_paired_t": needed(
                        tss.topic_set_size_paired_t, d, variance, alpha=a, beta=beta
                    ),
                    "topics_anova": needed(
                        tss.topic_set_size_anova, d, variance, S, alpha=a, beta=beta
                    ),
                    "power_paired_t": tss.power_paired_t(n, d, variance, alpha=a),
                    "power_anova": tss.power_anova(n, d, variance, S, alpha=a),
                }
                out += [(m, "", stat, float(d), v) for stat, v in designs.items()]
            for w in self.ci_width:
                width = needed(tss.topic_set_size_ci, w, variance, alpha=a)
                out.append((m, "", "topics_ci", float(w), width))
        return {"results": rows(out)}


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
    "RESAMPLES",
    "rows",
    "resample_rows",
    "criterion_levels",
    "Robustness",
    "DiscriminativePower",
    "SignificanceChanges",
    "Stability",
    "Agreement",
    "Informativeness",
    "Swap",
    "Collection",
    "ErrorRates",
    "Reliability",
    "TopicSetSize",
]
