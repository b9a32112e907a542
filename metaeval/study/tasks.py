"""What a worker does: load a world instance, damage its judgments, run the criteria.

:func:`run_task` is the one function executors call. It never raises: it returns an
:class:`Outcome` holding either the task's tables or the error. Everything random in it comes
from identity-seeded streams (:mod:`metaeval.study.seeding`), so its result does not depend on
which worker runs it, or when.

A worker keeps the last world instances it loaded (a TREC collection is read and its tensor built
once per worker, a simulated world generated once), with the full-judgment scores, the shared
resamples and the full-judgment significance tests, so the tasks of one world that land on one
worker share them.
"""

from __future__ import annotations

import atexit
import dataclasses
import time
import traceback
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from metaeval.study.criteria import RESAMPLES, rows
from metaeval.study.plan import Task, Unit, unit_row, world_identity
from metaeval.study.seeding import generator, short_id
from metaeval.study.spec import FULL, ScoresWorld, SimWorld, StudySpec, TrecWorld
from metaeval.study.store import UNITS

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
    system_effect: np.ndarray | None = None
    groups: dict | None = None  # run -> team, for degraders that pool by team
    runs: Any = None  # the RunSet (criteria about the collection itself read it)
    rel: int = 1
    cache: dict = field(default_factory=dict)
    pairs: np.ndarray | None = None  # (P, 2) the systems paired by a world of pairs

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


@dataclass
class Outcome:
    """What a task returns to the driver."""

    task_id: str
    tables: dict[str, pd.DataFrame] | None = None
    error: str | None = None
    traceback: str | None = None
    seconds: float = 0.0
    criteria_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


# ------------------------------------------------------------------------------ worlds
def fold_grades(qrels, top_grades: int):
    """Keep the ``top_grades`` highest grades of the collection as 1..top_grades and make every
    lower grade 0 (non-relevant). On a collection judged 0..c with c <= top_grades this changes
    nothing (a binary collection stays binary); on TREC DL (0..3) with 2 it is the track's
    convention that grade 1 ("related") is not relevant: 0, 1 -> 0, 2 -> 1, 3 -> 2. Unjudged
    entries (negative grades) stay."""
    g = qrels.grades.astype(np.int16)
    shift = max(int(g.max(initial=0)) - top_grades, 0)
    folded = np.where(g < 0, g, np.maximum(g - shift, 0))
    return qrels.with_grades(folded.astype(np.int8))


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


_FILES: OrderedDict[tuple, Any] = OrderedDict()
_KEEP_FILES = 2


def _read(kind: str, paths: tuple[Path, ...]):
    """The qrels or runs of these files, read once per process while they do not change:
    the worlds of a study often share their files (topic subsets, the best runs, a topic
    filter), and a worker that loads several of them parses the files once."""
    from metaeval.data import read_qrels, read_runs
    from metaeval.study.spec import file_digest

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
        qrels = fold_grades(qrels, w.top_grades)
    runs, qrels, _ = select(
        _read("runs", tuple(w.runs)), qrels, topics=_plain(w.topics), run_names=_plain(w.run_names)
    )
    if w.topics is not None:
        # The runs keep the selected topics only, so that the tensors built from them later
        # (the best runs, the collection's statistics) have no other topic to warn about.
        runs = RunSet([r.subset(qrels.topics) for r in runs])
    tensor = EvalTensor.build(runs, qrels, depth=w.depth)
    return LoadedWorld(w.id, replicate, ident, tensor, rel=w.rel, runs=runs)


def _best_runs(world: LoadedWorld, n: int, by: str) -> LoadedWorld:
    """The world with only its ``n`` runs of highest mean ``by`` under the full judgments (at
    the world's relevance level; ties keep the runs' order). The judgments are unchanged:
    they were made from every run, as a collection's are."""
    from metaeval.engine import EvalTensor
    from metaeval.measures import parse_measure

    means = np.nanmean(at_level(parse_measure(by), world.rel).compute(world.tensor), axis=1)
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


