"""Tests for metaeval.meta.discrimination: Sakai's bootstrap, randomised Tukey HSD, ASL curves."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metaeval.meta._resampling import bootstrap_core as _bootstrap_core
from metaeval.meta._testing import null_scores
from metaeval.meta.discrimination import (
    asl_curve_frame,
    discriminative_power,
    plot_asl_curves,
)


def _reference_bootstrap(X, B, alpha, seed):
    """Plain per-pair loop of docs/methods.md §1.1 with the same bootstrap indices.

    The contract pinned here: the B x T index matrix is ``default_rng(seed).integers(0, T,
    size=(B, T))``, drawn once and shared by every pair.
    """
    S, T = X.shape
    idx = np.random.default_rng(seed).integers(0, T, size=(B, T))
    k = math.ceil(alpha * B)
    asl, diff = [], []
    for a in range(S):
        for b in range(a + 1, S):
            z = X[a] - X[b]
            t_obs = z.mean() / (z.std(ddof=1) / math.sqrt(T))
            w = z - z.mean()
            ts = np.empty(B)
            ms = np.empty(B)
            for r in range(B):
                ws = w[idx[r]]
                ms[r] = ws.mean()
                ts[r] = ms[r] / (ws.std(ddof=1) / math.sqrt(T))
            asl.append(np.mean(np.abs(ts) >= abs(t_obs) - 1e-10 * (1 + abs(t_obs))))
            order = np.argsort(-np.abs(ts), kind="stable")
            diff.append(abs(ms[order[k - 1]]))
    return np.array(asl), np.array(diff)


@pytest.mark.parametrize("kind", ["continuous", "discrete"])
def test_bootstrap_matches_per_pair_loop(kind):
    rng = np.random.default_rng(1)
    if kind == "continuous":
        X = rng.random((6, 20)) + np.linspace(0, 0.3, 6)[:, None]
    else:  # P@10-like values: many exact ties between topics
        X = rng.integers(0, 11, (6, 20)) / 10 + np.repeat([0, 0.1, 0.2], 2)[:, None]
    res = discriminative_power(X, B=300, rng=42)
    asl, diff = _reference_bootstrap(X, 300, 0.05, 42)
    np.testing.assert_array_equal(res.pairs["asl"].to_numpy(), asl)
    np.testing.assert_allclose(res.pairs["diff_estimate"].to_numpy(), diff, rtol=1e-9, atol=1e-15)
    assert res.diff_required == pytest.approx(diff.max(), rel=1e-9)
    assert res.power == pytest.approx(np.mean(asl < 0.05))


def test_bootstrap_core_hand_checked():
    # z = [.1, .2, .3]: mean .2, sd .1, t(z) = .2 / (.1/sqrt 3) = 3.464. w = [-.1, 0, .1].
    # Six hand-picked samples (counts of topics 1..3):
    #   [1,1,1] -> w* = w, mean 0, t* = 0
    #   [3,0,0] -> all -.1: sd* = 0 and mean != 0 -> t* = -inf (counts as extreme)
    #   [0,3,0] -> all 0: sd* = 0 and mean 0 -> t* = 0
    #   [2,0,1] -> [-.1,-.1,.1]: mean -1/30, sd .11547 -> t* = -0.5
    #   [0,1,2] -> [0,.1,.1]: mean 1/15, sd .057735 -> t* = 2.0
    #   [0,0,3] -> all .1 -> t* = +inf
    # |t*| >= 3.464 for the two infinite samples only: ASL = 2/6.
    counts = np.array([[1, 1, 1], [3, 0, 0], [0, 3, 0], [2, 0, 1], [0, 1, 2], [0, 0, 3]], float)
    Z = np.array([[0.1, 0.2, 0.3]])
    t_obs, asl, diff = _bootstrap_core(Z, counts, alpha=0.05)
    assert t_obs[0] == pytest.approx(0.2 / (0.1 / math.sqrt(3)))
    assert asl[0] == pytest.approx(2 / 6)
    # k = ceil(.05 * 6) = 1: the largest |t*| is inf, tied between samples 2 and 6; the first
    # in sample order (all -.1) wins: diff = .1.
    assert diff[0] == pytest.approx(0.1)
    # k = ceil(.5 * 6) = 3: descending |t*| = inf (s2), inf (s6), 2.0 (s5) -> diff = 1/15.
    _, _, diff3 = _bootstrap_core(Z, counts, alpha=0.5)
    assert diff3[0] == pytest.approx(1 / 15)


def test_degenerate_pairs_policy():
    rng = np.random.default_rng(2)
    base = rng.random(15)
    X = np.vstack([base, base, base + 0.1, rng.random(15)])
    res = discriminative_power(X, B=200, rng=0)
    p = res.pairs.set_index(["system_a", "system_b"])
    # identical systems: never significant
    assert p.loc[(0, 1), "asl"] == 1.0
    assert p.loc[(0, 1), "statistic"] == 0.0
    assert p.loc[(0, 1), "diff_estimate"] == 0.0
    # the same difference on every topic: always significant
    assert p.loc[(0, 2), "asl"] == 0.0
    assert p.loc[(1, 2), "asl"] == 0.0
    assert p.loc[(0, 2), "statistic"] == -np.inf
    # Tukey: identical systems -> every r_b >= 0 = |diff| -> ASL 1
    tk = discriminative_power(X[:2], method="tukey", B=100, rng=0)
    assert tk.pairs["asl"].iloc[0] == 1.0


def test_tukey_ties_at_observed_statistic():
    # Two systems (Tukey HSD = Fisher's sign-flip test), five topics of P@10-like values:
    # x = [.5,.6,.8,1.,.4], y = [.4,.5,1.,.2,.5]; z = [.1,.1,-.2,.8,-.1], |mean z| = .14.
    # Of the 32 sign patterns, 24 reach |sum| >= .7 exactly (hand/integer arithmetic), so the
    # exact p is .75. Float sums of the permuted means fall just below the observed value for
    # 6 of them, so a naive ">=" estimates .5625 instead.
    X = np.array([[5, 6, 8, 10, 4], [4, 5, 10, 2, 5]]) / 10
    signs = np.array(np.meshgrid(*[[1, -1]] * 5)).reshape(5, -1).T
    zi = np.array([1, 1, -2, 8, -1])
    assert np.mean(np.abs(signs @ zi) >= abs(zi.sum())) == 0.75
    res = discriminative_power(X, method="tukey", B=20000, rng=3)
    # Monte-Carlo sd at B = 20000 is 0.003
    assert res.pairs["asl"].iloc[0] == pytest.approx(0.75, abs=0.015)


def test_tukey_internal_consistency():
    rng = np.random.default_rng(4)
    X = rng.random((7, 25)) + np.linspace(0, 0.3, 7)[:, None]
    res = discriminative_power(X, method="tukey", B=2000, alpha=0.05, rng=5)
    r = res.range_distribution
    assert r.shape == (2000,)
    d = np.abs(res.pairs["diff"].to_numpy())
    np.testing.assert_allclose(res.pairs["asl"], [(r >= x - 1e-10 * (1 + x)).mean() for x in d])
    # critical difference: the ceil(.05 * 2000) = 100th largest r_b
    assert res.diff_required == np.sort(r)[::-1][99]
    # a pair is significant exactly when its |diff| exceeds the critical difference
    clear = np.abs(d - res.diff_required) > 1e-9
    np.testing.assert_array_equal(res.pairs["significant"][clear], (d > res.diff_required)[clear])
    assert res.pair_diffs is None and res.bootstrap_indices is None
    assert res.pairs["diff_estimate"].isna().all()


def test_result_fields_and_raw_material():
    rng = np.random.default_rng(6)
    X = rng.random((5, 30)) + np.linspace(0, 0.5, 5)[:, None]
    res = discriminative_power(X, B=500, rng=7, systems=list("abcde"))
    assert res.method == "bootstrap" and res.B == 500 and res.alpha == 0.05
    assert res.n_pairs == 10 and res.systems == tuple("abcde") and res.n_topics == 30
    assert list(res.pairs.columns[:2]) == ["system_a", "system_b"]
    assert {"diff", "asl"} <= set(res.pairs.columns)
    np.testing.assert_allclose(res.pairs["diff"], res.pairs["mean_a"] - res.pairs["mean_b"])
    assert res.pairs.loc[0, "diff"] == pytest.approx(X[0].mean() - X[1].mean())
    np.testing.assert_array_equal(res.asl_sorted, np.sort(res.pairs["asl"]))
    assert res.power == pytest.approx((res.pairs["asl"] < 0.05).mean())
    assert res.n_significant == int((res.pairs["asl"] < 0.05).sum())
    assert res.diff_required == res.pair_diffs.max()
    assert res.bootstrap_indices.shape == (500, 30)
    # the spread system e vs a differs by .5 on average over 30 topics: clearly significant
    assert res.pairs.set_index(["system_a", "system_b"]).loc[("a", "e"), "asl"] == 0.0
    with pytest.raises(ValueError):
        res.asl_sorted[0] = 1.0  # raw material is read-only


def test_defaults_for_B():
    X = np.random.default_rng(0).random((3, 10))
    assert discriminative_power(X, rng=0).B == 1000
    assert discriminative_power(X, method="tukey", rng=0).B == 5000


def test_seeded_results_identical_and_seed_matters():
    X = np.random.default_rng(8).random((6, 20))
    for method in ("bootstrap", "tukey"):
        a = discriminative_power(X, method=method, B=300, rng=9)
        b = discriminative_power(X, method=method, B=300, rng=np.random.default_rng(9))
        pd.testing.assert_frame_equal(a.pairs, b.pairs)
        c = discriminative_power(X, method=method, B=300, rng=10)
        assert not np.array_equal(a.pairs["asl"], c.pairs["asl"])


def test_dataframe_input_is_pivoted():
    rng = np.random.default_rng(11)
    X = rng.random((3, 8))
    runs = ["r_b", "r_a", "r_c"]
    tidy = pd.DataFrame(
        [(runs[s], f"q{t}", X[s, t]) for s in range(3) for t in range(8)],
        columns=["run", "topic", "value"],
    )
    res = discriminative_power(tidy.sample(frac=1, random_state=0), B=200, rng=1)
    assert res.systems == ("r_a", "r_b", "r_c")
    order = [1, 0, 2]
    arr = discriminative_power(X[order], B=200, rng=1, systems=["r_a", "r_b", "r_c"])
    pd.testing.assert_frame_equal(res.pairs, arr.pairs)
    with pytest.raises(ValueError, match="missing"):
        discriminative_power(tidy.iloc[1:], rng=0)
    with pytest.raises(ValueError, match="several measures"):
        discriminative_power(tidy.assign(measure=["AP", "P@10"] * 12), rng=0)
    with pytest.raises(ValueError, match="duplicate"):
        discriminative_power(pd.concat([tidy, tidy.iloc[:1]]), rng=0)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"scores": np.zeros(5)}, ValueError, "scores"),
        ({"scores": np.zeros((1, 5))}, ValueError, "2 systems"),
        ({"scores": np.zeros((3, 1))}, ValueError, "topics"),
        ({"scores": np.array([[0.1, np.nan], [0.2, 0.3]])}, ValueError, "scores"),
        ({"alpha": 0.0}, ValueError, "alpha"),
        ({"alpha": 1.0}, ValueError, "alpha"),
        ({"alpha": 1.5}, ValueError, "alpha"),
        ({"B": 0}, ValueError, "B"),
        ({"B": 2.5}, TypeError, "B"),
        ({"method": "anova"}, ValueError, "method"),
        ({"rng": "seed"}, TypeError, "rng"),
        ({"systems": ["a", "b"]}, ValueError, "systems"),
    ],
)
def test_validation(kwargs, exc, match):
    args = {"scores": np.random.default_rng(0).random((3, 6))}
    args.update(kwargs)
    scores = args.pop("scores")
    with pytest.raises(exc, match=match):
        discriminative_power(scores, **args)


def test_asl_curve_frame_and_plot(tmp_path):
    rng = np.random.default_rng(12)
    X = rng.random((5, 20)) + np.linspace(0, 0.3, 5)[:, None]
    results = {
        "AP": discriminative_power(X, B=200, rng=1),
        "P@10": discriminative_power(np.round(X, 1), B=200, rng=1),
    }
    frame = asl_curve_frame(results)
    assert list(frame.columns) == ["measure", "rank", "asl", "method", "alpha"]
    assert len(frame) == 20
    ap = frame[frame["measure"] == "AP"]
    np.testing.assert_array_equal(ap["rank"], np.arange(1, 11))
    np.testing.assert_array_equal(ap["asl"], results["AP"].asl_sorted)
    out = tmp_path / "asl.png"
    fig = plot_asl_curves(results, path=out)
    assert out.stat().st_size > 1000
    assert len(fig.axes[0].get_lines()) >= 2
    with pytest.raises(TypeError, match="results"):
        asl_curve_frame([results["AP"]])


# ----------------------------------------------------------------------------- calibration


def _binom_ok(count, n, alpha):
    lo, hi = stats.binom.interval(0.99, n, alpha)
    return lo <= count <= hi


def test_bootstrap_calibration_under_null():
    # 600 independent null worlds of 2 identical-in-distribution systems (one pair each):
    # the share of pairs with ASL < alpha must be within the binomial 99% interval of alpha.
    rng = np.random.default_rng(2024)
    n = 600
    asl = np.array(
        [
            discriminative_power(null_scores(2, 40, rng=rng), B=500, rng=rng).pairs["asl"].iloc[0]
            for _ in range(n)
        ]
    )
    for alpha in (0.05, 0.01):
        count = int((asl < alpha).sum())
        assert _binom_ok(count, n, alpha), (alpha, count)


def test_tukey_familywise_calibration_under_null():
    # Randomised Tukey HSD controls the family-wise error rate: in null worlds of 4 systems the
    # share of worlds with at least one significant pair must be near alpha.
    rng = np.random.default_rng(7)
    n = 400
    min_asl = np.array(
        [
            discriminative_power(
                null_scores(4, 30, rng=rng, distribution="beta"), method="tukey", B=400, rng=rng
            ).asl_sorted[0]
            for _ in range(n)
        ]
    )
    for alpha in (0.05, 0.01):
        count = int((min_asl < alpha).sum())
        assert _binom_ok(count, n, alpha), (alpha, count)
