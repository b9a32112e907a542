"""Figures of a study: pure functions from tidy frames to matplotlib Figures.

Every function takes the rows a study saved (:func:`metaeval.study.load_results`, or a frame
of the same columns) and returns a :class:`matplotlib.figure.Figure` drawn with seaborn. None
touches pyplot's global state, so they work under any backend and in parallel; save with
``fig.savefig(path)``.

Conventions shared by the figures:

* one colour per *base* measure; a condensed-list variant (``AP'``) takes its base measure's
  colour (``AP``) and a dashed line, so the pair reads as one family;
* bands show the spread over trials and replicates: the 2.5 and 97.5 percentiles;
* levels are drawn on a numeric axis when they are numbers (rates, depths), with the full
  judgments at 100 for percentage degraders.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from metaeval._summary import interval_summary

FULL = "full"

_PRIME = re.compile(r"^([A-Za-z_][\w.]*)'")


def base_measure(name: str) -> str:
    """The standard measure of a condensed variant: ``"Q'(gains={1:1,2:3})"`` ->
    ``"Q(gains={1:1,2:3})"``; other names are returned unchanged."""
    return _PRIME.sub(r"\1", name)


def is_condensed(name: str) -> bool:
    """Whether a measure name is a condensed-list variant (a ``'`` after its name)."""
    return bool(_PRIME.match(name))


def measure_palette(measures: Sequence[str]) -> dict[str, tuple]:
    """Colour of every measure: one per base measure, shared with its condensed variant."""
    import seaborn as sns

    bases = list(dict.fromkeys(base_measure(m) for m in measures))
    colours = sns.color_palette("tab10" if len(bases) <= 10 else "husl", len(bases))
    by_base = dict(zip(bases, colours))
    return {m: by_base[base_measure(m)] for m in measures}


def _figure(n_panels: int, *, width: float = 4.6, height: float = 3.5):
    from matplotlib.figure import Figure

    n_panels = max(n_panels, 1)
    cols = min(n_panels, 3)
    rows = int(np.ceil(n_panels / cols))
    fig = Figure(figsize=(width * cols, height * rows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False).ravel())
    for ax in axes[n_panels:]:
        ax.set_visible(False)
    return fig, axes[:n_panels]


def level_axis(levels: pd.Series, percent: bool) -> tuple[pd.Series, list[str] | None]:
    """x positions for levels, and the tick labels of a categorical axis (None: numeric).

    Percentages (rates of judgments kept) are drawn on a numeric axis, the full judgments at
    100. Other levels (pool depths, teams...) are categories: the full judgments first, then
    the levels from the largest (least damaged) to the smallest.
    """
    numeric = pd.to_numeric(levels.where(levels != FULL), errors="coerce")
    if percent and (numeric.notna() | (levels == FULL)).all():
        return numeric.fillna(100.0), None
    present = list(dict.fromkeys(levels))
    rest = [lv for lv in present if lv != FULL]
    values = pd.to_numeric(pd.Series(rest, dtype=object), errors="coerce")
    if len(rest) and values.notna().all():
        rest = [lv for _, lv in sorted(zip(values, rest), key=lambda p: -p[0])]
    order = ([FULL] if FULL in present else []) + rest
    return levels.map({lv: i for i, lv in enumerate(order)}).astype(float), order


def _bands(data: pd.DataFrame, x: str, y: str, by: str) -> pd.DataFrame:
    out = interval_summary(data, [by, x], value=y).sort_values([by, x], kind="stable")
    return out.rename(columns={"p025": "lo", "p975": "hi"})


def _lines(
    ax, data: pd.DataFrame, *, x: str, y: str, palette: dict, band: bool = True, marker: str = "o"
) -> None:
    """One line per measure (mean over the other rows at each x), with a percentile band."""
    summary = _bands(data, x, y, "measure")
    for m in palette:
        d = summary[summary["measure"] == m]
        if d.empty:
            continue
        style = "--" if is_condensed(m) else "-"
        ax.plot(
            d[x],
            d["mean"],
            style,
            color=palette[m],
            marker=marker,
            markersize=3.5,
            label=m,
            linewidth=1.4,
        )
        if band and (d["hi"] > d["lo"]).any():
            ax.fill_between(d[x], d["lo"], d["hi"], color=palette[m], alpha=0.15, linewidth=0)


def _finish(fig, axes, legend_title: str = "measure") -> None:
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, title=legend_title, loc="outside right upper", fontsize="small")


def robustness_curves(
    results: pd.DataFrame,
    *,
    statistic: str = "tau_b",
    against: str = "full",
    percent: Sequence[str] = (),
) -> object:
    """Rank correlation against the level of damage (rows of a robustness criterion), one line
    per measure, one panel per world and degrader; the band is the 2.5-97.5 percentile range
    over trials (and replicates). The full judgments are drawn at 100 for percentage levels."""
    d = results[(results["statistic"] == statistic) & (results["other"] == against)]
    return _per_level(
        d, ylabel=f"{_label(statistic)} with the {against} ranking", reference=1.0, percent=percent
    )


