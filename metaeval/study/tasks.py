"""What a worker does: load a world instance, damage its judgments, run the criteria.

:func:`run_task` is the one function executors call. It never raises: it returns an
:class:`Outcome` holding either the task's tables or the error. Everything random in it comes
from identity-seeded streams (:mod:`metaeval.study.seeding`), so its result does not depend on
which worker runs it, or when.

The world instance comes from :mod:`metaeval.study.worlds` (which a worker keeps in a cache),
and each criterion sees it through a :class:`~metaeval.study.context.Context`; this module
damages the instance's judgments (one trial, every level), runs the criteria of each level
and gathers their rows into the task's tables.
"""

from __future__ import annotations

import dataclasses
import time
import traceback
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from metaeval.study.context import Context
from metaeval.study.criteria import RESAMPLES, rows
from metaeval.study.plan import Task, unit_row
from metaeval.study.saved import UNITS
from metaeval.study.seeding import generator
from metaeval.study.spec import FULL, StudySpec
from metaeval.study.worlds import LoadedWorld, load_world


@dataclass
class Outcome:
    """What a task returns to the driver."""

    task_id: str
    tables: dict[str, pd.DataFrame] | None = None
    error: str | None = None
    traceback: str | None = None
    seconds: float = 0.0
    criteria_seconds: float = 0.0
    #: the warnings the task raised, as (category, message): a worker process would print
    #: them raw, once per worker; the driver shows them once, as its own
    warnings: tuple = ()

    @property
    def ok(self) -> bool:
        return self.error is None


# ------------------------------------------------------------------------------ the task
def _load_plugins(spec: StudySpec) -> None:
    from metaeval.measures import load_plugin

    for path in spec.plugins:
        load_plugin(path)


def _degraded(spec: StudySpec, world: LoadedWorld, task: Task) -> dict[str, Any]:
    """The task's damaged judgment sets by level (one trial, every level)."""
    dspec = spec.degrader(task.degrader)
    degrader = dspec.make()
    if world.groups is not None and getattr(degrader, "groups", "absent") is None:
        degrader = dataclasses.replace(degrader, groups=world.groups)
    ident = {"world": world.identity, "degrader": dspec.identity(), "trial": task.trial}
    sets = degrader.trial(
        world.tensor, rng=generator(spec.seed, "degrade", ident), trial=task.trial
    )
    return {str(j.level): j for j in sets}


def _draws(observed: pd.DataFrame, resampled: pd.DataFrame, ctx: Context) -> pd.DataFrame:
    """The ``resamples`` rows of a criterion: for every row of its ``results`` (same keys,
    same order), the number of topics its observed value rests on, whether the topic
    resamples carry the variation between trials, and its R values on the topic resamples
    (float32; NaN where a resample gave no value)."""
    keys = ["measure", "other", "statistic", "x"]
    R = ctx.n_resamples
    row = pd.MultiIndex.from_frame(observed[keys].fillna({"x": -np.inf}))
    values = np.full((len(observed), R), np.nan, dtype=np.float32)
    if len(resampled):
        where = row.get_indexer(pd.MultiIndex.from_frame(resampled[keys].fillna({"x": -np.inf})))
        found = where >= 0
        values[where[found], resampled["resample"].to_numpy()[found] - 1] = resampled[
            "value"
        ].to_numpy()[found]
    out = observed[keys].reset_index(drop=True)
    out["n_topics"] = ctx.n_topics
    out["trials_in_topics"] = ctx.trials_in_topics
    out["values"] = list(values)
    return out


def _annotate(frame: pd.DataFrame, units: dict, pairwise: bool) -> pd.DataFrame:
    """Add each row's unit and its readable identity columns."""
    if pairwise:
        keys = [
            (a, b) if (a, b) in units else (b, a)
            for a, b in zip(frame["measure"], frame.get("other", frame["measure"]))
        ]
    else:
        keys = [(m, "") for m in frame["measure"]]
    head = pd.DataFrame([unit_row(units[k]) for k in keys]).drop(columns=["measure", "other"])
    body = frame.reset_index(drop=True)
    return pd.concat([head, body], axis=1)


