"""Reports of studies, drawn only from what a study saved.

:func:`write_report` reads a study's output folder (its ``results/``, ``plan.parquet``,
``manifest.json``, ``claims.json`` and ``study.toml``) and writes ``report/index.md`` with PNG
figures, ``report/index.html`` (one self-contained file) and ``report/tables/*.csv``. It never
imports :mod:`simulators` and never computes a criterion: every number in a report can be found
in the saved results, and a report can be redrawn anywhere.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as a package
    import tomli as tomllib

from metaeval.report import document as doc
from metaeval.report import figures as fig
from metaeval.report.inference import KEYS, Sources, summarise
from metaeval.study.spec import DEFAULT_CONFIDENCE

FORMATS = ("md", "html")
FULL = "full"


def _level_order(levels) -> list:
    """``full`` first, then numeric levels from the highest, then the rest as they come."""
    levels = [str(lv) for lv in dict.fromkeys(levels)]
    numeric = {lv: pd.to_numeric(lv, errors="coerce") for lv in levels}
    nums = sorted((lv for lv in levels if not np.isnan(numeric[lv])), key=lambda v: -numeric[v])
    rest = [lv for lv in levels if lv != FULL and np.isnan(numeric[lv])]
    return ([FULL] if FULL in levels else []) + nums + rest


class _Report:
    """What the sections share: the saved tables, the measures in study order, the
    degraders whose levels are percentages."""

    def __init__(self, data: dict):
        self.data = data
        self.tables = data["tables"]
        spec = data["spec"]
        self.percent = [
            d.get("id", d.get("method"))
            for d in spec.get("degraders", [])
            if d.get("method") in ("stratified", "uniform")
        ]
        self.degraders = [d.get("id", d.get("method")) for d in spec.get("degraders", [])]
        self.methods = {
            d.get("id", d.get("method")): d.get("method") for d in spec.get("degraders", [])
        }
        results = self.tables.get("results", pd.DataFrame())
        planned = list(dict.fromkeys(data["planned"].get("measure", pd.Series(dtype=str))))
        seen = list(dict.fromkeys(results["measure"])) if len(results) else []
        self.order = [m for m in planned if m] + [m for m in seen if m and m not in planned]
        self.worlds = [str(w.get("id")) for w in spec.get("worlds", [])]
        self.results = self.in_order(results)
        self.confidence = float(spec.get("study", {}).get("confidence", DEFAULT_CONFIDENCE))
        self.seed = int(data["manifest"].get("seed") or 0)
        self.resamples = self.tables.get("resamples")
        self.summary = summarise(
            self.results, self.resamples, confidence=self.confidence, seed=self.seed
        )

    def in_order(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Rows sorted by the study's order of worlds, then of measures (stable otherwise)."""
        if frame is None or frame.empty or "measure" not in frame:
            return frame
        rank = {m: i for i, m in enumerate(self.order)}
        keys = [frame["measure"].map(lambda m: rank.get(m, len(rank))).to_numpy()]
        if "degrader" in frame:
            order = {g: i for i, g in enumerate(["", *self.degraders])}
            keys.append(frame["degrader"].map(lambda g: order.get(g, len(order))).to_numpy())
        if "world" in frame:
            worlds = {w: i for i, w in enumerate(self.worlds)}
            keys.append(frame["world"].map(lambda w: worlds.get(w, len(worlds))).to_numpy())
        return frame.iloc[np.lexsort(keys)].reset_index(drop=True)

    def level_names(self) -> dict:
        """x-axis label of the levels of every degrader that is not a percentage."""
        return {g: self.what_levels(g) for g in self.degraders if g not in self.percent}

    def what_levels(self, degrader: str) -> str:
        """What a degrader's levels are, for a caption."""
        method = self.methods.get(degrader, "")
        return {
            "stratified": "% of the judgments kept (stratified sampling)",
            "uniform": "% of the judgments kept (uniform sampling)",
            "pool_depth": "pool depth",
        }.get(method, f"levels of {method}" if method else "levels")

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
        wide = wide[[c for c in _level_order(wide.columns) if c in wide.columns]]
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
            order = {lv: i for i, lv in enumerate(_level_order(frame["level"]))}
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


#: The saved tables a report draws on: tidy results, their values on the topic resamples,
#: ASL curves, analytic claims.
_TABLES = ("results", "resamples", "asl", "claims")


def _read(directory: Path) -> dict:
    """Everything a report draws on: the manifest, the claims, the study file as run, the
    plan, which units are saved, and the saved tables it uses (no other: a detail table can
    be large)."""
    from metaeval.study.store import Store, load_results, read_table

    store = Store(directory)
    manifest = store.read_manifest()
    claims = (
        json.loads((directory / "claims.json").read_text())
        if (directory / "claims.json").is_file()
        else []
    )
    spec_text = (
        (directory / "study.toml").read_text() if (directory / "study.toml").is_file() else ""
    )
    try:
        spec = tomllib.loads(spec_text) if spec_text else {}
    except tomllib.TOMLDecodeError:
        spec = {}
    # the analytic claims are computed by the driver, not by units of work: read as saved
    tables = {
        name: read_table(directory, name) if name == "claims" else load_results(directory, name)
        for name in _TABLES
        if (directory / "results" / name).is_dir()
    }
    planned = store.planned()
    if planned is None:
        planned = pd.DataFrame(columns=["unit"])
    return {
        "manifest": manifest,
        "spec_text": spec_text,
        "spec": spec,
        "tables": tables,
        "planned": planned,
        # which units are done, as the store decides it (build counts the planned ones)
        "saved": set(store.done_units()),
        "claims": claims,
        "directory": directory,
    }


