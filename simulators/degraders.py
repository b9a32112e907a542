"""Judgment degraders: reduced or perturbed judgment sets, damaged the way real ones are.

A degrader takes a judgment set (a :class:`~metaeval.data.Qrels`, or an
:class:`~metaeval.engine.EvalTensor` that carries one) and produces, for each of its levels and
each trial, a :class:`Judgments`: a keep-mask over the qrels rows (for
:meth:`EvalTensor.with_judgments`, the fast path), or new grades (assessor noise, for
:meth:`EvalTensor.with_grades`), and the same as :class:`Qrels` on demand. Degraders never add
judgments: a kept row keeps its document, and no document outside the input qrels appears.

Built-in degraders (``name`` in brackets, for :func:`make_degrader` and the CLI):

- :class:`StratifiedSampling` [``stratified``]: Buckley & Voorhees (SIGIR 2004),
  docs/methods.md §4.1; by relevance or, for graded judgments, by grade.
- :class:`UniformSampling` [``uniform``]: Yilmaz & Aslam (CIKM 2006), docs/methods.md §4.2.
- :class:`PoolDepth` [``pool_depth``]: shallow pools (Zobel SIGIR 1998; Sakai 2008), §4.4.
- :class:`LeaveOneGroupOut` [``leave_one_group_out``]: pool reusability (Zobel 1998).
- :class:`FewerTeams` [``fewer_teams``]: pools from a random subset of teams.
- :class:`AssessorNoise` [``assessor_noise``]: grades perturbed by a confusion matrix.

A user adds one by subclassing :class:`Degrader` as a frozen dataclass and decorating it with
:func:`register_degrader`.

All randomness comes from the keyword-only ``rng`` (None, an int, a SeedSequence or a
Generator; docs/methods.md §0): the same seed gives the same output. :meth:`Degrader.trial`
makes one trial, with every level, from its own ``rng``, so trial k can be drawn from a seed of
its own without drawing trials 0..k-1 (what a study does); :meth:`Degrader.generate` makes
several, drawing them one after another from one generator.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np

from metaeval._constraints import (
    Constraint,
    Interval,
    Level,
    OneOf,
    Optional,
    Sequence,
    check_declared,
    validate_params,
)
from metaeval._registry import Registry
from metaeval._validation import ParamError, as_generator, check_int, shown_ids, whole_as_int
from metaeval.data import Qrels, RunSet
from metaeval.engine import EvalTensor
from metaeval.engine.tensor import UNJUDGED, UNPOOLED
from simulators.pooling import pool_mask

DROPPED = ("unpooled", "unjudged")
ROUNDING = ("trunc", "round")
STRATA = ("relevance", "grade")


#: Percentages of judgments kept (a lone number is one level).
RATES = Sequence(Interval(Real, 0, 100, closed="right"), scalar=(Real,), convert=whole_as_int)
#: Pool depths, numbers of teams: positive integers, none repeated.
POSITIVE_INTS = Sequence(Interval(Integral, 1), scalar=(Integral,), convert=int)
DEPTH = Optional(Interval(Integral, 1))


# ------------------------------------------------------------------------------- results
@dataclass(frozen=True, eq=False)
class Judgments:
    """One degraded judgment set, aligned with the rows of ``source``.

    Attributes
    ----------
    method : str
        Registered name of the degrader.
    level : Any
        The level (rate in percent, depth, group name, number of teams, noise rate).
    trial : int
    keep : ndarray of bool, shape (Q,)
        Which rows of ``source`` stay judged.
    dropped : {"unpooled", "unjudged"}
        What a removed row becomes: absent from the qrels, or pooled but unjudged (grade -1).
    source : Qrels
    grades : ndarray of int8, shape (Q,), optional
        New grades (assessor noise); None when the grades are unchanged.
    """

    method: str
    level: Any
    trial: int
    keep: np.ndarray = field(repr=False)
    dropped: str
    source: Qrels = field(repr=False)
    grades: np.ndarray | None = field(default=None, repr=False)

    def codes(self) -> np.ndarray:
        """Tensor codes of every qrels row: grade, UNJUDGED (-2) or UNPOOLED (-1)."""
        g = self.source.grades if self.grades is None else self.grades
        current = np.where(g >= 0, g, UNJUDGED)
        gone = UNPOOLED if self.dropped == "unpooled" else UNJUDGED
        return np.where(self.keep, current, gone).astype(np.int8)

    def apply(self, tensor: EvalTensor) -> EvalTensor:
        """The tensor under this judgment set (one vectorised gather)."""
        if len(tensor.judgments) != len(self.keep):
            raise ValueError(
                f"tensor has {len(tensor.judgments)} judgments, this set "
                f"{len(self.keep)}: build the tensor on the same qrels"
            )
        if self.grades is None:
            return tensor.with_judgments(self.keep, dropped=self.dropped)
        return tensor.with_grades(self.codes())

    def to_qrels(self) -> Qrels:
        """As Qrels: kept rows with their (new) grades; removed rows absent, or -1 when
        ``dropped="unjudged"``."""
        g = (self.source.grades if self.grades is None else self.grades).astype(np.int8)
        if not self.keep.any() and self.dropped == "unpooled":
            raise ValueError(
                f"{self.method} at level {self.level!r} removes every judgment: "
                "an empty judgment set cannot be written as Qrels (the keep-mask "
                "and apply() still work)"
            )
        if self.dropped == "unjudged":
            return self.source.with_grades(np.where(self.keep, g, -1).astype(np.int8))
        return self.source.with_grades(g, keep=self.keep)

    @property
    def n_judged(self) -> int:
        """Kept rows with a grade >= 0."""
        g = self.source.grades if self.grades is None else self.grades
        return int((self.keep & (g >= 0)).sum())


# ------------------------------------------------------------------------------- base class
_REGISTRY: Registry[type[Degrader]] = Registry("degrader")


@dataclass(frozen=True, kw_only=True)
class Degrader:
    """Base class: a frozen dataclass whose fields are the degrader's parameters.

    Subclasses set ``name``, ``level_field``, ``level_unit``, ``level_meaning``, ``dropped``,
    ``needs_runs``, ``random``, ``per_topic`` and
    implement :meth:`levels` and :meth:`_trial`, which returns ``{level: keep_mask}`` (or
    ``{level: (keep_mask, grades)}``) for one trial over all levels; nesting across levels
    within a trial (stratified sampling) is therefore natural.

    Parameters are checked once, when the degrader is made: first against the constraints
    the class declares in ``_constraints`` (:mod:`metaeval._constraints`), then by its
    :meth:`_validate`, for what a constraint cannot say (relations between parameters).
    Either raises :class:`~metaeval._validation.ParamError` naming the parameter.
    """

    name: ClassVar[str] = ""
    #: The field holding the levels (``rates``, ``depths``...), set by a study's ``levels``.
    level_field: ClassVar[str] = "levels"
    #: What a level is measured in: ``"percent"`` (of the judgments kept: a report shows a
    #: level as ``10%`` and draws levels on a numeric axis), or what one level counts or names
    #: (``"depth"``, ``"team"``...); empty: levels are labels, shown as they are.
    level_unit: ClassVar[str] = ""
    #: What a level means, in the words of a report's captions and axes (``"pool depth"``);
    #: empty: ``levels of <name>``.
    level_meaning: ClassVar[str] = ""
    #: What removed judgments become (see :class:`Judgments`).
    dropped: ClassVar[str] = "unpooled"
    #: Whether the runs (an EvalTensor) are needed, not just the qrels.
    needs_runs: ClassVar[bool] = False
    #: Whether trials differ (False: deterministic, one trial is enough).
    random: ClassVar[bool] = True
    #: Whether a trial damages each topic independently of the others (sampling per topic,
    #: per-document noise): a resample of the topics then carries its topics' damage with it,
    #: and an interval over topic resamples already holds the variation between trials.
    per_topic: ClassVar[bool] = False
    #: What each parameter may be, by field name (checked before :meth:`_validate`).
    _constraints: ClassVar[dict[str, Constraint]] = {}

    def __post_init__(self):
        try:
            validate_params(self, self._active_constraints())
            self._validate()
        except ParamError as err:
            if err.owner is None:  # the study file maps a level field to its `levels`
                err.owner = type(self)
            raise

    def _active_constraints(self) -> dict[str, Constraint]:
        """The constraints that apply to this instance (all declared ones, unless another
        parameter makes one moot)."""
        return self._constraints

    def _validate(self) -> None:
        """Check what the declared constraints cannot (relations between parameters); raise
        :class:`~metaeval._validation.ParamError` naming the parameter."""

    def levels(self) -> list:
        raise NotImplementedError

    def _trial(self, qrels: Qrels, tensor: EvalTensor | None, rng: np.random.Generator) -> dict:
        raise NotImplementedError

    def trial(
        self, judgments: Qrels | EvalTensor, *, rng=None, trial: int = 0, runs: RunSet | None = None
    ) -> list[Judgments]:
        """One trial: a degraded judgment set for every level, in level order.

        Levels of one trial are drawn together (nested where the degrader nests them, as
        stratified sampling does), from ``rng`` alone, so trial k of a study can be drawn from
        its own seed without drawing trials 0..k-1.

        Parameters
        ----------
        judgments : Qrels or EvalTensor
            The judgments to degrade. For a tensor, its original ``qrels`` are degraded (rows
            aligned with it), not the current codes of a view already made by
            ``with_judgments``; :meth:`Judgments.apply` on such a view composes the two.
        rng : None, int, SeedSequence or Generator
        trial : int
            The trial's number, recorded in each :class:`Judgments` (it does not seed anything).
        runs : RunSet, optional
            For degraders that pool (``needs_runs``) when ``judgments`` is a Qrels.
        """
        qrels, tensor = _resolve(judgments, runs, self.needs_runs, self.name)
        return self._judgments(qrels, tensor, as_generator(rng), check_int("trial", trial, min=0))

    def _judgments(self, qrels, tensor, rng, trial) -> list[Judgments]:
        out = []
        for level, value in self._trial(qrels, tensor, rng).items():
            keep, grades = value if isinstance(value, tuple) else (value, None)
            out.append(
                Judgments(
                    self.name,
                    level,
                    trial,
                    np.asarray(keep, dtype=bool),
                    self.dropped,
                    qrels,
                    grades,
                )
            )
        return out

    def generate(
        self,
        judgments: Qrels | EvalTensor,
        *,
        rng=None,
        trials: int = 1,
        runs: RunSet | None = None,
    ) -> list[Judgments]:
        """Degraded judgment sets for every trial and level (trial-major order).

        The trials are drawn one after another from one generator: ``generate(..., trials=n,
        rng=g)`` is :meth:`trial` called n times with ``g``.

        Parameters
        ----------
        judgments : Qrels or EvalTensor
            As for :meth:`trial`.
        rng : None, int, SeedSequence or Generator
        trials : int
            Independent repetitions.
        runs : RunSet, optional
            For degraders that pool (``needs_runs``) when ``judgments`` is a Qrels.
        """
        gen = as_generator(rng)
        trials = check_int("trials", trials, min=1)
        qrels, tensor = _resolve(judgments, runs, self.needs_runs, self.name)
        return [j for k in range(trials) for j in self._judgments(qrels, tensor, gen, k)]

    def __call__(self, judgments, *, rng=None, trials: int = 1, runs=None) -> list[Judgments]:
        return self.generate(judgments, rng=rng, trials=trials, runs=runs)


def _resolve(judgments, runs, needs_runs: bool, name: str) -> tuple[Qrels, EvalTensor | None]:
    if isinstance(judgments, EvalTensor):
        if judgments.qrels is None:
            raise ValueError("the tensor carries no Qrels; build it with EvalTensor.build")
        if judgments.judged_only:
            raise ValueError("degrade the full tensor, not its condensed view")
        return judgments.qrels, judgments
    if not isinstance(judgments, Qrels):
        raise TypeError(
            f"judgments must be a Qrels or an EvalTensor, got {type(judgments).__name__}"
        )
    if runs is not None:
        return judgments, EvalTensor.build(runs, judgments, warn_extra_topics=False)
    if needs_runs:
        raise ValueError(f"{name} pools from runs: pass an EvalTensor, or runs=RunSet")
    return judgments, None


def register_degrader(cls: type[Degrader] | None = None):
    """Class decorator: make a :class:`Degrader` subclass known by its ``name``."""

    def wrap(klass):
        return _REGISTRY.add_class(klass, Degrader, "name", "register_degrader", check=_check_class)

    return wrap if cls is None else wrap(cls)


def _check_class(klass: type[Degrader]) -> None:
    if klass.dropped not in DROPPED:
        raise ValueError(f"{klass.__name__}.dropped must be one of {DROPPED}")
    check_declared(klass, klass._constraints, dataclasses.fields(klass))


def registered_degraders() -> dict[str, type[Degrader]]:
    """Every registered degrader class by name."""
    return _REGISTRY.as_dict()


def level_field(name: str) -> str:
    """The parameter holding a registered degrader's levels (``rates``, ``depths``...)."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown degrader {name!r}; registered: {sorted(_REGISTRY)}")
    return _REGISTRY[name].level_field


