"""The plan of a study: units of result, grouped into tasks, minus what is already saved.

A **unit** is the smallest thing whose done-ness is tracked: one world instance (world,
replicate), degrader, level, trial, criterion and measure (or pair of measures). Its id is a
hash of everything that changes its numbers: the study seed, the world by content (and the
files selecting its topics or runs), the degrader's and criterion's parameters, the measure's
canonical name, how scores are aggregated, and the content of every plugin file defining a
class it uses (its measures, criterion or degrader). So a unit computed once is never
recomputed, and changing any of these makes new units rather than reusing stale ones: editing
a plugin recomputes exactly the units that use what it defines.

A **task** is the unit of work: one world instance x degrader x trial, computing every level,
measure and criterion of its missing units (they share one degraded tensor), or the reference
task of a world instance (the full judgments). Adding a measure to a finished study plans only
that measure's units, in the same tasks.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from metaeval.study.criteria import criterion_levels
from metaeval.study.seeding import short_id
from metaeval.study.spec import FULL, SpecError, StudySpec, TrecWorld, file_digest, provides

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


def plugin_digests(spec: StudySpec) -> dict[str, str]:
    """SHA-256 of each plugin file of the study, by resolved path."""
    return {str(Path(p).resolve()): file_digest(Path(p)) for p in spec.plugins}


class _PluginCode:
    """Which of a study's plugin files define a class or one of its bases (by their SHA-256)."""

    def __init__(self, spec: StudySpec):
        self.digests = plugin_digests(spec)
        self._modules: dict[str, str | None] = {}

    def of(self, *objects) -> frozenset[str]:
        """SHA-256 of every plugin file that defines the class of one of ``objects`` or one
        of its bases (a plugin class may build on another plugin's)."""
        found = set()
        for obj in objects:
            for klass in type(obj).__mro__:
                digest = self._module_digest(klass.__module__)
                if digest is not None:
                    found.add(digest)
        return frozenset(found)

    def _module_digest(self, name: str) -> str | None:
        # load_plugin gives a plugin file a made-up module name: the module's file says which
        # plugin file it is, whatever the name
        if name not in self._modules:
            file = getattr(sys.modules.get(name), "__file__", None)
            self._modules[name] = (
                self.digests.get(str(Path(file).resolve())) if self.digests and file else None
            )
        return self._modules[name]


def _selection_files(world) -> dict[str, str]:
    """SHA-256 of the files a TREC world's topic or run selection is read from (their paths
    are in the world's identity, their content is not)."""
    if not isinstance(world, TrecWorld):
        return {}
    return {
        key: file_digest(Path(value))
        for key, value in (("topics", world.topics), ("run_names", world.run_names))
        if isinstance(value, str) and Path(value).is_file()
    }


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
    from metaeval.measures import parse_measure

    criteria = [(c, c.make()) for c in spec.criteria]
    scoring = {"missing": spec.missing}

    def measure(label: str) -> dict | str:
        return dataclasses.asdict(spec.measure(label)) if label else ""

    # The plugin files each measure, criterion, degrader and world (its best runs are chosen
    # by a measure) depends on: a unit's identity holds their content, so that editing a
    # plugin makes new units of exactly what uses it.
    code = _PluginCode(spec)
    code_of = {("measure", ""): frozenset()}
    for m in spec.measures:
        code_of["measure", m.label] = code.of(parse_measure(m.name))
    for cspec, crit in criteria:
        code_of["criterion", cspec.id] = code.of(crit)
    code_of["degrader", ""] = frozenset()
    for d in spec.degraders:
        code_of["degrader", d.id] = code.of(d.make())
    for w in spec.worlds:
        code_of["world", w.id] = code.of(*(parse_measure(v) for k, v in w.best_runs if k == "by"))

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
        degraded = any(levels_for.get((cspec.id, d.id)) for d in spec.degraders)
        if not full_for[cspec.id] and not degraded:
            raise SpecError(
                f"{_label(spec)}: criteria: {cspec.id} ({cspec.kind}) has no level "
                "to run at; check its levels and the degraders"
            )
        kinds = {w.kind for w in spec.worlds if cspec.runs_on(w.id)}
        idle = None if degraded else crit.idle_at_full(kinds)
        if idle:
            raise SpecError(
                f"{_label(spec)}: criteria: {cspec.id} ({cspec.kind}) runs at full judgments "
                f"only, where it would compute nothing: {idle}; give it damaged levels (a "
                "degrader) or a reference these worlds have"
            )

    units: list[Unit] = []
    tasks: list[Task] = []
    n_done = 0
    for world in spec.worlds:
        for rep in range(world.replicates):
            wident = world_identity(spec, world.id, rep)
            selections = _selection_files(world)
            # a score-level world has no judgments to damage: full level only
            groups = [("", 0, None)] + [
                (d.id, t, d)
                for d in spec.degraders
                if world.kind != "scores"
                for t in range(d.trials)
            ]
            for did, trial, dspec in groups:
                tid = task_id(world.id, rep, did, trial)
                mine: list[Unit] = []
                for cspec, crit in criteria:
                    if not cspec.runs_on(world.id):
                        continue
                    levels = (
                        ((FULL,) if full_for[cspec.id] else ())
                        if dspec is None
                        else levels_for[cspec.id, did]
                    )
                    for level in levels:
                        for m, other in measure_sets[cspec.id]:
                            if any(
                                label and not provides(world, spec.measure(label).name)
                                for label in (m, other)
                            ):
                                continue
                            plugins = (
                                code_of["world", world.id]
                                | code_of["criterion", cspec.id]
                                | code_of["degrader", did]
                                | code_of["measure", m]
                                | code_of["measure", other]
                            )
                            # everything that changes the unit's numbers, and nothing else
                            ident = {
                                "seed": spec.seed,
                                "world": wident,
                                "selections": selections,
                                "criterion": cspec.identity(),
                                "degrader": None
                                if dspec is None
                                else {**dspec.identity(), "level": level},
                                "trial": trial,
                                "measure": measure(m),
                                "other": measure(other) if other else "",
                                "scoring": scoring,
                                "plugins": sorted(plugins),
                                # a unit saves its values on the topic resamples too
                                "topic_resamples": spec.topic_resamples if crit.resampled else 0,
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
    "plugin_digests",
    "task_id",
    "unit_row",
    "world_identity",
    "UNIT_COLUMNS",
]
