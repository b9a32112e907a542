"""``metaeval report``, ``audit``, ``card`` and ``quickstart``: studies and their reports."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Annotated

import typer

from metaeval._validation import counted
from metaeval.cli._common import fail, prefixed, writable
from metaeval.cli.study import WorldOption, WorldsFileOption


def report(
    directory: Annotated[
        Path, typer.Argument(help="A study's output folder.", exists=True, file_okay=False)
    ],
    fmt: Annotated[str, typer.Option("--format", help="Comma-separated: md, html.")] = "md,html",
    out: Annotated[
        Path | None,
        typer.Option(help="Where to write (default: DIRECTORY/report).", file_okay=False),
    ] = None,
) -> None:
    """Write index.md (with PNG figures), a self-contained index.html and tables/*.csv."""
    from metaeval.cli.study import in_folder, read_study_folder
    from metaeval.report import write_report

    formats = [f.strip() for f in fmt.split(",") if f.strip()]
    unknown = [f for f in formats if f not in ("md", "html")]
    if unknown or not formats:
        fail(f"--format {fmt!r}: give md, html or md,html")
    manifest, units = read_study_folder(directory)
    if units.empty:
        fail(f"{directory} holds no saved results yet: run the study (metaeval study run)")
    if out is not None:
        writable(out, "--out", folder=True)
    _load_study_plugins(directory, manifest)
    try:
        written = write_report(directory, formats=formats, out=out)
    except (ValueError, OSError) as err:
        fail(in_folder(directory, err))
    for kind, path in written.items():
        typer.echo(f"{kind}: {path}")


def _load_study_plugins(directory: Path, manifest: dict) -> None:
    """Import the study's plugin files (named in its saved spec), so that a plugin criterion's
    own report section draws its results (without them, they are shown as a plain table, and
    a warning says why)."""
    from metaeval._warnings import warn
    from metaeval.measures import load_plugin
    from metaeval.report.reader import read_spec

    for name in read_spec(directory, manifest)["plugins"]:
        try:
            load_plugin(name)
        except Exception as err:  # the report is still drawn, with plain tables
            warn(f"plugin file {name}: not loaded ({err}); its criteria are shown as tables")


def audit(
    spec_path: Annotated[
        Path, typer.Argument(help="The study file (TOML).", exists=True, dir_okay=False)
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Output folder (default: results/<study name>).", file_okay=False
        ),
    ] = None,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, help="Worker processes on this machine.")
    ] = 1,
    scheduler: Annotated[
        str | None, typer.Option(help="Address of a Dask scheduler: run the tasks on that cluster.")
    ] = None,
    strict: Annotated[
        bool, typer.Option(help="Exit with status 1 when a claim does not hold.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    replace: Annotated[
        bool,
        typer.Option(
            "--replace",
            help="Discard the results saved in the output folder (made with another seed, "
            "say) and run afresh; other files there are kept.",
        ),
    ] = False,
    world: WorldOption = None,
    worlds_file: WorldsFileOption = None,
) -> None:
    """Run a study (resuming), write its report, and print a verdict for every claim.

    The exit status is 0 whatever the verdicts (a claim that does not hold is a finding, not
    an error), non-zero on errors, and 1 with --strict when a claim does not hold.
    """
    from metaeval.cli._common import one_line
    from metaeval.cli.study import load_study, run_checked
    from metaeval.report import build, write_report

    summary = run_checked(
        load_study(spec_path, world, worlds_file, quiet),
        out,
        jobs=jobs,
        scheduler=scheduler,
        quiet=quiet,
        replace=replace,
    )
    built = build(summary.out)
    written = write_report(summary.out, built=built)
    verdicts = built[2].get("claims")
    if verdicts is None or verdicts.empty:
        typer.echo(f"no claims in {spec_path.name}; report: {written['html']}")
        return
    width = max(len(c) for c in verdicts["claim"])
    wide = max(len(w) for w in verdicts["world"])
    for row in verdicts.itertuples(index=False):
        # the numbers wrap under the verdict, never cut mid-interval
        typer.echo(f"{row.claim:<{width}}  {row.world:<{wide}}  {row.verdict}")
        for text in (row.numbers, row.basis):
            if text:
                typer.echo(
                    textwrap.fill(
                        one_line(text), 100, initial_indent="    ", subsequent_indent="    "
                    )
                )
    counts = verdicts["verdict"].value_counts()
    typer.echo(
        f"\n{counts.get('holds', 0)} hold, {counts.get('does not hold', 0)} do not hold, "
        f"{counts.get('inconclusive', 0)} inconclusive; report: {written['html']}"
    )
    if summary.failed:
        fail(
            f"{counted(summary.failed, 'task')} failed (see {summary.out}/failures); verdicts "
            "use the saved results",
            code=1,
        )
    if strict and (verdicts["verdict"] == "does not hold").any():
        raise typer.Exit(1)


def _check_card_measures(measure: str, baselines: list[str], against: str) -> None:
    """The assessed measure and at least one other baseline, each a measure name (errors name
    -m or --against)."""
    from metaeval.measures import canonical_name

    try:
        name = canonical_name(measure)
    except (ValueError, TypeError) as err:
        fail(prefixed(f"-m {measure!r}", err))
    others = set()
    for b in baselines:
        try:
            others.add(canonical_name(b))
        except (ValueError, TypeError) as err:
            fail(prefixed(f"--against {b!r}", err))
    if not others - {name}:
        fail(
            f"--against {against!r}: give at least one baseline other than {name}, "
            "e.g. nDCG@10,P@10"
        )


def card(
    measure: Annotated[str, typer.Option("-m", "--measure", help="The measure to assess.")],
    against: Annotated[
        str, typer.Option(help="Baselines, comma separated.")
    ] = "AP,nDCG@10,P@10,Bpref,RBP(p=0.8)",
    world: Annotated[
        str,
        typer.Option(help="A simulator preset (trec_like, dl_like, ...) or STUDY.toml:WORLD_ID."),
    ] = "trec_like",
    plugin: Annotated[
        list[Path] | None,
        typer.Option(
            "--plugin",
            help="Python file that registers measures (repeatable).",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Output folder (default: card-<measure>).", file_okay=False)
    ] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1)] = 2,
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
) -> None:
    """A report card: how a (new) measure ranks among baselines on every criterion."""
    import dataclasses

    from metaeval.cli._common import load_plugins
    from metaeval.cli.study import run_checked
    from metaeval.report import write_report
    from metaeval.report.card import card_lines, card_study, write_card
    from metaeval.study import load_spec

    load_plugins(plugin)
    baselines = [m.strip() for m in re.split(r",(?![^()]*\))", against) if m.strip()]
    _check_card_measures(measure, baselines, against)
    text = card_study(measure, baselines, world, [str(p) for p in plugin or []])
    spec = load_spec("card.toml", text=text)  # checked before anything is written
    out = writable(out or Path(spec.name), "--out", folder=True)
    # the card's study file is the copy every output folder keeps (study.toml): the manifest
    # and the report name it, and running it again resumes the card
    run_checked(dataclasses.replace(spec, path=out / "study.toml"), out, jobs=jobs, quiet=quiet)
    written = write_report(out)
    card_files = write_card(out, spec.labels[0])
    typer.echo(f"Report card of {spec.labels[0]} against {', '.join(spec.labels[1:])}:\n")
    typer.echo(card_lines(card_files["table"], spec.labels[0], card_files["confidence"]))
    typer.echo(
        f"\nreport card: {card_files['html']} (and {card_files['md'].name}); "
        f"full report: {written['html']}"
    )


def quickstart(
    out: Annotated[
        Path, typer.Option(help="Where the study's results and report go.", file_okay=False)
    ] = Path("metaeval-quickstart"),
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Worker processes.")] = 2,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
) -> None:
    """Run the quickstart study (five measures on a simulated collection, every criterion),
    write its report and print a summary: what the tool is for, in under a minute."""
    from metaeval.cli.study import run_checked
    from metaeval.report import build, write_report
    from metaeval.report.card import quickstart_basis, quickstart_summary
    from metaeval.study import load_spec
    from metaeval.study.spec import study_file

    writable(out, "--out", folder=True)
    spec = load_spec(study_file("quickstart.toml"))
    if not quiet:
        typer.echo(f"Running {spec.path.name}: {' '.join(spec.description.split())}", err=True)
    run_checked(spec, out, jobs=jobs, quiet=quiet)
    built = build(out)
    written = write_report(out, built=built)
    frames = built[2]
    table = quickstart_summary(frames["summary"], intervals=True)
    world = spec.worlds[0]
    head = (
        f"Each measure on a simulated {world.preset} collection ({world.n_topics} topics, "
        f"{world.n_systems} systems): the mean over {world.replicates} draws and "
        f"{max(d.trials for d in spec.degraders)} trials, with its interval [low, high]:"
    )
    typer.echo("\n" + textwrap.fill(head, 100))
    # columns wrap in blocks under one another: an interval is never cut
    typer.echo(table.to_string(line_width=100))
    typer.echo(
        textwrap.fill(
            quickstart_basis(frames["summary"], spec.confidence) + ".",
            100,
            initial_indent="  ",
            subsequent_indent="  ",
        )
    )
    typer.echo(
        "  tau: Kendall's tau_b between rankings of the systems (1 = the same ranking); "
        "power: share of\n  system pairs significantly different; RMS: error of the "
        "precision-recall curve inferred\n  from the value (lower = more informative; "
        "'-': the measure has no max-ent expectation).\n  Higher is better everywhere else."
    )
    verdicts = frames.get("claims")
    if verdicts is not None and len(verdicts):
        typer.echo("\nClaims:")
        for row in verdicts.itertuples(index=False):
            typer.echo(f"  {row.claim} ({row.world}): {row.verdict} - {row.text}")
    typer.echo(f"\nreport: {written['html']} (and {written['md']})")
