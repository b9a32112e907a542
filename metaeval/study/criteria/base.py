"""The base of study criteria: :class:`Criterion`, its registry, the tidy rows it returns,
and the constraints its kinds share.

The criterion kinds are in :mod:`~metaeval.study.criteria.rankings` (how a measure ranks the
systems: robustness, stability, agreement, swap, informativeness),
:mod:`~metaeval.study.criteria.significance` (significance tests: discriminative power,
significance changes, error rates) and :mod:`~metaeval.study.criteria.collection` (the
collection itself: its statistics, reliability, topic-set size).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from metaeval._constraints import (
    Constraint,
    Interval,
    OneOf,
    Optional,
    Sequence,
    check_declared,
    validate_params,
)
from metaeval._registry import Registry
from metaeval._validation import ParamError

RESULT_COLUMNS = ["measure", "other", "statistic", "x", "value"]
#: The table of every results row's values on the study's topic resamples (``n_topics``, and
#: ``values``: one float32 per resample), written beside ``results`` by every resampled
#: criterion.
RESAMPLES = "resamples"

_REGISTRY: Registry[type[Criterion]] = Registry("criterion")


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
    _constraints : dict of str to Constraint
        What each parameter may be (:mod:`metaeval._constraints`), checked once when the
        criterion is made, before :meth:`_validate` checks what a constraint cannot say
        (relations between parameters). Either raises
        :class:`~metaeval._validation.ParamError` naming the parameter.
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
    _constraints: ClassVar[dict[str, Constraint]] = {}

    @classmethod
    def range_of(cls, statistic: str) -> tuple[float, float]:
        """The values ``statistic`` can take (unbounded when the criterion does not say)."""
        return cls.ranges.get(statistic, (-np.inf, np.inf))

    def __post_init__(self):
        try:
            validate_params(self, self._constraints)
            self._validate()
        except ParamError as err:
            if err.owner is None:
                err.owner = type(self)
            raise

    def _validate(self) -> None:
        """Check what the declared constraints cannot (relations between parameters); raise
        :class:`~metaeval._validation.ParamError` naming the parameter."""

    def idle_at_full(self, world_kinds: set[str]) -> str | None:
        """Why the criterion would compute nothing under full judgments on worlds of these
        kinds (``trec``, ``simulator``, ``scores``), or None: a criterion run there alone
        is then refused when the study loads, not left to save empty results."""
        return None

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
        return _REGISTRY.add_class(
            klass, Criterion, "kind", "register_criterion", check=_check_constraints
        )

    return wrap if cls is None else wrap(cls)


def _check_constraints(klass: type[Criterion]) -> None:
    check_declared(klass, klass._constraints, dataclasses.fields(klass))


def registered_criteria() -> dict[str, type[Criterion]]:
    """Every registered criterion class by kind."""
    return _REGISTRY.as_dict()


def make_criterion(kind: str, **params) -> Criterion:
    """A criterion by kind, e.g. ``make_criterion("discriminative_power", B=1000)`` (lists
    become tuples)."""
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
    return _REGISTRY.construct(kind, params)


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


# ------------------------------------------------------------------- shared constraints
#: A significance level.
ALPHA = Interval(Real, 0, 1, closed="neither")
#: How system pairs are tested (docs/methods.md section 1).
PAIR_TEST = OneOf("bootstrap", "tukey")
#: Resamples of a pair test; None: the test's own default.
RESAMPLES_B = Optional(Interval(Integral, 1))
#: Rank correlations to compute (repeats allowed, as they always were).
CORRELATIONS = Sequence(OneOf(lazy="metaeval.meta.robustness:CORRELATIONS"), unique=False)


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
    "ALPHA",
    "CORRELATIONS",
    "PAIR_TEST",
    "RESAMPLES",
    "RESAMPLES_B",
    "RESULT_COLUMNS",
    "Criterion",
    "criterion_levels",
    "make_criterion",
    "register_criterion",
    "registered_criteria",
    "resample_rows",
    "rows",
]
