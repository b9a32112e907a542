"""The study file: TOML, read with :mod:`tomllib` into frozen dataclasses.

A study file describes a grid: worlds x degraders x levels x trials x measures x criteria.
Every key is checked: an unknown key or a bad value is a :class:`SpecError` that names the file
and the key path, e.g. ``study.toml: degraders[0].levels[2]: must be in (0, 100], got 120.0``.

Schema 1::

    schema = 1

    [study]
    name = "sakai-kando-2008"     # letters, digits, '.', '_' and '-'
    seed = 20080601               # the study seed: every random stream derives from it
    description = "..."           # optional
    plugins = ["my_measures.py"]  # optional: files registering measures, degraders, criteria
    confidence = 0.95             # optional: the confidence of every interval and verdict
    topic_resamples = 200         # optional: paired bootstrap resamples of the topics of each
                                  # world instance, on which every statistic is recomputed

    [[worlds]]                    # a TREC collection ...
    id = "robust03"
    kind = "trec"
    qrels = "qrels.txt"           # paths are relative to the study file
    runs = "runs/*.gz"            # a glob, or a list of files and globs
    topics = "601-650"            # optional: ranges, a list, or a file of ids
    run_names = ["a", "b"]        # optional: only these runs
    rel = 1                       # optional: relevance level of binary measures
    top_grades = 2                # optional: keep the 2 highest grades, lower ones -> 0
    depth = 1000                  # optional: evaluate the top DEPTH documents only
    best_runs = { n = 15, by = "AP" }  # optional: only the 15 runs with the best mean AP

    [[worlds]]                    # ... or a simulated one, with its truth
    id = "sim"
    kind = "simulator"
    preset = "trec_like"
    n_topics = 50
    n_systems = 30
    replicates = 5                # independent draws of the world
    params = { pool_depth = 50 }  # optional: world parameters replacing the preset's, or
                                  # the path of metaeval calibrate's params.json

    [[degraders]]
    id = "bv"                     # optional, default: the method
    method = "stratified"
    levels = [90, 70, 50, 30, 10] # the degrader's levels (rates, depths, ...)
    trials = 10                   # random repetitions (1 for deterministic degraders)
    rounding = "trunc"            # any other key is a parameter of the degrader

    [measures]
    names = ["AP", "AP'", "Q(gains={1:1,2:3})",
             { name = "AP", aggregate = "gmean", label = "GMAP" }]  # a measure, aggregated
    aggregate = "mean"            # optional: mean, gmean, logit, median (for every measure)
    missing = "zero"              # optional: a topic a run did not answer scores 0 (or skip)

    [[criteria]]
    kind = "robustness"
    id = "tau"                    # optional, default: the kind
    levels = "all"                # optional: "all", or a list of levels and "full"
    topic_filter = { grade = 2, at_most = 5 }   # optional: topics with <= 5 docs of grade >= 2
    worlds = ["robust03"]         # optional: only on these worlds (default: every world)
    statistics = ["tau_b", "tau_ap"]            # any other key is a parameter of the criterion
"""

from __future__ import annotations

import dataclasses
import difflib
import glob as globlib
import hashlib
import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as a package
    import tomli as tomllib

SCHEMA = 1
#: The confidence of intervals and verdicts, and the number of paired topic resamples each
#: statistic is recomputed on, when a study file does not say.
DEFAULT_CONFIDENCE = 0.95
DEFAULT_TOPIC_RESAMPLES = 200
_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
FULL = "full"


class SpecError(ValueError):
    """A study file that cannot be run: the message names the file and the key path."""


