"""Tests for metaeval.stats.rankcorr: tau_AP_a / tau_AP_b and rank-biased overlap with ties.

Oracles: the values published with Urbano's ``ircor`` (README and testthat files) and with
Corsi & Urbano's SIGIR 2024 code (``rbo/test.csv``, README); the existing tau_AP on rankings
without ties; brute force over tie-breakings where a coefficient is an expectation; loop ports
of the definitions; Webber et al.'s (2010) formulas and the infinite sum, truncated.
"""

import io
import itertools
import math
import re

import numpy as np
import pandas as pd
import pytest

from metaeval.meta.rankcorr import tau_ap
from metaeval.stats.rankcorr import rbo, rbo_rankings, tau_ap_a, tau_ap_b

# ------------------------------------------------------------------ ircor's published values

# ircor/tests/testthat/helper_data.R (the same sets are in pyircor's tests).
SETS = {
    1: dict(
        x=[0.897, 0.372, 0.908, 0.898, 0.661, 0.062, 0.177, 0.384, 0.498, 0.992],
        y=[0.82, 0.406, 0.817, 0.953, 0.673, 0.073, 0.364, 0.547, 0.589, 0.988],
        x_ties=[0.9, 0.4, 0.9, 0.9, 0.7, 0.1, 0.2, 0.4, 0.5, 1],
        y_ties=[0.8, 0.4, 0.8, 1, 0.7, 0.1, 0.4, 0.5, 0.6, 1],
    ),
    2: dict(
        x=[0.266, 0.573, 0.202, 0.945, 0.629, 0.206, 0.687, 0.77, 0.718, 0.38],
        y=[0.263, 0.843, 0.728, 0.928, 0.08, 0.114, 0.467, 0.641, 0.973, 0.644],
        x_ties=[0.3, 0.6, 0.2, 0.9, 0.6, 0.2, 0.7, 0.8, 0.7, 0.4],
        y_ties=[0.3, 0.8, 0.7, 0.9, 0.1, 0.1, 0.5, 0.6, 1, 0.6],
    ),
    3: dict(
        x=[0.185, 0.573, 0.944, 0.129, 0.468, 0.553, 0.761, 0.405, 0.976, 0.445],
        y=[0.845, 0.272, 0.275, 0.924, 0.605, 0.334, 0.162, 0.872, 0.018, 0.25],
        x_ties=[0.2, 0.6, 0.9, 0.1, 0.5, 0.6, 0.8, 0.4, 1, 0.4],
        y_ties=[0.8, 0.3, 0.3, 0.9, 0.6, 0.3, 0.2, 0.9, 0, 0.2],
    ),
}
# ircor/tests/testthat/test_tauAP.R: (set, tauAP_a(x, y), tauAP_a(x, y.ties), tauAP_b(x, y),
# tauAP_b(x.ties, y.ties)), printed to 4 decimals.
IRCOR = [
    (1, 0.8519, 0.7454, 0.8333, 0.7321),
    (2, 0.2504, 0.2692, 0.2880, 0.2970),
    (3, -0.6971, -0.5558, -0.6680, -0.7047),
]
P4 = 5e-5


@pytest.mark.parametrize("case", IRCOR, ids=lambda c: f"set{c[0]}")
def test_ircor_testthat_values(case):
    k, a_plain, a_ties, b_plain, b_ties = case
    d = SETS[k]
    assert tau_ap_a(d["x"], d["y"]) == pytest.approx(a_plain, abs=P4)
    assert tau_ap_a(d["x"], d["y_ties"]) == pytest.approx(a_ties, abs=P4)
    assert tau_ap_b(d["x"], d["y"]) == pytest.approx(b_plain, abs=P4)
    assert tau_ap_b(d["x_ties"], d["y_ties"]) == pytest.approx(b_ties, abs=P4)
    assert tau_ap_b(d["y_ties"], d["x_ties"]) == pytest.approx(b_ties, abs=P4)


