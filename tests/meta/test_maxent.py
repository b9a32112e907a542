"""Tests of metaeval.meta.maxent: expectations, the maximum-entropy solver, curves.

Reference values come from exact enumeration over all outcomes of small lists, from the
oracle O9 of docs/methods.md §8, from closed-form two-level solutions of the linear problems,
and from scipy's SLSQP on the same optimisation problem.
"""

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize

from metaeval.meta.maxent import (
    AveragePrecision,
    BinaryNDCG,
    Expectation,
    GradedAP,
    GradedNDCG,
    MaxEntConvergenceWarning,
    PrecisionAt,
    ReciprocalRank,
    RPrecision,
    actual_pr_curve,
    entropy,
    expectation_for,
    inferred_pr_curve,
    interpolated_precision,
    maxent_distribution,
    rms_interpolated,
    rms_recall_points,
    threshold_probabilities,
)

# ---------------------------------------------------------------------------------------
# independent, per-outcome reference implementations of the measures
# ---------------------------------------------------------------------------------------


def ap_of(x, R):
    hits = np.cumsum(x)
    return sum(hits[i] / (i + 1) for i in range(len(x)) if x[i]) / R


def pk_of(x, k):
    return sum(x[:k]) / k


def rprec_of(x, R):
    return sum(x[:R]) / R


def rr_of(x):
    for i, v in enumerate(x):
        if v:
            return 1.0 / (i + 1)
    return 0.0


def ndcg_of(grades, R_per_grade, gains=None, k=None):
    G = len(R_per_grade)
    gains = list(range(G + 1)) if gains is None else list(gains)
    n = len(grades)
    kk = n if k is None else k
    dcg = sum(gains[g] / np.log2(i + 2) for i, g in enumerate(grades[:kk]))
    ideal_gains = sorted(
        [gains[j] for j in range(1, G + 1) for _ in range(R_per_grade[j - 1]) if gains[j] > 0],
        reverse=True,
    )
    if k is not None:
        ideal_gains = ideal_gains[:k]
    idcg = sum(gv / np.log2(i + 2) for i, gv in enumerate(ideal_gains))
    return dcg / idcg if idcg > 0 else 0.0


def gap_of(grades, R_per_grade, g):
    Gc = np.concatenate([[0.0], np.cumsum(g)])
    num = 0.0
    for n, i_n in enumerate(grades):
        if i_n > 0:
            num += sum(Gc[min(grades[m], i_n)] for m in range(n + 1)) / (n + 1)
    den = sum(R_per_grade[j - 1] * Gc[j] for j in range(1, len(g) + 1))
    return num / den


def enumerate_binary(p, f):
    total = 0.0
    for x in itertools.product([0, 1], repeat=len(p)):
        prob = np.prod([pi if xi else 1 - pi for pi, xi in zip(p, x)])
        total += prob * f(np.array(x))
    return total


def enumerate_graded(P, f):
    total = 0.0
    n, G1 = P.shape
    for x in itertools.product(range(G1), repeat=n):
        prob = np.prod([P[i, x[i]] for i in range(n)])
        total += prob * f(list(x))
    return total


def random_simplex(rng, n, G1):
    P = rng.dirichlet(np.ones(G1), size=n)
    return P


# ---------------------------------------------------------------------------------------
# expectations
# ---------------------------------------------------------------------------------------


def test_expected_ap_oracle_o9():
    p = np.array([0.9, 0.5, 0.3, 0.7, 0.1])
    assert AveragePrecision().value(p, 3) == pytest.approx(0.7185, abs=5e-5)
    assert enumerate_binary(p, lambda x: ap_of(x, 3)) == pytest.approx(0.7185, abs=5e-5)


BINARY_CASES = [
    (AveragePrecision(), lambda x, R: ap_of(x, R)),
    (PrecisionAt(3), lambda x, R: pk_of(x, 3)),
    (PrecisionAt(10), lambda x, R: pk_of(x, 10)),  # k beyond the list: denominator stays k
    (RPrecision(), lambda x, R: rprec_of(x, R)),
    (ReciprocalRank(), lambda x, R: rr_of(x)),
    (BinaryNDCG(), lambda x, R: ndcg_of(list(x), [R])),
    (BinaryNDCG(k=3), lambda x, R: ndcg_of(list(x), [R], k=3)),
]


