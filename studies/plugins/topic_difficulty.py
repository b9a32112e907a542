"""A study criterion: which topics decide a measure's ranking of the systems, the easy or the hard?

Used by ``studies/textbook-map-gmap-mrr.toml`` for the textbook's claim that MAP is dominated
by easy topics and gMAP by hard ones. Topics are ordered by how easy they are for the measure
(the mean over systems of its per-topic values under the full judgments, ties broken by
topic order); the easiest ``fraction`` of them are the *easy* set, the hardest ``fraction``
the *hard* set. The measure ranks the systems on all topics, on the easy set and on the hard
set (each with its own aggregate: the arithmetic mean for MAP, the geometric mean for gMAP).

Statistics
----------
``tau_easy``, ``tau_hard``
    Kendall's tau_b between the ranking on all topics and the ranking on the easy (hard) set:
    how much those topics alone decide the ranking.
``easy_minus_hard``
    ``tau_easy - tau_hard``: above 0, the easy topics dominate; below 0, the hard ones do.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real
from typing import ClassVar

import numpy as np

from metaeval._constraints import Interval
from metaeval.study.criteria import Criterion, register_criterion, rows


@register_criterion
@dataclass(frozen=True, kw_only=True)
class TopicDifficulty(Criterion):
    """Agreement of a measure's ranking on all topics with its ranking on the easiest and on
    the hardest topics (see the module docstring)."""

    fraction: float = 0.5
    kind: ClassVar[str] = "topic_difficulty"
    at_degraded: ClassVar[bool] = False
    # checked by the Criterion base class, which names the parameter in a study file's error
    _constraints: ClassVar[dict] = {"fraction": Interval(Real, 0, 0.5, closed="right")}

    def compute(self, ctx, measures):
        from metaeval.meta.robustness import rank_correlations

        out = []
        for m in measures:
            scores = ctx.scores(m)  # (S, T)
            ease = np.nanmean(scores, axis=0)
            k = max(2, int(round(self.fraction * scores.shape[1])))
            order = np.argsort(-ease, kind="stable")  # easiest first
            easy, hard = order[:k], order[-k:]
            everything = ctx.means(scores, m)
            taus = {
                name: rank_correlations(everything, ctx.means(scores[:, idx], m), ("tau_b",))[
                    "tau_b"
                ]
                for name, idx in (("tau_easy", easy), ("tau_hard", hard))
            }
            out += [(m, "", name, np.nan, float(v)) for name, v in taus.items()]
            out.append((m, "", "easy_minus_hard", np.nan, taus["tau_easy"] - taus["tau_hard"]))
        return {"results": rows(out)}
