r"""Intervals for what a study measured: a paired, hierarchical bootstrap over saved values.

A study's statistic (a Kendall tau, a discriminative power, a mean drift...) is a number about a
*collection's behaviour*: its topics are a sample from a population of topics, a degrader's
trials are random reductions of the judgments, a simulated world's replicates are random
collections. The quantity a claim is about is the expected value of the statistic,

.. math::

    \theta = \mathrm{E}[s], \qquad \hat\theta = \frac{1}{JK} \sum_{j=1}^{J} \sum_{i=1}^{K}
    s(T_j, i),

estimated by the mean over the J replicates of the world (1 for a TREC collection) and the K
trials of the degrader (1 under the full judgments or a deterministic degrader), on each
replicate's observed topics :math:`T_j`.

While a study runs, every statistic is also computed on R paired topic resamples of each
world instance (:math:`T_j^{*r}`: the world's topics drawn with replacement; the same resamples
for every measure, level, trial and criterion, so that a difference between two measures, or
between two levels, is resampled as a difference). A two-stage bootstrap (Davison & Hinkley
1997, section 3.8) draws, for b = 1..R, J replicates with replacement and, for each, K trials
with replacement, and averages the statistic on topic resample b:

.. math::

    \hat\theta^{*b} = \frac{1}{JK} \sum_{j^*} \sum_{i^*} s(T_{j^*}^{*b}, i^*).

The trials of a degrader that damages each topic on its own are averaged rather than drawn: the
topic resamples carry their variation already.

**The interval** is read off the :math:`\hat\theta^{*b}` by the *expanded* percentile method
(the default, chosen by calibration on collections with a known answer, docs/calibration.md):
the draws are first shifted so that their mean is the estimate, because statistics of repeated
topics are biased (a topic drawn twice repeats its noise, so a tau falls and a bootstrap test
finds more pairs significant on a resample than on a real sample of as many topics), then
their spread about the estimate is widened by :math:`\sqrt{n/(n-1)}\, t_{n-1}/z` for n topics
(Hesterberg 2015: the bootstrap's spread is too small by the first factor, and a normal
quantile stands where Student's t fits), and the interval is their :math:`(1 \mp c)/2`
quantiles at confidence c (0.95 unless the study says otherwise). ``percentile`` (the plain
quantiles) and ``centered`` (shifted, not widened) are there to compare.

Every source of randomness the study has goes into it: topics (always), trials, replicates,
and the Monte-Carlo draws inside a criterion (the bootstrap test of discriminative power is
redrawn on every topic resample). It narrows as topics, trials and replicates grow. Resampling
replicates and then topics within them counts the topic variation of a simulated world twice,
which makes its intervals somewhat wide, never narrow. A statistic that was not recomputed on
topic resamples (a criterion that describes the collection itself) gets an interval from its
trials and replicates alone: the percentiles of 1000 draws of them; one value with nothing
resampled has no interval.

A comparison is computed before it is resampled: :class:`Values` support arithmetic, so the
difference of two measures, a ratio of two levels or a change from another criterion is formed
value by value (per replicate, trial and resample) and its interval is that of the difference,
never two intervals compared by eye.
"""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import pandas as pd

from metaeval.study.spec import DEFAULT_CONFIDENCE

FULL = "full"
_ROW_KEYS = ["unit", "measure", "other", "statistic", "x"]


def _row_keys(frame: pd.DataFrame) -> list:
    """The columns that identify a saved row (an unset ``x`` as -inf), as lists: zipped, the
    keys of the resamples (columns read once, not a tuple built through pandas per row)."""
    return [frame[c].fillna(-np.inf).tolist() if c == "x" else frame[c].tolist() for c in _ROW_KEYS]


#: Draws of the trial and replicate bootstrap when a statistic has no topic resamples.
PLAIN_DRAWS = 1000
#: Fewer trials or replicates than this make an interval rough, and a verdict says so.
FEW = 5


class NoData(LookupError):
    """What is asked for is not in the saved results (the message says what)."""


