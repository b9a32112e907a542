"""Argument checks shared by the whole package, and its one random-number policy.

Every public function that draws random numbers takes a keyword-only ``rng`` and passes it
through :func:`as_generator`, as scipy does (SPEC 7): ``None`` draws fresh entropy from the
operating system (it never means a fixed seed), an ``int`` or a
:class:`numpy.random.SeedSequence` seeds a new generator, and a
:class:`numpy.random.Generator` is used as it is, so successive calls continue its stream.

The checks raise :class:`ParamTypeError` (a ``TypeError``) for a value of the wrong type and
:class:`ParamError` (a ``ValueError``) for a value out of range, with a message that names the
parameter and says what is allowed; the error also carries the parameter (``param``, and
``index`` for an item of a list), so that a caller pointing at it (a study file's key, a
command-line option) never reads the message. The declarative constraints built on these checks
are in :mod:`metaeval._constraints`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Integral, Real

import numpy as np

RngLike = None | int | np.random.SeedSequence | np.random.Generator


class ParamError(ValueError):
    """A parameter's value is not allowed; the message names it, the attributes carry it.

    Parameters
    ----------
    param : str
        The parameter's name (``rates``).
    problem : str
        What is wrong, without the name (``must be in (0, 100], got 120``).
    index : int, optional
        The position of the faulty item when the parameter is a list (``rates[1]``).
    owner : type, optional
        The class whose parameter it is (a degrader, a criterion), when it is known.
    message : str, optional
        The whole message, when it is not ``"<param>[<index>] <problem>"`` (an unknown
        parameter's error lists the known ones).

    Attributes
    ----------
    param, problem, index, owner
        As given; ``where`` is ``param`` with its index (``rates[1]``).

    Notes
    -----
    ``ParamError(message)`` with one argument, as code that re-raises an error with a longer
    message does (``type(err)(f"{text!r}: {err}")``), is an error about no parameter in
    particular: ``param`` is None and the message is the problem.
    """

    def __init__(
        self,
        param: str | None,
        problem: str | None = None,
        *,
        index: int | None = None,
        owner: type | None = None,
        message: str | None = None,
    ):
        if problem is None:  # the one-argument form: a message, no parameter
            param, problem, message = None, str(param), str(param)
        self.param = param
        self.problem = problem
        self.index = index
        self.owner = owner
        super().__init__(message if message is not None else f"{self.where} {problem}")

    @property
    def where(self) -> str:
        """The parameter and, for an item of a list, its index: ``rates[1]``."""
        if self.param is None:
            return ""
        return self.param if self.index is None else f"{self.param}[{self.index}]"

    def __reduce__(self):
        # Raised in a worker process, it travels back pickled: rebuild it from its fields
        # (the owner class is left out, as a plugin's class may not be importable there).
        return _rebuild_param_error, (type(self), self.param, self.problem, self.index, str(self))


class ParamTypeError(ParamError, TypeError):
    """A parameter's value has the wrong type (a ``TypeError`` as well as a
    :class:`ParamError`)."""


def _rebuild_param_error(cls, param, problem, index, message):
    return cls(param, problem, index=index, message=message)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun, plural unless n is 1: "1 run", "37 runs", "2 criteria" (``plural``
    when the plural is not the noun and an s)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def shown_ids(ids, n: int = 5) -> str:
    """The first ``n`` of ``ids`` for a message, "..." when there are more."""
    ids = [str(i) for i in ids]
    return ", ".join(ids[:n]) + (", ..." if len(ids) > n else "")


def as_generator(rng: RngLike, name: str = "rng") -> np.random.Generator:
    """A :class:`numpy.random.Generator` from ``rng`` (None, int >= 0, SeedSequence or Generator).

    ``None`` seeds from fresh operating-system entropy: results then differ from call to call.
    A Generator is returned unchanged (not copied), so its stream continues.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, Integral) and not isinstance(rng, bool):
        if int(rng) < 0:
            raise ParamError(name, f"must be a non-negative integer seed, got {int(rng)}")
        return np.random.default_rng(int(rng))
    raise ParamTypeError(
        name,
        "must be None, an int seed, a numpy SeedSequence or a numpy "
        f"Generator, got {type(rng).__name__}",
    )


def fresh_seed() -> int:
    """A new random seed from operating-system entropy, small enough to type back (< 2**32)."""
    return int(np.random.SeedSequence().generate_state(1)[0])


