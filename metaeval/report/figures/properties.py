"""Figures of what a measure does with the full judgments: topic-subset stability against
the topic-set size, informativeness (RMS error bars, precision-recall curves), agreement
between measures, top-heaviness."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from metaeval.report.figures.layout import (
    _figure,
    _finish,
    _interval_bar,
    _label,
    _slanted_xticks,
    is_condensed,
    measure_markers,
    measure_palette,
)


def stability_curves(results: pd.DataFrame, *, statistic: str = "tau_subset") -> object:
    """Topic-subset stability: mean tau_b against the topic-set size, one line per measure,
    with the band of its 2.5-97.5 percentiles over the random subsets; one panel per world.
    The band is a spread, not an interval: it says how far the ranking on one random set of n
    topics can be from the ranking on all of them. The rows are the criterion's
    (``statistic``, ``statistic_p025``, ``statistic_p975`` at ``x`` = the topic-set size,
    ``value``, or a summary's ``mean``), averaged over replicates."""
    from matplotlib.ticker import MaxNLocator

    column = "value" if "value" in results else "mean"
    d = results[results["statistic"] == statistic]
    lo = results[results["statistic"] == f"{statistic}_p025"]
    hi = results[results["statistic"] == f"{statistic}_p975"]
    worlds = list(dict.fromkeys(d["world"]))
    measures = list(dict.fromkeys(d["measure"]))
    fig, axes = _figure(len(worlds), legend=measures)
    palette = measure_palette(measures)
    markers = measure_markers(measures)
    for ax, world in zip(axes, worlds):
        for m, colour in palette.items():

            def line(frame, world=world, m=m):
                f = frame[(frame["world"] == world) & (frame["measure"] == m)]
                return f.groupby("x")[column].mean()

            mean = line(d)
            if mean.empty:
                continue
            ax.plot(
                mean.index,
                mean.values,
                "--" if is_condensed(m) else "-",
                color=colour,
                marker=markers[m],
                markersize=4.5,
                label=m,
            )
            low, high = line(lo), line(hi)
            if len(low) == len(mean):
                ax.fill_between(
                    mean.index, low.values, high.values, color=colour, alpha=0.1, linewidth=0
                )
        ax.set_title(world, fontsize="medium")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("topics in the subset")
        ax.set_ylabel(_label(statistic))
        ax.grid(alpha=0.25)
    _finish(fig, axes)
    return fig


def informativeness_bars(summary: pd.DataFrame) -> object:
    """Mean RMS error of the max-ent precision-recall curve inferred from each measure, per
    relevance threshold (lower = more informative); one panel per world.

    ``summary`` has columns ``measure``, ``threshold``, ``rms`` and optionally ``world``, and
    ``low`` and ``high`` (the interval of the expected RMS error, drawn as an error bar).
    """
    import seaborn as sns

    d = summary.copy()
    if "world" not in d:
        d["world"] = ""
    d["threshold"] = d["threshold"].map(lambda v: f"grade >= {float(v):g}")
    worlds = list(dict.fromkeys(d["world"]))
    measures = list(dict.fromkeys(d["measure"]))
    longest = max((len(m) for m in measures), default=4)
    width = max(3.7, 0.45 * len(measures) + 1.4)
    fig, axes = _figure(len(worlds), width=width, height=3.2 + 0.06 * longest, legend=2)
    for ax, world in zip(axes, worlds):
        sub = d[d["world"] == world]
        sns.barplot(
            sub,
            x="measure",
            y="rms",
            hue="threshold",
            order=measures,
            hue_order=sorted(d["threshold"].unique()),
            ax=ax,
            errorbar=None,
            legend=ax is axes[0],
        )
        if {"low", "high"} <= set(sub.columns):
            _bar_intervals(ax, sub, measures, sorted(d["threshold"].unique()))
        ax.set_title(world, fontsize="medium")
        ax.set_xlabel("")
        ax.set_ylabel("RMS error of the inferred PR curve")
        _slanted_xticks(ax)
        ax.grid(axis="y", alpha=0.25)
    _finish(fig, axes[:1], title="relevant means", ncols=len(d["threshold"].unique()))
    return fig


def _bar_intervals(ax, sub: pd.DataFrame, order: list, hue_order: list) -> None:
    """An error bar on each bar of a seaborn bar chart (measures along x, one bar per
    threshold), from the rows' ``low`` and ``high``."""
    bars = [c for c in ax.containers if hasattr(c, "patches")]
    for level, container in zip(hue_order, list(bars)):
        for patch in container.patches:
            centre = patch.get_x() + patch.get_width() / 2
            measure = order[int(round(centre))] if 0 <= round(centre) < len(order) else None
            row = sub[(sub["measure"] == measure) & (sub["threshold"] == level)]
            if row.empty:
                continue
            lo, hi = float(row["low"].iloc[0]), float(row["high"].iloc[0])
            _interval_bar(ax, lo, hi, centre, "#333333", vertical=True)


def pr_curves(curves: pd.DataFrame) -> object:
    """Precision-recall curves of one list: the actual one (black) and those inferred by max
    entropy from each measure's value. ``curves`` has ``curve``, ``recall``, ``precision``,
    ``actual`` (true for the list's own curves; without the column, the curve named "actual")
    and, for the title, ``run``, ``topic``, ``threshold``."""
    fig, axes = _figure(1, width=5.2, height=4.2)
    ax = axes[0]
    styles = iter(["-", "--", ":", "-."])
    if "actual" not in curves:
        curves = curves.assign(actual=curves["curve"] == "actual")
    for name, d in curves.groupby("curve", sort=False):
        # one actual curve per relevance threshold ("actual (grade >= 2)") when the measures
        # use several: all black, told apart by their line style
        actual = bool(d["actual"].iloc[0])
        ax.plot(
            d["recall"],
            d["precision"],
            color="black" if actual else None,
            linestyle=next(styles, "-") if actual else "-",
            linewidth=2 if actual else 1.2,
            label=name,
        )
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_xlim(0, 1)
    if {"run", "topic", "threshold"} <= set(curves.columns) and len(curves):
        first = curves.iloc[0]
        thresholds = sorted(set(curves["threshold"]))
        relevant = (
            f"grade >= {thresholds[0]}"
            if len(thresholds) == 1
            else "grade >= " + " or ".join(map(str, thresholds))
        )
        ax.set_title(f"{first['run']} / topic {first['topic']} ({relevant})", fontsize="small")
    ax.legend(fontsize="x-small")
    return fig


def agreement_heatmap(
    results: pd.DataFrame, *, statistic: str = "tau_b", order: Sequence[str] | None = None
) -> object:
    """Measure x measure rank correlation under full judgments (mean over replicates), one
    panel per world; measures in ``order`` (default: as they first appear)."""
    import seaborn as sns

    d = results[(results["statistic"] == statistic) & (results["other"] != "")]
    worlds = list(dict.fromkeys(d["world"]))
    names = list(order) if order is not None else list(dict.fromkeys([*d["measure"], *d["other"]]))
    names = [m for m in names if m in set(d["measure"]) | set(d["other"])]
    n = len(names)
    longest = max((len(m) for m in names), default=4)
    side = max(2.4, 0.34 * n + 0.4)
    fig, axes = _figure(
        len(worlds), width=side + 0.075 * longest + 1.0, height=side + 0.065 * longest + 0.5
    )
    # the colour scale starts at the first tenth below the lowest value (0 at the most), so
    # that differences between high correlations stay visible; the colour bar says where
    low = float(np.nanmin(d["value"])) if len(d) else 0.0
    low = min(0.0, low) if low < 0 else min(np.floor(low * 10) / 10, 0.9)
    for ax, world in zip(axes, worlds):
        sub = d[d["world"] == world]
        mat = sub.groupby(["measure", "other"])["value"].mean().unstack()
        mat = mat.reindex(index=names, columns=names)
        for m in names:
            mat.loc[m, m] = 1.0
        sns.heatmap(
            mat,
            ax=ax,
            vmin=low,
            vmax=1.0,
            cmap="viridis",
            annot=n <= 14,
            fmt=".2f",
            annot_kws={"size": 7.5 if n <= 8 else 6.5},
            square=True,
            cbar=ax is axes[-1],
            cbar_kws={"label": _label(statistic), "shrink": 0.7},
        )
        ax.set_title(world, fontsize="medium")
        ax.set_xlabel("")
        ax.set_ylabel("")
        _slanted_xticks(ax)
        ax.tick_params(axis="y", rotation=0, labelsize="small")
    return fig


def top_heaviness_curves(frame: pd.DataFrame, *, y: str = "value") -> object:
    """Top-heaviness (Sakai & Kando 2008, Fig. 1): each measure's value when the one relevant
    document of the list sits at rank 1, 2, ..., one panel per number of relevant documents R,
    one line per measure.

    Parameters
    ----------
    frame : DataFrame
        Columns ``measure``, ``n_relevant``, ``rank`` and ``y`` (the output of
        :func:`metaeval.measures.curves.top_heaviness`).
    y : {"value", "relative"}
        Draw the values, or the curves scaled to 1 at rank 1.
    """
    if y not in ("value", "relative"):
        raise ValueError(f"y must be 'value' or 'relative', got {y!r}")
    missing = {"measure", "n_relevant", "rank", y} - set(frame.columns)
    if missing:
        raise ValueError(f"frame lacks columns {sorted(missing)}; pass top_heaviness() output")
    panels = sorted(frame["n_relevant"].unique())
    measures = list(dict.fromkeys(frame["measure"]))
    fig, axes = _figure(len(panels), width=4.2, height=3.3, legend=measures)
    palette = measure_palette(measures)
    markers = measure_markers(measures)
    for ax, big_r in zip(axes, panels):
        sub = frame[frame["n_relevant"] == big_r]
        for m in measures:
            line = sub[sub["measure"] == m].sort_values("rank")
            ax.plot(
                line["rank"],
                line[y],
                color=palette[m],
                marker=markers[m],
                markersize=4,
                linestyle="--" if is_condensed(m) else "-",
                label=m,
            )
        ax.set_title(f"R = {big_r}", fontsize="medium")
        ax.set_xlabel("rank of the single relevant document")
        ax.set_ylabel("measure value" if y == "value" else "value / value at rank 1")
        ax.grid(alpha=0.25)
    _finish(fig, axes)
    return fig
