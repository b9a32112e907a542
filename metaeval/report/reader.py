"""Read a study's output folder into what a report draws on, and nothing else.

:func:`read` is the one place a report touches the folder: the manifest, the claims as the
study saved them (``claims.json``), the study file as run (``study.toml``), the plan, which
units are saved, and the saved tables a report uses. Everything after it works on the
returned :class:`StudyOutput`, so a report can be drawn from any folder that holds these
files, and a test can hand a report a :class:`StudyOutput` it made.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as a package
    import tomli as tomllib

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
        ``study.toml`` as parsed TOML (empty when it is missing or does not parse).
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
    spec: dict = field(default_factory=dict)
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


__all__ = ["StudyOutput", "read", "TABLES"]