def at_level(measure, rel: int):
    """The measure at a world's relevance level: a binary measure left at its default level 1
    takes the world's ``rel`` (TREC DL counts grade 2 and above as relevant)."""
    if rel != 1 and getattr(measure, "rel", None) == 1:
        return dataclasses.replace(measure, rel=rel)
    return measure


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


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


@dataclass(frozen=True, eq=False)
class ScoreTable:
    """What a score-level world has in place of an evaluation tensor: one measure's (S, T)
    per-topic scores, with the names the criteria read."""

    runs: tuple
    measure: str
    values: np.ndarray

    @property
    def n_runs(self) -> int:
        return self.values.shape[0]

    @property
    def n_topics(self) -> int:
        return self.values.shape[1]

    @property
    def topics(self) -> tuple:
        return tuple(f"t{i + 1:03d}" for i in range(self.n_topics))

    @property
    def answered(self) -> np.ndarray:
        return np.ones(self.values.shape, dtype=bool)

    def scores_of(self, measure: str) -> np.ndarray:
        if measure != self.measure:
            raise ValueError(f"this world holds {self.measure} scores only, not {measure}")
        return self.values


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
        options = dict(
            families=w.margins,
            criterion=w.select,
            support=None if w.support is None else np.asarray(w.support),
            copula_families=w.copula_families,
            drop_bottom=w.drop_bottom,
        )
        if w.design == "pairs":
            model = [ScoreCollection.fit(p.stem, f, **options) for p, f in zip(w.scores, frames)]
        else:
            # the copula's pseudo-observations break ties at random, seeded by the file
            seed = int(ident["scores"][0][:15], 16)
            model = ScoreWorld.fit(frames[0], copula=w.copula, rng=seed, **options)
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
        values, effect, pairs = sim.scores, sim.system_effect, sim.pairs
    else:
        names, values = model.runs, model.simulate(w.n_topics, rng)
        effect, pairs = model.system_effect, None
    table = ScoreTable(tuple(names), w.measure, values)
    return LoadedWorld(
        w.id, replicate, ident, table, system_effect=np.asarray(effect, float), pairs=pairs
    )


