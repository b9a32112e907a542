"""The expected outputs over tied orderings of the adaptive C/W/L measures whose C(i) reads
only the rank i, the gain g(i) there and the gain G(i) found down to it: INST, IFT, NERR, and
BPM and BPM_dynamic where their sums are exact (docs/methods.md §6.6); CWL_AP's outputs through
the Laplace transform of its S(1) (:func:`expected_cwl_ap`), on the same states; and, for the
BPM measures' rounded sums, the distinct openings of the ranks their users may read
(:func:`expected_by_openings`).

Inside a group of tied items, every distinct arrangement of the group's gains equally likely,
the gains placed so far form a Markov chain: the state after p items of a group is how many
items of each gain it has placed, and the next item has gain v with probability (the group's
items of gain v not yet placed) / (its items not yet placed). The reach r(i) = prod_{j<i} C(j)
is a product along the path, so with Y(i) = sum_{j<=i} r(j) and X(i) = sum_{j<=i} r(j) g(j),
the expectations over the paths to each state s

    A = E[r(i) 1{s}],  B = E[r(i)^2 1{s}],  U = E[Y(i-1) r(i) 1{s}],  V = E[X(i-1) r(i) 1{s}]

follow from rank to rank (an item of gain g, then C = C(i) of the state it leads to):

    A' = C A,  B' = C^2 B,  U' = C (U + B),  V' = C (V + g B).

Outside the groups the state is a single one, and a stretch of fixed items is one vector step.
The outputs are sums over the ranks i <= n: ED = Y(n), ETU = sum r (1 - C) G and
ETC = sum r (1 - C) K, whose expected values are exact; E[Y^2] and E[XY] come with them.
EU = X(n)/Y(n) is a ratio. With mu = E[Y], the identity

    X/Y = X/mu - X (Y - mu)/mu^2 + (X/Y) (Y - mu)^2/mu^2

gives E[X/Y] = E[X]/mu - Cov(X, Y)/mu^2 + E[(X/Y)(Y - mu)^2]/mu^2, and as X/Y lies between
the least and the greatest gain of the list, g- and g+, the last term lies within
[g-, g+] Var(Y)/mu^2. The value given is the centre of that interval. Where its half-width is
above :data:`TIED_RATIO_TOLERANCE`, higher moments narrow it: followed backward, from the
depth to rank 1, the central moments of Y and of X with Y are those of each state's next
states mixed (:func:`_central_moments`), and for any polynomial p with p(0) = 1,
X/Y = X (1 - p(Y)^2)/Y + (X/Y) p(Y)^2 puts E[X/Y] within E[X (1 - p(Y)^2)/Y] +
[g-, g+] E[p(Y)^2], of moments only; the p of degree up to 8 (then 16) that makes E[p(Y)^2]
least is taken (:func:`_polynomial_interval`). Where that is not enough, the distinct
openings of the list's first items are enumerated with their chances (1, 2, 4... items of
the first group, then that group whole, and so on), each with the bound of the rest of the
list from the moments of the state it leads to (:func:`_narrowed`): to a point once every
group is. Where C(i) is 0 or 1
at every rank (BPM), Y is the rank the user stops at and EU is exact:
E[X/Y] = sum_{i<n} E[X(i) r(i) (1 - C(i))]/i + E[X(n) r(n)]/n.

G(i) is added up rank by rank as cwl_eval adds it, but within and after a group it holds the
group's gains summed in one order, not in each arrangement's: the two can differ by a
rounding, which matters only where G(i) equals a threshold of C in exact arithmetic (BPM's T:
1 + 1/3 + 2/3 is 2 in that order and 2 - 2^-51 in the order 1 + 2/3 + 1/3, and cwl_eval's
user stops in one and goes on in the other).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import comb

from metaeval.engine import EvalTensor
from metaeval.measures import base
from metaeval.measures._common import laplace_nodes
from metaeval.measures.base import MeasureValueError, refuse_costly_ties

if TYPE_CHECKING:
    from metaeval.measures.cwl import CWLMeasure, _Ranks

#: Largest half-width of the interval an expected EU is the centre of (see the module's
#: docstring): below the printed precision and the 1e-6 that parity with trec_eval allows.
TIED_RATIO_TOLERANCE = 1e-10
#: Degrees of the polynomial bounds of an EU whose second moments leave it too wide, tried in
#: turn (:func:`_polynomial_interval`); the moments are followed to twice each. On TREC DL
#: 2020, every list of INST meets the tolerance by degree 7; IFT's and NERR's lists where a
#: few relevant documents are tied among many at the top need up to 13.
BOUND_DEGREES = (8, 16)
#: Most openings of a list's first groups enumerated, each with the bound of the rest.
NARROWING_OPENINGS = 2_000
#: The items of a group opened in turn, before the whole group (:func:`_expected_ratio`).
_OPENED = (1, 2, 4, 8, 16)
#: Most states a group's recursion holds at once (:func:`_states`): its memory, about 100 bytes
#: a state and gain.
MAX_GROUP_STATES = 1 << 20
#: Work per state held, rank and gain of a group, in the cells of the work limit (about 1 ns
#: each): 30 ns on the groups of TREC DL 2020.
_STATE_CELL = 30
#: Work per state held, rank, gain and pair of moments (j <= k) of the backward recursion
#: of :func:`_central_moments`, and per rank and moment (and 2.5 more) in units of
#: :data:`_RANK_CELL`: 1.9 ns and 150-390 us measured on TREC DL 2020's groups.
_MOMENT_CELL = 1.7
_MOMENT_RANK = 2.5
#: Largest box (moments^2 x gains x states) whose backward step convolves all its moments in
#: one call (:func:`_group_back`): the interpreter's calls, not the arithmetic, take the
#: time of small boxes.
_SMALL_BOX = 1 << 20
#: Work of the polynomial bound of one arrangement enumerated (:func:`_narrowed`).
_BOUND_CELL = 300_000
#: Work per rank of a group besides its states: the interpreter's own, which small groups are
#: made of (20 us a rank, on TREC DL 2020's 94,000 ranks in 7,000 groups).
_RANK_CELL = 20_000
#: Work per Laplace node, state held, rank and gain of CWL_AP's groups, for each transform
#: followed (E[exp(-t S)], and E[T exp(-t S)] for ETU): 2.7-2.9 ns on TREC DL 2019's groups.
_LAPLACE_CELL = 3
#: Most cells (openings x ranks read) of one list that :func:`expected_by_openings` scores
#: at once: their arrays take about 8 bytes a cell each.
OPENING_CELLS = 1 << 24
#: Work per opening and rank grown and per cell of the openings scored, and per rank grown,
#: for the interpreter: within 25% of the time taken on TREC DL 2020's largest cases.
_OPENING_CELL = 80
_OPENING_RANK = 30_000


def expected_adaptive(measure: CWLMeasure, tensor: EvalTensor) -> np.ndarray:
    """The (S, T) expected value of ``measure``'s output over the orderings of every group of
    tied documents; lists whose groups change nothing keep their value."""

    values = np.array(measure._compute(tensor), dtype=np.float64)
    ranks = _ranks_read(measure)
    plans, work = _plan(measure, tensor, ranks, _STATE_CELL)
    refuse_costly_ties(measure, tensor, work)
    key, residual = measure.output_parts
    step = measure.step_continuation
    # C(i) of IFT can overflow exp() to inf, its limit: 1 / (1 + inf) = 0 is the value; and
    # C is computed, then set aside, at the states no path reaches (INST divides by 0 there)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        spare = [base.TIED_MAXIMUM_CELLS - work.sum()]  # what narrowing EU may take
        _fill(values.reshape(-1), plans, key, residual, measure, tensor, step, ranks, spare)
    return values


def expected_by_openings(measure: CWLMeasure, tensor: EvalTensor) -> np.ndarray:
    """The (S, T) expected value of ``measure``'s output over tied orderings, from the
    distinct openings of each list: the gains of the ranks some user may read
    (:meth:`~metaeval.measures.cwl.CWLMeasure.reach_depth`), each scored as a ranking, as
    cwl_eval scores one, and weighted by its chance.

    A group of m tied items opens with its gains drawn without replacement: at its p-th
    rank, gain v comes with chance (items of gain v left) / (m - p + 1), and the groups are
    independent. Openings grow rank by rank, and one whose user has stopped (C(j) = 0 at a
    rank j read) grows no further: what lies below changes no output. The measure's own
    arithmetic scores each opening, rounding included, so the value is that of every
    ordering averaged; it serves a measure whose sums the orderings round differently
    (BPM, BPM_dynamic), whose users read a few ranks. Refused past :data:`OPENING_CELLS` cells
    (openings x ranks) in one list, or past the work limit in all."""

    values = np.array(measure._compute(tensor), dtype=np.float64)
    ranks = _ranks_read(measure)
    plans, _ = _plan(measure, tensor, ranks, 0.0)
    key, residual = measure.output_parts
    flat = values.reshape(-1)
    spent = 0.0
    for lst, sides in plans:
        out = []
        for gains, spans in sides:
            lists, chance, work = _opening_lists(measure, gains[: ranks.n], spans, ranks)
            spent += work
            if lists is None or spent > base.TIED_MAXIMUM_CELLS:
                s, t = divmod(lst, tensor.n_topics)
                why = (
                    f"score more than {OPENING_CELLS // ranks.n:,} distinct openings of the "
                    f"{ranks.n} ranks a user may read in run {tensor.runs[s]!r}, topic "
                    f"{tensor.topics[t]!r}"
                    if lists is None
                    else f"take more than the {base.TIED_MAXIMUM_CELLS:.0e} steps allowed "
                    f"(reached at run {tensor.runs[s]!r}, topic {tensor.topics[t]!r})"
                )
                raise MeasureValueError(
                    f"{measure}: its expected value over tied orderings would {why}; order "
                    "ties by trec_eval or input"
                )
            out.append(float(chance @ measure._outputs(key, lists, ranks)))
        flat[lst] = out[1] - out[0] if residual else out[0]
    return values


def _ranks_read(measure) -> _Ranks:
    """The ranks down to the measure's depth that some user may read: no output reads past
    them (:meth:`~metaeval.measures.cwl.CWLMeasure.reach_depth`)."""
    from metaeval.measures.cwl import _Ranks

    full = _Ranks(measure.max_depth, measure.cost)
    return _Ranks(measure.reach_depth(full), measure.cost)


def _opening_lists(measure, gains, spans, ranks: _Ranks):
    """Every distinct opening of a list, as rows of gains (openings, n), its chance, and the
    work it took (:data:`_OPENING_CELL` per opening and rank grown, and per cell of the
    openings scored; :data:`_OPENING_RANK` per rank). Each opening carries the sums cwl_eval
    has added up (:meth:`~metaeval.measures.cwl._BPMBase.opening_step`) and whether its user
    still reads. Below a user's stop a row takes any gain its group has left; once no user
    reads on, the rest of the list is left as it is. None for the rows past
    :data:`OPENING_CELLS` cells."""
    n = ranks.n
    lists, chance = gains[None, :n].copy(), np.ones(1)
    state, reading = measure.opening_start(1), np.ones(1, dtype=bool)
    cells = steps = 0
    done = 0  # the ranks the openings have reached
    for start, values, counts in spans:
        for at in range(done, start):  # fixed items before the group
            state, going = measure.opening_step(state, lists[:, at], at, ranks)
            reading &= going
        m, K = int(counts.sum()), len(counts)
        left = np.tile(np.asarray(counts, dtype=np.int64), (len(chance), 1))
        for at in range(start, min(start + m, n)):
            if not reading.any():
                return lists, chance, _opening_work(cells + lists.size, steps)
            # a reader's opening grows by each gain (those with none left are dropped below),
            # a stopped user's by the first gain its group has left
            width = np.where(reading, K, 1)
            rows = np.repeat(np.arange(len(chance)), width)
            each = np.arange(len(rows)) - np.repeat(np.cumsum(width) - width, width)
            gain = np.where(reading[rows], each, np.argmax(left[rows] > 0, axis=1))
            can = left[rows, gain] > 0
            rows, gain = rows[can], gain[can]
            if len(rows) * n > OPENING_CELLS:
                return None, None, _opening_work(cells, steps)
            share = np.where(reading[rows], left[rows, gain] / (m - (at - start)), 1.0)
            lists, chance, left, was = lists[rows], chance[rows] * share, left[rows], reading[rows]
            lists[:, at] = values[gain]
            left[np.arange(len(rows)), gain] -= 1
            state, going = measure.opening_step(state[rows], lists[:, at], at, ranks)
            reading = was & going
            keep, chance = _merged(was, np.column_stack([state, going, left]), chance)
            lists, left, state, reading = lists[keep], left[keep], state[keep], reading[keep]
            cells += 2 * len(rows)
            steps += 1
        done = min(start + m, n)
    return lists, chance, _opening_work(cells + lists.size, steps)


def _opening_work(cells: int, ranks: int) -> float:
    return _OPENING_CELL * cells + _OPENING_RANK * ranks


def _merged(merging, key, chance):
    """Which openings to keep, and their chances: those of ``merging`` (users who read the
    rank just grown) alike in ``key`` merged into the first, their chances summed.

    C(i) is 0 or 1, so the users of an opening read every rank down to their stop, and what
    an opening holds for the rest of the list, and for every output, is whether its user
    stopped at that rank and the sums cwl_eval has added up by then (compared bit for bit)
    and the items its group has left: ``key``. Merged, the openings number the distinct
    sums, not the sequences."""
    keep = np.ones(len(chance), dtype=bool)
    rows = np.flatnonzero(merging)
    if len(rows) < 2:
        return keep, chance
    bits = np.ascontiguousarray(key[rows], dtype=np.float64).view(np.int64)
    _, first, inverse = np.unique(bits, axis=0, return_index=True, return_inverse=True)
    if len(first) == len(rows):
        return keep, chance
    chance = chance.copy()
    chance[rows[first]] = np.bincount(inverse.ravel(), weights=chance[rows])
    keep[rows] = False
    keep[rows[first]] = True
    return keep, chance[keep]


def _plan(measure, tensor: EvalTensor, ranks: _Ranks, cell: float) -> tuple[list, np.ndarray]:
    """(list, [(gains, spans) of the lower bound, and of the upper one for a residual]) of
    every list with a group inside the depth whose order changes a gain (see :func:`_gains`);
    and the work of each list (run * T + topic), :func:`_group_work` of its groups with
    ``cell`` the work of a state, rank and gain, after refusing a group with too many states
    (none with ``cell`` 0: no states are held)."""
    from metaeval.measures.cwl import _code_rows

    work = np.zeros(tensor.n_runs * tensor.n_topics)
    group_lists, groups = tensor.mixed_tie_groups()
    if not len(group_lists):
        return [], work
    table = measure.gain_values(tensor.levels)
    lists, where = np.unique(group_lists, return_inverse=True)
    by_list = [[] for _ in lists]
    for g, (start, codes, _) in zip(where, groups):
        if start < ranks.n:
            by_list[g].append((start, codes))
    sides_of = ("lo", "hi") if measure.output_parts[1] else ("lo",)
    plans = []
    for lst, mine in zip(lists, by_list):
        codes = _code_rows(tensor, int(lst), int(lst) + 1, ranks.n)[0]
        sides = [_gains(measure, table, side, codes, mine) for side in sides_of]
        if not any(spans for _, spans in sides):
            continue  # no group inside the depth changes a gain
        for _, spans in sides:
            for start, _, counts in spans:
                states = _states(counts, ranks.n - start)
                if states > MAX_GROUP_STATES and cell:
                    _refuse_states(measure, tensor, int(lst), states)
                work[lst] += _group_work(counts, cell, ranks.n - start)
        plans.append((int(lst), sides))
    return plans, work


def _group_work(counts, cell: float, depth: int) -> float:
    """The work of one group's recursion down to ``depth`` of its ranks: ``cell`` per state
    held, rank and gain, and :data:`_RANK_CELL` per rank."""
    m = min(int(counts.sum()), depth)
    return cell * _states(counts, depth) * m * len(counts) + _RANK_CELL * m


def _fill(flat, plans, key, residual, measure, tensor, step, ranks, spare) -> None:
    """Each planned list's expected output, into ``flat``; ``spare`` holds the work that
    narrowing the intervals of EU may still take."""
    for lst, sides in plans:
        out = []  # the lower bound's output, and the upper bound's for a residual
        for gains, spans in sides:
            if key == "EU":
                out.append(_expected_ratio(measure, tensor, lst, step, ranks, gains, spans, spare))
            else:
                moments, _ = _moments(step, ranks, gains, spans, second=False)
                out.append(moments[{"ETU": _ETU, "ETC": _ETC, "ED": _Y}[key]])
        flat[lst] = out[1] - out[0] if residual else out[0]


def _gains(measure, table, side, codes, groups):
    """The gains of a list at ranks 0..n-1 (``codes`` in the order given) and its groups as
    (start, gains, counts) of their distinct gains, in rank order; groups of one gain are left
    in the list: their order changes nothing. ``side`` ``hi`` gives unjudged and notional
    items ``max_gain``, as the upper bound of a residual does."""
    from metaeval.measures.cwl import gains_of

    unknown = 0.0 if side == "lo" else measure.max_gain
    gains = gains_of(table, codes, unknown)
    spans = []
    for start, member_codes in sorted(groups, key=lambda g: g[0]):
        values, counts = np.unique(gains_of(table, member_codes, unknown), return_counts=True)
        if len(values) > 1:
            spans.append((start, values, counts))
    return gains, spans


# indices of the accumulated sums
_X, _Y, _Y2, _XY, _ETU, _ETC, _STOP = range(7)


def _moments(step, ranks: _Ranks, gains, spans, second: bool) -> tuple[np.ndarray, bool]:
    """E[X], E[Y], E[Y^2], E[XY], E[ETU], E[ETC] and the stopping sum of one list over the
    orderings of its groups ``spans`` (the gains of the other ranks in ``gains``), and whether
    every C(i) met was 0 or 1. Without ``second``, only the first moments (E[X], E[Y], E[ETU],
    E[ETC]); the others are then 0."""
    total = np.zeros(7)
    start = (np.array([1.0, 1.0, 0.0, 0.0] if second else [1.0]), 0.0, True)  # rank 1, G(0)
    *_, binary = _walk(
        spans,
        ranks.n,
        start,
        lambda a, b, state: _stretch(step, ranks, gains, a, b, state, total),
        lambda at, values, counts, state: _group(step, ranks, at, values, counts, state, total),
    )
    return total, binary


def _walk(spans, n: int, state, stretch, group):
    """``state`` carried down one list to the depth n: ``stretch(a, b, state)`` over each run
    of fixed ranks a..b-1, ``group(start, values, counts, state)`` over each group."""
    at = 0
    for start, values, counts in spans:
        if start > at:
            state = stretch(at, start, state)
        state = group(start, values, counts, state)
        at = start + int(counts.sum())
        if at >= n:
            return state
    return stretch(at, n, state) if at < n else state


def _add(total, sums, gain, found, C, at, ranks: _Ranks) -> None:
    """Add the terms of ranks (or states) whose A (and B, U, V) are ``sums``, with these
    g(i), G(i) and C(i)."""
    A = sums[0]
    total[_X] += np.sum(A * gain)
    total[_Y] += np.sum(A)
    stopping = A * (1.0 - C)
    total[_ETU] += np.vdot(stopping, found)
    total[_ETC] += np.sum(stopping * ranks.cum_costs[at])
    if len(sums) == 1:
        return
    _, B, U, V = sums
    total[_Y2] += np.sum(B + 2.0 * U)
    total[_XY] += np.sum(gain * (B + U) + V)
    # E[X(i) r(i)] over the users who stop at rank i (all who reach rank n stop there)
    stop = np.where(np.asarray(at) == ranks.n - 1, 1.0, 1.0 - C)
    total[_STOP] += np.sum((V + gain * B) * stop / ranks.i[at])


def _binary(C) -> bool:
    return bool(np.all((C == 0.0) | (C == 1.0)))


def _moved(sums, C, gain):
    """A, B, U, V one rank on, before the next item: C A, C^2 B, C (U + B), C (V + g B)."""
    if len(sums) == 1:
        return [C * sums[0]]
    A, B, U, V = sums
    return [C * A, C * C * B, C * (U + B), C * (V + gain * B)]


def _stretch(step, ranks, gains, a: int, b: int, state, total):
    """Ranks a..b-1 of fixed gains from ``state`` (A.., G, whether every C was 0 or 1), in one
    vector step: with rho(j) the product of C over a..j-1, A(j) = A rho, B(j) = B rho^2,
    U(j) = rho (U + B sum rho) and V(j) = rho (V + B sum rho g), the sums over the ranks
    before j."""
    state, found, binary = state
    gain, at, found, C, rho = _fixed_ranks(step, ranks, gains, a, b, found)
    if len(state) == 1:
        sums = [state[0] * rho]
    else:
        A, B, U, V = state
        sigma = np.concatenate(([0.0], np.cumsum(rho[:-1])))
        tau = np.concatenate(([0.0], np.cumsum(rho[:-1] * gain)))
        sums = [A * rho, B * rho**2, rho * (U + B * sigma), rho * (V + B * tau)]
    _add(total, [x[:-1] for x in sums], gain, found, C, at, ranks)
    return np.array([x[-1] for x in sums]), found[-1], binary and _binary(C)


def _fixed_ranks(step, ranks: _Ranks, gains, a: int, b: int, found: float):
    """Ranks a..b-1 of fixed gains after the gain ``found``: their gains, 0-based ranks,
    G(i), C(i), and rho(j), the product of C over a..j-1 for j = a..b (rho(b), the product
    over them all, to go on with)."""
    gain, at = gains[a:b], np.arange(a, b)
    G = np.cumsum(np.concatenate(([found], gain)))[1:]  # one addition at a time
    C = np.broadcast_to(step(G, gain, at, ranks), gain.shape)
    rho = np.empty(b - a + 1)
    rho[0] = 1.0
    np.cumprod(C, out=rho[1:])
    return gain, at, G, C, rho


class _Box:
    """The states of one group of tied items, depth by depth.

    After p items of the group, a state is how many of each gain it has placed; the count of
    the most frequent gain is p minus the others', so the states of every p are held in one
    array over the other gains' counts (its cells that p cannot reach hold nothing), and an
    item moves a state one step along its gain's axis (along none for the most frequent gain).
    Arrays of the box may have leading axes (moments, Laplace nodes) before a gain axis. A
    group that the depth cuts after ``depth`` items places no more than that many of a gain."""

    def __init__(self, values, counts, found: float, depth: int):
        self.values, self.counts = values, counts
        self.m, K = int(counts.sum()), len(counts)
        self.big = int(np.argmax(counts))
        self.others = [k for k in range(K) if k != self.big]
        self.shape = tuple(min(int(counts[k]), depth) + 1 for k in self.others)
        placed = np.indices(self.shape, sparse=True)  # the other gains' counts, an axis each
        self.placed_others = sum(placed)
        self.found_others = found + sum(
            x * (values[k] - values[self.big]) for x, k in zip(placed, self.others)
        )
        self.gain = values.reshape(K, *(1,) * len(self.shape))  # on the gain axis
        self.left = np.empty((K, *self.shape))  # the items of each gain still to come
        for axis, k in enumerate(self.others):
            self.left[k] = counts[k] - placed[axis]

    def start(self, state) -> np.ndarray:
        """An array of the box holding ``state`` (leading axes) at the empty state."""
        state = np.asarray(state, dtype=np.float64)
        out = np.zeros((*state.shape, *self.shape))
        out[(...,) + (0,) * len(self.shape)] = state
        return out

    def step(self, p: int):
        """At depth p, for each gain (first axis) and state: whether some path reaches the
        state and an item of that gain can come next, the chance that it does, and G(i) once
        it has."""
        placed_big = p - self.placed_others
        self.left[self.big] = self.counts[self.big] - placed_big
        can = (placed_big >= 0) & (placed_big <= self.counts[self.big]) & (self.left > 0)
        share = np.where(can, self.left / (self.m - p), 0.0)
        found = self.found_others + p * self.values[self.big] + self.gain
        return can, share, found

    def advance(self, moved: np.ndarray) -> np.ndarray:
        """The states one item on: ``moved`` (..., gains, *box) the mass that an item of each
        gain takes from each state, summed where it lands."""
        d = len(self.shape)
        by_gain = np.moveaxis(moved, -d - 1, 0)  # views, not copies, of each gain's mass
        out = by_gain[self.big].copy()
        for axis, k in enumerate(self.others):  # one more item of gain k: along its axis
            to = [slice(None)] * out.ndim
            source = list(to)
            to[out.ndim - d + axis] = slice(1, None)
            source[out.ndim - d + axis] = slice(None, -1)
            out[tuple(to)] += by_gain[k][tuple(source)]
        return out

    def gather(self, array: np.ndarray) -> np.ndarray:
        """The other way: ``array`` (..., *box) at the state one item of each gain on from
        each state, (..., gains, *box); 0 where no state is."""
        d = len(self.shape)
        out = np.zeros((*array.shape[:-d], len(self.values), *self.shape))
        by_gain = np.moveaxis(out, -d - 1, 0)  # views
        by_gain[self.big] = array
        for axis, k in enumerate(self.others):
            to = [slice(None)] * array.ndim
            source = list(to)
            to[array.ndim - d + axis] = slice(None, -1)
            source[array.ndim - d + axis] = slice(1, None)
            by_gain[k][tuple(to)] = array[tuple(source)]
        return out

    def end(self, array: np.ndarray) -> np.ndarray:
        """The leading axes of ``array`` at the state with every item placed."""
        return array[(...,) + (-1,) * len(self.shape)]


def _group(step, ranks, start: int, values, counts, state, total):
    """The ranks of one group of tied items (:class:`_Box`); the list's state after it (None
    when the depth n cuts it)."""
    state, found, binary = state
    box = _Box(values, counts, found, ranks.n - start)
    sums = box.start(state)
    for p in range(min(box.m, ranks.n - start)):
        can, share, now = box.step(p)
        parts = share * sums[:, None]
        C = np.where(can, step(now, box.gain, start + p, ranks), 0.0)
        binary = binary and _binary(C[can])
        _add(total, parts, box.gain, now, C, start + p, ranks)
        sums = box.advance(np.array(_moved(parts, C, box.gain)))
    if start + box.m > ranks.n:
        return None, None, binary
    return box.end(sums), found + float(values @ counts), binary


def expected_cwl_ap(measure: CWLMeasure, tensor: EvalTensor) -> np.ndarray | None:
    """CWL_AP's ETU, ETC and ED over tied orderings, their residuals and ResEU (its EU has a
    closed form); None when a group crosses the depth n, whose gain within it the order then
    changes (every ordering is scored instead).

    Its reach is S(i)/S(1), S(i) = sum_{j>=i} g(j)/j, so with G(n) the gain within the depth
    and T = sum_i g(i) G(i)/i: ED = G(n)/S(1), ETC = cost ED, ETU = T/S(1) and EU = T/G(n).
    Over tied orderings G(n) is fixed, and E[1/S] = int_0^inf E[exp(-t S)] dt,
    E[T/S] = int_0^inf E[T exp(-t S)] dt, whose integrands follow state by state
    (:class:`_Box`): an item of gain g at rank i multiplies every path by exp(-t g/i) and
    adds g G(i)/i to T. As G(n)/n <= S(1) <= G(n), the integrals are taken at the nodes of
    :func:`~metaeval.measures._common.laplace_nodes` for a span of n, t in units of 1/G(n)."""
    from metaeval.measures.cwl import _Ranks

    ranks = _Ranks(measure.max_depth, measure.cost)
    key, residual = measure.output_parts
    # EU needs E[T] alone: the transform at t = 0
    t, w = (np.zeros(1), np.zeros(1)) if key == "EU" else laplace_nodes(ranks.n)
    transforms = 2 if key in ("EU", "ETU") else 1
    plans, work = _plan(measure, tensor, ranks, _LAPLACE_CELL * transforms * len(t))
    groups = [group for _, sides in plans for _, spans in sides for group in spans]
    if any(start + counts.sum() > ranks.n for start, _, counts in groups):
        return None
    refuse_costly_ties(measure, tensor, work)
    values = np.array(measure._compute(tensor), dtype=np.float64)
    flat = values.reshape(-1)
    with np.errstate(under="ignore"):
        for lst, sides in plans:
            out = [_ap_output(key, gains, spans, t, w, ranks) for gains, spans in sides]
            flat[lst] = out[1] - out[0] if residual else out[0]
    return values


def _ap_output(key: str, gains, spans, t, w, ranks: _Ranks) -> float:
    """E[output] of CWL_AP on one list, from E[exp(-t S)] and E[T exp(-t S)] at the nodes t
    with weights w of :func:`~metaeval.measures._common.laplace_nodes` (t = 0 alone for EU)."""
    total = float(np.sum(gains[: ranks.n]))  # G(n), whatever the order
    if total == 0.0:  # no gain within the depth: C = 0, the user reads the first item
        return {"EU": 0.0, "ETU": 0.0, "ED": 1.0, "ETC": ranks.costs[0]}[key]
    nodes = t / total
    # ED and ETC need E[exp(-t S)] alone: E[T exp(-t S)] (None) doubles the work
    with_T = np.zeros(len(t)) if key in ("EU", "ETU") else None
    F, H, found = _walk(  # E[exp(-t S)], E[T exp(-t S)], and G(n): no group crosses n
        spans,
        ranks.n,
        (np.ones(len(t)), with_T, 0.0),
        lambda a, b, state: _ap_stretch(gains, a, b, *state, nodes, ranks),
        lambda at, values, counts, state: _ap_group(at, values, counts, *state, nodes, ranks),
    )
    if key == "EU":
        return H[0] / found
    weights = w * nodes  # int f dt = int f t d(ln t)
    if key == "ETU":
        return float(weights @ H)
    depth = found * float(weights @ F)  # ED = G(n) E[1/S]
    return depth if key == "ED" else depth * ranks.costs[0]  # ETC


def _ap_stretch(gains, a: int, b: int, F, H, found: float, t, ranks: _Ranks):
    """Ranks a..b-1 of fixed gains: S grows by sum g/i and T by sum g G/i."""
    gain, i = gains[a:b], ranks.i[a:b]
    G = np.cumsum(np.concatenate(([found], gain)))[1:]
    factor = np.exp(-t * float(np.sum(gain / i)))
    if H is not None:
        H = (H + F * float(np.sum(gain * G / i))) * factor
    return F * factor, H, G[-1]


def _ap_group(start: int, values, counts, F, H, found: float, t, ranks: _Ranks):
    """The ranks of one group of tied items, inside the depth (H None: not followed)."""
    box = _Box(values, counts, found, ranks.n - start)
    F = box.start(F)
    H = None if H is None else box.start(H)
    nodes = t.reshape(-1, *(1,) * (len(box.shape) + 1))
    # (nodes, gains, *box), written in place: at DL's largest groups each is tens of MB,
    # which fresh arrays at every rank would page in again
    moved = np.empty((len(t), len(values), *box.shape))
    adds = None if H is None else np.empty_like(moved)
    for p in range(box.m):
        _, share, now = box.step(p)
        i = ranks.i[start + p]
        # the paths' chance of each next gain g, times exp(-t g/i)
        np.multiply(share, np.exp(-nodes * box.gain / i), out=moved)
        if H is not None:
            np.multiply(F[:, None], box.gain * now / i, out=adds)  # T grows by g G(i)/i
            adds += H[:, None]
            adds *= moved
            H = box.advance(adds)
        moved *= F[:, None]
        F = box.advance(moved)
    return box.end(F), None if H is None else box.end(H), found + float(values @ counts)


def _states(counts, depth: int) -> int:
    """The states a group's recursion holds at once (:class:`_Box`) when the depth cuts it
    after ``depth`` items: the product, over every gain but the most frequent, of its count
    (at most ``depth``) + 1."""
    held = [min(int(c), depth) + 1 for c in counts]
    return math.prod(held) // held[int(np.argmax(counts))]


def _gain_range(ranks: _Ranks, gains, spans) -> tuple[float, float]:
    """The least and the greatest gain of a list within the depth, g- and g+: X/Y lies
    between them."""
    everything = [gains[: ranks.n], *(values for _, values, _ in spans)]
    return min(float(g.min()) for g in everything), max(float(g.max()) for g in everything)


def _ratio(step, ranks, gains, spans, bounds) -> tuple[float, float, bool]:
    """E[X/Y] of one list from the first and second moments: (centre, half-width) of the
    interval shown to hold it, given ``bounds`` (:func:`_gain_range`), and whether every C(i)
    was 0 or 1 (the value is then exact)."""
    total, binary = _moments(step, ranks, gains, spans, second=True)
    if binary:
        return total[_STOP], 0.0, True
    mu = total[_Y]
    spread = max(total[_Y2] - mu * mu, 0.0) / mu**2
    covariance = (total[_XY] - total[_X] * mu) / mu**2
    least, greatest = bounds
    centre = total[_X] / mu - covariance + (least + greatest) / 2.0 * spread
    return centre, (greatest - least) / 2.0 * spread, False


def _expected_ratio(measure, tensor, lst, step, ranks, gains, spans, spare) -> float:
    """E[EU] of one list to :data:`TIED_RATIO_TOLERANCE`: from the second moments, else from
    the moments to twice each of :data:`BOUND_DEGREES`, else with openings enumerated, each
    with the bound of the rest (:func:`_narrowed`): of 1, 2, 4... items of the first group,
    then the first group whole and 1, 2, 4... items of the second, and so on; refused past the
    openings allowed, or past the work left in ``spare``."""
    bounds = _gain_range(ranks, gains, spans)
    centre, half, exact = _ratio(step, ranks, gains, spans, bounds)
    if exact or half <= TIED_RATIO_TOLERANCE:
        return centre
    for degree in BOUND_DEGREES:
        moments = 2 * degree + 1
        work = sum(_moment_work(c, moments, ranks.n - start) for start, _, c in spans)
        _spend(spare, work, measure, tensor, lst, half)
        rests, ends = _central_moments(step, ranks, gains, spans, moments)
        for heads in range(len(spans) + 1):
            tries = [(0, rests[heads])]  # the first groups whole, then items of the next
            while tries:
                items, rest = tries.pop(0)
                better = _narrowed(step, ranks, gains, spans, heads, items, rest, bounds, spare)
                if better is None:
                    break
                if better[1] < half:
                    centre, half = better
                if half <= TIED_RATIO_TOLERANCE:
                    return centre
                if items == 0 and heads < len(spans):  # by the moments of their states
                    start, values, counts = spans[heads]
                    opened = [k for k in _OPENED if k < min(int(counts.sum()), ranks.n - start)]
                    work = _moment_work(counts, moments, ranks.n - start)
                    _spend(spare, work, measure, tensor, lst, half)
                    found, end = ends[heads]
                    kept = _group_back(step, ranks, start, values, counts, found, end, opened)[1]
                    tries = [(k, kept[k]) for k in opened]
            if better is None:
                break
    _spend(spare, 0.0, measure, tensor, lst, half)
    why = (
        f"need moments past order {2 * BOUND_DEGREES[-1]}, or more than "
        f"{NARROWING_OPENINGS:,} openings of its first groups of tied documents "
        f"({OPENING_CELLS:,} openings x ranks where every group is enumerated)"
    )
    _refuse_bound(measure, tensor, lst, half, why)
    raise AssertionError  # pragma: no cover


def _spend(spare, work: float, measure, tensor, lst: int, half: float) -> None:
    """Take ``work`` from ``spare``; refuse the measure once it is spent."""
    spare[0] -= work
    if spare[0] < 0:
        why = f"take more than the {base.TIED_MAXIMUM_CELLS:.0e} steps of work allowed"
        _refuse_bound(measure, tensor, lst, half, why)


def _narrowed(step, ranks: _Ranks, gains, spans, heads: int, items: int, rest, bounds, spare):
    """(centre, half-width) of E[X/Y] with the distinct openings of the first ``heads``
    groups and of ``items`` items of the next enumerated (:func:`_openings`: a group's
    arrangements, or its openings down to the depth where the depth cuts it), each with its
    chance and the polynomial bound of the rest of the list; None past
    :data:`NARROWING_OPENINGS` openings, or, with every group enumerated (the value exact),
    past :data:`OPENING_CELLS` cells (openings x ranks), or past the work left in ``spare``.

    The rest's moments are ``rest``: those of :func:`_central_moments` from the rank the next
    group starts at, which no opening before it changes (the gain found there is the same);
    or, with ``items`` opened, :func:`_group_back`'s at that depth of the group, read at
    each opening's state. Before the rest, an opening's ranks add Y_h and X_h and reach it
    with r = rho: Y = Y_h + rho Y', X = X_h + rho X', whose central moments are those of Y'
    and X' times powers of rho."""
    last = heads == len(spans)
    opened = [(s, v, c, int(c.sum())) for s, v, c in spans[:heads]]
    if items:
        opened.append((*spans[heads], items))
    if last:
        depth = min(ranks.n, spans[-1][0] + int(spans[-1][2].sum()))
    else:
        depth = spans[heads][0] + items
    limit = OPENING_CELLS // max(depth, 1) if last else NARROWING_OPENINGS
    rows, chance = gains[None, :depth].copy(), np.ones(1)
    for start, values, counts, length in opened:
        stop = min(start + length, depth)
        if _opening_count(counts, stop - start, limit) * len(rows) > limit:
            return None
        orders, weights = _openings(values, counts, stop - start)
        rows = np.repeat(rows, len(orders), axis=0)  # each row with each opening
        rows[:, start:stop] = np.tile(orders, (len(chance), 1))
        chance = np.repeat(chance, len(weights)) * np.tile(weights, len(chance))
    spare[0] -= _OPENING_CELL * rows.size + (0 if last else _BOUND_CELL * len(rows))
    if spare[0] < 0:
        return None
    found = np.cumsum(rows, axis=1)  # one addition at a time
    C = np.broadcast_to(step(found, rows, np.arange(depth), ranks), rows.shape)
    reach = np.ones((len(rows), depth + 1))
    np.cumprod(C, axis=1, out=reach[:, 1:])
    head_y, head_x = reach[:, :-1].sum(axis=1), np.einsum("ij,ij->i", reach[:, :-1], rows)
    rho = reach[:, -1]
    if items:  # each row's state in the opened group: its items of each gain
        MY, MX, MU, NU, box = rest
        own = rows[:, spans[heads][0] : depth]
        state = tuple((own == box.values[k]).sum(axis=1) for k in box.others)
        mean_y, mean_x, mu, nu = (
            MY[state],
            MX[state],
            MU[(slice(None), *state)].T,
            NU[(slice(None), *state)].T,
        )
    else:
        mean_y, mean_x, mu, nu = (np.broadcast_to(x, (len(rows), *np.shape(x))) for x in rest)
    if last:  # nothing tied after: Y and X are those of the row
        return float(chance @ ((head_x + rho * mean_x) / (head_y + rho * mean_y))), 0.0
    powers = rho[:, None] ** np.arange(mu.shape[1])
    intervals = [
        _polynomial_interval(
            head_y[a] + rho[a] * mean_y[a],
            head_x[a] + rho[a] * mean_x[a],
            mu[a] * powers[a],
            nu[a] * powers[a] * rho[a],
            *bounds,
            (mu.shape[1] - 1) // 2,
        )
        for a in range(len(rows))
    ]
    return tuple(chance @ np.array(intervals))


