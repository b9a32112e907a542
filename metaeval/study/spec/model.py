"""What a study file says, as frozen dataclasses (worlds, degraders, measures, criteria,
claims, the study), with the identities and digests results are keyed by."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from metaeval.study.spec.table import _thaw

SCHEMA = 1
#: The confidence of intervals and verdicts, and the number of paired topic resamples each
#: statistic is recomputed on, when a study file does not say.
DEFAULT_CONFIDENCE = 0.95
DEFAULT_TOPIC_RESAMPLES = 200
#: The level of a study's results with the full judgments.
FULL = "full"


# ------------------------------------------------------------------------------- the spec
@dataclass(frozen=True)
class TrecWorld:
    """A TREC collection: a qrels file and run files, with optional topic and run subsets."""

    id: str
    qrels: Path
    runs: tuple[Path, ...]
    topics: Any = None
    run_names: Any = None
    rel: int | float = 1
    top_grades: int | None = None
    depth: int | None = None
    best_runs: tuple = ()
    #: how equal scores are ordered (trec_eval, input), or ``expected``: every measure's
    #: expected value over the orderings of tied documents
    ties: str = "trec_eval"
    #: the file gives ``rel`` (a graded collection without it, or top_grades, is warned about)
    rel_stated: bool = False
    kind: str = field(default="trec", init=False)
    replicates: int = field(default=1, init=False)
    #: The keys the reader resolves (paths made absolute, globs expanded, a selection read
    #: from its file): :func:`spec_as_dict` keeps them also as the study file wrote them.
    written: ClassVar[tuple[str, ...]] = ("qrels", "runs", "topics", "run_names")

    def identity(self) -> dict:
        """What the world *is*: its files by content (SHA-256), not by path, and its options."""
        # ``ties`` only when not trec_eval's order: earlier studies' worlds keep their identity.
        return (
            {
                "kind": "trec",
                "qrels": file_digest(self.qrels),
                "runs": sorted(file_digest(p) for p in self.runs),
                "topics": _jsonable(self.topics),
                "run_names": _jsonable(self.run_names),
                "rel": self.rel,
                "top_grades": self.top_grades,
                "depth": self.depth,
            }
            | _best_identity(self.best_runs)
            | ({"ties": self.ties} if self.ties != "trec_eval" else {})
        )

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
    rel: int | float = 1
    best_runs: tuple = ()
    kind: str = field(default="simulator", init=False)
    #: ``params`` may name a parameter file (``metaeval calibrate``'s), which the reader reads
    written: ClassVar[tuple[str, ...]] = ("params",)

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
    per-topic scores of real runs (CSV matrices of topics x runs), drawn ``replicates`` times
    on ``n_topics`` new topics; it knows each system's expected score.

    ``design = "systems"`` simulates every kept run of one collection together (one copula
    over them); with several measures, ``scores`` holds one matrix per measure of the same
    topics and runs, in the order of ``measures``, and one copula spans every (measure,
    system), so the measures' rankings agree as the collection's do. ``design = "pairs"``
    (one measure, a matrix per collection) makes ``pairs`` pairs per replicate by the
    protocol of Urbano, Lima & Hanjalic (2019): null pairs (``delta = 0``) or pairs whose
    expected scores differ by ``delta``.

    ``margins`` and ``support`` hold a value per measure (None: every continuous family, no
    support).
    """

    id: str
    scores: tuple[Path, ...]
    measures: tuple[str, ...]
    n_topics: int
    replicates: int = 1
    design: str = "systems"
    pairs: int = 1000
    delta: float = 0.0
    copula: str = "gaussian"
    margins: tuple | None = None  # per measure: a tuple of families or None
    support: tuple | None = None  # per measure: a tuple of scores or None
    select: str = "aic"
    copula_families: tuple | None = None
    drop_bottom: float = 0.1
    kind: str = field(default="scores", init=False)
    rel: int | float = field(default=1, init=False)
    best_runs: tuple = field(default=(), init=False)
    written: ClassVar[tuple[str, ...]] = ("scores",)

    def identity(self) -> dict:
        return {
            "kind": "scores",
            "scores": [file_digest(p) for p in self.scores],
            # one measure keeps the identity (and the saved results) it had before worlds
            # of several measures
            "measure": self.measures[0] if len(self.measures) == 1 else list(self.measures),
            "n_topics": self.n_topics,
            "design": self.design,
            "pairs": self.pairs if self.design == "pairs" else None,
            "delta": self.delta if self.design == "pairs" else None,
            "copula": self.copula if self.design == "systems" else "pair",
            "margins": self._per_measure(self.margins),
            "support": self._per_measure(self.support),
            "select": self.select,
            "copula_families": _jsonable(self.copula_families),
            "drop_bottom": self.drop_bottom,
        }

    def __post_init__(self) -> None:
        for name in ("margins", "support"):
            if getattr(self, name) is None:
                object.__setattr__(self, name, (None,) * len(self.measures))

    def _per_measure(self, values: tuple) -> Any:
        return _jsonable(values[0] if len(self.measures) == 1 else values)

    def files(self) -> list[Path]:
        return list(self.scores)


World = TrecWorld | SimWorld | ScoresWorld


def provides(world: World, measure: str) -> bool:
    """Whether a world has scores of the measure (a score-level world has its measures')."""
    return world.kind != "scores" or measure in world.measures


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
    confidence: float = DEFAULT_CONFIDENCE
    topic_resamples: int = DEFAULT_TOPIC_RESAMPLES
    plugins: tuple[Path, ...] = ()
    claims: tuple = ()
    path: Path | None = None
    text: str = ""
    #: ``--world``/``--worlds`` arguments that replaced worlds of the file (``text`` is then
    #: the file as changed), and a line per replaced world saying what it kept
    world_args: tuple[str, ...] = ()
    world_notes: tuple[str, ...] = ()

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