# ------------------------------------------------------------------------------ context
class Context:
    """What a criterion sees: one world instance at one level of one trial.

    Scores are computed once per measure and level and shared by every criterion of the task;
    full-judgment scores, true scores, resamples and full-judgment significance tests are
    computed once per world instance and worker.

    A context sees the world's topics narrowed by its criterion's topic filter and, on topic
    resample r (:meth:`on_resample`), the topics of that resample (with repeats): every score
    matrix it hands out has those columns, so a criterion computes the same statistic on the
    observed topics and on each resample without knowing which it is given.
    """

    def __init__(
        self,
        spec: StudySpec,
        world: LoadedWorld,
        tensor,
        *,
        level: str,
        degrader: str,
        trial: int,
        level_cache: dict,
    ):
        self.spec, self.world, self.tensor = spec, world, tensor
        self.level, self.degrader, self.trial = level, degrader, trial
        self.is_full = level == FULL
        self._level_cache = level_cache
        self._criterion = None
        self._keep = None  # the criterion's topic filter: a mask over the world's topics
        self._topics = None  # positions of the world's topics this context sees (None: all)
        self._resample = 0  # 0: the observed topics; r >= 1: topic resample r

    def _copy(self, **changes) -> Context:
        bound = object.__new__(Context)
        bound.__dict__.update(self.__dict__)
        bound.__dict__.update(changes)
        return bound

    def bind(self, criterion_spec) -> Context:
        """The same context for one criterion: its topic filter and its random streams."""
        keep = self._topic_filter(dict(criterion_spec.topic_filter))
        return self._copy(
            _criterion=criterion_spec,
            _keep=keep,
            _topics=None if keep is None else np.flatnonzero(keep),
            _resample=0,
        )

    @property
    def level_cache(self) -> dict:
        """What the criteria of this level (and trial) share: scores, tests, per-list tables."""
        return self._level_cache

    def topic_weights(self) -> np.ndarray:
        """(T,) how many times each topic of the world is among the topics this context sees
        (1 or 0 on the observed topics, any count on a resample)."""
        T = self.world.tensor.n_topics
        if self._topics is None:
            return np.ones(T)
        return np.bincount(self._topics, minlength=T).astype(float)

    @property
    def trials_in_topics(self) -> bool:
        """Whether the topic resamples carry the variation between this level's trials: true
        under the full judgments (one trial) and for a degrader that damages each topic
        independently (a topic resample then draws its topics' damage with them)."""
        if self.is_full:
            return True
        return bool(self.spec.degrader(self.degrader).make().per_topic)

    @property
    def n_resamples(self) -> int:
        """The number of topic resamples the study recomputes statistics on."""
        return self.spec.topic_resamples

    @property
    def resample(self) -> int:
        """0 on the observed topics, r on topic resample r."""
        return self._resample

    def on_resample(self, r: int) -> Context:
        """The same context on topic resample ``r`` (1 .. :attr:`n_resamples`) of the world
        instance: its topics drawn with replacement, then narrowed by the topic filter (so a
        filtered criterion sees as many of its topics as the resample happened to draw)."""
        if not 1 <= r <= self.n_resamples:
            raise ValueError(f"resample must be in 1..{self.n_resamples}, got {r}")
        idx = self.world.topic_resamples(self.spec.seed, self.n_resamples)[r - 1]
        if self._keep is not None:
            idx = idx[self._keep[idx]]
        return self._copy(_topics=idx, _resample=r)

    # ---------------------------------------------------------------- basics
    @property
    def rel(self) -> int:
        return self.world.rel

    @property
    def n_topics(self) -> int:
        return self.tensor.n_topics if self._topics is None else len(self._topics)

    @property
    def system_effect(self) -> np.ndarray | None:
        return self.world.system_effect

    def measure(self, label: str):
        """The measure of a label, with the world's relevance level replacing a binary
        measure's default level 1."""
        from metaeval.measures import parse_measure

        return at_level(parse_measure(self.spec.measure(label).name), self.rel)

    def aggregate_of(self, label: str) -> str:
        """How the measure's per-topic scores become system scores (mean, gmean, ...)."""
        return self.spec.measure(label).aggregate

    def means(self, scores: np.ndarray, label: str) -> np.ndarray:
        """(S,) system scores: the measure's aggregate over topics."""
        from metaeval.aggregate import parse_aggregate

        return parse_aggregate(self.aggregate_of(label))(scores, axis=1)

    # ---------------------------------------------------------------- scores
    def _all_topics(self, which: str, label: str) -> np.ndarray | None:
        """(S, T) per-topic scores on every topic of the world: ``which`` is "scores" (this
        level), "full_scores" or "truth_scores" (None for a real collection)."""
        if which == "scores" and self.is_full:
            which = "full_scores"
        if which == "scores":
            cache, tensor = self._level_cache, self.tensor
        elif which == "full_scores":
            cache, tensor = self.world.cache.setdefault("full", {}), self.world.tensor
        elif self.world.truth is None:
            return None
        else:
            cache, tensor = self.world.cache.setdefault("truth", {}), self.world.truth
        key = self.spec.measure(label).name  # labels differing by aggregate share scores
        if key not in cache:
            if isinstance(tensor, ScoreTable):
                cache[key] = tensor.scores_of(key)
                return cache[key]
            values = self.measure(label).compute(tensor)
            if self.spec.missing == "skip":
                values = np.where(tensor.answered, values, np.nan)
            cache[key] = values
        return cache[key]

    def _seen(self, values: np.ndarray | None) -> np.ndarray | None:
        return values if values is None or self._topics is None else values[:, self._topics]

    def scores(self, name: str) -> np.ndarray:
        """(S, T) per-topic scores at this level."""
        return self._seen(self._all_topics("scores", name))

    def full_scores(self, name: str) -> np.ndarray:
        """(S, T) per-topic scores under the full judgments."""
        return self._seen(self._all_topics("full_scores", name))

    def truth_scores(self, name: str) -> np.ndarray | None:
        """(S, T) per-topic scores under the true judgments, or None for a real collection."""
        return self._seen(self._all_topics("truth_scores", name))

    def resample_positions(self) -> list[np.ndarray]:
        """The topics of every topic resample (r = 1..R) as positions among the world's
        topics, narrowed by the topic filter: what ``on_resample(r)`` sees."""
        idx = self.world.topic_resamples(self.spec.seed, self.n_resamples)
        if self._keep is None:
            return list(idx)
        return [i[self._keep[i]] for i in idx]

    def resampled_scores(self, name: str, which: str = "scores") -> np.ndarray | None:
        """(R, S, n) per-topic scores on every topic resample at once (``which`` as in
        :meth:`_all_topics`), or None when there is no such judgment set or when the
        resamples differ in size (a topic filter): then ask each resample in turn."""
        positions = self.resample_positions()
        values = self._all_topics(which, name)
        if values is None or len({len(p) for p in positions}) != 1:
            return None
        return np.moveaxis(values[:, np.stack(positions)], 1, 0)

    def resampled_means(self, name: str, which: str = "scores") -> np.ndarray | None:
        """(R, S) system scores of a measure on every topic resample (``which`` as in
        :meth:`_all_topics`; None for a judgment set the world does not have): the values
        ``means(scores(name), name)`` gives on each resample, computed at once."""
        from metaeval.aggregate import parse_aggregate

        if self._all_topics(which, name) is None:
            return None
        aggregate = parse_aggregate(self.aggregate_of(name))
        stacked = self.resampled_scores(name, which)
        if stacked is not None:
            # the topics are the last, contiguous axis, as on one resample: the same sums
            return aggregate(np.ascontiguousarray(stacked), axis=-1)
        values = self._all_topics(which, name)
        return np.stack([aggregate(values[:, p], axis=1) for p in self.resample_positions()])

    def _topic_filter(self, topic_filter: dict) -> np.ndarray | None:
        if not topic_filter:
            return None
        counts = self.world.tensor.grade_counts[:, topic_filter["grade"] :].sum(axis=1)
        keep = np.ones(len(counts), dtype=bool)
        if topic_filter.get("at_most") is not None:
            keep &= counts <= topic_filter["at_most"]
        if topic_filter.get("at_least") is not None:
            keep &= counts >= topic_filter["at_least"]
        return keep

    # ---------------------------------------------------------------- random streams
    def stream(self, kind: str, *extra) -> np.random.Generator:
        """A Generator on an identity-seeded stream of this world instance and criterion."""
        ident = {
            "world": self.world.identity,
            "criterion": self._criterion.identity(),
            "extra": list(extra),
        }
        return generator(self.spec.seed, kind, ident)

    def resamples(self, method: str, B: int | None):
        """The bootstrap samples (or Tukey permutations) of this world instance for ``method``
        and ``B``: drawn once, shared by every measure, level and criterion that asks for the
        same resampling (common random numbers)."""
        from metaeval.meta import resamples

        # The draws are positions 0..n-1 of the topics the context sees, so a topic resample
        # (or a filter) with the same number of topics shares them: the test on a resample is
        # the test on the observed topics with the topics replaced, nothing else.
        ident = {
            "method": method,
            "B": B,
            "topic_filter": [] if self._criterion is None else list(self._criterion.topic_filter),
            "n_topics": self.n_topics,
        }
        key = repr(sorted(ident.items()))
        shared = self.world.cache.setdefault("resamples", {})
        if key not in shared:
            rng = generator(
                self.spec.seed, "resample", {"world": self.world.identity, "resampling": ident}
            )
            shared[key] = resamples(
                method, n_topics=self.n_topics, n_systems=self.world.tensor.n_runs, B=B, rng=rng
            )
        return shared[key]

    def pair_tests(self, name: str, criterion, *, full: bool = False):
        """The significance test of every pair of systems on a measure at this level (or under
        the full judgments), with the shared resamples: a
        :class:`~metaeval.meta.discrimination.PairTests`, computed once per measure, level,
        topic resample and test settings."""
        from metaeval.meta._resampling import check_B
        from metaeval.meta.discrimination import pair_tests

        full = full or self.is_full
        shared = self.resamples(criterion.method, criterion.B)
        check_B(shared.B, criterion.alpha)  # warns when no ASL can fall below alpha
        cache = self.world.cache.setdefault("full_tests", {}) if full else self._level_cache
        key = (
            "tests",
            criterion.method,
            criterion.B,
            criterion.alpha,
            tuple(self._criterion.topic_filter),
            self._resample,
            name,
        )
        if key not in cache:
            scores = self.full_scores(name) if full else self.scores(name)
            cache[key] = pair_tests(scores, criterion.method, criterion.alpha, shared)
        return cache[key]

    def pair_tests_resampled(self, name: str, criterion, *, full: bool = False) -> None:
        """Run :meth:`pair_tests` on every topic resample at once (the bootstrap tests of all
        resamples of the same size share their draws, so they are one computation), keeping
        the results where :meth:`pair_tests` finds them on each resample."""
        from metaeval.meta.discrimination import pair_tests_many

        full = full or self.is_full
        cache = self.world.cache.setdefault("full_tests", {}) if full else self._level_cache
        base = ("tests", criterion.method, criterion.B, criterion.alpha)
        base += (tuple(self._criterion.topic_filter),)
        todo = {}
        for r, p in enumerate(self.resample_positions(), 1):
            if (*base, r, name) not in cache:
                todo.setdefault(len(p), []).append((r, p))
        values = self._all_topics("full_scores" if full else "scores", name)
        for group in todo.values():
            shared = self.on_resample(group[0][0]).resamples(criterion.method, criterion.B)
            tests = pair_tests_many(
                values, np.stack([p for _, p in group]), criterion.method, criterion.alpha, shared
            )
            for (r, _), t in zip(group, tests):
                cache[(*base, r, name)] = t


