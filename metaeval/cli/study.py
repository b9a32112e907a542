"""``metaeval study plan | run | status``: run a study file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from metaeval._validation import counted
from metaeval.cli._common import Interrupted, fail, writable

app = typer.Typer(
    help="Run a study: a TOML file describing worlds x degraders x levels x "
    "trials x measures x criteria.",
    no_args_is_help=True,
)

SpecArgument = Annotated[
    Path, typer.Argument(help="The study file (TOML).", exists=True, dir_okay=False)
]
OutOption = Annotated[
    Path | None,
    typer.Option("--out", help="Output folder (default: results/<study name>).", file_okay=False),
]
ReplaceOption = Annotated[
    bool,
    typer.Option(
        "--replace",
        help="Discard the results saved in the output folder (made with another seed, say) "
        "and run afresh; other files there, such as a report, are kept.",
    ),
]
WorldOption = Annotated[
    list[str] | None,
    typer.Option(
        "--world",
        metavar="ID=QRELS,RUNS",
        help="ID=QRELS,RUNS[,key=value...]: run the study with world ID's data replaced, "
        "its criteria and claims unchanged (keys: as=NEW_ID to rename it in the results and "
        "the report, topics, run_names, rel, top_grades, depth, ties, runs for more run "
        "files). "
        "Repeatable.",
    ),
]
WorldsFileOption = Annotated[
    Path | None,
    typer.Option(
        "--worlds",
        metavar="FILE",
        help="A TOML file of \\[\\[worlds]] tables, each with replaces = ID and the world that "
        "takes its place (paths relative to the file).",
        exists=True,
        dir_okay=False,
    ),
]


def load_study(spec_path: Path, world: list[str] | None, worlds_file: Path | None, quiet=False):
    """The study file, with the worlds ``--world`` and ``--worlds`` replace (each replaced
    world is named on stderr with what it kept from the file, unless ``quiet``)."""
    from metaeval.study import load_spec
    from metaeval.study.spec.retarget import parse_world_option, read_worlds_file

    changes = [parse_world_option(w) for w in world or []]
    if worlds_file is not None:
        changes += read_worlds_file(worlds_file)
    spec = load_spec(spec_path, changes=changes)
    if not quiet:
        for note in spec.world_notes:
            typer.echo(note, err=True)
    return spec


def run_checked(spec, out: Path | None, **kwargs):
    """``run_study`` with the errors only the command line can name: an output folder that
    cannot be written (``--out``), a scheduler that cannot be reached (``--scheduler``), a
    world too large for memory. A run stopped by Ctrl-C or SIGTERM raises
    :class:`Interrupted` (every finished task is saved)."""
    from metaeval.study import run_study
    from metaeval.study.runner import SchedulerError

    scheduler = kwargs.get("scheduler")
    if out is not None:
        writable(out, "--out", folder=True)
    try:
        summary = run_study(spec, out, **kwargs)
    except SchedulerError as err:
        fail(f"--scheduler {scheduler}: cannot use the Dask scheduler ({err.__cause__})")
    except MemoryError as err:
        fail(_out_of_memory(spec, err))
    if summary.interrupted:
        raise Interrupted(
            f"interrupted: {counted(summary.completed, 'task')} saved in {summary.out}; run the "
            "same command to resume"
        )
    return summary


def read_study_folder(directory: Path) -> tuple[dict, pd.DataFrame]:
    """The manifest and the saved units of a study's output folder, or a one-line error when
    it is not one or cannot be read."""
    from metaeval.study import Store, load_results

    store = Store(directory)
    if not store.exists():
        fail(f"{directory} is not a study output folder (no manifest.json)")
    try:
        manifest = store.read_manifest()
        if "study" not in manifest:
            fail(f"{store.manifest_path} is not a study manifest (no study name in it)")
        return manifest, load_results(directory, "units")
    except (ValueError, OSError) as err:
        fail(in_folder(directory, err))


def in_folder(directory: Path, err: BaseException) -> str:
    """An error about a file of a study's output folder, naming the folder: a StoreError names
    its file already, anything else (a corrupt parquet file) may not."""
    from metaeval.study.saved import StoreError

    return str(err) if isinstance(err, StoreError) else f"{directory}: {err}"


def _out_of_memory(spec, err: MemoryError) -> str:
    name = spec.path.name if spec.path else spec.name
    return (
        f"{name}: out of memory while building a world ({err}); a world's n_topics, "
        "n_systems or runs are too large for this machine"
    )


def _counts(plan, spec) -> pd.DataFrame:
    """Units planned and done per criterion and degrader."""
    frame = plan.frame()
    todo = {u.id for t in plan.tasks for u in t.units}
    frame["done"] = ~frame["unit"].isin(todo)
    frame["degrader"] = frame["degrader"].replace("", "(full judgments)")
    table = frame.groupby(["criterion", "degrader"], sort=False).agg(
        units=("unit", "size"), done=("done", "sum")
    )
    table["to_run"] = table["units"] - table["done"]
    return table.reset_index()


def plan(
    spec_path: SpecArgument,
    out: OutOption = None,
    estimate: Annotated[
        bool,
        typer.Option(
            help="Estimate the time left by timing one unit of each criterion on each world "
            "(loads the worlds), unless earlier runs in the output folder measured it."
        ),
    ] = True,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, help="Workers to estimate the wall time for.")
    ] = 1,
    world: WorldOption = None,
    worlds_file: WorldsFileOption = None,
) -> None:
    """What a study will compute: units and tasks per criterion, what is already saved, and
    an estimate of the time it will take."""
    from metaeval.study import Store, default_out, make_plan
    from metaeval.study.saved import StoreError

    spec = load_study(spec_path, world, worlds_file)
    out = out or default_out(spec)
    store = Store(out)
    try:
        store.check(spec)
        usable = store.exists()
    except StoreError as err:  # the run would refuse: plan as if nothing were saved
        refusal, usable = str(err), False
    else:
        refusal = ""
    saved = store.saved() if usable else None
    the_plan = make_plan(spec, saved.done if saved is not None else set())
    typer.echo(
        f"study {spec.name}: {counted(len(spec.worlds), 'world')}, "
        f"{counted(len(spec.degraders), 'degrader')}, {counted(len(spec.measures), 'measure')}, "
        f"{counted(len(spec.criteria), 'criterion', 'criteria')}"
    )
    typer.echo(_counts(the_plan, spec).to_string(index=False))
    typer.echo(
        f"\n{the_plan.n_units} units, {the_plan.n_done} saved in {out}; "
        f"{counted(len(the_plan.tasks), 'task')} to run"
    )
    if refusal:
        typer.echo(f"the run will refuse: {refusal}")
    if saved is not None:
        for line in folder_lines(saved, {u.id for u in the_plan.units}):
            typer.echo(line)
    if not the_plan.tasks:
        return
    measured = _measured(store, the_plan) if usable else 0.0
    if measured:
        typer.echo(
            f"estimated time left: {measured:.0f} s of worker time, about "
            f"{measured / jobs:.0f} s with {counted(jobs, 'worker')} (the speed of earlier runs "
            "here)"
        )
        return
    from metaeval.study.estimate import estimate_cost, save_estimate, saved_estimate

    reused = saved_estimate(store, spec, the_plan)
    if reused is not None:
        cost, when = reused
        how = f"timed by an earlier plan, {when}"
    elif estimate:
        try:
            cost = estimate_cost(spec, the_plan)
        except MemoryError as err:
            fail(_out_of_memory(spec, err))
        save_estimate(store, spec, cost)
        how = (
            f"timed one unit of each criterion on each world in {cost.probe_seconds:.1f} s, "
            f"saved in {store.estimate_path.name}"
        )
    else:
        return
    typer.echo(
        f"estimated time: {cost.seconds:.0f} s of worker time, about "
        f"{cost.wall_seconds(jobs):.0f} s with {counted(jobs, 'worker')} ({how}; a rough guide)"
    )


def folder_lines(saved, planned: set[str]) -> list[str]:
    """What an output folder holds that does not count: a line per kind of missing or
    damaged file, and one for the saved units the study file no longer plans."""
    unused = saved.unused(planned)
    return saved.messages(running=False, planned=planned) + ([unused] if unused else [])


def _measured(store, the_plan) -> float:
    """Worker seconds left at the speed of the tasks already run in this folder (0: unknown)."""
    if not store.exists():
        return 0.0
    runs = store.read_manifest().get("runs", [])
    secs = sum(r.get("task_seconds") or 0 for r in runs)
    units = sum(r.get("units") or 0 for r in runs)
    if secs <= 0 or units <= 0:
        return 0.0
    return secs / units * the_plan.n_missing


def run(
    spec_path: SpecArgument,
    out: OutOption = None,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, help="Worker processes on this machine.")
    ] = 1,
    scheduler: Annotated[
        str | None,
        typer.Option(
            help="Address of a Dask scheduler (tcp://host:8786): run the tasks on that cluster."
        ),
    ] = None,
    retries: Annotated[
        int, typer.Option(min=0, help="Dask: resubmissions of a task whose worker died.")
    ] = 1,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    allow_version_change: Annotated[
        bool, typer.Option(help="Add to results made by another metaeval version.")
    ] = False,
    replace: ReplaceOption = False,
    world: WorldOption = None,
    worlds_file: WorldsFileOption = None,
) -> None:
    """Run a study, or resume it: units already saved in the output folder are not
    recomputed (a saved file found missing or damaged is recomputed, and named). Ctrl-C
    stops it; every finished task is kept."""
    summary = run_checked(
        load_study(spec_path, world, worlds_file, quiet),
        out,
        jobs=jobs,
        scheduler=scheduler,
        retries=retries,
        quiet=quiet,
        allow_version_change=allow_version_change,
        replace=replace,
    )
    where = summary.out
    if not quiet:
        typer.echo(
            f"{counted(summary.completed, 'task')} done, {summary.failed} failed, "
            f"{counted(summary.done_before, 'unit')} already saved, in {summary.seconds:.1f} s "
            f"-> {where}",
            err=True,
        )
    if summary.failed:
        for line in summary.failures[:5]:
            typer.echo(f"failed: {line}", err=True)
        typer.echo(
            f"{counted(summary.failed, 'task')} failed (details in {where}/failures); run the "
            "same command to retry them",
            err=True,
        )
        raise typer.Exit(1)


def status(
    out: Annotated[
        Path, typer.Argument(help="A study's output folder.", exists=True, file_okay=False)
    ],
) -> None:
    """How far a study is, from its output folder alone: what is done is what the report
    reads, and a saved file that is missing or damaged is named."""
    from metaeval.study import Store
    from metaeval.study.saved import StoreError, read_table

    store = Store(out)
    if not store.exists():
        fail(f"{out} is not a study output folder (no manifest.json)")
    try:
        manifest = store.read_manifest()
        if "study" not in manifest:
            fail(f"{store.manifest_path} is not a study manifest (no study name in it)")
        saved = store.saved()
        planned = store.planned()
        if planned is None or not {"unit", "criterion"} <= set(planned.columns):
            # no plan (a folder from before plans were saved): what is saved was planned
            planned = read_table(out, "units", columns=["unit", "criterion"])
    except (StoreError, OSError) as err:
        fail(in_folder(out, err))
    planned = planned.assign(done=planned["unit"].isin(saved.done))
    typer.echo(
        f"study {manifest.get('study')} (seed {manifest.get('seed')}), made by metaeval "
        f"{manifest.get('versions', {}).get('metaeval')}"
    )
    by = planned.groupby("criterion", sort=False)["done"].agg(["sum", "size"])
    for criterion, row in by.iterrows():
        typer.echo(f"  {criterion}: {int(row['sum'])}/{int(row['size'])} units")
    failures = store.failures()
    last = (manifest.get("runs") or [{}])[-1]
    end = last.get("end") or "unfinished (running, or killed)"
    done = int(planned["done"].sum())
    incomplete = "" if done == len(planned) else " (incomplete)"
    typer.echo(
        f"{done}/{len(planned)} units saved{incomplete}; {counted(len(failures), 'failed task')}; "
        f"last run {last.get('start')} -> {end}"
    )
    for line in folder_lines(saved, set(planned["unit"])):
        typer.echo(f"  {line}")
    for f in failures[:5]:
        typer.echo(f"  failed {f['task']} ({counted(f['attempts'], 'attempt')}): {f['error']}")


app.command("plan")(plan)
app.command("run")(run)
app.command("status")(status)