@pytest.mark.parametrize("exp,ref", BINARY_CASES, ids=lambda c: getattr(c, "name", ""))
@pytest.mark.parametrize("R", [2, 5, 9])
def test_binary_expectation_matches_enumeration(exp, ref, R):
    rng = np.random.default_rng(R)
    p = rng.uniform(0, 1, 7)
    assert exp.value(p, R) == pytest.approx(enumerate_binary(p, lambda x: ref(x, R)), abs=1e-12)


@pytest.mark.parametrize("exp", [c[0] for c in BINARY_CASES], ids=lambda c: c.name)
def test_binary_gradient_matches_finite_differences(exp):
    rng = np.random.default_rng(7)
    p = rng.uniform(0.05, 0.95, (3, 12))  # a batch of three lists
    R = np.array([3.0, 5.0, 14.0])
    g = exp.grad(p, R)
    h = 1e-6
    fd = np.empty_like(p)
    for i in range(p.shape[1]):
        e = np.zeros_like(p)
        e[:, i] = h
        fd[:, i] = (exp.value(p + e, R) - exp.value(p - e, R)) / (2 * h)
    np.testing.assert_allclose(g, fd, atol=1e-8)


GRADED_CASES = [
    (GradedAP(), lambda x, R: gap_of(x, R, [1 / 3] * 3)),
    (GradedAP(g=(0.1, 0.3, 0.6)), lambda x, R: gap_of(x, R, [0.1, 0.3, 0.6])),
    (GradedAP(g=(0.0, 1.0, 0.0)), lambda x, R: gap_of(x, R, [0.0, 1.0, 0.0])),
    (GradedNDCG(), lambda x, R: ndcg_of(x, R)),
    (GradedNDCG(k=3, gains=(0, 1, 3, 7)), lambda x, R: ndcg_of(x, R, gains=(0, 1, 3, 7), k=3)),
]


@pytest.mark.parametrize("exp,ref", GRADED_CASES, ids=lambda c: getattr(c, "name", ""))
def test_graded_expectation_matches_enumeration(exp, ref):
    rng = np.random.default_rng(3)
    P = random_simplex(rng, 5, 4)  # 4^5 = 1024 outcomes
    R = [2, 1, 3]
    assert exp.value(P, R) == pytest.approx(enumerate_graded(P, lambda x: ref(x, R)), abs=1e-12)


@pytest.mark.parametrize("exp", [c[0] for c in GRADED_CASES], ids=lambda c: c.name)
def test_graded_gradient_matches_finite_differences(exp):
    rng = np.random.default_rng(11)
    P = random_simplex(rng, 9, 4)[None].repeat(2, 0)
    P[1] = random_simplex(rng, 9, 4)
    R = np.array([[2.0, 1.0, 3.0], [4.0, 0.0, 2.0]])
    g = exp.grad(P, R)
    h = 1e-6
    fd = np.empty_like(P)
    for i in range(P.shape[1]):
        for j in range(P.shape[2]):
            e = np.zeros_like(P)
            e[:, i, j] = h
            fd[:, i, j] = (exp.value(P + e, R) - exp.value(P - e, R)) / (2 * h)
    np.testing.assert_allclose(g, fd, atol=1e-8)


def test_gap_with_one_grade_is_ap():
    rng = np.random.default_rng(5)
    p = rng.uniform(0, 1, 20)
    P = np.stack([1 - p, p], -1)
    assert GradedAP().value(P, [4]) == pytest.approx(AveragePrecision().value(p, 4), abs=1e-14)


def test_binary_ndcg_is_graded_ndcg_with_one_grade():
    rng = np.random.default_rng(6)
    p = rng.uniform(0, 1, 15)
    P = np.stack([1 - p, p], -1)
    for k in (None, 4):
        assert GradedNDCG(k=k).value(P, [6]) == pytest.approx(
            BinaryNDCG(k=k).value(p, 6), abs=1e-14
        )


