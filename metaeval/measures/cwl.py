"""The C/W/L family of measures, as cwl_eval computes them (docs/methods.md §18).

A C/W/L measure is a model of a user who scans a ranking from the top: C(i) is the probability
that, having examined the item at rank i, the user goes on to rank i + 1 (Moffat, Thomas &
Scholer, CIKM 2013; Moffat, Bailey, Scholer & Thomas, ACM TOIS 2017). cwl_eval (Azzopardi,
Thomas & Moffat, SIGIR 2019) evaluates every ranking over the ranks 1..n of a fixed depth n
(``max_depth``, 1000), with

    W(i) = prod_{j<i} C(j) / sum_{m=1}^{n} prod_{j<m} C(j)     (the share of attention at rank i)
    L(i) = prod_{j<i} C(j) (1 - C(i))                          (the user stops at rank i)

and reports five numbers per topic, g(i) the gain and c(i) the cost of the item at rank i,
G(i) = g(1) + ... + g(i) and K(i) = c(1) + ... + c(i):

    EU  = sum_i W(i) g(i)   expected utility per item examined
    ETU = sum_i L(i) G(i)   expected total utility
    EC  = sum_i W(i) c(i)   expected cost per item examined
    ETC = sum_i L(i) K(i)   expected total cost
    ED  = 1 / W(1)          expected depth: the number of items examined

Every ranking is cut at n and padded to n with notional items. An item absent from the qrels
(or judged with a negative grade), and a notional one, has gain 0 in the lower bound above (what
cwl_eval reports) and ``max_gain`` in the upper bound; the residual of an output (``ResEU``...)
is upper minus lower. L is not renormalised: a measure whose C(n) > 0 (RBP) loses the mass of
the users who would read past n, as in cwl_eval. Each class here gives C(i) (or, for TBG and
the U-measure, W(i) directly, C(i) = W(i+1)/W(i)), with cwl_eval's parameter names and
defaults.

Everything is vectorised over (runs x topics) rows and the n ranks, in blocks of rows that keep
the (rows, n) arrays near 8 MB each. A measure whose C(i) does not depend on the gains (P, RBP,
NPV, SDCG, INSQ, SET, TBG, U) has one W and one L, vectors of n, and its outputs are sums over
the judged entries alone, as the sparse path of the other measures.
"""

from __future__ import annotations

import functools
import inspect
import math
import re
import typing
from dataclasses import dataclass, fields, replace
from fractions import Fraction
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from metaeval._constraints import Described, Interval, OneOf, Optional
from metaeval.data.qrels import format_grade
from metaeval.engine import UNPOOLED, EvalTensor
from metaeval.measures._common import (
    cumulative,
    grid_rows,
    log_choose,
    safe_divide,
    tied_hits,
)
from metaeval.measures.base import MAX_CUTOFF, Measure, MeasureValueError, field_types, register
from metaeval.measures.bounds import monotone_bounds
from metaeval.measures.cwl_ties import (
    expected_adaptive,
    expected_by_openings,
    expected_cwl_ap,
)
from metaeval.measures.graded import (
    MAX_PARAMETER,
    GainsMap,
    as_levels,
    normalise_gains,
    override_gains,
    positive_at,
)

#: What a C/W/L measure reports per topic: cwl_eval's five outputs, then their residuals.
OUTPUTS = ("EU", "ETU", "EC", "ETC", "ED", "ResEU", "ResETU", "ResEC", "ResETC", "ResED")
#: How grades become gains: ``scaled`` = grade / highest grade of the qrels; ``grade`` = the
#: grade itself (cwl_eval reads the qrels' value as the gain). Real-valued grades alike, by
#: their values.
GAIN_FORMS = ("scaled", "grade")
#: cwl_eval's depth (``--max_depth``).
DEFAULT_DEPTH = 1000
#: Largest depth: every block holds (rows, depth) arrays, at least one row at a time.
MAX_DEPTH = 1_000_000
#: Cells of a (rows, depth) block: 2^20 float64, 8 MB per array.
_BLOCK_CELLS = 1 << 20

_OUTPUT = Described(OneOf(*OUTPUTS), f"one of {', '.join(OUTPUTS)}")
_POSITIVE = Described(Interval(Real, 0, MAX_PARAMETER, closed="right"))
_NON_NEGATIVE = Described(Interval(Real, 0, MAX_PARAMETER))
_PROBABILITY = Described(Interval(Real, 0, 1), "a probability in [0, 1]")
_DEPTH = Described(Interval(Integral, 1, MAX_DEPTH))
_CUTOFF_K = Described(Interval(Integral, 1, MAX_CUTOFF))
#: max_gain of the measures whose C(i) needs gains in [0, 1] (INST, NERR).
_UNIT_GAIN = Described(Interval(Real, 0, 1, closed="right"))


# ---------------------------------------------------------------------------- helpers
class _OutputBounds:
    """``bounds`` of a C/W/L measure: on an instance, the range of its output (EU in
    [0, max_gain], ED in [1, n]...); on the class, the range of every output, (-inf, inf),
    since a residual of an adaptive measure can be negative (a best case that stops earlier)."""

    def __get__(self, obj, owner=None) -> tuple[float, float]:
        if obj is None:
            return (-math.inf, math.inf)
        n, top, cost = obj.max_depth, obj.max_gain, obj.cost
        return {
            "EU": (0.0, top),
            "ETU": (0.0, n * top),
            "EC": (0.0, cost),
            "ETC": (0.0, n * cost),
            "ED": (1.0, float(n)),
            "ResEU": (-top, top),
            "ResETU": (-n * top, n * top),
            "ResEC": (-cost, cost),
            "ResETC": (-n * cost, n * cost),
            "ResED": (1.0 - n, n - 1.0),
        }[obj.output]


@functools.cache
def _float_fields(cls: type) -> tuple[str, ...]:
    """The fields of ``cls`` typed float (or float | None): ints given there become floats, so
    that ``INST(T=1)`` and ``INST(T=1.0)`` are one measure with one name."""
    hints = field_types(cls)
    out = []
    for f in fields(cls):
        hint = hints.get(f.name)
        if hint is float or float in typing.get_args(hint):
            out.append(f.name)
    return tuple(out)


class _Ranks:
    """What every block of one computation shares: the ranks i = 1..n as floats, the cost c(i)
    of each and the cumulative cost K(i) (a sequential sum, as cwl_eval's ``np.cumsum``, so that
    a cost budget compared with K(i) is met at the same rank)."""

    def __init__(self, depth: int, cost: float):
        self.n = depth
        self.i = np.arange(1, depth + 1, dtype=np.float64)
        self.costs = np.full(depth, cost)
        self.cum_costs = np.cumsum(self.costs)


