"""``metaeval discriminate`` and ``metaeval compare``: significance on real runs.

Plain command functions with typer annotations; :mod:`metaeval.cli` registers them.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from metaeval.cli.evaluate import Format, PluginOption, fail, load_plugins, print_frame


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


QrelsArg = Annotated[Path, typer.Argument(help="TREC qrels file (plain or .gz).", exists=True, dir_okay=False)]
RunsArg = Annotated[
    list[Path], typer.Argument(help="TREC run files (plain or .gz), at least two.", exists=True, dir_okay=False)
]
MeasureOpt = Annotated[
    list[str], typer.Option("-m", "--measure", help="Measure, e.g. AP, nDCG@10, 'P(rel=2)@10' (repeatable).")
]
AlphaOpt = Annotated[float, typer.Option("--alpha", help="Significance level.")]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="Random seed (default: fresh entropy).")]


def _per_topic_scores(qrels: Path, runs: list[Path], measure: list[str]) -> pd.DataFrame:
    from metaeval.data import TrecFormatError
    from metaeval.evaluate import evaluate

    if len(runs) < 2:
        fail("give at least two run files to compare")
    try:
        return evaluate([str(p) for p in runs], str(qrels), measure, per_topic=True)
    except (TrecFormatError, ValueError, TypeError) as err:
        fail(str(err))


def discriminate(
    qrels: QrelsArg,
    runs: RunsArg,
    measure: MeasureOpt = ["AP", "nDCG@10", "P@10"],
    method: Annotated[Method, typer.Option("--method", help="Paired bootstrap (Sakai 2006) or "
                                           "randomised Tukey HSD.")] = Method.bootstrap,
    B: Annotated[int | None, typer.Option("-B", "--samples", help="Bootstrap samples / permutations "
                                          "(default 1000 bootstrap, 5000 tukey).")] = None,
    alpha: AlphaOpt = 0.05,
    seed: SeedOpt = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write the ASL curves to this image "
                                              "(png, pdf, svg).", dir_okay=False)] = None,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.table,
    plugin: PluginOption = None,
) -> None:
    """Discriminative power of each measure: share of run pairs significantly different.

    Prints, per measure, the discriminative power (pairs with ASL < alpha) and the difference
    required (bootstrap: Sakai's estimated difference; tukey: the critical difference).
    """
    from metaeval.meta.discrimination import discriminative_power, plot_asl_curves

    load_plugins(plugin)
    frame = _per_topic_scores(qrels, runs, measure)
    results = {}
    for name, sub in frame.groupby("measure", sort=False):
        try:
            results[str(name)] = discriminative_power(
                sub[["run", "topic", "value"]], method=method.value, B=B, alpha=alpha, rng=seed
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
            plot_asl_curves(results, path=plot, title=f"ASL curves ({method.value}, B={table['B'].iloc[0]})")
        except ValueError as err:  # e.g. an unknown image extension
            fail(f"--plot {plot}: {err}")
        typer.echo(f"ASL curves written to {plot}", err=True)


def compare(
    qrels: QrelsArg,
    runs: RunsArg,
    measure: MeasureOpt = ["AP"],
    test: Annotated[Test, typer.Option("--test", help="Paired t-test, Fisher randomisation "
                                       "(exact when 2^topics <= B) or Sakai's bootstrap.")] = Test.t,
    correction: Annotated[Correction, typer.Option("--correction", help="Multiple-comparison "
                                                   "correction over the pairs.")] = Correction.holm,
    alpha: AlphaOpt = 0.05,
    B: Annotated[int, typer.Option("-B", "--samples", help="Resamples for randomisation and "
                                   "bootstrap.")] = 10000,
    seed: SeedOpt = None,
    baseline: Annotated[str | None, typer.Option("--baseline", help="Compare every run with this "
                                                 "run only.")] = None,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.table,
    plugin: PluginOption = None,
) -> None:
    """Pairwise significance tests between runs, with corrected p-values and effect sizes."""
    from metaeval.meta.significance import compare as run_compare

    load_plugins(plugin)
    frame = _per_topic_scores(qrels, runs, measure)
    tables = []
    for name, sub in frame.groupby("measure", sort=False):
        try:
            out = run_compare(
                sub[["run", "topic", "value"]],
                test=test.value,
                correction=None if correction is Correction.none else correction.value,
                alpha=alpha,
                B=B,
                rng=seed,
                baseline=baseline,
            )
        except (ValueError, TypeError) as err:
            fail(f"{name}: {err}")
        out.insert(0, "measure", str(name))
        tables.append(out)
    print_frame(pd.concat(tables, ignore_index=True), fmt)