def test_expectation_for_names_and_parameters():
    assert isinstance(expectation_for("AP"), AveragePrecision)
    assert expectation_for("P@10").k == 10
    # names are read by parse_measure, the one parser: "R-prec" is written "Rprec" there
    assert isinstance(expectation_for("Rprec"), RPrecision)
    assert isinstance(expectation_for("RR"), ReciprocalRank)
    assert expectation_for("nDCG@20") == BinaryNDCG(k=20)
    assert expectation_for("nDCG", graded=True) == GradedNDCG()
    assert expectation_for("GAP(g=(0.25,0.75))").g == (0.25, 0.75)
    assert expectation_for("GAP") == GradedAP()
    with pytest.raises(ValueError, match="bpref"):
        expectation_for("bpref")
    # metaeval measure objects map to their expectation as their names do; nDCG is graded
    # on graded qrels (n_grades > 2) or on request, GAP always
    from metaeval.measures import parse_measure

    assert expectation_for(parse_measure("AP(rel=2)")) == AveragePrecision()
    assert expectation_for(parse_measure("P@5")) == PrecisionAt(5)
    assert expectation_for(parse_measure("nDCG@10"), n_grades=4) == GradedNDCG(k=10)
    assert expectation_for(parse_measure("nDCG@10"), graded=True) == GradedNDCG(k=10)
    assert expectation_for(parse_measure("nDCG@20")) == expectation_for("nDCG@20")
    assert expectation_for(parse_measure("GAP(g=(0.5,0.5))")) == GradedAP(g=(0.5, 0.5))
    with pytest.raises(ValueError, match="expectation"):
        expectation_for(parse_measure("bpref"))
    with pytest.raises(ValueError, match="cutoff"):
        expectation_for("P")
    with pytest.raises(ValueError, match="g must"):
        GradedAP(g=(0.5, 0.6))
    with pytest.raises(ValueError, match="k must"):
        PrecisionAt(0)
    with pytest.raises(ValueError, match="n_relevant"):
        GradedAP().value(np.full((4, 3), 1 / 3), [1, 2, 3])


# ---------------------------------------------------------------------------------------
# the solver: closed forms, boundaries, feasibility
# ---------------------------------------------------------------------------------------


def test_o9_two_level_solutions():
    r = maxent_distribution("P@5", 0.4, length=10, n_relevant=3)
    np.testing.assert_allclose(r.p, [0.4] * 5 + [0.2] * 5, atol=1e-10)
    assert r.converged and not r.boundary
    r = maxent_distribution("Rprec", 1 / 3, length=10, n_relevant=3)
    np.testing.assert_allclose(r.p, [1 / 3] * 3 + [2 / 7] * 7, atol=1e-10)
    assert abs(r.measure_residual) < 1e-10 and abs(r.count_residual) < 1e-10


@pytest.mark.parametrize("k,v,R,N", [(10, 0.3, 20, 100), (5, 0.8, 7, 30), (20, 0.05, 3, 50)])
def test_precision_closed_form(k, v, R, N):
    r = maxent_distribution(f"P@{k}", v, length=N, n_relevant=R)
    expected = np.r_[np.full(k, v), np.full(N - k, (R - k * v) / (N - k))]
    np.testing.assert_allclose(r.p, expected, atol=1e-10)


def test_perfect_ap_reconstructs_the_perfect_list():
    r = maxent_distribution("AP", 1.0, length=20, n_relevant=4)
    assert r.boundary and r.converged
    np.testing.assert_array_equal(r.p, [1.0] * 4 + [0.0] * 16)
    assert r.entropy == 0.0
    # with fewer retrieved than relevant, the maximum is m / R
    r = maxent_distribution("AP", 3 / 5, length=20, n_relevant=5, n_retrieved_relevant=3)
    np.testing.assert_array_equal(r.p, [1.0] * 3 + [0.0] * 17)


