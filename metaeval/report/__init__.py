"""Reports of studies, drawn only from what a study saved.

:func:`write_report` reads a study's output folder (its ``results/``, ``plan.parquet``,
``manifest.json`` and ``study.toml``) and writes ``report/index.md`` with PNG figures,
``report/index.html`` (one self-contained file) and ``report/tables/*.csv``. It never imports
:mod:`simulators` and never computes a criterion: every number in a report can be found in the
saved results, and a report can be redrawn anywhere.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import tomllib

from metaeval._summary import interval_summary
from metaeval.report import document as doc
from metaeval.report import figures as fig

FORMATS = ("md", "html")
KEYS = ["world", "degrader", "level", "kind", "criterion", "measure", "other", "statistic", "x"]


def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Mean, 2.5 / 97.5 percentiles and count of every statistic over trials and replicates."""
    if results.empty:
        return pd.DataFrame(columns=[*KEYS, "mean", "p025", "p975", "n"])
    return interval_summary(results, [k for k in KEYS if k in results.columns])


def _level_order(levels) -> list:
    """``full`` first, then numeric levels from the highest, then the rest as they come."""
    levels = list(dict.fromkeys(levels))
    numeric = {lv: pd.to_numeric(lv, errors="coerce") for lv in levels}
    nums = sorted((lv for lv in levels if not np.isnan(numeric[lv])), key=lambda v: -numeric[v])
    rest = [lv for lv in levels if lv != "full" and np.isnan(numeric[lv])]
    return (["full"] if "full" in levels else []) + nums + rest


def _pivot(
    summary: pd.DataFrame, statistic: str, *, other: str | None = None, value: str = "mean"
) -> pd.DataFrame:
    """Measures as rows, levels as columns, for one statistic (one table per world and
    degrader are concatenated with those two as leading columns)."""
    d = summary[summary["statistic"] == statistic]
    if other is not None:
        d = d[d["other"] == other]
    if d.empty:
        return d
    # the full-judgment rows join the row of every degrader of their world (their "full"
    # column), or stand alone when the world has no degrader
    full, damaged = d[d["degrader"] == ""], d[d["degrader"] != ""]
    parts = [damaged]
    for world, rows in full.groupby("world", sort=False):
        degraders = damaged.loc[damaged["world"] == world, "degrader"].unique()
        parts += [rows.assign(degrader=g) for g in degraders] or [
            rows.assign(degrader="full judgments")
        ]
    d = pd.concat(parts, ignore_index=True)
    wide = d.pivot_table(
        index=["world", "degrader", "measure"],
        columns="level",
        values=value,
        sort=False,
        aggfunc="first",
    )
    wide = wide[[c for c in _level_order(wide.columns) if c in wide.columns]]
    wide.columns.name = None
    return wide.reset_index()


def _read(directory: Path) -> dict:
    from metaeval.study.store import load_results, read_table

    manifest = json.loads((directory / "manifest.json").read_text())
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
    tables = {}
    folder = directory / "results"
    for sub in sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []:
        tables[sub] = (
            read_table(directory, sub) if sub == "claims" else load_results(directory, sub)
        )
    planned = (
        pd.read_parquet(directory / "plan.parquet")
        if (directory / "plan.parquet").is_file()
        else pd.DataFrame(columns=["unit"])
    )
    return {
        "manifest": manifest,
        "spec_text": spec_text,
        "spec": spec,
        "tables": tables,
        "planned": planned,
        "claims": claims,
    }


def build(directory: str | Path) -> tuple[str, list[doc.Block], dict]:
    """The report's title, blocks and the summary frames (from saved results only)."""
    directory = Path(directory)
    if not (directory / "manifest.json").is_file():
        raise FileNotFoundError(f"{directory} is not a study output folder (no manifest.json)")
    data = _read(directory)
    manifest, spec = data["manifest"], data["spec"]
    results = data["tables"].get("results", pd.DataFrame())
    units = data["tables"].get("units", pd.DataFrame(columns=["unit"]))
    name = manifest.get("study", directory.name)
    title = f"Study {name}"
    blocks: list[doc.Block] = []
    description = spec.get("study", {}).get("description", "")
    if description:
        blocks.append(doc.text(" ".join(description.split())))
    done = len(set(units["unit"])) if "unit" in units else 0
    planned = len(data["planned"])
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
    versions = manifest.get("versions", {})
    blocks.append(
        doc.text(
            f"Seed {manifest.get('seed')}; metaeval {versions.get('metaeval')}, numpy "
            f"{versions.get('numpy')}, scipy {versions.get('scipy')}, python "
            f"{versions.get('python')}; {done} units saved."
        )
    )
    summary = summarise(results)
    frames = {"summary": summary}
    claims = data["tables"].get("claims")
    from metaeval.report import claims as claim_checks

    verdicts = claim_checks.verdicts(data["claims"], results, claims)
    if len(verdicts):
        frames["claims"] = verdicts
        blocks += [
            doc.heading("Claims"),
            doc.text(
                "Each claim is checked on every world: **holds** when the claimed "
                "direction is seen and the 95% interval over trials and replicates "
                "excludes the opposite, **does not hold** when the opposite is seen "
                "with the same confidence, **inconclusive** otherwise."
            ),
            doc.table(verdicts, "claims", "Verdicts"),
        ]
    # degraders whose levels are percentages of the judgments kept
    percent = [
        d.get("id", d.get("method"))
        for d in spec.get("degraders", [])
        if d.get("method") in ("stratified", "uniform")
    ]
    for kind, section in SECTIONS.items():
        rows = results[results["kind"] == kind] if len(results) else results
        if len(rows):
            blocks += section(rows, summary[summary["kind"] == kind], data["tables"], percent)
    blocks += _reproduce(directory, data)
    return title, blocks, frames


