"""trec_eval 10's experimental gain measures: BinG (``binG``), G (``G``), nDCG_rel
(``ndcg_rel``) and RnDCG (``Rndcg``).

Compared with trec_eval 10.0 itself, built from its source (tests/oracle/test_trec_eval10.py),
per topic and on the ``all`` line within 1e-9: on trec_eval's own inputs, on random graded
collections with ties, unjudged, pooled-unjudged and unpooled documents and topics without
relevant documents, and on three TREC DL 2019 runs, under ``-c`` and with ``-l``, ``-J`` and
``-M``, and with gains overridden (trec_eval's ``-m G.1=3.5,2=9.0``). Then hand examples,
real-valued grades, the expected value over tied orderings (the mean over every ordering of
small lists) and BinG's bounds (the least and greatest value over every assignment of grades).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval.data import Qrels, RunSet
from metaeval.engine import EvalTensor
from metaeval.measures import parse_measure
from tests.conftest import FIXTURES, need_data
from tests.measures.test_research import tensor_of
from tests.measures.test_tied_orderings import _case as tied_case
from tests.oracle import test_trec_eval10 as oracle
from tests.oracle.test_trec_eval10 import options, random_collection, run_trec_eval

# The oracle's fixtures, shared rather than copied: trec_eval 10.0 built from its source once
# per session, and three TREC DL 2019 runs unzipped for it.
trec_eval10 = oracle.trec_eval10
dl_files = oracle.dl_files

TOLERANCE = 1e-9
#: trec_eval's output name -> our measure.
OURS = {"binG": "BinG", "G": "G", "ndcg_rel": "nDCG_rel", "Rndcg": "RnDCG"}


# ---------------------------------------------------------------------------- the oracle
def _gains_text(gains: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in gains.items())


def ours(binary, qrels_path: Path, run_path: Path, flags=(), gains=None):
    """trec_eval 10.0's values of the four measures (of G, ndcg_rel and Rndcg with ``gains``)
    with ``-c`` and ``flags``, as {(printed name, topic): value}, and ours as {printed name:
    (T,) values} with the tensor's topics {topic: position}."""
    flags = ("-c", *flags)
    if gains:
        text = _gains_text(gains)
        asked = {f"{n}.{text}": f"{OURS[n]}(gains={gains})" for n in ("G", "ndcg_rel", "Rndcg")}
    else:
        asked = dict(OURS)
    expected = run_trec_eval(binary, qrels_path, run_path, list(asked), flags)
    printed = {name.replace(".", "_", 1): measure for name, measure in asked.items()}
    assert {name for name, _ in expected} == set(printed)
    rel, judged, depth = options(flags)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = metaeval.read_run(run_path, extra_fields="ignore")
        qrels = metaeval.read_qrels(qrels_path)
        tensor = EvalTensor.build(run, qrels, depth=depth, warn_extra_topics=False)
    topics = {str(t): i for i, t in enumerate(tensor.topics)}
    got = {}
    for name, text in printed.items():
        measure = parse_measure(text)
        if rel != 1 and hasattr(measure, "rel"):  # -l: binG and Rndcg (its R = 0 test)
            measure = dataclasses.replace(measure, rel=rel)
        if judged:
            measure = measure.condensed()
        got[name] = measure.compute(tensor)[0]
    return expected, got, topics


