"""Criteria on significance tests: how many system pairs a measure separates (discriminative
power), which conclusions change under damaged judgments, and the tests' error rates against a
simulated world's truth."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import pandas as pd

from metaeval._constraints import Interval, OneOf, Optional, Sequence
from metaeval.study.criteria.base import (
    ALPHA,
    PAIR_TEST,
    RESAMPLES_B,
    Criterion,
    register_criterion,
    rows,
)


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
    _constraints: ClassVar[dict] = {"method": PAIR_TEST, "B": RESAMPLES_B, "alpha": ALPHA}

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
    _constraints: ClassVar[dict] = {"method": PAIR_TEST, "B": RESAMPLES_B, "alpha": ALPHA}

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
    _constraints: ClassVar[dict] = {
        "tests": Sequence(OneOf(lazy="metaeval.stats.paired:TESTS")),
        "sizes": Optional(Sequence(Interval(Integral, 2))),
        "repeats": Interval(Integral, 1),
        "alpha": ALPHA,
        "B": Interval(Integral, 1),
        "null_tolerance": Interval(Real, 0),
        "sign_tolerance": Interval(Real, 0),
        "bootstrap": OneOf(lazy="metaeval.stats.error_rates:BOOTSTRAPS"),
    }

    def others(self):
        return tuple(self.tests)

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

        sizes = self._sizes(ctx.n_topics)
        out = []
        for m in measures:
            effect = ctx.system_effect(m)
            if effect is None or not sizes:
                continue
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


__all__ = ["DiscriminativePower", "ErrorRates", "SignificanceChanges"]
