"""The sections of every report, whatever its criteria: the provenance line, what the
intervals are, the top-heaviness curves of the analytic claims, and how to reproduce the report."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pandas as pd

from metaeval.report import document as doc
from metaeval.report import figures as fig
from metaeval.report.model import Report
from metaeval.report.reader import StudyOutput


def provenance(manifest: dict, spec: dict, done: int) -> str:
    """One line on where the numbers come from: worlds, degraders, seed, versions, units saved.

    ``spec`` is the normalised spec (:func:`metaeval.report.reader.read_spec`); files are named
    as the study file wrote them (its ``as_written``)."""
    versions = manifest.get("versions", {})
    worlds = []
    for w in spec["worlds"]:
        written = w["as_written"]
        if w["kind"] == "simulator":
            params = written["params"]  # a table, or the parameter file it was read from
            fitted = f", parameters from {params}" if isinstance(params, str) else ""
            worlds.append(
                f"`{w['id']}` (simulated: {w['preset']}{fitted}, {w['n_topics']} topics, "
                f"{w['n_systems']} systems, {w['replicates']} replicate(s))"
            )
        elif w["kind"] == "scores":
            files = written["scores"]  # a path or glob, or a list of them
            files = ", ".join(
                Path(str(f)).name for f in ([files] if isinstance(files, str) else files)
            )
            design = (
                f"{w['pairs']} pairs per replicate"
                + (f" differing by {w['delta']}" if w["delta"] else " (null)")
                if w["design"] == "pairs"
                else f"{w['copula']} copula over the runs"
            )
            worlds.append(
                f"`{w['id']}` (score-level: {world_measures(w)} scores of {files}; {design}; "
                f"{w['n_topics']} topics, {w['replicates']} replicate(s))"
            )
        else:
            worlds.append(_trec_world(w, manifest.get("worlds", {}).get(w["id"])))
    degraders = [
        f"`{d['id']}` ({d['method']}: levels {', '.join(str(lv) for lv in d['levels'])}; "
        f"{d['trials']} trial(s))"
        for d in spec["degraders"]
    ]
    out = f"Worlds: {'; '.join(worlds) or '-'}."
    if degraders:
        out += f" Damaged judgments: {'; '.join(degraders)}."
    return (
        out + f" Seed {manifest.get('seed')}; metaeval {versions.get('metaeval')}, numpy "
        f"{versions.get('numpy')}, scipy {versions.get('scipy')}, python "
        f"{versions.get('python')}; {done} units saved."
    )


def _trec_world(w: dict, facts: dict | None) -> str:
    """A TREC world as the reader needs it to know what was measured: its files, topics and
    runs (counted when the study ran), its topic selection, and which grades count as
    relevant."""
    written = w["as_written"]
    parts = [f"TREC files: {Path(str(written['qrels'])).name}"]
    topics = written["topics"]  # as the study file selects them: a range, a list, a file
    if isinstance(topics, list):
        topics = f"{len(topics)} listed" if len(topics) > 3 else ", ".join(map(str, topics))
    elif isinstance(topics, str) and len(topics) > 30:  # a long selection: the reader has it
        topics = f"selected: {topics[:24]}..."  # in the study file below
    if facts:
        parts.append(
            f"{facts['topics']} topics"
            + (f" ({topics})" if topics else "")
            + f", {facts['runs']} runs"
        )
    elif topics:
        parts.append(f"topics {topics}")
    if w["best_runs"]:
        best = w["best_runs"]
        parts.append(f"the {best['n']} best runs by {best['by']}")
    if w["depth"]:
        parts.append(f"top {w['depth']} documents")
    low, high = (facts or {}).get("grades", (None, None))
    judged = f"judged {low}-{high}; " if high is not None else ""
    if w["top_grades"]:
        relevant = (
            f"{judged}its top {w['top_grades']} grade(s) kept as 1..{w['top_grades']}, the rest 0"
        )
    else:
        relevant = f"{judged}grade >= {w['rel']} relevant"
    return f"`{w['id']}` ({'; '.join(parts + [relevant])})"


def intervals_note(rep: Report) -> str:
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


def top_heaviness(analytic: pd.DataFrame | None) -> list[doc.Block]:
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


def reproduce(directory: Path, data: StudyOutput) -> list[doc.Block]:
    """How to recompute the results and redraw the report, and the study file as run."""
    manifest = data.manifest
    spec_path = manifest.get("spec_path")
    shown_dir = shown_path(directory)
    # the worlds replaced on the command line (their paths are absolute)
    options = "".join(f" {shlex.quote(a)}" for a in manifest.get("world_args", []))
    if spec_path:
        spec = shown_path(Path(spec_path))
        if Path(spec).is_absolute():  # not under the current folder: run it from its own
            folder = Path(spec_path).parent
            shown_dir = str(Path(directory).resolve())
            command = (
                f"cd {folder}\nmetaeval study run {Path(spec_path).name}{options} "
                f"--out {shown_dir}\n"
            )
        else:
            command = f"metaeval study run {spec}{options} --out {shown_dir}\n"
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
    if data.spec_text:
        out += [
            doc.text("The study file as run (`study.toml`):"),
            doc.code(data.spec_text, "toml"),
        ]
    return out


def shown_path(path: Path) -> str:
    """A path as the reader types it: relative to the current folder when under it."""
    try:
        rel = os.path.relpath(Path(path).resolve(), Path.cwd())
    except ValueError:  # another drive
        return str(path)
    return str(path) if rel.startswith("..") else rel


def world_measures(world: dict) -> str:
    """A score-level world's measure, or its measures joined."""
    m = world["measure"]
    return m if isinstance(m, str) else ", ".join(m)
