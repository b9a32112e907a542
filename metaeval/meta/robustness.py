r"""Robustness of measures to damaged judgments (docs/methods.md §9).

A measure is robust when the ranking of systems it gives under damaged judgments (a shallow
pool, a sample of the qrels, fewer contributing teams, noisy assessors) stays close to the
ranking it gives under the full judgments (Buckley & Voorhees 2004; Sakai & Kando 2008, Figs.
7-8; Ferrante et al. 2014, Figs. 1-2). In a simulated world it can also be compared with the
*true* ranking, which no real collection gives: a measure can be stable under damage yet wrong.

For measure M, degrader D, level l and trial i:

* **rank correlation**: :math:`\tau_b(\mathrm{rank}_M(\mathrm{full}), \mathrm{rank}_M(D, l, i))`
  and :math:`\tau_{AP}` with the full ranking as the truth argument;
* **mean drift**: the mean over systems of :math:`\bar M(D, l, i) - \bar M(\mathrm{full})`
  (Sakai & Kando 2008, Figs. 3-4): how far the values themselves move;
* **significance changes** (Sakai & Kando 2008, Table 5): among the pairs significant under
  (D, l, i), those not significant under full judgments (*false alarms*) and those significant
  the other way (*reversals*); among the pairs significant under full judgments, those lost
  (*misses*); with the same bootstrap samples at every level, so the counts differ only
  through the judgments.

References
----------
.. [BV04] C. Buckley and E. M. Voorhees (2004). Retrieval evaluation with incomplete
   information. SIGIR 2004, 25-32.
.. [SK08] T. Sakai and N. Kando (2008). On information retrieval metrics designed for
   evaluation with incomplete relevance assessments. Information Retrieval 11(5), 447-470.
.. [FFM14] M. Ferrante, N. Ferro and M. Maistro (2014). Rethinking how to extend average
   precision to graded relevance. CLEF 2014.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from metaeval._summary import interval_summary
from metaeval._validation import as_generator, check_choice
from metaeval.aggregate import parse_aggregate
from metaeval.meta.discrimination import DiscriminativePowerResult, discriminative_power
from metaeval.meta.inconsistency import significance_inconsistency
from metaeval.meta.rankcorr import kendall_tau, tau_ap

#: Rank correlations a robustness criterion can report.
CORRELATIONS = ("tau_b", "tau_a", "tau_ap")


def rank_correlations(
    reference, estimate, statistics: Sequence[str] = ("tau_b", "tau_ap")
) -> dict[str, float | np.ndarray]:
    """Rank correlations between a reference ranking of systems and estimated ones.

    Parameters
    ----------
    reference : array_like, shape (S,)
        System scores defining the reference ranking (full judgments, or the truth). It is the
        *truth* argument of tau_AP (errors at the top of the estimate weigh more).
    estimate : array_like, shape (S,) or (k, S)
        System scores of the same systems in the same order, one row per estimate.
    statistics : sequence of {"tau_b", "tau_a", "tau_ap"}

    Returns
    -------
    dict
        Statistic name -> a float (1-D estimate) or an array of k values.
    """
    out: dict[str, float | np.ndarray] = {}
    for stat in statistics:
        check_choice("statistics", stat, CORRELATIONS)
        if stat == "tau_ap":
            out[stat] = tau_ap(reference, estimate)
        else:
            out[stat] = kendall_tau(reference, estimate, variant=stat[-1])
    return out


def mean_drift(reference, estimate) -> float | np.ndarray:
    """Mean over systems of ``estimate - reference`` (system scores, last axis = systems)."""
    ref = np.asarray(reference, dtype=float)
    est = np.asarray(estimate, dtype=float)
    if est.shape[-1] != ref.shape[-1]:
        raise ValueError(f"reference has {ref.shape[-1]} systems, estimate {est.shape[-1]}")
    drift = (est - ref).mean(axis=-1)
    return float(drift) if np.ndim(drift) == 0 else drift


def significance_changes(full, reduced, **kwargs) -> dict[str, float]:
    """Counts of changed significance conclusions between full and reduced judgments.

    ``full`` is the full-judgment per-topic scores or, better, their
    :class:`~metaeval.meta.DiscriminativePowerResult` (computed once and reused, with its
    resamples); ``reduced`` the per-topic scores under damaged judgments. Keyword arguments go
    to :func:`~metaeval.meta.significance_inconsistency`.

    Returns
    -------
    dict
        ``n_significant`` (under reduced judgments), ``false_alarms`` (significant under
        reduced, not under full), ``reversals`` (significant both ways, opposite directions),
        ``misses`` (significant under full, not under reduced), ``n_pairs`` and ``power``
        (discriminative power under the reduced judgments).
    """
    res = significance_inconsistency(full, reduced, **kwargs)
    return {
        "n_significant": res.n_significant_reduced,
        "false_alarms": res.n_absent,
        "reversals": res.n_reversed,
        "misses": res.n_missed,
        "n_pairs": res.n_pairs,
        "power": res.reduced.power,
    }


@dataclass(frozen=True, eq=False)
class RobustnessResult:
    """Result of :func:`robustness`: one row per level, trial, measure, reference and statistic.

    Attributes
    ----------
    frame : pandas.DataFrame
        Columns ``method, level, trial, measure, against, statistic, value``. ``against`` is
        ``"full"`` or ``"truth"`` for rank correlations, ``"full"`` for ``mean_drift`` and the
        significance counts, ``""`` for ``power`` (discriminative power at that level).
    full_power : dict
        Measure name -> discriminative power under the full judgments (when computed).
    """

    frame: pd.DataFrame
    full_power: dict = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        """The tidy rows (a copy)."""
        return self.frame.copy()

    def summary(self) -> pd.DataFrame:
        """Mean and the 2.5 / 97.5 percentiles over trials, per level, measure and statistic."""
        keys = ["method", "level", "measure", "against", "statistic"]
        return interval_summary(self.frame, keys, count="trials")


def robustness(
    tensor,
    measures,
    judgments: Iterable,
    *,
    statistics: Sequence[str] = ("tau_b", "tau_ap"),
    truth=None,
    aggregate: str = "mean",
    significance: bool = True,
    method: str = "bootstrap",
    B: int | None = None,
    alpha: float = 0.05,
    rng=None,
) -> RobustnessResult:
    """Robustness of measures under a series of damaged judgment sets.

    Parameters
    ----------
    tensor : EvalTensor
        The runs under the full judgments.
    measures : str, Measure or list of them
    judgments : iterable of simulators.Judgments
        Damaged judgment sets, e.g. ``StratifiedSampling(rates=(50, 10)).generate(tensor,
        trials=10, rng=1)``; each has ``method``, ``level``, ``trial`` and ``apply(tensor)``.
    statistics : sequence of {"tau_b", "tau_a", "tau_ap"}
        Rank correlations against the full-judgment ranking (and the truth).
    truth : EvalTensor, optional
        The runs under complete true judgments (a simulated world's ``truth_tensor()``): adds
        correlations against the true ranking of each measure.
    aggregate : str
        How per-topic scores become system scores (``mean``, ``gmean``, ...).
    significance : bool
        Also compute discriminative power at every level and the significance changes against
        the full judgments, with one set of resamples shared by every measure and level.
    method, B, alpha : as :func:`~metaeval.meta.discriminative_power`
    rng : None, int, SeedSequence or Generator
        Draws the shared resamples.

    Returns
    -------
    RobustnessResult
    """
    from metaeval.evaluation import as_measures
    from metaeval.meta import resamples as draw_resamples

    agg = parse_aggregate(aggregate)
    measures = as_measures(measures)
    gen = as_generator(rng)
    full = {str(m): m.compute(tensor) for m in measures}
    full_means = {k: agg(v, axis=1) for k, v in full.items()}
    true_means = (
        {str(m): agg(m.compute(truth), axis=1) for m in measures} if truth is not None else {}
    )
    shared = full_dp = None
    if significance:
        shared = draw_resamples(
            method, n_topics=tensor.n_topics, n_systems=tensor.n_runs, B=B, rng=gen
        )
        full_dp = {
            k: discriminative_power(v, method=method, alpha=alpha, resamples=shared)
            for k, v in full.items()
        }
    rows: list[tuple] = []
    for j in judgments:
        reduced_tensor = j.apply(tensor)
        for m in measures:
            name = str(m)
            scores = m.compute(reduced_tensor)
            means = agg(scores, axis=1)
            key = (j.method, j.level, j.trial, name)
            for against, ref in (("full", full_means[name]), ("truth", true_means.get(name))):
                if ref is None:
                    continue
                for stat, value in rank_correlations(ref, means, statistics).items():
                    rows.append((*key, against, stat, float(value)))
            rows.append((*key, "full", "mean_drift", mean_drift(full_means[name], means)))
            if significance:
                changes = significance_changes(full_dp[name], scores, alpha=alpha)
                rows.append((*key, "", "power", changes.pop("power")))
                changes.pop("n_pairs")
                rows.extend((*key, "full", stat, float(v)) for stat, v in changes.items())
    frame = pd.DataFrame(
        rows, columns=["method", "level", "trial", "measure", "against", "statistic", "value"]
    )
    power = {k: v.power for k, v in (full_dp or {}).items()}
    return RobustnessResult(frame=frame, full_power=power)


__all__ = [
    "CORRELATIONS",
    "rank_correlations",
    "mean_drift",
    "significance_changes",
    "RobustnessResult",
    "robustness",
    "DiscriminativePowerResult",
]
