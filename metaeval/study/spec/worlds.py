"""Reading a study file's ``[[worlds]]``: TREC collections, simulated worlds and score-level
worlds, with their data files checked when the file is read."""

from __future__ import annotations

import dataclasses
import glob as globlib
import json
import math
from pathlib import Path
from typing import Any

from metaeval._validation import whole_as_int
from metaeval.study.spec.model import ScoresWorld, SimWorld, TrecWorld, World
from metaeval.study.spec.table import (
    SpecError,
    _absolute,
    _at_least_two_systems,
    _finite,
    _freeze,
    _identifier,
    _one_of,
    _param_error,
    _positive,
    _resolve,
    _Table,
    toml_kind,
)


def _files(t: _Table, base: Path, key: str, what: str) -> list[Path]:
    """The files ``key`` names: a path or glob, or a list of them (relative to ``base``),
    each matching at least one file; in order, without repeats."""
    given = t.take(key, (str, list))
    patterns = [given] if isinstance(given, str) else given
    files: list[Path] = []
    for i, pattern in enumerate(patterns):
        where = key if isinstance(given, str) else f"{key}[{i}]"
        if not isinstance(pattern, str):
            raise t.error(where, f"must be a path or glob, got {toml_kind(pattern)}")
        full = str(_absolute(base, pattern))
        matched = sorted(Path(p) for p in globlib.glob(full) if Path(p).is_file())
        if not matched:
            raise t.error(where, f"{pattern!r} matches no file ({full})")
        files.extend(m for m in matched if m not in files)
    if not files:
        raise t.error(key, f"must name at least one {what} (a path or a glob)")
    return files


def _best_runs(t: _Table) -> tuple:
    """``best_runs = { n = 15, by = "AP" }``: keep the n runs with the highest mean of a
    measure under the full judgments (at the world's relevance level)."""
    best = t.table("best_runs", None)
    if best is None:
        return ()
    n = best.take("n", int, check=_at_least_two_systems)
    by = best.take("by", str, "AP")
    best.finish("n, by")
    try:
        from metaeval.measures import canonical_name

        by = canonical_name(by)
    except (TypeError, ValueError) as err:
        raise best.error("by", str(err)) from None
    return (("by", by), ("n", n))


def _level(value: int | float) -> int | float:
    """A relevance level: a number > 0 (real-valued grades: 0.5); a whole one as an int, so
    that ``rel = 2.0`` is the world ``rel = 2`` is."""
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"must be a relevance level, a number > 0, got {value!r}")
    return whole_as_int(value)


def _tie_policy(value: str) -> str:
    from metaeval.data.run import TIES

    if value not in TIES:
        raise ValueError(f"must be one of {', '.join(TIES)}, got {value!r}")
    return value


