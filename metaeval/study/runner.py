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

from metaeval.study.plan import Plan, Task, make_plan
from metaeval.study.spec import StudySpec, TrecWorld, file_digest
from metaeval.study.store import Store
from metaeval.study.tasks import Outcome, load_world, run_task


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

    @property
    def complete(self) -> bool:
        return not self.interrupted and self.failed == 0 and self.completed == self.tasks


def default_out(spec: StudySpec) -> Path:
    """``results/<study name>`` beside the current folder."""
    return Path("results") / spec.name


def data_digests(spec: StudySpec) -> dict[str, str]:
    """SHA-256 of every data file the study reads, by path."""
    return {str(p): file_digest(p) for w in spec.worlds for p in w.files()}


# ------------------------------------------------------------------------------ executors
def _local(spec: StudySpec, tasks: tuple[Task, ...], jobs: int) -> Iterator[Outcome]:
    from joblib import Parallel, delayed

    if jobs == 1:
        for task in tasks:
            yield run_task(spec, task)
        return
    driver = os.getpid()
    with Parallel(n_jobs=jobs, backend="loky", return_as="generator_unordered") as parallel:
        yield from parallel(delayed(_worker_task)(spec, task, driver) for task in tasks)


_WATCHED: list[int] = []


def _worker_task(spec: StudySpec, task: Task, driver: int) -> Outcome:
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
    return run_task(spec, task)


def _run_with_world(spec: StudySpec, task: Task, world) -> Outcome:
    """Worker side of the dask executor: adopt the scattered world, then run the task."""
    from metaeval.study import tasks as task_module

    if world is not None:
        task_module.adopt_world(spec, world)
    return run_task(spec, task)


def _dask(spec: StudySpec, tasks: tuple[Task, ...], scheduler, retries: int) -> Iterator[Outcome]:
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise ImportError(
            'the dask executor needs dask.distributed: pip install "metaeval[dask]"'
        ) from None
    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
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
    """A rich progress bar on a terminal, plain lines otherwise, nothing when quiet."""

    def __init__(self, total: int, resumed: int, quiet: bool):
        self.total, self.resumed, self.quiet = total, resumed, quiet
        self.done = self.failed = 0
        self.start = time.monotonic()
        self._last_line = 0.0
        self._bar = None
        if not quiet and sys.stderr.isatty():
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("[bold]tasks"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                transient=False,
            )
            self._id = self._bar.add_task("tasks", total=total, status=self._status())

    def _status(self) -> str:
        return f"failed {self.failed}, resumed {self.resumed} units"

    def __enter__(self):
        if self._bar is not None:
            self._bar.start()
        elif not self.quiet:
            print(
                f"{self.total} task(s) to run ({self.resumed} unit(s) already saved)",
                file=sys.stderr,
                flush=True,
            )
        return self

    def update(self, ok: bool) -> None:
        self.done += ok
        self.failed += not ok
        if self._bar is not None:
            self._bar.update(self._id, completed=self.done + self.failed, status=self._status())
            return
        now = time.monotonic()
        finished = self.done + self.failed
        if not self.quiet and (now - self._last_line > 10 or finished == self.total):
            self._last_line = now
            rate = finished / max(now - self.start, 1e-9)
            eta = (self.total - finished) / rate if rate > 0 else float("nan")
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
    plan: Plan | None = None,
) -> RunSummary:
    """Run (or resume) a study, saving each task as it finishes.

    Parameters
    ----------
    spec : StudySpec
        From :func:`~metaeval.study.load_spec`.
    out : str or Path, optional
        The output folder (default ``results/<study name>``). Units already saved there are
        not recomputed.
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

    Returns
    -------
    RunSummary
        Also on Ctrl-C / SIGTERM, with ``interrupted=True`` (finished tasks are saved).
    """
    out = Path(out) if out is not None else default_out(spec)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    store = Store(out)
    start = time.perf_counter()
    if plan is None:
        plan = make_plan(spec, store.done_units() if store.exists() else set())
    executor = "dask" if scheduler is not None else f"loky x{jobs}"
    store.open(
        spec,
        plan,
        data=data_digests(spec),
        allow_version_change=allow_version_change,
        executor=executor,
    )
    summary = RunSummary(
        out=out, planned=plan.n_units, done_before=plan.n_done, tasks=len(plan.tasks)
    )
    by_id = {t.id: t for t in plan.tasks}
    outcomes = (
        _dask(spec, plan.tasks, scheduler, retries)
        if scheduler is not None
        else _local(spec, plan.tasks, jobs)
    )
    # SIGTERM stops the study like Ctrl-C from here to the end, so a signal that arrives
    # between two tasks, or after the last, is never the default (an abrupt exit).
    with _sigterm_as_interrupt():
        try:
            with _Progress(len(plan.tasks), plan.n_done, quiet) as bar:
                for outcome in outcomes:
                    task = by_id[outcome.task_id]
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
                    bar.update(outcome.ok)
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


__all__ = ["run_study", "RunSummary", "default_out", "data_digests"]
