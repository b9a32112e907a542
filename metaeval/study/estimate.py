"""How long a study will take, before it runs: a few timed probes, extrapolated over the plan.

A plan knows how many units each task holds, not what they cost, and costs differ by orders of
magnitude (a Kendall tau takes microseconds, a bootstrap test of B = 1000 resamples over 60
systems a tenth of a second). So the estimate times, on the first replicate of each world, the
steps a task is made of, and adds them up over the tasks still to run:

- loading the world (reading the files or drawing the simulated world, building the tensor),
  paid once per world instance by every worker that runs one of its tasks;
- drawing one trial of each degrader (every level) and applying one level to the tensor;
- scoring each measure once on the tensor, paid once per measure and level of a task;
- one unit of each criterion with its scores already computed, as a task runs it: its
  statistics on the observed topics and on every topic resample (the criterion's own work).

Shared work (the bootstrap samples of a world, the full-judgment tests that significance changes
reuse) is counted once per probe, so the estimate errs on the high side. It is a guide for
choosing ``--jobs`` or a cluster, not a promise: timings of earlier runs in the same output folder,
when there are any, are a better one.

The probes' seconds per unit of each criterion on each world, and per world instance loaded, are
saved in the output folder (:func:`save_estimate`); a later plan or run of the same study file
extrapolates them over what is left (:func:`saved_estimate`) instead of timing again.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import pandas as pd

from metaeval.study.plan import Plan, Task
from metaeval.study.spec import FULL, StudySpec


@dataclass(frozen=True)
class CostEstimate:
    """The estimated worker time of the tasks still to run.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per world and criterion: ``world, criterion, units, seconds`` (the units still
        to run and their estimated seconds, scoring and degrading included in proportion).
    load_seconds : dict
        Seconds to load one instance of each world.
    probe_seconds : float
        What the probes themselves took.
    """

    table: pd.DataFrame
    load_seconds: dict
    probe_seconds: float

    @property
    def seconds(self) -> float:
        """Estimated worker seconds for one worker, world loading included once per instance."""
        return float(self.table["seconds"].sum()) + self._loads(1)

    def wall_seconds(self, jobs: int) -> float:
        """Estimated wall time with ``jobs`` workers (every worker loads the worlds it needs)."""
        return float(self.table["seconds"].sum()) / jobs + self._loads(jobs) / jobs

    def _loads(self, jobs: int) -> float:
        return sum(s * n * min(jobs, t) for s, n, t in self.load_seconds.values())

    def task_seconds(self, plan: Plan) -> dict[str, float]:
        """Estimated seconds of each task still to run (its units at their rates; loading is
        left out: it falls on whichever task a worker runs first)."""
        rate = {
            (r.world, r.criterion): r.seconds / r.units if r.units else 0.0
            for r in self.table.itertuples(index=False)
        }
        return {
            t.id: sum(rate.get((t.world, u.criterion), 0.0) for u in t.units) for t in plan.tasks
        }


def save_estimate(store, spec: StudySpec, cost: CostEstimate) -> None:
    """Save ``cost`` as rates (seconds per unit of each criterion on each world, seconds per
    world instance loaded) in ``store``'s folder, for this study file's text only."""
    from metaeval.study.store import now

    store.write_estimate(
        {
            "spec_sha256": spec.digest(),
            "measured": now(),
            "unit_seconds": [
                [r.world, r.criterion, r.seconds / r.units]
                for r in cost.table.itertuples(index=False)
                if r.units
            ],
            "load_seconds": {w: v[0] for w, v in cost.load_seconds.items()},
        }
    )


def saved_estimate(store, spec: StudySpec, plan: Plan) -> tuple[CostEstimate, str] | None:
    """The saved rates extrapolated over ``plan``'s tasks, and when they were measured; None
    when nothing was saved for this study file's text, or it does not cover every world and
    criterion left to run."""
    saved = store.read_estimate()
    if not saved or saved.get("spec_sha256") != spec.digest():
        return None
    try:
        rate = {(w, c): float(s) for w, c, s in saved["unit_seconds"]}
        load = {str(w): float(s) for w, s in saved["load_seconds"].items()}
        counts = pd.DataFrame(
            [(t.world, u.criterion) for t in plan.tasks for u in t.units],
            columns=["world", "criterion"],
        )
        table = counts.groupby(["world", "criterion"], sort=False).size().rename("units")
        table = table.reset_index()
        table["seconds"] = [rate[w, c] * n for w, c, n in table.itertuples(index=False)]
        loads = {
            w: (
                load[w],
                len({t.replicate for t in plan.tasks if t.world == w}),
                sum(t.world == w for t in plan.tasks),
            )
            for w in table["world"].unique()
        }
    except (KeyError, TypeError, ValueError):  # another plan's worlds, or a damaged file
        return None
    return CostEstimate(table, loads, 0.0), str(saved.get("measured", ""))


def _seconds(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def estimate_cost(spec: StudySpec, plan: Plan) -> CostEstimate:
    """Estimate the worker time of ``plan``'s tasks by timing probes (see the module docstring).

    Parameters
    ----------
    spec : StudySpec
    plan : Plan
        From :func:`~metaeval.study.make_plan`; only its tasks still to run are counted.

    Returns
    -------
    CostEstimate
    """
    from threadpoolctl import threadpool_limits

    start = time.perf_counter()
    with threadpool_limits(limits=1):  # as in the workers
        table, loads = _probe(spec, plan)
    return CostEstimate(table, loads, time.perf_counter() - start)


def _probe(spec: StudySpec, plan: Plan) -> tuple[pd.DataFrame, dict]:
    from metaeval.study.tasks import _load_plugins
    from metaeval.study.worlds import clear_cache

    _load_plugins(spec)
    by_world: dict[str, list[Task]] = {}
    for task in plan.tasks:
        by_world.setdefault(task.world, []).append(task)
    rows, loads = [], {}
    try:
        for world_id, tasks in by_world.items():
            world_rows, loads[world_id] = _probe_world(spec, world_id, tasks)
            rows += world_rows
    finally:
        clear_cache()
    table = (
        pd.DataFrame(rows, columns=["world", "criterion", "units", "seconds"])
        .groupby(["world", "criterion"], sort=False, as_index=False)
        .sum()
    )
    return table, loads


def _context(spec: StudySpec, world, cache: dict, level: str, level_cache: dict):
    """A context on a world's full tensor, with ``cache`` as the world's cache; at a damaged
    level (of the first degrader) its scores are the full ones (a damaged tensor costs the
    same to score)."""
    from metaeval.study.context import Context

    return Context(
        spec,
        dataclasses.replace(world, cache=cache),
        world.tensor,
        level=level,
        degrader="" if level == FULL else spec.degraders[0].id,
        trial=0,
        level_cache=level_cache,
    )


def _probe_world(spec: StudySpec, world_id: str, tasks: list[Task]) -> tuple[list, tuple]:
    """Rows of estimated seconds for one world's tasks, and (load seconds, instances, tasks)."""
    from metaeval.study.tasks import _degraded, compute_units
    from metaeval.study.worlds import load_world

    start = time.perf_counter()
    world = load_world(spec, world_id, 0)
    load = (time.perf_counter() - start, len({t.replicate for t in tasks}), len(tasks))
    # Scoring: each measure once; the scores are kept, as a worker keeps the world's.
    full: dict = {}
    score_s = {
        m: _seconds(_context(spec, world, {"full": full}, FULL, {}).full_scores, m)
        for m in spec.labels
    }
    # Degrading: one trial of each degrader (every level drawn), one level applied.
    degrade_s = {}
    for d in spec.degraders:
        start = time.perf_counter()
        sets = _degraded(spec, world, Task("probe", world_id, 0, d.id, 0, ()))
        draw = time.perf_counter() - start
        degrade_s[d.id] = (draw, _seconds(next(iter(sets.values())).apply, world.tensor))
    # One unit of each criterion as a task runs it (on every topic resample too), with its
    # scores ready: a first call warms up what a worker computes once per world (resamples,
    # full-judgment tests reused at every level), then the fastest of up to three calls is
    # kept, as the machine may be busy (a slow criterion is timed once: its time is less
    # noisy, and probing must stay quick). Each call starts from an empty cache of its level,
    # as a task does, and, at full judgments, without the tests that are the unit's own work.
    unit_s = {}
    labels = list(spec.labels)
    probed = {u.criterion for task in tasks for u in task.units}
    for cspec in spec.criteria:
        if cspec.id not in probed:
            continue
        crit = cspec.make()
        wanted = [(labels[0], labels[1 % len(labels)])] if crit.pairwise else labels[:1]
        cache: dict = {"full": full}
        timings = []
        while len(timings) < 4 and sum(timings) < 0.5:
            if crit.at_full:
                cache.pop("full_tests", None)
                ctx = _context(spec, world, cache, FULL, {})
            else:
                ctx = _context(spec, world, cache, "probe", dict(full))
            timings.append(_seconds(compute_units, crit, ctx.bind(cspec), wanted))
        unit_s[cspec.id] = min(timings[1:] or timings)
    rows = []
    for task in tasks:
        damaged = len([lv for lv in task.levels if lv != FULL])
        fixed = 0.0
        if task.degrader:
            draw, apply = degrade_s[task.degrader]
            fixed += draw + apply * damaged
        measures = {u.measure for u in task.units} | {u.other for u in task.units}
        fixed += damaged * sum(score_s[m] for m in measures if m)
        counts = pd.Series([u.criterion for u in task.units]).value_counts()
        for cid, n in counts.items():
            rows.append(
                {
                    "world": world_id,
                    "criterion": cid,
                    "units": int(n),
                    "seconds": n * unit_s[cid] + fixed * n / counts.sum(),
                }
            )
    return rows, load


__all__ = ["CostEstimate", "estimate_cost", "save_estimate", "saved_estimate"]
