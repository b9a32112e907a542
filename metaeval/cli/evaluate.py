"""``metaeval evaluate`` and ``metaeval measures``."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from enum import Enum
from typing import Annotated

import numpy as np
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


class ExtraFields(str, Enum):
    error = "error"
    ignore = "ignore"


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
    complete: Annotated[
        bool,
        typer.Option(
            "-c",
            help="trec_eval's -c: a topic a run did not answer is scored as an empty list, 0 "
            "for most measures (--missing zero, the default here).",
        ),
    ] = False,
    depth: Annotated[
        int | None,
        typer.Option(
            "--depth", "-M", min=1, help="Evaluate only the top DEPTH documents (trec_eval -M)."
        ),
    ] = None,
    judged_only: Annotated[
        bool,
        typer.Option(
            "--judged-only",
            "-J",
            help="Every measure on the judged documents alone: its condensed variant, AP' for "
            "AP (trec_eval -J).",
        ),
    ] = False,
    extra_fields: Annotated[
        ExtraFields,
        typer.Option(
            help="Run lines with more than six fields: an error, or ignore the trailing "
            "fields as trec_eval does."
        ),
    ] = ExtraFields.error,
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
    from metaeval.data import read_runs
    from metaeval.evaluation import as_qrels, check_distinct_inputs
    from metaeval.evaluation import evaluate as run_evaluate
    from metaeval.measures import parse_measure
    from metaeval.measures.base import (
        TREC_EVAL_LINES,
        expand_measure_names,
        geometric_of,
        trec_eval_name,
    )

    load_plugins(plugin)
    if complete and missing is Missing.skip:
        fail("-c and --missing skip contradict each other: give one")
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
    # read once; evaluated for the 'all' rows, per topic with -q, and per topic again for
    # trec_eval's sums of document counts and its num_q when those are asked
    check_distinct_inputs(qrels, runs)
    judged = as_qrels(str(qrels))
    runset = read_runs([str(p) for p in runs], ties=ties.value, extra_fields=extra_fields.value)
    # P.5,10 is P.5 and P.10, all_trec trec_eval's set, as trec_eval -m
    measure = expand_measure_names(measure, lines=True)
    count_topics = "num_q" in measure
    measure = [name for name in measure if name not in TREC_EVAL_LINES]
    measures, note = _at_level(measure, level, judged.levels)
    if judged_only:
        measures = [_condensed(m) for m in measures]
    frame = run_evaluate(runset, judged, measures, per_topic=False, agg=aggregate, **kw)
    if str(aggregate) == "mean":
        frame = _counts_summed(frame, runset, judged, measures, kw)
    if count_topics:  # trec_eval's num_q: the topics evaluated, after the runid line
        answered = run_evaluate(runset, judged, ["num_ret"], per_topic=True, **kw)
        counts = answered.groupby("run", sort=False).size()
        frame = pd.concat(
            [pd.DataFrame({"run": counts.index, "measure": "num_q", "value": counts.values}), frame]
        )
        frame = frame.sort_values("run", kind="stable", key=_in_order(frame["run"].unique()))
    if per_topic:
        # gm_map and gm_bpref have an all line only, as in trec_eval
        plain = [m for m in measures if not geometric_of(m)]
        by_topic = run_evaluate(runset, judged, plain, per_topic=True, **kw) if plain else None
        frame = pd.concat([by_topic, frame.assign(topic="all")], ignore_index=True)
        frame = frame[["run", "topic", "measure", "value"]]
    labels = [m if geometric_of(m) else str(parse_measure(m)) for m in measures]
    given = pd.DataFrame({"measure": labels, "given": measure})
    # a row per name trec_eval prints: AP and AP(rel=1) are one, Rprec and Rprec_mult_1.00 two
    given = given[~given["given"].map(trec_eval_name).duplicated()]
    twice = given["measure"].duplicated().any()
    if fmt is EvalFormat.trec_eval or level is not None or judged_only or twice:
        # named as given, as in trec_eval's output, where -l and -J leave names as they are
        # and parameters print as typed
        frame = frame.merge(given, on="measure", how="left", sort=False)
        frame["measure"] = frame.pop("given").fillna(frame["measure"])
    if fmt is EvalFormat.trec_eval:
        _print_trec_eval(frame)
    else:
        print_frame(frame, Format(fmt.value), pivot=["run", "topic"] if per_topic else ["run"])
    if note:  # after the scores: an error, if any, is then the only line
        typer.echo(note, err=True)


def _condensed(measure):
    """The condensed variant of a measure or name (trec_eval -J): ``gm_map`` is ``gm_map'``."""
    from metaeval.measures import parse_measure
    from metaeval.measures.base import geometric_of

    if isinstance(measure, str) and geometric_of(measure):
        name, paren, rest = measure.partition("(")
        return name.rstrip("'") + "'" + paren + rest
    return parse_measure(measure).condensed()


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
    from metaeval.measures.base import geometric_of, states_no_level

    unstated = [name for name in names if states_no_level(name)]
    if level is not None:
        level = whole_as_int(level)  # -l 2 is 2, not 2.0

        def at_level(name):
            if geometric_of(name):  # gm_map: the level of the AP it aggregates
                return f"{name}(rel={level})"
            return parse_measure(name).at_level(level)

        return [at_level(n) if n in unstated else n for n in names], ""
    if not unstated or len(levels) <= 2:
        return names, ""
    return names, (
        f"note: the qrels grade up to {format_grade(levels[-1])}; {', '.join(unstated)} "
        f"count{'s' if len(unstated) == 1 else ''} every grade >= 1 as relevant "
        "(trec_eval's default). If the collection counts fewer grades (TREC DL: 2 "
        "and above), give -l 2."
    )


