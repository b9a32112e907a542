"""Point a study's worlds at other data without editing the study file.

A paper study names its collections once, as worlds, and its criteria and claims refer to them
by id. To run the same study on another collection, a world's data is replaced and, if asked,
its id renamed everywhere it is used, giving the study file a user would have written by hand:

    metaeval study run studies/sakai-kando-2008.toml \\
        --world "dl2019=robust03/qrels.txt,robust03/runs/*,topics=601-650,as=robust2003"

or, for several worlds or any kind of world, a worlds file (``--worlds FILE``)::

    [[worlds]]
    replaces = "dl2019"          # the study's world
    id = "robust2003"            # optional: its name in the results and the report
    qrels = "robust03/qrels.txt" # paths relative to this file
    runs = "robust03/runs/*"
    topics = "601-650"

What a TREC world says about the study's design (``top_grades``, ``depth``, ``ties``,
``best_runs``) is kept; what it says about its collection (``qrels``, ``runs``, ``topics``,
``run_names`` and the relevance level ``rel``) comes from the replacement only. The result is a
study file (TOML text) with every path absolute, read by :func:`metaeval.study.load_spec` as
any other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from metaeval._validation import whole_as_int
from metaeval.study.spec.table import SpecError

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as a package
    import tomli as tomllib

#: What a replaced TREC world keeps: the study's design, not facts of its collection.
KEPT = ("top_grades", "depth", "ties", "best_runs")
#: The keys ``--world ID=QRELS,RUNS,key=value`` takes after the files.
OPTION_KEYS = ("as", "runs", "topics", "run_names", "rel", "top_grades", "depth", "ties")
_INTEGER_KEYS = ("rel", "top_grades", "depth")
#: Keys of a world table that name files (made absolute against where they were written).
_KEY_RE = re.compile(r"[a-z_]+")
_PATH_KEYS = ("qrels", "runs", "scores", "params", "topics", "run_names")


@dataclass(frozen=True)
class WorldChange:
    """One replaced world.

    Attributes
    ----------
    replaces : str
        The id of the study's world.
    table : dict
        The new ``[[worlds]]`` table, its paths absolute (``id`` is the replaced one unless
        renamed; an empty value of a kept key removes it).
    args : tuple of str
        The command-line arguments that give it, paths absolute (for the report's
        reproduce command): ``("--world", "ID=...")`` or ``("--worlds", FILE)``.
    """

    replaces: str
    table: dict
    args: tuple[str, ...]

    @property
    def label(self) -> str:
        return " ".join(self.args)


def parse_world_option(text: str, base: Path | None = None) -> WorldChange:
    """``ID=QRELS,RUNS[,RUNS...][,key=value...]`` (the ``--world`` option).

    Files are relative to ``base`` (the current folder). Keys: ``as`` (a new id), ``runs``
    (more run files), ``topics``, ``run_names``, ``rel``, ``top_grades``, ``depth``, ``ties``; a
    comma-separated value (``topics=601-610,612``) goes on until the next ``key=``, and an
    empty value (``top_grades=``) drops a setting the study's world had.

    Raises
    ------
    SpecError
        One line naming the option and what is wrong.
    """
    base = Path.cwd() if base is None else base
    label = f"--world {text}"
    wid, eq, rest = text.partition("=")
    wid = wid.strip()
    if not eq or not wid:
        raise SpecError(f"{label}: expected ID=QRELS,RUNS[,key=value...]")
    files: list[str] = []
    options: dict[str, str] = {}
    key = None
    for token in (t.strip() for t in rest.split(",")):
        name, eq, value = token.partition("=")
        if eq and _KEY_RE.fullmatch(name):
            if name not in OPTION_KEYS:
                raise SpecError(f"{label}: unknown key {name!r}; keys: {', '.join(OPTION_KEYS)}")
            key = name
            if key in options and key != "runs":
                raise SpecError(f"{label}: {key} is given twice")
            options[key] = f"{options[key]}\0{value}" if key in options else value
        elif key is None:
            if token:
                files.append(token)
        else:  # a value with commas: topics=601-610,612
            options[key] += "," + token
    if len(files) < 2 and not (files and "runs" in options):
        raise SpecError(f"{label}: expected ID=QRELS,RUNS[,key=value...] (qrels and runs)")
    runs = files[1:] + [r for r in options.pop("runs", "").split("\0") if r]
    table: dict[str, Any] = {"id": options.pop("as", wid) or wid, "kind": "trec"}
    table["qrels"], table["runs"] = files[0], runs
    for k, v in options.items():
        if k == "rel" and v:
            # a relevance level is a number (real-valued grades: rel=0.5); whole ones are ints
            try:
                number = float(v)
            except ValueError:
                raise SpecError(f"{label}: rel must be a number, got {v!r}") from None
            table[k] = whole_as_int(number)
        elif k in _INTEGER_KEYS and v:
            try:
                table[k] = int(v)
            except ValueError:
                raise SpecError(f"{label}: {k} must be an integer, got {v!r}") from None
        else:
            table[k] = v
    table = _absolute_paths(table, base)
    shown = ",".join(
        [table["qrels"], *table["runs"]]
        + [f"{k}={table[k]}" for k in ("topics", "run_names", *_INTEGER_KEYS, "ties") if k in table]
        + ([f"as={table['id']}"] if table["id"] != wid else [])
    )
    return WorldChange(wid, table, ("--world", f"{wid}={shown}"))


def read_worlds_file(path: str | Path) -> list[WorldChange]:
    """The ``[[worlds]]`` tables of a worlds file (``--worlds FILE``), each with ``replaces``
    naming the study's world; paths are relative to the file.

    Raises
    ------
    SpecError
        One line naming the file and the entry.
    """
    path = Path(path)
    label = path.name
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as err:
        raise SpecError(f"--worlds {path}: cannot read it ({err.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise SpecError(f"--worlds {path}: not a TOML file ({err})") from None
    unknown = sorted(set(data) - {"worlds"})
    if unknown:
        raise SpecError(f"{label}: unknown key {unknown[0]!r}; a worlds file has [[worlds]] only")
    tables = data.get("worlds")
    if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
        raise SpecError(f"{label}: expected [[worlds]] entries, each with replaces = ID")
    changes = []
    for i, t in enumerate(tables):
        t = dict(t)
        replaces = t.pop("replaces", None)
        if not isinstance(replaces, str) or not replaces:
            raise SpecError(f"{label}: worlds[{i}].replaces: is required (the study's world id)")
        t.setdefault("id", replaces)
        if "qrels" in t:
            t.setdefault("kind", "trec")
        table = _absolute_paths(t, path.resolve().parent)
        changes.append(WorldChange(replaces, table, ("--worlds", str(path.resolve()))))
    return changes


def retarget(
    text: str, changes: list[WorldChange], label: str, base: Path
) -> tuple[str, list[str]]:
    """The study file ``text`` with ``changes`` applied, as TOML text with absolute paths,
    and a line per replaced world saying what it kept from the study's world.

    Parameters
    ----------
    text : str
        The study file.
    changes : list of WorldChange
        Worlds to replace, each at most once.
    label : str
        The study file's name, for errors.
    base : Path
        The study file's folder: its own relative paths are made absolute against it, so the
        result reads the same from anywhere.

    Raises
    ------
    SpecError
        A world the study does not have, replaced twice, or a new id already taken.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise SpecError(f"{label}: not valid TOML: {err}") from None
    worlds = data.get("worlds")
    if not isinstance(worlds, list) or not all(isinstance(w, dict) for w in worlds):
        raise SpecError(f"{label}: worlds: a study needs [[worlds]] entries")
    ids = [w.get("id") for w in worlds]
    renamed: dict[str, str] = {}
    notes: list[str] = []
    for change in changes:
        where = change.label
        if change.replaces not in ids:
            raise SpecError(
                f"{where}: {label} has no world {change.replaces!r}; its worlds: "
                f"{', '.join(map(str, ids))}"
            )
        if change.replaces in renamed:
            raise SpecError(f"{where}: world {change.replaces!r} is replaced twice")
        i = ids.index(change.replaces)
        old = worlds[i]
        new = dict(change.table)
        kept = {}
        if old.get("kind") == "trec" and new.get("kind") == "trec":
            kept = {k: old[k] for k in KEPT if k in old and k not in new}
        worlds[i] = {k: v for k, v in (kept | new).items() if v != ""}
        renamed[change.replaces] = new["id"]
        name = change.replaces + (f" (now {new['id']})" if new["id"] != change.replaces else "")
        notes.append(
            f"world {name}: {_describe(worlds[i])}"
            + (f"; kept from the study file: {_settings(kept)}" if kept else "")
        )
    new_ids = [w.get("id") for w in worlds]
    taken = sorted({w for w in new_ids if new_ids.count(w) > 1})
    if taken:
        raise SpecError(f"--world: two worlds would be called {taken[0]!r}; rename one (as=...)")
    for w in worlds:  # the study's own paths read the same from anywhere
        _absolute_in_place(w, base)
    study = data.get("study")
    if isinstance(study, dict) and isinstance(study.get("plugins"), list):
        study["plugins"] = [str(base / p) if isinstance(p, str) else p for p in study["plugins"]]
    for table in data.get("criteria", []) if isinstance(data.get("criteria"), list) else []:
        _rename(table, renamed)
    for claim in data.get("claims", []) if isinstance(data.get("claims"), list) else []:
        if isinstance(claim, dict) and isinstance(claim.get("check"), dict):
            _rename(claim["check"], renamed)
    header = "".join(f"# {line}\n" for line in dict.fromkeys(c.label for c in changes))
    text = (
        f"# {label} with worlds replaced on the command line (the original's comments are "
        f"not kept):\n{header}\n" + tomli_w.dumps(data)
    )
    return text, notes