def test_boundary_faces_of_other_measures():
    # P@5 = 1 with 8 relevant: top five certain, three spread over the other 15 ranks
    r = maxent_distribution("P@5", 1.0, length=20, n_relevant=8)
    np.testing.assert_allclose(r.p, [1.0] * 5 + [0.2] * 15, atol=1e-15)
    # P@5 = 0: nothing in the top five
    r = maxent_distribution("P@5", 0.0, length=20, n_relevant=3)
    np.testing.assert_allclose(r.p, [0.0] * 5 + [0.2] * 15, atol=1e-15)
    # RR = 1: the first rank is relevant, the rest is free
    r = maxent_distribution("RR", 1.0, length=11, n_relevant=3)
    np.testing.assert_allclose(r.p, [1.0] + [0.2] * 10, atol=1e-15)
    # GAP = 1: the perfect graded list, highest grade first
    r = maxent_distribution("GAP(g=(0.2,0.3,0.5))", 1.0, length=6, n_relevant=[1, 1, 1])
    np.testing.assert_array_equal(r.p.argmax(-1), [3, 2, 1, 0, 0, 0])
    assert r.entropy == 0.0


def test_near_boundary_approaches_the_perfect_list():
    perfect = np.r_[np.ones(4), np.zeros(26)]
    dev = []
    for eps in (1e-4, 1e-6, 1e-8):
        r = maxent_distribution("AP", 1.0 - eps, length=30, n_relevant=4)
        assert r.converged and not r.boundary
        dev.append(np.abs(r.p - perfect).max())
    assert dev[0] > dev[1] > dev[2] and dev[2] < 1e-3


def test_infeasible_value_raises_single_and_flags_batch():
    with pytest.raises(ValueError, match="not achievable"):
        maxent_distribution("AP", 0.9, length=20, n_relevant=5, n_retrieved_relevant=3)
    with pytest.raises(ValueError, match="exceeds the list length"):
        maxent_distribution("AP", 0.5, length=3, n_relevant=5)
    with pytest.warns(MaxEntConvergenceWarning, match="1 were infeasible"):
        r = maxent_distribution("AP", [0.3, 0.9], length=20, n_relevant=5, n_retrieved_relevant=3)
    np.testing.assert_array_equal(r.feasible, [True, False])
    assert r.converged[0] and not r.converged[1]
    assert np.isnan(r.p[1]).all() and np.isfinite(r.p[0]).all()


def test_non_convergence_is_reported():
    with pytest.warns(MaxEntConvergenceWarning, match="did not converge"):
        r = maxent_distribution("AP", [0.2, 0.5], length=200, n_relevant=20, max_iter=1)
    assert not r.converged.any()
    assert (r.iterations == 1).all()


def test_batch_equals_single_and_is_deterministic():
    values = np.array([0.2, 0.35, 0.6])
    R = np.array([10, 4, 7])
    lengths = np.array([50, 40, 60])
    b1 = maxent_distribution("AP", values, length=lengths, n_relevant=R)
    b2 = maxent_distribution("AP", values, length=lengths, n_relevant=R)
    np.testing.assert_array_equal(b1.p, b2.p)
    assert b1.p.shape == (3, 60)
    for i in range(3):
        s = maxent_distribution("AP", values[i], length=lengths[i], n_relevant=R[i])
        np.testing.assert_allclose(b1.p[i, : lengths[i]], s.p, atol=1e-9)
        assert (b1.p[i, lengths[i] :] == 0).all()


def test_higher_ap_never_lowers_inferred_precision_at_rank_one():
    values = np.linspace(0.1, 0.95, 18)
    r = maxent_distribution("AP", values, length=100, n_relevant=10)
    assert r.converged.all()
    prec1 = r.p[:, 0]
    assert (np.diff(prec1) > 0).all()