def compare(binary, qrels_path: Path, run_path: Path, flags=(), gains=None) -> dict:
    """Every per-topic and ``all`` value of the four measures (:func:`ours`) against trec_eval
    10.0. Returns {"compared", "worst", "nan"}: values compared, largest difference, and
    trec_eval's NaN (Rndcg's 0/0) that metaeval scores 0."""
    expected, got, topics = ours(binary, qrels_path, run_path, flags, gains)
    out = {"compared": 0, "worst": 0.0, "nan": 0}
    for name, mine_all in got.items():
        per_topic = {t: v for (n, t), v in expected.items() if n == name and t != "all"}
        assert set(per_topic) == set(topics), (name, sorted(per_topic))
        values = []
        for topic, value in per_topic.items():
            mine = mine_all[topics[topic]]
            if math.isnan(value):
                # Rndcg divides 0 by 0 when the topic has relevant documents but no
                # positive gain (a gain of 0 given to them): metaeval scores 0.
                assert name.startswith("Rndcg") and mine == 0.0, (name, topic, mine)
                out["nan"] += 1
                value = 0.0
            else:
                assert abs(mine - value) <= TOLERANCE, (
                    str(run_path),
                    flags,
                    name,
                    topic,
                    mine,
                    value,
                )
                out["worst"] = max(out["worst"], abs(mine - value))
                out["compared"] += 1
            values.append(value)
        total = expected[name, "all"]
        if math.isnan(total):
            total = float(np.mean(values))
        assert abs(mine_all.mean() - total) <= TOLERANCE, (str(run_path), flags, name, "all")
        out["worst"] = max(out["worst"], abs(mine_all.mean() - total))
        out["compared"] += 1
    return out


FIXTURE_CASES = [
    ("qrels.test", "results.test", ()),
    ("qrels.test", "results.trunc", ()),  # topic 302 not answered: -c scores it
    ("qrels.test", "results.trunc", ("-M100",)),
    ("qrels.test", "results.trunc", ("-J",)),
    ("qrels.rel_level", "results.test", ()),  # grades 0-4 and -1 (pooled, unjudged)
    ("qrels.rel_level", "results.test", ("-l2",)),
    ("qrels.rel_level", "results.test", ("-J",)),
    ("qrels.rel_level", "results.test", ("-l3", "-J")),
    ("qrels.comment.test", "results.comment.test", ()),
]


@pytest.mark.parametrize(("qrels", "run", "flags"), FIXTURE_CASES)
def test_trec_eval_fixtures(trec_eval10, qrels, run, flags):
    need_data("trec_eval-fixtures")
    out = compare(trec_eval10, FIXTURES / qrels, FIXTURES / run, flags)
    assert out["compared"] >= 4 * 4 and out["worst"] <= TOLERANCE


@pytest.mark.parametrize("flags", [(), ("-J",)])
def test_trec_eval_fixtures_with_gains(trec_eval10, flags):
    # qrels.rel_level: grades 0-4, gains 3.5 (grade 1), 9 (grade 2), 3 and 4 (grades 3, 4)
    need_data("trec_eval-fixtures")
    gains = {1: 3.5, 2: 9.0}
    out = compare(
        trec_eval10, FIXTURES / "qrels.rel_level", FIXTURES / "results.test", flags, gains
    )
    assert out["compared"] == 3 * 4 and out["worst"] <= TOLERANCE


@pytest.fixture(scope="module")
def random_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("random_gain_collections")
    # seed 29 has a topic whose relevant documents all have grade 2
    return [random_collection(seed, folder) for seed in (21, 22, 23, 29)]


@pytest.mark.parametrize("flags", [(), ("-l2",), ("-J",), ("-M7",), ("-l3", "-J")])
def test_random_collections(trec_eval10, random_files, flags):
    for qrels, run in random_files:
        out = compare(trec_eval10, qrels, run, flags)
        assert out["compared"] == 4 * 13 and out["worst"] <= TOLERANCE and out["nan"] == 0


@pytest.mark.parametrize(
    ("gains", "flags"),
    [
        ({1: 1.5, 2: 6.0}, ()),
        ({1: 1.5, 2: 6.0}, ("-J",)),
        ({3: 10.0}, ("-M7",)),
        # judged non-relevant documents with a gain, grade 2 without: trec_eval's Rndcg is
        # 0/0 on a topic whose relevant documents all have grade 2, which metaeval scores 0
        ({0: 1.0, 2: 0.0}, ()),
    ],
)
def test_random_collections_with_gains(trec_eval10, random_files, gains, flags):
    nans = 0
    for qrels, run in random_files:
        out = compare(trec_eval10, qrels, run, flags, gains)
        assert out["compared"] == 3 * 13 - out["nan"] and out["worst"] <= TOLERANCE
        nans += out["nan"]
    assert (nans > 0) == (0 in gains)


