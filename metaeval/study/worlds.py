"""World instances: a study's worlds loaded into memory, and the cache a worker keeps of them.

:func:`load_world` builds the instance of a world and replicate the study file declares: a TREC
collection (its files read, its grades folded, its topics and runs selected, its evaluation
tensor built), a simulated world (generated from its identity-seeded stream) or a score-level
world (a model fitted to score files, then simulated). The result is a :class:`LoadedWorld`:
the tensor under the full judgments, the true judgments of a simulated world, and a cache of
what the tasks of the instance share (full-judgment scores, topic resamples, bootstrap samples,
significance tests).

A worker keeps the last world instances it loaded (a TREC collection is read and its tensor
built once per worker, a simulated world generated once), and the files and fitted score models
they were made from, so the tasks of one world that land on one worker share them.
:func:`adopt_world` puts in the cache a world loaded elsewhere (scattered by a Dask driver);
:func:`clear_cache` forgets them all.
"""

from __future__ import annotations

import atexit
import dataclasses
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from metaeval.study.plan import world_identity
from metaeval.study.seeding import generator, short_id
from metaeval.study.spec import ScoresWorld, SimWorld, StudySpec, TrecWorld, file_digest

_WORLDS: OrderedDict[str, LoadedWorld] = OrderedDict()
_KEEP_WORLDS = 2


@dataclass
class LoadedWorld:
    """One world instance in memory, with what its tasks share."""

    id: str
    replicate: int
    identity: dict
    tensor: Any  # EvalTensor under the full judgments
    truth: Any = None  # EvalTensor under the true judgments (simulated worlds)
    # the systems' latent effect (simulated worlds), or per measure their expected scores
    # (score-level worlds: measure name -> (S,))
    system_effect: np.ndarray | dict | None = None
    groups: dict | None = None  # run -> team, for degraders that pool by team
    runs: Any = None  # the RunSet (criteria about the collection itself read it)
    rel: int | float = 1
    cache: dict = field(default_factory=dict)
    pairs: np.ndarray | None = None  # (P, 2) the systems paired by a world of pairs

    def effect_of(self, measure: str) -> np.ndarray | None:
        """The truth a measure's ranking is compared with: the systems' latent effect, or
        their expected scores of the measure on a score-level world."""
        if isinstance(self.system_effect, dict):
            return self.system_effect[measure]
        return self.system_effect

    def topic_resamples(self, study_seed: int, n: int) -> np.ndarray:
        """(n, T) positions of the world's topics, drawn with replacement: the paired topic
        resamples on which every statistic of this world instance is recomputed (every
        criterion, measure, level and trial sees the same ones)."""
        key = ("topic_resamples", n)
        if key not in self.cache:
            rng = generator(study_seed, "topics", {"world": self.identity, "resamples": n})
            T = self.tensor.n_topics
            idx = rng.integers(0, T, size=(n, T))
            idx.setflags(write=False)
            self.cache[key] = idx
        return self.cache[key]


# ------------------------------------------------------------------------------ the cache
def load_world(spec: StudySpec, world_id: str, replicate: int) -> LoadedWorld:
    """The world instance, from this worker's cache or built now."""
    ident = world_identity(spec, world_id, replicate)
    key = f"{spec.seed}:{short_id(ident)}"
    if key in _WORLDS:
        _WORLDS.move_to_end(key)
        return _WORLDS[key]
    w = spec.world(world_id)
    if isinstance(w, TrecWorld):
        world = _load_trec(w, ident, replicate)
        _check_level(spec, w, world.tensor.qrels)
    elif isinstance(w, ScoresWorld):
        world = _load_scores(spec, w, ident, replicate)
    else:
        world = _load_simulated(spec, w, ident, replicate)
    if w.best_runs:
        world = _best_runs(world, **dict(w.best_runs))
    _WORLDS[key] = world
    while len(_WORLDS) > _KEEP_WORLDS:
        _WORLDS.popitem(last=False)
    return world


def adopt_world(spec: StudySpec, world: LoadedWorld) -> None:
    """Put a world loaded elsewhere (scattered by a Dask driver) into this worker's cache."""
    key = f"{spec.seed}:{short_id(world.identity)}"
    if key not in _WORLDS:
        _WORLDS[key] = world
        while len(_WORLDS) > _KEEP_WORLDS:
            _WORLDS.popitem(last=False)


def clear_cache() -> None:
    """Forget the worlds and files this process keeps (tests; memory)."""
    _WORLDS.clear()
    _FILES.clear()