def test_user_defined_expectation_opts_in():
    class DiscountedHits(Expectation):
        """sum_i p_i / i: linear, so the solution is a sigmoid of lambda0 + lambda1 / i."""

        name = "hits/i"
        graded = False
        is_linear = True

        def value(self, p, n_relevant):
            p = np.asarray(p, float)
            return (p / np.arange(1, p.shape[-1] + 1)).sum(-1)

        def grad(self, p, n_relevant):
            p = np.asarray(p, float)
            return np.broadcast_to(1 / np.arange(1, p.shape[-1] + 1), p.shape).copy()

    exp = DiscountedHits()
    assert expectation_for(exp) is exp
    r = maxent_distribution(exp, 1.2, length=30, n_relevant=5)
    assert r.converged
    assert exp.value(r.p, 5) == pytest.approx(1.2, abs=1e-10)
    z = np.log(r.p / (1 - r.p))
    # exponential-family form: logit(p_i) is affine in 1 / i
    coef = np.polyfit(1 / np.arange(1, 31), z, 1)
    np.testing.assert_allclose(np.polyval(coef, 1 / np.arange(1, 31)), z, atol=1e-8)

    # duck typing, no subclass and no ``extreme``: solved as an interior point
    class Ducky:
        graded = False
        is_linear = True
        name = "ducky"
        value = DiscountedHits.value
        grad = DiscountedHits.grad

    duck = Ducky()
    assert expectation_for(duck) is duck
    r2 = maxent_distribution(duck, 1.2, length=30, n_relevant=5)
    assert r2.converged and not r2.boundary
    np.testing.assert_allclose(r2.p, r.p, atol=1e-9)


# ---------------------------------------------------------------------------------------
# the solver against scipy SLSQP
# ---------------------------------------------------------------------------------------


def slsqp_binary(exp, v, N, R, m, x0):
    eps = 1e-300

    def negH(p):
        return np.sum(p * np.log(p + eps) + (1 - p) * np.log(1 - p + eps))

    def negH_grad(p):
        return np.log(p + eps) - np.log(1 - p + eps)

    cons = [
        {"type": "eq", "fun": lambda p: exp.value(p, R) - v, "jac": lambda p: exp.grad(p, R)},
        {"type": "eq", "fun": lambda p: p.sum() - m, "jac": lambda p: np.ones_like(p)},
    ]
    res = minimize(
        negH,
        x0,
        jac=negH_grad,
        constraints=cons,
        bounds=[(1e-12, 1 - 1e-12)] * N,
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 500},
    )
    return res.x


def slsqp_graded(exp, v, N, R, m, x0):
    G1 = len(m) + 1

    def unpack(x):
        return x.reshape(N, G1)

    def negH(x):
        return np.sum(x * np.log(x))

    cons = [
        {
            "type": "eq",
            "fun": lambda x: exp.value(unpack(x), R) - v,
            "jac": lambda x: exp.grad(unpack(x), R).ravel(),
        },
        {"type": "eq", "fun": lambda x: unpack(x).sum(1) - 1},
        {"type": "eq", "fun": lambda x: unpack(x)[:, 1:].sum(0) - m},
    ]
    res = minimize(
        negH,
        x0.ravel(),
        jac=lambda x: np.log(x) + 1,
        constraints=cons,
        bounds=[(1e-12, 1)] * (N * G1),
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 2000},
    )
    return unpack(res.x)


def interior_binary_problem(rng, exp):
    """A random list whose measure value is strictly inside its feasible range."""
    while True:
        N = int(rng.integers(20, 101))
        R = int(rng.integers(3, 15))
        m = int(rng.integers(2, R + 1))
        w = np.exp(-np.arange(N) / 15)
        x = np.zeros(N)
        x[rng.choice(N, m, replace=False, p=w / w.sum())] = 1
        v = exp.value(x, R)
        r = maxent_distribution(exp, v, length=N, n_relevant=R, n_retrieved_relevant=m)
        if not r.boundary:
            return N, R, m, v, r


@pytest.mark.parametrize("name", ["AP", "RR", "P@10", "Rprec", "nDCG"])
def test_binary_solver_matches_slsqp(name):
    rng = np.random.default_rng(len(name))
    exp = expectation_for(name)
    for _trial in range(2):
        N, R, m, v, r = interior_binary_problem(rng, exp)
        assert r.converged
        assert abs(r.measure_residual) < 1e-8 and abs(r.count_residual) < 1e-8
        # SLSQP started from the uniform distribution, independently of our solution
        ps = slsqp_binary(exp, v, N, R, m, np.full(N, m / N))
        hs = entropy(ps)
        assert abs(exp.value(ps, R) - v) < 1e-6
        # ours is at least as good as SLSQP and the two agree
        assert r.entropy >= hs - 1e-6 * hs
        assert r.entropy == pytest.approx(hs, rel=1e-6)


