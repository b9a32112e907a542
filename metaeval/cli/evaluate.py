"""``metaeval evaluate`` and ``metaeval measures``."""

from __future__ import annotations

import json
from enum import Enum
from typing import Annotated

import typer

from metaeval._warnings import warn
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


class Missing(str, Enum):
    zero = "zero"
    skip = "skip"


class Ties(str, Enum):
    trec_eval = "trec_eval"
    input = "input"


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
        Missing, typer.Option(help="Topic a run did not answer: zero (trec_eval -c) or skip.")
    ] = Missing.zero,
    depth: Annotated[
        int | None, typer.Option(min=1, help="Evaluate only the top DEPTH documents.")
    ] = None,
    ties: Annotated[
        Ties,
        typer.Option(help="Equal scores: trec_eval (docno descending) or input (file order)."),
    ] = Ties.trec_eval,
    topics: TopicsOption = None,
    run_names: RunNamesOption = None,
    fmt: FormatOption = Format.table,
    plugin: PluginOption = None,
) -> None:
    """Evaluate runs against qrels, exactly as trec_eval does (see docs/methods.md)."""
    from metaeval.aggregate import parse_aggregate
    from metaeval.evaluation import evaluate as run_evaluate

    load_plugins(plugin)
    try:
        aggregate = parse_aggregate(agg)
    except (ValueError, TypeError) as err:
        fail(f"--agg {agg!r}: {err}")
    if per_topic and aggregate.kind != "mean":
        warn(f"--agg {agg} aggregates over topics; with --per-topic there is nothing to aggregate")
    frame = run_evaluate(
        [str(p) for p in runs],
        str(qrels),
        measure,
        per_topic=per_topic,
        agg=aggregate,
        missing=missing.value,
        ties=ties.value,
        depth=depth,
        topics=topics,
        run_names=run_names,
    )
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