def build(directory: str | Path) -> tuple[str, list[doc.Block], dict]:
    """The report's title, blocks and the summary frames (from saved results only)."""
    from metaeval.report import claims as claim_checks

    directory = Path(directory)
    if not (directory / "manifest.json").is_file():
        raise FileNotFoundError(f"{directory} is not a study output folder (no manifest.json)")
    data = _read(directory)
    manifest, spec = data["manifest"], data["spec"]
    rep = _Report(data)
    name = manifest.get("study", directory.name)
    title = f"Study {name}"
    blocks: list[doc.Block] = []
    description = spec.get("study", {}).get("description", "")
    if description:
        blocks.append(doc.text(" ".join(description.split())))
    planned_units = set(data["planned"]["unit"]) if "unit" in data["planned"] else set()
    saved = data["saved"]
    done = len(saved & planned_units) if planned_units else len(saved)
    planned = len(planned_units)
    failures = (
        sorted((directory / "failures").glob("*.json")) if (directory / "failures").is_dir() else []
    )
    if planned and done < planned:
        blocks.append(
            doc.banner(
                f"This study is incomplete: {done} of {planned} planned units are saved"
                + (f", {len(failures)} task(s) failed" if failures else "")
                + ". Figures and verdicts use what is saved; run the study again to complete it."
            )
        )
    blocks.append(doc.text(_provenance(manifest, spec, done)))
    if len(rep.summary):
        blocks.append(doc.text(_intervals_note(rep)))
    frames = {"summary": rep.summary}
    analytic = data["tables"].get("claims")
    verdicts, parts = claim_checks.judge_claims(
        data["claims"],
        rep.results,
        rep.resamples,
        _checks_only(analytic),
        confidence=rep.confidence,
        seed=rep.seed,
    )
    if len(verdicts):
        frames["claims"] = verdicts
        frames["claim_parts"] = parts
        blocks += _claims(verdicts, parts, rep.confidence)
    kinds = list(dict.fromkeys(rep.results["kind"])) if len(rep.results) else []
    for kind in [*SECTIONS, *(k for k in kinds if k not in SECTIONS)]:
        rows = rep.results[rep.results["kind"] == kind] if len(rep.results) else rep.results
        if len(rows):
            blocks += SECTIONS.get(kind, _generic)(rep, rows)
    blocks += _top_heaviness(analytic)
    blocks += _reproduce(directory, data)
    return title, blocks, frames


def _provenance(manifest: dict, spec: dict, done: int) -> str:
    versions = manifest.get("versions", {})
    worlds = []
    for w in spec.get("worlds", []):
        if w.get("kind") == "simulator":
            params = w.get("params")
            fitted = f", parameters from {params}" if isinstance(params, str) else ""
            worlds.append(
                f"`{w.get('id')}` (simulated: {w.get('preset', 'trec_like')}{fitted}, "
                f"{w.get('n_topics')} topics, {w.get('n_systems')} systems, "
                f"{w.get('replicates', 1)} replicate(s))"
            )
        elif w.get("kind") == "scores":
            files = w.get("scores", [])
            files = ", ".join(
                Path(str(f)).name for f in ([files] if isinstance(files, str) else files)
            )
            design = (
                f"{w.get('pairs', 1000)} pairs per replicate"
                + (f" differing by {w['delta']}" if w.get("delta") else " (null)")
                if w.get("design") == "pairs"
                else f"{w.get('copula', 'gaussian')} copula over the runs"
            )
            worlds.append(
                f"`{w.get('id')}` (score-level: {w.get('measure')} scores of {files}; {design}; "
                f"{w.get('n_topics')} topics, {w.get('replicates', 1)} replicate(s))"
            )
        else:
            worlds.append(f"`{w.get('id')}` (TREC files: {Path(str(w.get('qrels', ''))).name})")
    degraders = [
        f"`{d.get('id', d.get('method'))}` ({d.get('method')}: levels "
        f"{', '.join(str(lv) for lv in d.get('levels', []))}; {d.get('trials', 1)} trial(s))"
        for d in spec.get("degraders", [])
    ]
    out = f"Worlds: {'; '.join(worlds) or '-'}."
    if degraders:
        out += f" Damaged judgments: {'; '.join(degraders)}."
    return (
        out + f" Seed {manifest.get('seed')}; metaeval {versions.get('metaeval')}, numpy "
        f"{versions.get('numpy')}, scipy {versions.get('scipy')}, python "
        f"{versions.get('python')}; {done} units saved."
    )


def _intervals_note(rep: _Report) -> str:
    """What every number of the report is, and what its interval is (and is not)."""
    level = f"{rep.confidence:.0%}"
    return (
        "Every value below is a statistic's mean over the trials of a degrader and the "
        "replicates of a simulated world, on the observed topics. `[low, high]` and the bands "
        f"of the figures are its {level} interval for the expected value, from a paired "
        "bootstrap over the topics (the same topic resamples for every measure, level and "
        "trial), then the trials, then the replicates: how much the value could move with "
        "other topics, other trials and other draws of the collection. A value without an "
        "interval is one value with nothing resampled. In this study: "
        f"{rep.basis(rep.summary, plural=True)}; each section says what its own intervals rest "
        "on."
    )