def _print_trec_eval(frame) -> None:
    """trec_eval's output: a block per run, one line per measure and topic, then its
    ``runid`` line and the lines of the aggregate (topic ``all``), measures named as trec_eval
    names them."""
    from metaeval.measures import parse_measure
    from metaeval.measures.base import geometric_of, trec_eval_name

    labels = frame["measure"].unique()
    names = {m: f"{trec_eval_name(m):<22}\t" for m in labels}
    # trec_eval prints num_q and the counts of documents as whole numbers
    counted = {
        m: m == "num_q" or (not geometric_of(m) and parse_measure(m).summed_by_trec_eval)
        for m in labels
    }
    topics = frame["topic"].astype(str) if "topic" in frame else pd.Series("all", frame.index)
    measures = frame["measure"].tolist()
    values = [
        f"{value:.0f}" if counted[m] else f"{value:.4f}"
        for m, value in zip(measures, frame["value"].tolist())
    ]
    lines = [f"{names[m]}{t}\t{v}" for m, t, v in zip(measures, topics.tolist(), values)]
    # One write: a line at a time through echo took most of the time of a -q evaluation
    # (300,000 lines for trec_eval's measures on 59 runs).
    blocks = []
    rows_of = frame.groupby("run", sort=False).indices
    summary = (topics == "all").to_numpy()
    for run in frame["run"].unique():  # in the frame's order
        rows = rows_of[run]
        # as trec_eval -q: the topics' lines, then the runid line opening the summary
        blocks.extend(lines[i] for i in rows[~summary[rows]])
        blocks.append(f"{'runid':<22}\tall\t{run}")
        blocks.extend(lines[i] for i in rows[summary[rows]])
    typer.echo("\n".join(blocks))


def _counts_summed(frame, runset, judged, measures, kw):
    """``frame`` (one row per run and measure) with the counts of documents (num_ret, num_rel,
    num_rel_ret...) summed over the topics instead of averaged, as trec_eval's summary line
    gives them."""
    from metaeval.evaluation import evaluate as run_evaluate
    from metaeval.measures import NumRel, parse_measure
    from metaeval.measures.base import geometric_of

    counts = [m for m in measures if not geometric_of(m) and parse_measure(m).summed_by_trec_eval]
    if not counts:
        return frame
    counts = [parse_measure(m) for m in counts]
    asked = counts
    if kw["missing"] == "zero":
        # trec_eval -c sums num_rel over the qrels' documents of grade > 0, whatever -l says
        above_zero = min((g for g in judged.levels if g > 0), default=1)
        asked = [replace(m, rel=above_zero) if isinstance(m, NumRel) else m for m in asked]
    by_topic = run_evaluate(runset, judged, asked, per_topic=True, **kw)
    by_topic["measure"] = by_topic["measure"].map(dict(zip(map(str, asked), map(str, counts))))
    sums = by_topic.groupby(["run", "measure"], sort=False)["value"].sum()
    keys = pd.MultiIndex.from_frame(frame[["run", "measure"]])
    summed = sums.reindex(keys).to_numpy()
    return frame.assign(value=np.where(np.isnan(summed), frame["value"], summed))


def _in_order(labels):
    """A sort key putting a column's values in the order of ``labels``."""
    position = {label: i for i, label in enumerate(labels)}
    return lambda column: column.map(position)


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
