"""``metaeval simulate`` (synthetic worlds), ``metaeval calibrate`` (a world fitted to a
collection) and ``metaeval degrade`` (damaged judgments)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from metaeval._validation import counted, whole_as_int
from metaeval.cli._common import (
    QrelsArgument,
    RunsArgument,
    SeedOption,
    fail,
    option_error,
    resolve_seed,
    writable,
)


def _parse_param(text: str) -> tuple[str, object]:
    if "=" not in text:
        fail(f"--param {text!r}: expected NAME=VALUE")
    name, value = text.split("=", 1)
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    if isinstance(parsed, list):
        parsed = tuple(parsed)
    return name.strip(), parsed


def _parse_params(texts: list[str] | None) -> tuple[dict, dict]:
    """``--param NAME=VALUE`` options as {name: value} and {name: the text given}."""
    values: dict = {}
    given: dict = {}
    for text in texts or []:
        name, value = _parse_param(text)
        if name in values:
            fail(f"--param {name} is given twice ({given[name]}, {text}): give each parameter once")
        values[name], given[name] = value, text
    return values, given


def simulate(
    preset: Annotated[
        str,
        typer.Option(
            help="World preset: trec_like, dl_like, few_highly_relevant, known_item, null."
        ),
    ] = "trec_like",
    topics: Annotated[int, typer.Option(help="Number of topics.", min=1)] = 50,
    systems: Annotated[int, typer.Option(help="Number of systems (runs).", min=1)] = 40,
    seed: SeedOption = None,
    out: Annotated[Path, typer.Option(help="Output folder.", file_okay=False)] = Path("world"),
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            help="Override a model parameter, NAME=VALUE (JSON value), repeatable, "
            "e.g. --param pool_depth=20 --param 'grade_probs=[0.8,0.2]'.",
        ),
    ] = None,
) -> None:
    """Generate a synthetic test collection with known truth.

    Writes OUT/truth.qrels (every candidate document's true grade), OUT/qrels.txt (the official
    depth-k pool), OUT/runs/*.run and OUT/world.json (parameters, seed, teams).
    """
    from metaeval.data import write_qrels, write_runs
    from simulators import make_world
    from simulators.worlds import PRESETS

    if preset not in PRESETS:
        fail(f"--preset must be one of {sorted(PRESETS)}, got {preset!r}")
    overrides, given = _parse_params(param)
    writable(out, "--out", folder=True)
    stale = _stale_runs(out)
    seed = resolve_seed(seed)
    try:
        world = make_world(preset, n_topics=topics, n_systems=systems, rng=seed, **overrides)
    except MemoryError as err:
        fail(f"--topics {topics} x --systems {systems}: not enough memory ({err}); use fewer")
    except (ValueError, TypeError) as err:
        from metaeval._validation import ParamError

        if isinstance(err, ParamError) and err.param in overrides:
            fail(f"--param {given[err.param]}: {err}")
        if isinstance(err, ParamError) and err.param in PRESETS[preset].to_dict():
            # a parameter left at the preset's value, at odds with one given (doc_share +
            # team_share >= 1): name every --param, the error names the other parameter
            fail(f"--param {', '.join(given.values())}: {err}")
        raise
    write_qrels(world.truth, out / "truth.qrels")
    write_qrels(world.qrels, out / "qrels.txt")
    written = write_runs(world.runs, out / "runs")
    for path in stale - {p.resolve() for p in written}:  # an earlier world's runs, not this one's
        path.unlink()
    record = {"preset": preset, "seed": seed, **world.to_json()}
    (out / "world.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    typer.echo(f"{world!r} -> {out}")


def _stale_runs(out: Path) -> set[Path]:
    """Run files of an earlier world in ``out/runs`` (replaced by this one's, never mixed with
    them); a folder holding other run files is refused."""
    old = {p.resolve() for p in (out / "runs").glob("*.run")}
    if old and not (out / "world.json").is_file():
        fail(
            f"--out {out}: runs/ already holds run files that metaeval simulate did not write; "
            "choose a new folder"
        )
    return old


def _read_groups(path: Path | None, names: list[str]) -> dict[str, str]:
    """The team of every run of ``names``: from the ``--groups`` file, or guessed from the
    names."""
    from metaeval._validation import shown_ids
    from simulators.calibrate import teams_from_names

    if path is None:
        return teams_from_names(names)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        fail(f"--groups {path}: not UTF-8 text ({err.reason} at byte {err.start})")
    groups = {}
    if path.suffix == ".json":
        try:
            data = json.loads(text)
            data = data.get("groups", data)
            groups = {str(k): str(v) for k, v in data.items()}
        except (json.JSONDecodeError, AttributeError) as err:
            fail(
                f"--groups {path}: expected a JSON object run -> team (or world.json), "
                f"got an error: {err}"
            )
    else:
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            parts = line.split()
            if len(parts) != 2:
                fail(f"{path}, line {n}: expected 'run team', got {line!r}")
            groups[parts[0]] = parts[1]
    missing = [name for name in names if name not in groups]
    if missing:
        fail(f"--groups {path}: has no team for run(s) {shown_ids(missing)}")
    return groups


#: The options of ``degrade`` each method uses.
_APPLIES = {
    "stratified": ("--rate",),
    "uniform": ("--rate",),
    "assessor_noise": ("--rate",),
    "pool_depth": ("--depth", "--runs"),
    "leave_one_group_out": ("--depth", "--group", "--groups", "--runs"),
    "fewer_teams": ("--depth", "--k", "--groups", "--runs"),
}
#: A degrader's parameter, as its errors name it, and the option that sets it.
_PARAM_OPTIONS = {
    "rates": "--rate",
    "depths": "--depth",
    "depth": "--depth",
    "k": "--k",
    "teams": "--group",
    "groups": "--groups",
}


def degrade(
    qrels: Annotated[
        Path, typer.Argument(help="TREC qrels file to degrade.", exists=True, dir_okay=False)
    ],
    method: Annotated[
        str,
        typer.Option(
            help="stratified, uniform, pool_depth, "
            "leave_one_group_out, fewer_teams, assessor_noise."
        ),
    ] = "stratified",
    rate: Annotated[
        float | None,
        typer.Option(
            help="Sampling rate in percent (stratified, "
            "uniform) or noise probability in [0, 1] "
            "(assessor_noise)."
        ),
    ] = None,
    depth: Annotated[
        int | None,
        typer.Option(
            help="Pool depth (pool_depth; pool depth of leave_one_group_out / fewer_teams)."
        ),
    ] = None,
    k: Annotated[int | None, typer.Option(help="Number of teams (fewer_teams).")] = None,
    group: Annotated[str | None, typer.Option(help="Team left out (leave_one_group_out).")] = None,
    groups: Annotated[
        Path | None,
        typer.Option(
            help="Teams: 'run team' lines, or world.json; default: guessed from run names.",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    runs: Annotated[
        list[Path] | None,
        typer.Option(
            "--runs", help="Run files (pooling methods); repeatable.", exists=True, dir_okay=False
        ),
    ] = None,
    seed: SeedOption = None,
    out: Annotated[Path, typer.Option(help="Output qrels file.", dir_okay=False)] = Path(
        "degraded.qrels"
    ),
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            help="Another option of the degrader, NAME=VALUE (JSON value), repeatable, e.g. "
            "--param strata=grade --param rounding=round --param rel=2 (stratified).",
        ),
    ] = None,
) -> None:
    """Write a reduced (or perturbed) judgment set: one level, one trial."""
    from metaeval.data import read_qrels, read_runs, write_qrels
    from simulators.degraders import make_degrader, registered_degraders

    if method not in registered_degraders():
        fail(f"--method must be one of {sorted(registered_degraders())}, got {method!r}")
    given = {"--rate": rate, "--depth": depth, "--k": k, "--group": group, "--groups": groups}
    given["--runs"] = runs or None
    for option, value in given.items():
        users = [m for m, opts in _APPLIES.items() if option in opts]
        if value is not None and method not in users:
            fail(f"{option} does not apply to --method {method}; it is for {', '.join(users)}")
    writable(out, "--out")
    for given_path in (qrels, *(runs or []), groups):
        # the degraded judgments would silently replace the file they were drawn from
        if given_path is not None and out.exists() and out.samefile(given_path):
            fail(f"--out {out}: is an input file ({given_path}); write to another file")
    judgments = read_qrels(qrels)
    runset = read_runs(runs) if runs else None
    names = runset.names if runset is not None else []
    params, texts = _parse_params(param)
    for name in params.keys() & _PARAM_OPTIONS.keys():
        fail(f"--param {texts[name]}: {name} is set by its own option ({_PARAM_OPTIONS[name]})")
    level = None
    if method in ("stratified", "uniform"):
        if rate is None:
            fail(f"--rate is required for {method} (percent of judgments kept, e.g. 10)")
        params["rates"] = (whole_as_int(rate),)
    elif method == "assessor_noise":
        if rate is None:
            fail("--rate is required for assessor_noise (probability of a grade change)")
        params["rates"] = (rate,)
    elif method == "pool_depth":
        if depth is None:
            fail("--depth is required for pool_depth")
        params["depths"] = (depth,)
    elif method in ("leave_one_group_out", "fewer_teams"):
        team_of = _read_groups(groups, names)
        params["groups"] = team_of
        if depth is not None:
            params["depth"] = depth
        if method == "fewer_teams":
            if k is None:
                fail("--k is required for fewer_teams")
            params["k"] = (k,)
        else:
            if group is None:
                fail(
                    f"--group is required for leave_one_group_out; teams: "
                    f"{sorted(set(team_of.values()))}"
                )
            if group not in set(team_of.values()):
                fail(f"--group {group!r} is not a team; teams: {sorted(set(team_of.values()))}")
            params["teams"] = (group,)
            level = group
    try:
        degrader = make_degrader(method, **params)
        if degrader.needs_runs and runset is None:
            fail(f"{method} pools from runs: give them with --runs (once per run file)")
        rng = resolve_seed(seed) if degrader.random else None
        results = degrader.trial(judgments, rng=rng, runs=runset)
    except ValueError as err:
        from metaeval._validation import ParamError

        if isinstance(err, ParamError) and err.param in texts:
            fail(f"--param {texts[err.param]}: {err}")
        option = _PARAM_OPTIONS.get(err.param) if isinstance(err, ParamError) else None
        if option is not None and given[option] is not None:
            subject = {"stratified": "sampling rates", "uniform": "sampling rates"}.get(
                method, "noise rates" if option == "--rate" else ""
            )
            # the problem alone: the option and its value stand for the parameter's name
            option_error(option, given[option], err.problem, subject)
        raise
    if level is not None:
        chosen = [j for j in results if j.level == level]
        if not chosen:
            fail(
                f"--group {level!r} is not a team; teams: {sorted(set(params['groups'].values()))}"
            )
        result = chosen[0]
    else:
        result = results[0]
    write_qrels(result.to_qrels(), out)
    typer.echo(
        f"{method} level {result.level}: {result.n_judged} of "
        f"{int((judgments.grades >= 0).sum())} judgments kept -> {out}"
    )


def calibrate(
    qrels: QrelsArgument,
    runs: RunsArgument,
    top_grades: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Keep the N highest grades as relevant (1..N) and make lower ones 0, as the "
            "study worlds' top_grades (TREC DL: 2).",
        ),
    ] = None,
    iterations: Annotated[int, typer.Option(min=0, help="Moment-matching steps.")] = 15,
    meta_evaluations: Annotated[
        int,
        typer.Option(
            min=0,
            help="Evaluations of the simulated meta-evaluation to fit it too (about 5 s each "
            "at the size of TREC DL 2019, 3 s with --jobs 2; 0: moments only).",
        ),
    ] = 40,
    check: Annotated[
        int,
        typer.Option(
            min=0,
            help="Worlds drawn to compare with the collection (meta-evaluation and statistics); "
            "0: no comparison.",
        ),
    ] = 5,
    groups: Annotated[
        Path | None,
        typer.Option(
            help="Teams: a file of 'run team' lines, or JSON run -> team (a world.json works). "
            "Default: guessed from the run names.",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    seed: SeedOption = None,
    out: Annotated[Path, typer.Option(help="Output folder.", file_okay=False)] = Path("calibrated"),
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            help="Worker processes that make and measure the simulated worlds of the fit "
            "and of the comparison (the same results for any number).",
        ),
    ] = 1,
) -> None:
    """Fit a simulated world to a test collection, and say how well it stands in for it.

    Writes OUT/params.json (the world's parameters: a study's simulated world takes it as
    params = "OUT/params.json") and, with --check N, OUT/check.md, OUT/measures.csv and
    OUT/statistics.csv: the collection against N worlds of its size on discriminative power,
    robustness to 10% stratified judgments and collection statistics.
    """
    from metaeval.data import read_qrels, read_runs
    from metaeval.evaluation import check_distinct_inputs
    from simulators.calibrate import calibrate as fit
    from simulators.realism import check_calibration

    check_distinct_inputs(qrels, runs)
    judged, runset = read_qrels(qrels), read_runs(runs)
    if top_grades is not None:
        judged = judged.fold_grades(top_grades)
    writable(out, "--out", folder=True)
    team_of = _read_groups(groups, runset.names) if groups else None
    seed = resolve_seed(seed)
    size = f"{counted(len(runset), 'run')} x {counted(len(judged.topics), 'topic')}"
    stages = f"{iterations} moment steps" + (
        f", then up to {meta_evaluations} evaluations of the meta-evaluation (four worlds each)"
        if meta_evaluations
        else ""
    )
    said = []

    def progress(line: str) -> None:
        # said once the inputs have passed the fit's checks: a refusal stays one line
        if not said:
            typer.echo(f"fitting a world to {size}: {stages}", err=True)
            said.append(True)
        typer.echo(line, err=True)

    try:
        params = fit(
            judged,
            runset,
            groups=team_of,
            iterations=iterations,
            meta_evaluations=meta_evaluations,
            rng=seed,
            jobs=jobs,
            progress=progress,
        )
    except ValueError as err:
        fail(f"{qrels}: {err}")
    (out / "params.json").write_text(json.dumps(params.to_dict(), indent=1) + "\n")
    typer.echo(f"parameters -> {out / 'params.json'}")
    if not check:
        return
    worlds = counted(check, "simulated world")
    typer.echo(f"comparing the collection with {worlds} of its size", err=True)
    result = check_calibration(judged, runset, params, replicates=check, rng=seed, jobs=jobs)
    result.measures.to_csv(out / "measures.csv")
    result.statistics.to_csv(out / "statistics.csv")
    (out / "check.md").write_text(result.to_markdown(f"{qrels}: calibration check"))
    shown = result.measures[["power", "sim_power", "power_diff", "tau", "sim_tau", "tau_diff"]]
    typer.echo(f"\ncollection against {worlds} of its size:")
    typer.echo(shown.to_string(float_format=lambda v: f"{v:.3f}"))
    typer.echo(f"order of the measures by tau, Spearman: {result.spearman:.3f}")
    missed = result.statistics[~result.statistics["ok"]]
    for name, row in missed.iterrows():
        typer.echo(
            f"statistic off: {name} real {row['real']:.3f}, worlds {row['sim']:.3f} "
            f"[{row['sim_low']:.3f}, {row['sim_high']:.3f}]"
        )
    for requirement, met in result.passed.items():
        typer.echo(f"{'met' if met else 'NOT met'}: {requirement}")
