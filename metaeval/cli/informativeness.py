"""``metaeval informativeness``: maximum-entropy informativeness of measures on real runs.

A plain command function with typer annotations; :mod:`metaeval.cli` registers it.
"""

from __future__ import annotations

import warnings
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from metaeval.cli.evaluate import Format, PluginOption, fail, load_plugins, print_frame


class Error(str, Enum):
    recall_points = "recall_points"
    interpolated = "interpolated"


class Count(str, Enum):
    retrieved = "retrieved"
    relevant = "relevant"


QrelsArg = Annotated[Path, typer.Argument(help="TREC qrels file (plain or .gz).", exists=True, dir_okay=False)]
RunsArg = Annotated[list[Path], typer.Argument(help="TREC run files (plain or .gz).", exists=True,
                                               dir_okay=False)]
MeasureOpt = Annotated[list[str], typer.Option(
    "-m", "--measure", help="Measure with an expectation: AP, P@k, Rprec, RR, nDCG[@k], "
                            "'GAP(g=(0.5,0.5))' (repeatable).")]


def informativeness(
    qrels: QrelsArg,
    runs: RunsArg,
    measure: MeasureOpt = ["AP", "P@10", "Rprec"],
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Directory for figures: RMS bars per measure and inferred vs actual "
                       "precision-recall curves of one list.", file_okay=False)] = None,
    rel: Annotated[int, typer.Option("--rel", help="Relevance level of binary measures "
                                                   "(TREC DL uses 2).")] = 1,
    min_relevant: Annotated[int, typer.Option(
        "--min-relevant", help="Keep topics with at least this many judged documents at every "
                               "relevance threshold.")] = 5,
    error: Annotated[Error, typer.Option("--error", help="RMS at the recall points of each list "
                                         "(Robertson et al. 2010) or over 11 interpolated "
                                         "points (Aslam et al. 2005).")] = Error.recall_points,
    count: Annotated[Count, typer.Option("--count", help="Sum constraint of the max-ent problem: "
                                         "relevant documents the list retrieved (default) or the "
                                         "topic's R.")] = Count.retrieved,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.table,
    plugin: PluginOption = None,
) -> None:
    """Informativeness of each measure: how well its value alone predicts the list's PR curve.

    For every ranked list, the maximum-entropy distribution of relevance consistent with the
    measure's value is inferred (Aslam, Yilmaz & Pavlu, SIGIR 2005); the mean RMS error of the
    inferred precision-recall curve against the actual one is printed per measure and
    relevance threshold (lower = more informative).
    """
    from metaeval.data import TrecFormatError
    from metaeval.meta.informativeness import informativeness as run_informativeness
    from metaeval.meta.maxent import MaxEntConvergenceWarning

    load_plugins(plugin)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", MaxEntConvergenceWarning)
            result = run_informativeness([str(p) for p in runs], str(qrels), measure, rel=rel,
                                         min_relevant=min_relevant, error=error.value,
                                         count=count.value)
    except (TrecFormatError, ValueError, TypeError) as err:
        fail(str(err))
    for w in caught:
        if issubclass(w.category, MaxEntConvergenceWarning):
            typer.echo(f"warning: {w.message}", err=True)
    if result.lists.empty:
        fail(f"no topic has {min_relevant} judged documents at every relevance threshold; "
             "lower --min-relevant")
    cols = ["measure", "threshold", "n_lists", "n_scored", "rms", "rms_recall_points",
            "rms_interpolated", "not_converged"]
    print_frame(result.summary[cols + [c for c in result.summary if c.startswith("rmse_")]], fmt)
    if plot is not None:
        try:
            _plot(result, plot, qrels, runs, rel)
        except (OSError, ValueError) as err:
            fail(f"--plot {plot}: {err}")
        typer.echo(f"figures written to {plot}", err=True)


def _plot(result, directory: Path, qrels: Path, runs: list[Path], rel: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import seaborn as sns

    from metaeval.engine import EvalTensor
    from metaeval.evaluate import as_qrels, as_runset
    from metaeval.meta.informativeness import measure_expectation
    from metaeval.meta.maxent import actual_pr_curve, inferred_pr_curve, maxent_distribution

    directory.mkdir(parents=True, exist_ok=True)
    s = result.summary.copy()
    s["label"] = s["measure"] + " (>=" + s["threshold"].astype(str) + ")"
    fig, ax = plt.subplots(figsize=(max(4, 0.9 * len(s)), 3.5))
    sns.barplot(s, x="label", y="rms", ax=ax, color="C0")
    ax.set_xlabel("")
    ax.set_ylabel(f"mean RMS error ({result.error})")
    ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    fig.savefig(directory / "rms_by_measure.png", dpi=150)
    plt.close(fig)

    # inferred vs actual curves of the list with the median value of the first measure
    lists = result.lists
    first = lists[lists["measure"] == lists["measure"].iloc[0]]
    ex = first.sort_values("value").iloc[len(first) // 2]
    tensor = EvalTensor.build(as_runset([str(p) for p in runs]), as_qrels(str(qrels)))
    s_i = tensor.runs.index(ex["run"])
    t_i = list(tensor.topics).index(ex["topic"])
    L = int(tensor.lengths[s_i, t_i])
    grades = np.maximum(tensor.codes[s_i, t_i, :L], 0)
    fig, ax = plt.subplots(figsize=(5, 4))
    for name in lists["measure"].unique():
        exp, threshold, m = measure_expectation(name, tensor.n_grades, rel)
        value = float(m.compute(tensor)[s_i, t_i])
        th = threshold if threshold is not None else max(rel, 1)
        R = int(tensor.n_relevant(th)[t_i])
        if exp.graded:
            G = tensor.n_grades - 1
            r = maxent_distribution(exp, value, length=L, n_relevant=tensor.grade_counts[t_i, 1:],
                                    n_retrieved_relevant=[(grades == j).sum() for j in range(1, G + 1)],
                                    warn=False)
            p = r.p[:, th:].sum(-1)
        else:
            r = maxent_distribution(exp, value, length=L, n_relevant=R,
                                    n_retrieved_relevant=(grades >= th).sum(), warn=False)
            p = r.p
        if not r.feasible:
            continue
        prec, rec = inferred_pr_curve(p, R)
        ax.plot(rec, prec, label=f"inferred from {name} = {value:.3f}")
    prec, rec = actual_pr_curve((grades >= max(rel, 1)).astype(float), int(tensor.n_relevant(max(rel, 1))[t_i]))
    ax.plot(rec, prec, "k", lw=2, label="actual")
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_xlim(0, 1)
    ax.set_title(f"{ex['run']} / topic {ex['topic']} (grade >= {max(rel, 1)})", fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(directory / "pr_curves.png", dpi=150)
    plt.close(fig)