def _sort(frame: pd.DataFrame) -> pd.DataFrame:
    keys = [
        c
        for c in (
            "unit",
            "measure",
            "other",
            "statistic",
            "x",
            "rank",
            "size",
            "repeat",
            "topic_set_size",
            "bin",
        )
        if c in frame.columns
    ]
    return frame.sort_values(keys, kind="stable").reset_index(drop=True)


def execute(spec: StudySpec, task: Task) -> tuple[dict[str, pd.DataFrame], float]:
    """Compute a task's tables (raises on error). Returns (tables, seconds in criteria)."""
    _load_plugins(spec)
    world = load_world(spec, task.world, task.replicate)
    judgments = _degraded(spec, world, task) if task.degrader else {}
    criteria = {c.id: (c, c.make()) for c in spec.criteria}
    tables: dict[str, list[pd.DataFrame]] = {}
    unit_rows = []
    in_criteria = 0.0
    for level in task.levels:
        tensor = world.tensor if level == FULL else judgments[level].apply(world.tensor)
        ctx = Context(
            spec,
            world,
            tensor,
            level=level,
            degrader=task.degrader,
            trial=task.trial,
            level_cache={},
        )
        for cid in dict.fromkeys(u.criterion for u in task.units if u.level == level):
            cspec, crit = criteria[cid]
            mine = {
                (u.measure, u.other): u
                for u in task.units
                if u.level == level and u.criterion == cid
            }
            wanted = list(mine) if crit.pairwise else [m for m, _ in mine]
            t0 = time.perf_counter()
            bound = ctx.bind(cspec)
            if bound.n_topics < 2:
                # A topic filter left fewer than two topics in this world: nothing to compute.
                # The units are done; a row per measure says why they have no statistic.
                frames = {
                    "results": rows([(m, o, "n_topics", np.nan, bound.n_topics) for m, o in mine])
                }
            else:
                frames = compute_units(crit, bound, wanted)
            in_criteria += time.perf_counter() - t0
            for table, frame in frames.items():
                if not frame.empty:  # (an empty frame would make the identity columns floats)
                    tables.setdefault(table, []).append(_annotate(frame, mine, crit.pairwise))
            unit_rows += [unit_row(u, task=task.id) for u in mine.values()]
    out = {name: _sort(pd.concat(parts, ignore_index=True)) for name, parts in tables.items()}
    out[UNITS] = _sort(pd.DataFrame(unit_rows))
    return out, in_criteria


def compute_units(crit, ctx: Context, wanted: list) -> dict[str, pd.DataFrame]:
    """The tables of one criterion's units on ``wanted`` at one level: its results, and the
    same statistics on every topic resample when it is resampled."""
    frames = crit.compute(ctx, wanted)
    if crit.resampled and ctx.n_resamples and not frames["results"].empty:
        frames[RESAMPLES] = _draws(frames["results"], crit.compute_resamples(ctx, wanted), ctx)
    return frames


def run_task(spec: StudySpec, task: Task) -> Outcome:
    """Run one task in this process; never raises (errors come back in the Outcome, and so do
    the warnings it raised)."""
    from threadpoolctl import threadpool_limits

    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        try:
            # One BLAS thread per worker: parallelism comes from the tasks, and results must
            # not depend on how many threads summed a product.
            with threadpool_limits(limits=1):
                tables, in_criteria = execute(spec, task)
            outcome = Outcome(task.id, tables=tables, criteria_seconds=in_criteria)
        except Exception as err:  # reported to the driver, saved under failures/, retried later
            outcome = Outcome(
                task.id, error=f"{type(err).__name__}: {err}", traceback=traceback.format_exc()
            )
    outcome.seconds = time.perf_counter() - start
    outcome.warnings = tuple(dict.fromkeys((_portable(w.category), str(w.message)) for w in caught))
    return outcome


def _portable(category: type[Warning]) -> type[Warning]:
    """A warning class the driver can unpickle: a plugin's own class (defined in a file the
    driver may have imported under another name) travels as UserWarning."""
    module = category.__module__.split(".")[0]
    return category if module in ("builtins", "warnings", "metaeval", "simulators") else UserWarning


__all__ = ["run_task", "execute", "Outcome"]