def make_degrader(name: str, **params) -> Degrader:
    """A degrader by registered name, e.g. ``make_degrader("stratified", rates=[10])``."""
    return _REGISTRY.construct(name, params)


# ------------------------------------------------------------------------------- helpers
def _topic_blocks(qrels: Qrels):
    off = qrels.offsets
    return zip(off[:-1], off[1:])


def _rounded(x: np.ndarray, rounding: str) -> np.ndarray:
    # x = P*N/100 is exact whenever P*N is an integer (correctly rounded division), so floor
    # and floor(x + 1/2) give the exact truncation and half-up rounding (Matlab's round for
    # x >= 0, as MATTERS uses), with no epsilon.
    return np.floor(x) if rounding == "trunc" else np.floor(x + 0.5)


# ------------------------------------------------------------------------------- degraders
@register_degrader
@dataclass(frozen=True, kw_only=True)
class StratifiedSampling(Degrader):
    """Stratified random sampling of the judgments (Buckley & Voorhees, SIGIR 2004).

    Per topic (docs/methods.md §4.1): shuffle every stratum of the judged documents once per
    trial, then for each rate P keep the first

        R_P = min(R, max(min_rel, f(P R / 100)))   documents of a relevant stratum and
        N_P = min(N, max(min_nonrel, f(P N / 100)))   of the non-relevant one,

    f being truncation (``rounding="trunc"``, the project default after Sakai & Kando 2008) or
    rounding half up (``"round"``, MATTERS' ``downsamplePool.m``). The strata are

    * ``strata="relevance"`` (Buckley & Voorhees): the relevant documents (grade >= ``rel``,
      any number > 0 on real-valued grades) and the judged non-relevant ones
      (0 <= grade < ``rel``);
    * ``strata="grade"`` (Ferrante, Ferro & Maistro 2014's graded adaptation): every relevant
      grade g >= ``rel`` is a stratum of its own, with its own ``min_rel``, beside the
      non-relevant stratum; so a topic keeps at least ``min_rel`` documents of every relevant
      grade it has, and highly relevant documents survive the lowest rates.

    As every stratum is shuffled once, the smaller sets are nested in the larger ones. Removed
    documents become unpooled (absent from the qrels), as in the paper; rows already unjudged
    (grade -1) are left as they are.
    """

    rates: tuple = (90, 70, 50, 30, 10)
    min_rel: int = 1
    min_nonrel: int = 10
    rounding: str = "trunc"
    rel: int | float = 1
    strata: str = "relevance"

    name: ClassVar[str] = "stratified"
    level_field: ClassVar[str] = "rates"
    level_unit: ClassVar[str] = "percent"
    level_meaning: ClassVar[str] = "% of the judgments kept (stratified sampling)"
    per_topic: ClassVar[bool] = True
    _constraints: ClassVar[dict] = {
        "rates": RATES,
        "min_rel": Interval(Integral, 0),
        "min_nonrel": Interval(Integral, 0),
        "rounding": OneOf(*ROUNDING),
        "rel": Level(),
        "strata": OneOf(*STRATA),
    }

    def levels(self):
        return list(self.rates)

    def _quota(self, n: np.ndarray, rate: float, minimum: int) -> np.ndarray:
        n = np.asarray(n)
        return np.minimum(n, np.maximum(minimum, _rounded(rate * n / 100, self.rounding))).astype(
            np.int64
        )

    def _trial(self, qrels, tensor, rng):
        g = qrels.grades
        n_q = len(g)
        lowest = qrels.code_at_least(self.rel)  # grade >= rel, as a code (>= 1)
        # The stratum of every row: -1 unjudged, 0 non-relevant, 1 relevant (by relevance)
        # or its grade code (by grade; relevant codes are >= 1, so never 0).
        label = np.where(g < 0, -1, np.where(g >= lowest, g if self.strata == "grade" else 1, 0))
        strata = [s for s in np.unique(label) if s >= 0]
        # Relevant strata first, then the non-relevant one: with two strata this is the order
        # (and the random stream) of Buckley & Voorhees' two lists.
        strata = sorted(strata, key=lambda s: (s == 0, s))
        # One shuffle per topic and stratum: a row is kept at rate P when its position in its
        # shuffled stratum is below the stratum's quota, so rates are nested by construction.
        position = np.zeros(n_q, dtype=np.int64)
        size = np.zeros((len(qrels.topics), len(strata)), dtype=np.int64)
        column = {s: i for i, s in enumerate(strata)}
        for t, (a, b) in enumerate(_topic_blocks(qrels)):
            for s in strata:
                rows = a + np.flatnonzero(label[a:b] == s)
                size[t, column[s]] = len(rows)
                position[rows[rng.permutation(len(rows))]] = np.arange(len(rows))
        topic = qrels.topic_index
        lookup = np.zeros(int(label.max(initial=0)) + 2, dtype=np.int64)
        for s, i in column.items():
            lookup[s + 1] = i
        col = lookup[label + 1]  # the stratum's column of every row (unjudged rows: unused)
        minimum = np.array([self.min_nonrel if s == 0 else self.min_rel for s in strata])
        out = {}
        for rate in self.rates:
            if not strata:  # nothing is judged (every grade -1): nothing to sample
                out[rate] = np.ones(n_q, dtype=bool)
                continue
            quota = self._quota(size, rate, minimum[None, :])
            out[rate] = np.where(label >= 0, position < quota[topic, col], True)
        return out


