"""Argument checks shared by the whole package, and its one random-number policy.

Every public function that draws random numbers takes a keyword-only ``rng`` and passes it
through :func:`as_generator`, as scipy does (SPEC 7): ``None`` draws fresh entropy from the
operating system (it never means a fixed seed), an ``int`` or a
:class:`numpy.random.SeedSequence` seeds a new generator, and a
:class:`numpy.random.Generator` is used as it is, so successive calls continue its stream.

The checks raise ``TypeError`` for a value of the wrong type and ``ValueError`` for a value out
of range, with a message that names the parameter and says what is allowed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Integral, Real

import numpy as np

RngLike = None | int | np.random.SeedSequence | np.random.Generator


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
            raise ValueError(f"{name} must be a non-negative integer seed, got {int(rng)}")
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"{name} must be None, an int seed, a numpy SeedSequence or a numpy "
        f"Generator, got {type(rng).__name__}"
    )


def fresh_seed() -> int:
    """A new random seed from operating-system entropy, small enough to type back (< 2**32)."""
    return int(np.random.SeedSequence().generate_state(1)[0])


def check_int(name: str, value, *, min: int | None = None, max: int | None = None) -> int:
    """``value`` as a Python int; bools, floats and strings are refused.

    ``min`` and ``max`` are inclusive bounds.
    """
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if min is not None and value < min:
        raise ValueError(f"{name} must be an integer >= {min}, got {value}")
    if max is not None and value > max:
        raise ValueError(f"{name} must be an integer <= {max}, got {value}")
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
) -> float:
    """``value`` as a finite float within the bounds (closed unless ``*_open``)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
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
        raise ValueError(f"{name} must be in {interval}, got {value!r}")
    return value


def check_probability(
    name: str, value, *, open_low: bool = False, open_high: bool = False
) -> float:
    """A probability: a float in [0, 1] (ends excluded on request)."""
    return check_real(name, value, min=0.0, max=1.0, min_open=open_low, max_open=open_high)


def check_alpha(alpha, name: str = "alpha") -> float:
    """A significance level in (0, 1)."""
    return check_probability(name, alpha, open_low=True, open_high=True)


def check_rate(name: str, value) -> float:
    """A percentage of judgments kept, in (0, 100]."""
    return check_real(name, value, min=0.0, max=100.0, min_open=True)


def check_rates(name: str, values) -> tuple[float | int, ...]:
    """A non-empty sequence of distinct percentages in (0, 100], order kept.

    A single number is read as a one-element sequence. Integer percentages stay ints, so that
    they print as the user wrote them.
    """
    if isinstance(values, Real) and not isinstance(values, bool):
        values = (values,)
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of percentages in (0, 100], got {values!r}")
    values = tuple(values)
    if not values:
        raise ValueError(f"{name} must not be empty")
    out = []
    for i, v in enumerate(values):
        check_rate(f"{name}[{i}]", v)
        out.append(int(v) if isinstance(v, Integral) or float(v).is_integer() else float(v))
    if len(set(out)) != len(out):
        raise ValueError(f"{name} must not repeat a value, got {list(values)}")
    return tuple(out)


def check_choice(name: str, value, choices: Iterable) -> object:
    """``value`` if it is one of ``choices``, else a ValueError listing them."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


__all__ = [
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