def _checks_only(analytic: pd.DataFrame | None) -> pd.DataFrame | None:
    """The analytic claims' checks, without the curves some of them save for figures."""
    if analytic is None or analytic.empty or "kind" not in analytic:
        return analytic
    return analytic[analytic["kind"].fillna("check") != "curve"]


# ------------------------------------------------------------------------------ claims
def _claims(verdicts: pd.DataFrame, parts: pd.DataFrame, confidence: float) -> list[doc.Block]:
    seen = list(dict.fromkeys(verdicts["world"]))
    worlds = [w for w in seen if w != "(analytic)"] + [w for w in seen if w == "(analytic)"]
    wide = verdicts.pivot_table(
        index="claim", columns="world", values="verdict", aggfunc="first", sort=False
    )
    wide = wide.reindex(columns=worlds).fillna("")
    first = verdicts.drop_duplicates("claim").set_index("claim")
    said = [
        f"{text} ({source})" if source else text
        for text, source in zip(
            first.loc[wide.index, "text"].to_numpy(), first.loc[wide.index, "source"].to_numpy()
        )
    ]
    overview = pd.DataFrame(
        {
            "claim": wide.index,
            "what it says (source)": said,
            **{w: wide[w].to_numpy() for w in worlds},
        }
    )
    counts = verdicts["verdict"].value_counts()
    failed = verdicts[verdicts["verdict"] == "does not hold"]
    plain = (
        f"Of {len(verdicts)} verdicts (claims x worlds), {counts.get('holds', 0)} hold, "
        f"{counts.get('does not hold', 0)} do not hold and "
        f"{counts.get('inconclusive', 0)} are inconclusive."
    )
    if len(failed):
        plain += (
            " Does not hold on our data: "
            + "; ".join(
                f"{c} ({', '.join(failed.loc[failed['claim'] == c, 'world'])})"
                for c in dict.fromkeys(failed["claim"])
            )
            + ". That is a finding about these collections, not an error: the numbers below "
            "say by how much."
        )
    level = f"{confidence:.0%}"
    blocks = [
        doc.heading("Claims"),
        doc.text(
            "Each claim is checked on every world. What it claims (a difference between two "
            "measures, a value against a bound, a change between two levels) is estimated by "
            "its mean over trials and replicates, with a "
            f"{level} interval for its expected value from a paired bootstrap over the topics "
            "(the same topic resamples for every measure, level and trial), the trials and "
            "the replicates. A claim **holds** when the interval lies on the claimed side, "
            "**does not hold** when it lies on the other side, and is **inconclusive** "
            "otherwise; a claim that two measures behave alike, or that a value stays flat, "
            "holds when the whole interval is within the tolerance. A claim with several "
            "parts (pairs, levels, measures) holds when every part holds and does not hold "
            "when a part is firmly reversed after Holm's correction over its parts. Analytic "
            "claims are checked exactly on constructed lists."
        ),
        doc.text(plain),
        doc.table(overview, "claims_overview", "Verdicts, claim by world"),
        doc.text(
            "The numbers behind each verdict: the claimed quantities (means over trials and "
            f"replicates), their difference with its {level} interval `[low, high]`, and "
            "what the intervals rest on."
        ),
        doc.table(
            verdicts[["claim", "world", "verdict", "numbers", "basis"]],
            "claims_numbers",
            "The numbers",
        ),
    ]
    if len(parts):
        blocks.append(
            doc.table(
                parts, "claim_parts", "Every part of every claim, with its interval", collapsed=True
            )
        )
    return blocks


# ------------------------------------------------------------------------------ sections
def _summary_of(rep: _Report, kind: str) -> pd.DataFrame:
    """The summary rows of one kind of criterion (means and intervals), in study order."""
    s = rep.summary
    return s[s["kind"] == kind] if len(s) else s


def _robustness(rep: _Report, rows: pd.DataFrame) -> list[doc.Block]:
    summary = _summary_of(rep, "robustness")
    out = [
        doc.heading("Robustness to damaged judgments"),
        doc.text(
            "Rank correlation between each measure's ranking of the systems under damaged "
            "judgments and its ranking under the full judgments (1 = the same ranking), and, "
            "in simulated worlds, with its ranking under the complete true judgments. Lines "
            "and table cells are means over trials and replicates; bands and `[low, high]` "
            f"their {rep.basis(summary, plural=True)}. A condensed-list variant (') is dashed, "
            "in its base measure's colour."
        ),
    ]
    first = True
    for against in ("full", "truth", "effect"):
        for stat in ("tau_b", "tau_ap", "tau_a"):
            if not ((rows["other"] == against) & (rows["statistic"] == stat)).any():
                continue
            label = fig._label(stat)
            out.append(
                doc.figure(
                    fig.robustness_curves(
                        summary,
                        statistic=stat,
                        against=against,
                        percent=rep.percent,
                        level_names=rep.level_names(),
                    ),
                    f"robustness_{stat}_{against}",
                    f"{label} with the {against} ranking, by level",
                )
            )
            out += rep.level_tables(
                stat,
                f"robustness_{stat}_{against}",
                f"Mean {label} with the {against} ranking, by level, with its interval",
                collapsed=not first,
                other=against,
                kind="robustness",
            )
            first = False
    if (rows["statistic"] == "mean_drift").any():
        out += [
            doc.figure(
                fig.drift_curves(summary, percent=rep.percent, level_names=rep.level_names()),
                "mean_drift",
                "Mean drift: the reduced minus the full value, averaged over systems "
                "(below 0: the measure underestimates)",
            ),
            *rep.level_tables("mean_drift", "mean_drift", "Mean drift by level, with its interval"),
        ]
    return out