@register_degrader
@dataclass(frozen=True, kw_only=True)
class UniformSampling(Degrader):
    """Uniform random sampling of the judged pool (Yilmaz & Aslam, CIKM 2006).

    Per topic with A judged documents (docs/methods.md §4.2): draw floor(p A / 100) of them
    uniformly without replacement, and redraw until the sample holds at least one relevant document
    (grade >= ``rel``) when the topic has one; such a topic whose sample would be empty
    (p A < 100) keeps one document so that the condition can hold (our choice: the paper does
    not say).
    Unsampled documents become *pooled but unjudged* (qrels grade -1), which infAP needs.
    Each rate is drawn independently (the paper's samples are not nested).
    """

    rates: tuple = (90, 70, 50, 30, 10)
    rel: int | float = 1
    max_redraws: int = 100_000

    name: ClassVar[str] = "uniform"
    level_field: ClassVar[str] = "rates"
    level_unit: ClassVar[str] = "percent"
    level_meaning: ClassVar[str] = "% of the judgments kept (uniform sampling)"
    dropped: ClassVar[str] = "unjudged"
    per_topic: ClassVar[bool] = True
    _constraints: ClassVar[dict] = {
        "rates": RATES,
        "rel": Level(),
        "max_redraws": Interval(Integral, 1),
    }

    def levels(self):
        return list(self.rates)

    def _trial(self, qrels, tensor, rng):
        g = qrels.grades
        judged = g >= 0
        is_rel = g >= qrels.code_at_least(self.rel)
        out = {}
        for rate in self.rates:
            keep = ~judged  # rows already unjudged stay as they are
            for a, b in _topic_blocks(qrels):
                rows = a + np.flatnonzero(judged[a:b])
                A = len(rows)
                if A == 0:
                    continue
                n = int(_rounded(np.asarray(rate * A / 100), "trunc"))
                has_rel = bool(is_rel[rows].any())
                if has_rel:
                    n = max(n, 1)
                for _ in range(self.max_redraws):
                    pick = rows[rng.choice(A, n, replace=False)] if n < A else rows
                    if n == 0:
                        break
                    if not has_rel or is_rel[pick].any():
                        break
                else:
                    raise RuntimeError(
                        f"uniform sampling: no relevant document in "
                        f"{self.max_redraws} draws (rate {rate}, A={A})"
                    )
                keep[pick] = True
            out[rate] = keep
        return out


