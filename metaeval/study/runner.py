"""Running a study: plan what is missing, dispatch it, save every task as it finishes.

Two executors behind one seam, both yielding :class:`~metaeval.study.tasks.Outcome` objects in
the order tasks finish:

* **local**: joblib's loky process pool, ``Parallel(return_as="generator_unordered")``; with
  ``jobs=1`` the tasks run one after another in this process.
* **dask**: a ``dask.distributed`` cluster (``scheduler`` is its address, or a ``Client``),
  ``submit(..., key=task id, pure=False, retries=n)`` and ``as_completed``; TREC worlds are
  loaded once by the driver and scattered to the workers, simulated worlds are rebuilt on the
  workers from their seeds. Needs ``pip install "metaeval[dask]"``.

The driver alone writes, as outcomes arrive; SIGINT and SIGTERM stop the dispatching, shut the
workers down and keep every task already saved.

Before planning, the output folder is checked (:meth:`~metaeval.study.store.Store.check`: a
folder made under another seed refuses, unless ``replace`` discards it), and every process runs
the plugin files as they are now: a plugin edited since this process (or a reused worker)
imported it is imported again, so that the units its new content names are computed by its new
code.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from metaeval._validation import counted
from metaeval.study.plan import Plan, Task, make_plan
from metaeval.study.saved import StoreWarning
from metaeval.study.spec import SpecError, StudySpec, TrecWorld, file_digest
from metaeval.study.store import Store
from metaeval.study.tasks import Outcome, run_task
from metaeval.study.worlds import adopt_world, clear_cache, load_world


@dataclass
class RunSummary:
    """What one ``run_study`` call did."""

    out: Path
    planned: int
    done_before: int
    tasks: int
    completed: int = 0
    units: int = 0
    failed: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    task_seconds: float = 0.0
    criteria_seconds: float = 0.0
    failures: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # saved results that did not count

    @property
    def complete(self) -> bool:
        return not self.interrupted and self.failed == 0 and self.completed == self.tasks


def default_out(spec: StudySpec) -> Path:
    """``results/<study name>`` beside the current folder."""
    return Path("results") / spec.name


def data_digests(spec: StudySpec) -> dict[str, str]:
    """SHA-256 of every data file the study reads (with the files selecting a world's topics
    or runs), by path."""
    files = [p for w in spec.worlds for p in w.files()]
    files += [
        Path(v)
        for w in spec.worlds
        if isinstance(w, TrecWorld)
        for v in (w.topics, w.run_names)
        if isinstance(v, str) and Path(v).is_file()
    ]
    return {str(p): file_digest(p) for p in files}


def world_facts(spec: StudySpec) -> dict[str, dict]:
    """What the report says of each TREC world, read by the driver before the run (the report
    may be drawn where the data files are not): its topics, runs and judged grades.

    Its qrels and run files are parsed here, so that a malformed one stops the study in one
    line before any task runs (not once in every task); the parsed files stay in this
    process's cache, where the tasks it runs find them."""
    from metaeval.data import parse_ids
    from metaeval.study.worlds import _read

    facts = {}
    for w in spec.worlds:
        if not isinstance(w, TrecWorld):
            continue
        qrels = _read("qrels", (w.qrels,))
        _read("runs", tuple(w.runs))
        topics = list(qrels.topics)
        if w.topics is not None:
            topics = parse_ids(_listed(w.topics), available=topics, what="topic")
            qrels = qrels.subset(topics)
        runs = len(w.runs)
        if w.run_names is not None:
            runs = len(parse_ids(_listed(w.run_names), what="run"))
        if w.best_runs:
            runs = min(runs, dict(w.best_runs)["n"])
        grades = qrels.grades[qrels.grades >= 0]
        low, high = qrels.levels[[int(grades.min(initial=0)), int(grades.max(initial=0))]]
        facts[w.id] = {
            "topics": len(topics),
            "runs": runs,
            # grade values: ints for integer grades (as ever), floats for real-valued ones
            "grades": [int(g) if qrels.integer_grades else float(g) for g in (low, high)],
        }
    return facts


def _listed(value):
    return list(value) if isinstance(value, tuple) else value


