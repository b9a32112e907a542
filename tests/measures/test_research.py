"""GAP, xGAP, eGAP, the Q-measure, RBP and its residual, ERR / nERR, bpref_R / bpref_N.

Three layers: the papers' own worked claims checked exactly; a plain-Python reference
implementation of every formula in docs/methods.md §6.2 / §6.4, written from the formulas with
per-document loops, compared with the vectorised measures on random rankings; hand examples
and published oracle values (docs/methods.md §8, O8 and O10).
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from metaeval import EvalTensor, Qrels, RunSet, read_qrels, read_run
from metaeval.measures import parse_measure
from metaeval.measures.graded import GAP, RBP, Q, RBP_resid, eGAP, xGAP


def tensor_of(qrels: dict, lists: dict[str, dict[str, list[str]]]) -> EvalTensor:
    """Tensor of runs given as ranked doc-id lists per topic (scores descending)."""
    runs = {
        name: {
            t: {d: float(len(docs) - i) for i, d in enumerate(docs)} for t, docs in topics.items()
        }
        for name, topics in lists.items()
    }
    return EvalTensor.build(RunSet.from_dict(runs), Qrels.from_dict(qrels))


def value(measure, tensor: EvalTensor) -> np.ndarray:
    return parse_measure(measure).compute(tensor)


def graded_list(grades: list[int], extra_judged: dict[str, int] | None = None) -> EvalTensor:
    """One topic, one run ranking documents of the given grades in order."""
    docs = [f"d{i:05d}" for i in range(len(grades))]
    qrels = {"t": {d: g for d, g in zip(docs, grades)} | (extra_judged or {})}
    return tensor_of(qrels, {"run": {"t": docs}})


# ============================================================================ seed claims
@pytest.mark.parametrize("g1, g2", [(0.5, 0.5), (0.1, 0.9), (0.7, 0.3)])
def test_gap_family_limits_for_n_grade1_then_one_grade2(g1, g2):
    """n grade-1 documents then one grade-2 document: as n grows, GAP -> 1, xGAP -> 1 - g2^2,
    eGAP -> g1 (Ferrante, Ferro & Maistro 2014). Checked against the closed forms at each n
    and for a monotone approach to the limit."""
    g = f"(g={g1},{g2})".replace("(g=", "g=(")
    errors = {"GAP": [], "xGAP": [], "eGAP": []}
    for n in (10, 100, 1000, 5000):
        t = graded_list([1] * n + [2])
        got = {name: value(f"{name}({g})", t)[0, 0] for name in errors}
        closed = {
            "GAP": (n * g1 + (n * g1 + 1) / (n + 1)) / (n * g1 + 1),
            "xGAP": n * g1 / (n + 1) + (g1 / (n + 1) + g2) * (n * g1 + 1) / (n + 1),
            "eGAP": g1 + g2 / (n + 1),
        }
        limits = {"GAP": 1.0, "xGAP": 1 - g2**2, "eGAP": g1}
        for name in errors:
            assert got[name] == pytest.approx(closed[name], rel=1e-12), (name, n)
            errors[name].append(abs(got[name] - limits[name]))
    for name, err in errors.items():
        assert all(a > b for a, b in zip(err, err[1:])), (name, err)
        # The gap to the limit shrinks like 1/n: 500 times smaller from n = 10 to n = 5000.
        assert err[-1] < 0.01 * err[0], (name, err)
    # The point of the paper: with g2 large, GAP says "almost perfect" while xGAP and eGAP
    # see that most users (threshold 2) find their only relevant document at rank n + 1.
    if g2 == 0.9:
        last = graded_list([1] * 5000 + [2])
        assert value(f"GAP({g})", last)[0, 0] > 0.998
        assert value(f"xGAP({g})", last)[0, 0] == pytest.approx(0.19, abs=1e-3)
        assert value(f"eGAP({g})", last)[0, 0] == pytest.approx(0.1, abs=1e-3)


def _precision_given_pivot(grades: list[int], g: tuple[float, ...]) -> list[float]:
    """GAP's step 2-3: given pivot n, the probability that a document drawn uniformly from
    ranks 1..n is relevant to the user, (1/n) sum_{m<=n} G(min(i_m, i_n)) / G(i_n)."""
    big_g = [0.0] + list(np.cumsum(g))
    out = []
    for n, i_n in enumerate(grades, start=1):
        if i_n == 0 or big_g[i_n] == 0:
            out.append(0.0)
            continue
        s = sum(big_g[min(i_m, i_n)] for i_m in grades[:n])
        out.append(s / n / big_g[i_n])
    return out


def test_step1_selection_probabilities():
    """Step-1 (pivot) selection probabilities of the GAP and xGAP user models.

    Ferrante, Ferro & Maistro (2014, §3-4) quote 1/12, 1/6, 1/2 and 1/22, 12/22, 100/110. We
    derived them from the user models of Robertson et al. (2010) and Ferrante et al. (2014)
    for the list "10 grade-1 documents, then one grade-2 document", g = (1/2, 1/2):

    * GAP picks the pivot with probability G(i_n) / sum_j R_j G(j): 1/12 for each grade-1
      document and 1/6 for the grade-2 one, although half of the users (g2 = 1/2) consider
      only the grade-2 document relevant: GAP's implied share of threshold-2 users is 1/12
      where eGAP's is g2 = 1/2.
    * xGAP's user first draws the threshold j (probability g_j), then one of the R^(j)
      documents of grade >= j: A(i_n) = sum_{j<=i_n} g_j / R^(j) = 1/22 for each grade-1
      document and 1/22 + 1/2 = 12/22 for the grade-2 one.
    * 100/110 has two readings and both are checked: GAP's probability that the pivot is a
      grade-1 document with n = 100 and g = (0.1, 0.9), 100 G(1) / (100 G(1) + G(2)) = 10/11,
      although 90% of the users would pick the grade-2 document; and, with R_1 = 100 and
      R_2 = 10 (the paper's case R(1) >= 10 R(k)), the probability that an xGAP user with
      threshold 1 picks a grade-1 pivot, 100/110.

    The probabilities are tied to the implementation: each measure must equal
    sum_n P(pivot = n) * P(relevant | pivot = n), with the probabilities above.
    """
    half = Fraction(1, 2)
    n = 10
    grades = [1] * n + [2]
    # GAP: weights G(i_n) normalised by sum_j R_j G(j) = 10 * 1/2 + 1 = 6.
    gap_pivot = [half / 6] * n + [Fraction(1) / 6]
    assert gap_pivot[0] == Fraction(1, 12) and gap_pivot[-1] == Fraction(1, 6)
    assert sum(gap_pivot) == 1
    xgap_pivot = [half / 11] * n + [half / 11 + half / 1]
    assert xgap_pivot[0] == Fraction(1, 22) and xgap_pivot[-1] == Fraction(12, 22)
    assert sum(xgap_pivot) == 1

    t = graded_list(grades)
    prec = _precision_given_pivot(grades, (0.5, 0.5))
    assert value("GAP(g=(0.5,0.5))", t)[0, 0] == pytest.approx(
        sum(float(p) * c for p, c in zip(gap_pivot, prec)), rel=1e-12
    )
    assert value("xGAP(g=(0.5,0.5))", t)[0, 0] == pytest.approx(
        sum(float(p) * c for p, c in zip(xgap_pivot, prec)), rel=1e-12
    )
    # The share of threshold-2 users: g2 = 1/2 in eGAP's (and xGAP's) user model, but only
    # g2 R^(2) / sum_j g_j R^(j) = 1/12 in GAP's: GAP = 11/12 AP_1 + 1/12 AP_2 while
    # eGAP = 1/2 AP_1 + 1/2 AP_2.
    ap1, ap2 = value("AP", t)[0, 0], value("AP(rel=2)", t)[0, 0]
    assert ap1 == 1.0 and ap2 == pytest.approx(1 / 11)
    assert value("GAP(g=(0.5,0.5))", t)[0, 0] == pytest.approx(11 / 12 * ap1 + 1 / 12 * ap2)
    assert value("eGAP(g=(0.5,0.5))", t)[0, 0] == pytest.approx(0.5 * ap1 + 0.5 * ap2)

    # 100/110, second reading (the paper's case R(1) >= 10 R(k), R_1 = 100, R_2 = 10): the
    # xGAP user with threshold 1 picks a grade-1 pivot with probability 100/110; A(1) =
    # g1/R^(1) per grade-1 document.
    grades = [1] * 50 + [2] * 5 + [1] * 50 + [2] * 5
    t = graded_list(grades)
    r1 = Fraction(110)
    xgap_pivot = [half / r1 if gr == 1 else half / r1 + half / 10 for gr in grades]
    assert sum(xgap_pivot) == 1
    assert sum(p for p, gr in zip(xgap_pivot, grades) if gr == 1) / half == Fraction(100, 110)
    prec = _precision_given_pivot(grades, (0.5, 0.5))
    assert value("xGAP(g=(0.5,0.5))", t)[0, 0] == pytest.approx(
        sum(float(p) * c for p, c in zip(xgap_pivot, prec)), rel=1e-12
    )

    # 100/110, first reading: n = 100, g = (0.1, 0.9).
    g1, g2 = Fraction(1, 10), Fraction(9, 10)
    big_g = {1: g1, 2: g1 + g2}
    p_grade1 = 100 * big_g[1] / (100 * big_g[1] + big_g[2])
    assert p_grade1 == Fraction(100, 110)
    grades = [1] * 100 + [2]
    t = graded_list(grades)
    prec = _precision_given_pivot(grades, (0.1, 0.9))
    pivot = [float(big_g[1] / (100 * big_g[1] + big_g[2]))] * 100 + [float(1 - p_grade1)]
    assert value("GAP(g=(0.1,0.9))", t)[0, 0] == pytest.approx(
        sum(p * c for p, c in zip(pivot, prec)), rel=1e-12
    )


# ============================================================================ reference code
def ref_ap(grades, r_count, rel=1):
    hits, total = 0, 0.0
    for r, gr in enumerate(grades, start=1):
        if gr is not None and gr >= rel:
            hits += 1
            total += hits / r
    return total / r_count if r_count else 0.0


def ref_gap(grades, counts, g):
    """GAP from its definition (double loop over m <= n)."""
    big_g = [0.0] + list(np.cumsum(g))
    num = 0.0
    for n, i_n in enumerate(grades, start=1):
        if i_n is None or i_n <= 0:
            continue
        num += sum(big_g[min(i_m or 0, i_n)] for i_m in grades[:n]) / n
    den = sum(counts.get(j, 0) * big_g[j] for j in range(1, len(g) + 1))
    return num / den if den else 0.0


def r_at_least(counts, j):
    return sum(c for grade, c in counts.items() if grade >= j)


def ref_egap(grades, counts, g):
    return sum(
        g[j - 1] * ref_ap(grades, r_at_least(counts, j), rel=j)
        for j in range(1, len(g) + 1)
        if r_at_least(counts, j) > 0
    )


def ref_xgap(grades, counts, g):
    big_g = [0.0] + list(np.cumsum(g))
    lead = next((i for i, v in enumerate(g) if v > 0), len(g))  # J

    def a(k):
        return sum(
            g[j - 1] / r_at_least(counts, j) for j in range(1, k + 1) if r_at_least(counts, j) > 0
        )

    total = 0.0
    for n, i_n in enumerate(grades, start=1):
        if i_n is None or i_n <= lead:
            continue
        inner = sum(big_g[min(i_m or 0, i_n)] for i_m in grades[:n])
        total += a(i_n) / big_g[i_n] * inner / n
    return total


def ref_q(grades, counts, beta=1.0, gains=None, rel=1):
    gains = gains or {k: float(k) for k in range(10)}
    gain = lambda gr: gains.get(gr, float(gr)) if gr is not None and gr >= rel else 0.0  # noqa
    ideal = sorted(
        (gain(gr) for gr, c in counts.items() for _ in range(c) if gr >= rel), reverse=True
    )
    r_count = len(ideal)
    total, hits, cg = 0.0, 0, 0.0
    for r, gr in enumerate(grades, start=1):
        cg += gain(gr)
        cg_star = sum(ideal[: min(r, r_count)])
        if gr is not None and gr >= rel:
            hits += 1
            total += (hits + beta * cg) / (r + beta * cg_star)
    return total / r_count if r_count else 0.0


def ref_rbp(grades, p, top):
    return (
        (1 - p) * sum((gr or 0) / top * p ** (r - 1) for r, gr in enumerate(grades, start=1))
        if top
        else 0.0
    )


def ref_rbp_resid(grades, p):
    d = len(grades)
    return p**d + (1 - p) * sum(p ** (r - 1) for r, gr in enumerate(grades, start=1) if gr is None)


def ref_err(grades, top, k=None):
    grades = grades[:k] if k else grades
    total, reach = 0.0, 1.0
    for r, gr in enumerate(grades, start=1):
        stop = (2 ** (gr or 0) - 1) / 2**top
        total += reach * stop / r
        reach *= 1 - stop
    return total


def ref_nerr(grades, counts, top, k=None):
    ideal = sorted((gr for gr, c in counts.items() for _ in range(c) if gr > 0), reverse=True)
    best = ref_err(ideal, top, k)
    return ref_err(grades, top, k) / best if best else 0.0


def ref_bpref(grades, counts, kind):
    r_count = r_at_least(counts, 1)
    n_count = counts.get(0, 0)
    total, nonrel = 0.0, 0
    for gr in grades:
        if gr is None:
            continue
        if gr == 0:
            nonrel += 1
            continue
        if kind == "R":
            total += 1 - min(nonrel, r_count) / r_count
        else:
            total += 1 - (nonrel / n_count if n_count else 0.0)
    return total / r_count if r_count else 0.0


@pytest.fixture(scope="module")
def random_world():
    """Six topics (grades 0..3, some without the top grades), four runs of random depth with
    unjudged (qrels -1) and unpooled documents mixed in."""
    rng = np.random.default_rng(20100719)
    qrels, lists, truth = {}, {f"run{s}": {} for s in range(4)}, {}
    for t in range(6):
        top = 3 if t < 4 else 1 + t % 2  # topics 4, 5 lack the higher grades
        grades = rng.integers(0, top + 1, size=int(rng.integers(8, 30)))
        docs = {f"t{t}d{i}": int(gr) for i, gr in enumerate(grades)}
        docs |= {f"t{t}u{i}": -1 for i in range(3)}
        qrels[f"T{t}"] = docs
        pool = list(docs) + [f"t{t}x{i}" for i in range(5)]
        for s in range(4):
            k = int(rng.integers(1, len(pool)))
            lists[f"run{s}"][f"T{t}"] = list(rng.permutation(pool)[:k])
    tensor = tensor_of(qrels, lists)
    for s, run in enumerate(tensor.runs):
        for ti, topic in enumerate(tensor.topics):
            ranking = lists[run][topic]
            grades = [qrels[topic].get(d) for d in ranking]
            grades = [None if gr is None or gr < 0 else gr for gr in grades]
            counts = {}
            for gr in qrels[topic].values():
                if gr >= 0:
                    counts[gr] = counts.get(gr, 0) + 1
            truth[s, ti] = (grades, counts)
    return tensor, truth


REFERENCE_CASES = [
    ("GAP", lambda gr, c: ref_gap(gr, c, (1 / 3, 1 / 3, 1 / 3))),
    ("GAP(g=(0.1,0.3,0.6))", lambda gr, c: ref_gap(gr, c, (0.1, 0.3, 0.6))),
    ("GAP(g=(0,0.5,0.5))", lambda gr, c: ref_gap(gr, c, (0, 0.5, 0.5))),
    ("GAP(g=(0.2,0.3,0.4,0.1))", lambda gr, c: ref_gap(gr, c, (0.2, 0.3, 0.4, 0.1))),
    ("eGAP", lambda gr, c: ref_egap(gr, c, (1 / 3, 1 / 3, 1 / 3))),
    ("eGAP(g=(0.1,0.3,0.6))", lambda gr, c: ref_egap(gr, c, (0.1, 0.3, 0.6))),
    ("xGAP", lambda gr, c: ref_xgap(gr, c, (1 / 3, 1 / 3, 1 / 3))),
    ("xGAP(g=(0.1,0.3,0.6))", lambda gr, c: ref_xgap(gr, c, (0.1, 0.3, 0.6))),
    ("xGAP(g=(0,0.2,0.8))", lambda gr, c: ref_xgap(gr, c, (0, 0.2, 0.8))),
    ("xGAP(g=(0,0,1))", lambda gr, c: ref_xgap(gr, c, (0, 0, 1))),
    ("Q", lambda gr, c: ref_q(gr, c)),
    ("Q(beta=0.5,gains={1:1,2:3,3:7})", lambda gr, c: ref_q(gr, c, 0.5, {1: 1, 2: 3, 3: 7})),
    ("Q(beta=2,rel=2)", lambda gr, c: ref_q(gr, c, 2.0, rel=2)),
    ("RBP", lambda gr, c: ref_rbp(gr, 0.8, 3)),
    ("RBP(p=0.95)", lambda gr, c: ref_rbp(gr, 0.95, 3)),
    ("RBP_resid(p=0.9)", lambda gr, c: ref_rbp_resid(gr, 0.9)),
    ("ERR", lambda gr, c: ref_err(gr, 3)),
    ("ERR@5", lambda gr, c: ref_err(gr, 3, 5)),
    ("nERR@5", lambda gr, c: ref_nerr(gr, c, 3, 5)),
    ("nERR", lambda gr, c: ref_nerr(gr, c, 3)),
    ("Bpref_R", lambda gr, c: ref_bpref(gr, c, "R")),
    ("Bpref_N", lambda gr, c: ref_bpref(gr, c, "N")),
]


@pytest.mark.parametrize("measure, reference", REFERENCE_CASES, ids=[c[0] for c in REFERENCE_CASES])
def test_against_reference_implementation(random_world, measure, reference):
    tensor, truth = random_world
    got = value(measure, tensor)
    expected = np.array(
        [[reference(*truth[s, t]) for t in range(tensor.n_topics)] for s in range(tensor.n_runs)]
    )
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    assert np.any(expected > 0)


def test_condensed_against_reference(random_world):
    tensor, truth = random_world
    got = value("GAP'", tensor)
    for s in range(tensor.n_runs):
        for t in range(tensor.n_topics):
            grades, counts = truth[s, t]
            judged = [gr for gr in grades if gr is not None]
            assert got[s, t] == pytest.approx(ref_gap(judged, counts, (1 / 3,) * 3), abs=1e-12)


# ============================================================================ reductions to AP
@pytest.mark.parametrize("family", ["GAP", "xGAP", "eGAP"])
def test_gap_family_with_g_on_grade1_is_ap(random_world, family):
    tensor, _ = random_world
    ap = value("AP", tensor)
    np.testing.assert_allclose(value(f"{family}(g=(1,0,0))", tensor), ap, rtol=1e-12, atol=1e-15)
    assert ap.max() > 0


@pytest.mark.parametrize("family", ["GAP", "xGAP", "eGAP"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_gap_family_with_all_mass_on_k_is_ap_at_threshold_k(random_world, family, k):
    tensor, _ = random_world
    g = tuple(1.0 if j == k else 0.0 for j in (1, 2, 3))
    expected = value(f"AP(rel={k})", tensor)
    np.testing.assert_allclose(
        parse_measure(f"{family}(g={g})").compute(tensor), expected, rtol=1e-12, atol=1e-15
    )
    assert expected.max() > 0


def test_gap_binary_qrels_default_is_ap():
    t = tensor_of({"t": {"a": 1, "b": 0, "c": 1, "d": 1}}, {"r": {"t": ["b", "a", "x", "c"]}})
    ap = (1 / 2 + 2 / 4) / 3
    for family in ("GAP", "xGAP", "eGAP"):
        assert value(family, t)[0, 0] == pytest.approx(ap)


def test_q_beta_zero_is_ap(random_world):
    tensor, _ = random_world
    np.testing.assert_allclose(value("Q(beta=0)", tensor), value("AP", tensor), rtol=1e-12)
    np.testing.assert_allclose(
        value("Q(beta=0,rel=2)", tensor), value("AP(rel=2)", tensor), rtol=1e-12
    )
    assert not np.allclose(value("Q", tensor), value("AP", tensor))


# ============================================================================ hand examples
def test_q_hand_example():
    # Grades: run = [2, 0, 1], qrels R = {2: 1, 1: 2} (one grade-1 doc unretrieved); gains = grade.
    # Ideal gains 2, 1, 1 -> CG* = 2, 3, 4.  BR(1) = (1 + 2)/(1 + 2) = 1;
    # BR(3) = (2 + 3)/(3 + 4) = 5/7.  Q = (1 + 5/7)/3.
    t = tensor_of({"t": {"a": 2, "b": 0, "c": 1, "d": 1}}, {"r": {"t": ["a", "b", "c"]}})
    assert value("Q", t)[0, 0] == pytest.approx((1 + 5 / 7) / 3)
    # Q@2 divides by min(2, R) = 2 and sees only rank 1.
    assert value("Q@2", t)[0, 0] == pytest.approx(1 / 2)
    # beta = 3: BR(3) = (2 + 9)/(3 + 12).
    assert Q(beta=3).compute(t)[0, 0] == pytest.approx((1 + 11 / 15) / 3)


def test_q_not_monotone_under_upward_swaps():
    """Moving a relevant document above a non-relevant one can lower Q (beta > 0).

    Found by the property tests. Qrels: one grade-3 and one grade-1 document (R = 2, CG* = 3, 4).
    Ranking [0, 0, 3, 1]: BR(3) = (1 + 3)/(3 + 4) = 4/7, BR(4) = (2 + 4)/(4 + 4) = 3/4.
    Swapping the grade-1 document up to rank 2, [0, 1, 3, 0]: BR(2) = (1 + 1)/(2 + 4) = 1/3,
    BR(3) = (2 + 4)/(3 + 4) = 6/7. Q falls from 0.661 to 0.595 while AP rises: the early
    low-gain document is compared with an ideal that already holds the grade-3 one. This is
    the definition (Sakai; NTCIREVAL), not an implementation error.
    """
    qrels = {"t": {"n1": 0, "n2": 0, "hi": 3, "lo": 1}}
    t = tensor_of(
        qrels, {"before": {"t": ["n1", "n2", "hi", "lo"]}, "after": {"t": ["n1", "lo", "hi", "n2"]}}
    )
    q = value("Q", t)[:, 0]
    assert q[0] == pytest.approx((4 / 7 + 3 / 4) / 2)
    assert q[1] == pytest.approx((1 / 3 + 6 / 7) / 2)
    assert q[1] < q[0]
    ap = value("AP", t)[:, 0]
    assert ap[1] > ap[0]


def test_xgap_not_monotone_under_upward_swaps():
    """Swapping a grade-2 document above a grade-1 one can lower xGAP (METHODS §6.4, MATTERS).

    Found by the property tests. R_1 = R_2 = 1, g = (1/2, 1/2): G = (1/2, 1), A(1) = 1/4,
    A(2) = 3/4. Ranks 5, 6 = grades (1, 2): 1/5 * 1/2 * 1/2 + 1/6 * 3/4 * 3/2 = 0.2375.
    Grades (2, 1): 1/5 * 3/4 * 1 + 1/6 * 1/2 * 1 = 0.2333. Before the swap the grade-2
    document's large weight A(2) also multiplies the G(1) credit of the grade-1 document above
    it; after it, that credit goes to the grade-1 document, whose weight A(1)/G(1) = 1/2 is
    smaller. GAP and eGAP rise.
    """
    qrels = {"t": {"n1": 0, "n2": 0, "n3": 0, "n4": 0, "one": 1, "two": 2}}
    before = ["n1", "n2", "n3", "n4", "one", "two"]
    after = ["n1", "n2", "n3", "n4", "two", "one"]
    t = tensor_of(qrels, {"before": {"t": before}, "after": {"t": after}})
    x = value("xGAP", t)[:, 0]
    assert x[0] == pytest.approx(1 / 5 * 1 / 2 * 1 / 2 + 1 / 6 * 3 / 4 * 3 / 2)
    assert x[1] == pytest.approx(1 / 5 * 3 / 4 + 1 / 6 * 1 / 2)
    assert x[1] < x[0]
    for other in ("GAP", "eGAP"):
        v = value(other, t)[:, 0]
        assert v[1] > v[0], other


def test_q_padding_beyond_r():
    # R = 1 (grade 3); the relevant document at rank 4: CG*(4) = CG*(1) = 3.
    t = tensor_of({"t": {"a": 3, "b": 0}}, {"r": {"t": ["b", "x", "y", "a"]}})
    assert value("Q", t)[0, 0] == pytest.approx((1 + 3) / (4 + 3))


P_VALUES = (0.5, 0.8, 0.95)
O8 = {
    0.5: {1: 0.5, 2: 0.75, 5: 0.9688, 10: 0.9990, 20: 1.0, 50: 1.0},
    0.8: {1: 0.2, 2: 0.36, 5: 0.6723, 10: 0.8926, 20: 0.9885, 50: 1.0},
    0.95: {1: 0.05, 2: 0.0975, 5: 0.2262, 10: 0.4013, 20: 0.6415, 50: 0.9231},
}


@pytest.mark.parametrize("p", P_VALUES)
def test_rbp_ideal_list_oracle_o8(p):
    for n_rel, expected in O8[p].items():
        t = graded_list([1] * n_rel, extra_judged={"z": 0})
        got = RBP(p=p).compute(t)[0, 0]
        assert got == pytest.approx(1 - p**n_rel, rel=1e-12)
        assert round(got, 4) == pytest.approx(expected, abs=1e-4)
        # The ideal list is fully judged: only the tail p^R is left.
        assert RBP_resid(p=p).compute(t)[0, 0] == pytest.approx(p**n_rel, rel=1e-12)


def test_rbp_graded_gain_is_grade_over_top_grade():
    t = tensor_of({"t": {"a": 3, "b": 1, "c": 0}}, {"r": {"t": ["b", "a"]}})
    p = 0.5
    assert value("RBP(p=0.5)", t)[0, 0] == pytest.approx((1 - p) * (1 / 3 + 1 * p))
    # raw gains, divided by the highest gain: grade 1 -> 0.5, grade 3 keeps 3, so 0.5 / 3
    assert value("RBP(p=0.5,gains={1:0.5})", t)[0, 0] == pytest.approx((1 - p) * (0.5 / 3 + p))


def test_rbp_takes_raw_gains_like_sakai_and_kando():
    # Sakai & Kando (2008): gains relevant 1, highly relevant 3, RBP divided by the highest (3)
    t = tensor_of({"t": {"a": 2, "b": 1, "c": 0, "d": 1}}, {"r": {"t": ["c", "b", "a", "d"]}})
    for p in (0.5, 0.8, 0.95):
        expected = (1 - p) * (1 / 3 * p + 3 / 3 * p**2 + 1 / 3 * p**3)
        assert value(f"RBP(p={p},gains={{1:1,2:3}})", t)[0, 0] == pytest.approx(expected)
    # the same shape at any scale: gains {1:2,2:6} are {1:1,2:3} twice over
    assert value("RBP(gains={1:2,2:6})", t)[0, 0] == pytest.approx(
        value("RBP(gains={1:1,2:3})", t)[0, 0]
    )


def test_rbp_residual_nothing_judged_beyond_depth_10():
    # O8: judgments stop at depth 10, so everything from rank 11 on is unknown: p^10, whether
    # the list ends at 10 or goes on with unjudged documents.
    judged = {f"j{i}": i % 2 for i in range(10)}
    for tail in (0, 20):
        ranking = list(judged) + [f"x{i}" for i in range(tail)]
        t = tensor_of({"t": judged}, {"r": {"t": ranking}})
        assert value("RBP_resid(p=0.95)", t)[0, 0] == pytest.approx(0.95**10, rel=1e-12)
    assert round(0.95**10, 4) == 0.5987
    # A list with nothing judged at all leaves everything unknown.
    t = tensor_of({"t": {"judged": 1}}, {"r": {"t": [f"x{i}" for i in range(10)]}})
    assert value("RBP_resid(p=0.95)", t)[0, 0] == pytest.approx(1.0)
    assert value("RBP(p=0.95)", t)[0, 0] == 0.0


def test_rbp_residual_counts_unjudged_and_tail():
    # ranks: rel, unpooled, nonrel, pooled-unjudged(-1); d = 4.
    t = tensor_of({"t": {"a": 1, "c": 0, "u": -1}}, {"r": {"t": ["a", "x", "c", "u"]}})
    p = 0.8
    expected = p**4 + (1 - p) * (p**1 + p**3)
    assert value("RBP_resid", t)[0, 0] == pytest.approx(expected)
    assert value("RBP.resid(p=0.8)", t)[0, 0] == pytest.approx(expected)
    # Cut at 2: d = 2, one unknown rank inside.
    assert value("RBP_resid@2", t)[0, 0] == pytest.approx(p**2 + (1 - p) * p)
    # Unanswered topic: nothing seen, residual 1.
    t2 = tensor_of({"t": {"a": 1}, "t2": {"b": 1}}, {"r": {"t": ["a"]}})
    assert value("RBP_resid", t2)[0, 1] == 1.0


def test_err_hand_example():
    # gmax = 3: stop probabilities 7/8 (grade 3), 3/8 (2), 1/8 (1).
    t = tensor_of({"t": {"a": 2, "b": 3, "c": 1, "d": 0}}, {"r": {"t": ["a", "d", "b"]}})
    expected = 3 / 8 + (5 / 8) * 0 / 2 + (5 / 8) * (7 / 8) / 3
    assert value("ERR", t)[0, 0] == pytest.approx(expected)
    ideal = 7 / 8 + (1 / 8) * (3 / 8) / 2
    assert value("nERR@2", t)[0, 0] == pytest.approx((3 / 8) / ideal)


def test_err_binary_is_half_stop_probability():
    t = tensor_of({"t": {"a": 1, "b": 0}}, {"r": {"t": ["b", "a"]}})
    assert value("ERR", t)[0, 0] == pytest.approx(0.5 / 2)
    assert value("nERR", t)[0, 0] == pytest.approx(0.25 / 0.5)


def test_bpref_variants_oracle_o10():
    # Retrieved: 1 non-relevant, then 4 relevant; unretrieved: 3 non-relevant, 2 relevant.
    qrels = {
        "t": {
            "n0": 0,
            "n1": 0,
            "n2": 0,
            "n3": 0,
            "r0": 1,
            "r1": 1,
            "r2": 1,
            "r3": 1,
            "r4": 1,
            "r5": 1,
        }
    }
    t = tensor_of(qrels, {"r": {"t": ["n0", "r0", "r1", "r2", "r3"]}})
    assert value("Bpref", t)[0, 0] == pytest.approx(0.5)  # 4 * (1 - 1/4) / 6
    assert value("Bpref_R", t)[0, 0] == pytest.approx(4 * (1 - 1 / 6) / 6)
    assert value("Bpref_N", t)[0, 0] == pytest.approx(4 * (1 - 1 / 4) / 6)


def test_bpref_variants_differ_with_many_nonrelevant():
    # R = 2, N = 5; 3 non-relevant above the second relevant document.
    qrels = {"t": {"a": 1, "b": 1} | {f"n{i}": 0 for i in range(5)}}
    t = tensor_of(qrels, {"r": {"t": ["a", "n0", "u", "n1", "n2", "b"]}})
    assert value("Bpref", t)[0, 0] == pytest.approx((1 + (1 - 2 / 2)) / 2)
    assert value("Bpref_R", t)[0, 0] == pytest.approx((1 + (1 - 2 / 2)) / 2)
    assert value("Bpref_N", t)[0, 0] == pytest.approx((1 + (1 - 3 / 5)) / 2)


# ============================================================================ degenerate cases
def test_no_user_finds_anything_relevant_scores_zero():
    t = graded_list([1, 2, 0, 1])  # qrels grades 0..2
    for family in ("GAP", "xGAP", "eGAP"):
        assert value(f"{family}(g=(0,0,1))", t)[0, 0] == 0.0  # len(g) > c: nobody at 3
        assert value(f"{family}(g=(0,1))", t)[0, 0] > 0
    t0 = tensor_of({"t": {"a": 0, "b": 0}}, {"r": {"t": ["a", "b"]}})
    for m in ("GAP", "xGAP", "eGAP", "Q", "RBP", "ERR", "nERR", "Bpref_R", "Bpref_N"):
        assert value(m, t0)[0, 0] == 0.0, m


def test_longer_g_means_extra_thresholds_without_documents():
    t = graded_list([2, 1, 0, 1])  # grades 0..2, c = 2
    # Users with threshold 3 find nothing: eGAP drops their term, GAP ignores them.
    assert value("eGAP(g=(0.5,0.25,0.25))", t)[0, 0] == pytest.approx(
        0.75 * value("eGAP(g=(0.6666666666666666,0.3333333333333334))", t)[0, 0]
    )
    assert value("GAP(g=(0.5,0.25,0.25))", t)[0, 0] == pytest.approx(
        value("GAP(g=(0.6666666666666666,0.3333333333333334))", t)[0, 0]
    )


def test_shorter_g_than_grades_is_an_error():
    t = graded_list([3, 1, 0])
    with pytest.raises(ValueError, match="g has 2 threshold probabilities"):
        value("GAP(g=(0.5,0.5))", t)


@pytest.mark.parametrize(
    "text, match",
    [
        ("GAP(g=(0.5,0.6))", "g must sum to 1"),
        ("xGAP(g=(1.5,-0.5))", "non-negative"),
        ("eGAP(g=())", "g must not be empty"),
        ("GAP(g=abc)", "g must"),
        ("RBP(p=1)", "p must be a number"),
        ("RBP(p=0)", "p must be a number"),
        ("RBP_resid(p=1.5)", "p must be a number"),
        ("RBP(gains={1:-2})", r"gains values must be finite numbers \[0, 1e\+12\]"),
        ("Q(beta=1e308)", r"beta must be a finite number in \[0, 1e\+12\]"),
        ("nDCG(gains={1:1e300})", r"gains values must be finite numbers \[0, 1e\+12\]"),
        ("Q(beta=-1)", "beta must be"),
        ("Q(rel=0)", "rel must be a relevance level, a number > 0"),
        ("ERR(gains={1:-3})", "gains values"),
    ],
)
def test_bad_parameters(text, match):
    with pytest.raises(ValueError, match=match):
        parse_measure(text)


def test_names_round_trip():
    for m in (
        GAP(g=(0.1, 0.9)),
        xGAP(g=(0, 1)),
        eGAP(),
        Q(beta=0.5, gains={1: 1, 2: 5}),
        RBP(p=0.95, cutoff=10),
        RBP_resid(p=0.5),
        parse_measure("nERR'@20"),
    ):
        assert parse_measure(str(m)) == m
    # One spelling everywhere: whole numbers print without ".0", as users write them.
    assert str(GAP(g=(1, 0))) == "GAP(g=(1,0))"
    assert str(parse_measure("Q(gains={1:1.0,2:3},beta=1)")) == "Q(gains={1:1,2:3})"
    assert str(parse_measure("RBP(p=0.50)")) == "RBP(p=0.5)"
    assert parse_measure("gap") == GAP()
    assert math.isclose(sum(GAP(g=(0.1, 0.2, 0.7)).g), 1.0)


# ============================================================================ trec_eval fixtures
FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "data" / "trec_eval-fixtures"


@pytest.mark.parametrize(
    "qrels_file, rbp, resid",
    [
        # docs/methods.md O1 (trec_eval -m all_trec -q, out.test.aq) and O2 (out.test.aql).
        ("qrels.test", (0.1861, 0.7628, 0.0212), (0.0610, 0.0001, 0.0)),
        # Graded qrels (grades 0..4): trec_eval rescales gains per topic, metaeval divides by the
        # highest grade of the qrels (METHODS §0), so only topic 301 (whose top grade is 4) agrees.
        ("qrels.rel_level", (0.0465, None, None), (0.0610, 0.0001, 0.4226)),
    ],
)
def test_rbp_against_trec_eval_fixtures(qrels_file, rbp, resid):
    if not (FIXTURES / qrels_file).is_file():
        pytest.skip(f"trec_eval fixtures not found at {FIXTURES}")
    tensor = EvalTensor.build(
        read_run(FIXTURES / "results.test"), read_qrels(FIXTURES / qrels_file)
    )
    assert list(tensor.topics[:3]) == ["301", "302", "303"]
    got_rbp = value("RBP(p=0.9)", tensor)[0]
    got_resid = value("RBP_resid(p=0.9)", tensor)[0]
    for t in range(3):
        if rbp[t] is not None:
            assert round(got_rbp[t], 4) == pytest.approx(rbp[t], abs=1e-12), t
        assert round(got_resid[t], 4) == pytest.approx(resid[t], abs=1e-12), t
    if qrels_file == "qrels.test":
        assert round(got_rbp.mean(), 4) == pytest.approx(0.3234, abs=1e-12)
