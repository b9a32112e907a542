"""How a measure is declared, registered, named and parsed.

A measure is a frozen dataclass whose fields are its parameters, registered with
:func:`register`, with one vectorised method :meth:`Measure._compute` from an
:class:`~metaeval.engine.EvalTensor` to an (S runs x T topics) array of per-topic scores.

Names follow ir_measures: ``AP``, ``P@10``, ``AP(rel=2)``, ``P(rel=2)@10``,
``nDCG(gain=exp)@20``, ``GAP(g=(0.1,0.9))``; a trailing ``'`` after the name selects the
condensed-list (judged documents only) variant, ``AP'``, ``nDCG'@10``. Every measure gets that
variant for free: it is the same computation on :meth:`EvalTensor.condensed`.

Grades may be integers or real numbers (:attr:`metaeval.data.Qrels.levels`). A measure reads
grade values only through the tensor: its gains from :attr:`EvalTensor.levels`, and relevance
at a level ``rel`` (any number > 0: ``P(rel=0.5)@10``) as a code threshold,
:meth:`EvalTensor.code_at_least`. A whole-number level is written as an integer, so
``P(rel=2.0)@10`` is ``P(rel=2)@10``.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import math
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from numbers import Integral
from typing import Any, ClassVar

import numpy as np

from metaeval._constraints import (
    Boolean,
    Constraint,
    Described,
    Interval,
    OneOf,
    Optional,
    check_declared,
    validate_params,
)
from metaeval._registry import Registry
from metaeval._validation import ParamError, ParamTypeError, whole_as_int
from metaeval._warnings import warn
from metaeval.engine import EvalTensor

#: The two bounds of a measure over the grades of the unjudged documents (``AP_lo``, ``AP_hi``).
BOUNDS = ("lo", "hi")
#: Most orderings of the tied documents of one ranked list, and of all lists, that a measure
#: without a closed-form expected value scores one by one (``ties="expected"``).
ENUMERATED_ORDERINGS = (10_000, 200_000)
#: Most cells of work (about a nanosecond each) the exact expected value over tied orderings of
#: interpolated precision, G and YAAP may take for one measure; past it the measure is refused.
#: 11pt_avg takes 2.8e8 on TREC DL 2019 and 5.8e9 (6 s) on DL 2020.
TIED_MAXIMUM_CELLS = 10**11
#: The largest cutoff (@k): 2^31 - 1, longer than any ranked list.
MAX_CUTOFF = 2**31 - 1
_REGISTRY: Registry[type[Measure]] = Registry("measure")


#: What a cutoff may be; every measure with a ``cutoff_field`` gets it (a required cutoff is
#: None only until the measure says it needs one).
CUTOFF = Optional(Interval(Integral, 1, MAX_CUTOFF))


class MeasureError(Exception):
    """A measure's parameter is not allowed, or its computation failed; the message starts
    with the measure's name."""


class MeasureValueError(MeasureError, ParamError):
    """A measure's parameter value is not allowed (or its computation failed): a ValueError
    that carries the parameter as :class:`~metaeval._validation.ParamError` does (``param``
    and ``index``; None for a failed computation)."""


class MeasureTypeError(MeasureError, ParamTypeError):
    """A measure's parameter has the wrong type (or its computation failed with a TypeError):
    a TypeError carrying the parameter, as :class:`MeasureValueError`."""


def _named(err: ParamError, measure: str, owner: type) -> MeasureError:
    """``err`` as the measure's error: its message after the measure's name (``nDCG: base
    must be a number > 1, got 1``), its parameter and index kept."""
    kind = MeasureTypeError if isinstance(err, TypeError) else MeasureValueError
    return kind(err.param, err.problem, index=err.index, owner=owner, message=f"{measure}: {err}")