def test_boundary_solution_beats_slsqp():
    # RR = 1 (first rank relevant): SLSQP stalls near a vertex; the closed-form face
    # solution has the largest entropy
    N, R, m = 44, 7, 5
    r = maxent_distribution("RR", 1.0, length=N, n_relevant=R, n_retrieved_relevant=m)
    assert r.boundary
    ps = slsqp_binary(ReciprocalRank(), 1.0, N, R, m, np.full(N, m / N))
    assert r.entropy >= entropy(ps) - 1e-9
    assert r.entropy == pytest.approx(entropy(np.r_[1.0, np.full(N - 1, (m - 1) / (N - 1))]))


@pytest.mark.parametrize("name", ["GAP(g=(0.2,0.3,0.5))", "nDCG"])
def test_graded_solver_matches_slsqp(name):
    rng = np.random.default_rng(len(name))
    exp = expectation_for(name, graded=True) if name == "nDCG" else expectation_for(name)
    for _trial in range(2):
        N = int(rng.integers(12, 25))
        R = rng.integers(1, 5, 3)
        labels = np.zeros(N, int)
        pos = rng.choice(N, R.sum(), replace=False)
        labels[pos] = np.repeat([1, 2, 3], R)
        P_true = np.eye(4)[labels]
        v = exp.value(P_true, R)
        r = maxent_distribution(exp, v, length=N, n_relevant=R)
        assert r.converged
        assert abs(r.measure_residual) < 1e-8 and np.abs(r.count_residual).max() < 1e-8
        x0 = np.tile(np.r_[N - R.sum(), R] / N, (N, 1))
        Ps = slsqp_graded(exp, v, N, R, R, x0)
        hs = entropy(Ps, graded=True)
        assert abs(exp.value(Ps, R) - v) < 1e-6
        assert r.entropy >= hs - 1e-6 * hs
        assert r.entropy == pytest.approx(hs, rel=1e-6)


# ---------------------------------------------------------------------------------------
# curves
# ---------------------------------------------------------------------------------------


def test_actual_curve_and_interpolated_precision():
    rel = np.array([1, 0, 1, 0, 0, 1, 0, 0, 0, 0])
    prec, rec = actual_pr_curve(rel, 4)
    np.testing.assert_allclose(prec[[0, 2, 5]], [1.0, 2 / 3, 0.5])
    np.testing.assert_allclose(rec[[0, 2, 5, 9]], [0.25, 0.5, 0.75, 0.75])
    ip = interpolated_precision(prec, rec)
    # levels 0..0.2 -> 1 (rank 1), 0.3..0.5 -> 2/3, 0.6, 0.7 -> 1/2, 0.8..1 never reached -> 0
    np.testing.assert_allclose(ip, [1, 1, 1, 2 / 3, 2 / 3, 2 / 3, 0.5, 0.5, 0, 0, 0])


def test_inferred_curve_of_a_certain_list_is_the_actual_curve():
    rel = np.array([0, 1, 1, 0, 1, 0, 0, 1], float)
    np.testing.assert_allclose(inferred_pr_curve(rel, 5)[0], actual_pr_curve(rel, 5)[0])
    assert rms_recall_points(rel, rel, 5) == 0.0
    assert rms_interpolated(rel, rel, 5) == 0.0


def test_rms_values_by_hand():
    rel = np.array([1, 0, 0, 1])
    p = np.full(4, 0.5)
    # inferred precision 0.5 everywhere; actual 1 at rank 1 and 0.5 at rank 4
    assert rms_recall_points(p, rel, 2) == pytest.approx(np.sqrt((0.25 + 0) / 2))
    # interpolated: actual 1 at levels 0..0.5, 0.5 at 0.6..1; inferred recall reaches 1 at
    # rank 4 with precision 0.5, so 0.5 everywhere
    assert rms_interpolated(p, rel, 2) == pytest.approx(np.sqrt(6 * 0.25 / 11))
    assert np.isnan(rms_recall_points(p, np.zeros(4), 2))