def test_ircor_readme_values():
    # ircor's README, printed to 7 digits. y and x rounded to fifths as R's round(v*5)/5
    # (half to even, as numpy).
    x = np.array([0.06, 0.2, 0.27, 0.37, 0.57, 0.63, 0.66, 0.9, 0.91, 0.94])
    y = np.array([0.37, 0.06, 0.2, 0.27, 0.57, 0.66, 0.63, 0.91, 0.9, 0.94])
    assert tau_ap(x, y) == pytest.approx(0.7491182, abs=5e-8)
    y = np.round(y * 5) / 5
    assert tau_ap_a(x, y) == pytest.approx(0.6074515, abs=5e-8)
    x = np.round(x * 5) / 5
    assert tau_ap_b(x, y) == pytest.approx(0.6269841, abs=5e-8)


# ------------------------------------------------------------------ no ties: tau_AP itself


def test_without_ties_both_equal_tau_ap():
    rng = np.random.default_rng(1)
    X = rng.random((40, 9))
    Y = rng.random((40, 9))
    assert np.allclose(tau_ap_a(X, Y), tau_ap(X, Y), atol=1e-12)
    assert np.allclose(tau_ap_b(X, Y), tau_ap(X, Y, symmetric=True), atol=1e-12)


# ------------------------------------------------------------------ brute force / loops


def _tau_ap_strict(t, e):
    """Yilmaz et al.'s tau_AP(E | T) for strict orders, by its definition (positions in E)."""
    order = sorted(range(len(e)), key=lambda i: -e[i])
    m = len(e)
    total = 0.0
    for pos in range(1, m):
        item = order[pos]
        c = sum(1 for above in order[:pos] if t[above] > t[item])
        total += c / pos
    return 2.0 / (m - 1) * total - 1.0


def _tie_breakings(scores):
    """Every strict score vector that breaks the ties of ``scores`` (order kept across groups)."""
    scores = np.asarray(scores, float)
    groups = [np.flatnonzero(scores == v) for v in np.unique(scores)]
    for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
        strict = np.empty(len(scores))
        for value_rank, perm in enumerate(perms):
            for offset, item in enumerate(perm):
                # Items of a group keep their group's place; within it, the permutation's order.
                strict[item] = value_rank * len(scores) + (len(perm) - offset)
        yield strict


def test_tau_ap_a_is_the_expectation_over_tie_breakings_of_the_estimate():
    rng = np.random.default_rng(7)
    for _ in range(25):
        m = int(rng.integers(3, 8))
        t = rng.permutation(m).astype(float)
        e = rng.integers(0, 3, m).astype(float)
        values = [_tau_ap_strict(t, strict) for strict in _tie_breakings(e)]
        assert tau_ap_a(t, e) == pytest.approx(np.mean(values), abs=1e-12)


def _tau_ap_b_loop(x, y):
    """Urbano & Marrero's tau_AP_b by its definition, one pair at a time."""

    def one_way(x, y):
        m = len(y)
        total, n = 0.0, 0
        for i in range(m):
            above = [j for j in range(m) if y[j] > y[i]]
            if not above:
                continue
            n += 1
            total += sum(1 for j in above if x[j] > x[i]) / len(above)
        return 2.0 * total / n - 1.0

    return (one_way(x, y) + one_way(y, x)) / 2.0


def test_tau_ap_b_matches_its_definition_and_is_symmetric():
    rng = np.random.default_rng(8)
    X = rng.integers(0, 4, (60, 8)).astype(float)
    Y = rng.integers(0, 4, (60, 8)).astype(float)
    got = tau_ap_b(X, Y)
    for r in range(60):
        assert got[r] == pytest.approx(_tau_ap_b_loop(X[r], Y[r]), abs=1e-12)
    assert np.allclose(got, tau_ap_b(Y, X), atol=1e-12)


