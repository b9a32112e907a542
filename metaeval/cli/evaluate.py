"""``metaeval evaluate`` and ``metaeval measures``."""

from __future__ import annotations

import json
import math
from enum import Enum
from typing import Annotated

import pandas as pd
import typer

from metaeval._validation import whole_as_int
from metaeval.cli._common import (
    Format,
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
    expected = "expected"


class EvalFormat(str, Enum):
    table = "table"
    tsv = "tsv"
    csv = "csv"
    json = "json"
    trec_eval = "trec_eval"


def evaluate(
    qrels: QrelsArgument,
    runs: RunsArgument,
    measure: MeasuresOption = ["AP", "nDCG@10", "P@10"],
    per_topic: Annotated[
        bool,
        typer.Option(
            "--per-topic",
            "-q",
            help="One row per topic, and a row 'all' with the aggregate (trec_eval -q).",
        ),
    ] = False,
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
    level: Annotated[
        float | None,
        typer.Option(
            "--level",
            "-l",
            help="Relevance level of the binary measures (AP, P@k, RR...): a grade >= LEVEL "
            "is relevant, as trec_eval -l (TREC DL: 2); any number > 0 for real-valued "
            "grades (0.5). Default 1; a level written in a measure's name, P(rel=3)@10, is "
            "kept.",
        ),
    ] = None,
    ties: Annotated[
        Ties,
        typer.Option(
            help="Equal scores: trec_eval (docno descending), input (file order), or expected "
            "(each measure's mean over every order of the tied documents)."
        ),
    ] = Ties.trec_eval,
    topics: TopicsOption = None,
    run_names: RunNamesOption = None,
    fmt: Annotated[
        EvalFormat,
        typer.Option(
            "--format",
            help="Output format; trec_eval: its lines (measure, topic or all, value), a block "
            "per run.",
        ),
    ] = EvalFormat.table,
    plugin: PluginOption = None,
) -> None:
    """Evaluate runs against qrels, exactly as trec_eval does (see docs/methods.md).

    Measures are named as here (AP, P@10, nDCG@10) or as trec_eval names them (map, P.10,
    ndcg_cut.10, recip_rank, ...)."""
    from metaeval.aggregate import parse_aggregate
    from metaeval.evaluation import as_qrels, as_runset, check_distinct_inputs
    from metaeval.evaluation import evaluate as run_evaluate
    from metaeval.measures.base import expand_measure_names

    load_plugins(plugin)
    if level is not None and not (math.isfinite(level) and level > 0):
        fail(f"--level {level:g}: must be a relevance level, a number > 0")
    try:
        aggregate = parse_aggregate(agg)
    except (ValueError, TypeError) as err:
        fail(f"--agg {agg!r}: {err}")
    kw = dict(
        missing=missing.value,
        ties=ties.value,
        depth=depth,
        topics=topics,
        run_names=run_names,
    )
    # read once, evaluated once or twice (per topic, and the aggregate of the 'all' rows)
    check_distinct_inputs(qrels, runs)
    judged, runset = as_qrels(str(qrels)), as_runset([str(p) for p in runs], ties=ties.value)
    measure = expand_measure_names(measure)  # P.5,10: P.5 and P.10, as trec_eval -m
    measures, note = _at_level(measure, level, judged.levels)
    frame = run_evaluate(runset, judged, measures, per_topic=False, agg=aggregate, **kw)
    if per_topic:
        by_topic = run_evaluate(runset, judged, measures, per_topic=True, **kw)
        frame = pd.concat([by_topic, frame.assign(topic="all")], ignore_index=True)
        frame = frame[["run", "topic", "measure", "value"]]
    if level is not None:  # named as given: -l changes the level, as in trec_eval's output
        shown = {str(m): name for m, name in zip(measures, measure) if not isinstance(m, str)}
        frame["measure"] = frame["measure"].replace(shown)
    if fmt is EvalFormat.trec_eval:
        _print_trec_eval(frame)
    else:
        print_frame(frame, Format(fmt.value), pivot=["run", "topic"] if per_topic else ["run"])
    if note:  # after the scores: an error, if any, is then the only line
        typer.echo(note, err=True)


def _at_level(names: list[str], level: float | None, levels) -> tuple[list, str]:
    """The measures with binary relevance at ``level`` (those whose name states no level),
    and a note for stderr.

    Without ``level`` on qrels with more than one grade above 0 (``levels``, the qrels'
    grade values), the note says that grade 1 counts as relevant: trec_eval's default, not
    every track's convention (TREC DL counts 2 and above), and the cause of scores far from
    a track's official ones.
    """
    from metaeval.data.qrels import format_grade
    from metaeval.measures import parse_measure
    from metaeval.measures.base import states_no_level

    unstated = [name for name in names if states_no_level(name)]
    if level is not None:
        level = whole_as_int(level)  # -l 2 is 2, not 2.0
        return [parse_measure(n).at_level(level) if n in unstated else n for n in names], ""
    if not unstated or len(levels) <= 2:
        return names, ""
    return names, (
        f"note: the qrels grade up to {format_grade(levels[-1])}; {', '.join(unstated)} "
        f"count{'s' if len(unstated) == 1 else ''} every grade >= 1 as relevant "
        "(trec_eval's default). If the collection counts fewer grades (TREC DL: 2 "
        "and above), give -l 2."
    )


def _print_trec_eval(frame) -> None:
    """trec_eval's output: a block per run (its ``runid`` line first), then one line per
    measure and topic (``all`` for the aggregate), measures named as trec_eval names them."""
    from metaeval.measures.base import trec_eval_name

    names = {m: trec_eval_name(m) for m in frame["measure"].unique()}
    if "topic" not in frame:
        frame = frame.assign(topic="all")
    for run, rows in frame.groupby("run", sort=False):
        typer.echo(f"{'runid':<22}\tall\t{run}")
        for row in rows.itertuples(index=False):
            typer.echo(f"{names[row.measure]:<22}\t{row.topic}\t{row.value:.4f}")


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
