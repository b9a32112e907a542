"""A report card for a measure: how it ranks among baselines on every criterion.

:func:`card_study` writes the study file of the built-in battery (robustness under stratified
sampling and under shallower pools, discriminative power, topic-subset stability,
informativeness where the measure has a max-ent expectation, agreement with the baselines) on
a simulated world or on a TREC world taken from a study file; :func:`card_table` ranks the new
measure among the baselines on each criterion from the saved results.

Every value comes with its interval for the expected value (the study's paired bootstrap over
topics, trials and replicates, :mod:`metaeval.report.inference`), and a rank is a range: a
baseline is firmly ahead of the measure when the interval of their *paired* difference lies
wholly on its better side, firmly behind when wholly on the worse side, and the measure's rank
runs from 1 + (firmly ahead) to n - (firmly behind), ``1-3 of 6``. Equal estimates, or ones
apart by rounding only (a tau of 0.9999999999999999), never order two measures. A criterion
where most measures reach the statistic's bound (tau 1, power 1, RMS 0) is noted as one that
cannot tell them apart. Worlds are never averaged: a study of several has a row per world.

The card is a package along its seams: :mod:`~metaeval.report.card.battery` (the criteria
and the study file that computes them), :mod:`~metaeval.report.card.ranking` (values,
intervals and rank ranges from the saved results), :mod:`~metaeval.report.card.page` (the
table, the terminal lines and the card page) and :mod:`~metaeval.report.card.quickstart`.
"""

from metaeval.report.card.battery import BATTERY, BOUNDS, NOISE, SCALES, card_study
from metaeval.report.card.page import RANKS_MEAN, card_display, card_lines, shown, write_card
from metaeval.report.card.quickstart import QUICKSTART, quickstart_basis, quickstart_summary
from metaeval.report.card.ranking import (
    TABLE_COLUMNS,
    VALUE_COLUMNS,
    agreement_table,
    card_table,
    card_values,
    rank_text,
)

__all__ = [
    "card_study",
    "card_table",
    "card_values",
    "card_display",
    "card_lines",
    "agreement_table",
    "write_card",
    "quickstart_summary",
    "quickstart_basis",
    "rank_text",
    "shown",
    "BATTERY",
    "BOUNDS",
    "NOISE",
    "SCALES",
    "RANKS_MEAN",
    "QUICKSTART",
    "TABLE_COLUMNS",
    "VALUE_COLUMNS",
]