def _require_tensor(tensor, name):
    if tensor is None:
        raise ValueError(f"{name} pools from runs: pass an EvalTensor, or runs=RunSet")
    return tensor


@register_degrader
@dataclass(frozen=True, kw_only=True)
class PoolDepth(Degrader):
    """Shallow pools: the depth-k pool of the runs, intersected with the judgments.

    For each depth k (docs/methods.md §4.4; Zobel SIGIR 1998; Sakai 2008), a judgment is kept when
    some run (of ``runs``, default all) ranks its document in its top k (trec_eval order); all
    others become unpooled. Deterministic: every trial is the same.
    """

    depths: tuple = (100, 50, 20, 10, 5)
    runs: tuple | None = None

    name: ClassVar[str] = "pool_depth"
    level_field: ClassVar[str] = "depths"
    level_unit: ClassVar[str] = "depth"
    level_meaning: ClassVar[str] = "pool depth"
    needs_runs: ClassVar[bool] = True
    random: ClassVar[bool] = False
    _constraints: ClassVar[dict] = {
        "depths": POSITIVE_INTS,
        # run names or positions (see pool_mask); an empty list pools nothing
        "runs": Optional(Sequence(non_empty=False, unique=False)),
    }

    def levels(self):
        return list(self.depths)

    def _trial(self, qrels, tensor, rng):
        tensor = _require_tensor(tensor, self.name)
        return {k: pool_mask(tensor, k, runs=self.runs) for k in self.depths}