@dataclass(frozen=True, kw_only=True)
class Measure:
    """Base class of every measure.

    Subclasses set the class attributes below, declare their parameters as dataclass fields
    (with defaults), and implement :meth:`_compute`.

    Parameters are checked once, when the measure is made: first against the constraints the
    class and its bases declare in ``_constraints`` (:mod:`metaeval._constraints`; the cutoff
    field's is :data:`CUTOFF` unless the class declares one), then by :meth:`_validate`, for
    what a constraint cannot say (relations between parameters, normalisations). A
    :class:`~metaeval._validation.ParamError` from either becomes a
    :class:`MeasureValueError` (or :class:`MeasureTypeError`) whose message starts with the
    measure's name and which carries the parameter (``err.param``, ``err.index``). A plugin
    that declares nothing is checked by its own :meth:`_validate` alone.

    Attributes
    ----------
    judged_only : bool
        Condensed-list variant (Sakai SIGIR 2007): unjudged documents are removed from every
        ranking before the measure is computed. Written as a ``'`` after the name.
    bound : {None, "lo", "hi"}
        The lowest or highest value the measure can take whatever the grades of the unjudged
        documents (:meth:`_bounds`). Written ``_lo`` / ``_hi`` after the name: ``AP_lo``,
        ``P_hi@10``.
    """

    judged_only: bool = False
    bound: str | None = None

    #: Name in measure strings, e.g. "AP".
    name: ClassVar[str] = ""
    #: Field written after "@" (e.g. "cutoff" for P@10), or None.
    cutoff_field: ClassVar[str | None] = None
    #: Whether the cutoff must be given (P needs one, nDCG does not).
    cutoff_required: ClassVar[bool] = False
    #: Smallest and largest possible per-topic value.
    bounds: ClassVar[tuple[float, float]] = (0.0, 1.0)
    #: Why a measure has no bounds over the grades of unjudged documents, said when refused.
    without_bounds: ClassVar[str] = ""
    #: True when the measure is divided by what an ideal ranking achieves (AP, nDCG, R-prec...).
    recall_normalised: ClassVar[bool] = False
    #: One-line formula and the paper, shown by ``metaeval measures``.
    formula: ClassVar[str] = ""
    reference: ClassVar[str] = ""
    #: True when the measure does not depend on the order of a list (num_ret): its value is
    #: also its expected value over tied orderings.
    order_free: ClassVar[bool] = False
    #: True for the counts of documents (num_ret, num_rel...) whose trec_eval summary line is
    #: their sum over the topics, not their mean.
    summed_by_trec_eval: ClassVar[bool] = False
    #: Values for the parameters that have no default (besides a required cutoff, 5): what
    #: :meth:`example` builds, for tests and listings that make one of every measure.
    example_params: ClassVar[dict] = {}
    #: What each parameter may be, by field name: this class's own; :meth:`param_constraints`
    #: adds those of the bases.
    _constraints: ClassVar[dict[str, Constraint]] = {
        "judged_only": Boolean(),
        "bound": Optional(Described(OneOf(*BOUNDS), "lo or hi")),
    }

    @classmethod
    def param_constraints(cls) -> dict[str, Constraint]:
        """Every declared constraint of the class: its bases' first, then its own (which
        replace a base's for the same parameter), and :data:`CUTOFF` for the cutoff field when
        none is declared."""
        merged = cls.__dict__.get("_merged_constraints")
        if merged is None:  # once per class: measures are made for every name parsed
            merged = {}
            for klass in reversed(cls.__mro__):
                merged.update(klass.__dict__.get("_constraints", {}))
            if cls.cutoff_field is not None:
                merged.setdefault(cls.cutoff_field, CUTOFF)
            cls._merged_constraints = merged
        return merged

    def at_level(self, rel: float) -> Measure:
        """This measure with binary relevance at ``rel`` (grade >= rel relevant) if it is a
        binary measure left at the default level 1; itself otherwise (a graded measure, or a
        level already chosen). A collection's convention (TREC DL: 2) reaches its measures
        this way. ``rel`` is any number > 0 (real-valued grades: ``0.5``)."""
        if rel != 1 and getattr(self, "rel", None) == 1:
            return dataclasses.replace(self, rel=rel)
        return self

    @classmethod
    def example(cls) -> Measure:
        """An instance with every required parameter set (a cutoff of 5 if one is needed)."""
        cutoff = {cls.cutoff_field: 5} if cls.cutoff_required else {}
        return cls(**cutoff, **cls.example_params)

    def __post_init__(self):
        try:
            validate_params(self, self.param_constraints())
            if (
                self.cutoff_field is not None
                and self.cutoff_required
                and getattr(self, self.cutoff_field) is None
            ):
                raise MeasureValueError(
                    self.cutoff_field,
                    "is required",
                    owner=type(self),
                    message=f"{self.name} needs a cutoff, e.g. {self.name}@10",
                )
            self._validate()
        except MeasureError as err:  # already worded with the measure's name
            if isinstance(err, ParamError) and err.owner is None:
                err.owner = type(self)
            raise
        except ParamError as err:
            raise _named(err, self.name, type(self)) from None

    def _validate(self) -> None:
        """Check what the declared constraints cannot (relations between parameters) and
        normalise values; raise :class:`~metaeval._validation.ParamError` naming the
        parameter (the measure's name is put before its message)."""

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        raise NotImplementedError

    def _expected(self, tensor: EvalTensor) -> np.ndarray:
        """The (S, T) expected value over the orderings of every group of tied documents
        (runs read with ``ties="expected"``).

        Measures with a closed form override this (:func:`~metaeval.measures._common.tied_hits`).
        Here, every list whose tied groups' order matters is scored in each distinct ordering
        of them (:meth:`~metaeval.engine.EvalTensor.tie_orderings`) and the scores averaged:
        exact, within the numbers of orderings of :data:`ENUMERATED_ORDERINGS`; past them the
        measure is refused.
        """
        try:
            orderings = tensor.tie_orderings(*ENUMERATED_ORDERINGS)
        except ValueError as err:
            raise MeasureValueError(
                f"{self}: its expected value over tied orderings has no closed form, and {err}; "
                "order ties by trec_eval or input"
            ) from None
        # the lists whose ties change nothing: any order gives their value
        values = np.array(self._compute(tensor), dtype=np.float64)
        total = np.zeros(values.size)
        count = np.zeros(values.size)
        for lists, part in orderings:
            scores = np.asarray(self._compute(part), dtype=np.float64)
            np.add.at(total, lists, scores[:, 0])
            np.add.at(count, lists, 1.0)
        flat = values.reshape(-1)
        done = count > 0
        flat[done] = total[done] / count[done]
        return values

    def has_bounds(self) -> bool:
        """Whether :meth:`_bounds` is available for this measure (``AP_lo``...)."""
        return type(self)._bounds is not Measure._bounds

    def _bounds(self, tensor: EvalTensor, side: str) -> np.ndarray:
        """The (S, T) lowest (``side="lo"``) or highest (``"hi"``) value of the measure over
        every assignment of grades to the unknown documents: those retrieved without a
        judgment, and the qrels' rows without one (pooled but unjudged, or removed by a
        degrader); every other document stays non-relevant. Measures that have them
        override this (docs/methods.md §6.7)."""
        why = f" ({self.without_bounds})" if self.without_bounds else ""
        raise MeasureValueError(
            f"{self}: its bounds over the grades of unjudged documents are not available{why}"
        )

    def compute(self, tensor: EvalTensor) -> np.ndarray:
        """Per-topic scores, an (S, T) float array, for every run and topic of ``tensor``.

        A relevance level ``rel`` above 1 that is also above the highest grade of the qrels
        (``rel=2`` on binary judgments) makes every score 0: a warning says so, since it is
        usually a mistake (a reduced judgment set can also have lost its top grade). On
        real-valued grades any level above the highest grade is warned about (``rel=1`` when
        the grades stop at 0.8).

        Raises
        ------
        ValueError
            When a value is NaN or infinite (named by run and topic: a measure must score
            every topic, 0 where nothing is relevant), when the result is not (runs, topics),
            or when the computation itself fails (the measure is named).
        """
        rel = getattr(self, "rel", None)
        top = float(tensor.levels[-1])
        # On integer grades the default level 1 is never warned about (all-0 qrels are not a
        # mistake of the level); real-valued grades below 1 are: nothing reaches the level.
        if rel is not None and rel > (max(1.0, top) if tensor.integer_grades else top):
            warn(
                f"{self}: rel={_format_value(rel)} is above the highest grade in the qrels "
                f"({_format_value(top)}): no document is relevant, every score is 0"
            )
        # Every completion of the judgments leaves no document unjudged, so a condensed
        # measure's bounds are those of the measure on the full lists.
        view = tensor.condensed() if self.judged_only and self.bound is None else tensor
        # Over tied orderings only where one changes the list; the others are all trec_eval's.
        compute = self._expected if view.order_ties and not self.order_free else self._compute
        if self.bound is not None:
            if view.order_ties:
                raise MeasureValueError(
                    f"{self}: bounds are for lists in one order, not for the expected value "
                    "over tied orderings"
                )
            compute = functools.partial(self._bounds, side=self.bound)
        try:
            values = np.asarray(compute(view), dtype=np.float64)
        except MeasureError:
            raise  # a measure computed inside this one failed, and says which
        except (ValueError, TypeError) as err:
            # e.g. a plugin returning text: the message must say which measure it was
            kind = MeasureTypeError if isinstance(err, TypeError) else MeasureValueError
            raise kind(f"{self}: {err}") from err
        except MemoryError:
            raise  # not the measure's fault: the caller says which sizes to reduce
        except Exception as err:  # e.g. a plugin's bug: say which measure failed, and how
            raise MeasureValueError(f"{self}: {type(err).__name__}: {err}") from err
        if values.shape != (tensor.n_runs, tensor.n_topics):
            raise ValueError(
                f"{self}: computed an array of shape {values.shape}, expected "
                f"(runs, topics) = {(tensor.n_runs, tensor.n_topics)}"
            )
        bad = ~np.isfinite(values)
        if bad.any():
            s, t = np.argwhere(bad)[0]
            raise ValueError(
                f"{self}: the value for run {tensor.runs[s]!r}, topic "
                f"{tensor.topics[t]!r} is {values[s, t]} (not a finite number)"
            )
        return values

    __call__ = compute

    # ---------------------------------------------------------------- naming
    @classmethod
    def params(cls) -> list[dataclasses.Field]:
        """The parameter fields (judged_only, bound and the cutoff excluded)."""
        return [
            f
            for f in fields(cls)
            if f.name not in ("judged_only", "bound") and f.name != cls.cutoff_field
        ]

    def __str__(self) -> str:
        text = self.name + (f"_{self.bound}" if self.bound is not None else "")
        text += "'" if self.judged_only else ""
        shown = []
        for f in self.params():
            value = getattr(self, f.name)
            if value != _default(f):
                shown.append(f"{f.name}={_format_value(value)}")
        if shown:
            text += "(" + ",".join(shown) + ")"
        if self.cutoff_field is not None and getattr(self, self.cutoff_field) is not None:
            text += f"@{getattr(self, self.cutoff_field)}"
        return text

    def condensed(self) -> Measure:
        """The condensed-list (judged only) variant of this measure."""
        return dataclasses.replace(self, judged_only=True)


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        # One spelling everywhere: 1.0 prints as 1 (as users write it), 0.8 as 0.8.
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(float(value))
    if isinstance(value, str):
        return value if re.fullmatch(r"[A-Za-z_][\w.\-]*", value) else repr(value)
    if isinstance(value, tuple):
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            return "{" + ",".join(f"{_format_value(k)}:{_format_value(v)}" for k, v in value) + "}"
        inner = ",".join(_format_value(v) for v in value)
        return "(" + inner + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, Mapping):
        return (
            "{" + ",".join(f"{_format_value(k)}:{_format_value(v)}" for k, v in value.items()) + "}"
        )
    return repr(value)