def power_curves(results: pd.DataFrame, *, percent: Sequence[str] = ()) -> object:
    """Discriminative power against the level of damage, one line per measure."""
    d = results[results["statistic"] == "power"]
    return _per_level(d, ylabel="discriminative power", percent=percent)


def drift_curves(results: pd.DataFrame, *, percent: Sequence[str] = ()) -> object:
    """Mean drift (mean over systems of the reduced minus the full value) against the level."""
    d = results[results["statistic"] == "mean_drift"]
    return _per_level(d, ylabel="mean drift of the values", reference=0.0, percent=percent)


def _per_level(
    d: pd.DataFrame, *, ylabel: str, reference: float | None = None, percent: Sequence[str] = ()
):
    """One panel per world and degrader; ``percent`` names the degraders whose levels are
    percentages of the judgments kept."""
    d = d.copy()
    panels = list(dict.fromkeys(zip(d["world"], d["degrader"]))) if len(d) else []
    # the full-judgment rows (degrader "") join every degrader's panel of their world
    panels = [(w, g) for w, g in panels if g != ""] or panels
    fig, axes = _figure(len(panels))
    palette = measure_palette(list(dict.fromkeys(d["measure"])))
    for ax, (world, degrader) in zip(axes, panels):
        sub = d[(d["world"] == world) & d["degrader"].isin([degrader, ""])].copy()
        sub["x"], ticks = level_axis(sub["level"], degrader in percent)
        _lines(ax, sub, x="x", y="value", palette=palette)
        if ticks is None:
            ax.invert_xaxis()  # from the full judgments (100%) down
            ax.set_xlabel("judgments kept (%)")
        else:
            ax.set_xticks(range(len(ticks)), ticks)
            ax.set_xlabel("level")
        if reference is not None:
            ax.axhline(reference, color="grey", linewidth=0.6, linestyle=":")
        ax.set_title(f"{world} / {degrader or 'full judgments'}", fontsize="medium")
        ax.set_ylabel(ylabel)
    _finish(fig, axes)
    return fig


def asl_curves(asl: pd.DataFrame, *, alpha: float | None = 0.05) -> object:
    """ASL against pair rank (Sakai 2006), one line per measure, one panel per world and
    level; the lower the curve, the more discriminative the measure. Trials are averaged
    rank by rank."""
    panels = list(dict.fromkeys(zip(asl["world"], asl["degrader"], asl["level"])))
    fig, axes = _figure(len(panels))
    palette = measure_palette(list(dict.fromkeys(asl["measure"])))
    for ax, (world, degrader, level) in zip(axes, panels):
        sub = asl[(asl["world"] == world) & (asl["degrader"] == degrader) & (asl["level"] == level)]
        _lines(ax, sub, x="rank", y="asl", palette=palette, band=False, marker="")
        if alpha is not None:
            ax.axhline(alpha, color="grey", linewidth=0.6, linestyle="--")
        ax.set_title(
            f"{world} / {degrader or 'full'} {level if degrader else ''}".strip(), fontsize="medium"
        )
        ax.set_xlabel("system pair, sorted by ASL")
        ax.set_ylabel("achieved significance level")
    _finish(fig, axes)
    return fig


def significance_bars(results: pd.DataFrame) -> object:
    """Pairs whose significance changed under damaged judgments, per measure (mean over
    trials): false alarms, reversals and misses; one panel per world, degrader and level."""
    stats = ["false_alarms", "reversals", "misses"]
    d = results[results["statistic"].isin(stats) & (results["degrader"] != "")]
    panels = list(dict.fromkeys(zip(d["world"], d["degrader"], d["level"])))
    fig, axes = _figure(len(panels), width=5.2)
    import seaborn as sns

    for ax, (world, degrader, level) in zip(axes, panels):
        sub = d[(d["world"] == world) & (d["degrader"] == degrader) & (d["level"] == level)]
        mean = sub.groupby(["measure", "statistic"], sort=False)["value"].mean().reset_index()
        sns.barplot(
            mean,
            x="measure",
            y="value",
            hue="statistic",
            hue_order=stats,
            ax=ax,
            palette=["#d62728", "#9467bd", "#7f7f7f"],
        )
        ax.set_title(f"{world} / {degrader} {level}", fontsize="medium")
        ax.set_xlabel("")
        ax.set_ylabel("pairs (mean over trials)")
        ax.tick_params(axis="x", rotation=60, labelsize="small")
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
    return fig