# ------------------------------------------------------------------------------ sections
def _robustness(rows, summary, tables, percent):
    out = [
        doc.heading("Robustness to damaged judgments"),
        doc.text(
            "Kendall's tau_b between each measure's ranking of the systems under "
            "damaged judgments and its ranking under the full judgments (1 = the same "
            "ranking). Lines are means over trials and replicates, bands the 2.5-97.5 "
            "percentile range; a condensed-list variant is dashed in its base measure's "
            "colour."
        ),
    ]
    for against in ("full", "truth", "effect"):
        for stat in ("tau_b", "tau_ap", "tau_a"):
            if ((rows["other"] == against) & (rows["statistic"] == stat)).any():
                out.append(
                    doc.figure(
                        fig.robustness_curves(
                            rows, statistic=stat, against=against, percent=percent
                        ),
                        f"robustness_{stat}_{against}",
                        f"{stat} with the {against} ranking",
                    )
                )
                out.append(
                    doc.table(
                        _pivot(summary, stat, other=against),
                        f"robustness_{stat}_{against}",
                        f"Mean {stat} with the {against} ranking, by level",
                    )
                )
    if (rows["statistic"] == "mean_drift").any():
        out += [
            doc.figure(
                fig.drift_curves(rows, percent=percent),
                "mean_drift",
                "Mean drift: reduced minus full value, averaged over systems",
            ),
            doc.table(_pivot(summary, "mean_drift"), "mean_drift", "Mean drift by level"),
        ]
    return out


def _power(rows, summary, tables, percent):
    out = [
        doc.heading("Discriminative power"),
        doc.text(
            "The share of system pairs whose difference is significant (achieved "
            "significance level below alpha), with the same resamples at every level."
        ),
    ]
    out.append(
        doc.figure(
            fig.power_curves(rows, percent=percent), "power", "Discriminative power by level"
        )
    )
    out.append(doc.table(_pivot(summary, "power"), "power", "Discriminative power by level"))
    dr = _pivot(summary, "diff_required")
    if len(dr):
        out.append(doc.table(dr, "diff_required", "Estimated difference required"))
    asl = tables.get("asl")
    if asl is not None and len(asl):
        lowest = [lv for lv in _level_order(asl["level"]) if lv != "full"][-1:]
        shown = asl[asl["level"].isin(["full", *lowest])]
        out.append(
            doc.figure(
                fig.asl_curves(shown),
                "asl_curves",
                "ASL curves: the lower, the more discriminative",
            )
        )
    return out


def _significance(rows, summary, tables, percent):
    tab = summary[
        summary["statistic"].isin(["n_significant", "false_alarms", "reversals", "misses"])
    ]
    wide = tab.pivot_table(
        index=["world", "degrader", "level", "measure"],
        columns="statistic",
        values="mean",
        sort=False,
    ).reset_index()
    return [
        doc.heading("Significance changes"),
        doc.text(
            "Pairs significant under damaged judgments but not under the full ones "
            "(false alarms), significant the other way (reversals), and pairs "
            "significant under full judgments that are lost (misses); means over "
            "trials."
        ),
        doc.figure(
            fig.significance_bars(_lowest_level(rows)),
            "significance_changes",
            "At the most damaged level of each degrader",
        ),
        doc.table(wide, "significance_changes", "Significance changes, mean over trials"),
    ]