def _describe(world: dict) -> str:
    if world.get("kind") != "trec":
        return f"a {world.get('kind')} world"
    runs = world.get("runs")
    n = len(runs) if isinstance(runs, list) else 1
    return f"qrels {world.get('qrels')}, {n} run file pattern(s)"


def _settings(values: dict) -> str:
    return ", ".join(
        f"{k} = {tomli_w.dumps({k: v}).split('=', 1)[1].strip()}" for k, v in values.items()
    )


def _rename(table: Any, renamed: dict[str, str]) -> None:
    """A criterion's or claim check's ``worlds`` (a string or an array) with new ids."""
    if not isinstance(table, dict) or "worlds" not in table:
        return
    value = table["worlds"]
    if isinstance(value, str):
        table["worlds"] = renamed.get(value, value)
    elif isinstance(value, list):
        table["worlds"] = [renamed.get(w, w) if isinstance(w, str) else w for w in value]


def _absolute_paths(table: dict, base: Path) -> dict:
    table = dict(table)
    _absolute_in_place(table, base)
    return table


def _absolute_in_place(table: dict, base: Path) -> None:
    """Make a world table's file values absolute against ``base``: qrels, runs and scores
    always (globs included), topics and run_names and a params file when they name a file."""
    for key in _PATH_KEYS:
        value = table.get(key)
        if key in ("qrels", "runs", "scores"):
            if isinstance(value, str) and value:
                table[key] = str(base / value)
            elif isinstance(value, list):
                table[key] = [str(base / v) if isinstance(v, str) else v for v in value]
        elif isinstance(value, str) and value and (base / value).is_file():
            table[key] = str((base / value).resolve())