def _opening_count(counts, length: int, cap: int) -> float:
    """The number of distinct openings of ``length`` items of a group, or more than ``cap``:
    sequences of its gains with no more of each than it has. Gain by gain, the sequences of
    l items are sum_j binom(l, j) (those of l - j items without this gain)."""
    ways = np.zeros(length + 1)
    ways[0] = 1.0
    lengths = np.arange(length + 1)
    for count in counts:
        more = ways.copy()  # none of this gain
        for j in range(1, min(int(count), length) + 1):
            more[j:] += comb(lengths[j:], j) * ways[: length + 1 - j]
        # counted to just past the cap (an overflow, inf or nan, is past it too)
        ways = np.fmin(np.nan_to_num(more, nan=np.inf), cap + 1.0)
    return float(ways[length])


def _openings(values, counts, length: int):
    """Every distinct opening of ``length`` items of a group (its gains, (P, length)) and its
    chance, drawn without replacement: at the p-th item, gain v comes with chance (items of
    gain v left) / (m - p). With the group's every item, the openings are its distinct
    arrangements, equally likely."""
    m, K = int(counts.sum()), len(values)
    chance = np.ones(1)
    left = np.asarray(counts, dtype=np.float64)[None, :]
    steps = []  # each rank's (the opening it grew from, the gain it took)
    for p in range(length):
        rows, gain = np.divmod(np.arange(len(chance) * K), K)
        can = left[rows, gain] > 0
        rows, gain = rows[can], gain[can]
        chance = chance[rows] * left[rows, gain] / (m - p)
        left = left[rows]
        left[np.arange(len(rows)), gain] -= 1
        steps.append((rows, gain))
    orders = np.empty((len(chance), length))
    at = np.arange(len(chance))
    for p in range(length - 1, -1, -1):  # each opening's gains, back from its last rank
        rows, gain = steps[p]
        orders[:, p] = values[gain[at]]
        at = rows[at]
    return orders, chance