# ------------------------------------------------------------------------------ TREC worlds
_FILES: OrderedDict[tuple, Any] = OrderedDict()
_KEEP_FILES = 2


def _read(kind: str, paths: tuple[Path, ...]):
    """The qrels or runs of these files, read once per process while they do not change:
    the worlds of a study often share their files (topic subsets, the best runs, a topic
    filter), and a worker that loads several of them parses the files once."""
    from metaeval.data import read_qrels, read_runs

    key = (kind, tuple(file_digest(p) for p in paths))
    if key not in _FILES:
        _FILES[key] = read_qrels(paths[0]) if kind == "qrels" else read_runs(list(paths))
        while len(_FILES) > _KEEP_FILES:
            _FILES.popitem(last=False)
    _FILES.move_to_end(key)
    return _FILES[key]


def _load_trec(w: TrecWorld, ident: dict, replicate: int) -> LoadedWorld:
    from metaeval.data import RunSet
    from metaeval.engine import EvalTensor
    from metaeval.evaluation import select

    qrels = _read("qrels", (w.qrels,))
    if w.top_grades is not None:
        qrels = qrels.fold_grades(w.top_grades)
    runs, qrels, _ = select(
        _read("runs", tuple(w.runs)), qrels, topics=_plain(w.topics), run_names=_plain(w.run_names)
    )
    if w.topics is not None:
        # The runs keep the selected topics only, so that the tensors built from them later
        # (the best runs, the collection's statistics) have no other topic to warn about.
        runs = RunSet([r.subset(qrels.topics) for r in runs])
    if w.ties != "trec_eval":
        runs = RunSet([r.with_ties(w.ties) for r in runs])
    tensor = EvalTensor.build(runs, qrels, depth=w.depth)
    return LoadedWorld(w.id, replicate, ident, tensor, rel=w.rel, runs=runs)


def _check_level(spec: StudySpec, w: TrecWorld, qrels) -> None:
    """Warn when a graded collection's world states no relevance level and the study has
    binary measures at the default one: grade 1 then counts as relevant, trec_eval's default
    but not every track's (TREC DL counts 2 and above)."""
    from metaeval._warnings import warn
    from metaeval.data.qrels import format_grade
    from metaeval.measures.base import states_no_level

    # one grade above 0 (binary, or a single real grade): the level changes nothing
    if w.rel_stated or w.top_grades is not None or len(qrels.levels) <= 2:
        return
    binary = [m.label for m in spec.measures if states_no_level(m.name)]
    if binary:
        top = format_grade(qrels.levels[-1])
        warn(
            f"world {w.id}: its qrels grade up to {top} and it states no relevance "
            f"level, so {', '.join(binary)} count{'s' if len(binary) == 1 else ''} every "
            "grade >= 1 as relevant. If the "
            "collection counts fewer grades (TREC DL: 2 and above), give the world rel = 2 "
            "(or top_grades)"
        )


def _best_runs(world: LoadedWorld, n: int, by: str) -> LoadedWorld:
    """The world with only its ``n`` runs of highest mean ``by`` under the full judgments (at
    the world's relevance level; ties keep the runs' order). The judgments are unchanged:
    they were made from every run, as a collection's are."""
    from metaeval.engine import EvalTensor
    from metaeval.measures import parse_measure

    means = np.nanmean(parse_measure(by).at_level(world.rel).compute(world.tensor), axis=1)
    keep = np.sort(np.argsort(-means, kind="stable")[:n])
    names = [world.tensor.runs[i] for i in keep]
    runs = world.runs.subset(names)
    tensor = EvalTensor.build(runs, world.tensor.qrels, depth=world.tensor.depth)
    truth = (
        None
        if world.truth is None
        else EvalTensor.build(runs, world.truth.qrels, warn_extra_topics=False)
    )
    return dataclasses.replace(
        world,
        tensor=tensor,
        truth=truth,
        runs=runs,
        system_effect=None if world.system_effect is None else world.system_effect[keep],
        groups=None if world.groups is None else {r: world.groups[r] for r in names},
        cache={},
    )


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


# ------------------------------------------------------------------------------ simulated
def _load_simulated(spec: StudySpec, w: SimWorld, ident: dict, replicate: int) -> LoadedWorld:
    from metaeval.engine import EvalTensor
    from simulators import make_world

    params = dict(w.params)
    world = make_world(
        w.preset,
        n_topics=w.n_topics,
        n_systems=w.n_systems,
        rng=generator(spec.seed, "world", ident),
        **params,
    )
    tensor = EvalTensor.build(world.runs, world.qrels, warn_extra_topics=False)
    return LoadedWorld(
        w.id,
        replicate,
        ident,
        tensor,
        truth=world.truth_tensor(),
        runs=world.runs,
        system_effect=np.asarray(world.system_effect, dtype=float),
        groups=dict(world.groups),
        rel=w.rel,
    )


