"""The plan of a study: units of result, grouped into tasks, minus what is already saved.

A **unit** is the smallest thing whose done-ness is tracked: one world instance (world,
replicate), degrader, level, trial, criterion and measure (or pair of measures). Its id is a
hash of what it *is* (the world by content, the degrader's and criterion's parameters, the
measure's canonical name, how scores are aggregated), so a unit computed once is never
recomputed, and changing a parameter makes new units rather than reusing stale ones.

A **task** is the unit of work: one world instance x degrader x trial, computing every level,
measure and criterion of its missing units (they share one degraded tensor), or the reference
task of a world instance (the full judgments). Adding a measure to a finished study plans only
that measure's units, in the same tasks.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pandas as pd

from metaeval.study.criteria import criterion_levels
from metaeval.study.seeding import short_id
from metaeval.study.spec import FULL, SpecError, StudySpec

UNIT_COLUMNS = [
    "unit",
    "task",
    "world",
    "replicate",
    "degrader",
    "level",
    "trial",
    "criterion",
    "kind",
    "measure",
    "other",
]


@dataclass(frozen=True)
class Unit:
    """One tracked result: world instance x degrader x level x trial x criterion x measure(s)."""

    id: str
    world: str
    replicate: int
    degrader: str
    level: str
    trial: int
    criterion: str
    kind: str
    measure: str
    other: str = ""


@dataclass(frozen=True)
class Task:
    """The work of one world instance x degrader x trial ("" degrader: full judgments)."""

    id: str
    world: str
    replicate: int
    degrader: str
    trial: int
    units: tuple[Unit, ...]

    @property
    def levels(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(u.level for u in self.units))


@dataclass(frozen=True)
class Plan:
    """Every unit of a study, and the tasks that compute the missing ones."""

    units: tuple[Unit, ...]
    tasks: tuple[Task, ...]
    n_done: int

    @property
    def n_units(self) -> int:
        return len(self.units)

    @property
    def n_missing(self) -> int:
        return sum(len(t.units) for t in self.tasks)

    def frame(self) -> pd.DataFrame:
        """The planned units as a table (:data:`UNIT_COLUMNS` but ``task``)."""
        return pd.DataFrame(
            [unit_row(u) for u in self.units], columns=[c for c in UNIT_COLUMNS if c != "task"]
        )


def unit_row(unit: Unit, **extra) -> dict:
    """A unit as a table row (its id under ``unit``)."""
    row = dataclasses.asdict(unit)
    return {"unit": row.pop("id"), **extra, **row}


def world_identity(spec: StudySpec, world_id: str, replicate: int) -> dict:
    """The identity of one world instance (its content, its options and the replicate)."""
    return {"world": spec.world(world_id).identity(), "replicate": replicate}


def task_id(world: str, replicate: int, degrader: str, trial: int) -> str:
    """Readable task name: ``<world>.r<replicate>.<degrader or full>.t<trial>``."""
    return f"{world}.r{replicate}.{degrader or FULL}.t{trial}"


def make_plan(spec: StudySpec, done: frozenset | set = frozenset()) -> Plan:
    """Plan ``spec``: every unit, and tasks holding the units not in ``done``.

    Raises
    ------
    SpecError
        When a criterion has no level to run at (e.g. significance changes without degraders).
    """
    criteria = [(c, c.make()) for c in spec.criteria]
    scoring = {"missing": spec.missing}

    def measure(label: str) -> dict | str:
        return dataclasses.asdict(spec.measure(label)) if label else ""

    measure_sets = {}
    for cspec, crit in criteria:
        ms = list(spec.labels)
        if not crit.per_measure:
            measure_sets[cspec.id] = [("", "")]
        elif crit.pairwise:
            measure_sets[cspec.id] = [(a, b) for i, a in enumerate(ms) for b in ms[i + 1 :]]
        else:
            measure_sets[cspec.id] = [(m, "") for m in ms]
        if crit.pairwise and not measure_sets[cspec.id]:
            raise SpecError(
                f"{_label(spec)}: criteria: {cspec.id} compares measures in pairs; "
                "list at least two measures"
            )

    # Which levels each criterion runs at, per degrader and at full judgments.
    full_for, levels_for = {}, {}
    for cspec, crit in criteria:
        per_degrader = [criterion_levels(cspec.levels, crit, d.levels) for d in spec.degraders]
        full_for[cspec.id] = any(
            FULL in lv for lv in per_degrader or [criterion_levels(cspec.levels, crit, ())]
        )
        for d in spec.degraders:
            levels_for[cspec.id, d.id] = tuple(
                lv for lv in criterion_levels(cspec.levels, crit, d.levels) if lv != FULL
            )
        if not full_for[cspec.id] and not any(
            levels_for.get((cspec.id, d.id)) for d in spec.degraders
        ):
            raise SpecError(
                f"{_label(spec)}: criteria: {cspec.id} ({cspec.kind}) has no level "
                "to run at; check its levels and the degraders"
            )

    units: list[Unit] = []
    tasks: list[Task] = []
    n_done = 0
    for world in spec.worlds:
        for rep in range(world.replicates):
            wident = world_identity(spec, world.id, rep)
            groups = [("", 0, None)] + [
                (d.id, t, d) for d in spec.degraders for t in range(d.trials)
            ]
            for did, trial, dspec in groups:
                tid = task_id(world.id, rep, did, trial)
                mine: list[Unit] = []
                for cspec, _ in criteria:
                    if not cspec.runs_on(world.id):
                        continue
                    levels = (
                        ((FULL,) if full_for[cspec.id] else ())
                        if dspec is None
                        else levels_for[cspec.id, did]
                    )
                    for level in levels:
                        for m, other in measure_sets[cspec.id]:
                            ident = {
                                "world": wident,
                                "criterion": cspec.identity(),
                                "degrader": None
                                if dspec is None
                                else {**dspec.identity(), "level": level},
                                "trial": trial,
                                "measure": measure(m),
                                "other": measure(other) if other else "",
                                "scoring": scoring,
                            }
                            mine.append(
                                Unit(
                                    short_id(ident),
                                    world.id,
                                    rep,
                                    did,
                                    level,
                                    trial,
                                    cspec.id,
                                    cspec.kind,
                                    m,
                                    other,
                                )
                            )
                units.extend(mine)
                missing = tuple(u for u in mine if u.id not in done)
                n_done += len(mine) - len(missing)
                if missing:
                    tasks.append(Task(tid, world.id, rep, did, trial, missing))
    return Plan(units=tuple(units), tasks=tuple(tasks), n_done=n_done)


def _label(spec: StudySpec) -> str:
    return spec.path.name if spec.path is not None else "study"


__all__ = [
    "Unit",
    "Task",
    "Plan",
    "make_plan",
    "task_id",
    "unit_row",
    "world_identity",
    "UNIT_COLUMNS",
]