def _moment_work(counts, moments: int, depth: int) -> float:
    """The work of one group's backward recursion of ``moments`` central moments
    (:func:`_central_moments`): :data:`_MOMENT_CELL` per state held, rank, gain and pair of
    moments, and :data:`_RANK_CELL` times (:data:`_MOMENT_RANK` + moments) per rank."""
    m = min(int(counts.sum()), depth)
    pairs = moments * (moments + 1) / 2
    cells = pairs * _states(counts, depth) * m * len(counts)
    return _MOMENT_CELL * cells + _RANK_CELL * (_MOMENT_RANK + moments) * m


def _central_moments(step, ranks: _Ranks, gains, spans, K: int) -> list[tuple]:
    """E[Y], E[X], and E[W^k]/k! and E[V W^k]/k! for k < K, with W = Y - E[Y] and
    V = X - E[X], over the orderings of one list's groups ``spans``, for Y and X the sums
    from the rank each group starts at on, and from the end of the last: one
    (E[Y], E[X], moments of W, of V W) for each; and each group's G before it and those
    moments at its end (for :func:`_group_back` to go over it again).

    They follow the list backward, from the depth to rank 1: with Y(i) = 1 + C(i) Y(i+1) and
    X(i) = g(i) + C(i) X(i+1) the sums from rank i on (0 past the depth), each state's
    moments are those of its next states' mixed: a next state one item of gain g on, reached
    with its chance, adds d = 1 + C E[Y(i+1)] - E[Y(i)] to W and e = g + C E[X(i+1)] - E[X(i)]
    to V, so that

        E[W^k] = sum_g chance sum_j binom(k, j) d^(k-j) C^j E[W'^j],
        E[V W^k] = sum_g chance sum_j binom(k, j) d^(k-j) C^j (e E[W'^j] + C E[V' W'^j]).

    Centred at each state's own means, no sum is of terms much larger than itself, as the
    moments of Y about 0 would be; scaled by 1/k!, the binomial sums are plain convolutions.
    A stretch of fixed ranks scales W and V by its product of C."""
    segments = []  # (start, stop, the group's values and counts or None, G before them)

    def stretch(a, b, found):
        segments.append((a, b, None, None, found))
        return float(np.cumsum(np.concatenate(([found], gains[a:b])))[-1])

    def group(start, values, counts, found):
        segments.append((start, None, values, counts, found))
        return found + float(values @ counts)

    _walk(spans, ranks.n, 0.0, stretch, group)
    nothing = (0.0, 0.0, np.eye(1, K)[0], np.zeros(K))  # past the depth, Y = X = 0
    state, rests, ends = nothing, [], []
    for start, stop, values, counts, found in reversed(segments):
        if values is None:
            state = _stretch_back(step, ranks, gains, start, stop, found, state)
            continue
        if not rests:  # the last group's end: past the depth if the depth cuts it
            rests.append(state if start + counts.sum() <= ranks.n else nothing)
        ends.append((found, state))
        state, _ = _group_back(step, ranks, start, values, counts, found, state)
        rests.append(state)
        if len(rests) > len(spans):
            break  # only fixed ranks before: the head of every narrowing has them
    return rests[::-1], ends[::-1]


