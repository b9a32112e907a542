"""The quickstart's summary: a few telling numbers per measure, read off a study's summary
(the quickstart study runs a small card battery)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metaeval.report.card.page import shown
from metaeval.report.inference import Sources
from metaeval.study.spec import DEFAULT_CONFIDENCE

#: The quickstart's columns: (kind, statistic, other, degrader, level, x). Its degraders are
#: "sampled" (stratified, % kept) and "pool" (pool depth); both have a level "10".
QUICKSTART = {
    "tau vs full, 10% judged": ("robustness", "tau_b", "full", "sampled", "10", None),
    "tau vs full, depth-5 pool": ("robustness", "tau_b", "full", "pool", "5", None),
    "tau vs truth, full": ("robustness", "tau_b", "truth", "", "full", None),
    "power, full": ("discriminative_power", "power", "", "", "full", None),
    "power, 10% judged": ("discriminative_power", "power", "", "sampled", "10", None),
    "tau, 10 topics": ("stability", "tau_subset", "", "", "full", 10),
    "RMS": ("informativeness", "rms", "", "", "full", 1),
}


def _quickstart_rows(summary: pd.DataFrame):
    for column, (kind, stat, other, degrader, level, x) in QUICKSTART.items():
        d = summary[
            (summary["kind"] == kind)
            & (summary["statistic"] == stat)
            & (summary["other"] == other)
            & (summary["degrader"] == degrader)
            & (summary["level"].astype(str) == level)
        ]
        if x is not None:
            d = d[np.isclose(d["x"].astype(float), float(x))]
        if len(d):
            yield column, d


def quickstart_summary(summary: pd.DataFrame, *, intervals: bool = False) -> pd.DataFrame:
    """Measures as rows, a few telling numbers as columns, in the study's order of measures;
    a measure a criterion does not apply to is NaN (``-`` with ``intervals``).

    ``summary`` is a study's summary (:func:`metaeval.report.summarise`). Each cell is the
    mean over replicates and trials, or with ``intervals`` the text ``mean [low, high]``
    (its interval). A study of several worlds has a row per world and measure (the index
    ``world, measure``): intervals of different worlds are never averaged.
    """
    order = list(dict.fromkeys(summary["measure"])) if len(summary) else []
    worlds = list(dict.fromkeys(summary["world"])) if len(summary) else []
    index = ["world", "measure"] if len(worlds) > 1 else ["measure"]
    table = {}
    for column, d in _quickstart_rows(summary):
        d = d.drop_duplicates(["world", "measure"]).set_index(index)
        table[column] = (
            pd.Series([shown(*v) for v in zip(d["mean"], d["low"], d["high"])], index=d.index)
            if intervals
            else d["mean"].astype(float)
        )
    frame = pd.DataFrame(table)
    if frame.empty:
        return frame
    rank = {m: i for i, m in enumerate(order)}
    world_rank = {w: i for i, w in enumerate(worlds)}
    keys = frame.index.to_frame(index=False)
    key = keys["measure"].map(rank) + (
        keys["world"].map(world_rank) * len(rank) if "world" in keys else 0
    )
    frame = frame.iloc[np.argsort(key.to_numpy(), kind="stable")]
    return frame.fillna("-") if intervals else frame


def quickstart_basis(summary: pd.DataFrame, confidence: float = DEFAULT_CONFIDENCE) -> str:
    """What the intervals of :func:`quickstart_summary` rest on: ``95% intervals of the
    expected value over 30 topics (200 paired resamples), 3 trials, 2 replicates``, and what
    makes them rough."""
    parts = [d for _, d in _quickstart_rows(summary)]
    if not parts:
        return ""
    d = pd.concat(parts)
    topics = tuple(sorted({int(t) for t in d["topics"].dropna()}))
    sources = Sources(
        topics, int(d["resamples"].max()), int(d["trials"].max()), int(d["replicates"].max())
    )
    text = f"[low, high]: {confidence:.0%} intervals of the expected value over {sources.text()}"
    caveats = sources.caveats()
    return text + (f" (rough: {'; '.join(caveats)})" if caveats else "")