@pytest.mark.parametrize("flags", [(), ("-l2",), ("-J",)])
def test_trec_dl_2019_runs(trec_eval10, dl_files, flags):
    qrels, runs = dl_files
    for run in runs:
        out = compare(trec_eval10, qrels, run, flags)
        assert out["compared"] == 4 * 44 and out["worst"] <= TOLERANCE  # 43 topics and all


def test_trec_dl_2019_runs_with_gains(trec_eval10, dl_files):
    qrels, runs = dl_files
    for run in runs:
        out = compare(trec_eval10, qrels, run, (), {1: 1.5, 2: 6.0})
        assert out["compared"] == 3 * 44 and out["worst"] <= TOLERANCE


def test_gains_closer_than_one_are_ordered_by_gain_where_trec_eval_misorders_them(
    trec_eval10, dl_files
):
    # trec_eval sorts its levels with a comparison that keeps the whole part of the gain
    # difference, so 3.5 (grade 1) and 3 (grade 3) compare equal and its ideal list can put
    # the grade-3 documents first. metaeval orders by gain: the values agree on every topic
    # where that cannot matter (no grade-1 or no grade-3 document) and differ on others.
    qrels_path, runs = dl_files
    qrels = metaeval.read_qrels(qrels_path).to_df()
    grades = qrels[qrels["grade"] >= 0].groupby("topic")["grade"].agg(set)
    misordered = {str(t) for t, g in grades.items() if {1, 3} <= g}
    assert 0 < len(misordered) < len(grades)
    expected, got, topics = ours(trec_eval10, qrels_path, runs[0], (), {1: 3.5, 2: 9.0})
    differ = set()
    for name, values in got.items():
        for topic, i in topics.items():
            if abs(values[i] - expected[name, topic]) > TOLERANCE:
                differ.add(topic)
    assert differ and differ <= misordered


EDGE_QRELS = """\
a 0 a1 2
a 0 a2 1
a 0 a3 0
a 0 a4 0
a 0 a5 -1
b 0 b1 1
b 0 b2 0
c 0 c1 0
c 0 c2 0
d 0 d1 3
d 0 d2 3
d 0 d3 1
"""
#: Lists (topic, document, score) of the ideal list's length N, N + 1 and N + 2 (Rndcg's last
#: boundary at the list's length only from N + 2), a topic without relevant documents, ties,
#: an unpooled document.
EDGE_RUNS = {
    "n": ["a a1 2", "a a3 1"],
    "n+1": ["a a1 3", "a a3 2", "a a2 1", "b b2 2", "b b1 1"],
    "n+2": ["a a1 4", "a a3 3", "a a2 2", "a a4 1", "b b2 3", "b x 2", "b b1 1", "c c1 1"],
    "ties": ["a a4 1", "a a2 1", "a a5 1", "a a1 1", "d d3 2", "d x 2", "d d1 1", "d d2 1"],
}


@pytest.mark.parametrize("name", list(EDGE_RUNS))
@pytest.mark.parametrize("flags", [(), ("-l2",), ("-J",)])
def test_small_edge_cases(trec_eval10, tmp_path, name, flags):
    qrels = tmp_path / "qrels"
    qrels.write_text(EDGE_QRELS)
    run = tmp_path / "run"
    lines = (line.split() for line in EDGE_RUNS[name])
    run.write_text("".join(f"{topic} Q0 {doc} 1 {score} r\n" for topic, doc, score in lines))
    out = compare(trec_eval10, qrels, run, flags)
    assert out["compared"] == 4 * 5
    for gains in ({1: 4.0, 3: 1.0}, {0: 0.5, 1: 2.0}):
        assert compare(trec_eval10, qrels, run, flags, gains)["compared"] == 3 * 5