def _attention_and_stopping(C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """W and L from C along the last axis (ranks 1..n), as cwl_eval's ``w_vector`` and
    ``l_vector``: reach(i) = prod_{j<i} C(j), W = reach * (1 / sum(reach)), L = reach (1 - C)."""
    reach = _reach(C)
    W = reach * (1.0 / reach.sum(axis=-1, keepdims=True))
    return W, reach * (1.0 - C)


def _output_bound(key: str, side: str, c_min, c_max, low, high, ranks: _Ranks) -> np.ndarray:
    """Per row, the bound of an output from the ranges of C(i) and of the gains (see
    :meth:`CWLMeasure._adaptive_bounds`)."""
    reach_min, stop_min = _attention_and_stopping_mass(c_min, c_max)
    reach_max, stop_max = _attention_and_stopping_mass(c_max, c_min)
    if key == "EC":
        return np.full(len(low), float(ranks.costs[0]))
    if key == "ED":
        return (reach_min if side == "lo" else reach_max).sum(axis=1)
    if key == "EU":
        if side == "lo":
            return np.einsum("ij,ij->i", reach_min, low) / reach_max.sum(axis=1)
        value = np.einsum("ij,ij->i", reach_max, high) / reach_min.sum(axis=1)
        return np.minimum(value, high.max(axis=1))
    if key == "ETU":
        if side == "lo":
            return np.einsum("ij,ij->i", stop_min, np.cumsum(low, axis=1))
        total = np.cumsum(high, axis=1)
        return np.minimum(np.einsum("ij,ij->i", stop_max, total), total[:, -1])
    if side == "lo":  # ETC
        return stop_min @ ranks.cum_costs
    return np.minimum(stop_max @ ranks.cum_costs, ranks.cum_costs[-1])


def _attention_and_stopping_mass(C: np.ndarray, other: np.ndarray):
    """reach(i) = prod_{j<i} C(j), and reach(i) (1 - other(i)): with C and other the least and
    greatest continuation (or the reverse), the least (greatest) reach and stopping mass."""
    reach = _reach(C)
    return reach, reach * (1.0 - other)


def _reach(C: np.ndarray) -> np.ndarray:
    """prod_{j<i} C(j) along the last axis: the share of users who reach rank i."""
    reach = np.ones(C.shape)
    np.cumprod(C[..., :-1], axis=-1, out=reach[..., 1:])
    return reach


def _continuation_of(W: np.ndarray) -> np.ndarray:
    """C(i) = W(i+1) / W(i) where W(i) > 0, else 0, and C(n) = 0: cwl_eval's C of a measure
    defined by its W (TBG, U-measure)."""
    C = np.zeros(W.shape)
    np.divide(W[..., 1:], W[..., :-1], out=C[..., :-1], where=W[..., :-1] > 0)
    return C


def gains_of(table: np.ndarray, codes: np.ndarray, unknown: float) -> np.ndarray:
    """The gain of every item from its grade code (``table`` by code); an item without a
    judgment (a negative code: unjudged, or notional past the list) gains ``unknown``: 0 in
    the value, max_gain in the upper bound of a residual."""
    return np.where(codes >= 0, table[np.maximum(codes, 0)], unknown)


def _code_blocks(tensor: EvalTensor, depth: int):
    """(start, stop, codes) of each block of (run, topic) rows, codes as :func:`_code_rows`
    gives them: blocks that keep the (rows, depth) arrays near 8 MB each."""
    n_rows = tensor.n_runs * tensor.n_topics
    step = max(1, _BLOCK_CELLS // depth)
    for start in range(0, n_rows, step):
        stop = min(n_rows, start + step)
        yield start, stop, _code_rows(tensor, start, stop, depth)


def _code_rows(tensor: EvalTensor, start: int, stop: int, depth: int) -> np.ndarray:
    """(stop - start, depth) int8 codes of the (run, topic) rows start..stop-1 (row = run * T +
    topic) at ranks 1..depth; UNPOOLED wherever no judged document is (unpooled, past the end of
    the list, or past the tensor's depth). From the entries on a sparse tensor, else from the
    dense codes: the same codes either way."""
    out = np.full((stop - start, depth), UNPOOLED, dtype=np.int8)
    if tensor.sparse:
        group, rank, code = tensor.entries()
        lo, hi = np.searchsorted(group, [start, stop])
        inside = np.flatnonzero(rank[lo:hi] < depth) + lo
        out[group[inside] - start, rank[inside]] = code[inside]
    else:
        codes = tensor.codes.reshape(-1, tensor.depth)[start:stop, :depth]
        out[:, : codes.shape[1]] = codes
    return out


_SECTION = re.compile(r"^(Parameters|Returns|References|Notes|Examples|See Also)\n-+$", re.M)
#: A parameter entry of a numpydoc section: ``name : type`` at the start of a line.
_ENTRY = re.compile(r"^(\w+) : ", re.M)


def _parameters_section(doc: str) -> tuple[int, int] | None:
    """Start and end of the body of a cleaned docstring's Parameters section, or None."""
    sections = list(_SECTION.finditer(doc))
    for n, match in enumerate(sections):
        if match.group(1) == "Parameters":
            end = sections[n + 1].start() if n + 1 < len(sections) else len(doc)
            return match.end() + 1, end
    return None


def _with_shared_parameters(doc: str, shared: str) -> str:
    """``doc`` (cleaned) with ``shared`` parameter entries at the end of its Parameters section
    (made before References when there is none), so that every C/W/L measure's own docstring,
    which ``help()`` and the generated measure list read, describes all its parameters."""
    found = _parameters_section(doc)
    if found is not None:
        # the entries the measure describes itself (Umeasure's max_depth) are kept, not repeated
        own = set(_ENTRY.findall(doc[found[0] : found[1]]))
        entries = re.split(r"\n(?=\S)", shared)
        shared = "\n".join(e for e in entries if _ENTRY.match(e).group(1) not in own)
        at = found[1]
        return doc[:at].rstrip("\n") + "\n" + shared + "\n\n" + doc[at:]
    refs = re.search(r"^References\n-+$", doc, re.M)
    at = refs.start() if refs else len(doc)
    head = doc[:at].rstrip("\n") + "\n\nParameters\n----------\n" + shared + "\n\n"
    return head + doc[at:]


def _rows(value, n_rows: int) -> np.ndarray:
    """A per-row output, broadcast to ``n_rows`` (a measure whose W does not depend on the
    gains has one EC, ETC and ED for every row)."""
    return np.broadcast_to(np.asarray(value, dtype=np.float64), (n_rows,))


# ---------------------------------------------------------------------------- base
@dataclass(frozen=True, kw_only=True)
class CWLMeasure(Measure):
    """Base of the C/W/L measures: cwl_eval's machinery, outputs, gains, costs and depth.

    A subclass defines :meth:`continuation` (C(i), a vector of n when it does not depend on
    the gains, else one row per ranking) or overrides :meth:`weights` (W and L).

    Parameters
    ----------
    output : {"EU", "ETU", "EC", "ETC", "ED", "ResEU", "ResETU", "ResEC", "ResETC", "ResED"}
        What the measure reports per topic: expected utility per item (default), expected
        total utility, expected cost per item, expected total cost, expected depth, or the
        residual of one of them (upper bound minus lower bound over the unjudged items).
    gain : {"scaled", "grade"}
        How grades become gains. ``scaled`` (default): grade / c, c the highest grade of the
        qrels, so gains lie in [0, 1] as cwl_eval expects (on binary qrels the grade itself,
        as cwl_eval reads it). ``grade``: the grade itself, cwl_eval's reading of graded qrels
        (which it accepts only with ``--max_gain`` at least the highest grade: ``max_gain``).
        Real-valued grades by their values: a qrels file of gains in [0, 1] is read by
        cwl_eval and by ``gain=grade`` alike.
    gains : mapping grade -> gain, optional
        Overrides the gain of the grades it names (cwl_eval's gain file, one gain per grade),
        e.g. ``{1:0.25,2:0.5,3:1}``; keys are grades of the qrels (``{0.5:0.3}`` on real ones).
    max_gain : float
        Gain of an unjudged or notional item in the upper bound (cwl_eval ``--max_gain``,
        default 1). A gain above it is an error, as cwl_eval refuses such qrels.
    cost : float
        Cost of every item, notional ones included (cwl_eval: 1 without a cost file; a cost
        file giving the run's element type, ``Q0``, this cost, with ``max_cost`` and
        ``min_cost`` equal to it).
    max_depth : int
        The depth n every ranking is cut and padded to (cwl_eval ``--max_depth``, 1000).
    """

    output: str = "EU"
    gain: str = "scaled"
    gains: GainsMap | None = None
    max_gain: float = 1.0
    cost: float = 1.0
    max_depth: int = DEFAULT_DEPTH
    bounds = _OutputBounds()
    #: Whether C(i) assumes gains in [0, 1] (cwl_eval checks it for INST and NERR).
    unit_gains: ClassVar[bool] = False
    #: Whether W and L do not depend on the gains (computed from the judged entries alone).
    fixed_weights: ClassVar[bool] = False
    _constraints: ClassVar[dict] = {
        "output": _OUTPUT,
        "gain": OneOf(*GAIN_FORMS),
        "max_gain": _POSITIVE,
        "cost": _POSITIVE,
        "max_depth": _DEPTH,
    }

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__doc__:
            base = inspect.cleandoc(CWLMeasure.__doc__)
            start, end = _parameters_section(base)
            shared = base[start:end].strip("\n")
            cls.__doc__ = _with_shared_parameters(inspect.cleandoc(cls.__doc__), shared)

    def _validate(self) -> None:
        object.__setattr__(self, "gains", normalise_gains(self.name, self.gains))
        for name in _float_fields(type(self)):
            value = getattr(self, name)
            if isinstance(value, Integral) and not isinstance(value, bool):
                object.__setattr__(self, name, float(value))

    # ------------------------------------------------------------------ gains
    def gain_values(self, levels) -> np.ndarray:
        """Gain of every grade code, from the grade values ``levels`` (:attr:`EvalTensor.levels`;
        an int n: the integer grades 0 .. n-1).

        Raises
        ------
        ValueError
            When a gain is above ``max_gain`` (cwl_eval refuses such qrels), or above 1 for a
            measure whose C(i) needs gains in [0, 1].
        """
        grades = as_levels(levels)
        if self.gain == "grade":
            table = grades.copy()
        else:
            table = grades / grades[-1] if len(grades) > 1 else np.zeros(len(grades))
        override_gains(table, grades, self.gains)
        top = int(np.argmax(table))
        if table[top] > self.max_gain:
            grade = format_grade(grades[top])
            if self.unit_gains and table[top] > 1.0:
                raise ValueError(
                    f"gains must be in [0, 1] ({self.name}'s C(i) assumes it), got "
                    f"{table[top]:g} for grade {grade}; use gain=scaled or gains= values <= 1"
                )
            raise ValueError(
                f"the gain of grade {grade} is {table[top]:g}, above max_gain="
                f"{self.max_gain:g}; give max_gain={table[top]:g} (cwl_eval's --max_gain) or "
                f"use gain=scaled"
            )
        return table

    # ------------------------------------------------------------------ the model
    def continuation(self, gains: np.ndarray, ranks: _Ranks) -> np.ndarray:
        """C(i) for ranks 1..n: shape (n,) when it does not depend on the gains, else
        (rows, n), ``gains`` being (rows, n). By default from :meth:`step_continuation`."""
        return self.step_continuation(np.cumsum(gains, axis=1), gains, slice(None), ranks)

    def step_continuation(self, found, gain, at, ranks: _Ranks) -> np.ndarray:
        """C(i) of a measure whose C reads only the rank i, the gain g(i) of the item there
        (``gain``) and the gain G(i) = g(1) + ... + g(i) found down to it (``found``), at the
        0-based ranks ``at`` (an index or a slice of :class:`_Ranks`' vectors); arrays
        broadcast. Such a measure (INST, BPM, IFT, NERR) has its expected value over tied
        orderings computed state by state, not ordering by ordering
        (:mod:`metaeval.measures.cwl_ties`)."""
        raise NotImplementedError

    def reach_depth(self, ranks: _Ranks) -> int:
        """The ranks that some user may read, whatever the gains: past them the reach is 0,
        and what lies there changes no output."""
        return ranks.n

    @property
    def output_parts(self) -> tuple[str, bool]:
        """The output without its ``Res`` prefix, and whether it is a residual (upper bound
        less lower bound over the unjudged items)."""
        residual = self.output.startswith("Res")
        return (self.output[3:] if residual else self.output), residual

    @property
    def reads_its_state(self) -> bool:
        """Whether C(i) reads only i, g(i) and G(i) (:meth:`step_continuation`)."""
        return type(self).step_continuation is not CWLMeasure.step_continuation

    def weights(self, gains: np.ndarray, ranks: _Ranks) -> tuple[np.ndarray, np.ndarray]:
        """W(i) and L(i) for ranks 1..n, each (n,) or (rows, n)."""
        return _attention_and_stopping(self.continuation(gains, ranks))

    def _outputs(self, key: str, gains: np.ndarray, ranks: _Ranks) -> np.ndarray:
        W, L = self.weights(gains, ranks)
        rows = gains.shape[0]
        if key == "EU":
            return gains @ W if W.ndim == 1 else np.einsum("ij,ij->i", W, gains)
        if key == "ETU":
            cum = np.cumsum(gains, axis=1)
            return cum @ L if L.ndim == 1 else np.einsum("ij,ij->i", L, cum)
        if key == "EC":
            return _rows(W @ ranks.costs, rows)
        if key == "ETC":
            return _rows(L @ ranks.cum_costs, rows)
        return _rows(1.0 / W[..., 0], rows)  # ED

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        if self.fixed_weights:
            return self._compute_fixed(tensor)
        return self._compute_blocks(tensor)

    @property
    def without_bounds(self) -> str:  # why a residual has none (Measure.without_bounds)
        if self.output_parts[1]:
            return "a residual is already the width of such bounds"
        return ""

    def has_bounds(self) -> bool:
        # With fixed weights every output rises with the gains (EU, ETU) or ignores them; an
        # adaptive measure needs a C(i) that moves one way with the gains.
        if self.without_bounds:
            return False
        return self.fixed_weights or self.ranged_continuation

    #: Whether :meth:`continuation_range` holds for this adaptive measure: its C(i) only
    #: rises, or only falls, as any gain rises, or the measure gives its own range.
    ranged_continuation: ClassVar[bool] = False

    def continuation_range(self, low, high, ranks: _Ranks) -> tuple[np.ndarray, np.ndarray]:
        """(rows, n) least and greatest C(i) when every gain lies between ``low`` and
        ``high`` (rows, n): C at the two ends, for a C(i) that moves one way with the gains."""
        at_low, at_high = self.continuation(low, ranks), self.continuation(high, ranks)
        return np.minimum(at_low, at_high), np.maximum(at_low, at_high)

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        if not self.has_bounds():
            return super()._bounds(tensor, side)
        gains = self.gain_values(tensor.levels)
        if self.fixed_weights:
            # the block computation reads the codes that the highest bound changes
            return monotone_bounds(self._compute_blocks, tensor, side, gains)
        return self._adaptive_bounds(tensor, side, gains)

    def _adaptive_bounds(self, tensor: EvalTensor, side: str, table: np.ndarray) -> np.ndarray:
        """Bounds that hold for a measure whose C(i) follows the gains (docs/methods.md §6.7).

        With every unknown item the run retrieved between the least and greatest gain (notional
        items stay at 0), C(i) lies in [C-(i), C+(i)] (:meth:`continuation_range`), so
        reach(i) = prod_{j<i} C(j) in [reach-, reach+] and L(i) = reach(i) (1 - C(i)) in
        [reach- (1 - C+), reach+ (1 - C-)]. EU = sum reach g / sum reach lies in
        [sum reach- g- / sum reach+, sum reach+ g+ / sum reach-] (at most the greatest gain),
        ETU in [sum L- G-, sum L+ G+] (at most G+(n)), ETC alike with K(i), ED = sum reach in
        [sum reach-, sum reach+], and EC is the cost of an item whatever the gains.
        """
        ranks = _Ranks(self.max_depth, self.cost)
        lengths = tensor.lengths.reshape(-1)
        least, greatest = min(0.0, float(table.min())), max(0.0, float(table.max()))
        out = np.empty(tensor.n_runs * tensor.n_topics)
        with np.errstate(over="ignore"):
            for start, stop, codes in _code_blocks(tensor, self.max_depth):
                known = gains_of(table, codes, 0.0)
                unknown = (codes < 0) & (ranks.i[None, :] <= lengths[start:stop, None])
                low = np.where(unknown, least, known)
                high = np.where(unknown, greatest, known)
                out[start:stop] = self._block_bound(self.output, side, low, high, ranks)
        return out.reshape(tensor.n_runs, tensor.n_topics)

    def _block_bound(self, key: str, side: str, low, high, ranks: _Ranks) -> np.ndarray:
        """Per row of a block, the bound of output ``key`` when every gain lies between ``low``
        and ``high`` (rows, n)."""
        c_min, c_max = self.continuation_range(low, high, ranks)
        return _output_bound(key, side, c_min, c_max, low, high, ranks)

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        # W sums to 1 and every item costs the same, so EC is that cost in every order (and
        # in both bounds: ResEC is 0), whatever C(i) reads.
        if self.output in ("EC", "ResEC"):
            return self._compute(tensor)
        return self._expected_outputs(tensor)

    def _expected_outputs(self, tensor: EvalTensor) -> np.ndarray:
        """The expected value of the other outputs: in closed form for a measure of fixed W
        and L, by a recursion over the tied items' gains for one whose C(i) reads only i, g(i)
        and G(i) (:mod:`~metaeval.measures.cwl_ties`); the others (CWL_RR, CWL_AP) override
        this, or score every ordering."""
        if self.fixed_weights:
            return self._compute_fixed(tensor, expected=True)
        if self.reads_its_state:
            return expected_adaptive(self, tensor)
        return Measure._expected(self, tensor)  # C(i) reads more: every ordering is scored

    def _compute_fixed(self, tensor: EvalTensor, expected: bool = False) -> np.ndarray:
        """Every output of a measure whose W and L do not depend on the gains, from the judged
        entries alone: EU = sum_j W(j) g(j) and ETU = sum_j g(j) sum_{i>=j} L(i) over the
        judged ranks j; the upper bound adds max_gain times the weight of every other rank.
        The same values as :meth:`_compute_blocks`, at the cost of the judged entries. Over
        tied orderings (``expected``) each judged document's weight is the mean weight of its
        tie group's ranks (0 past the depth n), as every output is linear in the weights."""
        table = self.gain_values(tensor.levels)
        ranks = _Ranks(self.max_depth, self.cost)
        W, L = self.weights(None, ranks)
        tail = np.cumsum(L[::-1])[::-1]  # sum_{i>=j} L(i)
        key, residual = self.output_parts
        shape = (tensor.n_runs, tensor.n_topics)
        if key in ("EC", "ETC", "ED"):
            if residual:  # the same W and L in both bounds
                return np.zeros(shape)
            whole = {"EC": W @ ranks.costs, "ETC": L @ ranks.cum_costs, "ED": 1.0 / W[0]}
            return np.full(shape, whole[key])
        per_rank = W if key == "EU" else tail
        if expected:
            hits = tied_hits(tensor, lambda codes: codes >= 0, self.max_depth)
            group, code = hits.group, hits.grade
            weight = hits.mean_weight(cumulative(per_rank), self.max_depth)
        else:
            group, rank, code = tensor.entries()
            at = np.flatnonzero((code >= 0) & (rank < self.max_depth))
            group, code, weight = group[at], code[at], per_rank[rank[at]]
        if residual:
            unknown = per_rank.sum() - np.bincount(group, weight, minlength=shape[0] * shape[1])
            return (self.max_gain * unknown).reshape(shape)
        gains = table[code]
        return np.bincount(group, weight * gains, minlength=shape[0] * shape[1]).reshape(shape)

    def _compute_blocks(self, tensor: EvalTensor) -> np.ndarray:
        """Every output of any C/W/L measure, over blocks of rows of the (rows, n) gains."""
        table = self.gain_values(tensor.levels)
        ranks = _Ranks(self.max_depth, self.cost)
        key, residual = self.output_parts
        out = np.empty(tensor.n_runs * tensor.n_topics)
        # C(i) of IFT can overflow exp() to inf, its limit: 1 / (1 + inf) = 0 is the value.
        with np.errstate(over="ignore"):
            for start, stop, codes in _code_blocks(tensor, self.max_depth):
                # lower bound: unjudged and notional items gain nothing (cwl_eval's min_gain)
                value = self._outputs(key, gains_of(table, codes, 0.0), ranks)
                if residual:
                    upper = gains_of(table, codes, self.max_gain)
                    value = self._outputs(key, upper, ranks) - value
                out[start:stop] = value
        return out.reshape(tensor.n_runs, tensor.n_topics)


def _required(measure: CWLMeasure, names: tuple[str, ...], example: str) -> None:
    """Refuse a measure without the parameters cwl_eval gives no default."""
    for name in names:
        if getattr(measure, name) is None:
            raise MeasureValueError(
                name,
                "is required",
                message=f"{measure.name} needs {', '.join(names)}, e.g. {example}",
            )


# ---------------------------------------------------------------------------- C fixed
@register
@dataclass(frozen=True, kw_only=True)
class CWL_P(CWLMeasure):
    """Precision at k as a C/W/L measure (cwl_eval ``P@k``): the user reads k items, then stops.

    C(i) = 1 for i < k, 0 from k on, so W(i) = 1/k for i <= k and EU = (1/k) sum_{i<=k} g(i),
    graded precision; ETU = G(k), ED = k. On binary qrels EU is :class:`P`\\@k (rel=1).

    Parameters
    ----------
    k : int
        Items read, written ``CWL_P@k`` (cwl_eval's default 10). Above ``max_depth``, C(i) = 1
        on every rank of the depth (cwl_eval fails there): W is uniform and L, ETU and ETC 0.

    References
    ----------
    van Rijsbergen, Information Retrieval, 1979; Azzopardi, Thomas & Moffat, SIGIR 2019.
    """

    k: int = 10
    fixed_weights = True
    name = "CWL_P"
    cutoff_field = "k"
    _constraints: ClassVar[dict] = {"k": _CUTOFF_K}
    formula = "C(i) = 1 for i < k, 0 beyond; EU = (1/k) sum_{i<=k} g(i)"
    reference = (
        "van Rijsbergen, Information Retrieval, 1979; Azzopardi, Thomas & Moffat, "
        "'cwl_eval: an evaluation tool for information retrieval', SIGIR 2019"
    )

    def continuation(self, gains, ranks):
        return (ranks.i < self.k).astype(np.float64)


@register
@dataclass(frozen=True, kw_only=True)
class CWL_RBP(CWLMeasure):
    """Rank-biased precision as a C/W/L measure (cwl_eval ``RBP@theta``).

    C(i) = theta, so W(i) = theta^(i-1) (1 - theta) / (1 - theta^n) over the n ranks of the
    depth: :class:`RBP` (with gains grade / highest grade, its default) divided by
    1 - theta^n, and cwl_eval's default theta is 0.9 (RBP's p is 0.8). ED = 1/W(1).

    Parameters
    ----------
    theta : float
        Persistence, in [0, 1] (default 0.9, cwl_eval's).

    References
    ----------
    Moffat & Zobel, ACM TOIS 2008; Azzopardi, Thomas & Moffat, SIGIR 2019.
    """

    theta: float = 0.9
    fixed_weights = True
    name = "CWL_RBP"
    _constraints: ClassVar[dict] = {"theta": _PROBABILITY}
    formula = "C(i) = theta; W(i) = theta^(i-1) (1 - theta) / (1 - theta^n)"
    reference = (
        "Moffat & Zobel, 'Rank-biased precision for measurement of retrieval effectiveness', "
        "ACM TOIS 2008; Azzopardi, Thomas & Moffat, SIGIR 2019"
    )

    def continuation(self, gains, ranks):
        return np.full(ranks.n, self.theta)


@register
@dataclass(frozen=True, kw_only=True)
class NPV(CWLMeasure):
    """Net present value of a ranking (cwl_eval's ``NPV-r``): RBP with theta = 1/(1 + rate).

    C(i) = 1 / (1 + rate): the user discounts each next item at the given rate. cwl_eval's
    source has it, its command line does not run it.

    Parameters
    ----------
    rate : float
        Discount rate, >= 0 (default 0.1).

    References
    ----------
    Azzopardi, Thomas & Moffat, SIGIR 2019 (cwl_eval's ``cwl_npv.py``).
    """

    rate: float = 0.1
    fixed_weights = True
    name = "NPV"
    _constraints: ClassVar[dict] = {"rate": _NON_NEGATIVE}
    formula = "C(i) = 1 / (1 + rate)"
    reference = "Azzopardi, Thomas & Moffat, SIGIR 2019 (cwl_eval cwl_npv.py)"

    def continuation(self, gains, ranks):
        return np.full(ranks.n, 1.0 / (1.0 + self.rate))


@register(aliases=("CWL_SDCG", "CWL_NDCG"))
@dataclass(frozen=True, kw_only=True)
class SDCG(CWLMeasure):
    """Scaled DCG at k, cwl_eval's ``NDCG-k@k`` (printed ``SDCG-k@k`` in its documentation).

    C(i) = log2(i+1) / log2(i+2) for i < k, 0 from k on, so W(i) = (1/log2(i+1)) / S_k for
    i <= k, S_k = sum_{i<=k} 1/log2(i+1), and EU = DCG@k / S_k: DCG scaled by the discounts,
    not divided by an ideal ranking's DCG as :class:`nDCG` is.

    Parameters
    ----------
    k : int
        The cutoff, required: ``SDCG@10``.

    References
    ----------
    Jarvelin & Kekalainen, ACM TOIS 2002; Azzopardi, Thomas & Moffat, SIGIR 2019.
    """

    k: int | None = None
    fixed_weights = True
    name = "SDCG"
    cutoff_field = "k"
    cutoff_required = True
    formula = "C(i) = log2(i+1)/log2(i+2) for i < k, 0 beyond; EU = DCG@k / sum_{i<=k} 1/log2(i+1)"
    reference = (
        "Jarvelin & Kekalainen, 'Cumulated gain-based evaluation of IR techniques', ACM TOIS "
        "2002; Azzopardi, Thomas & Moffat, SIGIR 2019"
    )

    def continuation(self, gains, ranks):
        i = ranks.i
        return np.where(i < self.k, np.log2(i + 1.0) / np.log2(i + 2.0), 0.0)


@register
@dataclass(frozen=True, kw_only=True)
class INSQ(CWLMeasure):
    """INSQ (Moffat, Scholer & Thomas, ADCS 2012): INST's precursor, blind to the gains.

    C(i) = ((i + 2T - 1) / (i + 2T))^2, T the gain the user expects to need.

    Parameters
    ----------
    T : float
        Expected gain wanted, > 0 (default 1).

    References
    ----------
    Moffat, Scholer & Thomas, 'Models and metrics: IR evaluation as a user process', ADCS
    2012; Azzopardi, Thomas & Moffat, SIGIR 2019.
    """

    T: float = 1.0
    fixed_weights = True
    name = "INSQ"
    _constraints: ClassVar[dict] = {"T": _POSITIVE}
    formula = "C(i) = ((i + 2T - 1) / (i + 2T))^2"
    reference = (
        "Moffat, Scholer & Thomas, 'Models and metrics: IR evaluation as a user process', "
        "ADCS 2012; Azzopardi, Thomas & Moffat, SIGIR 2019"
    )

    def continuation(self, gains, ranks):
        return ((ranks.i + 2.0 * self.T - 1.0) / (ranks.i + 2.0 * self.T)) ** 2


@register
@dataclass(frozen=True, kw_only=True)
class SET(CWLMeasure):
    """Search economic theory measure (Azzopardi, SIGIR 2014), cwl_eval's ``SET-k@k-b@beta``.

    With w(i) = (i+1)^beta - i^beta, C(i) = w(i+1)/w(i) for i < k and 0 from k on, so
    W(i) is proportional to w(i) for i <= k: diminishing returns, beta = 1 being P@k.
    cwl_eval's source has it, its command line does not run it.

    Parameters
    ----------
    beta : float
        Diminishing returns, in (0, 1] (default 0.5).
    k : int
        Items read at most, ``SET@k`` (default 10).

    References
    ----------
    Azzopardi, 'Modelling interaction with economic models of search', SIGIR 2014.
    """

    beta: float = 0.5
    k: int = 10
    fixed_weights = True
    name = "SET"
    cutoff_field = "k"
    _constraints: ClassVar[dict] = {
        "beta": Described(Interval(Real, 0, 1, closed="right")),
        "k": _CUTOFF_K,
    }
    formula = "C(i) = w(i+1)/w(i) for i < k, 0 beyond; w(i) = (i+1)^beta - i^beta"
    reference = "Azzopardi, 'Modelling interaction with economic models of search', SIGIR 2014"

    def continuation(self, gains, ranks):
        i = ranks.i
        return np.where(i < self.k, self._w(i + 1.0) / self._w(i), 0.0)

    def _w(self, i: np.ndarray) -> np.ndarray:
        # (i+1)^beta - i^beta = i^beta (e^(beta ln(1 + 1/i)) - 1), without the cancellation
        # that makes it 0 (and C(i) 0/0) for a beta below 1e-16
        return i**self.beta * np.expm1(self.beta * np.log1p(1.0 / i))


@register
@dataclass(frozen=True, kw_only=True)
class TBG(CWLMeasure):
    """Time-biased gain (Smucker & Clarke, SIGIR 2012) as cwl_eval computes it (``TBG-H@h``).

    W(i) is proportional to D(K(i-1)), D(x) = h 2^(-x/h) / ln 2 the decay after x units of
    cost (K(0) = 0), normalised over the n ranks; C(i) = W(i+1)/W(i) and C(n) = 0. With a
    cost of 1 per item it is RBP with theta = 2^(-1/h) whose last rank stops every user.

    Parameters
    ----------
    halflife : float
        Half-life h in units of cost, > 0 (default 224, cwl_eval's: seconds in the paper).

    References
    ----------
    Smucker & Clarke, 'Time-based calibration of effectiveness measures', SIGIR 2012.
    """

    halflife: float = 224.0
    fixed_weights = True
    name = "TBG"
    _constraints: ClassVar[dict] = {"halflife": _POSITIVE}
    formula = "W(i) ~ 2^(-K(i-1)/h), K the cumulative cost; C(i) = W(i+1)/W(i)"
    reference = "Smucker & Clarke, 'Time-based calibration of effectiveness measures', SIGIR 2012"

    def weights(self, gains, ranks):
        h = self.halflife
        before = np.concatenate([[0.0], ranks.cum_costs[:-1]])  # K(i-1)
        decay = h * 2.0 ** (-before / h) / math.log(2.0)
        W = decay / decay.sum()
        return W, _attention_and_stopping(_continuation_of(W))[1]


@register(aliases=("U", "U_measure"))
@dataclass(frozen=True, kw_only=True)
class Umeasure(CWLMeasure):
    """U-measure (Sakai & Dou, SIGIR 2013) as cwl_eval computes it (``U-L@L``).

    W(i) is proportional to max(0, 1 - K(i-1)/L) for i < n (K(0) = 0) and W(n) = 0, normalised;
    C(i) = W(i+1)/W(i). The item at the depth n itself is never read, as in cwl_eval.

    Parameters
    ----------
    L : float
        The cost (characters in the paper) after which no user reads on, > 0 (default 1000).
    max_depth : int
        At least 2 here: W(n) = 0 leaves a depth of 1 nothing to read.

    References
    ----------
    Sakai & Dou, 'Summaries, ranked retrieval and sessions: a unified framework for
    information access evaluation', SIGIR 2013.
    """

    L: float = 1000.0
    fixed_weights = True
    name = "Umeasure"
    _constraints: ClassVar[dict] = {
        "L": _POSITIVE,
        "max_depth": Described(Interval(Integral, 2, MAX_DEPTH)),
    }
    formula = "W(i) ~ max(0, 1 - K(i-1)/L) for i < n, W(n) = 0; C(i) = W(i+1)/W(i)"
    reference = (
        "Sakai & Dou, 'Summaries, ranked retrieval and sessions: a unified framework for "
        "information access evaluation', SIGIR 2013"
    )

    def weights(self, gains, ranks):
        before = np.concatenate([[0.0], ranks.cum_costs[:-1]])  # K(i-1)
        decay = np.maximum(0.0, 1.0 - before / self.L)
        decay[-1] = 0.0
        W = decay / decay.sum()
        return W, _attention_and_stopping(_continuation_of(W))[1]


# ---------------------------------------------------------------------------- C from gains
@register
@dataclass(frozen=True, kw_only=True)
class CWL_RR(CWLMeasure):
    """Reciprocal rank as a C/W/L measure (cwl_eval ``RR``): the user stops at the first item
    with a positive gain.

    C(i) = 1 while G(i) = 0, then 0; with the first gain at rank r, W(i) = 1/r for i <= r and
    EU = g(r)/r, ETU = g(r), ED = r (n, EU 0 when no item within the depth has a gain). On
    binary qrels EU is :class:`RR` (rel=1); on graded ones any positive grade stops the user
    and EU is g(r)/r.

    References
    ----------
    Kantor & Voorhees, 'The TREC-5 confusion track', Information Retrieval 2000; Azzopardi,
    Thomas & Moffat, SIGIR 2019.
    """

    name = "CWL_RR"
    ranged_continuation = True  # falls with the gains
    formula = "C(i) = 1 while G(i) = 0, else 0; EU = g(r)/r, r the first rank with a gain"
    reference = (
        "Kantor & Voorhees, 'The TREC-5 confusion track', Information Retrieval 2000; "
        "Azzopardi, Thomas & Moffat, SIGIR 2019"
    )

    def _expected_outputs(self, tensor: EvalTensor) -> np.ndarray:
        # The user stops at the first item with a gain, r: where it falls over tied orderings
        # (TiedHits.first_chances), holding each gain of its tie group's gain items equally
        # likely. EU = g(r)/r, ETU = g(r), ETC = K(r) = cost r, ED = r; with no gain within
        # the depth, those of a list without one (as computed: no order matters there). A
        # residual is the expected upper bound less the expected value (both are linear in
        # the orderings).
        key, residual = self.output_parts
        if residual:
            return self._expected_upper(tensor, key) - replace(self, output=key)._expected(tensor)
        table = self.gain_values(tensor.levels)
        hits = tied_hits(tensor, lambda codes: positive_at(table, codes), self.max_depth)
        groups, owner, rank, chance = hits.first_chances(self.max_depth)
        _, first = hits.first()
        gain = (hits.tie_total(table[hits.grade]) / hits.tie_hits)[first][owner]
        reached = np.bincount(owner, weights=chance, minlength=len(groups))
        value = {
            "EU": chance * gain / rank,
            "ETU": chance * gain,
            "ETC": chance * self.cost * rank,
            "ED": chance * rank,
        }[self.output]
        values = np.bincount(owner, weights=value, minlength=len(groups))
        if self.output == "ED":  # the first gain past the depth: every item is read
            values += (1.0 - reached) * self.max_depth
        out = self._compute(tensor).reshape(-1)
        out[groups] = values
        return out.reshape(tensor.n_runs, tensor.n_topics)

    def _expected_upper(self, tensor: EvalTensor, key: str) -> np.ndarray:
        """E[output ``key``] of the upper bound over tied orderings: every item without a
        judgment within the depth n, the notional ones past the list's end included, has
        ``max_gain``, so the user reads through judged items without gain and stops at the
        first other one.

        The tie groups a list opens with that hold only judged items without gain, one after
        another from rank 1, end at rank c. If the group at rank c + 1 holds a judged item (first
        rank a + 1 = c + 1, size n, z judged items without gain, so m = n - z items that stop
        the user, whose gains are the judged ones' and max_gain for the rest), the stop is at
        its x-th position with probability C(n - x, m - 1) / C(n, m), the gain each of the m
        equally likely; otherwise rank c + 1 holds an item without a judgment (or a notional
        one) and the stop is there, with max_gain. Past the depth there is no stop: EU = ETU
        = ETC = 0 and ED = n, as for a list without gain.
        """
        table = self.gain_values(tensor.levels)
        depth, top = self.max_depth, float(self.max_gain)
        n_lists = tensor.n_runs * tensor.n_topics
        # The judged items and their tie groups, one row per group that holds some (a group
        # without any holds only items that stop the user).
        hits = tied_hits(tensor, lambda codes: codes >= 0)
        gain = table[hits.grade]
        first, block = hits.tie_layout
        n_blocks = len(first)
        blockers = np.bincount(block[gain == 0], minlength=n_blocks)
        n_judged = np.bincount(block, minlength=n_blocks)
        gains = np.bincount(block, gain, minlength=n_blocks)
        b_list = hits.group[first]
        b_start = hits.tie_start[first].astype(np.int64)
        b_size = hits.tie_size[first].astype(np.int64)
        b_end = b_start + b_size
        # The opening chain: groups without gain, each starting where the previous ends.
        new_list = np.ones(n_blocks, dtype=bool)
        new_list[1:] = b_list[1:] != b_list[:-1]
        prev_end = np.where(new_list, 0, np.concatenate([[0], b_end[:-1]]))
        ok = (blockers == b_size) & (b_start == prev_end)
        broken = np.cumsum(~ok)
        list_first = np.flatnonzero(new_list)
        list_blocks = np.diff(np.append(list_first, n_blocks))
        broken_before = np.repeat(broken[list_first] - ~ok[list_first], list_blocks)
        chained = ok & (broken == broken_before)
        c = np.zeros(n_lists, dtype=np.int64)
        np.maximum.at(c, b_list[chained], b_end[chained])
        # The group at rank c + 1, when it holds entries.
        n_chained = np.bincount(b_list[chained], minlength=n_lists)[b_list[list_first]]
        nxt = list_first + n_chained
        has = n_chained < list_blocks
        nxt, owner_list = nxt[has], b_list[list_first][has]
        at_c = b_start[nxt] == c[owner_list]
        nxt, owner_list = nxt[at_c], owner_list[at_c]
        # Every list stops at rank c + 1 with max_gain, but those whose next group is random.
        random = np.zeros(n_lists, dtype=bool)
        random[owner_list] = True
        fixed = np.flatnonzero(~random & (c < depth))
        n, a = b_size[nxt], b_start[nxt]
        m = n - blockers[nxt]
        mean_gain = (gains[nxt] + (n - n_judged[nxt]) * top) / m
        last = np.clip(np.minimum(n - m + 1, depth - a), 0, None)
        row, index = grid_rows(last)
        x = index + 1
        nr, mr = n[row], m[row]
        chance = np.exp(log_choose(nr - x, mr - 1) - log_choose(nr, mr))
        lists = np.concatenate([fixed, owner_list[row]])
        rank = np.concatenate([c[fixed] + 1.0, (a[row] + x).astype(np.float64)])
        weight = np.concatenate([np.ones(len(fixed)), chance])
        stop_gain = np.concatenate([np.full(len(fixed), top), mean_gain[row]])
        value = {
            "EU": stop_gain / rank,
            "ETU": stop_gain,
            "ETC": self.cost * rank,
            "ED": rank,
        }[key]
        out = np.bincount(lists, weights=weight * value, minlength=n_lists)
        if key == "ED":  # no stop within the depth: every item is read
            out += (1.0 - np.bincount(lists, weights=weight, minlength=n_lists)) * depth
        return out.reshape(tensor.n_runs, tensor.n_topics)

    def continuation(self, gains, ranks):
        # a sum of non-negative gains is 0 exactly when every one of them is
        return (np.cumsum(gains, axis=1) == 0).astype(np.float64)


@register
@dataclass(frozen=True, kw_only=True)
class CWL_AP(CWLMeasure):
    """Average precision as a C/W/L measure (cwl_eval ``AP``).

    With S(i) = sum_{j>=i} g(j)/j over the depth, C(i) = S(i+1)/S(i) when S(i+1) > 0, else 0
    (and C(n) = 0), so W(i) = S(i) / sum_j g(j) and

        EU = (1 / sum_{j<=n} g(j)) sum_{i<=n} g(i) G(i) / i.

    The denominator is the gain the ranking holds within the depth, not the qrels' R as in
    :class:`AP`: on binary qrels EU = AP x R / (relevant items retrieved within the depth).

    References
    ----------
    Harman, 'Evaluation issues in information retrieval', IP&M 1992; Azzopardi, Thomas &
    Moffat, SIGIR 2019.
    """

    name = "CWL_AP"
    formula = "C(i) = S(i+1)/S(i), S(i) = sum_{j>=i} g(j)/j; EU = sum_i g(i) G(i)/i / sum_j g(j)"
    reference = (
        "Harman, 'Evaluation issues in information retrieval', Information Processing & "
        "Management 1992; Azzopardi, Thomas & Moffat, SIGIR 2019"
    )

    ranged_continuation = True  # its own bounds: C(i) reads the gains below rank i

    def _block_bound(self, key, side, low, high, ranks):
        # With S(1) > 0 every output is a weighted mean over the ranks holding a gain: EU of
        # G(i)/i (weights g(i)), ETU of G(i), ETC of K(i) and ED of i (weights g(i)/i), so it
        # lies between the least and the greatest over the ranks that can hold a gain. With
        # no gain at all (possible when no judged item has one) C = 0: EU = ETU = 0,
        # ETC = K(1), ED = 1.
        if key == "EC":
            return np.full(len(low), float(ranks.costs[0]))
        can = high > 0
        of = {
            "EU": lambda gains: np.cumsum(gains, axis=1) / ranks.i,
            "ETU": lambda gains: np.cumsum(gains, axis=1),
            "ETC": lambda gains: np.broadcast_to(ranks.cum_costs, gains.shape),
            "ED": lambda gains: np.broadcast_to(ranks.i, gains.shape),
        }[key]
        empty = {"EU": 0.0, "ETU": 0.0, "ETC": float(ranks.cum_costs[0]), "ED": 1.0}[key]
        none_possible = ~(low > 0).any(axis=1)
        if side == "lo":
            value = np.where(can, of(low), np.inf).min(axis=1)
            return np.where(none_possible, np.minimum(value, empty), value)
        value = np.where(can, of(high), -np.inf).max(axis=1)
        return np.where(none_possible, np.maximum(value, empty), value)

    def _expected_outputs(self, tensor: EvalTensor) -> np.ndarray:
        # EU = sum_i g(i) G(i)/i / sum_j g(j): E[G(i)/i] of each gain item over tied orderings
        # (TiedHits.expected_precision, weighted by the gains), over the gains within the
        # depth, which no order changes unless a tie group crosses the depth. The other outputs
        # divide by S(1) = sum_j g(j)/j, which the order changes: through the Laplace transform
        # of S(1) (expected_cwl_ap). Where a group crosses the depth, every ordering is scored.
        if self.output != "EU":
            found = expected_cwl_ap(self, tensor)
            return Measure._expected(self, tensor) if found is None else found
        table = self.gain_values(tensor.levels)
        hits = tied_hits(tensor, lambda codes: positive_at(table, codes), self.max_depth)
        crossing = (hits.tie_start < self.max_depth) & (
            hits.tie_start + hits.tie_size > self.max_depth
        )
        if crossing.any():
            return Measure._expected(self, tensor)
        gains = table[hits.grade]
        inside = hits.tie_start < self.max_depth
        share = hits.expected_precision(inside, self.max_depth, weights=gains)
        return safe_divide(hits.total(gains * share), hits.total(np.where(inside, gains, 0.0)))

    def continuation(self, gains, ranks):
        share = gains / ranks.i
        tail = np.cumsum(share[:, ::-1], axis=1)[:, ::-1]  # S(i)
        C = np.zeros(gains.shape)
        np.divide(tail[:, 1:], tail[:, :-1], out=C[:, :-1], where=tail[:, 1:] > 0)
        return C


@register
@dataclass(frozen=True, kw_only=True)
class INST(CWLMeasure):
    """INST (Moffat, Bailey, Scholer & Thomas, ADCS 2015, ACM TOIS 2017): the user expects to
    need T units of gain, and the more is still missing, the more likely they go on.

    T(i) = T - G(i) and C(i) = ((i + T + T(i) - 1) / (i + T + T(i)))^2. Gains must lie in
    [0, 1] (cwl_eval refuses others; the default ``gain=scaled`` does).

    Parameters
    ----------
    T : float
        Expected gain wanted, >= 0.5 (default 1): with gains in [0, 1], i + T + T(i) - 1 >= 0
        then, so C(i) is a probability that falls as gain is found (cwl_eval accepts any T and
        gives C(i) > 1 for T < 1/4).

    References
    ----------
    Moffat, Bailey, Scholer & Thomas, 'INST: an adaptive metric for information retrieval
    evaluation', ADCS 2015; 'Incorporating user expectations and behavior into the
    measurement of search effectiveness', ACM TOIS 2017.
    """

    T: float = 1.0
    name = "INST"
    ranged_continuation = True  # falls with the gains
    unit_gains = True
    _constraints: ClassVar[dict] = {
        "T": Described(Interval(Real, 0.5, MAX_PARAMETER)),
        "max_gain": _UNIT_GAIN,
    }
    formula = "C(i) = ((i + T + T_i - 1)/(i + T + T_i))^2, T_i = T - G(i)"
    reference = (
        "Moffat, Bailey, Scholer & Thomas, 'Incorporating user expectations and behavior into "
        "the measurement of search effectiveness', ACM TOIS 2017 (INST, ADCS 2015)"
    )

    def step_continuation(self, found, gain, at, ranks):
        # i + T + T(i), T(i) = T - G(i), as cwl_eval adds it
        total = ranks.i[at] + self.T + (self.T - found)
        return ((total - 1.0) / total) ** 2


@dataclass(frozen=True, kw_only=True)
class _BPMBase(CWLMeasure):
    T: float = 1.0
    K: float = 10.0
    _constraints: ClassVar[dict] = {"T": _NON_NEGATIVE, "K": _NON_NEGATIVE}

    def _cost_budget(self, ranks: _Ranks) -> np.ndarray:
        return np.logical_and.accumulate(ranks.cum_costs < self.K)

    def reach_depth(self, ranks: _Ranks) -> int:
        # C(i) = 0 at the first rank whose cost K(i) reaches K: no user reads past it
        spent = np.flatnonzero(ranks.cum_costs >= self.K)
        return int(spent[0]) + 1 if len(spent) else ranks.n

    def opening_start(self, rows: int) -> np.ndarray:
        """(rows, k) the sums a user carries into rank 1: G(0) = 0."""
        return np.zeros((rows, 1))

    def opening_step(self, state, gain, at: int, ranks: _Ranks):
        """The sums (rows, k) a user carries past the 0-based rank ``at``, where the items
        have gains ``gain`` (rows,), and whether they read on past it (C = 1), added up as
        cwl_eval adds them, one rank at a time: G(i) = G(i - 1) + g(i) (as its cumsum)."""
        found = state[:, 0] + gain
        return found[:, None], (found < self.T) & (ranks.cum_costs[at] < self.K)

    #: The parameters that enter the benefit budget's sums besides the gains.
    _budget_parameters: ClassVar[tuple[str, ...]] = ("T",)

    def _expected_outputs(self, tensor: EvalTensor) -> np.ndarray:
        # Where G(i) equals the benefit budget in exact arithmetic (BPM_dynamic's defaults:
        # at the third rank whenever its item has no gain; BPM(T=2): 1 + 1/3 + 2/3),
        # cwl_eval's user stops or goes on as the rounding of its sums falls, which depends
        # on the order of the gains (on TREC DL 2020, up to 0.12 of a list's ETU): the
        # recursion follows no order, so it serves only where no sum is rounded.
        if self._exact_budgets(self.gain_values(tensor.levels)):
            return expected_adaptive(self, tensor)
        return expected_by_openings(self, tensor)

    def _exact_budgets(self, table: np.ndarray) -> bool:
        """Whether the sums of the benefit budget are exact, in cwl_eval's order and in
        :meth:`step_continuation`'s, for gains from ``table`` (or 0 or max_gain) at every
        depth up to max_depth.

        With every gain and parameter a multiple of 1/D (D a power of two, as every float's
        denominator is) and at most A >= 1 in size, each intermediate of either sum is a
        multiple of 1/D^2 of size at most 4 n A^2 (BPM_dynamic's T(i) multiplies hb by a sum
        of gains), a number a double holds exactly while 4 n A^2 D^2 < 2^53 (binary gains,
        or grades 0-2 or 0-4 scaled, with the defaults; not grades 0-3 scaled, in thirds).
        """
        parameters = [getattr(self, name) for name in self._budget_parameters]
        fractions = [Fraction(float(x)) for x in (*parameters, self.max_gain, *table)]
        size = max(1, *(abs(f) for f in fractions))
        denominator = max(f.denominator for f in fractions)
        return 4 * self.max_depth * size**2 * denominator**2 < 2**53


@register(aliases=("BPM_static",))
@dataclass(frozen=True, kw_only=True)
class BPM(_BPMBase):
    """Bejeweled player model, static (Zhang et al., SIGIR 2017), cwl_eval's ``BPM-Static``.

    The user goes on while both budgets last: C(i) = 1 while G(i) < T and K(i) < K (the
    benefit and cost budgets), 0 from the first rank where either is spent.

    Parameters
    ----------
    T : float
        Benefit wanted (E_b in the paper), >= 0 (default 1).
    K : float
        Cost the user will spend (E_c; documents with a cost of 1), >= 0 (default 10).

    References
    ----------
    Zhang, Liu, Li, Zhang, Xu & Ma, 'Evaluating web search with a bejeweled player model',
    SIGIR 2017.
    """

    name = "BPM"
    ranged_continuation = True  # falls with the gains
    formula = "C(i) = 1 while G(i) < T and K(i) < K, then 0"
    reference = (
        "Zhang, Liu, Li, Zhang, Xu & Ma, 'Evaluating web search with a bejeweled player "
        "model', SIGIR 2017"
    )

    def step_continuation(self, found, gain, at, ranks):
        # cwl_eval keeps C(i) at 0 after the first 0; the reach is 0 from there on whatever C
        # reads, so the outputs are the same
        return ((found < self.T) & (ranks.cum_costs[at] < self.K)).astype(np.float64)


@register(aliases=("BPMD",))
@dataclass(frozen=True, kw_only=True)
class BPM_dynamic(_BPMBase):
    """Bejeweled player model, dynamic, as cwl_eval computes it (``BPM-Dynamic``).

    The benefit budget moves with what the user finds: T(1) = T, T(i+1) = T(i) + hb (g(i) -
    gain_med), and C(i) = 1 while G(i) < T(i) and K(i) < K, then 0.

    In Zhang et al. the cost budget moves too, K(i+1) = K(i) + hc (g(i) - gain_med); cwl_eval
    1.0.12 adds that change to T, after T is last read, so its cost budget stays K, and its
    ``hc`` changes nothing: this measure has no ``hc`` and computes what cwl_eval does.

    Parameters
    ----------
    T : float
        Benefit wanted at the start, >= 0 (default 1).
    K : float
        Cost the user will spend, >= 0 (default 10).
    hb : float
        How much a gain above (below) ``gain_med`` raises (lowers) the benefit wanted, >= 0
        (default 1).
    gain_med : float
        The gain that leaves the budget unchanged (rel_med in the paper), >= 0 (default 0.5).

    References
    ----------
    Zhang, Liu, Li, Zhang, Xu & Ma, SIGIR 2017; cwl_eval 1.0.12 ``cwl_bpm.py``.
    """

    hb: float = 1.0
    gain_med: float = 0.5
    name = "BPM_dynamic"
    _budget_parameters = ("T", "hb", "gain_med")
    ranged_continuation = True
    _constraints: ClassVar[dict] = {"hb": _NON_NEGATIVE, "gain_med": _NON_NEGATIVE}
    formula = "C(i) = 1 while G(i) < T(i) and K(i) < K, T(i+1) = T(i) + hb (g(i) - gain_med)"
    reference = (
        "Zhang, Liu, Li, Zhang, Xu & Ma, 'Evaluating web search with a bejeweled player "
        "model', SIGIR 2017; cwl_eval 1.0.12"
    )

    def continuation(self, gains, ranks):
        return self._going_on(gains, gains, ranks)

    def step_continuation(self, found, gain, at, ranks):
        # T(i) = T + hb (G(i - 1) - (i - 1) gain_med), the sum cwl_eval adds one term at a
        # time: the same number wherever the arithmetic is exact (_exact_budgets), the only
        # case the recursion over tied orderings reads this
        wanted = self.T + self.hb * ((found - gain) - (ranks.i[at] - 1.0) * self.gain_med)
        return ((found < wanted) & (ranks.cum_costs[at] < self.K)).astype(np.float64)

    def opening_start(self, rows: int) -> np.ndarray:
        # G(0) = 0 and T(1) = T
        return np.tile([0.0, self.T], (rows, 1))

    def opening_step(self, state, gain, at, ranks):
        # G(i) < T(i), then T(i + 1) = T(i) + hb (g(i) - gain_med): _going_on's sums
        found = state[:, 0] + gain
        going = (found < state[:, 1]) & (ranks.cum_costs[at] < self.K)
        return np.column_stack([found, state[:, 1] + self.hb * (gain - self.gain_med)]), going

    def continuation_range(self, low, high, ranks):
        # G(i) rises with the gains and so does T(i) (hb >= 0): the user goes on at least
        # while G+(i) < T-(i), at most while G-(i) < T+(i). Rounding keeps both orders.
        return self._going_on(high, low, ranks), self._going_on(low, high, ranks)

    def _going_on(self, found, wanting, ranks) -> np.ndarray:
        """C(i) with G(i) from the gains ``found`` and T(i) from the gains ``wanting``."""
        # T(i) as cwl_eval accumulates it, one addition at a time (a tie G(i) = T(i) must fall
        # on the same side): T, T + d(1), T + d(1) + d(2), ...
        steps = np.empty(wanting.shape)
        steps[:, 0] = self.T
        steps[:, 1:] = self.hb * (wanting[:, :-1] - self.gain_med)
        wanted = np.cumsum(steps, axis=1)
        benefit = np.logical_and.accumulate(np.cumsum(found, axis=1) < wanted, axis=1)
        return (benefit & self._cost_budget(ranks)).astype(np.float64)


@dataclass(frozen=True, kw_only=True)
class _IFT(CWLMeasure):
    """The goal and rate terms of the IFT measures (Azzopardi, Thomas & Craswell 2018)."""

    def goal(self, found) -> np.ndarray:
        """C1(i) = 1 - 1 / (1 + b1 e^((T - G(i)) R1)), ``found`` being G(i)."""
        return 1.0 - 1.0 / (1.0 + self.b1 * np.exp((self.T - found) * self.R1))

    def rate(self, found, at, ranks: _Ranks) -> np.ndarray:
        """C2(i) = 1 / (1 + b2 e^((A - G(i)/K(i)) R2)) at the 0-based ranks ``at``."""
        rate = found / ranks.cum_costs[at]
        return 1.0 / (1.0 + self.b2 * np.exp((self.A - rate) * self.R2))


_GOAL = {"T": Optional(_NON_NEGATIVE), "b1": Optional(_POSITIVE), "R1": Optional(_NON_NEGATIVE)}
_RATE = {"A": Optional(_NON_NEGATIVE), "b2": Optional(_POSITIVE), "R2": Optional(_NON_NEGATIVE)}
_IFT_REFERENCE = (
    "Azzopardi, Thomas & Craswell, 'Measuring the utility of search engine result pages: an "
    "information foraging based measure', SIGIR 2018"
)


@register(aliases=("IFT_C1",))
@dataclass(frozen=True, kw_only=True)
class IFT_goal(_IFT):
    """Information foraging measure, goal only (cwl_eval's ``IFT-C1``).

    C(i) = 1 - 1 / (1 + b1 e^((T - G(i)) R1)): the user goes on while the gain found is short
    of the goal T, less and less once it is reached; R1 = 0 gives a constant C (RBP), a large
    R1 stops the user at the goal.

    Parameters
    ----------
    T : float
        The gain wanted, >= 0; required (cwl_eval gives no default), e.g. 2.
    b1 : float
        Intercept, > 0; required, e.g. 0.9.
    R1 : float
        How strictly the goal is kept ("rationality"), >= 0; required, e.g. 10.

    References
    ----------
    Azzopardi, Thomas & Craswell, SIGIR 2018.
    """

    T: float | None = None
    b1: float | None = None
    R1: float | None = None
    name = "IFT_goal"
    ranged_continuation = True  # falls with the gains
    example_params: ClassVar[dict] = {"T": 2.0, "b1": 0.9, "R1": 10.0}
    # None is the default only so that the missing parameters are asked for with an example
    _constraints: ClassVar[dict] = _GOAL
    formula = "C(i) = 1 - 1/(1 + b1 exp((T - G(i)) R1))"
    reference = _IFT_REFERENCE

    def _validate(self) -> None:
        _required(self, ("T", "b1", "R1"), "IFT_goal(T=2,b1=0.9,R1=10)")
        super()._validate()

    def step_continuation(self, found, gain, at, ranks):
        return self.goal(found)


@register(aliases=("IFT_C2",))
@dataclass(frozen=True, kw_only=True)
class IFT_rate(_IFT):
    """Information foraging measure, rate only (cwl_eval's ``IFT-C2``).

    C(i) = 1 / (1 + b2 e^((A - G(i)/K(i)) R2)): the user goes on while the rate of gain per
    unit of cost keeps up with the rate A they expect.

    Parameters
    ----------
    A : float
        Rate of gain expected, >= 0; required (cwl_eval gives no default), e.g. 0.2.
    b2 : float
        Intercept, > 0; required, e.g. 0.9.
    R2 : float
        How strictly the rate is kept, >= 0; required, e.g. 10.

    References
    ----------
    Azzopardi, Thomas & Craswell, SIGIR 2018.
    """

    A: float | None = None
    b2: float | None = None
    R2: float | None = None
    name = "IFT_rate"
    ranged_continuation = True  # rises with the gains
    example_params: ClassVar[dict] = {"A": 0.2, "b2": 0.9, "R2": 10.0}
    _constraints: ClassVar[dict] = _RATE
    formula = "C(i) = 1/(1 + b2 exp((A - G(i)/K(i)) R2))"
    reference = _IFT_REFERENCE

    def _validate(self) -> None:
        _required(self, ("A", "b2", "R2"), "IFT_rate(A=0.2,b2=0.9,R2=10)")
        super()._validate()

    def step_continuation(self, found, gain, at, ranks):
        return self.rate(found, at, ranks)


@register(aliases=("IFT_C1_C2",))
@dataclass(frozen=True, kw_only=True)
class IFT_goal_rate(_IFT):
    """Information foraging measure, goal and rate (cwl_eval's ``IFT-C1-C2``), the variant
    that predicted stopping best in Azzopardi, Thomas & Craswell (2018).

    C(i) = C1(i) C2(i), the goal term of :class:`IFT_goal` times the rate term of
    :class:`IFT_rate`.

    Parameters
    ----------
    T, b1, R1 : float
        The goal term's parameters, as :class:`IFT_goal`; required.
    A, b2, R2 : float
        The rate term's parameters, as :class:`IFT_rate`; required.

    References
    ----------
    Azzopardi, Thomas & Craswell, SIGIR 2018.
    """

    T: float | None = None
    b1: float | None = None
    R1: float | None = None
    A: float | None = None
    b2: float | None = None
    R2: float | None = None
    name = "IFT_goal_rate"
    example_params: ClassVar[dict] = {
        "T": 2.0,
        "b1": 0.9,
        "R1": 10.0,
        "A": 0.2,
        "b2": 0.9,
        "R2": 10.0,
    }
    _constraints: ClassVar[dict] = {**_GOAL, **_RATE}
    formula = "C(i) = (1 - 1/(1 + b1 exp((T - G(i)) R1))) / (1 + b2 exp((A - G(i)/K(i)) R2))"
    reference = _IFT_REFERENCE

    def _validate(self) -> None:
        _required(
            self,
            ("T", "b1", "R1", "A", "b2", "R2"),
            "IFT_goal_rate(T=2,b1=0.9,R1=10,A=0.2,b2=0.9,R2=10)",
        )
        super()._validate()

    ranged_continuation = True

    def step_continuation(self, found, gain, at, ranks):
        return self.goal(found) * self.rate(found, at, ranks)

    def continuation_range(self, low, high, ranks):
        # C1 falls and C2 rises with the gains, and both are >= 0
        low, high = np.cumsum(low, axis=1), np.cumsum(high, axis=1)
        every = slice(None)
        return (
            self.goal(high) * self.rate(low, every, ranks),
            self.goal(low) * self.rate(high, every, ranks),
        )


# ---------------------------------------------------------------------------- NERR
_NERR_REFERENCE = (
    "Azzopardi, Mackenzie & Moffat, 'ERR is not C/W/L: exploring the relationship between "
    "expected reciprocal rank and other metrics', ICTIR 2021"
)


@dataclass(frozen=True, kw_only=True)
class _NERR(CWLMeasure):
    """Not (but nearly) ERR: a C/W/L measure whose user stops at an item with the
    probability of its gain, as ERR's does (gains in [0, 1])."""

    unit_gains = True
    _constraints: ClassVar[dict] = {"max_gain": _UNIT_GAIN}
    reference = _NERR_REFERENCE
    ranged_continuation = True  # f(i) (1 - g(i)) falls with the gains


@register(aliases=("NERReq8",))
@dataclass(frozen=True, kw_only=True)
class NERR_eq8(_NERR):
    """NERR, equation 8 of Azzopardi, Mackenzie & Moffat (ICTIR 2021): ERR's stopping,
    truncated at k.

    C(i) = 1 - g(i) for i < k, 0 from k on. Not :class:`ERR` (whose 1/r is a utility, not a
    C/W/L weight) nor :class:`nERR`.

    Parameters
    ----------
    k : int
        The cutoff, required: ``NERR_eq8@10``.
    """

    k: int | None = None
    name = "NERR_eq8"
    cutoff_field = "k"
    cutoff_required = True
    formula = "C(i) = 1 - g(i) for i < k, 0 beyond"

    def step_continuation(self, found, gain, at, ranks):
        return np.where(ranks.i[at] < self.k, 1.0 - gain, 0.0)

    def reach_depth(self, ranks: _Ranks) -> int:
        # C(i) = 0 from rank k on: no user reads past it
        return max(1, min(int(self.k), ranks.n))


@register(aliases=("NERReq9",))
@dataclass(frozen=True, kw_only=True)
class NERR_eq9(_NERR):
    """NERR, equation 9 of Azzopardi, Mackenzie & Moffat (ICTIR 2021): ERR's stopping with a
    reciprocal-rank discount, truncated at k.

    C(i) = (i / (i+1)) (1 - g(i)) for i < k, 0 from k on.

    Parameters
    ----------
    k : int
        The cutoff, required: ``NERR_eq9@10``.
    """

    k: int | None = None
    name = "NERR_eq9"
    cutoff_field = "k"
    cutoff_required = True
    formula = "C(i) = (i/(i+1)) (1 - g(i)) for i < k, 0 beyond"

    def step_continuation(self, found, gain, at, ranks):
        i = ranks.i[at]
        return np.where(i < self.k, (i / (i + 1.0)) * (1.0 - gain), 0.0)

    def reach_depth(self, ranks: _Ranks) -> int:
        # C(i) = 0 from rank k on: no user reads past it
        return max(1, min(int(self.k), ranks.n))


@register(aliases=("NERReq10",))
@dataclass(frozen=True, kw_only=True)
class NERR_eq10(_NERR):
    """NERR, equation 10 of Azzopardi, Mackenzie & Moffat (ICTIR 2021): ERR's stopping with
    RBP's patience, to the full depth.

    C(i) = phi (1 - g(i)).

    Parameters
    ----------
    phi : float
        Patience, in [0, 1] (default 0.9).
    """

    phi: float = 0.9
    name = "NERR_eq10"
    _constraints: ClassVar[dict] = {"phi": _PROBABILITY}
    formula = "C(i) = phi (1 - g(i))"

    def step_continuation(self, found, gain, at, ranks):
        return self.phi * (1.0 - gain)


@register(aliases=("NERReq11",))
@dataclass(frozen=True, kw_only=True)
class NERR_eq11(_NERR):
    """NERR, equation 11 of Azzopardi, Mackenzie & Moffat (ICTIR 2021): ERR's stopping with
    INSQ's goal T, to the full depth.

    C(i) = ((i + 2T - 1) / (i + 2T))^2 (1 - g(i)).

    Parameters
    ----------
    T : float
        Expected gain wanted, > 0 (default 1).
    """

    T: float = 1.0
    name = "NERR_eq11"
    _constraints: ClassVar[dict] = {"T": _POSITIVE}
    formula = "C(i) = ((i + 2T - 1)/(i + 2T))^2 (1 - g(i))"

    def step_continuation(self, found, gain, at, ranks):
        i = ranks.i[at]
        return ((i + 2.0 * self.T - 1.0) / (i + 2.0 * self.T)) ** 2 * (1.0 - gain)


__all__ = [
    "OUTPUTS",
    "GAIN_FORMS",
    "CWLMeasure",
    "CWL_P",
    "CWL_RR",
    "CWL_RBP",
    "CWL_AP",
    "SDCG",
    "INST",
    "INSQ",
    "BPM",
    "BPM_dynamic",
    "TBG",
    "Umeasure",
    "IFT_goal",
    "IFT_rate",
    "IFT_goal_rate",
    "NERR_eq8",
    "NERR_eq9",
    "NERR_eq10",
    "NERR_eq11",
    "NPV",
    "SET",
]
