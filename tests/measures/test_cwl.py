"""The C/W/L measures (metaeval/measures/cwl.py): values worked out by hand, the relations the
C/W/L framework and the measures' definitions imply (to our own P, RR, RBP, RBP_resid, AP and
between C/W/L measures), invariances of the computation (dense or sparse path, blocks of
rows), the measures that are not monotone under upward swaps by definition, names, and the
errors a user meets. cwl_eval itself is the oracle of tests/oracle/test_cwl_eval.py."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from metaeval import EvalTensor, Qrels, RunSet
from metaeval.measures import cwl as cwl_module
from metaeval.measures import parse_measure, registered
from metaeval.measures.base import MeasureValueError
from metaeval.measures.binary import AP, RR, P
from metaeval.measures.cwl import OUTPUTS, CWLMeasure
from metaeval.measures.graded import RBP, RBP_resid

CWL = {c.name: c for c in registered().values() if c.__module__ == "metaeval.measures.cwl"}


def tensor_of(qrels: dict, lists: dict[str, dict[str, list[str]]]) -> EvalTensor:
    """Tensor of runs given as ranked doc-id lists per topic (scores descending)."""
    runs = {
        name: {
            t: {d: float(len(docs) - i) for i, d in enumerate(docs)} for t, docs in topics.items()
        }
        for name, topics in lists.items()
    }
    return EvalTensor.build(RunSet.from_dict(runs), Qrels.from_dict(qrels))


def value(measure: str, tensor: EvalTensor, output: str | None = None) -> np.ndarray:
    m = parse_measure(measure)
    if output is not None:
        m = dataclasses.replace(m, output=output)
    return m.compute(tensor)


def random_tensor(seed: int, *, top: int = 3, n_topics: int = 5, n_runs: int = 4) -> EvalTensor:
    """Grades 0..top, unjudged (-1) rows, unpooled documents, lists of 1 to 40 documents, a
    topic one run does not answer."""
    rng = np.random.default_rng(seed)
    qrels, runs = {}, {f"r{s}": {} for s in range(n_runs)}
    for t in range(n_topics):
        topic = f"t{t}"
        grades = rng.integers(0, top + 1, int(rng.integers(1, 30)))
        grades[0] = top
        qrels[topic] = {f"{topic}d{i}": int(g) for i, g in enumerate(grades)}
        qrels[topic] |= {f"{topic}u{i}": -1 for i in range(int(rng.integers(0, 4)))}
        for s in range(n_runs):
            if (s, t) == (0, 1):
                continue  # a topic the run did not answer
            pool = list(qrels[topic]) + [f"{topic}x{i}" for i in range(int(rng.integers(0, 10)))]
            docs = rng.permutation(pool)[: int(rng.integers(1, min(len(pool), 40) + 1))]
            runs[f"r{s}"][topic] = {d: float(-i) for i, d in enumerate(docs)}
    return EvalTensor.build(RunSet.from_dict(runs), Qrels.from_dict(qrels))


# ------------------------------------------------------------------------------- by hand
def test_precision_by_hand():
    # ranks a(1) u(unjudged) b(0) c(1) x(unpooled); k = 3 reads a, u, b
    t = tensor_of({"t": {"a": 1, "b": 0, "c": 1, "u": -1}}, {"r": {"t": ["a", "u", "b", "c", "x"]}})
    got = {o: value("CWL_P@3", t, o)[0, 0] for o in OUTPUTS}
    expected = {"EU": 1 / 3, "ETU": 1, "EC": 1, "ETC": 3, "ED": 3}
    # the upper bound gives u the gain 1: EU 2/3, ETU 2; W and L do not depend on the gains
    expected |= {"ResEU": 1 / 3, "ResETU": 1, "ResEC": 0, "ResETC": 0, "ResED": 0}
    assert got == pytest.approx(expected, abs=1e-15)


def test_reciprocal_rank_by_hand():
    # 0, unjudged, 1: the lower bound stops at rank 3, the upper at rank 2
    t = tensor_of({"t": {"a": 0, "b": 1, "u": -1}}, {"r": {"t": ["a", "u", "b"]}})
    got = {o: value("CWL_RR", t, o)[0, 0] for o in OUTPUTS}
    assert got == pytest.approx(
        {
            **{"EU": 1 / 3, "ETU": 1, "EC": 1, "ETC": 3, "ED": 3},
            **{"ResEU": 1 / 2 - 1 / 3, "ResETU": 0, "ResEC": 0, "ResETC": -1, "ResED": -1},
        },
        abs=1e-15,
    )


def test_inst_by_hand():
    """One relevant document at rank 1, T = 1: T(i) = 0 from rank 1 on, C(i) = (i/(i+1))^2,
    so prod_{j<i} C(j) = 1/i^2 and EU = 1 / sum_{i<=n} i^-2, ED = sum_{i<=n} i^-2,
    ETU = 1 - 1/(n+1)^2. Upper bound: every notional item has gain 1, T(i) = 1 - i, C(i) = 1/4:
    EU = 1, ED = (4/3)(1 - 4^-n)."""
    t = tensor_of({"t": {"a": 1}}, {"r": {"t": ["a"]}})
    n = 50
    s2 = sum(i**-2 for i in range(1, n + 1))
    got = {o: value(f"INST(max_depth={n})", t, o)[0, 0] for o in ("EU", "ETU", "ED", "ResEU")}
    assert got["EU"] == pytest.approx(1 / s2, rel=1e-13)
    assert got["ED"] == pytest.approx(s2, rel=1e-13)
    assert got["ETU"] == pytest.approx(1 - 1 / (n + 1) ** 2, rel=1e-13)
    assert got["ResEU"] == pytest.approx(1 - 1 / s2, rel=1e-13)
    assert value(f"INST(max_depth={n})", t, "ResED")[0, 0] == pytest.approx(
        (4 / 3) * (1 - 4.0**-n) - s2, rel=1e-13
    )


def test_sdcg_by_hand():
    t = tensor_of({"t": {"a": 2, "b": 0, "c": 1}}, {"r": {"t": ["a", "b", "c"]}})
    discounts = [1 / math.log2(i + 1) for i in (1, 2, 3)]
    # gains grade / 2: 1, 0, 1/2
    assert value("SDCG@3", t)[0, 0] == pytest.approx(
        (1 + 0.5 * discounts[2]) / sum(discounts), abs=1e-15
    )


def test_bpm_budgets_by_hand():
    # gains 1/3, 1, 1/3, 1 (grades / 3): the benefit budget T = 1.2 is spent at rank 2,
    # the cost budget K = 3 (cost 1 an item) at rank 3
    t = tensor_of({"t": {"a": 1, "b": 3, "c": 1, "d": 3}}, {"r": {"t": ["a", "b", "c", "d"]}})
    assert value("BPM(T=1.2,K=10)", t, "ED")[0, 0] == 2
    assert value("BPM(T=10,K=3)", t, "ED")[0, 0] == 3
    assert value("BPM(T=10,K=3,cost=2)", t, "ED")[0, 0] == 2  # K(2) = 4 >= 3
    assert value("BPM(T=10,K=3,cost=2)", t, "ETC")[0, 0] == 4
    assert value("BPM(T=1.2,K=10)", t)[0, 0] == pytest.approx((1 / 3 + 1) / 2, abs=1e-15)


# ------------------------------------------------------------------------------- relations
def test_relations_to_our_measures_of_the_same_name():
    """On binary qrels, CWL_P@k's and CWL_RR's EU are P@k and RR; CWL_AP's EU times the
    relevant documents retrieved is AP times R; CWL_RBP's EU is RBP over 1 - theta^n (graded:
    both divide the grades by the highest), and its ResEU is (RBP_resid - theta^n) /
    (1 - theta^n)."""
    binary = random_tensor(3, top=1)
    for k in (1, 5, 20):
        np.testing.assert_allclose(value(f"CWL_P@{k}", binary), P(cutoff=k)(binary), atol=1e-14)
    np.testing.assert_allclose(value("CWL_RR", binary), RR()(binary), atol=1e-14)
    found = value("NumRelRet", binary)
    np.testing.assert_allclose(
        value("CWL_AP", binary) * found, AP()(binary) * binary.n_relevant()[None, :], atol=1e-12
    )
    graded = random_tensor(4, top=3)
    n, theta = 60, 0.97
    measure = f"CWL_RBP(theta={theta},max_depth={n})"
    scale = 1 - theta**n
    np.testing.assert_allclose(
        value(measure, graded) * scale, RBP(p=theta, cutoff=n)(graded), atol=1e-14
    )
    np.testing.assert_allclose(
        value(measure, graded, "ResEU"),
        (RBP_resid(p=theta, cutoff=n)(graded) - theta**n) / scale,
        atol=1e-14,
    )


@pytest.mark.parametrize(
    "one, other, outputs",
    [
        # NPV is RBP with theta = 1/(1 + rate)
        ("NPV(rate=0.25)", "CWL_RBP(theta=0.8)", OUTPUTS),
        # beta = 1: no diminishing returns, W uniform on the first k ranks
        ("SET(beta=1)@7", "CWL_P@7", OUTPUTS),
        # a benefit budget never spent and a cost budget of k items
        ("BPM(T=1000,K=7)", "CWL_P@7", OUTPUTS),
        ("BPM_dynamic(T=1000,K=7,hb=0)", "CWL_P@7", OUTPUTS),
        ("BPM_dynamic(hb=0)", "BPM", OUTPUTS),
        # R1 = 0: C = 1 - 1/(1 + b1) = b1/(1 + b1), RBP's constant
        ("IFT_goal(T=2,b1=4,R1=0)", "CWL_RBP(theta=0.8)", OUTPUTS),
        ("IFT_rate(A=0.2,b2=0.25,R2=0)", "CWL_RBP(theta=0.8)", OUTPUTS),
        # phi = 1, gains 0 or 1: the first relevant item stops the user, as RR's
        ("NERR_eq10(phi=1)", "CWL_RR", OUTPUTS),
        # TBG with a cost of 1 an item has RBP's W, theta = 2^(-1/h); only L ends at n
        ("TBG(halflife=5)", f"CWL_RBP(theta={2**-0.2!r})", ("EU", "EC", "ED", "ResEU")),
    ],
)
def test_relations_between_cwl_measures(one, other, outputs):
    t = random_tensor(5, top=1)
    for output in outputs:
        np.testing.assert_allclose(
            value(one, t, output), value(other, t, output), rtol=1e-12, atol=1e-12, err_msg=output
        )


#: Measures whose C(n) = 0 at the default depth (or whose users have all stopped by then).
STOPPING = [
    "CWL_P@10",
    "SDCG@10",
    "TBG(halflife=5)",
    "Umeasure(L=20)",
    "BPM",
    "BPM_dynamic",
    "NERR_eq8@10",
    "NERR_eq9@10",
    "SET",
]


@pytest.mark.parametrize("measure", STOPPING)
def test_totals_are_rates_times_depth_when_every_user_stops(measure):
    """sum_{k>=i} L(k) = prod_{j<i} C(j) = W(i) ED when no user reads past n: ETU = EU x ED
    and ETC = EC x ED (cwl_eval's README), upper bounds included."""
    t = random_tensor(6)
    get = {o: value(measure, t, o) for o in OUTPUTS}
    np.testing.assert_allclose(get["ETU"], get["EU"] * get["ED"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(get["ETC"], get["EC"] * get["ED"], rtol=1e-12, atol=1e-12)
    upper = {o: get[o] + get["Res" + o] for o in ("EU", "ETU", "EC", "ED")}
    np.testing.assert_allclose(upper["ETU"], upper["EU"] * upper["ED"], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CWL))
def test_outputs_within_their_bounds(name):
    """EU in [0, max_gain], EC = cost (W sums to 1), ED in [1, n], and, where W does not
    depend on the gains, residuals of EC, ETC and ED of 0 and of EU >= 0."""
    example = CWL[name].example()
    t = random_tensor(8)
    for cost in (1.0, 2.5):
        m = dataclasses.replace(example, cost=cost, max_depth=80)
        get = {o: dataclasses.replace(m, output=o).compute(t) for o in OUTPUTS}
        for o, values in get.items():
            lo, hi = dataclasses.replace(m, output=o).bounds
            assert np.all(values >= lo - 1e-12) and np.all(values <= hi + 1e-12), (name, o)
        np.testing.assert_allclose(get["EC"], cost, rtol=1e-12)
    fixed = {"CWL_P", "CWL_RBP", "NPV", "SDCG", "INSQ", "SET", "TBG", "Umeasure"}
    assert fixed <= set(CWL)
    if name in fixed:
        m = dataclasses.replace(example, max_depth=80)
        for o in ("ResEC", "ResETC", "ResED"):
            assert np.all(dataclasses.replace(m, output=o).compute(t) == 0), o
        assert np.all(dataclasses.replace(m, output="ResEU").compute(t) >= 0)


def test_fully_judged_lists_to_the_depth_have_no_residual():
    # every list holds max_depth judged documents: nothing is unknown (to rounding: a measure
    # with fixed weights takes the unknown ranks' weight as the whole minus the judged ones')
    qrels = {"t": {f"d{i}": i % 3 for i in range(12)}}
    t = tensor_of(qrels, {"r": {"t": [f"d{i}" for i in range(12)]}})
    for name, cls in CWL.items():
        m = dataclasses.replace(cls.example(), max_depth=12)
        for o in OUTPUTS[5:]:
            got = dataclasses.replace(m, output=o).compute(t)[0, 0]
            assert got == pytest.approx(0, abs=1e-14), (name, o)


def test_fewer_judgments_widen_the_residual():
    t = random_tensor(9)
    keep = np.random.default_rng(0).random(len(t.judgments)) < 0.5
    fewer = t.with_judgments(keep)
    for measure in ("CWL_RBP", "CWL_P@10", "SDCG@10", "INSQ"):
        assert np.all(value(measure, fewer, "ResEU") >= value(measure, t, "ResEU") - 1e-15)
        assert np.all(value(measure, fewer) <= value(measure, t) + 1e-15)


def test_a_topic_the_run_did_not_answer():
    """An empty list is all notional items: EU = ETU = 0, the model's own depth and costs,
    and, for RBP, a residual of max_gain (every item unknown); missing="skip" leaves it out."""
    t = random_tensor(10)
    assert not t.answered[0, 1]
    assert value("CWL_RBP", t)[0, 1] == 0 and value("CWL_RBP", t, "ETU")[0, 1] == 0
    assert value("CWL_RBP", t, "ResEU")[0, 1] == pytest.approx(1, abs=1e-14)
    half = "CWL_RBP(gains={1:0.1,2:0.3,3:0.5},max_gain=0.5)"
    assert value(half, t, "ResEU")[0, 1] == pytest.approx(0.5, abs=1e-14)
    assert value("CWL_P@10", t, "ED")[0, 1] == 10


# ------------------------------------------------------------------------------- computation
@pytest.mark.parametrize("name", sorted(CWL))
def test_dense_sparse_and_blocks_agree(name, monkeypatch):
    """The sparse entries and the dense codes give the same codes, hence identical values;
    blocks of 3 rows the values of one block (to an ulp: BLAS sums a matrix-vector product in
    an order that can depend on the number of rows); and a measure whose W does not depend on
    the gains the same values from its judged entries as from the blocks (which give its C
    the gains: a measure wrongly marked so would differ)."""
    t = random_tensor(11)
    m = dataclasses.replace(CWL[name].example(), max_depth=50)
    for o in OUTPUTS:
        mo = dataclasses.replace(m, output=o)
        sparse, dense = mo.compute(t.using("sparse")), mo.compute(t.using("dense"))
        np.testing.assert_array_equal(sparse, dense, err_msg=o)
        whole = mo._compute_blocks(t.using("sparse"))
        np.testing.assert_array_equal(mo._compute_blocks(t.using("dense")), whole, err_msg=o)
        with monkeypatch.context() as patch:
            patch.setattr(cwl_module, "_BLOCK_CELLS", 3 * 50)  # 3 rows a block
            blocks = mo._compute_blocks(t.using("sparse"))
        np.testing.assert_allclose(blocks, whole, rtol=1e-13, atol=1e-13, err_msg=o)
        np.testing.assert_allclose(sparse, whole, rtol=1e-12, atol=1e-12, err_msg=o)
    assert CWL[name].fixed_weights == (
        name in {"CWL_P", "CWL_RBP", "NPV", "SDCG", "INSQ", "SET", "TBG", "Umeasure"}
    )


def test_depth_cuts_and_pads():
    # a list longer than the depth is cut (the relevant item at rank 4 is not seen)
    t = tensor_of({"t": {"a": 0, "b": 0, "c": 0, "d": 1}}, {"r": {"t": ["a", "b", "c", "d"]}})
    assert value("CWL_RR(max_depth=3)", t)[0, 0] == 0
    assert value("CWL_RR(max_depth=3)", t, "ED")[0, 0] == 3
    assert value("CWL_RR(max_depth=4)", t)[0, 0] == 0.25
    # k above the depth: every rank of the depth read, no user stops within it
    assert value("CWL_P(max_depth=4)@10", t, "ED")[0, 0] == 4
    assert value("CWL_P(max_depth=4)@10", t, "ETU")[0, 0] == 0


def test_condensed_variant_removes_unjudged_documents():
    qrels = {"t": {"a": 1, "b": 0, "c": 2, "u": -1}}
    t = tensor_of(
        qrels, {"with": {"t": ["x", "a", "u", "b", "c"]}, "without": {"t": ["a", "b", "c"]}}
    )
    for name, cls in CWL.items():
        m = cls.example()
        condensed = m.condensed().compute(t)[:, 0]
        assert condensed[0] == condensed[1] == m.compute(t)[1, 0], name


def test_unjudged_and_unpooled_documents_are_alike():
    # qrels grade -1 (pooled, unjudged) and a document absent from the qrels: both unknown
    t = tensor_of({"t": {"a": 1, "u": -1}}, {"r1": {"t": ["u", "a"]}, "r2": {"t": ["x", "a"]}})
    for o in OUTPUTS:
        v = value("INST(T=2)", t, o)[:, 0]
        assert v[0] == v[1], o


# ------------------------------------------------------------------------------- not monotone
def swap_values(measure: str, before: list[int], after: list[int]) -> np.ndarray:
    """The measure on a ranking of documents of grades ``before`` and on the same documents
    ranked as ``after`` (each grade a distinct document; qrels grades 0..3)."""
    docs = {f"d{i}": g for i, g in enumerate(before)}
    order = list(docs)
    remaining = dict(docs)
    moved = []
    for g in after:
        d = next(d for d in order if d in remaining and remaining[d] == g)
        moved.append(d)
        del remaining[d]
    qrels = {"t": docs | {"top": 3}}
    return value(measure, tensor_of(qrels, {"a": {"t": order}, "b": {"t": moved}}))[:, 0]


def test_rr_not_monotone_under_upward_swaps():
    """Swapping a grade-1 document above a grade-0 one at rank 1 can lower CWL_RR (graded): the
    user now stops at the grade-1 document, gain 1/3 at rank 1, instead of the grade-3 one at
    rank 2, gain 1 at rank 2. That is cwl_eval's RR (any positive gain stops the user)."""
    v = swap_values("CWL_RR", [0, 3, 1], [1, 3, 0])
    assert v == pytest.approx([1 / 2, 1 / 3], abs=1e-15)


def test_bpm_not_monotone_under_upward_swaps():
    """BPM (T = 1): gains 0, 2/3, 0, 1 spend the benefit budget at rank 4, EU = (5/3)/4;
    moving a grade-1 document up to rank 3, gains 0, 2/3, 1/3 spend it at rank 3, before the
    grade-3 document: EU = 1/3. BPM_dynamic (hb = 1, gain_med = 0.5): gains 0, 1/3, 1 stop the
    user at rank 3, EU = 4/9; moving the grade-2 document up to rank 2, T(2) = 1/2 is already
    spent there: EU = (2/3)/2."""
    assert swap_values("BPM", [0, 2, 0, 3, 3, 1], [0, 2, 1, 3, 3, 0]) == pytest.approx(
        [5 / 12, 1 / 3], abs=1e-15
    )
    assert swap_values("BPM_dynamic", [0, 1, 3, 3, 2], [0, 2, 3, 3, 1]) == pytest.approx(
        [4 / 9, 1 / 3], abs=1e-15
    )


@pytest.mark.parametrize(
    "measure, before, after",
    [
        ("IFT_goal(T=2,b1=0.9,R1=10)", [0, 2, 2, 3, 1, 3], [0, 2, 3, 2, 1, 3]),
        ("IFT_rate(A=0.2,b2=0.9,R2=10)", [3, 2, 1, 3, 2], [3, 2, 3, 1, 2]),
        ("IFT_goal_rate(T=2,b1=0.9,R1=10,A=0.2,b2=0.9,R2=10)", [2, 3], [3, 2]),
    ],
)
def test_ift_not_monotone_under_upward_swaps(measure, before, after):
    """Gain found earlier brings the goal (or the rate the user expects) closer, and the user
    stops before later gain: the IFT measures can fall when a higher-graded document moves up
    (found by the property tests; the values are cwl_eval's, tests/oracle)."""
    v = swap_values(measure, before, after)
    assert v[1] < v[0] - 1e-6


# ------------------------------------------------------------------------------- names
@pytest.mark.parametrize(
    "text, name",
    [
        ("INST(T=3)", "INST"),
        ("CWL_P@10", "CWL_P"),
        ("CWL_P", "CWL_P"),
        ("U(L=50)", "Umeasure"),
        ("U_measure", "Umeasure"),
        ("BPMD", "BPM_dynamic"),
        ("BPM_static(T=2)", "BPM"),
        ("IFT_C1(T=2,b1=0.9,R1=10)", "IFT_goal"),
        ("IFT_C2(A=0.2,b2=0.9,R2=10)", "IFT_rate"),
        ("IFT_C1_C2(T=2,b1=0.9,R1=10,A=0.2,b2=0.9,R2=10)", "IFT_goal_rate"),
        ("NERReq8@10", "NERR_eq8"),
        ("NERReq11(T=2)", "NERR_eq11"),
        ("CWL_NDCG@10", "SDCG"),
        ("CWL_SDCG@5", "SDCG"),
        ("INST'(output=ResETU)", "INST"),
    ],
)
def test_names_and_aliases(text, name):
    m = parse_measure(text)
    assert m.name == name
    assert parse_measure(str(m)) == m


def test_canonical_names():
    assert str(parse_measure("INST(T=3)")) == "INST(T=3)"
    assert str(parse_measure("INST(T=1.0,output=EU)")) == "INST"
    assert str(parse_measure("INST(T=3,output=ETU)")) == "INST(output=ETU,T=3)"
    assert str(parse_measure("CWL_P")) == "CWL_P@10"
    assert str(parse_measure("CWL_RBP(theta=0.9)")) == "CWL_RBP"
    assert parse_measure("TBG(halflife=22)") == parse_measure("TBG(halflife=22.0)")


def test_our_measures_keep_their_names():
    """P, RR, RBP and AP are ours; their C/W/L versions have names of their own."""
    assert type(parse_measure("P@10")) is P and type(parse_measure("RR")) is RR
    assert type(parse_measure("RBP")) is RBP and type(parse_measure("AP")) is AP
    for name in ("CWL_P", "CWL_RR", "CWL_RBP", "CWL_AP"):
        assert issubclass(type(parse_measure(name)), CWLMeasure)


def test_cli_lists_them(cli):
    code, out, _ = cli(["measures", "--format", "json"])
    assert code == 0
    listed = {d["name"]: d for d in json.loads(out)}
    assert set(CWL) <= set(listed)
    assert listed["INST"]["parameters"]["T"] == 1.0
    assert listed["CWL_RBP"]["parameters"]["theta"] == 0.9
    assert listed["TBG"]["parameters"]["halflife"] == 224.0
    assert listed["INST"]["parameters"]["output"] == "EU"
    code, out, _ = cli(["measures"])
    assert code == 0 and all(f"\n{name}\n" in "\n" + out for name in CWL)


# ------------------------------------------------------------------------------- errors
def graded() -> EvalTensor:
    return tensor_of({"t": {"a": 3, "b": 0}}, {"r": {"t": ["a", "b"]}})


def test_a_gain_above_max_gain_is_refused_as_cwl_eval_refuses_it():
    with pytest.raises(MeasureValueError) as info:
        value("CWL_RBP(gain=grade)", graded())
    assert str(info.value) == (
        "CWL_RBP(gain=grade): the gain of grade 3 is 3, above max_gain=1; give max_gain=3 "
        "(cwl_eval's --max_gain) or use gain=scaled"
    )
    assert value("CWL_RBP(gain=grade,max_gain=3)", graded())[0, 0] > 0


def test_inst_and_nerr_need_gains_in_unit_range():
    for name in ("INST", "NERR_eq10"):
        with pytest.raises(MeasureValueError) as info:
            value(f"{name}(gain=grade)", graded())
        assert str(info.value) == (
            f"{name}(gain=grade): gains must be in [0, 1] ({name}'s C(i) assumes it), got 3 "
            "for grade 3; use gain=scaled or gains= values <= 1"
        )
    with pytest.raises(MeasureValueError) as info:
        parse_measure("INST(max_gain=2)")
    assert info.value.param == "max_gain"
    assert "max_gain must be a number in (0, 1], got 2" in str(info.value)


@pytest.mark.parametrize(
    "text, param, message",
    [
        ("IFT_goal", "T", "IFT_goal needs T, b1, R1, e.g. IFT_goal(T=2,b1=0.9,R1=10)"),
        ("IFT_goal(T=2,R1=1)", "b1", "IFT_goal needs T, b1, R1, e.g."),
        ("IFT_rate(A=1,b2=1)", "R2", "IFT_rate needs A, b2, R2, e.g."),
        ("IFT_goal_rate(T=2,b1=0.9,R1=10)", "A", "IFT_goal_rate needs T, b1, R1, A, b2, R2"),
        ("SDCG", "k", "SDCG needs a cutoff, e.g. SDCG@10"),
        ("NERR_eq8", "k", "NERR_eq8 needs a cutoff, e.g. NERR_eq8@10"),
        ("INST(output=EUU)", "output", "INST: output must be one of EU, ETU, EC, ETC, ED,"),
        ("INST(T=0.4)", "T", "INST: T must be a number in [0.5, "),
        ("Umeasure(max_depth=1)", "max_depth", "Umeasure: max_depth must be an integer in [2, "),
        ("CWL_RBP(theta=1.5)", "theta", "CWL_RBP: theta must be a probability in [0, 1]"),
        ("CWL_P@0", "k", "CWL_P: k must be an integer in [1, "),
        ("SET(beta=0)", "beta", "SET: beta must be a number in (0, 1]"),
        ("TBG(halflife=0)", "halflife", "TBG: halflife must be a number in (0, "),
        ("CWL_AP(gains={1:-1})", "gains", "CWL_AP: gains values must be finite numbers"),
        ("INST(gain=exp)", "gain", "INST: gain must be one of 'scaled', 'grade'"),
        ("BPM_dynamic(hc=1)", "hc", "BPM_dynamic has no parameter 'hc'"),
    ],
)
def test_bad_parameters(text, param, message):
    with pytest.raises(ValueError) as info:
        parse_measure(text)
    assert info.value.param == param
    assert str(info.value).startswith(f"{text!r}: {message}"), str(info.value)
    assert "\n" not in str(info.value)
