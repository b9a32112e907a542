"""Declared parameter constraints, in the spirit of scikit-learn's ``_param_validation``.

A class whose fields are parameters (a degrader, a study criterion, a world's parameters, a
measure) declares what each may be, beside the fields::

    _constraints: ClassVar[dict] = {
        "rates": Sequence(Interval(Real, 0, 100, closed="right"), scalar=(Real,)),
        "B": Optional(Interval(Integral, 1)),
        "method": OneOf("bootstrap", "tukey"),
    }

and its base class checks them once, with :func:`validate_params`, before any check of its own
(relations between parameters, which stay as code). A constraint

* checks a value and raises :class:`~metaeval._validation.ParamError` (or its ``TypeError``
  flavour) carrying the parameter and, for an item of a list, its index;
* says what it allows (:meth:`Constraint.describe`: "an integer >= 1"), for messages and docs;
* gives values it refuses (:meth:`Constraint.invalid_examples`) and values it accepts
  (:meth:`Constraint.valid_examples`), from which the tests of every declared parameter are
  generated (``tests/test_param_constraints.py``): no bad-value test is written by hand.

A plugin class that declares nothing is checked by its own ``_validate`` alone, as before.
"""

from __future__ import annotations

import importlib
import math
from numbers import Integral, Real
from typing import Any, NamedTuple

import numpy as np

from metaeval._validation import (
    ParamError,
    ParamTypeError,
    check_choice,
    check_int,
    check_real,
    whole_as_int,
)


class Bad(NamedTuple):
    """A value a constraint refuses, and the index its error names (None: the parameter)."""

    value: Any
    index: int | None = None


