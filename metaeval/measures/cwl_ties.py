"""The expected outputs over tied orderings of the adaptive C/W/L measures whose C(i) reads
only the rank i, the gain g(i) there and the gain G(i) found down to it: INST, BPM, IFT and
NERR (docs/methods.md §6.6).

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
above :data:`TIED_RATIO_TOLERANCE`, the arrangements of the list's first groups are
enumerated, one more group at a time, and the centres and half-widths averaged over them:
the interval narrows, to a point once every group is enumerated. Where C(i) is 0 or 1 at every
rank (BPM), Y is the rank the user stops at and EU is exact:
E[X/Y] = sum_{i<n} E[X(i) r(i) (1 - C(i))]/i + E[X(n) r(n)]/n.

G(i) is added up rank by rank as cwl_eval adds it, but within and after a group it holds the
group's gains summed in one order, not in each arrangement's: the two can differ by a
rounding, which matters only where G(i) equals a threshold of C in exact arithmetic (BPM's T:
1 + 1/3 + 2/3 is 2 in that order and 2 - 2^-51 in the order 1 + 2/3 + 1/3, and cwl_eval's
user stops in one and goes on in the other).
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

import numpy as np

from metaeval.engine import EvalTensor
from metaeval.engine.tensor import distinct_arrangements, log_arrangements
from metaeval.measures.base import MeasureValueError, refuse_costly_ties

if TYPE_CHECKING:
    from metaeval.measures.cwl import CWLMeasure, _Ranks

#: Largest half-width of the interval an expected EU is the centre of (see the module's
#: docstring): below the printed precision and the 1e-6 that parity with trec_eval allows.
TIED_RATIO_TOLERANCE = 1e-10
#: Most arrangements of a list's first tie groups enumerated to narrow that interval.
NARROWING_ARRANGEMENTS = 2_000
#: Most states a group's recursion holds at once (:func:`_states`): its memory, about 100 bytes
#: a state and gain.
MAX_GROUP_STATES = 1 << 20
#: Work per state held, rank and gain of a group, in the cells of the work limit (about 1 ns
#: each): 30 ns on the groups of TREC DL 2020.
_STATE_CELL = 30


def expected_adaptive(measure: CWLMeasure, tensor: EvalTensor) -> np.ndarray:
    """The (S, T) expected value of ``measure``'s output over the orderings of every group of
    tied documents; lists whose groups change nothing keep their value."""
    from metaeval.measures.cwl import _code_rows, _Ranks

    values = np.array(measure._compute(tensor), dtype=np.float64)
    group_lists, groups = tensor.mixed_tie_groups()
    if not len(group_lists):
        return values
    table = measure.gain_values(tensor.levels)
    ranks = _Ranks(measure.max_depth, measure.cost)
    residual = measure.output.startswith("Res")
    key = measure.output[3:] if residual else measure.output
    lists, where = np.unique(group_lists, return_inverse=True)
    by_list = [[] for _ in lists]
    for g, (start, codes, _) in zip(where, groups):
        if start < ranks.n:
            by_list[g].append((start, codes))
    sides_of = ("lo", "hi") if residual else ("lo",)
    plans = []
    cells = np.zeros(tensor.n_runs * tensor.n_topics)
    for lst, mine in zip(lists, by_list):
        codes = _code_rows(tensor, int(lst), int(lst) + 1, ranks.n)[0]
        sides = [_gains(measure, table, side, codes, mine) for side in sides_of]
        if not any(spans for _, spans in sides):
            continue  # no group inside the depth changes a gain
        for _, spans in sides:
            for _, _, counts in spans:
                states = _states(counts)
                if states > MAX_GROUP_STATES:
                    _refuse_states(measure, tensor, int(lst), states)
                cells[lst] += _STATE_CELL * states * int(counts.sum()) * len(counts)
        plans.append((int(lst), sides))
    refuse_costly_ties(measure, tensor, cells)
    step = measure.step_continuation
    # C(i) of IFT can overflow exp() to inf, its limit: 1 / (1 + inf) = 0 is the value; and
    # C is computed, then set aside, at the states no path reaches (INST divides by 0 there)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        _fill(values.reshape(-1), plans, key, residual, measure, tensor, step, ranks)
    return values


def _fill(flat, plans, key, residual, measure, tensor, step, ranks) -> None:
    """Each planned list's expected output, into ``flat``."""
    for lst, sides in plans:
        out = []  # the lower bound's output, and the upper bound's for a residual
        for gains, spans in sides:
            if key == "EU":
                out.append(_expected_ratio(measure, tensor, lst, step, ranks, gains, spans))
            else:
                moments, _ = _moments(step, ranks, gains, spans, second=False)
                out.append(moments[{"ETU": _ETU, "ETC": _ETC, "ED": _Y}[key]])
        flat[lst] = out[1] - out[0] if residual else out[0]


