"""Reading a whole study file (:func:`load_spec`): its sections in order, each name a later
section uses checked against the earlier ones."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as a package
    import tomli as tomllib

from metaeval.study.spec.model import (
    DEFAULT_CONFIDENCE,
    DEFAULT_TOPIC_RESAMPLES,
    FULL,
    SCHEMA,
    ClaimSpec,
    CriterionSpec,
    DegraderSpec,
    MeasureSpec,
    StudySpec,
)
from metaeval.study.spec.retarget import WorldChange, retarget
from metaeval.study.spec.table import (
    SpecError,
    _confidence,
    _freeze,
    _identifier,
    _non_negative,
    _param_error,
    _positive,
    _resolve,
    _Table,
    _unique,
    toml_kind,
)
from metaeval.study.spec.worlds import _world


# ------------------------------------------------------------------------------- loading
def load_spec(
    path: str | Path, *, text: str | None = None, changes: Sequence[WorldChange] = ()
) -> StudySpec:
    """Read and check a study file.

    Parameters
    ----------
    path : str or Path
        The study file. Relative paths inside it are relative to its folder.
    text : str, optional
        The file's text, if already read (``path`` still anchors relative paths).
    changes : sequence of WorldChange, optional
        Worlds to replace (:mod:`metaeval.study.spec.retarget`: the ``--world`` and ``--worlds``
        options): the study read is the file with those worlds' data replaced and, if asked,
        their ids renamed in its criteria and claims.

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
    notes: list[str] = []
    if changes:
        text, notes = retarget(text, list(changes), label, base)
        data = tomllib.loads(text)
        label = f"{label} (with its worlds replaced)"
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
    _check_bounded_measures(measures, criteria, top)

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
        world_args=tuple(a for args in dict.fromkeys(c.args for c in changes) for a in args),
        world_notes=tuple(notes),
    )


def _check_score_worlds(worlds, measures, criteria, top: _Table) -> None:
    """A score-level world has its measures' scores and no judgments: the study must list
    its measures, and run on it only criteria that read scores (a pairs world: error rates)."""
    listed = {m.name for m in measures}
    for w in worlds:
        if w.kind != "scores":
            continue
        for name in w.measures:
            if name not in listed:
                raise top.error(
                    "measures", f"world {w.id!r} holds {name} scores: list {name} among them"
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


def _check_bounded_measures(measures, criteria, top: _Table) -> None:
    """The width of the bounds over unjudged documents needs measures that have them."""
    from metaeval.measures import parse_measure
    from metaeval.measures.bounds import WITHOUT_BOUNDS

    for c in criteria:
        if c.kind != "bound_width":
            continue
        for m in measures:
            if not parse_measure(m.name).has_bounds():
                raise top.error(
                    "criteria",
                    f"{c.id} (bound_width) needs measures with bounds over unjudged documents; "
                    f"{m.name} has none (every built-in measure has them but {WITHOUT_BOUNDS})",
                )


_TOP_KEYS = "schema, study, worlds, degraders, measures, criteria, claims"


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
            f"must be a measure name or a table {{name, aggregate, label}}, got {toml_kind(entry)}",
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


def _claim(t: _Table, criteria, measures, worlds, degraders) -> ClaimSpec:
    """A ``[[claims]]`` entry: every name it uses must exist in the study. Its check is read
    and validated by the class of its kind (:func:`metaeval.report.claims.read_check`), which
    also judges it when a report is drawn."""
    # imported when a claim is read: the claims import this module's defaults at import time
    from metaeval.report.claims import StudyNames, read_check

    cid = t.take("id", str, check=_identifier("a claim id"))
    text = t.take("text", str)
    source = t.take("source", str, "")
    c = t.table("check")
    t.finish("id, text, source, check")
    study = StudyNames(
        criteria=tuple(criteria),
        measures=tuple(m.label for m in measures),
        worlds=tuple(w.id for w in worlds),
        levels=frozenset({str(lv) for d in degraders for lv in d.levels} | {FULL}),
        degraders=tuple(degraders),
        trec_worlds=frozenset(w.id for w in worlds if w.kind == "trec"),
    )
    check = read_check(c, study)
    return ClaimSpec(cid, text, source, _freeze(check.to_dict()))
