"""``metaeval discriminate`` and ``metaeval compare``: significance on real runs.

``discriminate`` runs the discriminative-power criterion as a study of one TREC world
(:mod:`metaeval.cli._study`), so its numbers are those of a study file with the same world,
criterion and seed.
"""

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
from metaeval.cli._study import criterion, trec_study


class Method(str, Enum):
    bootstrap = "bootstrap"
    tukey = "tukey"


class Test(str, Enum):
    t = "t"
    wilcoxon = "wilcoxon"
    sign = "sign"
    randomization = "randomization"
    bootstrap = "bootstrap"


class Correction(str, Enum):
    holm = "holm"
    bh = "bh"
    westfall_young = "westfall-young"
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
    _enough_to_compare(frame["run"].nunique(), frame["topic"].nunique(), topics, run_names)
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
    from metaeval.meta import plot_asl_curves
    from metaeval.meta._resampling import DEFAULT_B

    load_plugins(plugin)
    check_alpha(alpha)
    if plot is not None:
        writable(plot, "--plot")
    if len(runs) < 2:
        fail(f"give at least two run files to compare, got {len(runs)}")
    seed = resolve_seed(seed)
    with trec_study(
        "discriminate",
        qrels,
        runs,
        measure,
        seed=seed,
        topics=topics,
        run_names=run_names,
        plugins=plugin,
    ) as study:
        n_runs, n_topics = study.tensor.n_runs, study.tensor.n_topics
        _enough_to_compare(n_runs, n_topics, topics, run_names)
        study.full_scores()
        # one set of resamples for every measure: differences come from the measures alone
        wanted = criterion("discriminative_power", method=method.value, B=B, alpha=alpha)
        tables = study.run(wanted, tables=("results", "asl"))
    value = {(r.measure, r.statistic): r.value for r in tables["results"].itertuples()}
    table = pd.DataFrame(
        [
            {
                "measure": m,
                "method": method.value,
                "B": DEFAULT_B[method.value] if B is None else B,
                "alpha": alpha,
                "runs": n_runs,
                "topics": n_topics,
                "pairs": int(value[m, "n_pairs"]),
                "significant": int(value[m, "n_significant"]),
                "power": value[m, "power"],
                "diff_required": value[m, "diff_required"],
            }
            for m in study.labels
        ]
    )
    print_frame(table, fmt)
    if plot is not None:
        asl = tables["asl"]
        order = asl["measure"].map({m: i for i, m in enumerate(study.labels)})
        curves = asl.assign(order=order).sort_values(["order", "rank"], kind="stable")
        try:
            plot_asl_curves(curves[["measure", "rank", "asl"]].assign(alpha=alpha), path=plot)
        except ValueError as err:  # e.g. an unknown image extension
            fail(f"--plot {plot}: {err}")
        typer.echo(f"ASL curves written to {plot}", err=True)


def _enough_to_compare(n_runs: int, n_topics: int, topics, run_names) -> None:
    """Fail unless there are two runs and two topics to test, naming the selection to blame."""
    if n_runs < 2:
        fail(f"--runs {run_names!r} leaves {n_runs} run: give at least two to compare")
    if n_topics < 2:
        where = " (after --topics)" if topics is not None else ""
        fail(f"the qrels{where} have {n_topics} topic: significance needs at least two topics")