# ------------------------------------------------------------------------------ values
@dataclass(frozen=True)
class Sources:
    """What an interval rests on: the numbers of topics, topic resamples, trials and
    replicates."""

    topics: tuple[int, ...]  # distinct numbers of topics (a topic filter can vary them)
    resamples: int  # topic resamples (0: not resampled)
    trials: int
    replicates: int

    def merge(self, other: Sources, resamples: int) -> Sources:
        """The sources of a quantity computed from two, resampled ``resamples`` times."""
        return Sources(
            tuple(sorted(set(self.topics) | set(other.topics))),
            resamples,
            max(self.trials, other.trials),
            max(self.replicates, other.replicates),
        )

    def text(self) -> str:
        """``54 topics (200 paired resamples), 10 trials, 3 replicates``."""
        if not self.topics:
            # not recomputed on topic resamples: what it rests on is its trials and replicates
            rest = [
                f"{n} {what}"
                for n, what in ((self.trials, "trials"), (self.replicates, "replicates"))
                if n > 1
            ]
            return (", ".join(rest) or "one value") + " (topics not resampled)"
        if len(self.topics) == 1:
            topics = f"{self.topics[0]} topics"
        else:
            topics = f"{min(self.topics)}-{max(self.topics)} topics"
        parts = [
            f"{topics} ({self.resamples} paired resamples)"
            if self.resamples
            else f"{topics} (not resampled)"
        ]
        if self.trials > 1:
            parts.append(f"{self.trials} trials")
        if self.replicates > 1:
            parts.append(f"{self.replicates} replicates")
        return ", ".join(parts)

    def caveats(self) -> list[str]:
        """What makes an interval rough: few trials, replicates or resamples."""
        out = []
        if 1 < self.trials < FEW:
            out.append(f"only {self.trials} trials")
        if 1 < self.replicates < FEW:
            out.append(f"only {self.replicates} replicates")
        if 0 < self.resamples < 100:
            out.append(f"only {self.resamples} topic resamples")
        if not self.resamples and self.trials * self.replicates == 1:
            out.append("one value, nothing resampled")
        return out


UNBOUNDED = (-np.inf, np.inf)


class Values:
    """A statistic's values on one world: an array (J replicates, K trials, 1 + R) holding
    the value on the observed topics at ``[..., 0]`` and on topic resample r at ``[..., r]``
    (NaN where missing), with the :class:`Sources` it rests on and the ``bounds`` it lies in
    (a tau in [-1, 1]; unbounded when unknown).

    Arithmetic (``+ - * /``, ``abs``, :func:`mean_of`) works value by value, broadcasting the
    trial axis of a full-judgment statistic (one trial) over a degrader's trials, and carries
    the bounds of the result (a difference of two taus lies in [-2, 2]).
    """

    def __init__(
        self,
        array: np.ndarray,
        sources: Sources,
        resample_trials: bool = True,
        bounds: tuple[float, float] = UNBOUNDED,
    ):
        self.array = np.asarray(array, dtype=float)
        self.sources = sources
        # False when the topic resamples already carry the variation between trials (a
        # degrader that damages every topic on its own): resampling the trials as well would
        # count it twice.
        self.resample_trials = resample_trials
        self.bounds = bounds

    def _combine(self, other, op, bounds) -> Values:
        if isinstance(other, Values):
            a, b = self.array, other.array
            if a.shape[2] != b.shape[2] and 1 not in (a.shape[2], b.shape[2]):
                raise NoData("the two sides were resampled differently; run the study again")
            if a.shape[1] != b.shape[1] and 1 not in (a.shape[1], b.shape[1]):
                raise NoData("the two sides have different numbers of trials")
            out = op(a, b)
            return Values(
                out,
                self.sources.merge(other.sources, out.shape[2] - 1),
                self.resample_trials or other.resample_trials,
                bounds,
            )
        return Values(op(self.array, float(other)), self.sources, self.resample_trials, bounds)

    def _other_bounds(self, other) -> tuple[float, float]:
        return other.bounds if isinstance(other, Values) else (float(other), float(other))

    def __sub__(self, other):
        (a, b), (c, d) = self.bounds, self._other_bounds(other)
        return self._combine(other, np.subtract, (a - d, b - c))

    def __add__(self, other):
        (a, b), (c, d) = self.bounds, self._other_bounds(other)
        return self._combine(other, np.add, (a + c, b + d))

    def __truediv__(self, other):
        with np.errstate(divide="ignore", invalid="ignore"):
            out = self._combine(other, np.divide, UNBOUNDED)
        out.array[~np.isfinite(out.array)] = np.nan
        return out

    def __mul__(self, other):
        bounds = UNBOUNDED
        if not isinstance(other, Values):
            with np.errstate(invalid="ignore"):
                ends = sorted(float(other) * np.asarray(self.bounds))
            bounds = (ends[0], ends[1]) if not np.isnan(ends).any() else UNBOUNDED
        return self._combine(other, np.multiply, bounds)

    def __neg__(self):
        a, b = self.bounds
        return Values(-self.array, self.sources, self.resample_trials, (-b, -a))

    def __abs__(self):
        a, b = self.bounds
        low = 0.0 if a <= 0 <= b else min(abs(a), abs(b))
        bounds = (low, max(abs(a), abs(b)))
        return Values(np.abs(self.array), self.sources, self.resample_trials, bounds)

    @property
    def estimate(self) -> float:
        """The mean over replicates and trials on the observed topics."""
        observed = self.array[..., 0]
        return float(np.nanmean(observed)) if np.isfinite(observed).any() else np.nan


