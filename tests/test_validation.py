"""The shared argument checks and the one rng policy."""

from pathlib import Path

import numpy as np
import pytest

from metaeval._validation import (
    as_generator,
    check_alpha,
    check_int,
    check_probability,
    check_rates,
    check_real,
    fresh_seed,
)


def test_rng_policy_accepts_the_four_kinds():
    a = as_generator(7).random(3)
    assert np.array_equal(a, np.random.default_rng(7).random(3))
    ss = np.random.SeedSequence(7)
    assert np.array_equal(as_generator(ss).random(3), a)
    g = np.random.default_rng(1)
    assert as_generator(g) is g


def test_rng_none_is_fresh_entropy_not_seed_zero():
    zero = np.random.default_rng(0).random(4)
    draws = [as_generator(None).random(4) for _ in range(3)]
    assert not any(np.array_equal(d, zero) for d in draws)
    assert not np.array_equal(draws[0], draws[1])


@pytest.mark.parametrize(
    "bad, exc",
    [
        (-1, ValueError),
        (1.5, TypeError),
        ("3", TypeError),
        (True, TypeError),
        (np.random.RandomState(0), TypeError),
    ],
)
def test_rng_rejects(bad, exc):
    with pytest.raises(exc, match="rng"):
        as_generator(bad)


def test_fresh_seed_is_a_small_int():
    s = fresh_seed()
    assert isinstance(s, int) and 0 <= s < 2**32


def test_checks_name_the_parameter():
    assert check_int("B", np.int64(5), min=1) == 5
    with pytest.raises(ValueError, match="B must be an integer >= 1, got 0"):
        check_int("B", 0, min=1)
    with pytest.raises(TypeError, match="B must be an integer"):
        check_int("B", 2.0)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        check_alpha(1.0)
    with pytest.raises(ValueError, match="finite"):
        check_real("beta", float("inf"))
    assert check_probability("p", 1) == 1.0
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\)"):
        check_probability("p", 1, open_high=True)


def test_check_rates():
    assert check_rates("levels", [90, 70.0, 12.5]) == (90, 70, 12.5)
    assert check_rates("levels", 10) == (10,)
    with pytest.raises(ValueError, match=r"levels\[1\] must be in \(0, 100\]"):
        check_rates("levels", [10, 120])
    with pytest.raises(ValueError, match="repeat"):
        check_rates("levels", [10, 10])
    with pytest.raises(ValueError, match="empty"):
        check_rates("levels", [])


def test_warn_points_at_the_callers_line():
    import warnings

    from metaeval._warnings import warn

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn("look here")  # this line
    assert caught[0].filename == __file__
    lines = Path(__file__).read_text().splitlines()
    assert 'warn("look here")' in lines[caught[0].lineno - 1]