def compare(
    qrels: QrelsArgument,
    runs: RunsArg,
    measure: MeasuresOption = ["AP"],
    test: Annotated[
        list[Test],
        typer.Option(
            "--test",
            help="Paired t-test, Wilcoxon signed-rank, sign test, Fisher randomisation (exact "
            "when 2^topics <= B) or Sakai's bootstrap (repeatable: --test t --test wilcoxon).",
        ),
    ] = [Test.t],
    correction: Annotated[
        Correction,
        typer.Option(
            "--correction",
            help="Multiple-comparison correction over the family of pairs, per test: Holm, "
            "Benjamini-Hochberg, Westfall-Young step-down max-T (randomisation test only) or "
            "none.",
        ),
    ] = Correction.holm,
    alpha: AlphaOpt = 0.05,
    B: Annotated[
        int,
        typer.Option("-B", "--samples", min=1, help="Resamples for randomisation and bootstrap."),
    ] = 10000,
    seed: SeedOption = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            help="The family: every run against this run (diff = run - baseline). Default: "
            "every pair of runs.",
        ),
    ] = None,
    topics: TopicsOption = None,
    run_names: RunNamesOption = None,
    fmt: FormatOption = Format.table,
    plugin: PluginOption = None,
) -> None:
    """Pairwise tests between runs: differences with intervals, effect sizes and p-values.

    For every pair of the family (every pair of runs, or every run against --baseline) and
    every --test: the estimate (mean difference; Wilcoxon: Hodges-Lehmann pseudo-median; sign:
    median difference), its 100(1 - alpha)% interval by the test's own method, the p-value
    and the p-value corrected over the family, and two effect sizes: d_z (mean difference
    over the standard deviation of the per-topic differences) and the mean difference over
    sqrt(V_E), the residual variance of the two-way ANOVA of all the runs.
    """
    from metaeval._warnings import warn
    from metaeval.stats import anova_residual_variance, paired_comparisons, westfall_young

    load_plugins(plugin)
    check_alpha(alpha)
    tests = list(dict.fromkeys(t.value for t in test))  # a test given twice is run once
    westfall = correction is Correction.westfall_young
    if westfall and tests != ["randomization"]:
        fail(
            "--correction westfall-young adjusts the randomisation test's p-values on its own "
            "sign flips: use it with --test randomization alone"
        )
    frame = _per_topic_scores(qrels, runs, measure, topics, run_names)
    names = list(dict.fromkeys(frame["run"]))
    if baseline is not None and baseline not in names:
        fail(f"--baseline {baseline!r} is not one of the runs: {', '.join(names)}")
    family = "all_pairs" if baseline is None else "baseline"
    resampled = westfall or bool({"randomization", "bootstrap"} & set(tests))
    # One seed for every measure: each measure is tested on the same sign flips and samples.
    rng = resolve_seed(seed) if resampled else None
    # Holm and BH come with the tests; Westfall-Young replaces the p_adjusted column below.
    library_correction = (
        correction.value if correction in (Correction.holm, Correction.bh) else None
    )
    tables, notes = [], []
    for name, sub in frame.groupby("measure", sort=False):
        scores = sub[["run", "topic", "value"]]
        try:
            ve = anova_residual_variance(scores)
            if not ve > 0:
                warn(
                    f"{name}: the runs' scores fit a two-way ANOVA exactly (V_E = 0): the "
                    "effect size over sqrt(V_E) is left empty"
                )
                ve = None
            out = paired_comparisons(
                scores,
                family=family,
                baseline=baseline,
                tests=tests,
                correction=library_correction,
                alpha=alpha,
                residual_variance=ve,
                B=B,
                rng=rng,
            )
            if westfall:
                wy = westfall_young(
                    scores, family=family, baseline=baseline, alpha=alpha, B=B, rng=rng
                )
                adjusted = dict(zip(zip(wy.system_a, wy.system_b), wy.p_adjusted))
                out["p_adjusted"] = [adjusted[k] for k in zip(out["system_a"], out["system_b"])]
                out["significant"] = out["p_adjusted"] < alpha
        except (ValueError, TypeError) as err:
            fail(f"{name}: {err}")
        out.insert(0, "measure", str(name))
        out.insert(1, "family", family)
        out.insert(2, "correction", correction.value)
        tables.append(out)
        notes.append(_compare_note(str(name), out, names, baseline, correction, alpha, ve))
    if fmt is Format.table:
        shown = ["system_a", "system_b", "test", "diff", "ci_low", "ci_high", "p_value"]
        shown += ["p_adjusted", "significant", "effect_size", "effect_size_ve"]
        if {"wilcoxon", "sign"} & set(tests):
            # Their estimates are not the mean difference, and their intervals are order
            # statistics, whose attained confidence can be well above the one asked for.
            shown[4:4] = ["estimate"]
            shown[7:7] = ["ci_level"]
        for note, out in zip(notes, tables):
            typer.echo(note)
            view = out[shown].rename(columns={"effect_size": "d_z", "effect_size_ve": "d_VE"})
            typer.echo(view.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
            typer.echo("")
    else:
        print_frame(pd.concat(tables, ignore_index=True), fmt)


_ESTIMATES = {
    "t": "mean, t interval",
    "wilcoxon": "Hodges-Lehmann pseudo-median, Walsh-average interval",
    "sign": "median, order-statistic interval",
    "randomization": "mean, inverted-test interval",
    "bootstrap": "mean, BCa interval",
}
_CORRECTIONS = {
    "holm": "Holm",
    "bh": "Benjamini-Hochberg",
    "westfall-young": "Westfall-Young step-down max-T",
}


def _compare_note(name, out, names, baseline, correction, alpha, ve) -> str:
    """The lines above a measure's table: the family, the correction, what each test estimates
    and the effect sizes."""
    n = out[["system_a", "system_b"]].drop_duplicates().shape[0]
    pairs = f"{n} pair" if n == 1 else f"{n} pairs"
    if baseline is None:
        family = f"every pair of the {len(names)} runs ({pairs})"
    else:
        family = f"every run against the baseline {baseline} ({pairs})"
    if correction is Correction.none:
        adjusted = "not corrected"
    else:
        adjusted = f"{_CORRECTIONS[correction.value]} over the {pairs}, per test"
    estimates = "; ".join(f"{t}: {_ESTIMATES[t]}" for t in dict.fromkeys(out["test"]))
    v = "undefined (V_E = 0)" if ve is None else f"V_E = {ve:.4g}"
    return (
        f"{name}, family: {family}; diff = system_a - system_b\n"
        f"  p_adjusted: {adjusted}; significant: p_adjusted < {alpha:g}\n"
        f"  estimate and {100 * (1 - alpha):g}% interval: {estimates}\n"
        f"  d_z = mean diff / sd of the per-topic differences; d_VE = mean diff / sqrt(V_E), "
        f"{v} (two-way ANOVA of the {len(names)} runs)"
    )