# ---------------------------------------------------------------------------- hand examples
def one_topic(grades: list[int], extra: dict[str, int] | None = None) -> EvalTensor:
    """One topic, one run ranking documents of the given grades (-1: unpooled) in order."""
    docs = [f"d{i:03d}" for i in range(len(grades))]
    judged = {d: g for d, g in zip(docs, grades) if g >= 0}
    return tensor_of({"t": judged | (extra or {})}, {"run": {"t": docs}})


def value(name: str, tensor: EvalTensor) -> float:
    return float(parse_measure(name).compute(tensor)[0, 0])


def test_bing_hand_example():
    # relevant at ranks 1 and 4 (two non-relevant above it), one relevant not retrieved
    t = one_topic([1, 0, -1, 2], {"missed": 1})
    assert value("BinG", t) == pytest.approx((1 + 1 / math.log2(4)) / 3)
    assert value("BinG(rel=2)", t) == pytest.approx(1 / math.log2(5))
    # condensed: the unpooled document goes, one non-relevant document is left above
    assert value("BinG'", t) == pytest.approx((1 + 1 / math.log2(3)) / 3)
    assert value("BinG", one_topic([0, 0], {"x": 0})) == 0.0


def test_g_hand_example_and_why_it_is_not_monotone():
    # ideal gains 3, 2, 1: C*(r) = 3, 5, 6, 7 ...
    first = one_topic([1, 2, 3, 0])
    assert value("G", first) == pytest.approx((1 / 2 + 2 / 2 + 3 / 1) / 6)  # 0.75
    # Moving grade 3 above grade 2 lowers G (0.7321 < 0.75): at rank 2 it is 4 of gain
    # behind C*(2) = 5, which discounts its 3 to 3 / log2(3); the grade-2 document it passes
    # rises only from 2 / log2(2 + 5 - 3) = 1 to 2 / log2(2 + 6 - 6) = 2.
    swapped = one_topic([1, 3, 2, 0])
    assert value("G", swapped) == pytest.approx((1 / 2 + 3 / math.log2(3) + 2) / 6)
    assert value("G", swapped) < value("G", first)
    # the ideal list scores 1, and gains below 1 still cost 1 per rank
    assert value("G", one_topic([3, 2, 1, 0])) == pytest.approx(1.0)
    half = value("G(gains={1:0.5})", one_topic([0, 1]))
    assert half == pytest.approx(0.5 / math.log2(2 + 2 - 0.5) / 0.5)


def test_ndcg_rel_hand_example_and_why_it_is_not_monotone():
    w = [1 / math.log2(r + 1) for r in range(1, 7)]
    t = one_topic([2, 0, 1], {"missed": 1})  # N = 3, ideal gains 2, 1, 1
    ideal = np.cumsum([2 * w[0], w[1], w[2]])
    dcg1, dcg3 = 2 * w[0], 2 * w[0] + w[2]
    expected = (dcg1 / ideal[0] + dcg3 / ideal[2] + dcg3 / ideal[2]) / 3
    assert value("nDCG_rel", t) == pytest.approx(expected)
    # Moving grade 1 above grade 0 can lower it: the grade-1 document's own term becomes the
    # nDCG at rank 3 (0.63) instead of at rank 5 (0.79), which the grade-3 document it passes
    # gains back only in part (0.72 to 0.80).
    before = one_topic([1, 3, 0, 3, 1], {"z": 0})
    after = one_topic([1, 3, 1, 3, 0], {"z": 0})
    assert value("nDCG_rel", after) < value("nDCG_rel", before)


