"""Verdicts on published claims, from a study's saved results.

A claim in a study file names what it says and how to check it::

    [[claims]]
    id = "SK3"
    text = "With 10% of the judgments, AP' keeps more discriminative power than AP"
    source = "Sakai & Kando 2008, Table 4"
    check = { kind = "order", criterion = "discriminative_power", statistic = "power",
              level = "10", greater = ["AP'"], than = ["AP"] }

Check kinds (each is judged on every world):

``order``
    ``greater`` and ``than`` (a measure or a group; or ``less`` and ``than``) on ``statistic``
    of ``criterion`` at ``level`` (default ``"full"``; ``levels = [...]``: at every one of
    them). Every pair is a part of the claim; ``mode = "mean"`` compares the groups' means
    instead; ``tolerance``: the difference must exceed it. ``like`` and ``than`` with
    ``within = w``: the measures behave alike, their difference within +-w (an equivalence).
``threshold``
    ``measures`` above ``above`` (or below ``below``, or between the two when both are
    given: an equivalence band); each measure is a part.
``trend``
    ``measures`` ``direction = "falls" | "rises" | "flat"`` from level ``from`` to level
    ``to`` by more than ``tolerance`` (within it, for flat: an equivalence). Without ``from``
    the statistic is itself a change (as ``mean_drift``).
``analytic``
    computed on constructed lists while the study runs (see :mod:`metaeval.study.analytic`):
    exact, the saved outcome is read here.

What is compared can be narrowed or transformed, in every kind but ``analytic``:

``against``
    The other side of a pairwise statistic: the reference ranking of a robustness statistic
    (``"full"``, ``"truth"``), or the other measure of an agreement; a list checks every one
    (``against_mode = "mean"``: the statistic averaged over the list instead, a measure's
    own entry left out: "the measure least like the others").
``degrader``, ``x``
    The degrader of ``level`` (needed when several have it); ``x``: the topic-set size of a
    stability statistic, the relevance threshold of an informativeness one (a list: the
    statistic averaged over them, e.g. the mean RMS error over two thresholds).
``absolute``
    Compare sizes: the absolute value of the statistic (a drift of -0.2 is larger than one
    of +0.05).
``per``
    Divide by another statistic of the same cell (``false_alarms`` per ``n_significant``).
``relative_to``
    Divide by the same statistic at another level (``power`` at 10% relative to ``"full"``:
    the share of its discriminative power a measure keeps).
``change_from``
    Subtract the same statistic of another criterion (tau with AP on a topic subset minus tau
    with AP on all topics: how far the subset moves it).

**The verdict rule** is in :mod:`~metaeval.report.claims.verdict`: a part holds when its
interval lies on the claimed side, does not hold when it lies on the other side (after
Holm's correction over the parts), and is inconclusive otherwise; a claim holds when every
part holds.

One class per check kind validates its table when the study file is read and judges itself
when a report is drawn: :class:`OrderCheck`, :class:`ThresholdCheck`, :class:`TrendCheck`
(judged from the saved results on every world) and :class:`AnalyticCheck`. A plugin can add a
kind with :func:`register_check`. The modules: :mod:`~metaeval.report.claims.base` (the base
classes, the names a check may use, the registry), one module per kind,
:mod:`~metaeval.report.claims.values` (the compared values with the modifiers applied),
:mod:`~metaeval.report.claims.verdict` and :mod:`~metaeval.report.claims.judging`
(:func:`judge_claims`).
"""

from metaeval.report.claims.analytic import AnalyticCheck
from metaeval.report.claims.base import (
    CHECKS,
    MODIFIERS,
    ClaimCheck,
    ResultsCheck,
    StudyNames,
    check_class,
    from_dict,
    read_check,
    register_check,
)
from metaeval.report.claims.judging import COLUMNS, PART_COLUMNS, judge_claims, verdicts
from metaeval.report.claims.order import OrderCheck
from metaeval.report.claims.threshold import ThresholdCheck
from metaeval.report.claims.trend import TrendCheck
from metaeval.report.claims.verdict import FAILS, HOLDS, UNSURE, Part, basis, judge

__all__ = [
    "verdicts",
    "judge_claims",
    "judge",
    "basis",
    "Part",
    "HOLDS",
    "FAILS",
    "UNSURE",
    "COLUMNS",
    "PART_COLUMNS",
    "CHECKS",
    "MODIFIERS",
    "ClaimCheck",
    "ResultsCheck",
    "OrderCheck",
    "ThresholdCheck",
    "TrendCheck",
    "AnalyticCheck",
    "StudyNames",
    "check_class",
    "from_dict",
    "read_check",
    "register_check",
]