# ------------------------------------------------------------------------------ the task
def _load_plugins(spec: StudySpec) -> None:
    from metaeval.measures import load_plugin

    for path in spec.plugins:
        load_plugin(path)


def _degraded(spec: StudySpec, world: LoadedWorld, task: Task) -> dict[str, Any]:
    """The task's damaged judgment sets by level (one trial, every level)."""
    dspec = spec.degrader(task.degrader)
    degrader = dspec.make()
    if world.groups is not None and getattr(degrader, "groups", "absent") is None:
        degrader = dataclasses.replace(degrader, groups=world.groups)
    ident = {"world": world.identity, "degrader": dspec.identity(), "trial": task.trial}
    sets = degrader.trial(
        world.tensor, rng=generator(spec.seed, "degrade", ident), trial=task.trial
    )
    return {str(j.level): j for j in sets}


def _draws(observed: pd.DataFrame, resampled: pd.DataFrame, ctx: Context) -> pd.DataFrame:
    """The ``resamples`` rows of a criterion: for every row of its ``results`` (same keys,
    same order), the number of topics its observed value rests on, whether the topic
    resamples carry the variation between trials, and its R values on the topic resamples
    (float32; NaN where a resample gave no value)."""
    keys = ["measure", "other", "statistic", "x"]
    R = ctx.n_resamples
    row = pd.MultiIndex.from_frame(observed[keys].fillna({"x": -np.inf}))
    values = np.full((len(observed), R), np.nan, dtype=np.float32)
    if len(resampled):
        where = row.get_indexer(pd.MultiIndex.from_frame(resampled[keys].fillna({"x": -np.inf})))
        found = where >= 0
        values[where[found], resampled["resample"].to_numpy()[found] - 1] = resampled[
            "value"
        ].to_numpy()[found]
    out = observed[keys].reset_index(drop=True)
    out["n_topics"] = ctx.n_topics
    out["trials_in_topics"] = ctx.trials_in_topics
    out["values"] = list(values)
    return out


