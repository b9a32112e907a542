"""Vectorised building blocks shared by the measure families."""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from metaeval.engine import UNPOOLED, EvalTensor
from metaeval.engine.tensor import group_sizes


def top(tensor: EvalTensor, cutoff: int | None) -> np.ndarray:
    """Grade codes of the first ``cutoff`` ranks (all ranks when None), shape (S, T, k)."""
    return tensor.codes if cutoff is None else tensor.codes[:, :, :cutoff]


def ranks(depth: int) -> np.ndarray:
    """1-based ranks 1..depth as floats."""
    return np.arange(1, depth + 1, dtype=np.float64)


def safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, and 0 where den is 0 (trec_eval's policy for topics with nothing relevant)."""
    num, den = np.broadcast_arrays(
        np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    )
    out = np.zeros(num.shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


#: Step in v of :func:`laplace_nodes`' trapezoid rule: the error of its integrals of
#: exp(-t x) over x in [1/span, 1] was below 2e-15 for every span up to 10^5 (1.6e-13 at 0.25).
LAPLACE_STEP = 0.2


def laplace_nodes(span: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes t and weights w with sum_k w_k f(t_k) = int_0^inf f(t) dt / t for the f made of
    exp(-t x), x in [1/span, 1], to about 1e-15.

    The trapezoid rule in v, step :data:`LAPLACE_STEP`, after ln t = v - exp(-v) + 2
    (so w_k = step (1 + exp(-v_k))): the integrand then vanishes doubly exponentially at
    both ends, like exp(-t x) above and like t below. In ln t itself the lower tail falls
    only like t, which needs ln t down to -45 and four times the nodes. v runs from -4
    (t about 1e-25) to where t / span is 74 (exp(-74) about 1e-32): 44 nodes for span 10,
    67 for 1000, 11 more for every tenfold span. Scale t by 1/s and w is unchanged for
    x in [s/span, s]; for int f(t) dt, weight w_k t_k.
    """
    v = np.arange(-4.0, math.log(45.0 * max(span, 1.0)) - 1.5 + LAPLACE_STEP / 2, LAPLACE_STEP)
    return np.exp(v - np.exp(-v) + 2.0), LAPLACE_STEP * (1.0 + np.exp(-v))


def log2_discount(depth: int) -> np.ndarray:
    """1 / log2(r + 1) for r = 1..depth (trec_eval ``ndcg``, Burges et al.)."""
    return 1.0 / np.log2(np.arange(2, depth + 2, dtype=np.float64))


class RankedHits:
    """The ranks where ``mask`` holds, as flat arrays grouped by (run, topic) in rank order.

    Most measures only add terms at relevant (or judged) ranks, a small fraction of a
    1000-deep tensor; working on those ranks alone keeps the full-size work to one
    ``flatnonzero``. Group = run * T + topic. Arrays that not every measure needs are computed
    on first use. :func:`ranked_hits` builds them from a tensor's entries, without the dense
    codes.

    Attributes
    ----------
    group, rank0 : ndarray of int
        (Run, topic) group and 0-based rank of every hit.
    grade : ndarray of int8
        Code at every hit.
    depth : int
        Ranks the hits were taken from (the cutoff, or the tensor's depth).
    """

    def __init__(self, codes: np.ndarray, mask: np.ndarray):
        n_runs, n_topics, depth = codes.shape
        flat = np.flatnonzero(mask)  # C order: by run, topic, then rank
        self.shape = (n_runs, n_topics)
        self.depth = depth
        self.group = flat // depth
        self.rank0 = flat - self.group * depth  # 0-based rank
        self.grade = codes.reshape(-1)[flat]
        self._sizes = group_sizes(self.group, n_runs * n_topics)
        self._n_topics = n_topics

    @classmethod
    def from_entries(
        cls, tensor: EvalTensor, entries: tuple, mask: np.ndarray, depth: int
    ) -> RankedHits:
        """The entries (group, rank, code arrays, in (run, topic, rank) order, as
        :meth:`EvalTensor.entries` gives them) where ``mask`` holds: the hits the dense
        constructor finds, in the same order."""
        group, rank, codes = entries
        hits = object.__new__(cls)
        hits.shape = (tensor.n_runs, tensor.n_topics)
        hits.depth = depth
        # Kept in the entries' int32 where they fit: every use is an index, a count or an
        # exact conversion to float, so the values are those of the dense path's int64.
        if mask.all():  # every entry (bpref's judged ranks on full judgments): no copy
            hits.group, hits.rank0, hits.grade = group, rank, codes
        else:
            # Positions, then gathers: faster than three boolean selections over random masks.
            at = np.flatnonzero(mask)
            hits.group, hits.rank0, hits.grade = group[at], rank[at], codes[at]
        hits._sizes = group_sizes(hits.group, tensor.n_runs * tensor.n_topics)
        hits._n_topics = tensor.n_topics
        return hits

    def counts(self) -> np.ndarray:
        """(S, T) number of hits of every (run, topic)."""
        return self._sizes.reshape(self.shape)

    def first(self) -> tuple[np.ndarray, np.ndarray]:
        """Groups that have hits, and the position (in the flat arrays) of the first hit of
        each."""
        groups = np.flatnonzero(self._sizes)
        return groups, self.group_start[groups]

    @cached_property
    def group_start(self) -> np.ndarray:
        """Position (in the flat arrays) of the first hit of every group, empty or not."""
        return np.cumsum(self._sizes) - self._sizes

    @cached_property
    def start(self) -> np.ndarray:
        """Position (in the flat arrays) of the first hit of each hit's group."""
        return self.group_start[self.group]

    @cached_property
    def _offset(self) -> np.ndarray:
        return np.arange(len(self.group)) - self.start

    @cached_property
    def rank(self) -> np.ndarray:
        """1-based rank, float."""
        return self.rank0 + 1.0

    @cached_property
    def topic(self) -> np.ndarray:
        return self.group % self._n_topics

    @cached_property
    def count(self) -> np.ndarray:
        """1-based position of each hit among its group's hits (the n of "n-th relevant")."""
        return self._offset + 1.0

    @cached_property
    def _block(self) -> np.ndarray:
        """Index of each hit's group among the groups that have hits."""
        return (np.cumsum(self._sizes > 0) - 1)[self.group]

    @property
    def _n_blocks(self) -> int:
        return int(np.count_nonzero(self._sizes))

    def cumsum(self, values: np.ndarray) -> np.ndarray:
        """Inclusive cumulative sum of ``values`` within each (run, topic) group."""
        values = np.asarray(values)
        if values.dtype.kind in "iub":
            # Exact in integers: one running sum, minus what came before each group.
            cs = np.cumsum(values, dtype=np.int64)
            return cs - cs[self.start] + values[self.start]
        # Floats: a running sum across groups would lose the small values of a late group to
        # rounding against the large total before it, so sum each group in its own row.
        width = int(self._sizes.max(initial=0))
        rows = np.zeros((self._n_blocks, width))
        rows[self._block, self._offset] = values
        return np.cumsum(rows, axis=1)[self._block, self._offset]

    def total(self, values: np.ndarray) -> np.ndarray:
        """(S, T) sum of ``values`` over each (run, topic) group (0 for empty groups)."""
        n = self.shape[0] * self.shape[1]
        return np.bincount(self.group, weights=values, minlength=n).reshape(self.shape)


class TiedHits(RankedHits):
    """:class:`RankedHits` that also know their group of tied documents (:func:`tied_hits`).

    A tie group is the ``tie_size`` documents of equal score from 0-based rank ``tie_start``
    of a list; every ordering of them is equally likely. For a hit, ``tie_hits`` (m) counts
    the hits of its tie group and ``hits_before`` (B) those of the earlier groups of its list.

    Attributes
    ----------
    tie_start, tie_size : ndarray of int
        Rank of the first document of each hit's tie group, and the group's size (a, n).
    """

    tie_start: np.ndarray
    tie_size: np.ndarray

    @cached_property
    def tie_layout(self) -> tuple[np.ndarray, np.ndarray]:
        """(first, block): the position of the first hit of every tie group that has hits,
        and the index of each hit's group among them."""
        opens = np.ones(len(self.group), dtype=bool)
        opens[1:] = (self.group[1:] != self.group[:-1]) | (
            self.tie_start[1:] != self.tie_start[:-1]
        )
        return np.flatnonzero(opens), np.cumsum(opens) - 1

    @property
    def tie_first(self) -> np.ndarray:
        """Position (in the flat arrays) of the first hit of each hit's tie group."""
        first, block = self.tie_layout
        return first[block]

    @property
    def tie_blocks(self) -> np.ndarray:
        """Position of the first hit of every tie group that has hits (one per group)."""
        return self.tie_layout[0]

    def tie_total(self, values: np.ndarray) -> np.ndarray:
        """Per hit, the sum of ``values`` over the hits of its tie group."""
        first, block = self.tie_layout
        return np.bincount(block, weights=values, minlength=len(first))[block]

    def before_tie(self, values: np.ndarray) -> np.ndarray:
        """Per hit, the sum of ``values`` over the hits of its list in earlier tie groups."""
        values = np.asarray(values)
        first = self.tie_first
        return self.cumsum(values)[first] - values[first]

    @cached_property
    def tie_hits(self) -> np.ndarray:
        """m: the hits in each hit's tie group."""
        return self.tie_total(np.ones(len(self.group)))

    @cached_property
    def hits_before(self) -> np.ndarray:
        """B: the hits of the list in tie groups before each hit's."""
        return (self.tie_first - self.start).astype(np.float64)

    def inside(self, cutoff=None) -> np.ndarray:
        """J: how many positions of each hit's tie group lie within ``cutoff`` (a number,
        one per hit, or None for the whole list), as int64."""
        size = self.tie_size.astype(np.int64)
        if cutoff is None:
            return size
        return np.clip(np.asarray(cutoff, dtype=np.int64) - self.tie_start, 0, size)

    def expected_precision(self, relevant: np.ndarray, cutoff=None, weights=None) -> np.ndarray:
        """Per hit, E[C(r)/r] over tied orderings at the hits ``relevant`` marks (0 at the
        others), C(r) counting the marked hits at ranks 1..r (or adding their ``weights``),
        within ``cutoff``.

        A marked hit of a tie group (first rank a + 1, size n, m marked, B marked in earlier
        groups) is at each of the n positions j with probability 1/n, and then has
        j (m - 1)/(n - 1) of the other m - 1 above it (hypergeometric), so the expectation is
        (1/n) sum_{j<J} (B + 1 + j (m - 1)/(n - 1)) / (a + j + 1), J its positions within the
        cutoff; the sums over j are differences of harmonic numbers H. With weights w, B, 1
        and m - 1 become the weight of the earlier marked hits, w of the hit and that of the
        other marked hits of its group.
        """
        marked = relevant.astype(np.float64)
        if weights is not None:
            marked = marked * weights
        own = marked if weights is not None else 1.0
        a, n, inside = self.tie_start, self.tie_size, self.inside(cutoff)
        harmonic = cumulative(1.0 / ranks(self.depth))
        step = harmonic[a + inside] - harmonic[a]
        others = safe_divide(self.tie_total(marked) - own, n - 1.0)
        level = self.before_tie(marked) + own
        return np.where(relevant, (level * step + others * (inside - (a + 1.0) * step)) / n, 0.0)

    def first_chances(self, cutoff=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Where the first hit of each list falls over tied orderings: (groups, owner, rank,
        chance), a row per possible rank of it within ``cutoff``, ``owner`` indexing
        ``groups`` (the lists with hits, as :meth:`first` gives them).

        The first hit is in the first tie group that holds one (rank a + 1, size n, m hits),
        at its x-th position with probability C(n - x, m - 1) / C(n, m), x = 1 .. n - m + 1.
        """
        groups, first = self.first()
        a = self.tie_start[first].astype(np.int64)
        n, m = self.tie_size[first].astype(np.int64), self.tie_hits[first].astype(np.int64)
        last = n - m + 1
        if cutoff is not None:
            last = np.minimum(last, cutoff - a)
        owner, index = grid_rows(last)
        x = index + 1
        opens = np.cumsum(last) - last
        n, m, a = n[owner], m[owner], a[owner]
        # P(x = 1) = m / n, and P(x + 1) / P(x) = (n - m - x + 1) / (n - x): a running sum
        # of logs within each group's stretch of x.
        step = np.where(x == 1, np.log(m / n), np.log((n - m - x + 2) / (n - x + 1)))
        total = np.cumsum(step)
        chance = np.exp(total - np.repeat(total[opens] - step[opens], last))
        return groups, owner, (a + x).astype(np.float64), chance

    def mean_weight(self, cumulative: np.ndarray, cutoff=None) -> np.ndarray:
        """The mean over each hit's tie group of a rank weight w (0 past ``cutoff``): the
        expected weight of a document of the group. ``cumulative[x]`` is the sum of w over
        the 0-based ranks below x (:func:`cumulative`)."""
        a = self.tie_start
        return (cumulative[a + self.inside(cutoff)] - cumulative[a]) / self.tie_size


def grid_rows(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, index): ``sizes[i]`` rows for each item i, numbered 0 .. sizes[i] - 1."""
    owner = np.repeat(np.arange(len(sizes)), sizes)
    return owner, np.arange(len(owner)) - np.repeat(np.cumsum(sizes) - sizes, sizes)


def log_choose(top, k) -> np.ndarray:
    """log C(top, k) for 0 <= k <= top (arrays or numbers, as floats)."""
    from scipy.special import gammaln  # imported here: plain evaluations never need scipy

    top, k = np.asarray(top, dtype=np.float64), np.asarray(k, dtype=np.float64)
    return gammaln(top + 1.0) - gammaln(k + 1.0) - gammaln(top - k + 1.0)


def log_none(size, hits, slots) -> np.ndarray:
    """log P(none of ``hits`` documents of a tie group of ``size`` falls in its first
    ``slots`` positions) = log C(size - hits, slots) - log C(size, slots), -inf when
    ``slots > size - hits`` (the hypergeometric probability of no success)."""
    size, hits, slots = (np.asarray(x, dtype=np.float64) for x in (size, hits, slots))
    rest = size - hits
    possible = rest >= slots
    rest = np.where(possible, rest, slots)  # any valid argument: masked below
    return np.where(possible, log_choose(rest, slots) - log_choose(size, slots), -np.inf)


def tied_hits(tensor: EvalTensor, select, cutoff: int | None = None) -> TiedHits:
    """The entries whose code passes ``select`` and whose tie group starts within ``cutoff``.

    The expected-value counterpart of :func:`ranked_hits` for runs read with
    ``ties="expected"`` (:attr:`EvalTensor.ties`): a group that straddles the cutoff has
    documents on both sides of it in some orderings, so its hits are kept whatever their rank
    in trec_eval's order; :meth:`TiedHits.inside` says how much of the group the cutoff holds.
    ``select`` must reject :data:`~metaeval.engine.UNPOOLED` (hits are entries).
    """
    group, rank, codes, start, size = tensor.tied_entries()
    mask = select(codes)
    if cutoff is not None:
        mask = mask & (start < cutoff)
    at = np.flatnonzero(mask)
    hits = TiedHits.from_entries(tensor, (group, rank, codes), mask, tensor.depth)
    hits.tie_start, hits.tie_size = start[at], size[at]
    return hits


def cumulative(weights: np.ndarray) -> np.ndarray:
    """[0, w0, w0 + w1, ...]: the sum of ``weights`` over the ranks below each x."""
    return np.concatenate([[0.0], np.cumsum(weights)])


def ranked_hits(tensor: EvalTensor, select, cutoff: int | None = None) -> RankedHits:
    """The ranks within the first ``cutoff`` (all when None) whose code passes ``select``.

    Parameters
    ----------
    tensor : EvalTensor
    select : callable
        Vectorised test of grade codes, e.g. ``lambda c: c >= lowest`` with
        ``lowest = tensor.code_at_least(rel)`` (relevant at level ``rel``).
    cutoff : int, optional

    On a sparse tensor (:attr:`EvalTensor.sparse`) the test runs over the entries, the ranks
    whose document is in the qrels, so the cost follows the number of judged documents; else
    over the dense codes. Both give the same hits in the same order. A test that passes
    :data:`~metaeval.engine.UNPOOLED` (the code of every rank that is not an entry) is always
    run on the dense codes.

    Every built-in measure reads the tensor through this function; a plugin measure that does
    the same re-evaluates as cheaply under a reduced judgment set, e.g. the relevant ranks in
    the top 10 and their count per run and topic::

        lowest = tensor.code_at_least(self.rel)  # grade >= rel, as a code
        hits = ranked_hits(tensor, lambda codes: codes >= lowest, 10)
        per_topic = hits.counts()
    """
    depth = tensor.depth if cutoff is None else min(cutoff, tensor.depth)
    if tensor.sparse and not np.asarray(select(np.array([UNPOOLED], dtype=np.int8)))[0]:
        entries = tensor.entries()
        mask = select(entries[2])
        if depth < tensor.depth:
            mask = mask & (entries[1] < depth)
        return RankedHits.from_entries(tensor, entries, mask, depth)
    codes = top(tensor, cutoff)
    return RankedHits(codes, select(codes))