def test_rndcg_boundaries_and_the_last_one_at_the_list_length():
    w = [1 / math.log2(r + 1) for r in range(1, 6)]
    # ideal: grade 2, then grade 1: boundaries at 1 and 2 (N = 2)
    qrels = {"t": {"a": 2, "b": 1, "c": 0, "d": 0}}
    ideal = [2 * w[0], 2 * w[0] + w[1]]
    short = tensor_of(qrels, {"r": {"t": ["a", "c", "b"]}})  # N + 1 ranks: no last boundary
    assert value("RnDCG", short) == pytest.approx((1 + 2 / ideal[1]) / 2)
    long = tensor_of(qrels, {"r": {"t": ["a", "c", "b", "d"]}})  # N + 2: the whole list too
    whole = (2 + w[2]) / ideal[1]
    assert value("RnDCG", long) == pytest.approx((1 + 2 / ideal[1] + whole) / 3)
    # grades of equal gain make one block; R = 0 at the relevance level scores 0
    two = 2 * w[0] + 2 * w[1]  # one block of gain 2, ending at 2
    assert value("RnDCG(gains={1:2})", long) == pytest.approx((2 / two + (2 + 2 * w[2]) / two) / 2)
    assert value("RnDCG(rel=2)", long) > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rel=3 is above the qrels' grades: warned
        assert value("RnDCG(rel=3)", long) == 0.0


def test_names_and_aliases():
    for alias, name in [("binG", "BinG"), ("G", "G"), ("ndcg_rel", "nDCG_rel"), ("Rndcg", "RnDCG")]:
        assert str(parse_measure(alias)) == name
    assert str(parse_measure("nDCG_rel(gains={2:9.0,1:3.5})")) == "nDCG_rel(gains={1:3.5,2:9})"
    assert str(parse_measure("RnDCG(rel=2)")) == "RnDCG(rel=2)"
    # G, nDCG_rel: the relevance level does not apply (trec_eval's -l leaves them alone)
    assert not hasattr(parse_measure("G"), "rel") and not hasattr(parse_measure("nDCG_rel"), "rel")
    assert parse_measure("BinG").at_level(2) == parse_measure("BinG(rel=2)")


def test_real_valued_grades_are_their_own_gains():
    # grades 0.5, 1.25, 2 give what integer grades 1, 2, 3 give with those gains
    rng = np.random.default_rng(3)
    values = {0: 0, 1: 0.5, 2: 1.25, 3: 2}
    rows = [(f"q{t}", f"d{t}_{i}", int(rng.integers(-1, 4))) for t in range(4) for i in range(12)]
    lists = {"r0": {}, "r1": {}}
    for run in lists:
        for t in range(4):
            lists[run][f"q{t}"] = list(rng.permutation([f"d{t}_{i}" for i in range(14)])[:10])
    integer = {t: {} for t in lists["r0"]}
    real = {t: {} for t in lists["r0"]}
    for t, d, g in rows:
        integer[t][d] = g
        real[t][d] = values[g] if g >= 0 else -1
    a, b = tensor_of(integer, lists), tensor_of(real, lists)
    assert not b.integer_grades
    for on_integer, on_real in [
        ("G(gains={1:0.5,2:1.25,3:2})", "G"),
        ("nDCG_rel(gains={1:0.5,2:1.25,3:2})", "nDCG_rel"),
        ("RnDCG(gains={1:0.5,2:1.25,3:2})", "RnDCG"),
        ("RnDCG(gains={1:0.5,2:1.25,3:2},rel=2)", "RnDCG(rel=1.25)"),
        ("BinG(rel=2)", "BinG(rel=1.25)"),
        ("G(gain=exp)", "G(gains={0.5:1,1.25:3,2:7})"),
    ]:
        np.testing.assert_allclose(
            parse_measure(on_integer).compute(a), parse_measure(on_real).compute(b), atol=1e-15
        )