def stability_curves(results: pd.DataFrame, *, statistic: str = "tau_subset") -> object:
    """Topic-subset stability: mean tau_b against the topic-set size, one line per measure,
    with the 2.5-97.5 percentile band over repeats; one panel per world."""
    d = results[results["statistic"] == statistic]
    lo = results[results["statistic"] == f"{statistic}_p025"]
    hi = results[results["statistic"] == f"{statistic}_p975"]
    worlds = list(dict.fromkeys(d["world"]))
    fig, axes = _figure(len(worlds))
    palette = measure_palette(list(dict.fromkeys(d["measure"])))
    for ax, world in zip(axes, worlds):
        for m, colour in palette.items():

            def line(frame, world=world, m=m):
                f = frame[(frame["world"] == world) & (frame["measure"] == m)]
                return f.groupby("x")["value"].mean()

            mean = line(d)
            if mean.empty:
                continue
            ax.plot(
                mean.index,
                mean.values,
                "--" if is_condensed(m) else "-",
                color=colour,
                marker="o",
                markersize=3.5,
                label=m,
            )
            low, high = line(lo), line(hi)
            if len(low) == len(mean):
                ax.fill_between(
                    mean.index, low.values, high.values, color=colour, alpha=0.12, linewidth=0
                )
        ax.set_title(world, fontsize="medium")
        ax.set_xlabel("topics in the subset")
        ax.set_ylabel(f"{_label(statistic)}")
    _finish(fig, axes)
    return fig


def informativeness_bars(summary: pd.DataFrame) -> object:
    """Mean RMS error of the max-ent precision-recall curve inferred from each measure, per
    relevance threshold (lower = more informative); one panel per world.

    ``summary`` has columns ``measure``, ``threshold``, ``rms`` and optionally ``world``.
    """
    import seaborn as sns

    d = summary.copy()
    if "world" not in d:
        d["world"] = ""
    d["threshold"] = d["threshold"].map(lambda v: f"grade >= {float(v):g}")
    worlds = list(dict.fromkeys(d["world"]))
    fig, axes = _figure(len(worlds), width=max(4.6, 0.8 * d["measure"].nunique() + 2))
    for ax, world in zip(axes, worlds):
        sub = d[d["world"] == world]
        sns.barplot(sub, x="measure", y="rms", hue="threshold", ax=ax, errorbar=None)
        ax.set_title(world, fontsize="medium")
        ax.set_xlabel("")
        ax.set_ylabel("RMS error of the inferred PR curve")
        ax.tick_params(axis="x", rotation=60, labelsize="small")
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
    return fig


def pr_curves(curves: pd.DataFrame) -> object:
    """Precision-recall curves of one list: the actual one (black) and those inferred by max
    entropy from each measure's value. ``curves`` has ``curve``, ``recall``, ``precision``
    (and ``run``, ``topic``, ``threshold`` for the title)."""
    fig, axes = _figure(1, width=5.2, height=4.2)
    ax = axes[0]
    for name, d in curves.groupby("curve", sort=False):
        actual = name == "actual"
        ax.plot(
            d["recall"],
            d["precision"],
            color="black" if actual else None,
            linewidth=2 if actual else 1.2,
            label=name,
        )
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_xlim(0, 1)
    if {"run", "topic", "threshold"} <= set(curves.columns) and len(curves):
        first = curves.iloc[0]
        ax.set_title(
            f"{first['run']} / topic {first['topic']} (grade >= {first['threshold']})",
            fontsize="small",
        )
    ax.legend(fontsize="x-small")
    return fig


def agreement_heatmap(results: pd.DataFrame, *, statistic: str = "tau_b") -> object:
    """Measure x measure rank correlation under full judgments (mean over replicates), one
    panel per world."""
    import seaborn as sns

    d = results[(results["statistic"] == statistic) & (results["other"] != "")]
    worlds = list(dict.fromkeys(d["world"]))
    n = len(set(d["measure"]))
    fig, axes = _figure(len(worlds), width=max(4.0, 0.55 * n + 2), height=max(3.2, 0.5 * n + 1))
    for ax, world in zip(axes, worlds):
        sub = d[d["world"] == world]
        names = list(dict.fromkeys([*sub["measure"], *sub["other"]]))
        mat = sub.groupby(["measure", "other"])["value"].mean().unstack()
        mat = mat.reindex(index=names, columns=names)
        for m in names:
            mat.loc[m, m] = 1.0
        sns.heatmap(
            mat,
            ax=ax,
            vmin=min(0.0, float(np.nanmin(mat.values))),
            vmax=1.0,
            cmap="viridis",
            annot=n <= 12,
            fmt=".2f",
            annot_kws={"size": 7},
            cbar_kws={"label": _label(statistic)},
        )
        ax.set_title(world, fontsize="medium")
        ax.set_xlabel("")
        ax.set_ylabel("")
    return fig


def _label(statistic: str) -> str:
    return {
        "tau_b": "Kendall's tau_b",
        "tau_a": "Kendall's tau_a",
        "tau_ap": "tau_AP",
        "tau_subset": "tau_b, subset vs all topics",
        "tau_split": "tau_b between disjoint halves",
    }.get(statistic, statistic)


__all__ = [
    "base_measure",
    "is_condensed",
    "measure_palette",
    "level_axis",
    "robustness_curves",
    "power_curves",
    "drift_curves",
    "asl_curves",
    "significance_bars",
    "stability_curves",
    "informativeness_bars",
    "pr_curves",
    "agreement_heatmap",
]
