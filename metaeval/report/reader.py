"""Read a study's output folder into what a report draws on, and nothing else.

:func:`read` is the one place a report touches the folder: the manifest, the claims as the
study saved them (``claims.json``), the study as run (its normalised spec, ``spec.json``, and
the study file as written, ``study.toml``), the plan, which units are saved, and the saved
tables a report uses. Everything after it works on the returned :class:`StudyOutput`, so a
report can be drawn from any folder that holds these files, and a test can hand a report a
:class:`StudyOutput` it made.

The spec a report reads is the normalised one (:func:`metaeval.study.spec.spec_as_dict`):
every key present, every default filled in, so no section repeats a default of the study
file. A folder saved without ``spec.json`` (by an older metaeval) has it made from its
``study.toml`` by the study file reader, :func:`read_spec`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from metaeval.study.spec import StudySpec, spec_as_dict, tomllib
from metaeval.study.store import SPEC as SPEC_FILE

#: The saved tables a report draws on: tidy results, their values on the topic resamples,
#: ASL curves, analytic claims.
TABLES = ("results", "resamples", "asl", "claims")


@dataclass
class StudyOutput:
    """A study's output folder as a report sees it.

    Attributes
    ----------
    manifest : dict
        ``manifest.json``: seed, versions, the study file's path.
    spec : dict
        The study's normalised spec (:func:`read_spec`): every key present, every default
        filled in; the spec of a study of nothing (:func:`blank_spec`) when the folder's study
        file is missing or cannot be read.
    spec_text : str
        ``study.toml`` as written, shown in the report's "Reproduce" section.
    tables : dict of str to DataFrame
        The saved tables of :data:`TABLES` that the folder holds.
    planned : DataFrame
        The plan (``plan.parquet``): one row per planned cell, with its ``unit``.
    saved : set of str
        The units the store counts as done.
    claims : list of dict
        The study's claims, checked and with measure names in their one spelling
        (``claims.json``).
    directory : Path or None
        The folder read.
    """

    manifest: dict = field(default_factory=dict)
    spec: dict = field(default_factory=lambda: blank_spec())
    spec_text: str = ""
    tables: dict = field(default_factory=dict)
    planned: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["unit"]))
    saved: set = field(default_factory=set)
    claims: list = field(default_factory=list)
    directory: Path | None = None


def read(directory: str | Path) -> StudyOutput:
    """Everything a report draws on, and the saved tables it uses only (a detail table can
    be large).

    Parameters
    ----------
    directory : str or Path
        A study's output folder.

    Returns
    -------
    StudyOutput
    """
    from metaeval.study.saved import load_results, read_table
    from metaeval.study.store import Store

    directory = Path(directory)
    store = Store(directory)
    manifest = store.read_manifest()
    claims = (
        json.loads((directory / "claims.json").read_text())
        if (directory / "claims.json").is_file()
        else []
    )
    spec_text = _study_text(directory)
    spec = read_spec(directory, manifest, spec_text)
    # the analytic claims are computed by the driver, not by units of work: read as saved
    tables = {
        name: read_table(directory, name) if name == "claims" else load_results(directory, name)
        for name in TABLES
        if (directory / "results" / name).is_dir()
    }
    planned = store.planned()
    if planned is None:
        planned = pd.DataFrame(columns=["unit"])
    return StudyOutput(
        manifest=manifest,
        spec=spec,
        spec_text=spec_text,
        tables=tables,
        planned=planned,
        # which units are done, as the store decides it (build counts the planned ones)
        saved=set(store.done_units()),
        claims=claims,
        directory=directory,
    )


#: The study file as run, in a study's output folder (beside its normalised spec, SPEC_FILE).
STUDY_FILE = "study.toml"


def read_spec(directory: str | Path, manifest: dict, text: str | None = None) -> dict:
    """The normalised spec of a study's output folder: its ``spec.json``, or, in a folder saved
    without one, its ``study.toml`` read by the study file reader
    (:func:`metaeval.study.load_spec`, its relative paths from where the study was run) and
    normalised as a run saves it (:func:`metaeval.study.spec.spec_as_dict`).

    Parameters
    ----------
    directory : str or Path
        A study's output folder.
    manifest : dict
        Its manifest (where the study file was read, ``spec_path``, anchors its paths).
    text : str, optional
        Its ``study.toml``, if already read.

    Returns
    -------
    dict
        Every key present; :func:`blank_spec` when ``spec.json`` is missing or damaged and
        ``study.toml`` is missing, is not TOML, or cannot be read as a study file (a warning
        then says why: the data files it names may be gone).
    """
    directory = Path(directory)
    try:
        spec = json.loads((directory / SPEC_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none saved (an older metaeval), or damaged: made again
        spec = None
    if isinstance(spec, dict):
        return spec
    text = _study_text(directory) if text is None else text
    blank = blank_spec(manifest)
    if not text:
        return blank
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:  # not TOML: the report is drawn without it, as it always was
        return blank
    from metaeval._warnings import warn
    from metaeval.study.spec import SpecError, load_spec

    # the study file's relative paths are relative to where it was run, not to this copy
    where = manifest.get("spec_path")
    anchor = Path(where) if where else directory / STUDY_FILE
    try:
        return spec_as_dict(load_spec(anchor, text=text))
    except (SpecError, OSError) as err:
        warn(
            f"{directory / STUDY_FILE} cannot be read as a study file ({err}); the report is "
            "drawn without its worlds, degraders and settings: make the files it names "
            "available and draw it again"
        )
        return blank


def blank_spec(manifest: dict | None = None) -> dict:
    """The normalised spec of a study of nothing (no worlds, degraders, measures or criteria,
    every setting at its default), named and seeded as the manifest says."""
    manifest = manifest or {}
    return spec_as_dict(
        StudySpec(
            name=str(manifest.get("study") or ""),
            seed=int(manifest.get("seed") or 0),
            worlds=(),
            degraders=(),
            measures=(),
            criteria=(),
        )
    )


def _study_text(directory: Path) -> str:
    """The folder's study file as written (empty when there is none)."""
    path = Path(directory) / STUDY_FILE
    return path.read_text() if path.is_file() else ""


__all__ = ["StudyOutput", "read", "read_spec", "blank_spec", "TABLES", "SPEC_FILE"]