# ---------------------------------------------------------------------------- tied orderings
def test_g_over_tied_orderings_scores_every_ordering_where_order_matters():
    # exact against the mean over every ordering in tests/measures/test_tied_orderings.py
    qrels, frame = tied_case(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tensor = EvalTensor.build(RunSet.from_df(frame, ties="expected"), qrels)
        plain = EvalTensor.build(RunSet.from_df(frame), qrels)
    assert tensor.order_ties
    expected, trec = parse_measure("G").compute(tensor), parse_measure("G").compute(plain)
    assert np.isfinite(expected).all() and not np.allclose(expected, trec)
    # where no group's order matters, G is computed
    q = Qrels.from_df(pd.DataFrame({"topic": "1", "doc": ["a", "b"], "rel": [2, 1]}))
    run = pd.DataFrame(
        {"run": "r", "topic": "1", "doc": ["a", "b", "x", "y"], "score": [3, 2, 1, 1]}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        calm = EvalTensor.build(RunSet.from_df(run, ties="expected"), q)
    assert not calm.order_ties and parse_measure("G").compute(calm)[0, 0] == pytest.approx(1.0)
    assert np.isfinite(parse_measure("G").compute(plain)).all()


# ---------------------------------------------------------------------------- bounds
def _bing(relevant: list[bool], n_rel: int) -> float:
    """trec_eval's loop in m_binG.c, transcribed."""
    total, so_far = 0.0, 0
    for i, rel in enumerate(relevant):
        if rel:
            so_far += 1
            total += 1 / math.log2(3 + i - so_far)
    return total / n_rel if so_far else 0.0


@pytest.mark.parametrize("seed", range(4))
def test_bing_bounds_on_longer_lists_against_every_assignment(seed):
    # Longer lists than the shared case, binary grades: every subset of the unknown
    # documents retrieved relevant, and any number of those outside the list.
    rng = np.random.default_rng(seed)
    rows, lists, brute = [], [], {}
    for t in range(12):
        topic = f"q{t}"
        docs = [f"{topic}d{i}" for i in range(int(rng.integers(4, 13)))]
        kind = rng.choice(["judged", "unjudged", "unpooled"], size=len(docs), p=[0.5, 0.25, 0.25])
        grades = {d: int(rng.integers(0, 2)) for d, k in zip(docs, kind) if k == "judged"}
        pooled = [d for d, k in zip(docs, kind) if k == "unjudged"]
        elsewhere = int(rng.integers(0, 3))
        pooled += [f"{topic}e{i}" for i in range(elsewhere)]
        rows += [(topic, d, g) for d, g in grades.items()]
        rows += [(topic, d, -1) for d in pooled] + [(topic, f"{topic}one", 1)]
        ranking = list(rng.permutation(docs))
        lists += [("r", topic, d, float(len(ranking) - i)) for i, d in enumerate(ranking)]
        unknown = [d for d in ranking if d not in grades]
        outside = len(pooled) - sum(d in ranking for d in pooled)
        n_rel = sum(grades.values()) + 1
        values = []
        for bits in itertools.product([False, True], repeat=len(unknown)):
            chosen = dict(zip(unknown, bits))
            relevant = [bool(grades.get(d, 0)) or chosen.get(d, False) for d in ranking]
            for extra in range(outside + 1):
                values.append(_bing(relevant, n_rel + sum(bits) + extra))
        brute[topic] = (min(values), max(values))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tensor = EvalTensor.build(
            RunSet.from_df(pd.DataFrame(lists, columns=["run", "topic", "doc", "score"])),
            Qrels.from_df(pd.DataFrame(rows, columns=["topic", "doc", "rel"])),
        )
    lo = parse_measure("BinG_lo").compute(tensor)[0]
    hi = parse_measure("BinG_hi").compute(tensor)[0]
    for i, topic in enumerate(tensor.topics):
        assert lo[i] == pytest.approx(brute[topic][0], abs=1e-12), topic
        assert hi[i] == pytest.approx(brute[topic][1], abs=1e-12), topic
