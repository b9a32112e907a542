"""What every command shares: argument types, the seed policy, output, and one-line errors."""

from __future__ import annotations

import re
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, NoReturn

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


def fail(message, code: int = 2) -> NoReturn:
    """Print a one-line error and exit with ``code`` (2: bad input), no traceback.

    ``message`` may be an exception: a topic or run selection error then names its option
    (``--topics``, ``--runs``)."""
    if isinstance(message, BaseException):
        message = describe(message)
    typer.echo(f"error: {one_line(message)}", err=True)
    raise typer.Exit(code=code)


#: The option behind each kind of selection.
SELECTION_OPTIONS = {"topic": "--topics", "run": "--runs"}


def prefixed(prefix: str, err: BaseException | str) -> str:
    """``prefix: message``, without saying the prefix twice when the message starts with it."""
    text = str(err)
    bare = prefix.split(" ", 1)[-1]  # "--against 'P@0'" -> "'P@0'"
    if text.startswith((prefix, bare)):
        text = text[len(prefix) if text.startswith(prefix) else len(bare) :].lstrip(": ")
    return f"{prefix}: {text}"


def describe(err: BaseException) -> str:
    """An exception as the one-line text the user sees: a selection error names its option."""
    from metaeval.data.select import SelectionError

    if isinstance(err, SelectionError):
        option = SELECTION_OPTIONS.get(err.what, err.what)
        spec = str(err.spec) if isinstance(err.spec, (str, Path)) else ",".join(map(str, err.spec))
        text = str(err)
        if spec and text.startswith(spec):  # the message names the selection itself
            return f"{option} {text}"
        return f"{option} {spec!r}: {text}"
    return str(err)


# "rates[0] must be ..." / "k must be ..." / "sizes: ..." -> "must be ..."
_PARAM_PREFIX = re.compile(r"^[A-Za-z_][\w.]*(\[\d+\])?(:\s*|\s+(?=must |is |are |has ))")


def option_error(option: str, value, err: BaseException | str, subject: str = "") -> NoReturn:
    """Fail naming ``option`` and its ``value``, without the library's own parameter name
    (``--levels 0: must be in (0, 100]`` rather than ``rates[0] must be in (0, 100], got 0.0``);
    ``subject`` is put before the rest (``--rate 0: sampling rates must be ...``)."""
    text = _PARAM_PREFIX.sub("", str(err), count=1)
    text = re.sub(r", got [^;]*$", "", text)  # the value is shown already
    text = f"{subject} {text}" if subject else text
    fail(f"{option} {value:g}: {text}" if isinstance(value, float) else f"{option} {value}: {text}")


def check_alpha(alpha: float, option: str = "--alpha") -> float:
    """A significance level in (0, 1), or a one-line error naming the option."""
    import math

    if not (math.isfinite(alpha) and 0 < alpha < 1):
        fail(f"{option} {alpha:g}: a significance level must be in (0, 1), e.g. 0.05")
    return alpha


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
    from metaeval.measures.plugins import PluginFileError

    for path in plugins or []:
        try:
            load_plugin(path)
        except PluginFileError as err:  # load_plugin's own words about the file
            fail(str(err))
        except Exception as err:  # raised by the file's code: show what went wrong in it
            fail(f"plugin {path}: {type(err).__name__}: {err}")


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
                index=pivot,
                columns="measure",
                values="value",
                sort=False,
                aggfunc="first",
                dropna=False,  # a run with no score (missing="skip") shows as NaN
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
        blocker = next((p for p in (folder, *folder.parents) if p.exists()), None)
        if blocker is not None and not blocker.is_dir():
            fail(f"{option} {path}: {blocker} is a file, not a folder")
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
    "describe",
    "prefixed",
    "option_error",
    "check_alpha",
    "one_line",
    "resolve_seed",
    "load_plugins",
    "print_frame",
    "writable",
]
