"""Tests for metaeval.stats.multiplicity: Holm and BH against statsmodels, Westfall-Young max-T
and min-P against a plain loop over all 2^8 sign flips in exact rational arithmetic, and the
family-wise error rate on null matrices."""

import itertools
import math
import re
from fractions import Fraction

import numpy as np
import pytest

from metaeval.meta import resamples
from metaeval.meta._testing import null_scores
from metaeval.stats import multiplicity
from metaeval.stats.multiplicity import benjamini_hochberg, holm, westfall_young
from metaeval.stats.paired import paired_comparisons

multitest = pytest.importorskip("statsmodels.stats.multitest")


def test_holm_and_bh_match_statsmodels():
    rng = np.random.default_rng(0)
    for m in (1, 2, 7, 50):
        p = rng.random(m) ** 3
        p[: m // 3] = p[0]  # ties
        assert np.allclose(holm(p), multitest.multipletests(p, method="holm")[1], atol=1e-15)
        assert np.allclose(
            benjamini_hochberg(p), multitest.multipletests(p, method="fdr_bh")[1], atol=1e-15
        )


@pytest.mark.parametrize("correction", [holm, benjamini_hochberg])
def test_p_values_outside_zero_one_are_refused(correction):
    for p, shown in (([0.01, np.nan, 0.03], "p[1] is nan"), ([0.5, 1.7], "p[1] is 1.7")):
        with pytest.raises(ValueError, match=re.escape(shown)):
            correction(p)
    with pytest.raises(ValueError, match="1-D"):
        correction([[0.1, 0.2]])
    assert correction([]).size == 0


# --------------------------------------------------------------------------------------------
# Brute force: Westfall & Young (1993), Algorithms 2.5 / 2.8, by a plain loop over all 256
# sign vectors of 8 topics, in integers and fractions (scores are tenths), so ties are exact.
# --------------------------------------------------------------------------------------------

N_TOPICS = 8
SIGNS = list(itertools.product((1, -1), repeat=N_TOPICS))


def _stat(z, s, kind):
    """|sum s z| for "mean"; t^2 (n - 1)/n = S1^2 / (Q - S1^2 / n) for "t" (same order as |t|)."""
    S1 = sum(si * zi for si, zi in zip(s, z))
    if kind == "mean":
        return Fraction(abs(S1))
    Q = sum(zi * zi for zi in z)
    dev = Fraction(Q) - Fraction(S1 * S1, N_TOPICS)
    if dev == 0:
        return Fraction(0) if S1 == 0 else math.inf
    return Fraction(S1 * S1) / dev


def _brute(Xi, pairs, kind, procedure, method):
    Zs = [[int(a - b) for a, b in zip(Xi[i], Xi[j])] for i, j in pairs]
    T = [[_stat(z, s, kind) for s in SIGNS] for z in Zs]  # pairs x flips; flip 0 = identity
    m, N = len(pairs), len(SIGNS)
    obs = [T[h][0] for h in range(m)]
    raw = [sum(v >= obs[h] for v in T[h]) for h in range(m)]
    if procedure == "maxT":
        key, score = (lambda h: -obs[h]), (lambda h, s: T[h][s])

        def hit(value, h):
            return value >= obs[h]

        pick = max
    else:
        # each pair's own p-value under every flip: #{s' : T(s') >= T(s)}
        C = [[sum(v >= T[h][s] for v in T[h]) for s in range(N)] for h in range(m)]
        key, score = (lambda h: raw[h]), (lambda h, s: C[h][s])

        def hit(value, h):
            return value <= raw[h]

        pick = min
    if method == "single-step":
        extreme = [pick(score(h, s) for h in range(m)) for s in range(N)]
        return [Fraction(sum(hit(e, h) for e in extreme), N) for h in range(m)], raw
    order = sorted(range(m), key=key)  # most significant first
    adj = [None] * m
    running = Fraction(0)
    for j, h in enumerate(order):
        rest = order[j:]
        c = sum(hit(pick(score(k, s) for k in rest), h) for s in range(N))
        running = max(running, Fraction(c, N))
        adj[h] = running
    return adj, raw


@pytest.mark.parametrize("kind", ["t", "mean"])
@pytest.mark.parametrize("procedure", ["maxT", "minP"])
@pytest.mark.parametrize("method", ["single-step", "step-down"])
@pytest.mark.parametrize("family", ["all_pairs", "baseline"])
@pytest.mark.parametrize("one_pair_per_block", [False, True])
def test_westfall_young_equals_full_enumeration(
    kind, procedure, method, family, one_pair_per_block, monkeypatch
):
    if one_pair_per_block:
        # the step-down running extreme must carry from block to block
        monkeypatch.setattr(multiplicity, "_BLOCK_ELEMENTS", len(SIGNS))
    # Seed 8: the step-down monotonicity step changes the answer in every configuration here.
    rng = np.random.default_rng(8)
    Xi = rng.integers(0, 11, (4, N_TOPICS))
    Xi[3] = Xi[2]  # an identical pair: every flip ties with it
    if family == "all_pairs":
        pairs = [(a, b) for a in range(4) for b in range(a + 1, 4)]
        kw = {"family": "all_pairs"}
    else:
        pairs = [(a, 1) for a in (0, 2, 3)]
        kw = {"family": "baseline", "baseline": 1}
    r = westfall_young(Xi / 10, procedure=procedure, method=method, statistic=kind, B=256, **kw)
    adj, raw = _brute(Xi, pairs, kind, procedure, method)
    assert r.exact and r.n_resamples == 256
    assert list(zip(r.system_a, r.system_b)) == pairs
    assert np.array_equal(r.p_value, np.array(raw) / 256)
    assert np.array_equal(r.p_adjusted, np.array([float(a) for a in adj]))


def test_step_down_never_above_single_step_and_raw_p_never_above_adjusted():
    X = null_scores(6, 20, rng=4) + np.linspace(0, 0.15, 6)[:, None]
    for procedure in ("maxT", "minP"):
        ss = westfall_young(X, family="all_pairs", procedure=procedure, method="single-step", rng=1)
        sd = westfall_young(X, family="all_pairs", procedure=procedure, method="step-down", rng=1)
        assert np.all(sd.p_adjusted <= ss.p_adjusted + 1e-15)
        assert np.all(sd.p_value <= sd.p_adjusted)
        # the most significant pair gets the same adjusted p either way
        top = np.argmin(sd.p_adjusted)
        assert sd.p_adjusted[top] == ss.p_adjusted.min()


def test_raw_p_values_are_the_randomisation_tests():
    X = null_scores(5, 25, rng=5) + np.linspace(0, 0.1, 5)[:, None]
    shared = resamples("randomization", n_topics=25, B=2000, rng=7)
    wy = westfall_young(X, family="all_pairs", statistic="mean", resamples=shared)
    pc = paired_comparisons(
        X, family="all_pairs", tests=["randomization"], resamples=shared, correction=None
    )
    assert np.array_equal(wy.p_value, pc["p_value"].to_numpy())
    # the same stream from the same seed without shared resamples
    wy2 = westfall_young(X, family="all_pairs", statistic="mean", B=500, rng=3)
    pc2 = paired_comparisons(X, family="all_pairs", tests=["randomization"], B=500, rng=3)
    assert np.array_equal(wy2.p_value, pc2["p_value"].to_numpy())
    # Monte Carlo: the identity is in the reference set, so nothing is 0
    assert wy.n_resamples == 2001 and wy.p_adjusted.min() >= 1 / 2001
    frame = wy.to_frame()
    assert list(frame.columns) == [
        "system_a",
        "system_b",
        "diff",
        "statistic",
        "p_value",
        "p_adjusted",
        "significant",
    ]


def test_westfall_young_controls_the_family_wise_error_rate():
    # 400 null matrices (5 exchangeable systems x 30 topics, 10 pairs): the share of matrices
    # with any pair significant at 0.05 must be <= 0.05 + 3 binomial sd (0.083); unadjusted,
    # it is about 0.3, so a missing or broken adjustment fails.
    ss = np.random.SeedSequence(77)
    any_wy = {("maxT", "step-down"): 0, ("minP", "step-down"): 0, ("maxT", "single-step"): 0}
    any_raw = 0
    draws = ss.spawn(400)
    for child in draws:
        X = null_scores(5, 30, rng=np.random.default_rng(child))
        seed = int(child.generate_state(1)[0])
        for procedure, method in any_wy:
            r = westfall_young(
                X, family="all_pairs", procedure=procedure, method=method, B=500, rng=seed
            )
            any_wy[procedure, method] += bool(r.significant.any())
        any_raw += bool((r.p_value < 0.05).any())
    limit = 0.05 + 3 * math.sqrt(0.05 * 0.95 / len(draws))
    for key, k in any_wy.items():
        assert k / len(draws) <= limit, (key, k / len(draws))
    assert any_raw / len(draws) > 0.15
    # under the complete null, step-down and single-step max-T reject in the same matrices
    assert any_wy["maxT", "step-down"] == any_wy["maxT", "single-step"]


def test_family_is_required_and_checked():
    X = null_scores(3, 10, rng=0)
    with pytest.raises(TypeError, match="family"):
        westfall_young(X)
    with pytest.raises(ValueError, match="family"):
        westfall_young(X, family="everything")
    with pytest.raises(ValueError, match="baseline"):
        westfall_young(X, family="baseline")
    with pytest.raises(ValueError, match="procedure"):
        westfall_young(X, family="all_pairs", procedure="holm")
    with pytest.raises(ValueError, match="method"):
        westfall_young(X, family="all_pairs", method="step-up")
    with pytest.warns(UserWarning, match="B=10"):
        westfall_young(X, family="all_pairs", B=10, rng=0)
