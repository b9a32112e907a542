"""``metaeval topics-needed``, ``metaeval anova`` and ``metaeval reliability``: how much a test
collection can tell, from the per-topic scores of its runs."""

from __future__ import annotations

import math
from enum import Enum
from pathlib import Path
from typing import Annotated

import numpy as np
import pandas as pd
import typer

from metaeval._warnings import warn
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
)

RunsArg = Annotated[
    list[Path],
    typer.Argument(
        help="TREC run files (plain, gzip, bz2 or xz), at least two.", exists=True, dir_okay=False
    ),
]
AlphaOpt = Annotated[float, typer.Option("--alpha", help="Significance level, in (0, 1).")]


class Design(str, Enum):
    t = "t"
    anova = "anova"


class Interval(str, Enum):
    satterthwaite = "satterthwaite"
    jackknife = "jackknife"


# ---------------------------------------------------------------------------- helpers
def _scores(
    qrels: Path, runs: list[Path], measure: list[str], topics, run_names, what: str
) -> dict[str, pd.DataFrame]:
    """Per-topic scores of every run, one tidy frame (run, topic, value) per measure."""
    from metaeval.evaluation import evaluate

    if len(runs) < 2:
        fail(f"{what} needs the scores of at least two runs: give two or more run files")
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
        fail(f"--runs {run_names!r} leaves {n_runs} run: {what} needs at least two")
    if n_topics < 2:
        where = " (after --topics)" if topics is not None else ""
        fail(f"the qrels{where} have {n_topics} topic: {what} needs at least two topics")
    return {
        str(name): sub[["run", "topic", "value"]].reset_index(drop=True)
        for name, sub in frame.groupby("measure", sort=False)
    }


def _open_unit(value: float, option: str, example: str) -> float:
    if not (math.isfinite(value) and 0 < value < 1):
        fail(f"{option} {value:g}: must be in (0, 1), e.g. {example}")
    return value


def _positive(value: float | None, option: str, example: str) -> float | None:
    if value is not None and not (math.isfinite(value) and value > 0):
        fail(f"{option} {value:g}: must be a positive number, e.g. {example}")
    return value


