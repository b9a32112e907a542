"""Helpers the criterion sections share: a kind's summary rows, one column per statistic, the
most damaged level, first-seen order."""

from __future__ import annotations

import pandas as pd

from metaeval.report.model import Report, intervals_text, level_order


def summary_of(rep: Report, kind: str) -> pd.DataFrame:
    """The summary rows of one kind of criterion (means and intervals), in study order."""
    s = rep.summary
    return s[s["kind"] == kind] if len(s) else s


def first_seen(col: pd.Series) -> pd.Series:
    """A sort key keeping values in the order they first appear (numbers as they are)."""
    if pd.api.types.is_numeric_dtype(col):
        return col
    return col.map({v: i for i, v in enumerate(dict.fromkeys(col))})


def lowest_level(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows at the most damaged level of each world and degrader (the last in level
    order)."""
    keep = []
    for _, d in rows.groupby(["world", "degrader"], sort=False):
        keep.append(d[d["level"] == level_order(d["level"])[-1]])
    return pd.concat(keep) if keep else rows


def by_statistic(
    rep: Report, kind: str, statistics: dict[str, str], *, x: str | None = None
) -> pd.DataFrame:
    """One column per statistic (named by ``statistics``), ``mean [low, high]``, one row per
    world and measure (and ``x``, named ``x``); one number format per statistic."""
    s = rep.summary[(rep.summary["kind"] == kind) & rep.summary["statistic"].isin(statistics)]
    if s.empty:
        return s
    parts = [d.assign(shown=intervals_text(d)) for _, d in s.groupby("statistic", sort=False)]
    shown = pd.concat(parts)
    index = ["world", "measure"] + (["x"] if x else [])
    wide = shown.pivot_table(
        index=index, columns="statistic", values="shown", aggfunc="first", sort=False
    )
    wide = wide[[c for c in statistics if c in wide.columns]].rename(columns=statistics)
    wide.columns.name = None
    table = rep.sorted_rows(wide.reset_index())
    if x:
        table["x"] = table["x"].map(lambda v: f"{v:g}")
        table = table.rename(columns={"x": x})
    return table