# ------------------------------------------------------------------------------- reading
class _Table:
    """One TOML table being read: every key must be taken, and errors carry the key path."""

    def __init__(self, data: Any, path: str, file: str):
        if not isinstance(data, dict):
            raise SpecError(f"{file}: {path or 'the file'}: must be a table, got {_kind(data)}")
        self.data, self.path, self.file = dict(data), path, file

    def where(self, key: str | None = None) -> str:
        if key is None:
            return self.path
        return f"{self.path}.{key}" if self.path else key

    def error(self, key: str | None, message: str) -> SpecError:
        return SpecError(f"{self.file}: {self.where(key)}: {message}")

    def take(self, key: str, kind: type | tuple, default: Any = ..., *, check=None) -> Any:
        if key not in self.data:
            if default is ...:
                raise self.error(key, "is required")
            return default
        value = self.data.pop(key)
        kinds = kind if isinstance(kind, tuple) else (kind,)
        ok = any(
            isinstance(value, k) and not (k in (int, float) and isinstance(value, bool))
            for k in kinds
        )
        if not ok:
            names = " or ".join(_type_name(k) for k in kinds)
            raise self.error(key, f"must be {names}, got {_kind(value)} {value!r}")
        if check is not None:
            try:
                value = check(value)
            except SpecError:
                raise
            except (TypeError, ValueError) as err:
                raise self.error(key, str(err)) from None
        return value

    def table(self, key: str, default: Any = ...) -> _Table | None:
        if key not in self.data and default is not ...:
            return default
        return _Table(self.take(key, dict), self.where(key), self.file)

    def tables(self, key: str) -> list[_Table]:
        items = self.take(key, list, [])
        return [_Table(item, f"{self.where(key)}[{i}]", self.file) for i, item in enumerate(items)]

    def rest(self) -> dict:
        """The keys not taken yet (parameters passed on to a constructor), and empty the table."""
        rest, self.data = self.data, {}
        return rest

    def finish(self, allowed: str = "") -> None:
        if self.data:
            self.refuse_unknown(allowed)

    def refuse_unknown(self, allowed: str) -> None:
        """An error naming the first key not in ``allowed`` (a comma-separated list), with the
        allowed key it is most likely a typo of."""
        names = [a.strip() for a in allowed.split(",") if a.strip()]
        unknown = sorted(k for k in self.data if k not in names)
        if not unknown:
            return
        key = unknown[0]
        close = difflib.get_close_matches(key, names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        listed = f" (allowed keys: {allowed})" if allowed else ""
        raise self.error(key, f"unknown key{hint}{listed}")


def _kind(value: Any) -> str:
    return {
        dict: "a table",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
    }.get(type(value), type(value).__name__)


def _type_name(k: type) -> str:
    return {
        dict: "a table",
        list: "an array",
        str: "a string",
        bool: "true or false",
        int: "an integer",
        float: "a number",
    }.get(k, k.__name__)


def _identifier(what: str):
    def check(value: str) -> str:
        if not _ID_RE.fullmatch(value):
            raise ValueError(
                f"{what} must use letters, digits, '.', '_' and '-' only, got {value!r}"
            )
        return value

    return check


def _positive(value: int) -> int:
    if value < 1:
        raise ValueError(f"must be a positive integer, got {value}")
    return value


def _at_least_two_systems(value: int) -> int:
    if value < 2:
        raise ValueError(f"must be at least 2 (every criterion compares systems), got {value}")
    return value


def _non_negative(value: int) -> int:
    if value < 0:
        raise ValueError(f"must be a non-negative integer, got {value}")
    return value


def _confidence(value: float) -> float:
    if not 0.5 <= value < 1:
        raise ValueError(f"must be a confidence in [0.5, 1), such as 0.95, got {value}")
    return float(value)


def _freeze(value: Any) -> Any:
    """TOML values as hashable, canonical Python values (tables -> sorted tuples of pairs)."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    """Undo :func:`_freeze` for passing parameters on (pairs -> dict, tuples -> lists kept)."""
    if (
        isinstance(value, tuple)
        and value
        and all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in value)
    ):
        return {k: _thaw(v) for k, v in value}
    if isinstance(value, tuple):
        return tuple(_thaw(v) for v in value)
    return value


# ------------------------------------------------------------------------------- the spec
@dataclass(frozen=True)
class TrecWorld:
    """A TREC collection: a qrels file and run files, with optional topic and run subsets."""

    id: str
    qrels: Path
    runs: tuple[Path, ...]
    topics: Any = None
    run_names: Any = None
    rel: int = 1
    top_grades: int | None = None
    depth: int | None = None
    best_runs: tuple = ()
    kind: str = field(default="trec", init=False)
    replicates: int = field(default=1, init=False)

    def identity(self) -> dict:
        """What the world *is*: its files by content (SHA-256), not by path, and its options."""
        return {
            "kind": "trec",
            "qrels": file_digest(self.qrels),
            "runs": sorted(file_digest(p) for p in self.runs),
            "topics": _jsonable(self.topics),
            "run_names": _jsonable(self.run_names),
            "rel": self.rel,
            "top_grades": self.top_grades,
            "depth": self.depth,
        } | _best_identity(self.best_runs)

    def files(self) -> list[Path]:
        return [self.qrels, *self.runs]


@dataclass(frozen=True)
class SimWorld:
    """A simulated world (a preset of :mod:`simulators`, with parameters), drawn ``replicates``
    times; it knows its truth."""

    id: str
    preset: str
    n_topics: int
    n_systems: int
    replicates: int = 1
    params: tuple = ()
    rel: int = 1
    best_runs: tuple = ()
    kind: str = field(default="simulator", init=False)

    def identity(self) -> dict:
        return {
            "kind": "simulator",
            "preset": self.preset,
            "n_topics": self.n_topics,
            "n_systems": self.n_systems,
            "params": _jsonable(self.params),
            "rel": self.rel,
        } | _best_identity(self.best_runs)

    def files(self) -> list[Path]:
        return []


@dataclass(frozen=True)
class ScoresWorld:
    """A score-level world (:mod:`simulators.scores`): margins and copulas fitted to the
    per-topic scores of real runs (one CSV matrix of one measure per collection), drawn
    ``replicates`` times on ``n_topics`` new topics; it knows each system's expected score.

    ``design = "systems"`` simulates every kept run of the first collection together (one
    copula over them); ``design = "pairs"`` makes ``pairs`` pairs per replicate by the
    protocol of Urbano, Lima & Hanjalic (2019): null pairs (``delta = 0``) or pairs whose
    expected scores differ by ``delta``.
    """

    id: str
    scores: tuple[Path, ...]
    measure: str
    n_topics: int
    replicates: int = 1
    design: str = "systems"
    pairs: int = 1000
    delta: float = 0.0
    copula: str = "gaussian"
    margins: tuple | None = None
    support: tuple | None = None
    select: str = "aic"
    copula_families: tuple | None = None
    drop_bottom: float = 0.1
    kind: str = field(default="scores", init=False)
    rel: int = field(default=1, init=False)
    best_runs: tuple = field(default=(), init=False)

    def identity(self) -> dict:
        return {
            "kind": "scores",
            "scores": [file_digest(p) for p in self.scores],
            "measure": self.measure,
            "n_topics": self.n_topics,
            "design": self.design,
            "pairs": self.pairs if self.design == "pairs" else None,
            "delta": self.delta if self.design == "pairs" else None,
            "copula": self.copula if self.design == "systems" else "pair",
            "margins": _jsonable(self.margins),
            "support": _jsonable(self.support),
            "select": self.select,
            "copula_families": _jsonable(self.copula_families),
            "drop_bottom": self.drop_bottom,
        }

    def files(self) -> list[Path]:
        return list(self.scores)


World = TrecWorld | SimWorld | ScoresWorld


def provides(world: World, measure: str) -> bool:
    """Whether a world has scores of the measure (a score-level world has one measure)."""
    return world.kind != "scores" or world.measure == measure


def _best_identity(best_runs: tuple) -> dict:
    """A world restricted to its best runs is another world; an unrestricted one keeps the
    identity it always had (so its saved results stay valid)."""
    return {"best_runs": _jsonable(best_runs)} if best_runs else {}


@dataclass(frozen=True)
class DegraderSpec:
    """A degrader, its levels and its number of trials."""

    id: str
    method: str
    levels: tuple
    trials: int = 1
    params: tuple = ()

    def identity(self) -> dict:
        """The degrade stream's identity leaves the levels out, so levels stay nested and a
        level added later is drawn from the same trials."""
        return {"method": self.method, "params": _jsonable(self.params)}

    def make(self):
        """The :class:`simulators.Degrader` with these levels and parameters."""
        from simulators.degraders import level_field, make_degrader

        return make_degrader(
            self.method, **{level_field(self.method): self.levels}, **_params(self.params)
        )


@dataclass(frozen=True)
class CriterionSpec:
    """A criterion: its kind, the levels it is computed at, an optional topic filter, its
    parameters, and the worlds it runs on (empty: every world)."""

    id: str
    kind: str
    levels: Any = None  # None: the criterion's default; "all"; or a tuple
    topic_filter: tuple = ()
    params: tuple = ()
    worlds: tuple = ()

    def runs_on(self, world_id: str) -> bool:
        return not self.worlds or world_id in self.worlds

    def identity(self) -> dict:
        """What the criterion computes; its worlds are left out, so that restricting a
        criterion to fewer worlds keeps the results it already has on them."""
        return {
            "kind": self.kind,
            "topic_filter": _jsonable(self.topic_filter),
            "params": _jsonable(self.params),
        }

    def make(self):
        from metaeval.study.criteria import make_criterion

        return make_criterion(self.kind, **_params(self.params))


@dataclass(frozen=True)
class ClaimSpec:
    """A published claim and how to check it (see :mod:`metaeval.report.claims`)."""

    id: str
    text: str
    source: str = ""
    check: tuple = ()

    def check_dict(self) -> dict:
        return _params(self.check)


@dataclass(frozen=True)
class MeasureSpec:
    """A measure of a study: its label in results, its canonical name, its aggregate."""

    label: str
    name: str
    aggregate: str


@dataclass(frozen=True)
class StudySpec:
    """A whole study file."""

    name: str
    seed: int
    worlds: tuple[World, ...]
    degraders: tuple[DegraderSpec, ...]
    measures: tuple[MeasureSpec, ...]
    criteria: tuple[CriterionSpec, ...]
    aggregate: str = "mean"
    missing: str = "zero"
    description: str = ""
    confidence: float = 0.95
    topic_resamples: int = 200
    plugins: tuple[Path, ...] = ()
    claims: tuple = ()
    path: Path | None = None
    text: str = ""

    def world(self, world_id: str) -> World:
        return next(w for w in self.worlds if w.id == world_id)

    def degrader(self, degrader_id: str) -> DegraderSpec:
        return next(d for d in self.degraders if d.id == degrader_id)

    @property
    def labels(self) -> tuple[str, ...]:
        """The measures' labels, as results name them."""
        return tuple(m.label for m in self.measures)

    def measure(self, label: str) -> MeasureSpec:
        return next(m for m in self.measures if m.label == label)

    def criterion(self, criterion_id: str) -> CriterionSpec:
        return next(c for c in self.criteria if c.id == criterion_id)

    def digest(self) -> str:
        """SHA-256 of the study file's text."""
        return hashlib.sha256(self.text.encode()).hexdigest()


def _params(pairs: tuple) -> dict:
    """Frozen ``(key, value)`` pairs back to keyword arguments."""
    return {k: _thaw(v) for k, v in pairs}


def _jsonable(value: Any) -> Any:
    value = _thaw(value)
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, Path):
        return str(value)
    return value