# ------------------------------------------------------------------------------ scores worlds
@dataclass(frozen=True, eq=False)
class ScoreTable:
    """What a score-level world has in place of an evaluation tensor: its measures' (S, T)
    per-topic scores, with the names the criteria read."""

    runs: tuple
    values: dict  # measure name -> (S, T) scores

    @property
    def n_runs(self) -> int:
        return len(self.runs)

    @property
    def n_topics(self) -> int:
        return next(iter(self.values.values())).shape[1]

    @property
    def topics(self) -> tuple:
        return tuple(f"t{i + 1:03d}" for i in range(self.n_topics))

    @property
    def answered(self) -> np.ndarray:
        return np.ones((self.n_runs, self.n_topics), dtype=bool)

    def scores_of(self, measure: str) -> np.ndarray:
        if measure not in self.values:
            held = ", ".join(self.values)
            raise ValueError(f"this world holds scores of {held} only, not {measure}")
        return self.values[measure]


_MODELS: OrderedDict[str, Any] = OrderedDict()
_KEEP_MODELS = 2
# pyvinecopulib's copulas must be freed before the interpreter shuts down, or its bindings
# print a leak report of every copula still held
atexit.register(_MODELS.clear)


def _fitted_scores(w: ScoresWorld):
    """The fitted model of a scores world's files (margins; a pair's copula is fitted when a
    replicate first draws it), kept per process: fitting is deterministic, so the replicates
    a worker runs share one fit and reuse each other's pair copulas without changing a number."""
    from simulators.scores import ScoreCollection, ScoreWorld, read_score_matrix

    ident = w.identity()
    ident.pop("n_topics"), ident.pop("pairs"), ident.pop("delta")
    key = short_id(ident)
    if key not in _MODELS:
        frames = [read_score_matrix(p) for p in w.scores]
        support = [None if s is None else np.asarray(s) for s in w.support]
        options = dict(
            criterion=w.select, copula_families=w.copula_families, drop_bottom=w.drop_bottom
        )
        if w.design == "pairs":  # one measure, a matrix per collection
            options.update(families=w.margins[0], support=support[0])
            model = [ScoreCollection.fit(p.stem, f, **options) for p, f in zip(w.scores, frames)]
        else:
            # the copula's pseudo-observations break ties at random, seeded by the first file
            seed = int(ident["scores"][0][:15], 16)
            if len(w.measures) == 1:
                scores = frames[0]
                options.update(families=w.margins[0], support=support[0])
            else:  # a matrix per measure, one copula over them all
                scores = dict(zip(w.measures, frames))
                options.update(
                    families=dict(zip(w.measures, w.margins)),
                    support=dict(zip(w.measures, support)),
                )
            model = ScoreWorld.fit(scores, copula=w.copula, rng=seed, **options)
        _MODELS[key] = model
        while len(_MODELS) > _KEEP_MODELS:
            _MODELS.popitem(last=False)
    _MODELS.move_to_end(key)
    return _MODELS[key]


def _load_scores(spec: StudySpec, w: ScoresWorld, ident: dict, replicate: int) -> LoadedWorld:
    from simulators.scores import simulate_pairs

    model = _fitted_scores(w)
    rng = generator(spec.seed, "world", ident)
    if w.design == "pairs":
        sim = simulate_pairs(model, w.pairs, w.n_topics, delta=w.delta, rng=rng)
        names = tuple(f"p{k // 2 + 1:06d}{'ab'[k % 2]}" for k in range(2 * w.pairs))
        values, effect, pairs = sim.scores[None], sim.system_effect[None], sim.pairs
    else:
        names, values = model.runs, model.simulate(w.n_topics, rng)
        effect, pairs = model.system_effect, None
        if model.measures is None:
            values, effect = values[None], effect[None]
    table = ScoreTable(tuple(names), dict(zip(w.measures, values)))
    effects = {m: np.asarray(e, float) for m, e in zip(w.measures, effect)}
    return LoadedWorld(w.id, replicate, ident, table, system_effect=effects, pairs=pairs)


__all__ = [
    "LoadedWorld",
    "ScoreTable",
    "load_world",
    "adopt_world",
    "clear_cache",
]