def study_file(name: str) -> Path:
    """A study file shipped with metaeval (``quickstart.toml``...): the installed copy, or the
    repository's ``studies/`` folder in a source checkout."""
    from importlib import resources

    try:
        path = Path(str(resources.files("metaeval.studies") / name))
    except ModuleNotFoundError:
        path = Path(__file__).resolve().parents[3] / "studies" / name
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


# ------------------------------------------------------------------- the normalised spec
def spec_as_dict(spec: StudySpec) -> dict:
    """The spec as plain data with every default filled in: what a study saves beside its
    results (``spec.json``) and what a report reads.

    Every key is present whatever the file wrote: the study's settings, its worlds (each with
    ``as_written``, the keys naming files as the file wrote them, see :func:`world_as_dict`),
    degraders (with what their levels are, :func:`degrader_as_dict`), measures, criteria
    (:func:`criterion_as_dict`) and claims. Where the study file was read from, and how it was
    changed on the command line, are the manifest's, not the spec's. The degraders and
    criteria are made to fill in their defaults (so their parameters are checked, as reading
    the study file checks them).

    Parameters
    ----------
    spec : StudySpec

    Returns
    -------
    dict
        JSON data (lists, not tuples), as :func:`canonical_json` writes it.
    """
    tables = _world_tables(spec.text)
    ids = [w.id for w in spec.worlds]
    out = {
        "schema": SCHEMA,
        "name": spec.name,
        "seed": spec.seed,
        "description": spec.description,
        "confidence": spec.confidence,
        "topic_resamples": spec.topic_resamples,
        "aggregate": spec.aggregate,
        "missing": spec.missing,
        "plugins": [str(p) for p in spec.plugins],
        "worlds": [world_as_dict(w, tables.get(w.id, {})) for w in spec.worlds],
        "degraders": [degrader_as_dict(d) for d in spec.degraders],
        "measures": [dataclasses.asdict(m) for m in spec.measures],
        "criteria": [criterion_as_dict(c, ids) for c in spec.criteria],
        "claims": [
            {"id": c.id, "text": c.text, "source": c.source, "check": c.check_dict()}
            for c in spec.claims
        ],
    }
    return json.loads(canonical_json(out))


def world_as_dict(world: World, table: dict | None = None) -> dict:
    """A world as plain data: its every field, ``best_runs`` a table (None: every run) and a
    simulated world's ``params`` a table, with ``as_written``: the keys the reader resolves
    (:attr:`TrecWorld.written`...) as the study file's ``[[worlds]]`` table wrote them (a
    glob, a parameter file's path), so that a report names files as the user did; a key the
    table does not give is the world's own value.

    Parameters
    ----------
    world : World
    table : dict, optional
        The world's ``[[worlds]]`` table, as TOML read it.
    """
    table = table or {}
    out = {f.name: getattr(world, f.name) for f in dataclasses.fields(world)}
    out["best_runs"] = _params(world.best_runs) or None
    if world.kind == "simulator":
        out["params"] = _params(world.params)
    if world.kind == "scores":  # as its identity has them: a measure's values alone for one
        del out["measures"]
        ident = world.identity()
        out.update({k: ident[k] for k in ("measure", "margins", "support")})
    out["as_written"] = {key: table[key] if key in table else out[key] for key in world.written}
    return json.loads(canonical_json(out))


def degrader_as_dict(degrader: DegraderSpec) -> dict:
    """A degrader as plain data: its levels, trials and every parameter (defaults filled in),
    and what its levels are, as its class says (:class:`simulators.degraders.Degrader`):
    ``level_field``, the parameter the levels set; ``level_unit``, ``"percent"`` for
    percentages of the judgments kept (else what a level counts or names, or empty); and
    ``level_meaning``, a level in words (``"pool depth"``)."""
    from simulators.degraders import registered_degraders

    cls = registered_degraders()[degrader.method]
    made = degrader.make()
    params = {
        f.name: getattr(made, f.name)
        for f in dataclasses.fields(made)
        if f.init and f.name != cls.level_field
    }
    out = {
        "id": degrader.id,
        "method": degrader.method,
        "levels": degrader.levels,
        "trials": degrader.trials,
        "params": params,
        "level_field": cls.level_field,
        "level_unit": cls.level_unit,
        # a plugin degrader that does not say what its levels are: named by its method
        "level_meaning": cls.level_meaning or f"levels of {degrader.method}",
    }
    return json.loads(canonical_json(out))


def criterion_as_dict(criterion: CriterionSpec, worlds: Sequence[str] = ()) -> dict:
    """A criterion as plain data: every parameter (defaults filled in), its levels (the
    criterion's default, ``"full"``, ``"degraded"`` or ``"all"``, when the file names none),
    its topic filter (None: every topic) and its worlds (``worlds``, the study's, when the
    file names none)."""
    made = criterion.make()
    out = {
        "id": criterion.id,
        "kind": criterion.kind,
        "levels": criterion.levels if criterion.levels is not None else made.default_levels,
        "topic_filter": _params(criterion.topic_filter) or None,
        "params": {f.name: getattr(made, f.name) for f in dataclasses.fields(made) if f.init},
        "worlds": list(criterion.worlds or worlds),
    }
    return json.loads(canonical_json(out))


def _world_tables(text: str) -> dict[str, dict]:
    """The ``[[worlds]]`` tables of a study file's text by id (none when there is no text)."""
    # imported here: the reader imports this module
    from metaeval.study.spec.load import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}
    tables = data.get("worlds")
    if not isinstance(tables, list):
        return {}
    return {t["id"]: t for t in tables if isinstance(t, dict) and isinstance(t.get("id"), str)}
