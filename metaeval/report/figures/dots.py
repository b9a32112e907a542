"""Dot charts: one value per measure (or per world) with its interval as a bar, for values
that have no level axis: a measure's discriminative power under the full judgments, the
statistics of the collections, a measure's report card."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from metaeval.report.figures.layout import (
    MAX_WIDTH,
    _figure,
    _interval_bar,
    _points,
    _world_colours,
    is_condensed,
    measure_palette,
)


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
