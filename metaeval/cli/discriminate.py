"""``metaeval discriminate`` and ``metaeval compare``: significance on real runs."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from metaeval.cli._common import (
    Format,
    FormatOption,
    MeasuresOption,
    PluginOption,
    QrelsArgument,
    RunNamesOption,
    SeedOption,
    TopicsOption,
    check_alpha,
    fail,
    load_plugins,
    print_frame,
    resolve_seed,
    writable,
)


class Method(str, Enum):
    bootstrap = "bootstrap"
    tukey = "tukey"


class Test(str, Enum):
    t = "t"
    randomization = "randomization"
    bootstrap = "bootstrap"


class Correction(str, Enum):
    holm = "holm"
    bh = "bh"
    none = "none"


RunsArg = Annotated[
    list[Path],
    typer.Argument(
        help="TREC run files (plain, gzip, bz2 or xz), at least two.", exists=True, dir_okay=False
    ),
]
AlphaOpt = Annotated[float, typer.Option("--alpha", help="Significance level, in (0, 1).")]


def _per_topic_scores(
    qrels: Path, runs: list[Path], measure: list[str], topics, run_names
) -> pd.DataFrame:
    from metaeval.evaluation import evaluate

    if len(runs) < 2:
        fail(f"give at least two run files to compare, got {len(runs)}")
    frame = evaluate(
        [str(p) for p in runs],
        str(qrels),
        measure,
        per_topic=True,
        topics=topics,
        run_names=run_names,
    )
    n_runs, n_topics = frame["run"].nunique(), frame["topic"].nunique()
    if n_runs < 2:
        fail(f"--runs {run_names!r} leaves {n_runs} run: give at least two to compare")
    if n_topics < 2:
        where = " (after --topics)" if topics is not None else ""
        fail(f"the qrels{where} have {n_topics} topic: significance needs at least two topics")
    return frame


def discriminate(
    qrels: QrelsArgument,
    runs: RunsArg,
    measure: MeasuresOption = ["AP", "nDCG@10", "P@10"],
    method: Annotated[
        Method,
        typer.Option("--method", help="Paired bootstrap (Sakai 2006) or randomised Tukey HSD."),
    ] = Method.bootstrap,
    B: Annotated[
        int | None,
        typer.Option(
            "-B",
            "--samples",
            min=1,
            help="Bootstrap samples / permutations (default 1000 bootstrap, 5000 tukey).",
        ),
    ] = None,
    alpha: AlphaOpt = 0.05,
    seed: SeedOption = None,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot", help="Write the ASL curves to this image (png, pdf, svg).", dir_okay=False
        ),
    ] = None,
    topics: TopicsOption = None,
    run_names: RunNamesOption = None,
    fmt: FormatOption = Format.table,
    plugin: PluginOption = None,
) -> None:
    """Discriminative power of each measure: share of run pairs significantly different.

    Prints, per measure, the discriminative power (pairs with ASL < alpha) and the difference
    required (bootstrap: Sakai's estimated difference; tukey: the critical difference).
    """
    from metaeval.meta import discriminative_power, plot_asl_curves, resamples

    load_plugins(plugin)
    check_alpha(alpha)
    if plot is not None:
        writable(plot, "--plot")
    frame = _per_topic_scores(qrels, runs, measure, topics, run_names)
    n_runs, n_topics = frame["run"].nunique(), frame["topic"].nunique()
    # one set of resamples for every measure: differences come from the measures alone
    shared = resamples(
        method.value, n_topics=n_topics, n_systems=n_runs, B=B, rng=resolve_seed(seed)
    )
    results = {}
    for name, sub in frame.groupby("measure", sort=False):
        try:
            results[str(name)] = discriminative_power(
                sub[["run", "topic", "value"]], method=method.value, alpha=alpha, resamples=shared
            )
        except (ValueError, TypeError) as err:
            fail(f"{name}: {err}")
    table = pd.DataFrame(
        [
            {
                "measure": m,
                "method": r.method,
                "B": r.B,
                "alpha": r.alpha,
                "runs": len(r.systems),
                "topics": r.n_topics,
                "pairs": r.n_pairs,
                "significant": r.n_significant,
                "power": r.power,
                "diff_required": r.diff_required,
            }
            for m, r in results.items()
        ]
    )
    print_frame(table, fmt)
    if plot is not None:
        try:
            plot_asl_curves(results, path=plot)
        except ValueError as err:  # e.g. an unknown image extension
            fail(f"--plot {plot}: {err}")
        typer.echo(f"ASL curves written to {plot}", err=True)


def compare(
    qrels: QrelsArgument,
    runs: RunsArg,
    measure: MeasuresOption = ["AP"],
    test: Annotated[
        Test,
        typer.Option(
            "--test",
            help="Paired t-test, Fisher randomisation "
            "(exact when 2^topics <= B) or Sakai's bootstrap.",
        ),
    ] = Test.t,
    correction: Annotated[
        Correction,
        typer.Option("--correction", help="Multiple-comparison correction over the pairs."),
    ] = Correction.holm,
    alpha: AlphaOpt = 0.05,
    B: Annotated[
        int,
        typer.Option("-B", "--samples", min=1, help="Resamples for randomisation and bootstrap."),
    ] = 10000,
    seed: SeedOption = None,
    baseline: Annotated[
        str | None, typer.Option("--baseline", help="Compare every run with this run only.")
    ] = None,
    topics: TopicsOption = None,
    run_names: RunNamesOption = None,
    fmt: FormatOption = Format.table,
    plugin: PluginOption = None,
) -> None:
    """Pairwise significance tests between runs, with corrected p-values and effect sizes."""
    from metaeval.meta.significance import compare as run_compare

    load_plugins(plugin)
    check_alpha(alpha)
    frame = _per_topic_scores(qrels, runs, measure, topics, run_names)
    names = list(dict.fromkeys(frame["run"]))
    if baseline is not None and baseline not in names:
        fail(f"--baseline {baseline!r} is not one of the runs: {', '.join(names)}")
    rng = None if test is Test.t else resolve_seed(seed)
    tables = []
    for name, sub in frame.groupby("measure", sort=False):
        try:
            out = run_compare(
                sub[["run", "topic", "value"]],
                test=test.value,
                correction=None if correction is Correction.none else correction.value,
                alpha=alpha,
                B=B,
                rng=rng,
                baseline=baseline,
            )
        except (ValueError, TypeError) as err:
            fail(f"{name}: {err}")
        out.insert(0, "measure", str(name))
        tables.append(out)
    print_frame(pd.concat(tables, ignore_index=True), fmt)