def _numbers(text: str, option: str, example: str) -> list[float]:
    """Comma-separated numbers, each once, in the order given."""
    try:
        values = [float(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        fail(f"{option} {text!r}: expected numbers separated by commas, e.g. {example}")
    if not values:
        fail(f"{option} {text!r} is empty: give numbers separated by commas, e.g. {example}")
    if len(set(values)) < len(values):
        fail(f"{option} {text!r}: a value is given twice; give each once")
    return values


def _fit(name: str, function, *args, **kwargs):
    """``function(*args, **kwargs)``; its refusal (e.g. scores with no residual variance) is one
    line naming the measure."""
    try:
        return function(*args, **kwargs)
    except (ValueError, TypeError) as err:
        fail(f"{name}: {err}")


def _whole(values) -> list[str]:
    """Numbers of topics as text: integers, or 'inf' where no number suffices."""
    return ["nan" if math.isnan(v) else "inf" if math.isinf(v) else str(int(v)) for v in values]


# ---------------------------------------------------------------------------- topics-needed
def topics_needed(
    qrels: QrelsArgument,
    runs: RunsArg,
    measure: MeasuresOption = ["AP"],
    design: Annotated[
        Design,
        typer.Option(
            "--design",
            help="t: a paired t-test between two runs; anova: a one-way ANOVA over --systems "
            "runs (default: as many as given).",
        ),
    ] = Design.t,
    alpha: AlphaOpt = 0.05,
    power: Annotated[
        float, typer.Option("--power", help="Power wanted (1 - beta), in (alpha, 1).")
    ] = 0.8,
    min_diff: Annotated[
        float,
        typer.Option(
            "--min-diff",
            help="Smallest difference to detect, in the measure's units (anova: between the "
            "best and the worst run).",
        ),
    ] = 0.05,
    ci_width: Annotated[
        float | None,
        typer.Option(
            "--ci-width",
            help="Also: the topics for a 100(1 - alpha)% interval of a paired difference no "
            "wider than this on average.",
        ),
    ] = None,
    systems: Annotated[
        int | None,
        typer.Option(
            "--systems",
            min=2,
            help="anova: the number of runs to compare (default: the runs given).",
        ),
    ] = None,
    topics: TopicsOption = None,
    run_names: RunNamesOption = None,
    fmt: FormatOption = Format.table,
    plugin: PluginOption = None,
) -> None:
    """Topics a collection needs to detect a difference (Sakai's topic-set-size design).

    The variance comes from the runs given: V_E, the residual mean square of the two-way ANOVA
    of their per-topic scores. Prints, per measure, the topics needed, the power the design
    reaches with them, and what the collection's own topics give: their power, and the
    smallest difference they detect with the power wanted.
    """
    from metaeval.stats import (
        expected_ci_width,
        min_detectable_difference_anova,
        min_detectable_difference_paired_t,
        power_anova,
        power_paired_t,
        residual_variance,
        topic_set_size_anova,
        topic_set_size_ci,
        topic_set_size_paired_t,
    )

    load_plugins(plugin)
    check_alpha(alpha)
    _open_unit(power, "--power", "0.8")
    if power <= alpha:
        fail(
            f"--power {power:g} is not above --alpha {alpha:g}: a test has that power against "
            "no difference at all; ask for more, e.g. 0.8"
        )
    _positive(min_diff, "--min-diff", "0.05")
    _positive(ci_width, "--ci-width", "0.1")
    if systems is not None and design is not Design.anova:
        fail("--systems is the number of runs of an ANOVA: use it with --design anova")
    beta = 1.0 - power
    rows = []
    for name, scores in _scores(qrels, runs, measure, topics, run_names, "topics-needed").items():
        ve = _fit(name, residual_variance, scores)
        if not ve.residual > 0:
            fail(
                f"{name}: the runs' scores have no residual variance (V_E = 0: every run differs "
                "from another by the same amount on every topic), so any number of topics detects "
                "any difference; check the runs"
            )
        n_runs, n_topics = int(scores["run"].nunique()), int(scores["topic"].nunique())
        common = {
            "measure": name,
            "runs": n_runs,
            "topics": n_topics,
            "V_E": ve.residual,
            "df_E": ve.df,
            "alpha": alpha,
        }
        if design is Design.t:
            need = _fit(name, topic_set_size_paired_t, min_diff, ve, alpha=alpha, beta=beta)
            here = power_paired_t(n_topics, min_diff, ve, alpha=alpha)
            smallest = min_detectable_difference_paired_t(n_topics, ve, alpha=alpha, beta=beta)
        else:
            m = n_runs if systems is None else systems
            need = _fit(name, topic_set_size_anova, min_diff, ve, m, alpha=alpha, beta=beta)
            here = power_anova(n_topics, min_diff, ve, m, alpha=alpha)
            smallest = min_detectable_difference_anova(n_topics, ve, m, alpha=alpha, beta=beta)
        rows.append(
            {
                **common,
                "design": "paired t" if design is Design.t else "anova",
                "n_systems": need.n_systems,
                "power": power,
                "min_diff": min_diff,
                "topics_needed": need.n_topics,
                "power_at_needed": need.power,
                "power_at_topics": here,
                "min_diff_at_topics": smallest,
            }
        )
        if ci_width is not None:
            need = _fit(name, topic_set_size_ci, ci_width, ve, alpha=alpha)
            rows.append(
                {
                    **common,
                    "design": "ci",
                    "ci_width": ci_width,
                    "topics_needed": need.n_topics,
                    "width_at_needed": need.expected_width,
                    "width_at_topics": expected_ci_width(n_topics, ve, alpha=alpha),
                }
            )
    columns = [
        "measure",
        "design",
        "runs",
        "topics",
        "V_E",
        "df_E",
        "alpha",
        "power",
        "min_diff",
        "n_systems",
        "ci_width",
        "topics_needed",
        "power_at_needed",
        "width_at_needed",
        "power_at_topics",
        "min_diff_at_topics",
        "width_at_topics",
    ]
    frame = pd.DataFrame(rows).reindex(columns=columns)
    frame["n_systems"] = frame["n_systems"].astype("Int64")
    if fmt is Format.table:
        for _, rows_of in frame.groupby("measure", sort=False):
            _print_topics_needed(rows_of)
    else:
        print_frame(frame, fmt)


def _print_topics_needed(rows: pd.DataFrame) -> None:
    first = rows.iloc[0]
    n = int(first["topics"])
    typer.echo(
        f"{first['measure']}: V_E = {first['V_E']:.4g} (residual mean square of the two-way "
        f"ANOVA of {first['runs']} runs x {n} topics, {first['df_E']} degrees of freedom)"
    )
    for _, r in rows.iterrows():
        if r["design"] == "ci":
            typer.echo(
                f"  {100 * (1 - r['alpha']):g}% interval of a paired difference no wider than "
                f"{r['ci_width']:g} on average: {r['topics_needed']} topics (expected width "
                f"{r['width_at_needed']:.4f})"
            )
            typer.echo(
                f"    with the collection's {n} topics: expected width {r['width_at_topics']:.4f}"
            )
            continue
        if r["design"] == "paired t":
            test, what = "paired t-test", "difference"
        else:
            test, what = f"one-way ANOVA over {r['n_systems']} runs", "range of the run means"
        typer.echo(
            f"  {test}, alpha {r['alpha']:g}, power {r['power']:g}, {what} {r['min_diff']:g}: "
            f"{r['topics_needed']} topics (power {r['power_at_needed']:.3f})"
        )
        typer.echo(
            f"    with the collection's {n} topics: power {r['power_at_topics']:.3f}; the "
            f"smallest {what} detected with power {r['power']:g} is {r['min_diff_at_topics']:.4f}"
        )
    typer.echo("")


# ---------------------------------------------------------------------------- anova
def anova(
    qrels: QrelsArgument,
    runs: RunsArg,
    measure: MeasuresOption = ["AP"],
    tukey: Annotated[
        bool,
        typer.Option(
            "--tukey",
            help="Also Tukey's HSD test of every pair of runs: effect sizes and simultaneous "
            "intervals.",
        ),
    ] = False,
    randomized: Annotated[
        bool,
        typer.Option(
            "--randomized",
            help="The randomised Tukey HSD (scores permuted within each topic) instead of the "
            "studentised range; implies --tukey.",
        ),
    ] = False,
    alpha: AlphaOpt = 0.05,
    B: Annotated[
        int,
        typer.Option("-B", "--samples", min=1, help="Permutations of the randomised Tukey HSD."),
    ] = 5000,
    seed: SeedOption = None,
    topics: TopicsOption = None,
    run_names: RunNamesOption = None,
    fmt: FormatOption = Format.table,
    plugin: PluginOption = None,
) -> None:
    """Two-way ANOVA of the runs' per-topic scores (runs x topics, without replication).

    Prints the ANOVA table (sums of squares, degrees of freedom, mean squares, F, p) and V_E,
    the residual mean square. With --tukey, every pair of runs: the difference, its effect
    size diff / sqrt(V_E), the family-wise p-value and the simultaneous interval. In csv, tsv
    and json the table printed is the pairs with --tukey, the ANOVA table otherwise.
    """
    from metaeval.stats import anova as run_anova
    from metaeval.stats import randomized_tukey_hsd, tukey_hsd

    load_plugins(plugin)
    check_alpha(alpha)
    tukey = tukey or randomized
    rng = resolve_seed(seed) if randomized else None
    tables, pairs = [], []
    for name, scores in _scores(qrels, runs, measure, topics, run_names, "anova").items():
        if randomized:
            # The same seed for every measure: every measure is tested on the same permutations.
            hsd = _fit(name, randomized_tukey_hsd, scores, B=B, alpha=alpha, rng=rng)
            res = hsd.anova
        elif tukey:
            hsd = _fit(name, tukey_hsd, scores, alpha=alpha)
            res = hsd.anova
        else:
            hsd, res = None, _fit(name, run_anova, scores)
        table = res.to_frame().reset_index()
        table.insert(0, "measure", name)
        tables.append(table)
        if hsd is not None:
            out = hsd.to_frame()
            for i, (key, value) in enumerate(
                [
                    ("measure", name),
                    ("method", hsd.method),
                    ("alpha", alpha),
                    ("V_E", hsd.V_E),
                    ("df_E", hsd.df_E),
                    ("critical_difference", hsd.critical_difference),
                ]
            ):
                out.insert(i, key, value)
            pairs.append(out)
        if fmt is Format.table:
            _print_anova(name, res, hsd)
    if fmt is not Format.table:
        print_frame(pd.concat(pairs if tukey else tables, ignore_index=True), fmt)


def _print_anova(name: str, res, hsd) -> None:
    typer.echo(
        f"{name}: two-way ANOVA without replication, {res.n_systems} runs x {res.n_topics} topics"
    )
    table = res.to_frame()
    table["df"] = table["df"].astype(int)
    typer.echo(table.to_string(float_format=lambda v: f"{v:.4f}", na_rep=""))
    typer.echo(f"V_E = {res.V_E:.6g} (residual mean square, {res.df_E} degrees of freedom)")
    if hsd is None:
        typer.echo("")
        return
    if hsd.method == "studentized":
        how = (
            f"Tukey HSD (studentised range q({res.n_systems}, {res.df_E}; {hsd.alpha:g}) = "
            f"{hsd.q_crit:.4f})"
        )
    else:
        how = f"randomised Tukey HSD ({hsd.B} permutations within topics)"
    typer.echo(
        f"{how}: critical difference {hsd.critical_difference:.4f}; {hsd.n_significant} of "
        f"{hsd.n_pairs} pairs differ at family-wise alpha {hsd.alpha:g}"
    )
    typer.echo(
        f"  effect_size = diff / sqrt(V_E); ci_low, ci_high: {100 * (1 - hsd.alpha):g}% "
        "simultaneous intervals"
    )
    shown = hsd.to_frame().drop(columns=["mean_a", "mean_b"])
    typer.echo(shown.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    typer.echo("")


# ---------------------------------------------------------------------------- reliability
def reliability(
    qrels: QrelsArgument,
    runs: RunsArg,
    measure: MeasuresOption = ["AP"],
    sizes: Annotated[
        str | None,
        typer.Option(
            "--sizes",
            help="Also these numbers of topics, comma separated, e.g. 25,50,100 (the "
            "collection's own is always shown).",
        ),
    ] = None,
    topics_for: Annotated[
        str,
        typer.Option(
            "--topics-for",
            help="Targets of E(rho^2) and Phi, comma separated, in (0, 1): the topics needed "
            "to reach each.",
        ),
    ] = "0.95",
    confidence: Annotated[
        float, typer.Option("--confidence", help="Confidence level of the intervals, in (0, 1).")
    ] = 0.95,
    ci: Annotated[
        Interval,
        typer.Option(
            "--ci",
            help="Intervals of the variance components: Satterthwaite's, or the jackknife "
            "(at least 3 runs and 3 topics).",
        ),
    ] = Interval.satterthwaite,
    topics: TopicsOption = None,
    run_names: RunNamesOption = None,
    fmt: FormatOption = Format.table,
    plugin: PluginOption = None,
) -> None:
    """Reliability of the collection by generalizability theory (runs x topics).

    G-study: the variance of the runs' scores split into runs, topics and their interaction
    (with intervals). D-study: E(rho^2), how stable the ranking of the runs is, and Phi, how
    stable their scores are, with n topics (the collection's and --sizes), and the Kendall's
    tau expected between the rankings from two disjoint sets of n topics. Then the topics
    needed for each --topics-for target. csv, tsv and json print one row per quantity.
    """
    from metaeval.stats import d_study, expected_tau, g_study
    from metaeval.stats import topics_needed as needed_for

    load_plugins(plugin)
    _open_unit(confidence, "--confidence", "0.95")
    targets = _numbers(topics_for, "--topics-for", "0.9,0.95")
    for v in targets:
        _open_unit(v, "--topics-for", "0.95")
    extra = []
    if sizes is not None:
        extra = _numbers(sizes, "--sizes", "25,50,100")
        for v in extra:
            if not (v.is_integer() and v >= 1):
                fail(f"--sizes {v:g}: a number of topics must be a whole number >= 1")
    rows, blocks = [], []
    for name, scores in _scores(qrels, runs, measure, topics, run_names, "reliability").items():
        n_runs, n_topics = int(scores["run"].nunique()), int(scores["topic"].nunique())
        if ci is Interval.jackknife and (n_runs < 3 or n_topics < 3):
            fail(
                f"--ci jackknife re-estimates without a run and without a topic: it needs at "
                f"least 3 runs and 3 topics, got {n_runs} and {n_topics}; use --ci satterthwaite"
            )
        g = _fit(name, g_study, scores, ci=ci.value, level=confidence)
        for source in g.negative:
            warn(
                f"{name}: the ANOVA estimate of the {source} variance is negative (sampling "
                "error of a small component); it is taken as 0"
            )
        counts = list(dict.fromkeys([n_topics, *(int(v) for v in extra)]))
        d = d_study(g, counts, level=confidence)
        need = needed_for(g, targets, level=confidence)
        # expected_tau increases with E(rho^2): the ends of E(rho^2)'s interval map to those
        # of the expected tau.
        tau = [expected_tau(v) for v in (d.erho2, d.erho2_low, d.erho2_high)]
        rows += _reliability_rows(name, g, d, need, tau, confidence)
        blocks.append((name, g, d, need, tau))
    if fmt is Format.table:
        for name, g, d, need, tau in blocks:
            _print_reliability(name, g, d, need, tau)
    else:
        print_frame(pd.DataFrame(rows), fmt)


def _reliability_rows(name, g, d, need, tau, level) -> list[dict]:
    def row(quantity, estimate, low, high, n_topics=np.nan, target=np.nan):
        return {
            "measure": name,
            "quantity": quantity,
            "n_topics": n_topics,
            "target": target,
            "estimate": float(estimate),
            "low": float(low),
            "high": float(high),
            "level": level,
        }

    rows = [
        row("var_system", g.var_s, g.var_s_low, g.var_s_high),
        row("var_topic", g.var_t, g.var_t_low, g.var_t_high),
        row("var_system_x_topic", g.var_st, g.var_st_low, g.var_st_high),
    ]
    for i, n in enumerate(d.n_topics):
        rows += [
            row("erho2", d.erho2[i], d.erho2_low[i], d.erho2_high[i], n_topics=int(n)),
            row("phi", d.phi[i], d.phi_low[i], d.phi_high[i], n_topics=int(n)),
            row("expected_tau", tau[0][i], tau[1][i], tau[2][i], n_topics=int(n)),
        ]
    for i, t in enumerate(need.target):
        # The fewest topics come from the upper end of the coefficient's interval.
        rows += [
            row("topics_for_erho2", need.erho2[i], need.erho2_low[i], need.erho2_high[i], target=t),
            row("topics_for_phi", need.phi[i], need.phi_low[i], need.phi_high[i], target=t),
        ]
    return rows


def _print_reliability(name, g, d, need, tau) -> None:
    pct = f"{100 * g.level:g}%"
    how = "Satterthwaite" if g.ci == "satterthwaite" else "jackknife"
    typer.echo(
        f"{name}: G-study of {g.n_systems} runs x {g.n_topics} topics: variance components "
        f"({pct} {how} intervals)"
    )
    comp = g.to_frame()[["source", "df", "ms", "variance", "percent", "low", "high"]]
    small = {c: (lambda v: f"{v:.4g}") for c in ("ms", "variance", "low", "high")}
    typer.echo(comp.to_string(index=False, formatters={**small, "percent": "{:.1f}".format}))
    typer.echo(
        f"D-study with n topics ({pct} intervals): erho2 = E(rho^2), the stability of the "
        "ranking of the runs;\n  phi = Phi, the stability of their scores; expected_tau = "
        "Kendall's tau between the rankings\n  from two disjoint sets of n topics (normal model)"
    )
    dframe = d.to_frame().drop(columns="level")
    dframe["expected_tau"], dframe["tau_low"], dframe["tau_high"] = tau
    typer.echo(dframe.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    typer.echo(f"Topics needed to reach each target ({pct} intervals)")
    nframe = need.to_frame().drop(columns="level")
    for col in nframe.columns[1:]:
        nframe[col] = _whole(nframe[col])
    typer.echo(nframe.to_string(index=False))
    typer.echo("")


__all__ = ["topics_needed", "anova", "reliability"]