def _annotate(frame: pd.DataFrame, units: dict, pairwise: bool) -> pd.DataFrame:
    """Add each row's unit and its readable identity columns."""
    if pairwise:
        keys = [
            (a, b) if (a, b) in units else (b, a)
            for a, b in zip(frame["measure"], frame.get("other", frame["measure"]))
        ]
    else:
        keys = [(m, "") for m in frame["measure"]]
    head = pd.DataFrame([unit_row(units[k]) for k in keys]).drop(columns=["measure", "other"])
    body = frame.reset_index(drop=True)
    return pd.concat([head, body], axis=1)


def _sort(frame: pd.DataFrame) -> pd.DataFrame:
    keys = [
        c
        for c in (
            "unit",
            "measure",
            "other",
            "statistic",
            "x",
            "rank",
            "size",
            "repeat",
            "topic_set_size",
            "bin",
        )
        if c in frame.columns
    ]
    return frame.sort_values(keys, kind="stable").reset_index(drop=True)


def execute(spec: StudySpec, task: Task) -> tuple[dict[str, pd.DataFrame], float]:
    """Compute a task's tables (raises on error). Returns (tables, seconds in criteria)."""
    _load_plugins(spec)
    world = load_world(spec, task.world, task.replicate)
    judgments = _degraded(spec, world, task) if task.degrader else {}
    criteria = {c.id: (c, c.make()) for c in spec.criteria}
    tables: dict[str, list[pd.DataFrame]] = {}
    unit_rows = []
    in_criteria = 0.0
    for level in task.levels:
        tensor = world.tensor if level == FULL else judgments[level].apply(world.tensor)
        ctx = Context(
            spec,
            world,
            tensor,
            level=level,
            degrader=task.degrader,
            trial=task.trial,
            level_cache={},
        )
        for cid in dict.fromkeys(u.criterion for u in task.units if u.level == level):
            cspec, crit = criteria[cid]
            mine = {
                (u.measure, u.other): u
                for u in task.units
                if u.level == level and u.criterion == cid
            }
            wanted = list(mine) if crit.pairwise else [m for m, _ in mine]
            t0 = time.perf_counter()
            bound = ctx.bind(cspec)
            if bound.n_topics < 2:
                # A topic filter left fewer than two topics in this world: nothing to compute.
                # The units are done; a row per measure says why they have no statistic.
                frames = {
                    "results": rows([(m, o, "n_topics", np.nan, bound.n_topics) for m, o in mine])
                }
            else:
                frames = crit.compute(bound, wanted)
                if crit.resampled and bound.n_resamples and not frames["results"].empty:
                    frames[RESAMPLES] = _draws(
                        frames["results"], crit.compute_resamples(bound, wanted), bound
                    )
            in_criteria += time.perf_counter() - t0
            for table, frame in frames.items():
                if not frame.empty:  # (an empty frame would make the identity columns floats)
                    tables.setdefault(table, []).append(_annotate(frame, mine, crit.pairwise))
            unit_rows += [unit_row(u, task=task.id) for u in mine.values()]
    out = {name: _sort(pd.concat(parts, ignore_index=True)) for name, parts in tables.items()}
    out[UNITS] = _sort(pd.DataFrame(unit_rows))
    return out, in_criteria


