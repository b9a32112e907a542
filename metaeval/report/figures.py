"""Figures of a study: pure functions from tidy frames to matplotlib Figures.

Every function takes the rows a study saved (:func:`metaeval.study.load_results`, or a frame
of the same columns) and returns a :class:`matplotlib.figure.Figure` drawn with seaborn. None
touches pyplot's global state, so they work under any backend and in parallel; save with
``fig.savefig(path)``.

Conventions shared by the figures:

* one colour and one marker per *base* measure; a condensed-list variant (``AP'``) takes its
  base measure's colour and marker (``AP``) and a dashed line, so the pair reads as one family;
* measures are drawn, listed and coloured in the order they first appear in the frame (a
  study's results come in the order of its study file);
* bands and bars show the interval of the expected value of a statistic: the ``low`` and
  ``high`` of a study's summary (:func:`metaeval.report.inference.summarise`, a paired
  bootstrap over topics, trials and replicates). Given raw rows (one value per trial and
  replicate), a figure draws their mean alone: a spread of trials is not an interval. The one
  exception is labelled so: the band of topic-subset stability is a spread over random topic
  subsets, describing how variable a ranking on n topics is;
* levels are drawn on a numeric axis when they are percentages of the judgments kept (the full
  judgments at 100), as categories otherwise (the full judgments first);
* sizes are chosen so that a figure is shown at its own size on a page 1100 pixels wide:
  labels stay readable, and the legend sits under the panels.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

FULL = "full"
#: The widest a figure gets (inches; 96 dpi: about a report page's width).
MAX_WIDTH = 11.4
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")

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
    # tab10's ten distinct colours, repeated beyond ten (the markers still tell them apart:
    # evenly spaced hues would make neighbours indistinguishable)
    colours = sns.color_palette("tab10", 10)
    by_base = {b: colours[i % 10] for i, b in enumerate(bases)}
    return {m: by_base[base_measure(m)] for m in measures}


def measure_markers(measures: Sequence[str]) -> dict[str, str]:
    """Marker of every measure: one per base measure, shared with its condensed variant; the
    markers cycle in step with the colours shifted, so that no two of the first 60 base
    measures share both colour and marker."""
    bases = list(dict.fromkeys(base_measure(m) for m in measures))
    by_base = {b: MARKERS[(i + i // 10) % len(MARKERS)] for i, b in enumerate(bases)}
    return {m: by_base[base_measure(m)] for m in measures}


def _figure(
    n_panels: int,
    *,
    width: float = 3.7,
    height: float = 3.0,
    cols: int | None = None,
    legend: Sequence[str] | int = 0,
):
    """A grid of panels, at most :data:`MAX_WIDTH` wide, with room under them for a legend:
    ``legend`` is the labels it will hold (the figure is widened so that many labels fit in a
    few rows) or a number of legend rows."""
    from matplotlib.figure import Figure

    n_panels = max(n_panels, 1)
    cols = cols or max(1, min(n_panels, int(MAX_WIDTH // width)))
    rows = int(np.ceil(n_panels / cols))
    width = min(width, MAX_WIDTH / cols)
    total = width * cols
    if isinstance(legend, int):
        legend_rows = legend
    else:
        labels = list(legend)
        if len(labels) > 4 and total < 7.0:  # one small panel and many labels: widen
            total = min(MAX_WIDTH, 7.0)
        legend_rows = _legend_rows(labels, total)[1] + 1 if labels else 0
    fig = Figure(figsize=(total, height * rows + 0.2 * legend_rows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False).ravel())
    for ax in axes[n_panels:]:
        ax.set_visible(False)
    return fig, axes[:n_panels]


def _legend_rows(labels: Sequence[str], width: float = MAX_WIDTH) -> tuple[int, int]:
    """(columns, rows) of a legend under the panels that fits in ``width`` inches."""
    longest = max((len(s) for s in labels), default=1)
    cols = max(1, min(len(labels), int(width / (0.08 * longest + 0.6))))
    return cols, int(np.ceil(len(labels) / cols))


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


def _points(data: pd.DataFrame, x: str, y: str, by: str) -> pd.DataFrame:
    """What to draw per ``by`` and ``x``: ``mean`` and the interval ``lo``, ``hi``.

    A summary (columns ``mean``, ``low``, ``high``) brings its interval; raw rows (one ``y``
    per trial and replicate) are averaged and get no interval (NaN): a spread of trials is not
    one. Several summary rows at one point (say, several worlds in one panel) are averaged
    without an interval too: intervals cannot be averaged.
    """
    keys = [by, x]
    if {"mean", "low", "high"} <= set(data.columns):
        grouped = data.groupby(keys, sort=False, dropna=False)
        out = grouped.agg(
            mean=("mean", "mean"), lo=("low", "first"), hi=("high", "first"), n=("mean", "size")
        ).reset_index()
        out.loc[out["n"] > 1, ["lo", "hi"]] = np.nan
    else:
        out = data.groupby(keys, sort=False, dropna=False)[y].mean().rename("mean").reset_index()
        out["lo"] = out["hi"] = np.nan
    return out.sort_values(keys, kind="stable")


def _with_interval(lo: float, hi: float) -> bool:
    return bool(np.isfinite(lo) and np.isfinite(hi) and hi > lo)


def _lines(
    ax,
    data: pd.DataFrame,
    *,
    x: str,
    y: str,
    palette: dict,
    band: bool = True,
    marker: bool = True,
    drawstyle: str = "default",
) -> None:
    """One line per measure (the mean at each x), with its interval as a band when the rows
    carry one (:func:`_points`)."""
    summary = _points(data, x, y, "measure")
    markers = measure_markers(list(palette))
    for m in palette:
        d = summary[summary["measure"] == m]
        if d.empty:
            continue
        ax.plot(
            d[x],
            d["mean"],
            linestyle="--" if is_condensed(m) else "-",
            color=palette[m],
            marker=markers[m] if marker else None,
            markersize=4.5,
            markerfacecolor="white" if is_condensed(m) else palette[m],
            label=m,
            linewidth=1.5,
            drawstyle=drawstyle,
        )
        if band and any(_with_interval(lo, hi) for lo, hi in zip(d["lo"], d["hi"])):
            alpha = 0.1 if len(palette) <= 6 else 0.05
            ax.fill_between(d[x], d["lo"], d["hi"], color=palette[m], alpha=alpha, linewidth=0)


def _finish(fig, axes, title: str | None = "measure", ncols: int | None = None) -> None:
    """One legend for the figure, under the panels, from the first panel that has lines (a
    legend seaborn drew inside that panel is removed)."""
    for ax in axes:
        handles, labels = ax.get_legend_handles_labels()
        if handles:
            if ax.get_legend() is not None:
                ax.get_legend().remove()
            fig.legend(
                handles,
                labels,
                title=title,
                loc="outside lower center",
                ncols=ncols or _legend_rows(labels, fig.get_figwidth())[0],
                fontsize="small",
                frameon=False,
            )
            return


def _slanted_xticks(ax) -> None:
    """Measure names along the x axis, slanted so that long names do not overlap."""
    ax.tick_params(axis="x", rotation=45, labelsize="small")
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
        label.set_rotation_mode("anchor")


def robustness_curves(
    results: pd.DataFrame,
    *,
    statistic: str = "tau_b",
    against: str = "full",
    percent: Sequence[str] = (),
    level_names: dict | None = None,
) -> object:
    """Rank correlation against the level of damage (rows of a robustness criterion), one line
    per measure, one panel per world and degrader; given a study's summary, the band is the
    interval of the expected value (raw rows: means only). The full judgments are drawn at 100
    for percentage levels."""
    d = results[(results["statistic"] == statistic) & (results["other"] == against)]
    return _per_level(
        d,
        ylabel=f"{_label(statistic)} with the {against} ranking",
        reference=1.0 if against == "full" else None,
        percent=percent,
        level_names=level_names,
    )


def power_curves(
    results: pd.DataFrame, *, percent: Sequence[str] = (), level_names: dict | None = None
) -> object:
    """Discriminative power against the level of damage, one line per measure (with its
    interval as a band, given a study's summary); with one level only (the full judgments),
    one dot per measure with its interval."""
    d = results[results["statistic"] == "power"]
    if d["level"].nunique() <= 1:
        return measure_dots(d, xlabel="discriminative power")
    return _per_level(d, ylabel="discriminative power", percent=percent, level_names=level_names)


def drift_curves(
    results: pd.DataFrame, *, percent: Sequence[str] = (), level_names: dict | None = None
) -> object:
    """Mean drift (mean over systems of the reduced minus the full value) against the level
    (with its interval as a band, given a study's summary)."""
    d = results[results["statistic"] == "mean_drift"]
    return _per_level(
        d,
        ylabel="mean drift (reduced - full)",
        reference=0.0,
        percent=percent,
        level_names=level_names,
    )


def _per_level(
    d: pd.DataFrame,
    *,
    ylabel: str,
    reference: float | None = None,
    percent: Sequence[str] = (),
    level_names: dict | None = None,
):
    """One panel per world and degrader; ``percent`` names the degraders whose levels are
    percentages of the judgments kept, ``level_names`` the x-axis label of the others'."""
    d = d.copy()
    level_names = level_names or {}
    panels = list(dict.fromkeys(zip(d["world"], d["degrader"]))) if len(d) else []
    # the full-judgment rows (degrader "") join every degrader's panel of their world
    panels = [(w, g) for w, g in panels if g != ""] or panels
    measures = list(dict.fromkeys(d["measure"]))
    fig, axes = _figure(len(panels), legend=measures)
    palette = measure_palette(measures)
    for ax, (world, degrader) in zip(axes, panels):
        sub = d[(d["world"] == world) & d["degrader"].isin([degrader, ""])].copy()
        sub["x"], ticks = level_axis(sub["level"].astype(str), degrader in percent)
        _lines(ax, sub, x="x", y="value", palette=palette)
        if ticks is None:
            ax.invert_xaxis()  # from the full judgments (100%) down
            ax.set_xlabel("judgments kept (%)")
        else:
            ax.set_xticks(range(len(ticks)), ticks)
            ax.set_xlabel(level_names.get(degrader, f"level ({degrader})" if degrader else "level"))
        if reference is not None:
            ax.axhline(reference, color="grey", linewidth=0.7, linestyle=":")
        ax.set_title(f"{world} / {degrader or 'full judgments'}", fontsize="medium")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.25)
    _finish(fig, axes)
    return fig


def measure_dots(d: pd.DataFrame, *, xlabel: str, value: str = "value") -> object:
    """One value per measure and world: a dot chart, measures top to bottom in their order, one
    panel per world (the panels share the measure axis). Given a study's summary (``mean``,
    ``low``, ``high``), each dot has its interval as a bar; raw rows are drawn as their mean."""
    measures = list(dict.fromkeys(d["measure"]))
    worlds = list(dict.fromkeys(d["world"]))
    height = max(2.2, 0.28 * len(measures) + 1.0)
    longest = max((len(m) for m in measures), default=4)
    width = 2.6 + 0.07 * longest
    fig, axes = _figure(len(worlds), width=width, height=height)
    palette = measure_palette(measures)
    for ax, world in zip(axes, worlds):
        s = _points(d[d["world"] == world], "world", value, "measure")
        s = s.set_index("measure").reindex(measures)
        y = np.arange(len(measures))
        for i, m in enumerate(measures):
            if np.isnan(s.loc[m, "mean"]):
                continue
            mean, lo, hi = s.loc[m, ["mean", "lo", "hi"]]
            _interval_bar(ax, lo, hi, i, palette[m])
            ax.errorbar(
                mean,
                i,
                fmt="o",
                color=palette[m],
                markerfacecolor="white" if is_condensed(m) else palette[m],
                label=m,
                zorder=3,
            )
        ax.set_yticks(y, measures)
        ax.set_ylim(len(measures) - 0.5, -0.5)
        ax.set_title(world, fontsize="medium")
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", alpha=0.3)
    return fig


def _interval_bar(ax, lo: float, hi: float, at: float, colour, *, vertical: bool = False) -> None:
    """An interval as a capped bar from ``lo`` to ``hi`` at ``at`` (nothing without one). It is
    drawn as is, not as an error around the mean: a bootstrap percentile interval need not be
    centred on the mean, nor contain it."""
    if not _with_interval(lo, hi):
        return
    xs, ys = ([at, at], [lo, hi]) if vertical else ([lo, hi], [at, at])
    ax.plot(xs, ys, color=colour, linewidth=1.2, marker="_" if vertical else "|",
            markersize=6, zorder=2, label="_interval")  # fmt: skip


def asl_curves(asl: pd.DataFrame, *, alpha: float | None = 0.05, ax=None) -> object:
    """ASL against pair rank (Sakai 2006), one line per measure, one panel per world and
    level; the lower the curve, the more discriminative the measure. Trials are averaged
    rank by rank.

    Parameters
    ----------
    asl : DataFrame
        Columns ``measure``, ``rank``, ``asl`` (and ``world``, ``degrader``, ``level`` for
        several panels), as a study's ``asl`` table or
        :func:`metaeval.meta.asl_curve_frame` give them.
    alpha : float, optional
        Draw the significance level as a dashed line.
    ax : matplotlib.axes.Axes, optional
        Draw one panel into this axes (the frame must hold one world and level).
    """
    asl = asl.copy()
    for col, default in (("world", ""), ("degrader", ""), ("level", FULL)):
        if col not in asl:
            asl[col] = default
    panels = list(dict.fromkeys(zip(asl["world"], asl["degrader"], asl["level"])))
    measures = list(dict.fromkeys(asl["measure"]))
    palette = measure_palette(measures)
    if ax is not None:
        if len(panels) > 1:
            raise ValueError("ax draws one panel: give the rows of one world and level")
        _asl_panel(ax, asl, palette, alpha, *(panels[0] if panels else ("", "", FULL)))
        ax.legend(fontsize="small")
        return ax.figure
    fig, axes = _figure(len(panels), legend=measures)
    for ax_, (world, degrader, level) in zip(axes, panels):
        sub = asl[(asl["world"] == world) & (asl["degrader"] == degrader) & (asl["level"] == level)]
        _asl_panel(ax_, sub, palette, alpha, world, degrader, level)
    _finish(fig, axes)
    return fig


def _asl_panel(ax, sub, palette, alpha, world, degrader, level) -> None:
    _lines(ax, sub, x="rank", y="asl", palette=palette, band=False, marker=False, drawstyle="steps")
    if alpha is not None:
        ax.axhline(alpha, color="grey", linewidth=0.7, linestyle="--")
    where = "full judgments" if level == FULL else f"{degrader} {level}"
    ax.set_title(f"{world} / {where}" if world else where, fontsize="medium")
    ax.set_xlabel("system pair, sorted by ASL")
    ax.set_ylabel("achieved significance level")
    ax.grid(alpha=0.25)


def significance_bars(results: pd.DataFrame) -> object:
    """Pairs whose significance changed under damaged judgments, per measure (mean over
    trials): false alarms, reversals and misses; one panel per world, degrader and level."""
    import seaborn as sns

    stats = ["false_alarms", "reversals", "misses"]
    names = {
        "false_alarms": "significant only when damaged",
        "reversals": "significant, opposite direction",
        "misses": "significant only with full judgments",
    }
    d = results[results["statistic"].isin(stats) & (results["degrader"] != "")]
    panels = list(dict.fromkeys(zip(d["world"], d["degrader"], d["level"])))
    measures = list(dict.fromkeys(d["measure"]))
    width = max(3.7, 0.42 * len(measures) + 1.2)
    fig, axes = _figure(len(panels), width=width, height=3.4, legend=2)
    for ax, (world, degrader, level) in zip(axes, panels):
        sub = d[(d["world"] == world) & (d["degrader"] == degrader) & (d["level"] == level)]
        mean = sub.groupby(["measure", "statistic"], sort=False)["value"].mean().reset_index()
        mean["statistic"] = mean["statistic"].map(names)
        sns.barplot(
            mean,
            x="measure",
            y="value",
            hue="statistic",
            hue_order=[names[s] for s in stats],
            order=measures,
            ax=ax,
            palette=["#d62728", "#9467bd", "#7f7f7f"],
            legend=ax is axes[0],
        )
        ax.set_title(f"{world} / {degrader} {level}", fontsize="medium")
        ax.set_xlabel("")
        # misses can outnumber the other changes a hundredfold: a log scale shows both
        ax.set_yscale("symlog", linthresh=1)
        ax.set_ylabel("system pairs (mean over trials; log scale)")
        _slanted_xticks(ax)
        ax.grid(axis="y", alpha=0.25)
    _finish(fig, axes[:1], title=None, ncols=3)
    return fig


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


def collection_panels(frame: pd.DataFrame, statistics: Sequence[str] | None = None) -> object:
    """What each collection looks like, real beside simulated: one small panel per statistic,
    one dot per world (its mean over replicates). ``frame``: rows of the ``collection``
    criterion (``world``, ``statistic``, ``value``), or their summary (``mean``, ``low``,
    ``high``): the bar is then the interval of the mean over replicates."""
    stats = list(statistics or dict.fromkeys(frame["statistic"]))
    worlds = list(dict.fromkeys(frame["world"]))
    fig, axes = _figure(len(stats), width=2.85, height=0.3 * len(worlds) + 1.1, cols=4)
    palette = dict(zip(worlds, _world_colours(len(worlds))))
    for ax, stat in zip(axes, stats):
        s = _points(frame[frame["statistic"] == stat], "statistic", "value", "world")
        s = s.set_index("world").reindex(worlds)
        for i, w in enumerate(worlds):
            mean, lo, hi = s.loc[w, ["mean", "lo", "hi"]]
            if np.isnan(mean):
                continue
            _interval_bar(ax, lo, hi, i, palette[w])
            ax.errorbar(mean, i, fmt="o", color=palette[w], zorder=3)
        ax.set_yticks(range(len(worlds)), worlds if ax.get_subplotspec().is_first_col() else [])
        ax.set_ylim(len(worlds) - 0.5, -0.5)
        ax.set_title(stat, fontsize="small")
        ax.tick_params(labelsize="x-small")
        ax.grid(axis="x", alpha=0.3)
    return fig


def _shared_limits(values: pd.DataFrame) -> dict:
    """The x limits of each scale of the card: one per scale (every tau row shares one axis,
    every power row another...), from the lowest interval bound to the highest, reaching the
    statistic's bound (tau and power end at 1, an RMS error starts at 0)."""
    limits = {}
    for scale, d in values.groupby("scale", sort=False):
        ends = pd.concat([d["value"], d.get("low", d["value"]), d.get("high", d["value"])])
        ends = ends[np.isfinite(ends.astype(float))].astype(float)
        if ends.empty:
            continue
        lo, hi = float(ends.min()), float(ends.max())
        if scale in ("tau", "power", "reliability"):
            hi = 1.0
        elif scale == "rms":
            lo = 0.0
        pad = max((hi - lo) * 0.04, 0.005)
        limits[scale] = (lo - pad, hi + pad)
    return limits


def card_dots(values: pd.DataFrame, highlight: str) -> object:
    """A report card at a glance: one panel per criterion (and world), every measure's value
    as a dot with its interval as a bar, measures top to bottom in their order, the measure
    under study in red, the others grey; the best end of every axis to the right.

    Criteria of one ``scale`` share their x axis (every tau panel the same limits, reaching
    1; every power panel, reaching 1; the RMS panels, from 0): a gap looks as large as it is,
    never zoomed to the data of its row. A dotted line marks the bound a statistic cannot
    pass.

    ``values`` has columns ``criterion``, ``measure``, ``value`` and ``higher_is_better``,
    and optionally ``low`` and ``high`` (the interval), ``scale`` (default: each criterion
    its own), ``world``, ``rank`` and ``note`` (:func:`metaeval.report.card.card_values`).
    """
    values = values.copy()
    if "scale" not in values:
        values["scale"] = values["criterion"]
    for col in ("low", "high"):
        if col not in values:
            values[col] = np.nan
    if "world" not in values:
        values["world"] = ""
    several = values["world"].nunique() > 1
    panels = list(dict.fromkeys(zip(values["criterion"], values["world"])))
    measures = list(dict.fromkeys(values["measure"]))
    limits = _shared_limits(values)
    bounds = {"tau": 1.0, "power": 1.0, "reliability": 1.0, "rms": 0.0}
    height = 0.19 * len(measures) + 0.75
    fig, axes = _figure(len(panels), width=MAX_WIDTH, height=height, cols=1)
    for ax, (crit, world) in zip(axes, panels):
        d = values[(values["criterion"] == crit) & (values["world"] == world)]
        higher = bool(d["higher_is_better"].iloc[0])
        scale = d["scale"].iloc[0]
        for i, m in enumerate(measures):
            row = d[d["measure"] == m]
            if row.empty or not np.isfinite(float(row["value"].iloc[0])):
                continue
            v, lo, hi = (float(row[c].iloc[0]) for c in ("value", "low", "high"))
            mine = m == highlight
            colour = "#d62728" if mine else "#777777"
            if np.isfinite(lo) and np.isfinite(hi):
                ax.plot([lo, hi], [i, i], color=colour, linewidth=2.4 if mine else 1.6, zorder=2)
            ax.scatter([v], [i], s=46 if mine else 24, color=colour, zorder=3)
        ax.set_yticks(range(len(measures)), measures)
        for label in ax.get_yticklabels():
            if label.get_text() == highlight:
                label.set_color("#d62728")
                label.set_fontweight("bold")
        ax.tick_params(axis="y", labelsize="x-small", length=0)
        ax.tick_params(axis="x", labelsize="x-small")
        ax.set_ylim(len(measures) - 0.5, -0.5)
        if scale in limits:
            lo, hi = limits[scale]
            ax.set_xlim((lo, hi) if higher else (hi, lo))
        if scale in bounds:
            ax.axvline(bounds[scale], color="grey", linewidth=0.8, linestyle=":", zorder=1)
        ax.grid(axis="x", alpha=0.3)
        for side in ("right", "top"):
            ax.spines[side].set_visible(False)
        title = f"{crit} ({'higher' if higher else 'lower'} is better)"
        if several:
            title += f", {world}"
        mine = d[d["measure"] == highlight]
        if len(mine) and "rank" in mine:
            title += f": {highlight} {mine['rank'].iloc[0]}"
        elif mine.empty and highlight in measures:
            title += f": no value of {highlight}"
        ax.set_title(title, fontsize="small", loc="left")
    return fig


def _world_colours(n: int) -> list:
    import seaborn as sns

    return sns.color_palette("dark", n)


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
    "measure_markers",
    "level_axis",
    "robustness_curves",
    "power_curves",
    "drift_curves",
    "measure_dots",
    "asl_curves",
    "significance_bars",
    "stability_curves",
    "informativeness_bars",
    "pr_curves",
    "agreement_heatmap",
    "top_heaviness_curves",
    "collection_panels",
    "card_dots",
]
