"""The model every section of a report draws on: a study's saved results in the study's
order, their summary (means with intervals), and the tables and texts sections share.

:class:`Report` is built from what :func:`metaeval.report.reader.read` read; a section is a
function of it and of its criterion's rows (:mod:`metaeval.report.sections`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from metaeval.report import document as doc
from metaeval.report.inference import Sources
from metaeval.report.reader import StudyOutput
from metaeval.report.summary import summarise

FULL = "full"


def level_order(levels) -> list:
    """``full`` first, then numeric levels from the highest, then the rest as they come."""
    levels = [str(lv) for lv in dict.fromkeys(levels)]
    numeric = {lv: pd.to_numeric(lv, errors="coerce") for lv in levels}
    nums = sorted((lv for lv in levels if not np.isnan(numeric[lv])), key=lambda v: -numeric[v])
    rest = [lv for lv in levels if lv != FULL and np.isnan(numeric[lv])]
    return ([FULL] if FULL in levels else []) + nums + rest


class Report:
    """What the sections share: the study's normalised spec, the saved tables, the measures in
    study order, the degraders whose levels are percentages, and the summary of the results.

    Parameters
    ----------
    data : StudyOutput
        A study's output folder as :func:`metaeval.report.reader.read` read it.
    """

    def __init__(self, data: StudyOutput):
        self.data = data
        self.tables = data.tables
        #: the normalised spec (:func:`metaeval.report.reader.read_spec`): every key present
        self.spec = spec = data.spec
        self.degraders = [d["id"] for d in spec["degraders"]]
        self.percent = [d["id"] for d in spec["degraders"] if d["level_unit"] == "percent"]
        self.methods = {d["id"]: d["method"] for d in spec["degraders"]}
        self.meanings = {d["id"]: d["level_meaning"] for d in spec["degraders"]}
        results = self.tables.get("results", pd.DataFrame())
        planned = list(dict.fromkeys(data.planned.get("measure", pd.Series(dtype=str))))
        seen = list(dict.fromkeys(results["measure"])) if len(results) else []
        self.order = [m for m in planned if m] + [m for m in seen if m and m not in planned]
        self.worlds = [w["id"] for w in spec["worlds"]]
        self.results = self.in_order(results)
        self.confidence = float(spec["confidence"])
        self.seed = int(data.manifest.get("seed") or 0)
        self.resamples = self.tables.get("resamples")
        self.summary = summarise(
            self.results, self.resamples, confidence=self.confidence, seed=self.seed
        )

    def in_order(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Rows sorted by the study's order of worlds, then of measures (stable otherwise)."""
        if frame is None or frame.empty or "measure" not in frame:
            return frame

        def position(column: str, names) -> np.ndarray:
            # a dictionary map is one hash lookup per row (a function is one call per row);
            # names not listed come last
            rank = {n: i for i, n in enumerate(names)}
            return frame[column].map(rank).fillna(len(rank)).to_numpy(dtype=float)

        keys = [position("measure", self.order)]
        if "degrader" in frame:
            keys.append(position("degrader", ["", *self.degraders]))
        if "world" in frame:
            keys.append(position("world", self.worlds))
        return frame.iloc[np.lexsort(keys)].reset_index(drop=True)

    def level_names(self) -> dict:
        """x-axis label of the levels of every degrader that is not a percentage."""
        return {g: self.what_levels(g) for g in self.degraders if g not in self.percent}

    def what_levels(self, degrader: str) -> str:
        """What a degrader's levels are, for a caption: as its class says
        (:attr:`simulators.degraders.Degrader.level_meaning`, saved in the spec)."""
        # a degrader the results name and the spec does not (no study file): just levels
        return self.meanings.get(degrader, "levels")

    def level_tables(
        self,
        statistic: str,
        name: str,
        caption: str,
        *,
        collapsed: bool = False,
        intervals: bool = True,
        **where,
    ) -> list[doc.Block]:
        """:meth:`pivot`, one table per degrader when the study has several (their levels mean
        different things: 10 is a rate for one, a pool depth for another); each cell the mean
        with its interval, ``mean [low, high]`` (``intervals=False``: the mean alone)."""
        wide = self.pivot(statistic, intervals=intervals, **where)
        if wide.empty or wide["degrader"].nunique() <= 1:
            return [doc.table(wide, name, caption, collapsed=collapsed)] if len(wide) else []
        out = []
        for g in dict.fromkeys(wide["degrader"]):
            rows = self.pivot(statistic, degrader=g, intervals=intervals, **where)
            rows = rows[rows["degrader"] == g].dropna(axis=1, how="all").drop(columns="degrader")
            out.append(
                doc.table(
                    rows.reset_index(drop=True),
                    f"{name}_{g}",
                    f"{caption}; {g}: {self.what_levels(g)}",
                    collapsed=collapsed,
                )
            )
        return out

    def pivot(
        self,
        statistic: str,
        *,
        other: str | None = None,
        kind: str | None = None,
        degrader: str | None = None,
        intervals: bool = False,
    ) -> pd.DataFrame:
        """Measures as rows (study order), levels as columns, for one statistic; worlds and
        degraders as leading columns. The full-judgment rows join every degrader of their
        world (their "full" column). Cells are means, or with ``intervals`` the text
        ``mean [low, high]`` (:func:`with_interval`)."""
        s = self.summary
        d = s[s["statistic"] == statistic]
        if kind is not None:
            d = d[d["kind"] == kind]
        if other is not None:
            d = d[d["other"] == other]
        if d.empty:
            return d
        full, damaged = d[d["degrader"] == ""], d[d["degrader"] != ""]
        if degrader is not None:
            damaged = damaged[damaged["degrader"] == degrader]
        parts = [damaged]
        for world, rows in full.groupby("world", sort=False):
            degraders = damaged.loc[damaged["world"] == world, "degrader"].unique()
            parts += [rows.assign(degrader=g) for g in degraders] or [
                rows.assign(degrader="full judgments")
            ]
        d = pd.concat(parts, ignore_index=True)
        if intervals:
            d = d.assign(shown=intervals_text(d))
        wide = d.pivot_table(
            index=["world", "degrader", "measure"],
            columns="level",
            values="shown" if intervals else "mean",
            sort=False,
            aggfunc="first",
        )
        wide = wide[[c for c in level_order(wide.columns) if c in wide.columns]]
        wide.columns = [self.level_name(c, d) for c in wide.columns]
        wide = wide.reset_index()
        return self.sorted_rows(wide)

    def basis(self, rows: pd.DataFrame, *, plural: bool = False) -> str:
        """The intervals of some summary rows and what they rest on: ``95% interval over 54
        topics (200 paired resamples), 10 trials`` (``intervals`` with ``plural``)."""
        what = f"{self.confidence:.0%} interval" + ("s" if plural else "")
        rests = self.rests_on(rows)
        return f"{what} over {rests}" if rests else what

    def rests_on(self, rows: pd.DataFrame) -> str:
        """What the intervals of some summary rows rest on, world by world when they differ:
        ``54 topics (200 paired resamples), 10 trials``, and what makes them rough."""
        parts = []
        for world, d in rows.groupby("world", sort=False):
            sources = Sources(
                tuple(sorted({int(t) for t in d["topics"].dropna()})),
                int(d["resamples"].max()),
                int(d["trials"].max()),
                int(d["replicates"].max()),
            )
            caveats = sources.caveats()
            rough = f" (rough: {'; '.join(caveats)})" if caveats else ""
            parts.append((world, sources.text() + rough))
        if len({text for _, text in parts}) <= 1:
            return parts[0][1] if parts else ""
        return "; ".join(f"{w}: {text}" for w, text in parts)

    def level_name(self, level: str, d: pd.DataFrame) -> str:
        """A level as a column is named: ``full``, ``10%`` for a percentage, else as is."""
        if level == FULL:
            return FULL
        degraders = set(d.loc[d["level"] == level, "degrader"]) if len(d) else set()
        return f"{level}%" if degraders and degraders <= set(self.percent) else str(level)

    def sorted_rows(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Rows grouped by world and degrader (as they come), levels in level order (the full
        judgments first), measures in study order."""
        if frame.empty or "measure" not in frame:
            return frame

        def seen(col):
            return frame[col].map({v: i for i, v in enumerate(dict.fromkeys(frame[col]))})

        rank = {m: i for i, m in enumerate(self.order)}
        keys = [frame["measure"].map(lambda m: rank.get(m, len(rank))).to_numpy()]
        if "level" in frame:
            order = {lv: i for i, lv in enumerate(level_order(frame["level"]))}
            keys.append(frame["level"].astype(str).map(order).to_numpy())
        keys += [seen(c).to_numpy() for c in ("degrader", "world") if c in frame]
        return frame.iloc[np.lexsort(keys)].reset_index(drop=True)


def _decimals(values) -> int:
    """The decimals a column of means and bounds is shown with, as report tables do
    (:func:`metaeval.report.document.decimals_for`): none for whole numbers, one from 100
    up, three otherwise."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return 3
    if np.allclose(v, np.round(v)):
        return 0
    return 1 if np.max(np.abs(v)) >= 100 else 3


def with_interval(mean: float, low: float, high: float, decimals: int = 3) -> str:
    """``0.808 [0.771, 0.842]``: a mean with its interval; the mean alone when it has none
    (one value, nothing resampled), empty without a mean."""
    if mean is None or not np.isfinite(mean):
        return ""
    if not (np.isfinite(low) and np.isfinite(high)):
        return f"{mean:.{decimals}f}"
    return f"{mean:.{decimals}f} [{low:.{decimals}f}, {high:.{decimals}f}]"


def intervals_text(rows: pd.DataFrame, decimals: int | None = None) -> list[str]:
    """:func:`with_interval` of every summary row, one number format for them all (unless
    ``decimals`` is given)."""
    mean, low, high = (rows[c].to_numpy(dtype=float) for c in ("mean", "low", "high"))
    k = _decimals(np.concatenate([mean, low, high])) if decimals is None else decimals
    return [with_interval(m, lo, hi, k) for m, lo, hi in zip(mean, low, high)]
