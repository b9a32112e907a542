"""What every figure shares: colours and markers per measure, the grid of panels, the level
axis, lines with their interval bands, the legend under the panels.

The helpers with a leading underscore are private to :mod:`metaeval.report.figures`: the
figure families import them so that every figure looks alike.
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


def _interval_bar(ax, lo: float, hi: float, at: float, colour, *, vertical: bool = False) -> None:
    """An interval as a capped bar from ``lo`` to ``hi`` at ``at`` (nothing without one). It is
    drawn as is, not as an error around the mean: a bootstrap percentile interval need not be
    centred on the mean, nor contain it."""
    if not _with_interval(lo, hi):
        return
    xs, ys = ([at, at], [lo, hi]) if vertical else ([lo, hi], [at, at])
    ax.plot(xs, ys, color=colour, linewidth=1.2, marker="_" if vertical else "|",
            markersize=6, zorder=2, label="_interval")  # fmt: skip


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