def _check_groups(groups, tensor: EvalTensor) -> dict[str, list[int]]:
    """Team -> run positions; every run of the tensor must have a team."""
    if not isinstance(groups, Mapping) or not groups:
        raise ParamError("groups", "must be a non-empty mapping run name -> team name")
    missing = [r for r in tensor.runs if r not in groups]
    if missing:
        raise ParamError("groups", f"has no team for run(s) {shown_ids(missing)}")
    teams: dict[str, list[int]] = {}
    for i, r in enumerate(tensor.runs):
        teams.setdefault(str(groups[r]), []).append(i)
    return teams


def _groups_tuple(groups):
    """Run -> team pairs, sorted; None stays None (teams guessed from the run names)."""
    if groups is None:
        return None
    if isinstance(groups, Mapping):
        return tuple(sorted((str(k), str(v)) for k, v in groups.items()))
    try:
        return tuple((str(k), str(v)) for k, v in groups)
    except (TypeError, ValueError):
        raise ParamError("groups", f"must map run names to team names, got {groups!r}") from None


def _teams_of(groups, tensor: EvalTensor) -> dict[str, list[int]]:
    """Team -> run positions, from ``groups`` or, when None, guessed from the run names."""
    if groups is None:
        from simulators.calibrate import teams_from_names

        return _check_groups(teams_from_names(tensor.runs), tensor)
    return _check_groups(dict(groups), tensor)