def run_task(spec: StudySpec, task: Task) -> Outcome:
    """Run one task in this process; never raises (errors come back in the Outcome)."""
    from threadpoolctl import threadpool_limits

    start = time.perf_counter()
    try:
        # One BLAS thread per worker: parallelism comes from the tasks, and results must not
        # depend on how many threads summed a product.
        with threadpool_limits(limits=1):
            tables, in_criteria = execute(spec, task)
        return Outcome(
            task.id,
            tables=tables,
            seconds=time.perf_counter() - start,
            criteria_seconds=in_criteria,
        )
    except Exception as err:  # reported to the driver, saved under failures/, retried later
        return Outcome(
            task.id,
            error=f"{type(err).__name__}: {err}",
            traceback=traceback.format_exc(),
            seconds=time.perf_counter() - start,
        )


def clear_cache() -> None:
    """Forget the worlds and files this process keeps (tests; memory)."""
    _WORLDS.clear()
    _FILES.clear()


__all__ = [
    "run_task",
    "execute",
    "Outcome",
    "Context",
    "LoadedWorld",
    "load_world",
    "fold_grades",
    "clear_cache",
    "Unit",
]


def adopt_world(spec: StudySpec, world: LoadedWorld) -> None:
    """Put a world loaded elsewhere (scattered by a Dask driver) into this worker's cache."""
    key = f"{spec.seed}:{short_id(world.identity)}"
    if key not in _WORLDS:
        _WORLDS[key] = world
        while len(_WORLDS) > _KEEP_WORLDS:
            _WORLDS.popitem(last=False)
