"""What a criterion sees: a :class:`Context` is one world instance at one level of one trial.

A criterion computes its statistics through the context alone: the per-topic scores of a
measure at this level, under the full judgments and under the true ones, the system scores,
the topic resamples it recomputes them on, the identity-seeded random streams and the shared
bootstrap samples, and the significance tests of every pair of systems. The context computes
each of them once and keeps it where every criterion of the task (or every task of the world
instance on this worker) finds it.
"""

from __future__ import annotations

import numpy as np

from metaeval.study.seeding import generator
from metaeval.study.spec import FULL, StudySpec
from metaeval.study.worlds import LoadedWorld, ScoreTable


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
    def rel(self) -> int | float:
        return self.world.rel

    @property
    def n_topics(self) -> int:
        return self.tensor.n_topics if self._topics is None else len(self._topics)

    def system_effect(self, label: str) -> np.ndarray | None:
        """The truth the measure's ranking estimates (None on a TREC collection)."""
        return self.world.effect_of(self.spec.measure(label).name)

    def measure(self, label: str):
        """The measure of a label, with the world's relevance level replacing a binary
        measure's default level 1."""
        from metaeval.measures import parse_measure

        return parse_measure(self.spec.measure(label).name).at_level(self.rel)

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
        counts = self.world.tensor.n_relevant(topic_filter["grade"])  # grade >= it, by value
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


__all__ = ["Context"]