# ------------------------------------------------------------------------------ plugins
def fresh_plugins(spec: StudySpec) -> dict[str, str]:
    """Make this process run the study's plugin files as they are now; returns their SHA-256
    by resolved path.

    :func:`~metaeval.measures.load_plugin` imports a file again when its content changed
    since this process (or a reused worker) imported it; the worlds this process keeps are
    then forgotten, as they cache scores computed by the old code.
    """
    from metaeval.measures import load_plugin

    reloaded = False
    for path in spec.plugins:
        try:
            reloaded |= load_plugin(path)
        except Exception as err:  # the user's file, edited since the study file was read
            raise SpecError(f"plugin file {path}: {type(err).__name__}: {err}") from None
    if reloaded:
        clear_cache()
    return {str(Path(p).resolve()): file_digest(Path(p)) for p in spec.plugins}


def _stale_plugins(spec: StudySpec, task: Task, plugins: dict[str, str]) -> Outcome | None:
    """Import the plugin files again where they changed (:func:`fresh_plugins`); a failed
    outcome when one is no longer what the plan was made from (its results would carry the
    units of the old content), None otherwise."""
    try:
        now = fresh_plugins(spec)
    except SpecError as err:
        return Outcome(task.id, error=str(err), traceback="")
    changed = sorted(p for p, d in plugins.items() if now.get(p) != d)
    if changed:
        return Outcome(
            task.id,
            error=f"plugin file {changed[0]} changed while the study ran: run the study again "
            "to compute the units of its new content",
            traceback="",
        )
    return None


def _with_plugins(spec: StudySpec, task: Task, plugins: dict[str, str]) -> Outcome:
    """Run a task with the plugin files the plan was made from."""
    return _stale_plugins(spec, task, plugins) or run_task(spec, task)


# ------------------------------------------------------------------------------ executors
def _local(
    spec: StudySpec, tasks: tuple[Task, ...], jobs: int, plugins: dict[str, str]
) -> Iterator[Outcome]:
    from joblib import Parallel, delayed

    if jobs == 1:
        for task in tasks:
            yield _with_plugins(spec, task, plugins)
        return
    driver = os.getpid()
    with Parallel(n_jobs=jobs, backend="loky", return_as="generator_unordered") as parallel:
        yield from parallel(delayed(_worker_task)(spec, task, driver, plugins) for task in tasks)


_WATCHED: list[int] = []


def _worker_task(spec: StudySpec, task: Task, driver: int, plugins: dict[str, str]) -> Outcome:
    """Worker side of the local executor: run the task, and leave if the driver dies.

    A driver killed with SIGKILL cannot stop its loky workers; they would wait for it forever
    (blocked on the result queue), holding their worlds in memory. A watchdog thread ends the
    worker once its parent is no longer the driver.
    """
    if not _WATCHED and os.getppid() == driver:
        _WATCHED.append(driver)

        def watch() -> None:
            while os.getppid() == driver:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, name="metaeval-driver-watchdog", daemon=True).start()
    return _with_plugins(spec, task, plugins)


def _run_with_world(spec: StudySpec, task: Task, world, plugins: dict[str, str]) -> Outcome:
    """Worker side of the dask executor: adopt the scattered world, then run the task."""

    stale = _stale_plugins(spec, task, plugins)  # first: a re-import forgets the worlds
    if stale is not None:
        return stale
    if world is not None:
        adopt_world(spec, world)
    return run_task(spec, task)


class SchedulerError(ConnectionError):
    """The Dask scheduler given by address could not be reached."""


def _dask(
    spec: StudySpec, tasks: tuple[Task, ...], scheduler, retries: int, plugins: dict[str, str]
) -> Iterator[Outcome]:
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise ImportError(
            'the dask executor needs dask.distributed: pip install "metaeval[dask]"'
        ) from None
    if isinstance(scheduler, Client):
        client = scheduler
    else:
        try:
            client = Client(scheduler)
        except (OSError, ValueError) as err:  # unreachable, timed out, or a malformed address
            raise SchedulerError(f"cannot use the Dask scheduler {scheduler} ({err})") from err
    try:
        scattered = {}
        for task in tasks:
            w = spec.world(task.world)
            key = (task.world, task.replicate)
            if isinstance(w, TrecWorld) and key not in scattered:
                scattered[key] = client.scatter(load_world(spec, *key), broadcast=True)
        owner, futures = {}, []
        for task in tasks:
            fut = client.submit(
                _run_with_world,
                spec,
                task,
                scattered.get((task.world, task.replicate)),
                plugins,
                key=f"metaeval-{spec.name}-{task.id}",
                pure=False,
                retries=retries,
            )
            owner[fut.key] = task
            futures.append(fut)
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except Exception as err:  # the worker died (e.g. KilledWorker after retries)
                yield Outcome(
                    owner[fut.key].id,
                    error=f"{type(err).__name__}: {err}",
                    traceback="the task's worker failed; see the dask logs",
                )
    finally:
        if client is not scheduler:
            client.close()