@register_degrader
@dataclass(frozen=True, kw_only=True)
class LeaveOneGroupOut(Degrader):
    """Leave one group out: remove the judgments that only one team contributed.

    For each team g of ``teams`` (the levels; default every team), a judgment is removed when
    its document is in the depth-``depth`` pool of g's runs and in no other team's (Zobel
    SIGIR 1998's pool reusability test: how would g's runs score had g not contributed?).
    Judgments that no run pooled at this depth stay. ``depth=None`` pools whole runs.
    Deterministic.

    ``groups`` maps each run name to its team (a dict, or pairs); by default teams are guessed
    from the run names (:func:`simulators.calibrate.teams_from_names`).
    """

    teams: tuple | None = None
    groups: Any = None
    depth: int | None = 100

    name: ClassVar[str] = "leave_one_group_out"
    level_field: ClassVar[str] = "teams"
    level_unit: ClassVar[str] = "team"
    level_meaning: ClassVar[str] = "team left out of the pool"
    needs_runs: ClassVar[bool] = True
    random: ClassVar[bool] = False
    _constraints: ClassVar[dict] = {
        # team names: whatever they are, they are compared as strings
        "teams": Optional(Sequence(scalar=(str,), unique=False, convert=str)),
        "depth": DEPTH,
    }

    def _validate(self):
        # groups (a mapping or pairs) is normalised here: no constraint says "a mapping"
        object.__setattr__(self, "groups", _groups_tuple(self.groups))
        if self.teams is not None and self.groups is not None:
            unknown = sorted(set(self.teams) - {v for _, v in self.groups})
            if unknown:
                raise ParamError("teams", f"must be teams of groups; not teams: {unknown}")

    def levels(self):
        if self.teams is not None:
            return list(self.teams)
        if self.groups is None:
            raise ParamError(
                "teams",
                "are not known before the runs are: list them (teams=[...]) or give groups",
            )
        return sorted(set(v for _, v in self.groups))

    def _trial(self, qrels, tensor, rng):
        tensor = _require_tensor(tensor, self.name)
        teams = _teams_of(self.groups, tensor)
        n_q = len(tensor.judgments)
        k = tensor.depth if self.depth is None else min(self.depth, tensor.depth)
        # Number of teams pooling each row: one bincount per team.
        per_team = {}
        count = np.zeros(n_q, dtype=np.int64)
        for team, pos in teams.items():
            m = pool_mask(tensor, k, runs=pos)
            per_team[team] = m
            count += m
        wanted = list(self.teams) if self.teams is not None else sorted(teams)
        unknown = [t for t in wanted if t not in teams]
        if unknown:
            raise ParamError(
                "teams",
                f"names team(s) {unknown} to which no run belongs; teams: {sorted(teams)}",
                owner=type(self),
            )
        return {team: ~(per_team[team] & (count == 1)) for team in wanted}


