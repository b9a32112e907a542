"""``metaeval informativeness``: maximum-entropy informativeness of measures on real runs."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from metaeval.cli._common import (
    Format,
    FormatOption,
    PluginOption,
    QrelsArgument,
    RunNamesOption,
    RunsArgument,
    TopicsOption,
    fail,
    load_plugins,
    print_frame,
    writable,
)


class Error(str, Enum):
    recall_points = "recall_points"
    interpolated = "interpolated"


class Count(str, Enum):
    retrieved = "retrieved"
    relevant = "relevant"


MeasureOpt = Annotated[
    list[str],
    typer.Option(
        "-m",
        "--measure",
        help="Measure with an expectation: AP, P@k, Rprec, RR, nDCG[@k], "
        "'GAP(g=(0.5,0.5))' (repeatable).",
    ),
]


def informativeness(
    qrels: QrelsArgument,
    runs: RunsArgument,
    measure: MeasureOpt = ["AP", "P@10", "Rprec"],
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot",
            help="Directory for figures: RMS bars per measure and inferred vs actual "
            "precision-recall curves of one list.",
            file_okay=False,
        ),
    ] = None,
    rel: Annotated[
        int,
        typer.Option("--rel", min=1, help="Relevance level of binary measures (TREC DL uses 2)."),
    ] = 1,
    min_relevant: Annotated[
        int,
        typer.Option(
            "--min-relevant",
            min=0,
            help="Keep the lists that retrieved at least this many "
            "documents at every relevance threshold.",
        ),
    ] = 5,
    error: Annotated[
        Error,
        typer.Option(
            "--error",
            help="RMS at the recall points of each list "
            "(Robertson et al. 2010) or over 11 interpolated "
            "points (Aslam et al. 2005).",
        ),
    ] = Error.recall_points,
    count: Annotated[
        Count,
        typer.Option(
            "--count",
            help="Sum constraint of the max-ent problem: "
            "relevant documents the list retrieved (default) or the "
            "topic's R.",
        ),
    ] = Count.retrieved,
    topics: TopicsOption = None,
    run_names: RunNamesOption = None,
    fmt: FormatOption = Format.table,
    plugin: PluginOption = None,
) -> None:
    """Informativeness of each measure: how well its value alone predicts the list's PR curve.

    For every ranked list, the maximum-entropy distribution of relevance consistent with the
    measure's value is inferred (Aslam, Yilmaz & Pavlu, SIGIR 2005); the mean RMS error of the
    inferred precision-recall curve against the actual one is printed per measure and
    relevance threshold (lower = more informative).
    """
    from metaeval.data import read_qrels, read_runs
    from metaeval.evaluation import check_distinct_inputs
    from metaeval.meta.informativeness import example_pr_curves
    from metaeval.meta.informativeness import informativeness as run_informativeness

    load_plugins(plugin)
    check_distinct_inputs(qrels, runs)
    if plot is not None:
        writable(plot, "--plot", folder=True)
    # read once: a pipe (/dev/stdin, <(zcat run.gz)) cannot be read again for the figures
    runset, judged = read_runs(runs), read_qrels(qrels)
    result = run_informativeness(
        runset,
        judged,
        measure,
        rel=rel,
        min_relevant=min_relevant,
        error=error.value,
        count=count.value,
        topics=topics,
        run_names=run_names,
    )
    if result.lists.empty:
        fail(
            f"no list retrieved {min_relevant} documents at every relevance threshold; "
            "lower --min-relevant"
        )
    cols = [
        "measure",
        "threshold",
        "n_lists",
        "n_scored",
        "rms",
        "rms_recall_points",
        "rms_interpolated",
        "not_converged",
    ]
    print_frame(result.summary[cols + [c for c in result.summary if c.startswith("rmse_")]], fmt)
    if plot is not None:
        from metaeval.report.figures import informativeness_bars, pr_curves

        summary = result.summary.assign(world="")
        curves = example_pr_curves(result, runset, judged, rel=rel)
        try:
            informativeness_bars(summary).savefig(plot / "rms_by_measure.png", dpi=150)
            pr_curves(curves).savefig(plot / "pr_curves.png", dpi=150)
        except (OSError, ValueError) as err:
            fail(f"--plot {plot}: {err}")
        typer.echo(f"figures written to {plot}", err=True)