# ------------------------------------------------------------------------------ progress
class _Progress:
    """A rich progress bar on a terminal, plain lines otherwise, nothing when quiet.

    With the seconds each task is estimated to take (timed by ``metaeval study plan``), the
    bar and the time left follow the work done rather than the number of tasks (tasks of one
    study differ in cost by orders of magnitude).
    """

    def __init__(self, total: int, resumed: int, quiet: bool, weights: dict | None = None):
        self.total, self.resumed, self.quiet = total, resumed, quiet
        self.weights = weights if weights and sum(weights.values()) > 0 else {}
        self.work = sum(self.weights.values()) if self.weights else float(total)
        self.done = self.failed = 0
        self.work_done = 0.0
        self.start = time.monotonic()
        self._last_line = 0.0
        self._bar = None
        if not quiet and sys.stderr.isatty():
            from rich.progress import (
                BarColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("[bold]tasks"),
                BarColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                transient=False,
            )
            self._id = self._bar.add_task("tasks", total=self.work, status=self._status())

    def _status(self) -> str:
        return (
            f"{self.done + self.failed}/{self.total}, failed {self.failed}, resumed "
            f"{self.resumed} units"
        )

    def __enter__(self):
        if self._bar is not None:
            self._bar.start()
        elif not self.quiet:
            print(
                f"{counted(self.total, 'task')} to run ({counted(self.resumed, 'unit')} "
                "already saved)",
                file=sys.stderr,
                flush=True,
            )
        return self

    def update(self, ok: bool, task_id: str = "") -> None:
        self.done += ok
        self.failed += not ok
        self.work_done += self.weights.get(task_id, 0.0) if self.weights else 1.0
        if self._bar is not None:
            self._bar.update(self._id, completed=self.work_done, status=self._status())
            return
        now = time.monotonic()
        finished = self.done + self.failed
        if not self.quiet and (now - self._last_line > 10 or finished == self.total):
            self._last_line = now
            rate = self.work_done / max(now - self.start, 1e-9)
            # at least 0: the weights' sum can fall short of the work done by a rounding
            eta = max(self.work - self.work_done, 0.0) / rate if rate > 0 else float("nan")
            print(
                f"tasks {finished}/{self.total} done, {self.failed} failed, ETA {eta:.0f} s",
                file=sys.stderr,
                flush=True,
            )

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.stop()
        return False


@contextmanager
def _sigterm_as_interrupt():
    """SIGTERM stops a study like Ctrl-C does (finished tasks are kept)."""

    def handler(signum, frame):
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _analytic_claims(spec: StudySpec, store: Store) -> None:
    """Compute the analytic claims (constructed lists; milliseconds) and save them."""
    import pandas as pd

    from metaeval.study.analytic import run_check

    frames = [
        run_check(c.id, c.check_dict()) for c in spec.claims if c.check_dict()["kind"] == "analytic"
    ]
    if frames:
        store.write_claims(pd.concat(frames, ignore_index=True))