@register_degrader
@dataclass(frozen=True, kw_only=True)
class FewerTeams(Degrader):
    """Pools from fewer teams: the depth-``depth`` pool of the runs of k random teams.

    For each k (a level) and trial, k teams are drawn uniformly without replacement; a judgment
    is kept when a run of those teams ranks its document in its top ``depth``. Levels are
    drawn independently. ``groups`` maps each run name to its team (default: teams guessed
    from the run names).
    """

    k: Any = (5,)
    groups: Any = None
    depth: int | None = 100

    name: ClassVar[str] = "fewer_teams"
    level_field: ClassVar[str] = "k"
    level_unit: ClassVar[str] = "teams"
    level_meaning: ClassVar[str] = "teams kept (pools of fewer teams)"
    needs_runs: ClassVar[bool] = True
    _constraints: ClassVar[dict] = {"k": POSITIVE_INTS, "depth": DEPTH}

    def _validate(self):
        object.__setattr__(self, "groups", _groups_tuple(self.groups))
        if self.groups is not None:
            self._check_k(len(set(v for _, v in self.groups)))

    def _check_k(self, n_teams: int) -> None:
        if max(self.k) > n_teams:
            raise ParamError(
                "k",
                f"must be at most the number of teams ({n_teams}), got {self.k}",
                owner=type(self),
            )

    def levels(self):
        return list(self.k)

    def _trial(self, qrels, tensor, rng):
        tensor = _require_tensor(tensor, self.name)
        teams = _teams_of(self.groups, tensor)
        names = sorted(teams)
        self._check_k(len(names))
        out = {}
        for k in self.k:
            chosen = rng.choice(len(names), k, replace=False)
            pos = sorted(p for i in chosen for p in teams[names[i]])
            out[k] = pool_mask(tensor, self.depth, runs=pos)
        return out


