"""What every command shares: argument types, the seed policy, output, and one-line errors."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer


class Format(str, Enum):
    table = "table"
    tsv = "tsv"
    csv = "csv"
    json = "json"


# ---------------------------------------------------------------------------- arguments
QrelsArgument = Annotated[
    Path,
    typer.Argument(
        help="TREC qrels file (plain, gzip, bz2 or xz; a pipe works too).",
        exists=True,
        dir_okay=False,
    ),
]
RunsArgument = Annotated[
    list[Path],
    typer.Argument(help="TREC run files (plain, gzip, bz2 or xz).", exists=True, dir_okay=False),
]
MeasuresOption = Annotated[
    list[str],
    typer.Option(
        "-m", "--measure", help="Measure, e.g. AP, nDCG@10, 'P(rel=2)@10', AP' (repeatable)."
    ),
]
PluginOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--plugin",
        help="Python file that registers measures (repeatable).",
        exists=True,
        dir_okay=False,
    ),
]
SeedOption = Annotated[
    int | None,
    typer.Option(
        "--seed",
        min=0,
        help="Random seed. Omitted: a fresh seed, printed so that the run can be repeated.",
    ),
]
TopicsOption = Annotated[
    str | None,
    typer.Option("--topics", help="Only these topics: '601-650', '601-610,612', or a file of ids."),
]
RunNamesOption = Annotated[
    str | None,
    typer.Option("--runs", help="Only these runs (by name): 'bm25,neural' or a file of names."),
]
FormatOption = Annotated[Format, typer.Option("--format", help="Output format.")]


# ---------------------------------------------------------------------------- helpers
class Interrupted(Exception):
    """A command stopped by Ctrl-C or SIGTERM after saving its work: one line, status 130."""


def fail(message: str, code: int = 2) -> None:
    """Print a one-line error and exit with ``code`` (2: bad input), no traceback."""
    typer.echo(f"error: {one_line(message)}", err=True)
    raise typer.Exit(code=code)


def one_line(message) -> str:
    """A message on one line (a multi-line message is joined with ' | ')."""
    return " | ".join(part.strip() for part in str(message).splitlines() if part.strip())


def resolve_seed(seed: int | None) -> int:
    """The seed to use: the one given, or a fresh one, printed so the run can be repeated."""
    if seed is None:
        from metaeval._validation import fresh_seed

        seed = fresh_seed()
        typer.echo(f"seed: {seed} (pass --seed {seed} to repeat)", err=True)
    return seed


def load_plugins(plugins: list[Path] | None) -> None:
    from metaeval.measures import load_plugin

    for path in plugins or []:
        try:
            load_plugin(path)
        except Exception as err:  # a user's file: show what went wrong in it
            fail(f"plugin {path}: {type(err).__name__}: {err}")


def load_collection(
    qrels: Path,
    runs: list[Path],
    measures: list[str],
    *,
    topics=None,
    run_names=None,
    depth: int | None = None,
):
    """The tensor of ``runs`` against ``qrels`` (with selections) and the parsed measures."""
    from metaeval.data import read_qrels, read_runs
    from metaeval.engine import EvalTensor
    from metaeval.evaluation import as_measures, select

    try:
        parsed = as_measures(measures)
        runset, judged, excluded = select(
            read_runs(runs), read_qrels(qrels), topics=topics, run_names=run_names
        )
        tensor = EvalTensor.build(runset, judged, depth=depth, excluded_topics=excluded)
    except (ValueError, TypeError, OSError) as err:
        fail(str(err))
    return tensor, parsed


def print_frame(
    frame: pd.DataFrame, fmt: Format, *, pivot: list[str] | None = None, digits: int = 4
) -> None:
    """Print a tidy table: a readable pivot for ``table``, the tidy rows otherwise."""
    if fmt is Format.json:
        typer.echo(frame.to_json(orient="records", indent=1))
    elif fmt in (Format.tsv, Format.csv):
        frame.to_csv(
            sys.stdout,
            sep="\t" if fmt is Format.tsv else ",",
            index=False,
            float_format=f"%.{max(digits, 6)}g",
        )
    else:
        shown = frame
        if pivot:
            shown = frame.pivot_table(
                index=pivot, columns="measure", values="value", sort=False, aggfunc="first"
            )
            shown.columns.name = None
        typer.echo(shown.to_string(float_format=lambda v: f"{v:.{digits}f}"))


def writable(path: Path, option: str, *, folder: bool = False) -> Path:
    """Fail with one line when ``path`` cannot be written: a file whose folder cannot be
    created or is read-only, or (``folder=True``) a folder that cannot be created."""
    folder = path if folder or path.is_dir() else path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        fail(f"{option} {path}: cannot create {folder}: {err.strerror}")
    import os

    if not os.access(folder, os.W_OK):
        fail(f"{option} {path}: {folder} is not writable")
    return path


__all__ = [
    "Interrupted",
    "Format",
    "QrelsArgument",
    "RunsArgument",
    "MeasuresOption",
    "PluginOption",
    "SeedOption",
    "TopicsOption",
    "RunNamesOption",
    "FormatOption",
    "fail",
    "one_line",
    "resolve_seed",
    "load_plugins",
    "load_collection",
    "print_frame",
    "writable",
]