def test_threshold_probabilities_and_inferred_measures():
    P = np.array([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]])
    np.testing.assert_allclose(threshold_probabilities(P), [[0.9, 0.7], [0.5, 0.0]])
    # inferred P@10 from the max-ent distribution of an AP value is its expectation
    r = maxent_distribution("AP", 0.5, length=50, n_relevant=8)
    assert expectation_for("P@10").value(r.p, 8) == pytest.approx(r.p[:10].mean())


# ---------------------------------------------------------------------------------------
# one map from a metaeval measure to its expectation
# ---------------------------------------------------------------------------------------


def graded_tensor(seed=0):
    """A small graded collection (grades 0..3) with three runs, and its tensor."""
    from metaeval.engine import EvalTensor
    from metaeval.evaluation import as_qrels, as_runset

    rng = np.random.default_rng(seed)
    qrels, runs = {}, {"a": {}, "b": {}, "c": {}}
    for t in range(3):
        grades = rng.choice(4, size=30, p=[0.5, 0.2, 0.2, 0.1])
        grades[:3] = [1, 2, 3]
        docs = [f"d{t}_{i}" for i in range(30)]
        qrels[f"q{t}"] = dict(zip(docs, map(int, grades)))
        for name, noise in (("a", 0.5), ("b", 2.0), ("c", 20.0)):
            top = np.argsort(-(grades + rng.normal(0, noise, 30)))[:20]
            # a few unjudged documents too: they count as grade 0
            ranked = [docs[i] for i in top[:15]] + [f"u{t}_{i}" for i in range(5)]
            runs[name][f"q{t}"] = {d: float(20 - k) for k, d in enumerate(ranked)}
    return EvalTensor.build(as_runset(runs), as_qrels(qrels))


SUPPORTED = [
    "AP",
    "AP(rel=2)",
    "P@5",
    "P(rel=3)@10",
    "Rprec",
    "Rprec(rel=2)",
    "RR",
    "RR(rel=3)",
    "nDCG",
    "nDCG@5",
    "nDCG(gain=exp)@5",
    "nDCG(gains={1:1,2:3,3:7})",
    "nDCG(gains={2:0,3:10})@10",
    "GAP",
    "GAP(g=(0.2,0.3,0.5))",
    "GAP(g=(1,0,0))",
]


@pytest.mark.parametrize("name", SUPPORTED)
def test_expectation_on_the_actual_list_is_the_measure_score(name):
    # a certain list (0/1 or one-hot grades) has one outcome: its expectation is its score
    from metaeval.measures import parse_measure

    tensor = graded_tensor()
    m = parse_measure(name)
    exp = expectation_for(m, n_grades=tensor.n_grades)
    assert exp == expectation_for(name, n_grades=tensor.n_grades)  # string or Measure alike
    scores = m.compute(tensor)
    grades = np.maximum(tensor.codes, 0)
    for s in range(tensor.n_runs):
        for t in range(tensor.n_topics):
            if exp.graded:
                value = exp.value(np.eye(tensor.n_grades)[grades[s, t]], tensor.grade_counts[t, 1:])
            else:
                x = (grades[s, t] >= exp.threshold).astype(float)
                value = exp.value(x, tensor.n_relevant(exp.threshold)[t])
            assert value == pytest.approx(scores[s, t], abs=1e-12), (name, s, t)