@register_degrader
@dataclass(frozen=True, kw_only=True)
class AssessorNoise(Degrader):
    """Assessor disagreement: every judged grade is redrawn from a confusion matrix.

    A judged document of grade i gets grade j with probability ``M[i, j]``. With ``confusion``
    given (a (G+1) x (G+1) row-stochastic matrix over grades 0..G) it is the only level; else
    each rate r in ``rates`` gives the "adjacent grade" matrix: a grade moves to a neighbouring
    grade with probability r (split evenly between the two neighbours, all to the one neighbour
    at the ends). Nothing is added or removed: the keep-mask is all True and the new grades are
    for :meth:`EvalTensor.with_grades`. Rows unjudged (-1) stay unjudged. On real-valued grades
    i and j are grade codes, the positions of the grades in :attr:`Qrels.levels` (0, 0.5, 2:
    0, 1, 2), so the neighbours of a grade are the next lower and higher grades of the qrels.
    """

    rates: tuple = (0.1, 0.2, 0.3)
    confusion: Any = None

    name: ClassVar[str] = "assessor_noise"
    level_field: ClassVar[str] = "rates"
    level_unit: ClassVar[str] = "probability"
    level_meaning: ClassVar[str] = "probability of a grade change (assessor noise)"
    per_topic: ClassVar[bool] = True
    _constraints: ClassVar[dict] = {
        # probabilities of a grade change, as floats (0 -> 0.0) as they always were
        "rates": Sequence(Interval(Real, 0, 1), scalar=(Real,), convert=float),
    }

    def _active_constraints(self):
        # with a confusion matrix, the matrix is the only level: rates is not used
        return {} if self.confusion is not None else self._constraints

    def _validate(self):
        if self.confusion is None:
            return
        try:
            m = np.asarray(self.confusion, dtype=float)
        except (TypeError, ValueError):
            raise ParamError(
                "confusion", f"must be a square matrix of numbers, got {self.confusion!r}"
            ) from None
        if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] < 2:
            raise ParamError(
                "confusion", f"must be a square matrix over grades 0..G, got shape {m.shape}"
            )
        if (m < 0).any() or not np.allclose(m.sum(axis=1), 1.0):
            raise ParamError("confusion", "must be row-stochastic (non-negative rows summing to 1)")
        object.__setattr__(self, "confusion", tuple(map(tuple, m.tolist())))
        object.__setattr__(self, "rates", ("confusion",))

    def levels(self):
        return list(self.rates)

    @staticmethod
    def adjacent(n_grades: int, rate: float) -> np.ndarray:
        """The adjacent-grade confusion matrix over grades 0..n_grades-1."""
        m = np.eye(n_grades) * (1 - rate)
        for i in range(n_grades):
            nb = [j for j in (i - 1, i + 1) if 0 <= j < n_grades]
            for j in nb:
                m[i, j] += rate / len(nb)
        return m

    def matrix(self, n_grades: int, level) -> np.ndarray:
        if self.confusion is not None:
            m = np.asarray(self.confusion)
            if m.shape[0] < n_grades:
                raise ParamError(
                    "confusion",
                    f"covers grades 0..{m.shape[0] - 1} but the qrels have grade {n_grades - 1}",
                    owner=type(self),
                )
            return m
        return self.adjacent(n_grades, level)

    def _trial(self, qrels, tensor, rng):
        g = qrels.grades
        judged = g >= 0
        n_grades = int(g.max()) + 1 if judged.any() else 1
        if tensor is not None:
            n_grades = max(n_grades, tensor.n_grades)
        out = {}
        for level in self.levels():
            m = self.matrix(n_grades, level)
            # Inverse-CDF draw per row: one uniform each, vectorised over rows.
            cdf = np.cumsum(m, axis=1)
            cdf[:, -1] = 1.0
            u = rng.random(len(g))
            src = np.where(judged, g, 0).astype(np.int64)
            new = (u[:, None] > cdf[src]).sum(axis=1)
            grades = np.where(judged, new, g).astype(np.int8)
            out[level] = (np.ones(len(g), dtype=bool), grades)
        return out
