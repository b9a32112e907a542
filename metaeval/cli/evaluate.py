"""``metaeval evaluate``, ``metaeval measures`` and ``metaeval quickstart``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from metaeval.cli._common import (
    Format,
    FormatOption,
    MeasuresOption,
    PluginOption,
    QrelsArgument,
    RunNamesOption,
    RunsArgument,
    TopicsOption,
    fail,
    load_plugins,
    print_frame,
)


def evaluate(
    qrels: QrelsArgument,
    runs: RunsArgument,
    measure: MeasuresOption = ["AP", "nDCG@10", "P@10"],
    per_topic: Annotated[bool, typer.Option("--per-topic", help="One row per topic.")] = False,
    agg: Annotated[
        str,
        typer.Option(
            help="Aggregate over topics: mean, gmean, 'gmean(mode=shift)', logit, median."
        ),
    ] = "mean",
    missing: Annotated[
        str, typer.Option(help="Topic a run did not answer: zero (trec_eval -c) or skip.")
    ] = "zero",
    depth: Annotated[
        int | None, typer.Option(help="Evaluate only the top DEPTH documents.")
    ] = None,
    ties: Annotated[
        str, typer.Option(help="Equal scores: trec_eval (docno descending) or input (file order).")
    ] = "trec_eval",
    topics: TopicsOption = None,
    run_names: RunNamesOption = None,
    fmt: FormatOption = Format.table,
    plugin: PluginOption = None,
) -> None:
    """Evaluate runs against qrels, exactly as trec_eval does (see docs/methods.md)."""
    from metaeval.evaluation import evaluate as run_evaluate

    load_plugins(plugin)
    try:
        frame = run_evaluate(
            [str(p) for p in runs],
            str(qrels),
            measure,
            per_topic=per_topic,
            agg=agg,
            missing=missing,
            ties=ties,
            depth=depth,
            topics=topics,
            run_names=run_names,
        )
    except (ValueError, TypeError) as err:
        fail(str(err))
    print_frame(frame, fmt, pivot=["run", "topic"] if per_topic else ["run"])


def measures(
    fmt: Annotated[str, typer.Option("--format", help="table, markdown or json.")] = "table",
    plugin: PluginOption = None,
) -> None:
    """List every registered measure with its parameters, formula and reference."""
    from metaeval.measures import measure_doc, registered

    load_plugins(plugin)
    docs = [measure_doc(cls) for cls in registered().values()]
    if fmt == "json":
        typer.echo(json.dumps(docs, indent=1, default=str))
    elif fmt == "markdown":
        from metaeval.measures.docs import measures_markdown

        typer.echo(measures_markdown())
    elif fmt == "table":
        for d in docs:
            params = ", ".join(f"{k}={v!r}" for k, v in d["parameters"].items()) or "-"
            typer.echo(
                f"{d['name']}\n  {d['summary']}\n  parameters: {params}\n"
                f"  formula: {d['formula']}\n  reference: {d['reference']}\n"
            )
    else:
        fail(f"--format must be table, markdown or json, got {fmt!r}")


def quickstart(
    out: Annotated[
        Path, typer.Option(help="Where the study's results and report go.", file_okay=False)
    ] = Path("metaeval-quickstart"),
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Worker processes.")] = 2,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
) -> None:
    """Run the quickstart study (five measures on a simulated collection, every criterion),
    write its report and print a summary: what the tool is for, in under a minute."""
    from metaeval.cli._common import Interrupted
    from metaeval.report import build, write_report
    from metaeval.report.card import quickstart_summary
    from metaeval.study import load_spec, run_study
    from metaeval.study.spec import study_file

    spec = load_spec(study_file("quickstart.toml"))
    if not quiet:
        typer.echo(f"Running {spec.path.name}: {spec.description.split(chr(10))[0]} ...", err=True)
    summary = run_study(spec, out, jobs=jobs, quiet=quiet)
    if summary.interrupted:
        raise Interrupted(
            f"interrupted: {summary.completed} task(s) saved in {out}; run the "
            "same command to resume"
        )
    written = write_report(out)
    _, _, frames = build(out)
    typer.echo(quickstart_summary(frames["summary"]).to_string(float_format=lambda v: f"{v:.3f}"))
    verdicts = frames.get("claims")
    if verdicts is not None and len(verdicts):
        typer.echo("")
        for row in verdicts.itertuples(index=False):
            typer.echo(f"{row.claim} ({row.world}): {row.verdict} - {row.text}")
    typer.echo(f"\nreport: {written['html']} (and {written['md']})")