def _power(rep: _Report, rows: pd.DataFrame) -> list[doc.Block]:
    summary = _summary_of(rep, "discriminative_power")
    power = summary[summary["statistic"] == "power"]
    out = [
        doc.heading("Discriminative power"),
        doc.text(
            "The share of system pairs whose difference is significant (achieved "
            "significance level below alpha), with the same resamples at every level: the "
            "mean over trials and replicates, with its "
            f"{rep.basis(power)} (the significance tests are redrawn on every topic resample)."
        ),
        doc.figure(
            fig.power_curves(summary, percent=rep.percent, level_names=rep.level_names()),
            "power",
            "Discriminative power" + (" by level" if rows["level"].nunique() > 1 else ""),
        ),
        *rep.level_tables(
            "power",
            "power",
            "Discriminative power (mean over trials and replicates, with its interval)",
            kind="discriminative_power",
        ),
        *rep.level_tables(
            "diff_required",
            "diff_required",
            "Estimated difference required for significance, with its interval",
            collapsed=True,
            kind="discriminative_power",
        ),
    ]
    asl = rep.in_order(rep.tables.get("asl"))
    if asl is not None and len(asl):
        asl = asl.assign(level=asl["level"].astype(str))
        lowest = [lv for lv in _level_order(asl["level"]) if lv != FULL][-1:]
        shown = asl[asl["level"].isin([FULL, *lowest])]
        out.append(
            doc.figure(
                fig.asl_curves(shown),
                "asl_curves",
                "ASL curves (Sakai 2006): the lower the curve, the more pairs a measure tells "
                "apart; dashed line: alpha"
                + (f"; under the full judgments and at level {lowest[0]}" if lowest else ""),
            )
        )
    return out


def _significance(rep: _Report, rows: pd.DataFrame) -> list[doc.Block]:
    s = rep.summary
    counts = ["n_significant", "false_alarms", "reversals", "misses"]
    tab = s[(s["kind"] == "significance_changes") & s["statistic"].isin(counts)]
    keys = ["world", "degrader", "level", "measure"]
    means = (
        tab.pivot_table(index=keys, columns="statistic", values="mean", sort=False)
        .reset_index()
        .reindex(columns=keys + counts)
    )
    # every count with its interval; the share is a ratio of two means (no interval)
    shown = tab.assign(shown=intervals_text(tab, decimals=1))
    wide = (
        shown.pivot_table(
            index=keys, columns="statistic", values="shown", aggfunc="first", sort=False
        )
        .reset_index()
        .reindex(columns=keys + counts)
    )
    share = means[keys].assign(
        false_alarm_share=100
        * means["false_alarms"]
        / means["n_significant"].where(means["n_significant"] > 0)
    )
    wide = wide.merge(share, on=keys, how="left", sort=False)
    wide = wide[keys + counts[:2] + ["false_alarm_share"] + counts[2:]]
    wide = wide.rename(
        columns={
            "n_significant": "significant (damaged)",
            "false_alarms": "of which not with full",
            "false_alarm_share": "% of them not with full",
            "reversals": "reversed",
            "misses": "lost",
        }
    )
    wide = rep.sorted_rows(wide)
    lowest = _lowest_level(rows)
    at_lowest = wide[
        wide.set_index(["world", "degrader", "level"]).index.isin(
            list(set(zip(lowest["world"], lowest["degrader"], lowest["level"])))
        )
    ]
    return [
        doc.heading("Significance changes"),
        doc.text(
            "System pairs significant under damaged judgments, and how that compares with the "
            "full judgments (Sakai & Kando 2008, Table 5): significant under damaged "
            "judgments but not under the full ones, significant under both but in opposite "
            "directions, and significant under the full judgments but lost. Means over trials "
            f"and replicates, with their {rep.basis(tab, plural=True)}; the share of false "
            "alarms is the ratio of two means."
        ),
        doc.figure(
            fig.significance_bars(lowest),
            "significance_changes",
            "At the most damaged level of each degrader",
        ),
        doc.table(
            at_lowest,
            "significance_changes_lowest",
            "At the most damaged level (mean number of system pairs, with its interval)",
            decimals=1,
        ),
        doc.table(
            wide,
            "significance_changes",
            "Every level (mean number of system pairs, with its interval)",
            decimals=1,
            collapsed=True,
        ),
    ]


def _first_seen(col: pd.Series) -> pd.Series:
    """A sort key keeping values in the order they first appear (numbers as they are)."""
    if pd.api.types.is_numeric_dtype(col):
        return col
    return col.map({v: i for i, v in enumerate(dict.fromkeys(col))})