def check_int(
    name: str, value, *, min: int | None = None, max: int | None = None, index: int | None = None
) -> int:
    """``value`` as a Python int; bools, floats and strings are refused.

    ``min`` and ``max`` are inclusive bounds; ``index`` is the item's position when ``value``
    is an item of the list ``name``.
    """
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ParamTypeError(name, f"must be an integer, got {value!r}", index=index)
    value = int(value)
    if min is not None and value < min:
        raise ParamError(name, f"must be an integer >= {min}, got {value}", index=index)
    if max is not None and value > max:
        raise ParamError(name, f"must be an integer <= {max}, got {value}", index=index)
    return value


def check_optional_int(
    name: str, value, *, min: int | None = None, max: int | None = None
) -> int | None:
    """As :func:`check_int`, with ``None`` allowed and returned."""
    return None if value is None else check_int(name, value, min=min, max=max)


def check_real(
    name: str,
    value,
    *,
    min: float | None = None,
    max: float | None = None,
    min_open: bool = False,
    max_open: bool = False,
    index: int | None = None,
) -> float:
    """``value`` as a finite float within the bounds (closed unless ``*_open``)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ParamTypeError(name, f"must be a number, got {value!r}", index=index)
    value = float(value)
    if not math.isfinite(value):
        raise ParamError(name, f"must be a finite number, got {value!r}", index=index)
    low_bad = min is not None and (value <= min if min_open else value < min)
    high_bad = max is not None and (value >= max if max_open else value > max)
    if low_bad or high_bad:
        lo = "-inf" if min is None else f"{min:g}"
        hi = "inf" if max is None else f"{max:g}"
        interval = (
            ("(" if min_open or min is None else "[")
            + f"{lo}, {hi}"
            + (")" if max_open or max is None else "]")
        )
        raise ParamError(name, f"must be in {interval}, got {value!r}", index=index)
    return value


def check_probability(
    name: str, value, *, open_low: bool = False, open_high: bool = False
) -> float:
    """A probability: a float in [0, 1] (ends excluded on request)."""
    return check_real(name, value, min=0.0, max=1.0, min_open=open_low, max_open=open_high)


def check_alpha(alpha, name: str = "alpha") -> float:
    """A significance level in (0, 1)."""
    return check_probability(name, alpha, open_low=True, open_high=True)


def check_rate(name: str, value, *, index: int | None = None) -> float:
    """A percentage of judgments kept, in (0, 100]."""
    return check_real(name, value, min=0.0, max=100.0, min_open=True, index=index)


def whole_as_int(value) -> int | float:
    """A number as users write it: a whole number as an int (2.0 -> 2), another as a float,
    so that names, printed levels and equality do not depend on how the number was written."""
    return int(value) if isinstance(value, Integral) or float(value).is_integer() else float(value)


def check_rates(name: str, values) -> tuple[float | int, ...]:
    """A non-empty sequence of distinct percentages in (0, 100], order kept.

    A single number is read as a one-element sequence. Integer percentages stay ints, so that
    they print as the user wrote them.
    """
    if isinstance(values, Real) and not isinstance(values, bool):
        values = (values,)
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise ParamTypeError(name, f"must be a sequence of percentages in (0, 100], got {values!r}")
    values = tuple(values)
    if not values:
        raise ParamError(name, "must not be empty")
    out = []
    for i, v in enumerate(values):
        check_rate(name, v, index=i)
        out.append(whole_as_int(v))
    if len(set(out)) != len(out):
        raise ParamError(name, f"must not repeat a value, got {list(values)}")
    return tuple(out)


def check_choice(name: str, value, choices: Iterable, *, index: int | None = None) -> object:
    """``value`` if it is one of ``choices``, else a :class:`ParamError` listing them."""
    choices = tuple(choices)
    if value not in choices:
        raise ParamError(
            name, f"must be one of {', '.join(map(repr, choices))}; got {value!r}", index=index
        )
    return value


__all__ = [
    "ParamError",
    "ParamTypeError",
    "RngLike",
    "as_generator",
    "fresh_seed",
    "check_int",
    "check_optional_int",
    "check_real",
    "check_probability",
    "check_alpha",
    "check_rate",
    "check_rates",
    "check_choice",
]