# -------------------------------------------------------------------- registry
def register(cls: type[Measure] | None = None, *, aliases: tuple[str, ...] = ()):
    """Class decorator: make a :class:`Measure` subclass known by its ``name`` (and aliases)."""

    def wrap(klass: type[Measure]) -> type[Measure]:
        return _REGISTRY.add_class(
            klass, Measure, "name", "register", aliases, check=_check_constraints
        )

    return wrap if cls is None else wrap(cls)


def _check_constraints(klass: type[Measure]) -> None:
    check_declared(klass, klass.param_constraints(), fields(klass))


def registered() -> dict[str, type[Measure]]:
    """Every registered measure class by name (built-ins, plugins, entry points)."""
    from metaeval.measures.plugins import load_entry_points

    load_entry_points()
    return _REGISTRY.as_dict(key=str.lower)


# -------------------------------------------------------------------- parsing
_NAME_RE = re.compile(
    r"^\s*(?P<name>[A-Za-z_][\w.]*?)(?P<prime>')?\s*(?:\((?P<params>.*)\))?"
    r"\s*(?:@\s*(?P<cutoff>[^@()]+))?\s*$"
)


def _split_top_level(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


class _SpecialFloats(ast.NodeTransformer):
    """``nan`` and ``inf`` as the floats they name (as TOML and ``float()`` read them), so
    that ``levels=(0.5,nan)`` is refused for its item, not read as a word."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in ("nan", "inf"):
            return ast.copy_location(ast.Constant(math.nan if node.id == "nan" else math.inf), node)
        return node


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(_SpecialFloats().visit(ast.parse(text, mode="eval")))
    except (ValueError, SyntaxError, TypeError):  # TypeError: an unhashable key, {[1]:2}
        return text  # a bare word such as gain=exp


def split_call(text: str, *, what: str = "measure") -> tuple[str, dict[str, Any], str | None, bool]:
    """Split ``NAME['](key=value,...)@cutoff`` into its parts: the one parser of names.

    Measures (``nDCG(gain=exp)@10``, ``AP'``) and aggregates (``gmean(mode=shift)``) are
    written this way. Values are Python literals (``0.8``, ``(0.5,0.5)``, ``{1:1,2:3}``) or
    bare words (``exp``).

    Returns
    -------
    (name, params, cutoff, primed)
        ``params`` maps each key to its value in writing order; ``cutoff`` is the text after
        ``@`` or None; ``primed`` tells whether a ``'`` follows the name.

    Raises
    ------
    ValueError
        For text that is not of that shape; a :class:`~metaeval._validation.ParamError`
        carrying the key for a parameter not written ``key=value``, or given twice.
    """
    if not isinstance(text, str):
        raise TypeError(f"a {what} is a string, got {type(text).__name__}")
    match = _NAME_RE.match(text)
    if not match:
        hint = ""
        if what == "measure" and len(_split_top_level(text)) > 1:
            hint = "; give one measure at a time (-m AP -m P@10, or a list in Python)"
        raise ValueError(
            f"cannot parse {what} {text!r}: expected NAME['][(param=value,...)][@k]{hint}"
        )
    params: dict[str, Any] = {}
    for part in _split_top_level(match["params"] or ""):
        key, eq, value = (s.strip() for s in part.partition("="))
        if not eq or not key or not value:
            raise ParamError(
                key or None,
                "must be written name=value",
                message=f"{text!r}: parameter {part!r} must be written name=value",
            )
        if key in params:
            raise ParamError(
                key, "is given twice", message=f"{text!r}: parameter {key!r} is given twice"
            )
        params[key] = _literal(value)
    cutoff = None if match["cutoff"] is None else match["cutoff"].strip()
    return match["name"], params, cutoff, bool(match["prime"])


#: trec_eval's measures with a cutoff, as its ``-m`` option writes them (``P.10``) and as its
#: output names them (``P_10``): trec_eval name -> ours.
TREC_EVAL_CUTOFF = {
    "P": "P",
    "recall": "R",
    "success": "Success",
    "map_cut": "AP",
    "ndcg_cut": "nDCG",
    "unj": "Unjudged",
    "relative_P": "RelP",
}
#: trec_eval's output names of the measures without a cutoff.
TREC_EVAL_NAMES = {
    "AP": "map",
    "RR": "recip_rank",
    "nDCG": "ndcg",
    "Rprec": "Rprec",
    "Bpref": "bpref",
    "infAP": "infAP",
    "NumRet": "num_ret",
    "NumRel": "num_rel",
    "NumRelRet": "num_rel_ret",
    "YAAP": "yaap",
    "R": "set_recall",
    "SetP": "set_P",
    "SetRelP": "set_relative_P",
    "SetAP": "set_map",
    "SetF": "set_F",
    "Utility": "utility",
    "NumNonrelJudgedRet": "num_nonrel_judged_ret",
    "BinG": "binG",
    "G": "G",
    "nDCG_rel": "ndcg_rel",
    "RnDCG": "Rndcg",
}
#: trec_eval measures that are one of ours with other parameters than our defaults: trec_eval
#: name -> our measure. Parameters written after the trec_eval name override these
#: (``rbp(p=0.95)``, trec_eval's ``rbp.p=0.95``), and ``'`` selects the condensed list (``-J``).
TREC_EVAL_PRESETS = {
    "rbp": "RBP(p=0.9,normalise=topic)",
    "rbp_resid": "RBP_resid(p=0.9,tail_if_judged=False)",
    "11pt_avg": "IPrecAvg",
}
_TREC_EVAL_RE = re.compile(rf"({'|'.join(TREC_EVAL_CUTOFF)})[._]([0-9]+)")
_NUMBER = r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)"
#: trec_eval 10's spellings with parameters, as ``-m`` takes them and as its output prints them.
_TREC_EVAL_IPREC_RE = re.compile(rf"iprec_at_recall[._]({_NUMBER})")
_TREC_EVAL_11PT_RE = re.compile(rf"11pt_avg(?:[._]({_NUMBER}(?:,{_NUMBER})*))?")
_TREC_EVAL_RBP_RE = re.compile(rf"(rbp|rbp_resid)[._]p=({_NUMBER})")
_TREC_EVAL_RPREC_MULT_RE = re.compile(rf"Rprec_mult[._]({_NUMBER})")

_TREC_EVAL_SET_F_RE = re.compile(rf"set_F[._]({_NUMBER})")
_SIGNED = rf"[+-]?{_NUMBER}"
_TREC_EVAL_UTILITY_RE = re.compile(rf"utility[._]({_SIGNED}),({_SIGNED}),({_SIGNED}),({_SIGNED})")
#: ``G.1=3.5,2=9.0``: trec_eval's gains of the grades (of G, ndcg, ndcg_rel, Rndcg).
_TREC_EVAL_GAINS_RE = re.compile(
    rf"(G|ndcg|ndcg_rel|Rndcg)[._]({_SIGNED}={_SIGNED}(?:,{_SIGNED}={_SIGNED})*)"
)


def parse_measure(text: str | Measure) -> Measure:
    """Parse a measure name such as ``"nDCG(gain=exp)@10"`` or ``"AP'"`` into a Measure.

    trec_eval's names are understood too: the aliases of the measures (``map``,
    ``recip_rank``, ``ndcg``, ``bpref``, ``num_rel``...) and its measures with a cutoff,
    written ``P.10`` or ``P_10`` (``recall``, ``success``, ``map_cut``, ``ndcg_cut`` alike).

    Raises ValueError naming the unknown measure or parameter and listing what is allowed.
    An error about one parameter is a :class:`~metaeval._validation.ParamError` (the
    measure's own checks: a :class:`MeasureValueError` or :class:`MeasureTypeError`) whose
    ``param`` and ``index`` say which (``base`` for ``nDCG(base=1)@10``, the cutoff field for
    ``P@0``), after the text as written.
    """
    if isinstance(text, Measure):
        return text
    if not isinstance(text, str):
        raise TypeError(f"a measure is a string or a Measure, got {type(text).__name__}")
    trec = _trec_eval_spelling(text.strip())
    if trec is not None:
        return parse_measure(trec)
    name, params, cutoff, primed = split_call(text)
    bound = None
    side = re.fullmatch(r"(.+)_(lo|hi)", name)
    if side and (_REGISTRY.alias_of(side[1]) or side[1]) in _REGISTRY and name not in _REGISTRY:
        name, bound = side[1], side[2]
    if name in TREC_EVAL_PRESETS:
        name, preset, _, _ = split_call(TREC_EVAL_PRESETS[name])
        params = {**preset, **params}
    name = _REGISTRY.alias_of(name) or name
    if name not in _REGISTRY:
        # Plugins registered through entry points are imported when a name is not a known
        # measure (or when measures are listed), so built-in names parse without scanning
        # every installed package.
        registered()
        name = _REGISTRY.alias_of(name) or name
    reg = registered() if name not in _REGISTRY else _REGISTRY.as_dict()
    if name not in reg:
        if geometric_of(name):
            raise ValueError(
                f"{name!r} is the geometric mean over topics of {geometric_of(name)}, not a "
                f"score per topic: aggregate {geometric_of(name)} with agg='gmean', or ask "
                "metaeval.evaluate or metaeval evaluate for it"
            )
        if name in TREC_EVAL_LINES:
            printed = (
                "metaeval does not print it"
                if name == "relstring"
                else f"metaeval evaluate -m {name} prints it"
            )
            raise ValueError(f"{name!r} is a line of trec_eval's output, not a measure: {printed}")
        raise ValueError(
            f"unknown measure {name!r}{_suggestion(name, reg)}; known: {', '.join(reg)}"
        )
    cls = reg[name]
    kwargs: dict[str, Any] = {}
    allowed = {f.name for f in cls.params()}
    for key, value in params.items():
        if key not in allowed:
            listed = f"parameters: {sorted(allowed) or 'none'}"
            raise ParamError(
                key,
                f"is not a parameter of {cls.name}; {listed}",
                message=f"{text!r}: {cls.name} has no parameter {key!r}; {listed}",
            )
        kwargs[key] = _coerce(cls, key, value)
    if cutoff is not None:
        if cls.cutoff_field is None:
            raise ValueError(f"{text!r}: {cls.name} takes no @cutoff")
        if not re.fullmatch(r"[+-]?[0-9]+", cutoff):
            raise ParamError(
                cls.cutoff_field,
                f"must be an integer, got {cutoff!r}",
                message=f"{text!r}: cutoff {cutoff!r} is not an integer",
            )
        kwargs[cls.cutoff_field] = int(cutoff)  # its range: checked by the measure itself
    if primed:
        kwargs["judged_only"] = True
    if bound is not None:
        kwargs["bound"] = bound
    try:
        return cls(**kwargs)
    except ParamError as err:  # the measure's own checks: name the user's text, keep the rest
        raise type(err)(
            err.param, err.problem, index=err.index, owner=err.owner, message=f"{text!r}: {err}"
        ) from None
    except (TypeError, ValueError) as err:  # a plugin's own check, a plain ValueError
        raise type(err)(f"{text!r}: {err}") from None


_TREC_EVAL_CUTS = "5,10,15,20,30,100,200,500,1000"
#: trec_eval's measures with several values, each value its own output line, and the values
#: ``-m NAME`` gives them (``-m P`` is ``P_5`` to ``P_1000``).
TREC_EVAL_DEFAULT_VALUES = {
    "P": _TREC_EVAL_CUTS,
    "recall": _TREC_EVAL_CUTS,
    "iprec_at_recall": "0.00,0.10,0.20,0.30,0.40,0.50,0.60,0.70,0.80,0.90,1.00",
    "Rprec_mult": "0.20,0.40,0.60,0.80,1.00,1.20,1.40,1.60,1.80,2.00",
    "ndcg_cut": _TREC_EVAL_CUTS,
    "map_cut": _TREC_EVAL_CUTS,
    "relative_P": _TREC_EVAL_CUTS,
    "success": "1,5,10",
    "unj": "5,10,20",
}
_TREC_EVAL_VALUES_RE = re.compile(
    rf"({'|'.join(TREC_EVAL_DEFAULT_VALUES)})([._])({_NUMBER}(?:,{_NUMBER})+)"
)
#: trec_eval's output lines that are not measures: the run's name, the number of topics
#: evaluated, and a topic's grades at the first ten ranks (text, printed per topic only).
TREC_EVAL_LINES = ("runid", "num_q", "relstring")
#: trec_eval's sets of measures (``-m all_trec``), in the order trec_eval prints them.
TREC_EVAL_SETS = {
    "official": (
        *("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec"),
        *("bpref", "recip_rank", "iprec_at_recall", "P"),
    ),
    "all_trec": (
        *("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec"),
        *("bpref", "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP"),
        *("gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel"),
        *("Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P"),
        *("set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj"),
    ),
    "set": (
        *("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P"),
        *("set_recall", "set_relative_P", "set_map", "set_F"),
    ),
}
#: trec_eval's measures that are another measure's geometric mean over the topics (with
#: scores floored at 1e-5), printed on the ``all`` line only: trec_eval name -> ours.
TREC_EVAL_GEOMETRIC = {"gm_map": "AP", "gm_bpref": "Bpref"}


def refuse_costly_ties(measure: Measure, tensor, cells: np.ndarray) -> None:
    """Raise when an exact expected value over tied orderings would take more than
    :data:`TIED_MAXIMUM_CELLS` of work; ``cells`` is the work per list (run * T + topic)."""
    if cells.sum() <= TIED_MAXIMUM_CELLS:
        return
    s, t = divmod(int(np.argmax(cells)), tensor.n_topics)
    raise MeasureValueError(
        f"{measure}: its exact expected value over tied orderings would take "
        f"{cells.sum():.2g} steps, more than the {TIED_MAXIMUM_CELLS:.0e} allowed (run "
        f"{tensor.runs[s]!r}, topic {tensor.topics[t]!r} alone {cells.max():.2g}); "
        "order ties by trec_eval or input"
    )


def expand_measure_names(names, *, lines: bool = False):
    """trec_eval's ``-m`` arguments, one name per measure.

    ``P.5,10`` is ``P.5`` and ``P.10`` (``ndcg_cut.5,10,20``, ``iprec_at_recall.0.25,0.5``,
    ``Rprec_mult.0.5,1.5``...); a name of several values alone takes trec_eval's default ones
    (``P`` is ``P.5`` to ``P.1000``, ``success`` is ``success.1,5,10``); ``official``,
    ``all_trec`` and ``set`` are trec_eval's sets of measures, whose output lines that are not
    measures (``runid``, ``num_q``, ``relstring``) are kept with ``lines=True`` and left out
    otherwise. Every other name or Measure is kept as it is; duplicates are kept once.
    """
    out: list = []
    for name in names:
        text = name.strip() if isinstance(name, str) else None
        if text in TREC_EVAL_SETS:
            members = expand_measure_names(TREC_EVAL_SETS[text], lines=True)
            expanded = [n for n in members if lines or n not in TREC_EVAL_LINES]
        elif text in TREC_EVAL_DEFAULT_VALUES:
            expanded = [f"{text}.{v}" for v in TREC_EVAL_DEFAULT_VALUES[text].split(",")]
        elif text is not None and (many := _TREC_EVAL_VALUES_RE.fullmatch(text)):
            expanded = [f"{many[1]}{many[2]}{v}" for v in many[3].split(",")]
        else:
            expanded = [name]
        out += [n for n in expanded if n not in out]
    return out


def geometric_of(name) -> str | None:
    """The measure whose geometric mean over topics trec_eval's ``gm_map`` or ``gm_bpref``
    is (``"AP"``, ``"Bpref"``; a ``'`` and parameters carried over: ``gm_map'(rel=2)`` is
    ``AP'(rel=2)``), or None for any other name."""
    if not isinstance(name, str):
        return None
    match = re.fullmatch(r"(gm_map|gm_bpref)('?(?:\(.*\))?)", name.strip())
    return None if match is None else TREC_EVAL_GEOMETRIC[match[1]] + match[2]


def states_no_level(name: str | Measure) -> bool:
    """Whether ``name`` is a binary measure at the default relevance level that its name does
    not write (``P@10``, not ``P(rel=1)@10`` nor ``P(rel=0.5)@10``): on graded qrels, grade 1
    then counts as relevant without the user having said so."""
    if isinstance(name, Measure):
        return getattr(name, "rel", None) == 1
    try:
        measure = parse_measure(geometric_of(name) or name)
    except (ValueError, TypeError):  # named by whoever evaluates it
        return False
    return getattr(measure, "rel", None) == 1 and "rel=" not in name


def _trec_eval_spelling(text: str) -> str | None:
    """Our measure for one of trec_eval's spellings with a parameter (``P.10``, ``P_10``,
    ``iprec_at_recall_0.50``, ``11pt_avg.0.2,0.5``, ``rbp.p=0.95``, ``11pt_avg``), or None."""
    trec = _TREC_EVAL_RE.fullmatch(text)
    if trec:
        return f"{TREC_EVAL_CUTOFF[trec[1]]}@{trec[2]}"
    trec = _TREC_EVAL_IPREC_RE.fullmatch(text)
    if trec:
        return f"IPrec(recall={float(trec[1])!r})"
    trec = _TREC_EVAL_11PT_RE.fullmatch(text)
    if trec:
        if trec[1] is None:
            return TREC_EVAL_PRESETS["11pt_avg"]
        levels = ",".join(repr(float(x)) for x in trec[1].split(","))
        return f"IPrecAvg(levels=({levels},))"
    trec = _TREC_EVAL_RBP_RE.fullmatch(text)
    if trec:
        return f"{trec[1]}(p={float(trec[2])!r})"
    trec = _TREC_EVAL_RPREC_MULT_RE.fullmatch(text)
    if trec:
        return f"Rprec(mult={float(trec[1])!r})"
    trec = _TREC_EVAL_SET_F_RE.fullmatch(text)
    if trec:
        return f"SetF(beta={float(trec[1])!r})"
    trec = _TREC_EVAL_UTILITY_RE.fullmatch(text)
    if trec:
        a, b, c, d = (float(x) for x in trec.groups())
        return f"Utility(a={a!r},b={b!r},c={c!r},d={d!r})"
    trec = _TREC_EVAL_GAINS_RE.fullmatch(text)
    if trec:
        pairs = (pair.split("=") for pair in trec[2].split(","))
        gains = ",".join(f"{whole_as_int(float(g))!r}:{float(v)!r}" for g, v in pairs)
        return f"{trec[1]}(gains={{{gains}}})"
    return None


def trec_eval_name(measure: str | Measure) -> str:
    """The name trec_eval's output gives a measure (``P@10`` -> ``P_10``, ``AP`` -> ``map``,
    ``RBP(p=0.9,normalise=topic)`` -> ``rbp``, ``IPrec(recall=0.5)`` ->
    ``iprec_at_recall_0.50``), or our canonical name for a measure trec_eval does not compute
    this way."""
    if isinstance(measure, str) and (geometric_of(measure) or measure in TREC_EVAL_LINES):
        return re.match(r"\w+", measure.strip())[0]  # gm_map(rel=2): trec_eval prints gm_map
    if isinstance(measure, str) and (mult := _TREC_EVAL_RPREC_MULT_RE.fullmatch(measure.strip())):
        return f"Rprec_mult_{float(mult[1]):.2f}"  # Rprec_mult_1.00 is Rprec, named apart
    if isinstance(measure, str) and (typed := _typed_trec_eval_name(measure.strip())):
        return typed
    parsed = parse_measure(measure)
    name = str(parsed)
    if name in TREC_EVAL_NAMES:
        return TREC_EVAL_NAMES[name]
    presets = {canonical_name(ours): trec for trec, ours in TREC_EVAL_PRESETS.items()}
    if name in presets:
        return presets[name]
    if parsed.name == "IPrec" and parsed == type(parsed)(recall=parsed.recall):
        return f"iprec_at_recall_{parsed.recall:.2f}"
    if parsed.name == "Rprec" and parsed == type(parsed)(mult=parsed.mult):
        return f"Rprec_mult_{parsed.mult:.2f}"
    if parsed.name == "SetF" and parsed == type(parsed)(beta=parsed.beta):
        return f"set_F_{_format_value(parsed.beta)}"
    if parsed.name == "Utility" and parsed == type(parsed)(**_weights(parsed)):
        return "utility_" + ",".join(_format_value(w) for w in _weights(parsed).values())
    for trec, ours in TREC_EVAL_PRESETS.items():
        # trec_eval prints a measure given ``-m rbp.p=0.95`` as ``rbp_p=0.95``.
        preset = parse_measure(ours)
        if (
            type(preset) is type(parsed)
            and hasattr(preset, "p")
            and parsed == dataclasses.replace(preset, p=parsed.p)
        ):
            return f"{trec}_p={_format_value(parsed.p)}"
    base, at, k = name.partition("@")
    ours = {v: key for key, v in TREC_EVAL_CUTOFF.items()}
    if at and base in ours and k.isdigit():
        return f"{ours[base]}_{k}"
    return name


def _typed_trec_eval_name(text: str) -> str | None:
    """The output name of a trec_eval spelling whose parameters trec_eval prints as typed
    (``11pt_avg.0.2,0.5``, ``set_F.0.5``, ``utility.2,-1,0,0``, ``rbp.p=0.5``,
    ``G.1=3.5,2=9.0``): the separator after the measure's name becomes ``_``; else None."""
    for pattern, family in (
        (_TREC_EVAL_11PT_RE, "11pt_avg"),
        (_TREC_EVAL_SET_F_RE, "set_F"),
        (_TREC_EVAL_UTILITY_RE, "utility"),
        (_TREC_EVAL_RBP_RE, None),
        (_TREC_EVAL_GAINS_RE, None),
    ):
        match = pattern.fullmatch(text)
        name = family or (match[1] if match else "")
        if match and len(text) > len(name):  # 11pt_avg alone has no parameters
            return f"{name}_{text[len(name) + 1 :]}"
    return None


def _weights(utility: Measure) -> dict[str, float]:
    return {key: getattr(utility, key) for key in ("a", "b", "c", "d")}


def _suggestion(name: str, reg: dict) -> str:
    """ " (did you mean ...?)" for the nearest known name, alias or trec_eval name."""
    import difflib

    same_case = [n for n in reg if n.lower() == name.lower()]
    if same_case:
        return f" (did you mean {same_case[0]!r}?)"
    spellings = [
        *reg,
        *_REGISTRY.aliases(),
        *TREC_EVAL_PRESETS,
        "iprec_at_recall.0.5",
        *(f"{n}.10" for n in TREC_EVAL_CUTOFF),
    ]
    close = difflib.get_close_matches(name, spellings, n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def canonical_name(measure: str | Measure) -> str:
    """The one spelling of a measure: ``str(parse_measure(measure))``.

    ``"Q(gains={1:1,2:3},beta=1)"`` and ``"Q(beta=1.0,gains={2:3,1:1})"`` both give
    ``"Q(gains={1:1,2:3})"`` (default parameters are not written).
    """
    return str(parse_measure(measure))


class MeasureDict(dict):
    """A dict keyed by canonical measure name that finds any spelling of a measure.

    ``d["Q(gains={1:1,2:3},beta=1)"]`` finds the entry stored under ``"Q(gains={1:1,2:3})"``;
    a :class:`Measure` object works as a key too. Iteration yields the canonical names. A key
    that is not a measure name raises KeyError (with the parser's message) on lookup, and
    ``in`` answers False.
    """

    @staticmethod
    def _key(key) -> str:
        try:
            return canonical_name(key)
        except (TypeError, ValueError) as err:
            raise KeyError(f"{key!r} is not a measure name: {err}") from None

    def __init__(self, *args, **kwargs):
        super().__init__()
        self.update(*args, **kwargs)

    def __getitem__(self, key):
        return super().__getitem__(self._key(key))

    def __setitem__(self, key, value):
        super().__setitem__(self._key(key), value)

    def __delitem__(self, key):
        super().__delitem__(self._key(key))

    def __contains__(self, key) -> bool:
        try:
            return super().__contains__(self._key(key))
        except KeyError:
            return False

    def get(self, key, default=None):
        return self[key] if key in self else default  # noqa: SIM401 (dict.get skips __getitem__)

    def pop(self, key, *default):
        try:
            return super().pop(self._key(key), *default)
        except KeyError:
            if default:
                return default[0]
            raise

    def setdefault(self, key, default=None):
        return super().setdefault(self._key(key), default)

    def update(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def copy(self) -> MeasureDict:
        return MeasureDict(self)

    def __repr__(self) -> str:
        return f"MeasureDict({dict.__repr__(self)})"


@functools.cache
def field_types(cls: type) -> dict[str, Any]:
    """The declared types of a measure class's fields, resolved once per class: resolving
    compiles every annotation written as a string, which cost a second of the thousand name
    parses of ``-m all_trec -q``."""
    return typing.get_type_hints(cls)


def _coerce(cls: type[Measure], key: str, value: Any) -> Any:
    """Turn a parsed literal into the field's declared type (int 1 -> float 1.0, list -> tuple).

    Never raises: a value it cannot turn is passed on as it is, for the measure's checks to
    refuse naming the parameter."""
    hint = field_types(cls).get(key)
    origins = {typing.get_origin(hint)} | {typing.get_origin(a) or a for a in typing.get_args(hint)}
    origins.add(hint)
    if isinstance(value, list):
        value = tuple(value)
    if isinstance(value, Mapping):
        try:
            value = tuple(sorted(value.items()))
        except TypeError:  # keys that do not compare ({1:1,'a':2}): the measure names them
            value = tuple(value.items())
    if (
        float in origins
        and isinstance(value, int)
        and not isinstance(value, bool)
        and int not in origins
    ):
        value = float(value)
    if tuple in origins and isinstance(value, (int, float)) and not isinstance(value, bool):
        value = (value,)
    return value


def measure_doc(cls: type[Measure]) -> dict[str, Any]:
    """Name, parameters with defaults, formula and reference of a measure class."""
    params = {f.name: _default(f) for f in cls.params()}
    if cls.cutoff_field:
        params["@" + cls.cutoff_field] = "required" if cls.cutoff_required else None
    summary = (inspect.getdoc(cls) or "").split("\n\n")[0].replace("\n", " ")
    return {
        "name": cls.name,
        "summary": summary,
        "parameters": params,
        "formula": cls.formula,
        "reference": cls.reference,
    }


__all__ = [
    "Measure",
    "register",
    "registered",
    "parse_measure",
    "measure_doc",
    "field",
    "split_call",
    "canonical_name",
    "MeasureDict",
]