class Constraint:
    """What a parameter may be. Subclasses implement the four methods."""

    def check(self, name: str, value, *, index: int | None = None):
        """``value`` if allowed (lists come back as tuples), else a ParamError naming
        ``name`` (and ``index``, when ``value`` is an item of the list ``name``)."""
        raise NotImplementedError

    def describe(self) -> str:
        """What is allowed, as a noun phrase: "an integer >= 1"."""
        raise NotImplementedError

    def invalid_examples(self) -> list[Bad]:
        """Values refused, each with the index its error names."""
        raise NotImplementedError

    def valid_examples(self) -> list:
        """At least one value allowed (two distinct ones where there are two)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.describe()}>"


def _finite(bound):
    # an infinite bound is no bound for check_real (infinity itself was handled before)
    return None if bound is None or math.isinf(bound) else bound


def _kind_name(kind: type) -> str:
    return "integer" if kind is Integral else "number"


class Interval(Constraint):
    """An integer (``kind=Integral``) or a number (``kind=Real``) between two bounds.

    Parameters
    ----------
    kind : {numbers.Integral, numbers.Real}
        Integers refuse floats and bools; numbers refuse bools, strings and NaN.
    low, high : number, optional
        The bounds; None is unbounded. A closed infinite bound (``high=math.inf``,
        ``closed="right"``) allows that infinity; otherwise a number must be finite.
    closed : {"both", "left", "right", "neither"}
        Which bounds are included.
    """

    def __init__(self, kind: type, low=None, high=None, *, closed: str = "both"):
        if kind not in (Integral, Real):
            raise ValueError(f"kind must be numbers.Integral or numbers.Real, got {kind!r}")
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"closed must be both, left, right or neither, got {closed!r}")
        self.kind, self.low, self.high = kind, low, high
        self.low_open = closed in ("right", "neither")
        self.high_open = closed in ("left", "neither")

    def _int_bounds(self) -> tuple[int | None, int | None]:
        low = (
            None
            if self.low is None
            else int(math.floor(self.low))
            + (1 if self.low_open or self.low != math.floor(self.low) else 0)
        )
        high = (
            None
            if self.high is None
            else int(math.ceil(self.high))
            - (1 if self.high_open or self.high != math.ceil(self.high) else 0)
        )
        return low, high

    def _allows_inf(self, value: float) -> bool:
        return (value == math.inf and self.high == math.inf and not self.high_open) or (
            value == -math.inf and self.low == -math.inf and not self.low_open
        )

    def check(self, name, value, *, index=None):
        if self.kind is Integral:
            low, high = self._int_bounds()
            check_int(name, value, min=low, max=high, index=index)
            return value
        if isinstance(value, Real) and not isinstance(value, bool) and self._allows_inf(value):
            return value
        check_real(
            name,
            value,
            min=_finite(self.low),
            max=_finite(self.high),
            min_open=self.low_open,
            max_open=self.high_open,
            index=index,
        )
        return value

    def describe(self) -> str:
        what = f"an {_kind_name(self.kind)}" if self.kind is Integral else "a number"
        if self.kind is Integral:
            low, high = self._int_bounds()
            if low is not None and high is not None:
                return f"{what} in [{low}, {high}]"
            if low is not None:
                return f"{what} >= {low}"
            if high is not None:
                return f"{what} <= {high}"
            return what
        if self.low is None and self.high is None:
            return "a finite number"
        if self.high is None or (self.high == math.inf and self.high_open):
            return f"{what} {'>' if self.low_open else '>='} {self.low:g}"
        if self.low is None or (self.low == -math.inf and self.low_open):
            return f"{what} {'<' if self.high_open else '<='} {self.high:g}"
        return (
            f"{what} in {'(' if self.low_open else '['}{self.low:g}, "
            f"{self.high:g}{')' if self.high_open else ']'}"
        )

    def invalid_examples(self):
        out = []
        if self.kind is Integral:
            low, high = self._int_bounds()
            if low is not None:
                out.append(Bad(low - 1))
            if high is not None:
                out.append(Bad(high + 1))
            out += [Bad(1.5), Bad(True), Bad("1")]
            return out
        if self.low is not None and not math.isinf(self.low):
            out.append(Bad(self.low if self.low_open else self.low - 1))
        if self.high is not None and not math.isinf(self.high):
            out.append(Bad(self.high if self.high_open else self.high + 1))
        if not (self.high == math.inf and not self.high_open):
            out.append(Bad(math.inf))
        out += [Bad(math.nan), Bad("0.5")]
        return out

    def valid_examples(self):
        if self.kind is Integral:
            low, high = self._int_bounds()
            start = low if low is not None else (high - 1 if high is not None else 1)
            return [v for v in (start, start + 1) if high is None or v <= high]
        low = self.low if self.low is not None and not math.isinf(self.low) else None
        high = self.high if self.high is not None and not math.isinf(self.high) else None
        if low is not None and high is not None:
            return [low + (high - low) / 4, low + (high - low) / 2]
        if low is not None:
            return [low + 0.5, low + 1.5]
        if high is not None:
            return [high - 1.5, high - 0.5]
        return [0.5, 1.5]


class OneOf(Constraint):
    """One of a few values (the names of methods, say).

    ``OneOf("bootstrap", "tukey")``, or ``OneOf(lazy="metaeval.meta.robustness:CORRELATIONS")``
    for options defined in a module that should not be imported until a value is checked.
    """

    def __init__(self, *options, lazy: str | None = None):
        if bool(options) == bool(lazy):
            raise ValueError("give the options, or lazy='module:NAME', not both")
        self._options, self._lazy = tuple(options), lazy

    @property
    def options(self) -> tuple:
        if self._lazy is not None:
            module, attr = self._lazy.split(":")
            return tuple(getattr(importlib.import_module(module), attr))
        return self._options

    def check(self, name, value, *, index=None):
        check_choice(name, value, self.options, index=index)
        return value

    def describe(self):
        return "one of " + ", ".join(map(repr, self.options))

    def invalid_examples(self):
        return [Bad("not_an_option"), Bad(1)]

    def valid_examples(self):
        return list(self.options)


class Boolean(Constraint):
    """True or false (not 1, not "yes")."""

    def check(self, name, value, *, index=None):
        if not isinstance(value, (bool, np.bool_)):
            raise ParamTypeError(name, f"must be true or false, got {value!r}", index=index)
        return value

    def describe(self):
        return "true or false"

    def invalid_examples(self):
        return [Bad(1), Bad("yes")]

    def valid_examples(self):
        return [True, False]


class Optional(Constraint):
    """None, or a value ``inner`` allows."""

    def __init__(self, inner: Constraint):
        self.inner = inner

    def check(self, name, value, *, index=None):
        return None if value is None else self.inner.check(name, value, index=index)

    def describe(self):
        return f"None or {self.inner.describe()}"

    def invalid_examples(self):
        return self.inner.invalid_examples()

    def valid_examples(self):
        return self.inner.valid_examples()


class Sequence(Constraint):
    """A list (or tuple, or 1-D array) of values, each allowed by ``item``; a tuple comes back.

    Parameters
    ----------
    item : Constraint, optional
        What every item may be; None: anything.
    scalar : tuple of type
        A lone value of these types is read as a one-element list (a degrader's ``rates=10``);
        empty: a lone value is refused ("must be a list").
    non_empty : bool
    unique : bool
        No value may repeat.
    order : {None, "increasing", "non-decreasing"}
    min_len : int, optional
    convert : callable, optional
        Applied to every item once checked (percentages that are whole numbers become ints,
        so that they print as the user wrote them).
    """

    def __init__(
        self,
        item: Constraint | None = None,
        *,
        scalar: tuple = (),
        non_empty: bool = True,
        unique: bool = True,
        order: str | None = None,
        min_len: int | None = None,
        convert=None,
    ):
        if order not in (None, "increasing", "non-decreasing"):
            raise ValueError(f"order must be None, increasing or non-decreasing, got {order!r}")
        self.item, self.scalar, self.non_empty, self.unique = item, scalar, non_empty, unique
        self.order, self.min_len, self.convert = order, min_len, convert

    def check(self, name, value, *, index=None):
        if self.scalar and isinstance(value, self.scalar) and not isinstance(value, bool):
            value = (value,)
        if isinstance(value, np.ndarray) and value.ndim == 1:
            value = value.tolist()
        if not isinstance(value, (list, tuple)):
            raise ParamTypeError(name, f"must be a list, got {value!r}", index=index)
        if not value and self.non_empty:
            raise ParamError(name, "must not be empty", index=index)
        if self.min_len is not None and len(value) < self.min_len:
            raise ParamError(
                name, f"must hold at least {self.min_len} values, got {list(value)}", index=index
            )
        out = []
        for i, v in enumerate(value):
            if self.item is not None:
                v = self.item.check(name, v, index=i)
            out.append(self.convert(v) if self.convert is not None else v)
        if self.unique and len(set(out)) != len(out):
            raise ParamError(name, f"must not repeat a value, got {list(value)}", index=index)
        if self.order is not None and len(out) > 1:
            steps = np.diff(np.asarray(out, dtype=float))
            if np.any(steps <= 0 if self.order == "increasing" else steps < 0):
                raise ParamError(name, f"must be {self.order}, got {list(value)}", index=index)
        return tuple(out)

    def describe(self):
        what = "a list" if self.item is None else f"a list of {self.item.describe()}"
        rules = [
            r
            for r, on in (
                ("not empty", self.non_empty),
                ("without repeats", self.unique),
                (self.order or "", self.order is not None),
                (f"at least {self.min_len} long", self.min_len is not None),
            )
            if on
        ]
        return what + (f" ({', '.join(rules)})" if rules else "")

    def _valid_items(self) -> list:
        if self.item is None:
            return ["a", "b"]
        good = self.item.valid_examples()
        return sorted(good) if self.order is not None else good

    def invalid_examples(self):
        good = self._valid_items()
        out = []
        if self.item is not None:
            # the bad item second: its error must name index 1, not the list
            out += [Bad([good[0], b.value], 1) for b in self.item.invalid_examples()]
        if self.non_empty:
            out.append(Bad([]))
        if not self.scalar or not isinstance(good[0], self.scalar):
            out.append(Bad(good[0]))
        if self.unique:
            out.append(Bad([good[0], good[0]]))
        if self.min_len is not None and self.min_len > 1:
            out.append(Bad(good[:1] * (self.min_len - 1)))
        if self.order is not None and len(good) > 1 and good[0] != good[-1]:
            out.append(Bad([good[-1], good[0]]))
        return out

    def valid_examples(self):
        good = self._valid_items()
        n = max(self.min_len or 1, 1)
        first = (good * n)[:n] if not self.unique else good[:n]
        return [list(first), list(good)] if len(good) >= n else [list(first)]


class Described(Constraint):
    """What ``inner`` allows, with its refusals said in words: ``must be <what>, got <value>``.

    For a constraint on one value (not a list) whose own wording is terser than its reader
    needs: ``Described(Interval(Real, 1, closed="neither"))`` refuses 1 with "must be a number
    > 1, got 1" rather than "must be in (1, inf), got 1.0". The error keeps its class (a
    wrong type stays a :class:`ParamTypeError`).

    Parameters
    ----------
    inner : Constraint
    what : str, optional
        What is allowed, as a noun phrase ("a recall level in [0, 1]"); default
        ``inner.describe()``.
    """

    def __init__(self, inner: Constraint, what: str | None = None):
        self.inner, self.what = inner, what

    def check(self, name, value, *, index=None):
        try:
            return self.inner.check(name, value, index=index)
        except ParamError as err:
            shown = value.item() if isinstance(value, np.generic) else value
            raise type(err)(
                name, f"must be {self.describe()}, got {shown!r}", index=index
            ) from None

    def describe(self):
        return self.what if self.what is not None else self.inner.describe()

    def invalid_examples(self):
        return self.inner.invalid_examples()

    def valid_examples(self):
        return self.inner.valid_examples()


class Level(Described):
    """A relevance level: a number > 0 (a grade is relevant when it is >= the level).

    Grades may be real-valued (0.5, 1.33), so a level may be too; a whole number comes back as
    an int (2.0 -> 2), so that a measure's name and its equality do not depend on how the
    level was written (``P(rel=2)@10`` either way).
    """

    def __init__(self):
        super().__init__(Interval(Real, 0, closed="neither"), "a relevance level, a number > 0")

    def check(self, name, value, *, index=None):
        return whole_as_int(super().check(name, value, index=index))

    def invalid_examples(self):
        return [*super().invalid_examples(), Bad(-1), Bad(True)]

    def valid_examples(self):
        return [0.5, 2, 1.25]


class Distribution(Sequence):
    """A probability distribution: a list of non-negative numbers summing to 1 (to ``tol``);
    a lone number is a list of one. A tuple comes back.

    Parameters
    ----------
    tol : float
        How far from 1 the sum may be (rounding in the numbers as written: 1/3 three times).
    """

    def __init__(self, *, tol: float = 1e-9):
        super().__init__(
            Described(Interval(Real, 0), "a non-negative number"), scalar=(Real,), unique=False
        )
        self.tol = tol

    def check(self, name, value, *, index=None):
        out = super().check(name, value, index=index)
        total = math.fsum(out)
        if abs(total - 1.0) > self.tol:
            raise ParamError(
                name, f"must sum to 1, got {list(out)} summing to {total:g}", index=index
            )
        return out

    def describe(self):
        return "a list of non-negative numbers summing to 1"

    def invalid_examples(self):
        return [*super().invalid_examples(), Bad([0.5, 0.6]), Bad([0.25])]

    def valid_examples(self):
        return [[1.0], [0.25, 0.75]]


def validate_params(obj, constraints: dict[str, Constraint]) -> None:
    """Check every declared parameter of the dataclass instance ``obj`` against its
    constraint, in declaration order, and store the checked value (lists become tuples) on
    the frozen instance. Raises the first :class:`ParamError`."""
    for name, constraint in constraints.items():
        value = getattr(obj, name)
        checked = constraint.check(name, value)
        if checked is not value:
            object.__setattr__(obj, name, checked)


def check_declared(cls: type, constraints: dict[str, Constraint], fields) -> None:
    """At registration: every constrained name must be a field of ``cls``, and every
    constraint a :class:`Constraint` (a typo is found when the class is defined, not when a
    value happens to be checked)."""
    names = {f.name for f in fields}
    for name, constraint in constraints.items():
        if name not in names:
            raise TypeError(f"{cls.__name__}._constraints names {name!r}, which is not a field")
        if not isinstance(constraint, Constraint):
            raise TypeError(
                f"{cls.__name__}._constraints[{name!r}] must be a Constraint, got {constraint!r}"
            )


__all__ = [
    "Bad",
    "Boolean",
    "Constraint",
    "Described",
    "Distribution",
    "Interval",
    "Level",
    "OneOf",
    "Optional",
    "ParamError",
    "ParamTypeError",
    "Sequence",
    "check_declared",
    "validate_params",
]