# ------------------------------------------------------------------------------ the run
def run_study(
    spec: StudySpec,
    out: str | Path | None = None,
    *,
    jobs: int = 1,
    scheduler=None,
    retries: int = 1,
    quiet: bool = False,
    allow_version_change: bool = False,
    replace: bool = False,
    plan: Plan | None = None,
) -> RunSummary:
    """Run (or resume) a study, saving each task as it finishes.

    Parameters
    ----------
    spec : StudySpec
        From :func:`~metaeval.study.load_spec`.
    out : str or Path, optional
        The output folder (default ``results/<study name>``). Units already saved there are
        not recomputed; a saved file found missing or damaged is named in a
        :class:`~metaeval.study.saved.StoreWarning` and its units are recomputed.
    jobs : int
        Worker processes on this machine (joblib loky); 1 runs in this process.
    scheduler : str or dask.distributed.Client, optional
        A Dask scheduler address (or client): run on that cluster instead.
    retries : int
        Dask only: times a task is resubmitted when its worker dies.
    quiet : bool
        No progress output.
    allow_version_change : bool
        Add to results made by another metaeval version.
    replace : bool
        Discard the results saved in ``out`` first (refused for a folder that is not empty
        and holds no study), and run afresh.

    Returns
    -------
    RunSummary
        Also on Ctrl-C / SIGTERM, with ``interrupted=True`` (finished tasks are saved).

    Raises
    ------
    StoreError
        When ``out`` holds results that cannot be added to: made with another seed, for
        another study, by another metaeval version, or with a manifest that cannot be read.
    """
    from metaeval._warnings import warn
    from metaeval.study.estimate import saved_estimate

    out = Path(out) if out is not None else default_out(spec)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    store = Store(out)
    start = time.perf_counter()
    if replace:
        store.discard()
    store.check(spec, allow_version_change=allow_version_change)  # before any work
    plugins = fresh_plugins(spec)
    saved = store.saved()
    if plan is None:
        plan = make_plan(spec, saved.done)
    planned = {u.id for u in plan.units}
    notices = saved.messages(running=True, planned=planned)
    unused = saved.unused(planned)
    if unused:
        notices.append(f"{out}: {unused}")
    for line in notices:
        warn(line, StoreWarning)
    timed = saved_estimate(store, spec, plan)  # by ``metaeval study plan``, if it ran here
    weights = timed[0].task_seconds(plan) if timed is not None else None
    executor = "dask" if scheduler is not None else f"loky x{jobs}"
    store.open(
        spec,
        plan,
        data=data_digests(spec),
        worlds=world_facts(spec),
        allow_version_change=allow_version_change,
        executor=executor,
        saved=saved,
    )
    summary = RunSummary(
        out=out,
        planned=plan.n_units,
        done_before=plan.n_done,
        tasks=len(plan.tasks),
        notices=notices,
    )
    by_id = {t.id: t for t in plan.tasks}
    shown: set[tuple] = set()
    outcomes = (
        _dask(spec, plan.tasks, scheduler, retries, plugins)
        if scheduler is not None
        else _local(spec, plan.tasks, jobs, plugins)
    )
    # SIGTERM stops the study like Ctrl-C from here to the end, so a signal that arrives
    # between two tasks, or after the last, is never the default (an abrupt exit).
    with _sigterm_as_interrupt():
        try:
            with _Progress(len(plan.tasks), plan.n_done, quiet, weights) as bar:
                for outcome in outcomes:
                    task = by_id[outcome.task_id]
                    for caught in outcome.warnings:  # once per study, however many workers
                        if caught not in shown:
                            shown.add(caught)
                            warn(caught[1], caught[0])
                    summary.task_seconds += outcome.seconds
                    summary.criteria_seconds += outcome.criteria_seconds
                    if outcome.ok:
                        store.write_task(task, outcome.tables)
                        summary.completed += 1
                        summary.units += len(task.units)
                    else:
                        store.write_failure(task, outcome.error, outcome.traceback)
                        summary.failed += 1
                        summary.failures.append(f"{task.id}: {outcome.error}")
                    bar.update(outcome.ok, task.id)
            _analytic_claims(spec, store)
        except KeyboardInterrupt:
            summary.interrupted = True
        finally:
            close = getattr(outcomes, "close", None)
            if close is not None:
                with warnings.catch_warnings():
                    # joblib's advice about the tasks it cancels: stopping them is the point
                    warnings.filterwarnings("ignore", message=".*still being processed")
                    close()
            summary.seconds = time.perf_counter() - start
            store.finish(
                {
                    "completed": summary.completed,
                    "units": summary.units,
                    "failed": summary.failed,
                    "interrupted": summary.interrupted,
                    "seconds": round(summary.seconds, 3),
                    "task_seconds": round(summary.task_seconds, 3),
                    "criteria_seconds": round(summary.criteria_seconds, 3),
                }
            )
    return summary


__all__ = [
    "run_study",
    "RunSummary",
    "SchedulerError",
    "default_out",
    "data_digests",
    "fresh_plugins",
]