def test_expectation_for_binary_qrels_and_the_graded_switch():
    from metaeval.engine import EvalTensor
    from metaeval.evaluation import as_qrels, as_runset
    from metaeval.measures import parse_measure

    qrels = {"q": {f"d{i}": int(i % 3 == 0) for i in range(12)}}
    run = {"r": {"q": {f"d{i}": float(-i) for i in (5, 0, 2, 3, 7, 9, 1)}}}
    tensor = EvalTensor.build(as_runset(run), as_qrels(qrels))
    x = (np.maximum(tensor.codes[0, 0], 0) >= 1).astype(float)
    for name in ("nDCG", "nDCG@3", "nDCG(gain=exp)", "nDCG(gains={1:5})@4"):
        m = parse_measure(name)
        exp = expectation_for(m, n_grades=2)
        assert isinstance(exp, BinaryNDCG) and exp == expectation_for(m)
        assert exp.value(x, 4) == pytest.approx(m.compute(tensor)[0, 0], abs=1e-12)
    # graded=True asks for the graded form; nDCG with the default gains needs no n_grades
    assert expectation_for("nDCG@10", graded=True) == GradedNDCG(k=10)
    assert expectation_for("nDCG(gains={1:1,2:3})", n_grades=3) == GradedNDCG(gains=(0, 1, 3))
    with pytest.raises(ValueError, match="n_grades"):
        expectation_for("nDCG(gains={1:1,2:3})", graded=True)
    with pytest.raises(ValueError, match="grade 0"):
        expectation_for("nDCG(gains={0:1})", n_grades=3)
    with pytest.raises(ValueError, match="discount"):
        expectation_for("nDCG(discount=jk)")
    with pytest.raises(ValueError, match=r"AP\(rel=5\): rel=5 is above the highest grade"):
        expectation_for("AP(rel=5)", n_grades=4)
    with pytest.raises(ValueError, match="g has 3"):
        expectation_for("GAP(g=(0.2,0.3,0.5))", n_grades=3)
    with pytest.raises(ValueError, match="condensed"):
        expectation_for("AP'")
    with pytest.raises(ValueError, match="cutoff"):
        expectation_for("AP@10")
    with pytest.raises(TypeError, match="measure"):
        expectation_for(3.5)


def test_expectation_for_has_no_parser_of_its_own():
    import metaeval.meta.maxent as maxent

    assert not hasattr(maxent, "_NAME_RE") and not hasattr(maxent, "_parse_params")
    # spellings parse_measure accepts are accepted, the threshold is the measure's level
    assert expectation_for("map") == AveragePrecision()
    assert expectation_for("recip_rank") == ReciprocalRank()
    assert expectation_for("P(rel=2)@10").threshold == 2
    assert expectation_for("AP(rel=3)").rel == 3
    assert expectation_for("GAP").threshold is None


def test_package_layout_and_old_import_paths():
    from metaeval.meta import MaxEntResult as A
    from metaeval.meta import expectation_for as B
    from metaeval.meta import maxent_distribution as C
    from metaeval.meta.maxent import curves, expectations, solver

    assert A is solver.MaxEntResult and C is solver.maxent_distribution
    assert B is expectations.expectation_for
    assert curves.rms_recall_points is rms_recall_points


def test_maxent_result_is_frozen_with_a_tidy_frame():
    import dataclasses

    r = maxent_distribution("AP", [0.3, 0.5], length=[20, 10], n_relevant=[5, 3])
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.p = None
    f = r.to_frame()
    assert list(f["list"]) == [0, 1]
    for col in (
        "entropy",
        "measure_residual",
        "count_residual",
        "converged",
        "feasible",
        "boundary",
        "iterations",
        "stationarity",
    ):
        assert col in f
    np.testing.assert_array_equal(f["entropy"], r.entropy)
    long = r.to_frame(ranks=True)
    assert len(long) == 30 and set(long.columns) == {"list", "rank", "p"}
    assert long.loc[long["list"] == 1, "rank"].max() == 10
    np.testing.assert_allclose(long.loc[long["list"] == 0, "p"], r.p[0])
    single = maxent_distribution("GAP", 0.5, length=6, n_relevant=[1, 1, 1]).to_frame()
    assert len(single) == 1 and {"count_residual_1", "count_residual_3"} <= set(single.columns)
    g = maxent_distribution("GAP", 0.5, length=6, n_relevant=[1, 1, 1]).to_frame(ranks=True)
    assert set(g.columns) == {"list", "rank", "grade", "p"} and len(g) == 6 * 4


def test_convergence_warning_points_at_the_caller():
    with pytest.warns(MaxEntConvergenceWarning) as record:
        maxent_distribution("AP", [0.2, 0.5], length=200, n_relevant=20, max_iter=1)
    assert record[0].filename == __file__