def _lowest_level(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows at the most damaged level of each world and degrader (the last in level
    order)."""
    keep = []
    for _, d in rows.groupby(["world", "degrader"], sort=False):
        keep.append(d[d["level"] == _level_order(d["level"])[-1]])
    return pd.concat(keep) if keep else rows


def _stability(rows, summary, tables, percent):
    out = [
        doc.heading("Topic-subset stability"),
        doc.text(
            "Kendall's tau_b between the ranking on random subsets of n topics and on "
            "all topics, by n (mean over repeats, band: 2.5-97.5 percentiles)."
        ),
    ]
    for stat in ("tau_subset", "tau_split"):
        if (rows["statistic"] == stat).any():
            out.append(doc.figure(fig.stability_curves(rows, statistic=stat), f"stability_{stat}"))
    d = summary[summary["statistic"].isin(["tau_subset", "tau_split"])]
    wide = d.pivot_table(
        index=["world", "measure", "statistic"], columns="x", values="mean", sort=False
    )
    wide.columns = [f"n={int(c)}" for c in wide.columns]
    out.append(doc.table(wide.reset_index(), "stability", "Mean tau_b by topic-set size"))
    return out


def _agreement(rows, summary, tables, percent):
    out = [doc.heading("Agreement between measures")]
    for stat in ("tau_b", "tau_ap"):
        d = rows[rows["statistic"] == stat]
        if len(d):
            out.append(
                doc.figure(
                    fig.agreement_heatmap(d, statistic=stat),
                    f"agreement_{stat}",
                    f"{stat} between the measures' rankings",
                )
            )
            mat = d.groupby(["world", "measure", "other"], sort=False)["value"].mean()
            out.append(
                doc.table(
                    mat.unstack().reset_index(),
                    f"agreement_{stat}",
                    f"{stat} (rows: the reference ranking)",
                )
            )
    return out


def _informativeness(rows, summary, tables, percent):
    d = summary[summary["statistic"] == "rms"]
    wide = d.pivot_table(index=["world", "measure"], columns="x", values="mean", sort=False)
    wide.columns = [f"grade >= {c:g}" for c in wide.columns]
    bars = d.rename(columns={"x": "threshold", "mean": "rms"})
    return [
        doc.heading("Informativeness"),
        doc.text(
            "RMS error between each list's actual precision-recall curve and the one "
            "inferred by maximum entropy from the measure's value alone (lower = more "
            "informative)."
        ),
        doc.figure(fig.informativeness_bars(bars), "informativeness"),
        doc.table(wide.reset_index(), "informativeness", "Mean RMS error by threshold"),
    ]


def _swap(rows, summary, tables, percent):
    d = summary[summary["statistic"] == "min_difference"]
    wide = d.pivot_table(index=["world", "measure"], columns="x", values="mean", sort=False)
    wide.columns = [f"c={int(c)}" for c in wide.columns]
    return [
        doc.heading("Swap method"),
        doc.text(
            "The smallest difference in mean score for which two topic sets of c "
            "topics order a pair of systems the same way at least 95% of the time."
        ),
        doc.table(wide.reset_index(), "swap", "Minimum difference by topic-set size"),
    ]


def _collection(rows, summary, tables, percent):
    d = summary[summary["statistic"] != ""]
    shown = d.assign(
        value=[
            f"{m:.3g}" if lo == hi else f"{m:.3g} ({lo:.3g}-{hi:.3g})"
            for m, lo, hi in zip(d["mean"], d["p025"], d["p975"])
        ]
    )
    wide = shown.pivot_table(
        index="statistic", columns="world", values="value", aggfunc="first", sort=False
    )
    wide.columns.name = None
    return [
        doc.heading("The collections"),
        doc.text(
            "What each collection looks like, measured the same way on real and "
            "simulated ones (simulated: mean over replicates, with the 2.5-97.5 "
            "percentile range)."
        ),
        doc.table(wide.reset_index(), "collection", "Collection statistics"),
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
}


def _reproduce(directory: Path, data: dict) -> list[doc.Block]:
    out = [
        doc.heading("Reproduce"),
        doc.text(
            "Every number above comes from the saved results in this folder. To "
            "recompute them (the data files named in the study are needed), then "
            "redraw this report:"
        ),
        doc.code(
            f"metaeval study run study.toml --out {directory}\nmetaeval report {directory}", "bash"
        ),
    ]
    if data["spec_text"]:
        out += [
            doc.text("The study file as run (`study.toml`):"),
            doc.code(data["spec_text"], "toml"),
        ]
    return out


def write_report(
    directory: str | Path, formats=FORMATS, out: str | Path | None = None
) -> dict[str, Path]:
    """Write the report of a study's output folder.

    Parameters
    ----------
    directory : str or Path
        The study's output folder.
    formats : iterable of {"md", "html"}
    out : str or Path, optional
        Where to write (default ``<directory>/report``).

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
    title, blocks, frames = build(directory)
    written = {}
    (folder / "tables").mkdir(exist_ok=True)
    for name, frame in frames.items():
        frame.to_csv(folder / "tables" / f"{name}.csv", index=False)
    if "md" in formats:
        written["md"] = doc.write_markdown(blocks, folder, title)
    if "html" in formats:
        written["html"] = doc.write_html(blocks, folder / "index.html", title)
    return written


__all__ = ["write_report", "build", "summarise", "FORMATS"]