def mean_of(values: list[Values]) -> Values:
    """The value-by-value mean of several statistics (a group of measures, several
    references)."""
    if not values:
        raise NoData("nothing to average")
    out = values[0]
    for v in values[1:]:
        out = out + v
    return out * (1.0 / len(values))


# ------------------------------------------------------------------------------ intervals
@dataclass(frozen=True)
class Interval:
    """A bootstrap interval of :math:`\\theta`: the estimate, the bounds at ``confidence``,
    the bootstrap draws of the estimate, and what it rests on."""

    estimate: float
    low: float
    high: float
    confidence: float
    draws: np.ndarray
    sources: Sources

    @property
    def defined(self) -> bool:
        return bool(np.isfinite(self.low) and np.isfinite(self.high))

    def share_at_least(self, t: float) -> float:
        """The share of bootstrap draws at or above ``t`` (a one-sided bootstrap p-value of
        "theta < t")."""
        d = self.draws[np.isfinite(self.draws)]
        return float(np.mean(d >= t)) if d.size else np.nan

    def share_at_most(self, t: float) -> float:
        d = self.draws[np.isfinite(self.draws)]
        return float(np.mean(d <= t)) if d.size else np.nan

    def quantile(self, q: float) -> float:
        d = self.draws[np.isfinite(self.draws)]
        return float(np.quantile(d, q)) if d.size else np.nan


#: How an interval is read off the bootstrap draws (see :func:`interval`), and the default:
#: the one whose verdicts were right most often on collections with a known answer.
METHODS = ("percentile", "centered", "expanded")
DEFAULT_METHOD = "expanded"