def _world(t: _Table, base: Path) -> World:
    wid = t.take("id", str, check=_identifier("a world id"))
    kind = t.take("kind", str)
    rel_stated = "rel" in t.data
    rel = t.take("rel", (int, float), 1, check=_level)
    best_runs = _best_runs(t)
    if kind == "trec":
        qrels = _resolve(base, t.take("qrels", str), t, "qrels")
        files = _files(t, base, "runs", "run file")
        if len(files) < 2:  # a file holds one run
            raise t.error(
                "runs",
                "names one run file; a world needs at least 2 runs (every criterion compares "
                "systems)",
            )
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
        ties = t.take("ties", str, "trec_eval", check=_tie_policy)
        t.finish(
            "id, kind, qrels, runs, topics, run_names, rel, top_grades, depth, ties, best_runs"
        )
        return TrecWorld(
            id=wid,
            qrels=qrels,
            runs=tuple(files),
            topics=_freeze(topics),
            run_names=_freeze(run_names),
            rel=rel,
            top_grades=top_grades,
            depth=depth,
            ties=ties,
            best_runs=best_runs,
            rel_stated=rel_stated,
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
                raise _param_error(params_t, err, list(params)) from None
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
    from simulators.margins import CONTINUOUS_FAMILIES, DISCRETE_FAMILIES
    from simulators.scores import COPULA_FAMILIES, COPULAS, DESIGNS, TWO_PARAMETER_TAWNS

    if rel != 1 or best_runs:
        raise t.error("rel" if rel != 1 else "best_runs", "a scores world has no judgments")
    files = _files(t, base, "scores", "score matrix")
    from simulators.scores import read_score_matrix, same_collection

    frames = []
    for f in files:
        try:
            frames.append(read_score_matrix(f))  # a bad file is named now, not in every task
        except ValueError as err:
            raise t.error("scores", str(err)) from None
    measures = _score_measures(t)
    n_topics = t.take("n_topics", int, check=_positive)
    replicates = t.take("replicates", int, 1, check=_positive)
    design = t.take("design", str, "systems", check=_one_of(DESIGNS))
    if design == "pairs" and len(measures) > 1:
        raise t.error("measure", "a pairs world simulates one measure; give one")
    if design == "systems" and len(files) != len(measures):
        raise t.error(
            "scores",
            f"a systems world fits one collection: give one file, not {len(files)}"
            if len(measures) == 1
            else f"give one file per measure ({len(measures)}), in the order of measure, "
            f"not {len(files)}",
        )
    if design == "systems":
        try:  # the measures of one collection
            same_collection(dict(zip(measures, frames)))
        except ValueError as err:
            raise t.error("scores", f"{err} ({', '.join(f.name for f in files)})") from None
    pairs = t.take("pairs", int, 1000, check=_positive)
    delta = t.take("delta", (float, int), 0.0, check=_finite)
    copula = t.take("copula", str, "gaussian", check=_one_of(COPULAS))
    support = _per_measure(t, "support", measures, _support)
    margins = _per_measure(t, "margins", measures, _margin_families)
    for m, fams, sup in zip(measures, margins, support):
        allowed = CONTINUOUS_FAMILIES if sup is None else DISCRETE_FAMILIES
        if fams is not None and not set(fams) <= set(allowed):
            has = "no support" if sup is None else "a support"
            raise t.error("margins", f"{m} has {has}: its families are {', '.join(allowed)}")
    select = t.take("select", str, "aic", check=_one_of(("aic", "bic")))
    copula_families = t.take("copula_families", list, None)
    for i, f in enumerate(copula_families or []):
        if f not in COPULA_FAMILIES:
            raise t.error(
                f"copula_families[{i}]", f"must be one of {', '.join(COPULA_FAMILIES)}, got {f!r}"
            )
    two_parameter = [f for f in copula_families or [] if f in TWO_PARAMETER_TAWNS]
    if two_parameter and design == "systems" and copula == "vine":
        raise t.error(
            "copula_families",
            f"{two_parameter[0]!r} is fitted for a pair of runs only; a vine takes "
            "pyvinecopulib's families (its 'tawn' has three parameters)",
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
        measures=measures,
        n_topics=n_topics,
        replicates=replicates,
        design=design,
        pairs=pairs,
        delta=delta,
        copula=copula,
        margins=margins,
        support=support,
        select=select,
        copula_families=None if copula_families is None else tuple(copula_families),
        drop_bottom=drop_bottom,
    )


def _score_measures(t: _Table) -> tuple[str, ...]:
    """``measure``: the name of the scores' measure, or a list of the names of several."""
    from metaeval.measures import canonical_name

    given = t.take("measure", (str, list))
    names = [given] if isinstance(given, str) else given
    if not names:
        raise t.error("measure", "must name at least one measure")
    out: list[str] = []
    for i, name in enumerate(names):
        where = "measure" if isinstance(given, str) else f"measure[{i}]"
        if not isinstance(name, str):
            raise t.error(where, f"must be a measure's name, got {toml_kind(name)}")
        try:
            name = canonical_name(name)
        except (TypeError, ValueError) as err:
            raise t.error(where, str(err)) from None
        if name in out:
            raise t.error(where, f"{name} is listed twice")
        out.append(name)
    return tuple(out)


def _per_measure(t: _Table, key: str, measures: tuple, check) -> tuple:
    """A value given for every measure (a list) or per measure (a table keyed by measure
    name), as a tuple in the order of ``measures`` (None where a table leaves one out)."""
    from metaeval.measures import canonical_name

    given = t.take(key, (list, dict), None)
    if given is None:
        return (None,) * len(measures)
    if isinstance(given, list):
        value = check(t, key, given)
        return (value,) * len(measures)
    values: dict = {}
    for name, value in given.items():
        try:
            canonical = canonical_name(name)
        except (TypeError, ValueError):
            canonical = None
        if canonical not in measures:
            known = ", ".join(measures)
            raise t.error(f"{key}.{name}", f"is not a measure of this world ({known})")
        if not isinstance(value, list):
            raise t.error(f"{key}.{name}", f"must be a list, got {toml_kind(value)} {value!r}")
        values[canonical] = check(t, f"{key}.{name}", value)
    return tuple(values.get(m) for m in measures)


def _support(t: _Table, where: str, values: list) -> tuple:
    if len(values) < 2 or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values
    ):
        raise t.error(where, "must list at least two possible scores (finite numbers)")
    return tuple(sorted(float(v) for v in values))


def _margin_families(t: _Table, where: str, values: list) -> tuple:
    from simulators.margins import CONTINUOUS_FAMILIES, DISCRETE_FAMILIES

    known = (*CONTINUOUS_FAMILIES, *DISCRETE_FAMILIES)
    for i, m in enumerate(values):
        if m not in known:
            raise t.error(f"{where}[{i}]", f"must be one of {', '.join(known)}, got {m!r}")
    return tuple(values)


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
