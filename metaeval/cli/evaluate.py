"""``metaeval evaluate``, ``metaeval measures`` and ``metaeval quickstart``."""

from __future__ import annotations

import json
import sys
from enum import Enum
from importlib import resources
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from metaeval.data import TrecFormatError


class Format(str, Enum):
    table = "table"
    tsv = "tsv"
    csv = "csv"
    json = "json"


PluginOption = Annotated[list[Path] | None, typer.Option(
    "--plugin", help="Python file that registers measures (repeatable).", exists=True,
    dir_okay=False)]


def fail(message: str) -> None:
    """Print a one-line error and exit with status 2 (bad input), no traceback."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


def load_plugins(plugins: list[Path] | None) -> None:
    from metaeval.measures import load_plugin

    for path in plugins or []:
        try:
            load_plugin(path)
        except Exception as err:  # a user's file: show what went wrong in it
            fail(f"plugin {path}: {type(err).__name__}: {err}")


def print_frame(frame: pd.DataFrame, fmt: Format, *, pivot: list[str] | None = None,
                digits: int = 4) -> None:
    """Print a tidy table: a readable pivot for ``table``, the tidy rows otherwise."""
    if fmt is Format.json:
        typer.echo(frame.to_json(orient="records", indent=1))
    elif fmt in (Format.tsv, Format.csv):
        frame.to_csv(sys.stdout, sep="\t" if fmt is Format.tsv else ",", index=False,
                     float_format="%.6g" if digits is None else f"%.{max(digits, 6)}g")
    else:
        shown = frame
        if pivot:
            shown = frame.pivot_table(index=pivot, columns="measure", values="value",
                                      sort=False, aggfunc="first")
            shown.columns.name = None
        typer.echo(shown.to_string(float_format=lambda v: f"{v:.{digits}f}"))


def evaluate(
    qrels: Annotated[Path, typer.Argument(help="TREC qrels file (plain or .gz).", exists=True,
                                          dir_okay=False)],
    runs: Annotated[list[Path], typer.Argument(help="TREC run files (plain or .gz).", exists=True,
                                               dir_okay=False)],
    measure: Annotated[list[str], typer.Option("-m", "--measure",
                                               help="Measure, e.g. AP, nDCG@10, 'P(rel=2)@10', AP' "
                                                    "(repeatable).")] = ["AP", "nDCG@10", "P@10"],
    per_topic: Annotated[bool, typer.Option("--per-topic", help="One row per topic.")] = False,
    agg: Annotated[str, typer.Option(help="Aggregate over topics: mean, gmean, "
                                          "'gmean(mode=shift)', logit, median.")] = "mean",
    missing: Annotated[str, typer.Option(help="Topic a run did not answer: zero (trec_eval -c) "
                                              "or skip.")] = "zero",
    depth: Annotated[int | None, typer.Option(help="Evaluate only the top DEPTH documents.")] = None,
    ties: Annotated[str, typer.Option(help="Equal scores: trec_eval (docno descending) or "
                                           "input (file order).")] = "trec_eval",
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.table,
    plugin: PluginOption = None,
) -> None:
    """Evaluate runs against qrels, exactly as trec_eval does (see METHODS.md)."""
    from metaeval.evaluate import evaluate as run_evaluate

    load_plugins(plugin)
    try:
        frame = run_evaluate([str(p) for p in runs], str(qrels), measure, per_topic=per_topic,
                             agg=agg, missing=missing, ties=ties, depth=depth)
    except (TrecFormatError, ValueError, TypeError) as err:
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
            typer.echo(f"{d['name']}\n  {d['summary']}\n  parameters: {params}\n"
                       f"  formula: {d['formula']}\n  reference: {d['reference']}\n")
    else:
        fail(f"--format must be table, markdown or json, got {fmt!r}")


def quickstart(
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.table,
) -> None:
    """Evaluate the bundled example collection end to end (a smoke test of the install)."""
    from metaeval.evaluate import evaluate as run_evaluate

    root = resources.files("metaeval") / "datasets" / "tiny"
    with resources.as_file(root) as folder:
        runs = sorted(str(p) for p in Path(folder).glob("*.run"))
        qrels = str(Path(folder) / "tiny.qrels")
        typer.echo(f"Evaluating {len(runs)} example runs against {qrels}")
        frame = run_evaluate(runs, qrels, ["AP", "nDCG@10", "P@10", "RR", "Bpref", "infAP"],
                             per_topic=False)
    print_frame(frame, fmt, pivot=["run"])