def _gains(measure, table, side, codes, groups):
    """The gains of a list at ranks 0..n-1 (``codes`` in the order given) and its groups as
    (start, gains, counts) of their distinct gains, in rank order; groups of one gain are left
    in the list: their order changes nothing. ``side`` ``hi`` gives unjudged and notional
    items ``max_gain``, as the upper bound of a residual does."""
    unknown = 0.0 if side == "lo" else measure.max_gain

    def gain_of(c):
        return np.where(c >= 0, table[np.maximum(c, 0)], unknown)

    gains = gain_of(codes)
    spans = []
    for start, member_codes in sorted(groups, key=lambda g: g[0]):
        values, counts = np.unique(gain_of(member_codes), return_counts=True)
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
    n = ranks.n
    total = np.zeros(7)
    state = np.array([1.0, 1.0, 0.0, 0.0] if second else [1.0])  # A, B, U, V at rank 1
    found = 0.0  # G(0)
    binary = True
    at = 0
    for start, values, counts in spans:
        if start > at:
            state, found, flag = _stretch(step, ranks, gains, at, start, state, found, total)
            binary &= flag
        state, found, flag = _group(step, ranks, start, values, counts, state, found, total)
        binary &= flag
        at = start + int(counts.sum())
        if at >= n:
            return total, binary
    if at < n:
        *_, flag = _stretch(step, ranks, gains, at, n, state, found, total)
        binary &= flag
    return total, binary


def _add(total, sums, gain, found, C, at, ranks: _Ranks) -> None:
    """Add the terms of ranks (or states) whose A (and B, U, V) are ``sums``, with these
    g(i), G(i) and C(i)."""
    A = sums[0]
    total[_X] += np.sum(A * gain)
    total[_Y] += np.sum(A)
    stopping = A * (1.0 - C)
    total[_ETU] += np.vdot(stopping, found) if np.ndim(found) else stopping.sum() * found
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


def _stretch(step, ranks, gains, a: int, b: int, state, found, total):
    """Ranks a..b-1 of fixed gains from ``state``, in one vector step: with rho(j) the
    product of C over a..j-1, A(j) = A rho, B(j) = B rho^2, U(j) = rho (U + B sum rho) and
    V(j) = rho (V + B sum rho g), the sums over the ranks before j."""
    gain = gains[a:b]
    at = np.arange(a, b)
    found = np.cumsum(np.concatenate(([found], gain)))[1:]  # one addition at a time
    C = np.broadcast_to(step(found, gain, at, ranks), gain.shape)
    rho = np.empty(b - a + 1)  # and the product over the whole stretch, to go on with
    rho[0] = 1.0
    np.cumprod(C, out=rho[1:])
    if len(state) == 1:
        sums = [state[0] * rho]
    else:
        A, B, U, V = state
        sigma = np.concatenate(([0.0], np.cumsum(rho[:-1])))
        tau = np.concatenate(([0.0], np.cumsum(rho[:-1] * gain)))
        sums = [A * rho, B * rho**2, rho * (U + B * sigma), rho * (V + B * tau)]
    _add(total, [x[:-1] for x in sums], gain, found, C, at, ranks)
    return np.array([x[-1] for x in sums]), found[-1], _binary(C)


def _group(step, ranks, start: int, values, counts, state, found, total):
    """The ranks of one group of tied items; the list's state after it (None when the depth n
    cuts it).

    After p items of the group, a state is how many of each gain it has placed; the count of
    the most frequent gain is p minus the others', so the states of every p are held in one
    array over the other gains' counts (its cells that p cannot reach hold nothing), and an
    item moves a state one step along its gain's axis (along none for the most frequent gain).
    Every gain is taken at once, on a first axis."""
    m, K = int(counts.sum()), len(counts)
    big = int(np.argmax(counts))
    others = [k for k in range(K) if k != big]
    shape = tuple(int(counts[k]) + 1 for k in others)
    placed = np.indices(shape, sparse=True)  # the other gains' counts, one axis each
    placed_others = sum(placed)
    found_others = found + sum(x * (values[k] - values[big]) for x, k in zip(placed, others))
    gain = values.reshape(K, *(1,) * len(shape))
    left = np.empty((K, *shape))  # the items of each gain still to come
    for axis, k in enumerate(others):
        left[k] = counts[k] - placed[axis]
    sums = np.zeros((len(state), *shape))
    sums[(slice(None),) + (0,) * len(shape)] = state
    binary = True
    for p in range(min(m, ranks.n - start)):
        placed_big = p - placed_others
        left[big] = counts[big] - placed_big
        can = (placed_big >= 0) & (left > 0)
        parts = np.where(can, left / (m - p), 0.0) * sums[:, None]
        now = found_others + p * values[big] + gain
        C = np.where(can, step(now, gain, start + p, ranks), 0.0)
        binary = binary and _binary(C[can])
        _add(total, parts, gain, now, C, start + p, ranks)
        moved = np.array(_moved(parts, C, gain))
        sums = moved[:, big].copy()
        for axis, k in enumerate(others):  # one more item of gain k: a step along its axis
            to = [slice(None)] * (len(shape) + 1)
            to[axis + 1] = slice(1, None)
            start_of = list(to)
            start_of[axis + 1] = slice(None, -1)
            sums[tuple(to)] += moved[:, k][tuple(start_of)]
    if start + m > ranks.n:
        return None, None, binary
    return sums[(slice(None),) + (-1,) * len(shape)], found + float(values @ counts), binary