_DIGESTS: dict[tuple, str] = {}


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes (cached by path, size and modification time)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _DIGESTS:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _DIGESTS[key] = h.hexdigest()
    return _DIGESTS[key]


# ------------------------------------------------------------------------------- loading
def load_spec(path: str | Path, *, text: str | None = None) -> StudySpec:
    """Read and check a study file.

    Parameters
    ----------
    path : str or Path
        The study file. Relative paths inside it are relative to its folder.
    text : str, optional
        The file's text, if already read (``path`` still anchors relative paths).

    Raises
    ------
    SpecError
        Naming the file and the key path of the first problem found.
    FileNotFoundError
        When the study file does not exist.
    """
    path = Path(path)
    label = path.name
    if text is None:
        if not path.is_file():
            raise FileNotFoundError(f"study file {path} does not exist")
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as err:
            raise SpecError(
                f"{label}: not UTF-8 text ({err.reason} at byte {err.start}); a study file is "
                "TOML in UTF-8"
            ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise SpecError(f"{label}: not valid TOML: {err}") from None
    base = path.resolve().parent
    top = _Table(data, "", label)
    # a misspelt section is named before any section that refers to it is read
    top.refuse_unknown(_TOP_KEYS)
    schema = top.take("schema", int)
    if schema != SCHEMA:
        raise top.error("schema", f"this metaeval reads schema {SCHEMA}, got {schema}")

    study = top.table("study")
    name = study.take("name", str, check=_identifier("the study name"))
    seed = study.take("seed", int, check=_non_negative)
    description = study.take("description", str, "")
    confidence = study.take("confidence", (float, int), DEFAULT_CONFIDENCE, check=_confidence)
    topic_resamples = study.take(
        "topic_resamples", int, DEFAULT_TOPIC_RESAMPLES, check=_non_negative
    )
    plugins = tuple(
        _resolve(base, p, study, "plugins", i, must_exist=True)
        for i, p in enumerate(study.take("plugins", list, []))
    )
    study.finish("name, seed, description, plugins, confidence, topic_resamples")
    _load_plugins(plugins, study)

    worlds = tuple(_world(t, base) for t in top.tables("worlds"))
    if not worlds:
        raise top.error("worlds", "a study needs at least one [[worlds]] entry")
    _unique([w.id for w in worlds], top, "worlds")

    degraders = tuple(_degrader(t) for t in top.tables("degraders"))
    _unique([d.id for d in degraders], top, "degraders")

    measures_t = top.table("measures")
    names = measures_t.take("names", list)
    aggregate = measures_t.take("aggregate", str, "mean", check=_aggregate)
    missing = measures_t.take("missing", str, "zero", check=_missing)
    measures_t.finish("names, aggregate, missing")
    measures = tuple(_measure(n, measures_t, i, aggregate) for i, n in enumerate(names))
    if not measures:
        raise measures_t.error("names", "must name at least one measure")
    _unique([m.label for m in measures], measures_t, "names", "measure")

    criteria_tables = top.tables("criteria")
    if not criteria_tables:
        raise top.error("criteria", "a study needs at least one [[criteria]] entry")
    criteria = tuple(_criterion(t, degraders, worlds) for t in criteria_tables)
    _unique([c.id for c in criteria], top, "criteria")
    _check_score_worlds(worlds, measures, criteria, top)

    claims = tuple(_claim(t, criteria, measures, worlds, degraders) for t in top.tables("claims"))
    _unique([c.id for c in claims], top, "claims")
    top.finish(_TOP_KEYS)
    return StudySpec(
        name=name,
        seed=seed,
        worlds=worlds,
        degraders=degraders,
        measures=measures,
        criteria=criteria,
        aggregate=aggregate,
        missing=missing,
        description=description,
        confidence=confidence,
        topic_resamples=topic_resamples,
        plugins=plugins,
        claims=claims,
        path=path,
        text=text,
    )


def _check_score_worlds(worlds, measures, criteria, top: _Table) -> None:
    """A score-level world has one measure's scores and no judgments: the study must list
    its measure, and run on it only criteria that read scores (a pairs world: error rates)."""
    for w in worlds:
        if w.kind != "scores":
            continue
        if not any(m.name == w.measure for m in measures):
            raise top.error(
                "measures", f"world {w.id!r} holds {w.measure} scores: list {w.measure} among them"
            )
        for c in criteria:
            if not c.runs_on(w.id):
                continue
            crit = c.make()
            if crit.needs_judgments or (w.design == "pairs" and c.kind != "error_rates"):
                what = "a world of pairs" if w.design == "pairs" else "a scores world"
                raise top.error(
                    "criteria",
                    f"{c.id} ({c.kind}) cannot run on {what} ({w.id!r}); restrict it to other "
                    "worlds with worlds = [...]",
                )


_TOP_KEYS = "schema, study, worlds, degraders, measures, criteria, claims"


def _unique(ids: list[str], table: _Table, key: str, what: str = "id") -> None:
    seen = set()
    for i, x in enumerate(ids):
        if x in seen:
            if what == "id":
                raise table.error(
                    f"{key}[{i}]", f"id {x!r} is used twice; give each entry its own id"
                )
            raise table.error(
                f"{key}[{i}]",
                f"{what} {x!r} is listed twice; list it once (or give each a different label)",
            )
        seen.add(x)


def _resolve(
    base: Path,
    value: Any,
    table: _Table,
    key: str,
    index: int | None = None,
    must_exist: bool = True,
) -> Path:
    where = key if index is None else f"{key}[{index}]"
    if not isinstance(value, str):
        raise table.error(where, f"must be a path (a string), got {_kind(value)}")
    p = _absolute(base, value)
    if must_exist and not p.exists():
        raise table.error(where, f"{value!r}: no such file ({p})")
    return p


def _absolute(base: Path, value: str) -> Path:
    """A path of the study file (``~`` expanded), relative ones from the file's folder."""
    p = Path(value).expanduser()
    return p if p.is_absolute() else base / p


def _load_plugins(plugins: tuple[Path, ...], table: _Table) -> None:
    from metaeval.measures import load_plugin
    from metaeval.measures.plugins import PluginFileError

    for i, p in enumerate(plugins):
        try:
            load_plugin(p)
        except PluginFileError as err:  # load_plugin's own words about the file
            raise table.error(f"plugins[{i}]", str(err)) from None
        except Exception as err:  # raised by the file's code: say what went wrong in it
            raise table.error(f"plugins[{i}]", f"{p.name}: {type(err).__name__}: {err}") from None


def _best_runs(t: _Table) -> tuple:
    """``best_runs = { n = 15, by = "AP" }``: keep the n runs with the highest mean of a
    measure under the full judgments (at the world's relevance level)."""
    best = t.table("best_runs", None)
    if best is None:
        return ()
    n = best.take("n", int, check=_positive)
    by = best.take("by", str, "AP")
    best.finish("n, by")
    try:
        from metaeval.measures import canonical_name

        by = canonical_name(by)
    except (TypeError, ValueError) as err:
        raise best.error("by", str(err)) from None
    return (("by", by), ("n", n))


def _world(t: _Table, base: Path) -> World:
    wid = t.take("id", str, check=_identifier("a world id"))
    kind = t.take("kind", str)
    rel = t.take("rel", int, 1, check=_positive)
    best_runs = _best_runs(t)
    if kind == "trec":
        qrels = _resolve(base, t.take("qrels", str), t, "qrels")
        given = t.take("runs", (str, list))
        patterns = [given] if isinstance(given, str) else given
        files: list[Path] = []
        for i, pattern in enumerate(patterns):
            where = "runs" if isinstance(given, str) else f"runs[{i}]"
            if not isinstance(pattern, str):
                raise t.error(where, f"must be a path or glob, got {_kind(pattern)}")
            full = str(_absolute(base, pattern))
            matched = sorted(Path(p) for p in globlib.glob(full) if Path(p).is_file())
            if not matched:
                raise t.error(where, f"{pattern!r} matches no file ({full})")
            files.extend(m for m in matched if m not in files)
        if not files:
            raise t.error("runs", "must name at least one run file (a path or a glob)")
        topics = t.take("topics", (str, list), None)
        run_names = t.take("run_names", (str, list), None)
        if isinstance(topics, str) and (base / topics).is_file():
            topics = str(base / topics)
        if isinstance(run_names, str) and (base / run_names).is_file():
            run_names = str(base / run_names)
        if topics is not None:
            _check_topics(t, qrels, topics)
        top_grades = t.take("top_grades", int, None, check=_positive)
        depth = t.take("depth", int, None, check=_positive)
        t.finish("id, kind, qrels, runs, topics, run_names, rel, top_grades, depth, best_runs")
        return TrecWorld(
            id=wid,
            qrels=qrels,
            runs=tuple(files),
            topics=_freeze(topics),
            run_names=_freeze(run_names),
            rel=rel,
            top_grades=top_grades,
            depth=depth,
            best_runs=best_runs,
        )
    if kind == "simulator":
        from simulators.worlds import PRESETS, WorldParams

        preset = t.take("preset", str, "trec_like")
        if preset not in PRESETS:
            raise t.error("preset", f"must be one of {', '.join(sorted(PRESETS))}, got {preset!r}")
        n_topics = t.take("n_topics", int, check=_positive)
        n_systems = t.take("n_systems", int, check=_at_least_two_systems)
        replicates = t.take("replicates", int, 1, check=_positive)
        if isinstance(t.data.get("params"), str):
            # a parameter file written by metaeval calibrate (WorldParams.to_dict as JSON)
            params_t = _Table(
                _params_file(_resolve(base, t.take("params", str), t, "params"), t),
                t.where("params"),
                t.file,
            )
        else:
            params_t = t.table("params", None)
        params: dict = {}
        if params_t is not None:
            params = params_t.rest()
            try:
                base_params = PRESETS[preset]
                known = {f.name for f in dataclasses.fields(WorldParams)}
                for key in params:
                    if key not in known:
                        raise params_t.error(
                            key, f"unknown world parameter; known: {', '.join(sorted(known))}"
                        )
                dataclasses.replace(base_params, **{k: _world_value(v) for k, v in params.items()})
            except (TypeError, ValueError) as err:
                if isinstance(err, SpecError):
                    raise
                raise params_t.error(None, str(err)) from None
        t.finish("id, kind, preset, n_topics, n_systems, replicates, params, rel, best_runs")
        if best_runs and dict(best_runs)["n"] > n_systems:
            raise t.error("best_runs", f"n is larger than n_systems ({n_systems})")
        return SimWorld(
            id=wid,
            preset=preset,
            n_topics=n_topics,
            n_systems=n_systems,
            replicates=replicates,
            params=_freeze(params),
            rel=rel,
            best_runs=best_runs,
        )
    if kind == "scores":
        return _scores_world(t, base, wid, rel, best_runs)
    raise t.error("kind", f"must be 'trec', 'simulator' or 'scores', got {kind!r}")


def _scores_world(t: _Table, base: Path, wid: str, rel: int, best_runs: tuple) -> ScoresWorld:
    from metaeval.measures import canonical_name
    from simulators.margins import CONTINUOUS_FAMILIES, DISCRETE_FAMILIES
    from simulators.scores import COPULA_FAMILIES, COPULAS, DESIGNS

    if rel != 1 or best_runs:
        raise t.error("rel" if rel != 1 else "best_runs", "a scores world has no judgments")
    given = t.take("scores", (str, list))
    patterns = [given] if isinstance(given, str) else given
    files: list[Path] = []
    for i, pattern in enumerate(patterns):
        where = "scores" if isinstance(given, str) else f"scores[{i}]"
        if not isinstance(pattern, str):
            raise t.error(where, f"must be a path or glob, got {_kind(pattern)}")
        full = str(_absolute(base, pattern))
        matched = sorted(Path(p) for p in globlib.glob(full) if Path(p).is_file())
        if not matched:
            raise t.error(where, f"{pattern!r} matches no file ({full})")
        files.extend(m for m in matched if m not in files)
    if not files:
        raise t.error("scores", "must name at least one score matrix (a path or a glob)")
    from simulators.scores import read_score_matrix

    for f in files:
        try:
            read_score_matrix(f)  # a bad file is named now, not in every task
        except ValueError as err:
            raise t.error("scores", str(err)) from None
    measure = t.take("measure", str)
    try:
        measure = canonical_name(measure)
    except (TypeError, ValueError) as err:
        raise t.error("measure", str(err)) from None
    n_topics = t.take("n_topics", int, check=_positive)
    replicates = t.take("replicates", int, 1, check=_positive)
    design = t.take("design", str, "systems", check=_one_of(DESIGNS))
    if design == "systems" and len(files) > 1:
        raise t.error(
            "scores", f"a systems world fits one collection: give one file, not {len(files)}"
        )
    pairs = t.take("pairs", int, 1000, check=_positive)
    delta = float(t.take("delta", (float, int), 0.0))
    copula = t.take("copula", str, "gaussian", check=_one_of(COPULAS))
    support = t.take("support", list, None)
    families = CONTINUOUS_FAMILIES if support is None else DISCRETE_FAMILIES
    margins = t.take("margins", list, None)
    for i, m in enumerate(margins or []):
        if m not in families:
            raise t.error(f"margins[{i}]", f"must be one of {', '.join(families)}, got {m!r}")
    if support is not None and (
        len(support) < 2 or not all(isinstance(v, (int, float)) for v in support)
    ):
        raise t.error("support", "must list at least two possible scores (numbers)")
    select = t.take("select", str, "aic", check=_one_of(("aic", "bic")))
    copula_families = t.take("copula_families", list, None)
    for i, f in enumerate(copula_families or []):
        if f not in COPULA_FAMILIES:
            raise t.error(
                f"copula_families[{i}]", f"must be one of {', '.join(COPULA_FAMILIES)}, got {f!r}"
            )
    drop_bottom = float(t.take("drop_bottom", (float, int), 0.1))
    if not 0 <= drop_bottom < 1:
        raise t.error("drop_bottom", f"must be a share in [0, 1), got {drop_bottom}")
    t.finish(
        "id, kind, scores, measure, n_topics, replicates, design, pairs, delta, copula, "
        "margins, support, select, copula_families, drop_bottom"
    )
    return ScoresWorld(
        id=wid,
        scores=tuple(files),
        measure=measure,
        n_topics=n_topics,
        replicates=replicates,
        design=design,
        pairs=pairs,
        delta=delta,
        copula=copula,
        margins=None if margins is None else tuple(margins),
        support=None if support is None else tuple(sorted(float(v) for v in support)),
        select=select,
        copula_families=None if copula_families is None else tuple(copula_families),
        drop_bottom=drop_bottom,
    )


def _one_of(choices):
    def check(value):
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    return check


def _check_topics(t: _Table, qrels: Path, topics: Any) -> None:
    """A topic selection must name topics of the qrels: checked now, not when the tasks run."""
    from metaeval.data import parse_ids, read_qrels

    try:
        available = list(read_qrels(qrels).topics)
    except (ValueError, OSError) as err:
        raise t.error("qrels", str(err)) from None
    try:
        parse_ids(topics, available=available, what="topic")
    except ValueError as err:
        raise t.error("topics", str(err)) from None


def _params_file(path: Path, t: _Table) -> dict:
    """World parameters from a JSON file (``metaeval calibrate``'s params.json)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise t.error("params", f"{path}: not a JSON file of world parameters ({err})") from None
    if not isinstance(data, dict):
        raise t.error("params", f"{path}: expected a JSON object of world parameters")
    return {k: (math.inf if v == "inf" else v) for k, v in data.items()}


def _world_value(v: Any) -> Any:
    """TOML arrays become tuples, as WorldParams expects."""
    if isinstance(v, list):
        return tuple(_world_value(x) for x in v)
    return v


def _degrader(t: _Table) -> DegraderSpec:
    from simulators.degraders import registered_degraders

    method = t.take("method", str)
    known = registered_degraders()
    if method not in known:
        raise t.error("method", f"unknown degrader {method!r}; known: {', '.join(known)}")
    did = t.take("id", str, method, check=_identifier("a degrader id"))
    levels = t.take("levels", list)
    if not levels:
        raise t.error("levels", "must list at least one level")
    trials = t.take("trials", int, 1, check=_positive)
    params = t.rest()
    spec = DegraderSpec(
        id=did, method=method, levels=_freeze(levels), trials=trials, params=_freeze(params)
    )
    if not known[method].random and trials != 1:
        raise t.error(
            "trials",
            f"{method} is deterministic: every trial would be the same; "
            "remove trials or set it to 1",
        )
    try:
        degrader = spec.make()
    except (TypeError, ValueError) as err:
        raise _param_error(t, err, list(params)) from None
    # The degrader may normalise its levels (e.g. 70.0 -> 70); keep its own spelling.
    return DegraderSpec(
        id=did,
        method=method,
        levels=tuple(degrader.levels()),
        trials=trials,
        params=_freeze(params),
    )


def _param_error(t: _Table, err: Exception, keys: list[str]) -> SpecError:
    """A constructor's error, pointed at the key it names (``rates[2] must be ...`` is the
    study's ``levels[2]``)."""
    message = str(err)
    match = re.match(r"([A-Za-z_]\w*)(\[\d+\])?", message)
    name = match.group(1) if match else ""
    if name in ("levels", "rates", "depths", "teams", "k"):
        return t.error("levels" + (match.group(2) or ""), message[match.end() :].lstrip(": "))
    if name in keys:
        return t.error(name + (match.group(2) or ""), message[match.end() :].lstrip(": "))
    return t.error(None, message)


def _measure(entry: Any, t: _Table, i: int, aggregate: str) -> MeasureSpec:
    """A measure name, or a table {name, aggregate, label}."""
    from metaeval.measures import parse_measure

    where = f"names[{i}]"
    if isinstance(entry, dict):
        e = _Table(entry, t.where(where), t.file)
        name = e.take("name", str)
        own = e.take("aggregate", str, None, check=_aggregate)
        label = e.take("label", str, None)
        e.finish("name, aggregate, label")
    elif isinstance(entry, str):
        name, own, label, e = entry, None, None, None
    else:
        raise t.error(
            where,
            f"must be a measure name or a table {{name, aggregate, label}}, got {_kind(entry)}",
        )
    try:
        canonical = str(parse_measure(name))
    except (TypeError, ValueError) as err:
        raise t.error(f"{where}.name" if e is not None else where, str(err)) from None
    if label is None:
        label = canonical if own in (None, aggregate) else f"{canonical} [{own}]"
    return MeasureSpec(label=label, name=canonical, aggregate=own or aggregate)


def _aggregate(text: str) -> str:
    from metaeval.aggregate import parse_aggregate

    return str(parse_aggregate(text))


def _missing(text: str) -> str:
    if text not in ("zero", "skip"):
        raise ValueError(f"must be 'zero' or 'skip', got {text!r}")
    return text


def _criterion(t: _Table, degraders: tuple[DegraderSpec, ...], worlds: tuple) -> CriterionSpec:
    from metaeval.study.criteria import registered_criteria

    kind = t.take("kind", str)
    known = registered_criteria()
    if kind not in known:
        raise t.error("kind", f"unknown criterion {kind!r}; known: {', '.join(known)}")
    cid = t.take("id", str, kind, check=_identifier("a criterion id"))
    levels = t.take("levels", (str, list), None)
    if isinstance(levels, str) and levels != "all":
        raise t.error("levels", f'must be "all" or a list of levels, got {levels!r}')
    if isinstance(levels, list):
        known_levels = {str(lv) for d in degraders for lv in d.levels} | {FULL}
        for i, lv in enumerate(levels):
            if str(lv) not in known_levels:
                raise t.error(
                    f"levels[{i}]",
                    f"{lv!r} is not a level of any degrader (nor "
                    f'"{FULL}"); levels: '
                    f"{', '.join(sorted(known_levels))}",
                )
        levels = tuple(str(lv) for lv in levels)
    only = t.take("worlds", (str, list), [])
    only = [only] if isinstance(only, str) else only
    for i, w in enumerate(only):
        if w not in {x.id for x in worlds}:
            raise t.error(
                f"worlds[{i}]",
                f"{w!r} is not a world of the study; worlds: {', '.join(x.id for x in worlds)}",
            )
    filt = t.table("topic_filter", None)
    topic_filter: dict = {}
    if filt is not None:
        topic_filter = {
            "grade": filt.take("grade", int, check=_non_negative),
            "at_most": filt.take("at_most", int, None, check=_non_negative),
            "at_least": filt.take("at_least", int, None, check=_non_negative),
        }
        filt.finish("grade, at_most, at_least")
        if topic_filter["at_most"] is None and topic_filter["at_least"] is None:
            raise filt.error(
                None,
                "give at_most and/or at_least (the number of documents "
                "of grade >= grade a topic must have)",
            )
    params = t.rest()
    allowed = sorted(f.name for f in dataclasses.fields(known[kind]))
    for key in params:
        if key not in allowed:
            raise t.error(
                key, f"not a parameter of {kind}; parameters: {', '.join(allowed) or 'none'}"
            )
    spec = CriterionSpec(
        id=cid,
        kind=kind,
        levels=levels,
        topic_filter=_freeze(topic_filter),
        params=_freeze(params),
        worlds=tuple(dict.fromkeys(only)),
    )
    try:
        spec.make()
    except (TypeError, ValueError) as err:
        raise _param_error(t, err, list(params)) from None
    return spec


# what every check can narrow or transform (see metaeval.report.claims)
_MODIFIERS = {
    "against",
    "against_mode",
    "degrader",
    "x",
    "worlds",
    "per",
    "relative_to",
    "change_from",
    "absolute",
}
_CHECK_KEYS = {
    "order": (
        {"criterion", "statistic", "than"},
        {"level", "levels", "greater", "less", "like", "within", "mode", "tolerance"} | _MODIFIERS,
    ),
    "threshold": (
        {"criterion", "statistic", "measures"},
        {"level", "levels", "above", "below"} | _MODIFIERS,
    ),
    "trend": (
        {"criterion", "statistic", "measures", "to", "direction"},
        {"from", "tolerance"} | _MODIFIERS,
    ),
}


def _claim(t: _Table, criteria, measures, worlds, degraders) -> ClaimSpec:
    """A ``[[claims]]`` entry: every name it uses must exist in the study."""
    import inspect

    from metaeval.study.analytic import TESTS

    cid = t.take("id", str, check=_identifier("a claim id"))
    text = t.take("text", str)
    source = t.take("source", str, "")
    c = t.table("check")
    t.finish("id, text, source, check")
    kind = c.take("kind", str)
    labels = [m.label for m in measures]
    if kind == "analytic":
        test = c.take("test", str)
        if test not in TESTS:
            raise c.error(
                "test", f"unknown analytic test {test!r}; known: {', '.join(sorted(TESTS))}"
            )
        params = c.rest()
        sig = inspect.signature(TESTS[test])
        for key in params:
            if key not in sig.parameters:
                raise c.error(
                    key,
                    f"not a parameter of the {test} test; parameters: {', '.join(sig.parameters)}",
                )
        missing = [
            k
            for k, p in sig.parameters.items()
            if p.default is inspect.Parameter.empty and k not in params
        ]
        if missing:
            raise c.error(missing[0], "is required")
        return ClaimSpec(cid, text, source, _freeze({"kind": kind, "test": test, **params}))
    if kind not in _CHECK_KEYS:
        raise c.error("kind", f"must be order, threshold, trend or analytic, got {kind!r}")
    required, optional = _CHECK_KEYS[kind]
    check = c.rest()
    for key in check:
        if key not in required | optional:
            raise c.error(
                key,
                f"unknown key for a {kind} check; keys: {', '.join(sorted(required | optional))}",
            )
    for key in sorted(required - set(check)):
        raise c.error(key, "is required")
    if kind == "order" and sum(k in check for k in ("greater", "less", "like")) != 1:
        raise c.error(
            None,
            "an order check names its measures with greater = [...], less = [...] or "
            "like = [...] (with within = ...), and than = [...]",
        )
    if kind == "threshold" and "above" not in check and "below" not in check:
        raise c.error(None, "a threshold check needs above = x, below = y, or both (a band)")
    if kind == "threshold" and not all(
        isinstance(check.get(k, 0), (int, float)) and not isinstance(check.get(k), bool)
        for k in ("above", "below")
    ):
        raise c.error("above" if "above" in check else "below", "must be a number")
    if (
        kind == "threshold"
        and "above" in check
        and "below" in check
        and not (check["above"] < check["below"])
    ):
        raise c.error("below", f"must be above the lower bound ({check['above']})")
    if kind == "order" and ("like" in check) != ("within" in check):
        raise c.error("within" if "like" in check else "like", "like and within go together")
    for key in ("criterion", "change_from"):
        if key in check and check[key] not in {x.id for x in criteria}:
            raise c.error(
                key,
                f"{check[key]!r} is not a criterion of the study; "
                f"criteria: {', '.join(x.id for x in criteria)}",
            )
    for key in ("greater", "less", "like", "than", "measures"):
        if key in check:
            names = [check[key]] if isinstance(check[key], str) else check[key]
            check[key] = [_claim_measure(n, labels, c, key) for n in names]
    if "against" in check:
        refs = check["against"] if isinstance(check["against"], list) else [check["against"]]
        # what the criterion's rows name as their other side when it is not a measure
        named = next(x for x in criteria if x.id == check["criterion"]).make().others()
        refs = [
            r
            if r in ("full", "truth", "effect") or r in named
            else _claim_measure(r, labels, c, "against")
            for r in refs
        ]
        check["against"] = refs if isinstance(check["against"], list) else refs[0]
    if "levels" in check:
        if "level" in check or not isinstance(check["levels"], list) or not check["levels"]:
            raise c.error("levels", "must be a non-empty array of levels, and replaces level")
        check["levels"] = [str(lv) for lv in check["levels"]]
    criterion = next(x for x in criteria if x.id == check["criterion"])
    produced = criterion.make().produces()
    for key in ("statistic", "per"):
        if produced is not None and key in check and check[key] not in produced:
            raise c.error(
                key,
                f"{criterion.id} ({criterion.kind}) gives no statistic {check[key]!r}; it "
                f"gives: {', '.join(produced)}",
            )
    named = check.get("worlds", [])
    for w in [named] if isinstance(named, str) else named:
        if w not in {x.id for x in worlds}:
            raise c.error("worlds", f"{w!r} is not a world of the study")
        if not criterion.runs_on(w):
            raise c.error("worlds", f"criterion {criterion.id!r} does not run on world {w!r}")
    if criterion.worlds and "worlds" not in check:
        check["worlds"] = list(criterion.worlds)  # judged where the criterion runs
    levels = {str(lv) for d in degraders for lv in d.levels} | {FULL}
    for key in ("level", "from", "to", "relative_to", "levels"):
        for i, lv in enumerate(check.get(key, []) if key == "levels" else [check.get(key)]):
            if lv is None:
                continue
            if key != "levels":
                check[key] = lv = str(lv)
            if lv not in levels:
                raise c.error(
                    key if key != "levels" else f"levels[{i}]",
                    f"{lv!r} is not a level of the study; levels: {', '.join(sorted(levels))}",
                )
    if "per" in check and not isinstance(check["per"], str):
        raise c.error("per", f"must name a statistic (a string), got {_kind(check['per'])}")
    return ClaimSpec(cid, text, source, _freeze({"kind": kind, **check}))


def _claim_measure(name: Any, labels: list[str], c: _Table, key: str) -> str:
    """A measure a claim names: a label of the study, in any spelling of its name."""
    if not isinstance(name, str):
        raise c.error(key, f"measures are named by strings, got {_kind(name)}")
    if name in labels:
        return name
    try:
        from metaeval.measures import canonical_name

        canonical = canonical_name(name)
    except (TypeError, ValueError):
        canonical = None
    if canonical in labels:
        return canonical
    raise c.error(key, f"{name!r} is not a measure of the study; measures: {', '.join(labels)}")


def study_file(name: str) -> Path:
    """A study file shipped with metaeval (``quickstart.toml``...): the installed copy, or the
    repository's ``studies/`` folder in a source checkout."""
    from importlib import resources

    try:
        path = Path(str(resources.files("metaeval.studies") / name))
    except ModuleNotFoundError:
        path = Path(__file__).resolve().parents[2] / "studies" / name
    if not path.is_file():
        raise FileNotFoundError(f"no study file {name} in {path.parent}")
    return path


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: the input of every identity hash."""
    return json.dumps(
        _jsonable(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str
    )


def toml_value(value: Any) -> str:
    """A value as TOML writes it: strings, numbers and booleans as JSON does, arrays, inline
    tables (what a generated study file needs)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)


def spec_as_dict(spec: StudySpec) -> dict:
    """The parsed spec as plain data (for the manifest)."""
    out = asdict(spec)
    out.pop("text")
    return json.loads(canonical_json(out))


__all__ = [
    "SCHEMA",
    "FULL",
    "SpecError",
    "TrecWorld",
    "SimWorld",
    "ScoresWorld",
    "DegraderSpec",
    "CriterionSpec",
    "MeasureSpec",
    "ClaimSpec",
    "StudySpec",
    "load_spec",
    "file_digest",
    "canonical_json",
    "toml_value",
]
