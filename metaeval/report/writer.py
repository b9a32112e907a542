"""Assemble and write a report: :func:`build` turns a study's output folder into blocks
(:mod:`metaeval.report.document`) and the frames behind them, :func:`write_report` writes
them as ``index.md`` with PNG figures, a self-contained ``index.html`` and ``tables/*.csv``.

The order of a report: the description, a banner when the study is incomplete, provenance,
what the intervals are, the claims, one section per criterion kind (the registry's order,
:mod:`metaeval.report.sections`), top-heaviness, and how to reproduce it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from metaeval.report import document as doc
from metaeval.report.claims import judge_claims
from metaeval.report.model import Report
from metaeval.report.reader import read
from metaeval.report.sections import registered_sections, section_for
from metaeval.report.sections.claims import claim_verdicts
from metaeval.report.sections.study import intervals_note, provenance, reproduce, top_heaviness

FORMATS = ("md", "html")


def build(directory: str | Path) -> tuple[str, list[doc.Block], dict]:
    """The report's title, blocks and the summary frames (from saved results only)."""
    directory = Path(directory)
    if not (directory / "manifest.json").is_file():
        raise FileNotFoundError(f"{directory} is not a study output folder (no manifest.json)")
    data = read(directory)
    manifest, spec = data.manifest, data.spec
    rep = Report(data)
    name = manifest.get("study", directory.name)
    title = f"Study {name}"
    blocks: list[doc.Block] = []
    description = spec["description"]
    if description:
        blocks.append(doc.text(" ".join(description.split())))
    planned_units = set(data.planned["unit"]) if "unit" in data.planned else set()
    saved = data.saved
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
    blocks.append(doc.text(provenance(manifest, spec, done)))
    if len(rep.summary):
        blocks.append(doc.text(intervals_note(rep)))
    frames = {"summary": rep.summary}
    analytic = data.tables.get("claims")
    verdicts, parts = judge_claims(
        data.claims,
        rep.results,
        rep.resamples,
        _checks_only(analytic),
        confidence=rep.confidence,
        seed=rep.seed,
    )
    if len(verdicts):
        frames["claims"] = verdicts
        frames["claim_parts"] = parts
        blocks += claim_verdicts(verdicts, parts, rep.confidence)
    kinds = list(dict.fromkeys(rep.results["kind"])) if len(rep.results) else []
    # the registered sections in their order, then the kinds without one (a plugin's that
    # registers none), as they come in the results
    registered = registered_sections()
    for kind in [*registered, *(k for k in kinds if k not in registered)]:
        rows = rep.results[rep.results["kind"] == kind] if len(rep.results) else rep.results
        if len(rows):
            blocks += section_for(kind)(rep, rows)
    blocks += top_heaviness(analytic)
    blocks += reproduce(directory, data)
    return title, blocks, frames


def _checks_only(analytic: pd.DataFrame | None) -> pd.DataFrame | None:
    """The analytic claims' checks, without the curves some of them save for figures."""
    if analytic is None or analytic.empty or "kind" not in analytic:
        return analytic
    return analytic[analytic["kind"].fillna("check") != "curve"]


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


__all__ = ["build", "write_report", "FORMATS"]