def test_identities_and_vectorisation():
    x = np.array([0.3, 0.3, 0.5, 0.1, 0.5, 0.2])
    assert tau_ap_b(x, x) == pytest.approx(1.0)
    assert tau_ap_b(x, -x) == pytest.approx(-1.0)
    assert math.isnan(tau_ap_b(np.ones(4), [1, 2, 3, 4]))  # all tied, as tau_b
    truth = np.array([6.0, 5, 4, 3, 2, 1])
    assert tau_ap_a(truth, truth) == 1.0
    rng = np.random.default_rng(9)
    E = rng.integers(0, 3, (5, 6)).astype(float)
    rows = tau_ap_a(truth, E)
    assert rows.shape == (5,)
    assert rows == pytest.approx([tau_ap_a(truth, e) for e in E])


def test_tau_ap_a_refuses_ties_in_the_truth():
    with pytest.raises(ValueError, match="truth"):
        tau_ap_a([1, 1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="ranking 1"):
        tau_ap_a([[1, 2, 3], [1, 1, 2]], [1, 2, 3])


def test_tidy_frames_are_matched_by_run():
    a = pd.DataFrame({"run": ["r1", "r2", "r3", "r4"], "value": [0.4, 0.3, 0.2, 0.1]})
    b = pd.DataFrame({"run": ["r4", "r3", "r2", "r1"], "value": [0.1, 0.3, 0.3, 0.4]})
    assert tau_ap_b(a, b) == pytest.approx(tau_ap_b([0.4, 0.3, 0.2, 0.1], [0.4, 0.3, 0.3, 0.1]))
    assert rbo(a, b) == pytest.approx(rbo([0.4, 0.3, 0.2, 0.1], [0.4, 0.3, 0.3, 0.1]))


# ------------------------------------------------------------------ RBO: published values

# Eight rows of julian-urbano/sigir2024-rbo's rbo/test.csv (the reference test file of Corsi &
# Urbano's rbo.R / rbo.py; values stored to 15 significant digits).
RBO_CSV = """x,y,p,w.ext,w.min,w.max,w.res,a.ext,a.min,a.max,a.res,b.ext,b.min,b.max,b.res
(i3 i6) (i2 i7) i10,(i3 i6 i7 i10) (i1 i2),0.965413635276732,0.946064537517568,0.343706790399566,0.958770957517067,0.615064167117501,0.92051534467649,0.319428239558438,0.934492406675939,0.615064167117501,0.956844651806714,0.348953051936765,0.964017219054266,0.615064167117501
i13 (i1 i4 i5 i6),i3 i14 i11 (i10 i15) i12 (i6 i9) i4 i2,0.92238320668128,0.117578490431637,0.0763135264223449,0.53999366118093,0.463680134758586,0.114619469221414,0.0733545052121218,0.537945108035391,0.464590602823269,0.11474835409049,0.0734833900811979,0.538589532380772,0.465106142299574
i2 i5 i3 (i1 i4),i5 i8 i2 (i3 i9),0.968922741966306,0.580287544332462,0.196704918554571,0.917454802645556,0.720749884090985,0.580994268838527,0.197411643060636,0.918161527151621,0.720749884090985,0.583518284931614,0.199935659153723,0.920685543244708,0.720749884090985
i21 i20 (i1 i16 i19) (i5 i10) i4,(i12 i17) (i2 i3 i8 i11) (i15 i18) (i6 i13) (i7 i14) i9,0.930074017489188,0,0,0.389142712252727,0.389142712252727,0,0,0.38977330351866,0.38977330351866,0,0,0.390116806797613,0.390116806797613
(i1 i4 i6 i8 i10 i12 i13 i14 i17 i18),(i1 i4 i10 i13 i17 i19) i18 (i6 i20 i22) i8 i14 i9,0.908075936164193,0.724213629902645,0.592776221115412,0.770486680844156,0.177710459728745,0.557549635735562,0.426112226948329,0.603822686677074,0.177710459728745,0.736937983877011,0.605500575089777,0.783211034818522,0.177710459728745
(i4 i7 i15) (i2 i11) i8 i18,i4 i8 i17 i11 (i2 i3 i5 i7 i9 i13 i14),0.955836875418683,0.601671359995661,0.310498723372055,0.820912519608734,0.510413796236679,0.584235464666522,0.295503371358027,0.805839323150565,0.510335951792538,0.632087129618464,0.322093781902212,0.833840285843908,0.511746503941696
(i1 i9 i15 i17) i13 i4 i3 i2,(i1 i17) i15 i9 i13 i4 (i2 i3) i14,0.959906916802432,0.966438584453973,0.512284507728805,0.966438584453973,0.454154076725168,0.939211367148046,0.485057290422878,0.939211367148046,0.454154076725168,0.970894528910972,0.516740452185804,0.970894528910972,0.454154076725168
(i1 i3 i6 i11 i15) i17 (i5 i8),(i1 i2 i3 i4 i5 i6 i7 i8 i9 i10 i11 i12),0.966485585840186,0.647993254615828,0.307897712904381,0.853885398258049,0.545987685353668,0.56593642947334,0.250532359019861,0.795583602856033,0.545051243836172,0.658581961799868,0.315458973083789,0.861496368240528,0.546037395156739
"""


def _from_string(s):
    """A ranking in the reference code's notation: "a (b c) d" ties b and c."""
    tokens = re.findall(r"\([^)]*\)|\S+", s)
    return [set(tok[1:-1].split()) if tok.startswith("(") else tok for tok in tokens]


@pytest.mark.parametrize("row", pd.read_csv(io.StringIO(RBO_CSV)).to_dict("records"))
def test_corsi_urbano_reference_values(row):
    x, y = _from_string(row["x"]), _from_string(row["y"])
    for ties in ("w", "a", "b"):
        r = rbo_rankings(x, y, p=row["p"], ties=ties)
        for score in ("ext", "min", "max", "res"):
            assert getattr(r, score) == pytest.approx(row[f"{ties}.{score}"], abs=1e-12), (
                ties,
                score,
            )


def test_corsi_urbano_readme_example():
    # sigir2024-rbo/rbo/Python/README.md, printed to 7 digits.
    x = ["red", {"blue", "green"}, "yellow", "pink"]
    y = [{"blue", "red"}, "white", {"yellow", "black", "purple"}, "green"]
    expected = {
        "a": (0.6922853, 0.3310519, 0.8930692, 0.5620173),
        "w": (0.7068257, 0.3429684, 0.9049857, 0.5620173),
        "b": (0.7207131, 0.3509163, 0.9129336, 0.5620173),
    }
    for ties, values in expected.items():
        r = rbo_rankings(x, y, p=0.95, ties=ties)
        assert (r.ext, r.min, r.max, r.res) == pytest.approx(values, abs=5e-8)
    assert list(rbo_rankings(x, y).to_frame().columns) == ["ties", "p", "ext", "min", "max", "res"]


# ------------------------------------------------------------------ RBO: Webber et al. 2010


def _overlaps(S, L, depth):
    """X_d = |S[:d] & L[:d]| for d = 1..depth (lists shorter than d just end)."""
    out, seen_s, seen_l, x = [], set(), set(), 0
    for d in range(depth):
        a = S[d] if d < len(S) else None
        b = L[d] if d < len(L) else None
        if a is not None:
            x += a in seen_l or a == b
            seen_s.add(a)
        if b is not None and b != a:
            x += b in seen_s
            seen_l.add(b)
        out.append(x)
    return np.array(out, float)


def _rbo_sum(S, L, p, kind, D=4000):
    """RBO of two lists without ties as the infinite sum (1-p) sum p^(d-1) A_d, truncated at D.

    min: nothing more overlaps beyond what is seen; max: the unseen items match as well as
    they can (S continues with L's unseen items, L with S's, then both with the same new
    items); ext: Webber et al.'s extrapolation, A_d = (X_d + (d-s) X_s/s)/d up to l and
    constant beyond.
    """
    if len(S) > len(L):
        S, L = L, S
    s, l = len(S), len(L)
    d = np.arange(1, D + 1, dtype=float)
    if kind == "max":
        fresh = [f"_new{i}" for i in range(D)]
        S = list(S) + [i for i in L if i not in S]
        L = list(L) + [i for i in S if i not in L]
        S, L = S + fresh[: D - len(S)], L + fresh[: D - len(L)]
        A = _overlaps(S, L, D) / d
    else:
        X = _overlaps(S, L, D)
        A = X / d
        if kind == "ext":
            xs, xl = X[s - 1], X[l - 1]
            mid = (d > s) & (d <= l)
            A[mid] = (X[mid] + (d[mid] - s) * xs / s) / d[mid]
            A[d > l] = (xl + (l - s) * xs / s) / l
    return float(((1 - p) * p ** (d - 1) * A).sum())


def _rbo_ext_webber(S, L, p):
    """Webber, Moffat & Zobel (2010), RBO_EXT for uneven lists, in closed form."""
    if len(S) > len(L):
        S, L = L, S
    s, l = len(S), len(L)
    X = _overlaps(S, L, l)
    d = np.arange(1, l + 1, dtype=float)
    xs, xl = X[s - 1], X[l - 1]
    seen = (X / d * p**d).sum()
    extra = (xs * (d[s:] - s) / (s * d[s:]) * p ** d[s:]).sum()
    return float((1 - p) / p * (seen + extra) + ((xl - xs) / l + xs / s) * p**l)


def test_untied_rbo_against_webber_and_the_truncated_sum():
    rng = np.random.default_rng(10)
    pool = [f"d{i}" for i in range(14)]
    for _ in range(30):
        S = list(rng.choice(pool, int(rng.integers(1, 7)), replace=False))
        L = list(rng.choice(pool, int(rng.integers(1, 10)), replace=False))
        p = float(rng.uniform(0.5, 0.95))
        r = rbo_rankings(S, L, p=p)
        assert r.ext == pytest.approx(_rbo_ext_webber(S, L, p), abs=1e-12)
        assert r.ext == pytest.approx(_rbo_sum(S, L, p, "ext"), abs=1e-10)
        assert r.min == pytest.approx(_rbo_sum(S, L, p, "min"), abs=1e-10)
        assert r.max == pytest.approx(_rbo_sum(S, L, p, "max"), abs=1e-10)
        assert r.min <= r.ext <= r.max


def _orderings(ranking):
    """Every strict ranking that breaks the tie groups of ``ranking``."""
    groups = [sorted(g) if isinstance(g, set) else [g] for g in ranking]
    for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [item for perm in perms for item in perm]


def test_rbo_a_bounds_are_expectations_over_tie_breakings():
    # RBO^a: its MIN and MAX (and EXT on lists of the same length) average the untied scores
    # over all tie-breakings of both lists.
    cases = [
        (["a", {"b", "c"}, "d"], [{"c", "e"}, "a", "f", "b"]),
        ([{"a", "b", "c"}, "x"], ["b", {"x", "y"}, "a"]),
        (["a", {"b", "c"}], [{"c", "d"}, "a"]),  # same length
        ([{"a", "b"}, {"c", "d"}, "e"], [{"e", "d", "a"}, "b", "c"]),  # same items, length
    ]
    for x, y in cases:
        for p in (0.6, 0.9):
            pairs = [(a, b) for a in _orderings(x) for b in _orderings(y)]
            r = rbo_rankings(x, y, p=p, ties="a")
            for score in ("min", "max"):
                expected = np.mean([getattr(rbo_rankings(a, b, p=p), score) for a, b in pairs])
                assert getattr(r, score) == pytest.approx(expected, abs=1e-12), (x, y, score)
            if sum(map(_size, x)) == sum(map(_size, y)):
                expected = np.mean([rbo_rankings(a, b, p=p).ext for a, b in pairs])
                assert r.ext == pytest.approx(expected, abs=1e-12)


def _size(group):
    return len(group) if isinstance(group, set) else 1


# ------------------------------------------------------------------ RBO of score vectors


def _as_ranking(scores):
    """Score vector -> ranking of item indices with tie groups, best first."""
    out = []
    for v in sorted(set(scores), reverse=True):
        group = {i for i, s in enumerate(scores) if s == v}
        out.append(group if len(group) > 1 else next(iter(group)))
    return out


def test_rbo_of_score_vectors_equals_the_general_ext():
    rng = np.random.default_rng(12)
    X = rng.integers(0, 4, (30, 7)).astype(float)
    Y = rng.integers(0, 4, (30, 7)).astype(float)
    for ties in ("a", "b", "w"):
        got = rbo(X, Y, p=0.8, ties=ties)
        assert got.shape == (30,)
        for r in range(30):
            ref = rbo_rankings(
                _as_ranking(X[r].tolist()), _as_ranking(Y[r].tolist()), p=0.8, ties=ties
            )
            assert got[r] == pytest.approx(ref.ext, abs=1e-12)
            assert ref.max == pytest.approx(ref.ext, abs=1e-12)  # nothing is unseen


def test_rbo_a_of_score_vectors_brute_force_and_truncated_sum():
    rng = np.random.default_rng(13)
    for _ in range(15):
        m = int(rng.integers(2, 6))
        x = rng.integers(0, 3, m).astype(float)
        y = rng.integers(0, 3, m).astype(float)
        p = float(rng.uniform(0.3, 0.95))
        values = []
        for a in _tie_breakings(x):
            for b in _tie_breakings(y):
                order_a = list(np.argsort(-a))
                order_b = list(np.argsort(-b))
                # Complete lists of the same systems: the extrapolated agreement beyond m is 1.
                values.append(_rbo_sum(order_a, order_b, p, "ext"))
        assert rbo(x, y, p=p, ties="a") == pytest.approx(np.mean(values), abs=1e-10)


def test_rbo_variants_properties():
    x = np.array([0.5, 0.5, 0.4, 0.3, 0.3, 0.3, 0.1])
    assert rbo(x, x, ties="b") == pytest.approx(1.0)
    assert rbo(x, x, ties="w") == pytest.approx(1.0)
    assert rbo(x, x, ties="a") < 1.0  # random tie-breaking of both rarely agrees
    y = np.array([0.1, 0.5, 0.5, 0.4, 0.2, 0.3, 0.3])
    assert rbo(x, y, ties="a") <= rbo(x, y, ties="b")  # Corsi & Urbano: RBO^a <= RBO^b
    strict = np.arange(7.0)
    for ties in "abw":
        assert rbo(strict, strict, ties=ties) == pytest.approx(1.0)
        assert rbo(strict, strict[::-1], ties=ties) == pytest.approx(
            rbo(strict, strict[::-1], ties="a")
        )


def test_rbo_validation_errors_name_the_parameter():
    with pytest.raises(ValueError, match="p"):
        rbo([1, 2], [2, 1], p=1.0)
    with pytest.raises(ValueError, match="ties"):
        rbo([1, 2], [2, 1], ties="c")
    with pytest.raises(ValueError, match="x ranks item 'a' more than once"):
        rbo_rankings(["a", {"a", "b"}], ["a"])
    with pytest.raises(ValueError, match="y must rank at least one item"):
        rbo_rankings(["a"], [])
    with pytest.raises(TypeError, match="x must be a sequence"):
        rbo_rankings("abc", ["a"])
    with pytest.raises(ValueError, match="same number of systems"):
        rbo([1, 2, 3], [1, 2])
