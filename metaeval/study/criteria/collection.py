"""Criteria on the collection itself: what it looks like (judged and relevant documents,
spread of scores), how reliable its topics make it (generalizability theory), and how many
topics one like it needs (topic-set size design)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from metaeval._constraints import Interval, Sequence
from metaeval._validation import ParamError
from metaeval.study.criteria.base import (
    ALPHA,
    Criterion,
    register_criterion,
    resample_rows,
    rows,
)


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
    _constraints: ClassVar[dict] = {"n_splits": Interval(Integral, 1)}

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


@register_criterion
@dataclass(frozen=True, kw_only=True)
class BoundWidth(Criterion):
    """How much the unjudged documents leave each measure open: the mean over runs and topics
    of M_hi - M_lo, the measure's highest and lowest value over every grade the unknown
    documents could have (docs/methods.md §6.7), at each level of judgment damage. 0 when
    every retrieved document is judged and the qrels hold no row without a judgment.

    Statistic: ``width``. A measure without such bounds is refused in one line."""

    kind: ClassVar[str] = "bound_width"
    needs_judgments: ClassVar[bool] = True
    default_levels: ClassVar[str] = "all"
    ranges: ClassVar[dict] = {"width": (0.0, np.inf)}

    def produces(self):
        return ("width",)

    def _widths(self, ctx, label: str) -> np.ndarray:
        """(T,) the mean width over the runs of every topic of the world, once per level."""
        key = ("bound_width", ctx.spec.measure(label).name)
        if key not in ctx.level_cache:
            measure = ctx.measure(label)
            lo = dataclasses.replace(measure, bound="lo").compute(ctx.tensor)
            hi = dataclasses.replace(measure, bound="hi").compute(ctx.tensor)
            width = hi - lo
            if ctx.spec.missing == "skip":  # a topic a run did not answer has no value
                width = np.where(ctx.tensor.answered, width, np.nan)
            ctx.level_cache[key] = np.nanmean(width, axis=0)
        return ctx.level_cache[key]

    def compute(self, ctx, measures):
        weights = ctx.topic_weights()
        out = []
        for m in measures:
            per_topic = self._widths(ctx, m)
            out.append((m, "", "width", np.nan, float(np.average(per_topic, weights=weights))))
        return {"results": rows(out)}

    def compute_resamples(self, ctx, measures):
        positions = ctx.resample_positions()
        return resample_rows(
            [
                (m, "", "width", np.nan, [float(self._widths(ctx, m)[p].mean()) for p in positions])
                for m in measures
            ]
        )


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
    # an empty list asks for no D-study (no targets): produces() then leaves those out
    _constraints: ClassVar[dict] = {
        "n_topics": Sequence(Interval(Integral, 1), non_empty=False),
        "targets": Sequence(Interval(Real, 0, 1, closed="neither"), non_empty=False),
    }

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
    _constraints: ClassVar[dict] = {
        "alpha": ALPHA,
        "power": Interval(Real, 0, 1, closed="neither"),
        "min_diff": Sequence(Interval(Real, 0, None, closed="neither"), non_empty=False),
        "ci_width": Sequence(Interval(Real, 0, None, closed="neither"), non_empty=False),
    }

    def _validate(self):
        # a relation between two parameters, which no constraint of one can say
        if self.power <= self.alpha:
            raise ParamError(
                "power",
                f"must be above alpha={self.alpha:g} (a test has that power against no "
                f"difference at all), got {self.power!r}",
            )

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


__all__ = ["Collection", "Reliability", "TopicSetSize"]
