"""``metaeval report``: a study's report, drawn from its saved results only."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from metaeval.cli._common import fail


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
    from metaeval.report import write_report

    formats = [f.strip() for f in fmt.split(",") if f.strip()]
    try:
        written = write_report(directory, formats=formats, out=out)
    except (ValueError, FileNotFoundError) as err:
        fail(str(err))
    for kind, path in written.items():
        typer.echo(f"{kind}: {path}")


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
) -> None:
    """Run a study (resuming), write its report, and print a verdict for every claim.

    The exit status is 0 whatever the verdicts (a claim that does not hold is a finding, not
    an error), non-zero on errors, and 1 with --strict when a claim does not hold.
    """
    from metaeval.cli._common import Interrupted, one_line
    from metaeval.report import build, write_report
    from metaeval.study import load_spec, run_study

    try:
        spec = load_spec(spec_path)
        summary = run_study(spec, out, jobs=jobs, scheduler=scheduler, quiet=quiet)
    except (ValueError, OSError, ImportError) as err:
        fail(str(err))
    if summary.interrupted:
        raise Interrupted(
            f"interrupted: {summary.completed} task(s) saved in {summary.out}; "
            "run the same command to resume"
        )
    written = write_report(summary.out)
    _, _, frames = build(summary.out)
    verdicts = frames.get("claims")
    if verdicts is None or verdicts.empty:
        typer.echo(f"no claims in {spec_path.name}; report: {written['html']}")
        return
    width = max(len(c) for c in verdicts["claim"])
    for row in verdicts.itertuples(index=False):
        typer.echo(
            f"{row.claim:<{width}}  {row.world:<12}  {row.verdict:<13}  "
            f"{one_line(row.numbers)[:110]}"
        )
    counts = verdicts["verdict"].value_counts()
    typer.echo(
        f"\n{counts.get('holds', 0)} hold, {counts.get('does not hold', 0)} do not hold, "
        f"{counts.get('inconclusive', 0)} inconclusive; report: {written['html']}"
    )
    if summary.failed:
        fail(
            f"{summary.failed} task(s) failed (see {summary.out}/failures); verdicts use the "
            "saved results",
            code=1,
        )
    if strict and (verdicts["verdict"] == "does not hold").any():
        raise typer.Exit(1)


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
    import tempfile

    from metaeval.cli._common import Interrupted, load_plugins
    from metaeval.report import write_report
    from metaeval.report.card import card_study, card_table
    from metaeval.study import load_results, load_spec, run_study

    load_plugins(plugin)
    baselines = [m.strip() for m in re.split(r",(?![^()]*\))", against) if m.strip()]
    try:
        text = card_study(measure, baselines, world, [str(p) for p in plugin or []])
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "card.toml"
            path.write_text(text)
            spec = load_spec(path)
        out = out or Path(spec.name)
        summary = run_study(spec, out, jobs=jobs, quiet=quiet)
    except (ValueError, OSError) as err:
        fail(str(err))
    if summary.interrupted:
        raise Interrupted(
            f"interrupted: {summary.completed} task(s) saved in {out}; run the "
            "same command to resume"
        )
    written = write_report(out)
    table = card_table(load_results(out), spec.labels[0])
    (out / "report" / "card.md").write_text(_card_markdown(spec.labels[0], table, written))
    typer.echo(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    typer.echo(f"\nreport card: {out / 'report' / 'card.md'}; full report: {written['html']}")


def _card_markdown(measure: str, table, written) -> str:
    from metaeval.report.document import markdown_table

    return (
        f"# Report card: {measure}\n\nHow {measure} ranks among the baselines on each "
        "criterion (rank 1 is the best; means over worlds, replicates and trials). The "
        f"full report, with figures, is [index.html](index.html).\n\n"
        f"{markdown_table(table)}\n"
    )