def _lowest_level(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows at the most damaged level of each world and degrader (the last in level
    order)."""
    keep = []
    for _, d in rows.groupby(["world", "degrader"], sort=False):
        keep.append(d[d["level"] == _level_order(d["level"])[-1]])
    return pd.concat(keep) if keep else rows


def _stability(rep: _Report, rows: pd.DataFrame) -> list[doc.Block]:
    s = rep.summary
    d = s[(s["kind"] == "stability") & s["statistic"].isin(["tau_subset", "tau_split"])]
    out = [
        doc.heading("Topic-subset stability"),
        doc.text(
            "Kendall's tau_b between the ranking of the systems on random subsets of n topics "
            "and on all topics (and between two disjoint subsets of n topics), by n: the mean "
            "over repeats (and replicates). Every measure sees the same subsets. The band of "
            "the figures is a spread, not an interval: the 2.5-97.5 percentiles of tau_b over "
            "the random subsets, how far a ranking on one set of n topics can be from the "
            "ranking on all of them. The table gives the mean with its "
            f"{rep.basis(d)}, `[low, high]`."
        ),
    ]
    captions = {
        "tau_subset": "Ranking on n topics against the ranking on all topics",
        "tau_split": "Rankings on two disjoint sets of n topics",
    }
    for stat in ("tau_subset", "tau_split"):
        if (rows["statistic"] == stat).any():
            out.append(
                doc.figure(
                    fig.stability_curves(rows, statistic=stat),
                    f"stability_{stat}",
                    captions[stat] + " (band: the spread over random subsets)",
                )
            )
    d = d.assign(shown=intervals_text(d))
    wide = d.pivot_table(
        index=["world", "statistic", "measure"],
        columns="x",
        values="shown",
        aggfunc="first",
        sort=False,
    )
    wide.columns = [f"n = {int(c)}" for c in wide.columns]
    wide = wide.reset_index()
    wide = rep.sorted_rows(wide.assign(level=FULL)).drop(columns="level")
    first = {"tau_subset": 0, "tau_split": 1}
    wide = wide.sort_values(
        ["world", "statistic"],
        key=lambda c: c.map(first) if c.name == "statistic" else _first_seen(c),
        kind="stable",
    )
    out.append(doc.table(wide, "stability", "Mean tau_b by topic-set size, with its interval"))
    return out


def _agreement(rep: _Report, rows: pd.DataFrame) -> list[doc.Block]:
    summary = _summary_of(rep, "agreement")
    summary = summary[summary["other"] != ""]
    out = [
        doc.heading("Agreement between measures"),
        doc.text(
            "Rank correlation between the measures' rankings of the systems under the same "
            "judgments (the full ones), mean over replicates; the last table gives each pair "
            f"with its {rep.basis(summary)}."
        ),
    ]
    for i, stat in enumerate(("tau_b", "tau_ap")):
        d = rows[rows["statistic"] == stat]
        if not len(d):
            continue
        label = fig._label(stat)
        out.append(
            doc.figure(
                fig.agreement_heatmap(d, statistic=stat, order=rep.order),
                f"agreement_{stat}",
                f"{label} between the measures' rankings"
                + (" (row: the reference ranking)" if stat == "tau_ap" else ""),
            )
        )
        names = [m for m in rep.order if m in set(d["measure"]) | set(d["other"])]
        mats = []
        for world, w in d.groupby("world", sort=False):
            mat = w.groupby(["measure", "other"])["value"].mean().unstack()
            mat = mat.reindex(index=names, columns=names)
            for m in names:
                mat.loc[m, m] = 1.0
            mat = mat.rename_axis("measure").reset_index()
            mat.insert(0, "world", world)
            mats.append(mat)
        out.append(
            doc.table(
                pd.concat(mats, ignore_index=True),
                f"agreement_{stat}",
                f"{label} between the measures' rankings"
                + (" (row: the reference ranking)" if stat == "tau_ap" else ""),
                collapsed=i > 0,
            )
        )
    if len(summary):
        pairs = summary.assign(shown=intervals_text(summary)).pivot_table(
            index=["world", "measure", "other"],
            columns="statistic",
            values="shown",
            aggfunc="first",
            sort=False,
        )
        pairs = pairs[[c for c in ("tau_b", "tau_ap", "tau_a") if c in pairs.columns]]
        pairs = pairs.rename(columns={s: fig._label(s) for s in pairs.columns})
        pairs.columns.name = None
        pairs = pairs.reset_index()
        rank = {m: i for i, m in enumerate(rep.order)}
        pairs = pairs.iloc[
            np.lexsort(
                [
                    pairs["other"].map(lambda m: rank.get(m, len(rank))).to_numpy(),
                    pairs["measure"].map(lambda m: rank.get(m, len(rank))).to_numpy(),
                    _first_seen(pairs["world"]).to_numpy(),
                ]
            )
        ]
        out.append(
            doc.table(
                pairs.reset_index(drop=True),
                "agreement_intervals",
                "Every pair of measures, with its interval (tau_AP: the first measure's "
                "ranking as the reference)",
                collapsed=True,
            )
        )
    return out


def _informativeness(rep: _Report, rows: pd.DataFrame) -> list[doc.Block]:
    s = rep.summary
    d = s[(s["kind"] == "informativeness") & (s["statistic"] == "rms")]
    n = s[(s["kind"] == "informativeness") & (s["statistic"] == "n_lists")]
    wide = d.assign(shown=intervals_text(d)).pivot_table(
        index=["world", "measure"], columns="x", values="shown", aggfunc="first", sort=False
    )
    wide.columns = [f"RMS, grade >= {c:g}" for c in wide.columns]
    lists = n.pivot_table(index=["world", "measure"], columns="x", values="mean", sort=False)
    lists.columns = [f"lists, grade >= {c:g}" for c in lists.columns]
    # counts (a mean over replicates, rounded); none where a measure has no lists
    lists = lists.round().astype("Int64").astype(object).where(lists.notna(), "")
    table = rep.sorted_rows(wide.join(lists).reset_index())
    bars = d.rename(columns={"x": "threshold", "mean": "rms"})
    crit = next(
        (c for c in rep.data["spec"].get("criteria", []) if c.get("kind") == "informativeness"),
        {},
    )
    k = crit.get("min_relevant", 5)
    selection = (
        f"the ranked lists that retrieved at least {k} documents of every relevant grade "
        "(Robertson et al. 2010's selection), the same lists at every threshold"
        if crit.get("select") == "each_grade"
        else f"at each threshold, the ranked lists that retrieved at least {k} documents at or "
        "above it"
    )
    return [
        doc.heading("Informativeness"),
        doc.text(
            "RMS error between each ranked list's actual precision-recall curve and the one "
            "inferred by maximum entropy from the measure's value alone (Aslam, Yilmaz & "
            "Pavlu 2005; Robertson, Kanoulas & Yilmaz 2010), at each relevance threshold: "
            "the lower, the more the value says about the list. Measures without a "
            f"maximum-entropy expectation are left out. Lists: {selection}. Bars and table: "
            "the mean RMS error over the lists; error bars and `[low, high]`: its "
            f"{rep.basis(d)}."
        ),
        doc.figure(
            fig.informativeness_bars(bars),
            "informativeness",
            "Mean RMS error of the inferred precision-recall curve (lower is better)",
        ),
        doc.table(
            table,
            "informativeness",
            "Mean RMS error by threshold with its interval, and the number of lists it is "
            "averaged over",
            decimals=3,
        ),
    ]


def _swap(rep: _Report, rows: pd.DataFrame) -> list[doc.Block]:
    s = rep.summary
    d = s[(s["kind"] == "swap") & (s["statistic"] == "min_difference")]
    tables = []
    for values in ("mean", "shown"):
        wide = d.assign(shown=intervals_text(d)).pivot_table(
            index=["world", "measure"], columns="x", values=values, aggfunc="first", sort=False
        )
        wide.columns = [f"c = {int(c)}" for c in wide.columns]
        tables.append(rep.sorted_rows(wide.reset_index()))
    return [
        doc.heading("Swap method"),
        doc.text(
            "The smallest difference in mean score for which two topic sets of c topics "
            "order a pair of systems the same way at least 95% of the time (Voorhees & "
            "Buckley 2002): the mean over replicates; the folded table gives it with its "
            f"{rep.basis(d)}."
        ),
        # many sizes: the means at a glance, their intervals folded
        doc.table(tables[0], "swap", "Minimum difference by topic-set size"),
        doc.table(
            tables[1],
            "swap_intervals",
            "Minimum difference by topic-set size, with its interval",
            collapsed=True,
        ),
    ]


def _collection(rep: _Report, rows: pd.DataFrame) -> list[doc.Block]:
    s = rep.summary
    d = s[(s["kind"] == "collection") & (s["statistic"] != "")]
    decimals = {
        stat: 0 if np.allclose(v, np.round(v)) else (1 if np.nanmax(np.abs(v)) >= 10 else 3)
        for stat, v in d.groupby("statistic", sort=False)["mean"]
    }

    counts = d.groupby("world", sort=False)["replicates"].max()
    replicates = "; ".join(
        f"{w}: {n} replicates" if n > 1 else f"{w}: one value" for w, n in counts.items()
    )
    text = d.assign(
        value=[
            with_interval(m, lo, hi, decimals[stat])
            for stat, m, lo, hi in zip(d["statistic"], d["mean"], d["low"], d["high"])
        ]
    )
    wide = text.pivot_table(
        index="statistic", columns="world", values="value", aggfunc="first", sort=False
    )
    wide.columns.name = None
    return [
        doc.heading("The collections"),
        doc.text(
            "What each collection looks like, measured the same way on real and simulated "
            "ones. A collection is described as it is (its topics are not resampled): a real "
            "one by its value, a simulated one by the mean over its replicates with the "
            f"{rep.confidence:.0%} interval of that mean over the replicates, `[low, high]` "
            f"({replicates})."
        ),
        doc.figure(
            fig.collection_panels(d),
            "collection",
            "Each statistic on each collection (dot: the value, or the mean over replicates; "
            "bar: its interval)",
        ),
        doc.table(wide.reset_index(), "collection", "Collection statistics"),
    ]


def _by_statistic(
    rep: _Report, kind: str, statistics: dict[str, str], *, x: str | None = None
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


def _reliability(rep: _Report, rows: pd.DataFrame) -> list[doc.Block]:
    s = _summary_of(rep, "reliability")
    own = _by_statistic(
        rep,
        "reliability",
        {
            "var_system": "var(system)",
            "var_topic": "var(topic)",
            "var_residual": "var(system x topic)",
            "erho2": "E(rho^2)",
            "phi": "Phi",
        },
    )
    at = _by_statistic(rep, "reliability", {"erho2_at": "E(rho^2)", "phi_at": "Phi"}, x="topics")
    needed = _by_statistic(
        rep, "reliability", {"topics_erho2": "for E(rho^2)", "topics_phi": "for Phi"}, x="target"
    )
    blocks = [
        doc.heading("Reliability (generalizability theory)"),
        doc.text(
            "How much of the variation in the scores is due to the systems, the topics and "
            "their interaction (a G-study: variance components from the two-way ANOVA), and "
            "how reliable the ranking of the systems is with this many topics: E(rho^2), the "
            "generalizability coefficient (relative decisions, the ranking), and Phi, the "
            "dependability index (absolute scores); Brennan 2001, Urbano et al. 2013. Values "
            "(means over replicates where a world has several) with their "
            f"{rep.basis(s, plural=True)}."
        ),
        doc.table(own, "reliability", "Variance components and reliability at the world's size"),
    ]
    if len(at):
        blocks.append(doc.table(at, "reliability_at", "Reliability at other numbers of topics"))
    if len(needed):
        blocks.append(doc.table(needed, "reliability_topics", "Topics needed for a target"))
    return blocks


def _topic_set_size(rep: _Report, rows: pd.DataFrame) -> list[doc.Block]:
    s = _summary_of(rep, "topic_set_size")
    variance = _by_statistic(rep, "topic_set_size", {"residual_variance": "V_E"})
    designs = _by_statistic(
        rep,
        "topic_set_size",
        {
            "topics_paired_t": "topics, paired t",
            "power_paired_t": "power now, paired t",
            "topics_anova": "topics, ANOVA",
            "power_anova": "power now, ANOVA",
        },
        x="difference",
    )
    widths = _by_statistic(rep, "topic_set_size", {"topics_ci": "topics"}, x="CI width")
    blocks = [
        doc.heading("Topic-set size"),
        doc.text(
            "How many topics a collection like this one needs (Sakai 2016): for a paired "
            "t-test to detect a difference with the study's power, for a one-way ANOVA over "
            "its systems to detect a gap between the best and the worst, and for a 95% "
            "interval of a paired difference no wider than a width; from the residual "
            "variance V_E of the two-way ANOVA of the scores. 'power now' is the power of the "
            "collection's own number of topics. Values (means over replicates where a world "
            f"has several) with their {rep.basis(s, plural=True)}."
        ),
        doc.table(variance, "topic_set_size_variance", "Residual variance"),
    ]
    if len(designs):
        blocks.append(doc.table(designs, "topic_set_size", "Topics needed, by difference"))
    if len(widths):
        blocks.append(doc.table(widths, "topic_set_size_ci", "Topics needed, by interval width"))
    return blocks


def _error_rates(rep: _Report, rows: pd.DataFrame) -> list[doc.Block]:
    s = _summary_of(rep, "error_rates")
    rates = {
        "type1_rate": "type I",
        "type2_rate": "type II",
        "type3_rate": "type III",
        "power": "power",
    }
    d = s[s["statistic"].isin(rates)]
    if d.empty:
        return []
    shown = pd.concat(
        [g.assign(shown=intervals_text(g, 3)) for _, g in d.groupby("statistic", sort=False)]
    )
    wide = shown.pivot_table(
        index=["world", "measure", "other", "x"],
        columns="statistic",
        values="shown",
        aggfunc="first",
        sort=False,
    )
    wide = wide[[c for c in rates if c in wide.columns]].rename(columns=rates)
    wide.columns.name = None
    table = rep.sorted_rows(wide.reset_index()).rename(columns={"other": "test", "x": "topics"})
    table["topics"] = table["topics"].map(lambda v: f"{v:g}")
    return [
        doc.heading("Error rates of the tests"),
        doc.text(
            "How often each significance test is wrong on collections whose truth is known "
            "(Urbano, Lima & Hanjalic 2019): type I, a null pair (equal true effects) found "
            "significant; type II, a pair that truly differs not found significant; type III, "
            "found significant in the wrong direction; power, found in the right direction. "
            "Rates over the pairs and topic subsets of each replicate; means over replicates, "
            f"with their {rep.basis(s, plural=True)}."
        ),
        doc.table(table, "error_rates", "Error rates by test and number of topics"),
    ]


def _generic(rep: _Report, rows: pd.DataFrame) -> list[doc.Block]:
    """A criterion the report has no section for (a plugin's): its statistics as a table,
    means over trials and replicates, one row per world, level, measure (and other)."""
    kind = str(rows["kind"].iloc[0])
    s = rep.summary[rep.summary["kind"] == kind]
    index = ["world", "degrader", "level", "measure"]
    if (s["other"] != "").any():
        index.append("other")
    if s["x"].notna().any():
        index.append("x")
    # one number format per statistic (a plugin's statistics can be counts, shares...)
    shown = pd.concat(
        [d.assign(shown=intervals_text(d)) for _, d in s.groupby("statistic", sort=False)]
        or [s.assign(shown="")]
    )
    wide = shown.pivot_table(
        index=index, columns="statistic", values="shown", aggfunc="first", sort=False
    )
    wide.columns.name = None
    table = rep.sorted_rows(wide.reset_index())
    if (table["degrader"] == "").all():
        table = table.drop(columns=["degrader", "level"])
    title = kind.replace("_", " ")
    return [
        doc.heading(title[:1].upper() + title[1:]),
        doc.text(
            f"The statistics of the `{kind}` criterion (its documentation says what they "
            "mean): means over trials and replicates, with "
            f"their {rep.basis(s, plural=True)}."
        ),
        doc.table(table, kind, f"{title[:1].upper() + title[1:]}: every statistic"),
    ]


SECTIONS = {
    "robustness": _robustness,
    "discriminative_power": _power,
    "significance_changes": _significance,
    "stability": _stability,
    "agreement": _agreement,
    "informativeness": _informativeness,
    "swap": _swap,
    "collection": _collection,
    "reliability": _reliability,
    "topic_set_size": _topic_set_size,
    "error_rates": _error_rates,
}


def _top_heaviness(analytic: pd.DataFrame | None) -> list[doc.Block]:
    """The curves the analytic top-heaviness checks saved (Sakai & Kando 2008, Fig. 1)."""
    if analytic is None or analytic.empty or "kind" not in analytic:
        return []
    curves = analytic[analytic["kind"] == "curve"]
    if curves.empty:
        return []
    frame = pd.DataFrame(
        {
            "measure": curves["measure"].to_numpy(),
            "n_relevant": curves["n_relevant"].astype(int).to_numpy(),
            "rank": curves["x"].astype(int).to_numpy(),
            "value": curves["value"].to_numpy(),
        }
    ).drop_duplicates(["measure", "n_relevant", "rank"])
    return [
        doc.heading("Top-heaviness"),
        doc.text(
            "The value of each measure when the one relevant document of a list (of R "
            "relevant documents in all) sits at rank 1, 2, ..., 20: how much a measure cares "
            "where in the ranking a relevant document is. Computed on constructed lists by "
            "the analytic claims."
        ),
        doc.figure(
            fig.top_heaviness_curves(frame),
            "top_heaviness",
            "Value against the rank of the single relevant document",
        ),
    ]


def _reproduce(directory: Path, data: dict) -> list[doc.Block]:
    manifest = data["manifest"]
    spec_path = manifest.get("spec_path")
    shown_dir = _shown_path(directory)
    if spec_path:
        spec = _shown_path(Path(spec_path))
        if Path(spec).is_absolute():  # not under the current folder: run it from its own
            folder = Path(spec_path).parent
            shown_dir = str(Path(directory).resolve())
            command = f"cd {folder}\nmetaeval study run {Path(spec_path).name} --out {shown_dir}\n"
        else:
            command = f"metaeval study run {spec} --out {shown_dir}\n"
        run = "# recompute (resumes: only what is missing is computed)\n" + command
        where = f"`{spec}`"
    else:
        run = f"metaeval study run STUDY.toml --out {shown_dir}\n"
        where = "the study file below (its paths are relative to where it was first run)"
    out = [
        doc.heading("Reproduce"),
        doc.text(
            "Every number above comes from the saved results in this folder "
            "(`results/`, one parquet file per task; `metaeval.study.load_results` reads them "
            f"as one table). To recompute them from {where} (the data files it names are "
            "needed), then redraw this report:"
        ),
        doc.code(f"{run}# redraw this report from the saved results\nmetaeval report {shown_dir}"),
    ]
    if data["spec_text"]:
        out += [
            doc.text("The study file as run (`study.toml`):"),
            doc.code(data["spec_text"], "toml"),
        ]
    return out


def _shown_path(path: Path) -> str:
    """A path as the reader types it: relative to the current folder when under it."""
    try:
        rel = os.path.relpath(Path(path).resolve(), Path.cwd())
    except ValueError:  # another drive
        return str(path)
    return str(path) if rel.startswith("..") else rel


def write_report(
    directory: str | Path, formats=FORMATS, out: str | Path | None = None, *, built=None
) -> dict[str, Path]:
    """Write the report of a study's output folder.

    Parameters
    ----------
    directory : str or Path
        The study's output folder.
    formats : iterable of {"md", "html"}
    out : str or Path, optional
        Where to write (default ``<directory>/report``).
    built : tuple, optional
        What :func:`build` returned for ``directory``, when the caller has it already (its
        frames, say): the report is then not built again.

    Returns
    -------
    dict
        Format -> path written.
    """
    formats = tuple(formats)
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        raise ValueError(f"formats must be among {', '.join(FORMATS)}, got {list(formats)}")
    directory = Path(directory)
    folder = Path(out) if out is not None else directory / "report"
    folder.mkdir(parents=True, exist_ok=True)
    title, blocks, frames = built if built is not None else build(directory)
    written = {}
    # a redrawn report replaces the figures and tables of the last one (names may change)
    for sub, suffix in (("figures", ".png"), ("tables", ".csv")):
        if (folder / sub).is_dir():
            for old in (folder / sub).glob(f"*{suffix}"):
                old.unlink()
    (folder / "tables").mkdir(exist_ok=True)
    for name, frame in frames.items():
        frame.to_csv(folder / "tables" / f"{name}.csv", index=False)
    if "md" in formats:
        written["md"] = doc.write_markdown(blocks, folder, title)
    if "html" in formats:
        written["html"] = doc.write_html(blocks, folder / "index.html", title)
    return written


__all__ = ["write_report", "build", "summarise", "FORMATS", "KEYS"]