def _stretch_back(step, ranks: _Ranks, gains, a: int, b: int, found: float, state):
    """Ranks a..b-1 of fixed gains before ``state``: with rho(j) the product of C over
    a..j-1, Y(a) = sum rho + rho(b) Y(b) and X(a) = sum rho g + rho(b) X(b)."""
    mean_y, mean_x, mu, nu = state
    gain, *_, rho = _fixed_ranks(step, ranks, gains, a, b, found)
    last = rho[-1]
    powers = last ** np.arange(len(mu))
    mean_y = float(np.sum(rho[:-1])) + last * mean_y
    mean_x = float(rho[:-1] @ gain) + last * mean_x
    return mean_y, mean_x, mu * powers, nu * powers * last


def _group_back(step, ranks: _Ranks, start: int, values, counts, found: float, state, keep=()):
    """The ranks of one group of tied items before ``state`` (:class:`_Box`, backward): the
    means and scaled moments at its first rank (see :func:`_central_moments`), and at each
    depth p of ``keep`` (p items placed) those of every state, (E[Y], E[X], E[W^k]/k!,
    E[V W^k]/k!, the box), the moments on the first axis."""
    box = _Box(values, counts, found, ranks.n - start)
    depth = min(box.m, ranks.n - start)
    mean_y, mean_x, mu, nu = state
    if depth < box.m:  # the depth cuts the group: nothing is added past it
        mean_y, mean_x, mu, nu = 0.0, 0.0, np.eye(1, len(mu))[0], np.zeros(len(mu))
    # the states in one axis, and the moments from the highest down (see below):
    # (moments, gains, states)
    S, K, G = math.prod(box.shape), len(mu), len(values)
    MY, MX = np.full(box.shape, mean_y), np.full(box.shape, mean_x)
    MU = np.repeat(mu[::-1, None], S, axis=1).reshape(K, *box.shape)
    NU = np.repeat(nu[::-1, None], S, axis=1).reshape(K, *box.shape)
    powers = np.empty((K, G, S))
    kept = {}
    # a small box takes the convolution in one call: a[K-1-k+i] where i <= k, and 0 where not
    small = K * K * G * S <= _SMALL_BOX
    if small:
        order, term = np.indices((K, K))
        shifts = np.clip(K - 1 - order + term, 0, K - 1)
        below = (term <= order)[:, :, None, None]
    for p in range(depth - 1, -1, -1):
        can, share, now = box.step(p)
        # C at the states no path reaches is set aside (INST divides by 0 there): every sum
        # stays finite, and the chance of 0 of such a branch weighs it out
        C = np.where(can, step(now, box.gain, start + p, ranks), 0.0)
        branch_y = 1.0 + C * box.gather(MY)  # each next state's sums, by the gain leading to it
        branch_x = box.gain + C * box.gather(MX)
        MY, MX = np.sum(share * branch_y, axis=0), np.sum(share * branch_x, axis=0)
        d = (branch_y - MY).reshape(G, S)
        e = (branch_x - MX).reshape(G, S)
        C, share = C.reshape(G, S), share.reshape(G, S)
        # a_j = E[(C W')^j]/j! and b_j = E[(e + C V') (C W')^j]/j!, each times its chance,
        # at K-1-j
        a = box.gather(MU).reshape(K, G, S)
        b = box.gather(NU).reshape(K, G, S)
        b *= C
        b += e * a
        powers[-1] = share
        for j in range(K - 2, -1, -1):
            np.multiply(powers[j + 1], C, out=powers[j])
        a *= powers
        b *= powers
        # E[W^k]/k! = sum_g sum_(i<=k) d^i/i! a_(k-i): with a from the highest order down,
        # the a_(k-i) of i = 0..k are a[K-1-k:], contiguous
        powers[0] = 1.0
        for i in range(1, K):
            np.multiply(powers[i - 1], d, out=powers[i])
            powers[i] /= i
        if small:  # one call, not one an order: a_(k-i) for every k and i at once
            terms = powers[None] * below
            MU = np.einsum("kigs,kigs->ks", terms, a[shifts])[::-1]
            NU = np.einsum("kigs,kigs->ks", terms, b[shifts])[::-1]
        else:
            orders = range(K - 1, -1, -1)
            MU = np.stack(
                [np.einsum("igs,igs->s", powers[: k + 1], a[K - 1 - k :]) for k in orders]
            )
            NU = np.stack(
                [np.einsum("igs,igs->s", powers[: k + 1], b[K - 1 - k :]) for k in orders]
            )
        MU, NU = MU.reshape(K, *box.shape), NU.reshape(K, *box.shape)
        if p in keep:
            kept[p] = (MY, MX, MU[::-1], NU[::-1], box)
    first = (slice(None, None, -1), *(0,) * len(box.shape))
    return (float(MY[first[1:]]), float(MX[first[1:]]), MU[first], NU[first]), kept