def interval(
    values: Values,
    confidence: float = DEFAULT_CONFIDENCE,
    rng=None,
    method: str = DEFAULT_METHOD,
) -> Interval:
    r"""The two-stage bootstrap interval of the mean of ``values`` (see the module docstring).

    Parameters
    ----------
    values : Values
    confidence : float
        In (0, 1).
    rng : numpy.random.Generator, optional
        Draws the replicates and trials; by default a fixed seed, so that an interval is the
        same whenever it is asked for.
    method : {"percentile", "centered", "expanded"}
        ``percentile``: the quantiles of the draws. ``centered``: the draws shifted so that
        their mean is the estimate, then their quantiles. ``expanded``: centred, and their
        spread about the estimate widened by :math:`\sqrt{n/(n-1)}\, t_{n-1}/z` for n
        resampled units (Hesterberg's expanded percentile interval).
    """
    rng = np.random.default_rng(0) if rng is None else rng
    a = values.array
    J, K, columns = a.shape
    R = columns - 1
    estimate = values.estimate
    if R >= 1:
        B, column = R, np.arange(1, R + 1)
    elif J * K > 1:
        B, column = PLAIN_DRAWS, np.zeros(PLAIN_DRAWS, dtype=int)
    else:
        return Interval(estimate, np.nan, np.nan, confidence, np.empty(0), values.sources)
    reps = rng.integers(0, J, size=(B, J)) if J > 1 else np.zeros((B, 1), dtype=int)
    if K > 1 and (values.resample_trials or R == 0):
        trials = rng.integers(0, K, size=(B, J, K))
    else:  # every trial, on each topic resample
        trials = np.broadcast_to(np.arange(K), (B, J, K))
    drawn = a[reps[:, :, None], trials, column[:, None, None]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a draw of missing values only
        draws = np.nanmean(drawn.reshape(B, -1), axis=1)
    finite = draws[np.isfinite(draws)]
    if finite.size == 0 or not np.isfinite(estimate):
        return Interval(estimate, np.nan, np.nan, confidence, draws, values.sources)
    # Without topic resamples the draws are means of the observed values of trials and
    # replicates: no repeated topic biases them, and a t quantile on a handful of replicates
    # would widen them without bound; their percentiles are the interval (a rough one).
    if method in ("centered", "expanded") and R >= 1:
        shift = finite.mean() - estimate
        draws, finite = draws - shift, finite - shift
    if method == "expanded" and R >= 1:
        units = min(values.sources.topics) if values.sources.topics else J * K
        factor = _expansion(units, confidence)
        draws = estimate + factor * (draws - estimate)
        finite = estimate + factor * (finite - estimate)
    # cut to the values the quantity can take: a tau's interval never passes 1 (the
    # shifted and widened draws can), and cutting to the parameter space keeps the coverage
    draws = np.clip(draws, *values.bounds)
    finite = np.clip(finite, *values.bounds)
    low, high = np.quantile(finite, [(1 - confidence) / 2, (1 + confidence) / 2])
    return Interval(estimate, float(low), float(high), confidence, draws, values.sources)


@functools.lru_cache(maxsize=256)  # a report asks for a few (n, confidence), thousands of times
def _expansion(n: int, confidence: float) -> float:
    """Hesterberg's (2015) widening of a bootstrap interval from n units: the bootstrap's
    spread is a sqrt((n - 1)/n) too small, and a normal quantile where Student's t fits."""
    from scipy.stats import norm, t

    if n < 2:
        return 1.0
    q = (1 + confidence) / 2
    return float(np.sqrt(n / (n - 1)) * t.ppf(q, n - 1) / norm.ppf(q))


# ------------------------------------------------------------------------------ evidence
class Evidence:
    """A study's saved values, as :class:`Values` to build intervals from.

    Parameters
    ----------
    results : DataFrame
        The ``results`` table (:func:`metaeval.study.load_results`).
    resamples : DataFrame, optional
        The ``resamples`` table (the same rows' values on the topic resamples).
    """

    def __init__(self, results: pd.DataFrame, resamples: pd.DataFrame | None = None):
        self.results = results
        self._ranges: dict[tuple, tuple[float, float]] = {}
        self._draws: dict[tuple, tuple[np.ndarray, int]] = {}
        if resamples is not None and len(resamples):
            keys = zip(*_row_keys(resamples), strict=True)
            values = resamples["values"].to_numpy()
            topics = resamples["n_topics"].to_numpy()
            carried = (
                resamples["trials_in_topics"].to_numpy(dtype=bool)
                if "trials_in_topics" in resamples
                else np.zeros(len(resamples), dtype=bool)
            )
            self._draws = {
                k: (v, int(n), bool(c)) for k, v, n, c in zip(keys, values, topics, carried)
            }
        self._cache: dict[tuple, pd.DataFrame] = {}
        # what :meth:`values` took out of the frames :meth:`rows` gave, by frame (the frame is
        # kept with it, so that its id stays its own)
        self._columns: OrderedDict[int, tuple] = OrderedDict()
        self._kept: dict[tuple, pd.DataFrame] = {}  # what rows() gave, by its arguments

    @property
    def worlds(self) -> list[str]:
        return list(dict.fromkeys(self.results["world"])) if len(self.results) else []

    def _subset(self, world: str, criterion: str, statistic: str, level: str) -> pd.DataFrame:
        """The rows of one statistic at one level, filtered once: a claim asks for the same
        ones for every measure, reference and modifier it compares."""
        key = (world, criterion, statistic, level)
        if key not in self._cache:
            outer = (world, criterion, statistic)
            if outer not in self._cache:
                r = self.results
                self._cache[outer] = r[
                    (r["world"] == world)
                    & (r["criterion"] == criterion)
                    & (r["statistic"] == statistic)
                ]
            d = self._cache[outer]
            self._cache[key] = d[d["level"].astype(str) == level]
        return self._cache[key]

    def rows(
        self,
        world: str,
        criterion: str,
        statistic: str,
        level: str = FULL,
        *,
        degrader: str | None = None,
        against=None,
        x=None,
    ) -> pd.DataFrame:
        """The saved rows of one statistic at one level (every measure): the same frame
        whenever the same rows are asked for (a claim asks for them once per measure,
        reference and modifier), so read it, do not change it."""
        key = (world, criterion, statistic, str(level), degrader, against)
        key += (None if x is None else tuple(np.atleast_1d(x).tolist()),)
        try:
            if key in self._kept:
                return self._kept[key]
        except TypeError:  # an argument that is not hashable: not kept
            return self._rows(world, criterion, statistic, level, degrader, against, x)
        self._kept[key] = self._rows(world, criterion, statistic, level, degrader, against, x)
        return self._kept[key]

    def _rows(self, world, criterion, statistic, level, degrader, against, x) -> pd.DataFrame:
        d = self._subset(world, criterion, statistic, str(level))
        if str(level) != FULL:
            if degrader is not None:
                d = d[d["degrader"] == degrader]
            elif d["degrader"].nunique() > 1:
                raise NoData(
                    f"several degraders have level {level} "
                    f"({', '.join(sorted(d['degrader'].unique()))}): name one with degrader"
                )
        if against is not None:
            d = d[d["other"] == against]
        if x is not None and len(d):
            xs = np.asarray([float(v) for v in np.atleast_1d(x)])
            d = d[np.isclose(d["x"].astype(float).to_numpy()[:, None], xs).any(axis=1)]
        return d

    def values(self, rows: pd.DataFrame, measure: str) -> Values:
        """One measure's :class:`Values` from :meth:`rows` (several ``x`` are averaged)."""
        _, measures, columns = taken = self._taken(rows)
        if isinstance(measure, str):
            at = np.flatnonzero(measures == measure)
        else:  # compared as pandas compares a column with a value
            at = np.flatnonzero((rows["measure"] == measure).to_numpy())
        if not len(at):
            raise NoData(f"no saved value of {measure}")
        if columns is None:  # taken out once per frame, when a value is first asked of it
            columns = _Rows(rows, keyed=bool(self._draws))
            self._columns[id(rows)] = (*taken[:2], columns)
        return self._series(columns, at)

    def _taken(self, rows: pd.DataFrame) -> tuple:
        """(rows, its measures, its :class:`_Rows` or None until asked for), kept for the
        last frames asked about: :meth:`rows` gives the same frame for the same rows."""
        key = id(rows)
        found = self._columns.get(key)
        if found is None or found[0] is not rows:
            found = self._columns[key] = (rows, rows["measure"].to_numpy(), None)
            while len(self._columns) > 256:
                self._columns.popitem(last=False)
        else:
            self._columns.move_to_end(key)
        return found

    def grouped(self, keys: list[str]):
        """``(key, Values)`` of every group of the results' rows with equal ``keys`` columns
        (a key holds NaN where a column is empty), in the order the groups first appear.

        The rows' columns are taken out once and each group is a set of positions: cutting a
        frame of every column per group would cost most of the time on a large study."""
        columns = _Rows(self.results, keyed=bool(self._draws))
        positions = pd.Series(np.arange(len(self.results)), index=self.results.index)
        by = [self.results[k] for k in keys]
        for key, at in positions.groupby(by, sort=False, dropna=False):
            yield key, self._series(columns, at.to_numpy())

    def series(self, d: pd.DataFrame) -> Values:
        """The :class:`Values` of saved rows that differ only by replicate and trial (rows of
        one replicate and trial, say several ``x``, are averaged)."""
        return self._series(_Rows(d, keyed=bool(self._draws)))

    def _series(self, d: _Rows, at: np.ndarray | None = None) -> Values:
        """:meth:`series` of the rows ``at`` (positions; all when None) of ``d``."""
        reps, trials, value = d.replicate, d.trial, d.value
        if at is not None:
            reps, trials, value = reps[at], trials[at], value[at]
        J, K = int(reps.max()) + 1, int(trials.max()) + 1
        if self._draws:
            keys = d.keys if at is None else [d.keys[i] for i in at]
            draws = [self._draws.get(k) for k in keys]
        else:
            draws = [None] * len(value)
        R = max((len(v[0]) for v in draws if v is not None), default=0)
        if any(v is None for v in draws):
            R = 0  # a row without resamples: the trials and replicates alone
        cell = np.empty((len(value), R + 1))
        cell[:, 0] = value
        if R:
            cell[:, 1:] = np.stack([v[0] for v in draws])
        ok = np.isfinite(cell)
        # the sums over the rows of each (replicate, trial) cell: bincount adds the rows in
        # order from 0.0, as np.add.at does (the same sums to the last bit), in a fraction
        # of its time
        at_cell = ((reps * K + trials)[:, None] * (R + 1) + np.arange(R + 1)).ravel()
        size = J * K * (R + 1)
        total = np.bincount(at_cell, weights=np.where(ok, cell, 0.0).ravel(), minlength=size)
        count = np.bincount(at_cell, weights=ok.ravel(), minlength=size)
        total, count = total.reshape(J, K, R + 1), count.reshape(J, K, R + 1)
        with np.errstate(invalid="ignore"):
            array = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        seen = np.zeros((J, K), dtype=bool)
        seen[reps, trials] = True
        array[~seen] = np.nan
        topics = tuple(sorted({v[1] for v in draws if v is not None}))
        sources = Sources(topics, R, len(np.unique(trials)), len(np.unique(reps)))
        bounds = self._range(d, at)
        return Values(array, sources, not R or not all(v[2] for v in draws), bounds)

    def _range(self, d: _Rows, at: np.ndarray | None = None) -> tuple[float, float]:
        """The values the rows' statistic can take, as its criterion declares them (one
        statistic of one kind of criterion; unbounded otherwise, or for a plugin criterion
        this process has not loaded)."""
        from metaeval.study.criteria import registered_criteria

        if d.kind is None:
            return UNBOUNDED
        kind, statistic = (d.kind, d.statistic) if at is None else (d.kind[at], d.statistic[at])
        if _distinct(kind) != 1 or _distinct(statistic) != 1:
            return UNBOUNDED
        key = (kind[0], statistic[0])
        if key not in self._ranges:
            criterion = registered_criteria().get(key[0])
            self._ranges[key] = UNBOUNDED if criterion is None else criterion.range_of(key[1])
        return self._ranges[key]


class _Rows:
    """The columns of saved rows that :meth:`Evidence.series` reads, taken out of the frame
    once as arrays (a statistic's rows are then positions, not a frame cut per statistic)."""

    def __init__(self, d: pd.DataFrame, keyed: bool):
        self.replicate = d["replicate"].to_numpy(dtype=int)
        self.trial = d["trial"].to_numpy(dtype=int)
        self.value = d["value"].to_numpy(dtype=float)
        # the keys of the rows' topic resamples, when there are resamples to look up
        self.keys = list(zip(*_row_keys(d), strict=True)) if keyed else []
        self.kind = d["kind"].to_numpy(dtype=object) if "kind" in d else None
        self.statistic = d["statistic"].to_numpy(dtype=object)


def _distinct(values: np.ndarray) -> int:
    """The number of distinct values present (missing ones not counted), as
    :meth:`pandas.Series.nunique` counts them (a set: the rows of one statistic are few)."""
    return len(set(values[~pd.isna(values)].tolist()))


__all__ = [
    "Evidence",
    "Values",
    "Sources",
    "Interval",
    "interval",
    "mean_of",
    "NoData",
]
