"""Tests for metaeval.meta.inconsistency (Sakai & Kando 2008, Table 5)."""

import numpy as np
import pandas as pd
import pytest

from metaeval.meta.inconsistency import significance_inconsistency


def _world():
    # Four systems on 30 topics. Full judgments: a < b < c clearly, d = a exactly.
    rng = np.random.default_rng(0)
    base = rng.random(30) * 0.5
    noise = rng.normal(0, 0.02, (4, 30))
    full = np.vstack([base, base + 0.2, base + 0.4, base]) + noise
    full[3] = full[0]
    return full


def test_identical_judgments_are_consistent():
    full = _world()
    res = significance_inconsistency(full, full.copy(), B=300, rng=1)
    assert res.n_absent == res.n_reversed == res.n_missed == 0
    assert res.n_consistent == res.n_significant_full == res.n_significant_reduced == 5
    assert set(res.pairs["status"]) == {"consistent", "neither"}
    assert res.pairs.set_index(["system_a", "system_b"]).loc[(0, 3), "status"] == "neither"


def test_absent_reversed_and_missed():
    full = _world()
    reduced = full.copy()
    reduced[3] = full[0] + 0.3  # d now clearly above a: significant only under reduced -> absent
    reduced[[1, 2]] = reduced[[2, 1]]  # b and c swap places: significant both ways -> reversed
    reduced[0] = reduced[1] + 1e-3 * np.random.default_rng(1).normal(size=30)
    res = significance_inconsistency(full, reduced, B=500, rng=2)
    st = res.pairs.set_index(["system_a", "system_b"])["status"]
    assert st[(0, 3)] == "absent"
    assert st[(1, 2)] == "reversed"
    assert res.n_absent >= 1 and res.n_reversed >= 1
    # counts agree with the table
    for name in ("consistent", "absent", "reversed", "missed"):
        assert getattr(res, f"n_{name}") == int((res.pairs["status"] == name).sum())
    assert res.inconsistent == res.n_absent + res.n_reversed
    assert res.n_significant_reduced == res.n_consistent + res.n_absent + res.n_reversed
    assert res.n_significant_full == res.n_consistent + res.n_reversed + res.n_missed


def test_common_random_numbers_and_seeding():
    full = _world()
    reduced = full + np.random.default_rng(3).normal(0, 0.05, full.shape)
    res = significance_inconsistency(full, reduced, B=200, rng=4)
    np.testing.assert_array_equal(res.full.bootstrap_indices, res.reduced.bootstrap_indices)
    again = significance_inconsistency(full, reduced, B=200, rng=4)
    pd.testing.assert_frame_equal(res.pairs, again.pairs)
    tk = significance_inconsistency(full, reduced, method="tukey", B=300, rng=4)
    np.testing.assert_array_equal(tk.full.range_distribution.shape, (300,))


def test_dataframes_are_aligned_by_run_and_topic():
    full = _world()
    runs = ["w", "x", "y", "z"]

    def tidy(X):
        return pd.DataFrame(
            [(runs[s], f"t{t:02d}", X[s, t]) for s in range(4) for t in range(30)],
            columns=["run", "topic", "value"],
        )

    reduced = full + np.random.default_rng(5).normal(0, 0.05, full.shape)
    shuffled = tidy(reduced).sample(frac=1, random_state=1)
    a = significance_inconsistency(tidy(full), shuffled, B=200, rng=6)
    b = significance_inconsistency(full, reduced, B=200, rng=6, systems=runs)
    pd.testing.assert_frame_equal(a.pairs, b.pairs)


def test_validation():
    full = _world()
    with pytest.raises(ValueError, match="same shape"):
        significance_inconsistency(full, full[:, :20], rng=0)
    with pytest.raises(ValueError, match="alpha"):
        significance_inconsistency(full, full, alpha=1.0, rng=0)
    with pytest.raises(ValueError, match="reduced_scores"):
        significance_inconsistency(full, np.full_like(full, np.nan), rng=0)
    f = pd.DataFrame(
        {"run": ["a", "a", "b", "b"], "topic": [1, 2, 1, 2], "value": [0.1, 0.2, 0.3, 0.4]}
    )
    g = f.assign(run=["a", "a", "c", "c"])
    with pytest.raises(ValueError, match="same systems"):
        significance_inconsistency(f, g, rng=0)


def test_a_result_and_scores_on_other_topics_are_refused():
    # A result keeps its topics: compared with scores on other topics it is refused, as two
    # frames on different topics are (the resamples only fix how many topics there are).
    from metaeval.meta import discriminative_power, resamples

    full = _world()[:, :10]

    def tidy(X, prefix):
        return pd.DataFrame(
            [(f"r{s}", f"{prefix}{t}", X[s, t]) for s in range(4) for t in range(10)],
            columns=["run", "topic", "value"],
        )

    with pytest.raises(ValueError, match="must cover the same topics"):
        significance_inconsistency(tidy(full, "t"), tidy(full, "u"), B=100, rng=0)
    shared = resamples("bootstrap", n_topics=10, B=100, rng=0)
    on_t = discriminative_power(tidy(full, "t"), resamples=shared)
    assert on_t.topics == tuple(f"t{t}" for t in range(10)) and on_t.n_topics == 10
    on_u = discriminative_power(tidy(full, "u"), resamples=shared)
    with pytest.raises(ValueError, match="must cover the same topics; only in full"):
        significance_inconsistency(on_t, tidy(full, "u"))
    with pytest.raises(ValueError, match="must cover the same topics; only in full"):
        significance_inconsistency(on_t, on_u)
    with pytest.raises(ValueError, match="must cover the same topics; only in full"):
        significance_inconsistency(tidy(full, "u"), on_t)
    # the same topics in another order would pair topic scores wrongly: refused too
    swapped = discriminative_power(full[:, ::-1], resamples=shared, systems=on_t.systems)
    reordered = discriminative_power(full, resamples=shared, systems=on_t.systems)
    object.__setattr__(reordered, "topics", tuple(range(10))[::-1])
    with pytest.raises(ValueError, match="same topics in the same order"):
        significance_inconsistency(swapped, reordered)
    # on the same topics the result is reused
    same = significance_inconsistency(on_t, tidy(full, "t"))
    assert same.full is on_t and same.n_absent == same.n_missed == 0