def _polynomial_interval(mean_y, mean_x, mu, nu, least, greatest, degree: int):
    """(centre, half-width) of the narrowest interval shown to hold E[X/Y] by the
    polynomials p of degree 1..``degree`` with p(0) = 1, from the scaled central moments of
    :func:`_central_moments` (to order 2 ``degree``).

    With q(y) = (1 - p(y)^2)/y, a polynomial of degree 2 deg p - 1,
    X/Y = X q(Y) + (X/Y) p(Y)^2, and as X/Y lies in [g-, g+] and p^2 >= 0, E[X/Y] lies in
    E[X q(Y)] + [g-, g+] E[p(Y)^2]. Any such p holds; the one taken, in Z = (Y - E[Y])/sd,
    minimises E[p^2] given p = 1 at Y = 0: the moment matrix's solution (Christoffel's
    function of the law of Y, at 0), which falls geometrically with the degree where Y keeps
    away from 0. The width also carries the rounding of the sums, 1e-13 of the largest
    term's size."""
    K = len(mu)
    scale = np.array([math.factorial(k) for k in range(K)], dtype=np.float64)
    sd = math.sqrt(max(mu[2] * 2.0, 0.0))
    if sd == 0.0:  # Y is fixed
        return mean_x / mean_y, 0.0
    scale /= sd ** np.arange(K)
    z, w = mu * scale, nu * scale  # E[Z^k] and E[V Z^k]
    z0 = -mean_y / sd  # Y = 0
    best = (math.nan, math.inf)
    for m in range(1, degree + 1):
        H = z[np.add.outer(np.arange(m + 1), np.arange(m + 1))]
        v = z0 ** np.arange(m + 1)
        if not (np.isfinite(H).all() and np.isfinite(v).all()):
            break  # Y all but fixed: the second moments have said all there is
        c = np.linalg.lstsq(H, v, rcond=None)[0]
        if not v @ c:
            continue
        c = c / (v @ c)
        p = np.polynomial.Polynomial(c)
        s = ((1.0 - p * p) // np.polynomial.Polynomial([-z0, 1.0])).coef  # sd q(Y), in Z
        size = float(np.sum(np.abs(c) * np.sqrt(np.abs(np.diag(H))))) ** 2
        size += float(np.abs(s) @ (abs(mean_x) * np.abs(z[: len(s)]) + np.abs(w[: len(s)]))) / sd
        square = float(c @ H @ c)  # E[p(Y)^2]
        centre = float(s @ (mean_x * z[: len(s)] + w[: len(s)])) / sd
        centre += (least + greatest) / 2.0 * square
        half = (greatest - least) / 2.0 * abs(square) + 1e-13 * size
        if half < best[1]:
            best = (centre, half)
        if half <= TIED_RATIO_TOLERANCE:
            break
    return best


def _refuse_bound(measure, tensor, lst: int, half: float, why: str) -> None:
    s, t = divmod(lst, tensor.n_topics)
    raise MeasureValueError(
        f"{measure}: run {tensor.runs[s]!r}, topic {tensor.topics[t]!r}: its expected value "
        f"over tied orderings is bracketed only to +-{half:.1g} (at most "
        f"{TIED_RATIO_TOLERANCE:g} is allowed), and narrowing it would {why}; order ties by "
        "trec_eval or input"
    )


def _refuse_states(measure, tensor, lst: int, states: int) -> None:
    s, t = divmod(lst, tensor.n_topics)
    raise MeasureValueError(
        f"{measure}: run {tensor.runs[s]!r}, topic {tensor.topics[t]!r} has a group of tied "
        f"documents whose exact expected value would hold {states:,} states at once, more than "
        f"the {MAX_GROUP_STATES:,} allowed; order ties by trec_eval or input"
    )