def _states(counts) -> int:
    """The states a group's recursion holds at once: every count of each gain but the most
    frequent one."""
    return math.prod(int(c) + 1 for c in counts) // (int(counts.max()) + 1)


def _ratio(step, ranks, gains, spans) -> tuple[float, float]:
    """E[X/Y] of one list: (centre, half-width) of the interval shown to hold it."""
    total, binary = _moments(step, ranks, gains, spans, second=True)
    if binary:
        return total[_STOP], 0.0
    mu = total[_Y]
    spread = max(total[_Y2] - mu * mu, 0.0) / mu**2
    covariance = (total[_XY] - total[_X] * mu) / mu**2
    everything = [gains[: ranks.n], *(values for _, values, _ in spans)]
    least = min(float(g.min()) for g in everything)
    greatest = max(float(g.max()) for g in everything)
    centre = total[_X] / mu - covariance + (least + greatest) / 2.0 * spread
    return centre, (greatest - least) / 2.0 * spread


def _expected_ratio(measure, tensor, lst, step, ranks, gains, spans) -> float:
    """E[EU] of one list to :data:`TIED_RATIO_TOLERANCE`, narrowing the interval by
    enumerating the arrangements of its first groups; refused past
    :data:`NARROWING_ARRANGEMENTS`."""
    half = math.inf
    for heads in range(len(spans) + 1):
        orders = [_orders(values, counts) for _, values, counts in spans[:heads]]
        count = math.prod(len(o) for o in orders)
        if count > NARROWING_ARRANGEMENTS:
            s, t = divmod(lst, tensor.n_topics)
            raise MeasureValueError(
                f"{measure}: run {tensor.runs[s]!r}, topic {tensor.topics[t]!r}: its expected "
                f"value over tied orderings is bracketed only to +-{half:.1g} (at most "
                f"{TIED_RATIO_TOLERANCE:g} is allowed), and narrowing it would enumerate about "
                f"{_count_text(spans[:heads])} arrangements of its first {heads} groups of "
                "tied documents; order ties by trec_eval or input"
            )
        centres = np.empty(count)
        halves = np.empty(count)
        for i, chosen in enumerate(itertools.product(*orders)):
            fixed = gains.copy()
            for (start, _, _), order in zip(spans, chosen):
                stop = min(start + len(order), ranks.n)
                fixed[start:stop] = order[: stop - start]
            centres[i], halves[i] = _ratio(step, ranks, fixed, spans[heads:])
        centre, half = centres.mean(), halves.mean()
        if half <= TIED_RATIO_TOLERANCE:
            return centre
    raise AssertionError("every group enumerated leaves no interval")  # pragma: no cover


def _orders(values, counts) -> np.ndarray:
    """Every distinct arrangement of a group's gains, (A, m)."""
    return distinct_arrangements(np.repeat(values, counts))


def _count_text(spans) -> str:
    log = sum(log_arrangements(np.repeat(values, counts)) for _, values, counts in spans)
    return f"{math.exp(log):.2g}" if log < 700 else f"e^{log:.0f}"


def _refuse_states(measure, tensor, lst: int, states: int) -> None:
    s, t = divmod(lst, tensor.n_topics)
    raise MeasureValueError(
        f"{measure}: run {tensor.runs[s]!r}, topic {tensor.topics[t]!r} has a group of tied "
        f"documents whose exact expected value would hold {states:,} states at once, more than "
        f"the {MAX_GROUP_STATES:,} allowed; order ties by trec_eval or input"
    )
