"""Figures against the level of damage: robustness, discriminative power and mean drift
curves, ASL curves per level, and the significance changes at a level."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from metaeval.report.figures.dots import measure_dots
from metaeval.report.figures.layout import (
    FULL,
    _figure,
    _finish,
    _label,
    _lines,
    _slanted_xticks,
    level_axis,
    measure_palette,
)


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
