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
it with :func:`register_criterion` in a plugin file listed under ``plugins`` in the study; its
``_constraints`` (:mod:`metaeval._constraints`) say what each parameter may be, and a bad value
in a study file is then an error naming its key.

The package: :mod:`~metaeval.study.criteria.base` (the base class, its registry, the rows),
:mod:`~metaeval.study.criteria.rankings` (robustness, stability, agreement, informativeness,
swap), :mod:`~metaeval.study.criteria.significance` (discriminative power, significance
changes, error rates) and :mod:`~metaeval.study.criteria.collection` (collection statistics,
reliability, topic-set size).
"""

from metaeval.study.criteria.base import (
    RESAMPLES,
    RESULT_COLUMNS,
    Criterion,
    criterion_levels,
    make_criterion,
    register_criterion,
    registered_criteria,
    resample_rows,
    rows,
)

# the kinds register themselves when imported: every one is known once the package is
from metaeval.study.criteria.collection import Collection, Reliability, TopicSetSize
from metaeval.study.criteria.rankings import (
    Agreement,
    Informativeness,
    Robustness,
    Stability,
    Swap,
)
from metaeval.study.criteria.significance import (
    DiscriminativePower,
    ErrorRates,
    SignificanceChanges,
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
