"""The measures trec_eval 10 added or changed: IPrec / IPrecAvg (``iprec_at_recall``,
``11pt_avg``) and their two rounding rules, YAAP (``yaap``), Unjudged@k (``unj_k``), and the
trec_eval conventions of RBP and its residual (``rbp``, ``rbp_resid``).

Hand examples and a plain-Python reference written from trec_eval's C loops; the comparison
with trec_eval 10.0 itself is tests/oracle/test_trec_eval10.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from metaeval.measures import parse_measure
from metaeval.measures.base import MeasureError, canonical_name, trec_eval_name
from metaeval.measures.binary import recall_cut
from tests.measures.test_research import tensor_of, value


def binary_list(rels: list[int], extra_relevant: int = 0, topic: str = "t"):
    """One topic: a run ranking documents of the given grades, plus relevant documents it
    does not retrieve."""
    docs = [f"d{i:04d}" for i in range(len(rels))]
    qrels = dict(zip(docs, rels)) | {f"missed{i}": 1 for i in range(extra_relevant)}
    return tensor_of({topic: qrels}, {"run": {topic: docs}})


def iprec_reference(rels: list[int], n_rel: int, x: float, rounding: str) -> float:
    """trec_eval's loop in m_iprec_at_recall.c, transcribed."""
    cut = math.floor(x * n_rel + 0.9) if rounding == "trec9" else int(math.floor(x * n_rel + 0.5))
    num_ret, rel_ret = len(rels), sum(r >= 1 for r in rels)
    if cut > rel_ret:
        return 0.0
    best, so_far, value_at = rel_ret / num_ret, rel_ret, None
    for i in range(num_ret, 0, -1):
        if so_far == 0:
            break
        best = max(best, so_far / i)
        if rels[i - 1] >= 1:
            if so_far == cut:
                value_at = best
            so_far -= 1
    return best if value_at is None else value_at


# ---------------------------------------------------------------------------- IPrec
def test_recall_cut_rounds_as_lround_and_as_trec_eval_9():
    levels = np.array([0.0, 0.1, 0.25, 0.5, 1.0])
    n_rel = np.array([0, 1, 3, 4, 5])
    ten = recall_cut(levels, n_rel, "nearest")
    nine = recall_cut(levels, n_rel, "trec9")
    # R = 3, x = 0.1: 0.3 -> 0 (lround) or 1 (trunc(0.3 + 0.9)).
    assert ten[1, 2] == 0 and nine[1, 2] == 1
    # R = 1, x = 0.5: a half rounds up (lround), where numpy's round(0.5) would give 0.
    assert ten[3, 1] == 1 and nine[3, 1] == 1
    # R = 5, x = 0.5: 2.5 -> 3 both ways; R = 4, x = 0.25: 1 both ways.
    assert ten[3, 4] == 3 and ten[2, 3] == 1 and nine[2, 3] == 1
    assert (ten[4] == n_rel).all() and (nine[4] == n_rel).all() and (ten[0] == 0).all()


def test_iprec_hand_example():
    # relevant at ranks 2, 3, 6 of 8, R = 4: precisions 1/2, 2/3, 3/6.
    t = binary_list([0, 1, 1, 0, 0, 1, 0, 0], extra_relevant=1)
    assert value("IPrec(recall=0)", t)[0, 0] == pytest.approx(2 / 3)
    assert value("IPrec(recall=0.5)", t)[0, 0] == pytest.approx(2 / 3)  # c = 2
    assert value("IPrec(recall=0.75)", t)[0, 0] == pytest.approx(0.5)  # c = 3
    assert value("IPrec(recall=1)", t)[0, 0] == 0.0  # the 4th is not retrieved
    # x = 0.1: 0.4 -> c = 0 under 10.0, 1 under 9; both read the best precision from rank 2.
    assert value("IPrec(recall=0.1)", t)[0, 0] == pytest.approx(2 / 3)
    # x = 0.6: 2.4 -> c = 2 (10.0) or 3 (9).
    assert value("IPrec(recall=0.6)", t)[0, 0] == pytest.approx(2 / 3)
    assert value("IPrec(recall=0.6,rounding=trec9)", t)[0, 0] == pytest.approx(0.5)
    levels = [iprec_reference([0, 1, 1, 0, 0, 1, 0, 0], 4, x / 10, "nearest") for x in range(11)]
    assert value("IPrecAvg", t)[0, 0] == pytest.approx(sum(levels) / 11)
    assert value("11pt_avg", t)[0, 0] == value("IPrecAvg", t)[0, 0]


@pytest.mark.parametrize("rounding", ["nearest", "trec9"])
def test_iprec_equals_trec_eval_loop_on_random_lists(rounding):
    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(1, 25))
        rels = [int(v) for v in rng.random(n) < rng.uniform(0.1, 0.7)]
        missed = int(rng.integers(0, 6))
        t = binary_list(rels, extra_relevant=missed)
        for x in (0.0, 0.1, 0.2, 0.3, 0.35, 0.5, 0.7, 0.9, 1.0):
            got = value(f"IPrec(recall={x},rounding={rounding})", t)[0, 0]
            want = iprec_reference(rels, sum(rels) + missed, x, rounding)
            assert got == pytest.approx(want, abs=1e-15), (rels, missed, x)


def test_iprec_without_relevant_documents_or_answer_is_zero():
    t = tensor_of({"t": {"a": 0, "b": 0}, "u": {"c": 1}}, {"r": {"t": ["a", "b"]}})
    for m in ("IPrec(recall=0)", "IPrec(recall=1)", "IPrecAvg", "IPrec'(recall=0)"):
        assert (value(m, t) == 0).all(), m


def test_iprec_relevance_level():
    t = binary_list([1, 2, 0, 2])  # rel=2: ranks 2 and 4, R = 2
    assert value("IPrec(recall=1,rel=2)", t)[0, 0] == pytest.approx(0.5)
    assert value("IPrec(recall=0.5,rel=2)", t)[0, 0] == pytest.approx(0.5)
    assert value("IPrec(recall=1)", t)[0, 0] == pytest.approx(0.75)


# ---------------------------------------------------------------------------- YAAP
def test_yaap_is_robertsons_formula():
    t = binary_list([0, 1, 1, 0, 0, 1, 0, 0], extra_relevant=1)
    s = 1 / 2 + 2 / 3 + 3 / 6
    assert value("YAAP", t)[0, 0] == pytest.approx(math.log((1 + s) / (1 + 4 - s)))
    assert value("yaap", t)[0, 0] == value("YAAP", t)[0, 0]
    # monotone in AP on one topic, ln(1 + R) for a perfect list, 0 without relevant documents
    perfect = binary_list([1, 1, 1, 0])
    assert value("YAAP", perfect)[0, 0] == pytest.approx(math.log(4))
    assert value("YAAP", binary_list([0, 0]))[0, 0] == 0.0


def test_yaap_of_a_missing_topic_is_minus_log_1_plus_r_as_trec_eval_c():
    t = tensor_of({"t": {"a": 1}, "u": {"b": 1, "c": 1, "d": 0}}, {"r": {"t": ["a"]}})
    assert value("YAAP", t)[0, 1] == pytest.approx(-math.log(3))


# ---------------------------------------------------------------------------- Unjudged
def test_unjudged_counts_unpooled_and_pooled_unjudged_over_k():
    # ranks: judged, unpooled, pooled-unjudged (-1), judged, unpooled
    t = tensor_of({"t": {"a": 1, "b": 0, "u": -1}}, {"r": {"t": ["a", "x", "u", "b", "y"]}})
    assert value("Unjudged@1", t)[0, 0] == 0.0
    assert value("Unjudged@3", t)[0, 0] == pytest.approx(2 / 3)
    assert value("unj_5", t)[0, 0] == pytest.approx(3 / 5)
    # a list shorter than k: missing ranks count as judged, the denominator stays k
    assert value("Unjudged@20", t)[0, 0] == pytest.approx(3 / 20)
    assert value("Unjudged@20", t)[0, 0] + value("Judged@20", t)[0, 0] == pytest.approx(5 / 20)
    assert value("Unjudged'@3", t)[0, 0] == 0.0


def test_unjudged_of_a_missing_topic_is_zero():
    t = tensor_of({"t": {"a": 1}, "u": {"b": 1}}, {"r": {"t": ["x"]}})
    assert value("unj.5", t)[0].tolist() == [0.2, 0.0]


# ---------------------------------------------------------------------------- RBP
def test_rbp_topic_normalisation_is_trec_eval_10s():
    # topic t grades up to 3, topic u up to 1, topic v up to 2 and nothing else retrieved
    qrels = {
        "t": {"a": 3, "b": 1, "c": 0},
        "u": {"d": 1, "e": 0},
        "v": {"f": 2, "g": 2},
    }
    t = tensor_of(qrels, {"r": {"t": ["b", "a"], "u": ["d"], "v": ["f", "x"]}})
    p = 0.9
    got = value("rbp", t)[0]
    assert got[0] == pytest.approx((1 - p) * (1 / 3 + 3 / 3 * p))
    assert got[1] == pytest.approx(1 - p)  # gain 1: the topic's own top grade is 1
    assert got[2] == pytest.approx((1 - p) * 1.0)  # 2 / 2
    # the qrels-wide default divides every topic by 3
    ours = value("RBP(p=0.9)", t)[0]
    assert ours[1] == pytest.approx((1 - p) / 3)
    # gains already in [0, 1] are kept; a named gain above 1 sets the divisor of every topic
    kept = value("rbp(gains={1:0.5,2:0.5,3:1})", t)[0]
    assert kept[1] == pytest.approx((1 - p) * 0.5)
    named = value("rbp(gains={3:6})", t)[0]
    assert named[1] == pytest.approx((1 - p) / 6)
    assert named[2] == pytest.approx((1 - p) * 2 / 6)


def test_rbp_resid_trec_eval_convention():
    t = tensor_of(
        {"t": {"a": 1, "c": 0, "u": -1}, "j": {"a": 1, "b": 0}, "m": {"z": 1}},
        {"r": {"t": ["a", "x", "c", "u"], "j": ["a", "b"]}},
    )
    p = 0.9
    at = {topic: i for i, topic in enumerate(t.topics)}
    got = value("rbp_resid", t)[0]
    assert got[at["t"]] == pytest.approx(p**4 + (1 - p) * (p + p**3))
    assert got[at["j"]] == 0.0  # every retrieved document judged: 0, not the tail p^2
    assert got[at["m"]] == 0.0  # not answered
    moffat = value("RBP_resid(p=0.9)", t)[0]
    assert moffat[at["t"]] == pytest.approx(got[at["t"]])
    assert moffat[at["j"]] == pytest.approx(p**2) and moffat[at["m"]] == 1.0
    assert (value("rbp_resid'", t) == 0).all()
    cut = value("RBP_resid(p=0.9,tail_if_judged=False)@1", t)[0]
    assert cut[at["t"]] == 0.0  # rank 1 is judged


# ---------------------------------------------------------------------------- names, errors
@pytest.mark.parametrize(
    ("trec", "ours"),
    [
        ("rbp", "RBP(p=0.9,normalise=topic)"),
        ("rbp_resid", "RBP_resid(p=0.9,tail_if_judged=False)"),
        ("rbp.p=0.95", "RBP(p=0.95,normalise=topic)"),
        ("rbp_resid_p=0.5", "RBP_resid(p=0.5,tail_if_judged=False)"),
        ("rbp'", "RBP'(p=0.9,normalise=topic)"),
        ("yaap", "YAAP"),
        ("11pt_avg", "IPrecAvg"),
        ("11pt_avg.0.2,0.5,0.8", "IPrecAvg(levels=(0.2,0.5,0.8))"),
        ("11pt_avg_.25,.5,.75", "IPrecAvg(levels=(0.25,0.5,0.75))"),
        ("iprec_at_recall_0.10", "IPrec(recall=0.1)"),
        ("iprec_at_recall.1", "IPrec(recall=1)"),
        ("unj.5", "Unjudged@5"),
        ("unj_20", "Unjudged@20"),
    ],
)
def test_trec_eval_names(trec, ours):
    assert canonical_name(trec) == ours
    assert parse_measure(ours) == parse_measure(trec)


@pytest.mark.parametrize(
    ("ours", "printed"),
    [
        ("RBP(normalise=topic,p=0.9)", "rbp"),
        ("RBP(p=0.5,normalise=topic)", "rbp_p=0.5"),
        ("RBP_resid(p=0.9,tail_if_judged=False)", "rbp_resid"),
        ("IPrec(recall=0.3)", "iprec_at_recall_0.30"),
        ("IPrecAvg", "11pt_avg"),
        ("YAAP", "yaap"),
        ("Unjudged@10", "unj_10"),
        # not what trec_eval 10 computes under that name: our own name
        ("RBP(p=0.9)", "RBP(p=0.9)"),
        ("IPrec(recall=0.3,rounding=trec9)", "IPrec(recall=0.3,rounding=trec9)"),
        ("RBP(p=0.9,normalise=topic)@10", "RBP(p=0.9,normalise=topic)@10"),
    ],
)
def test_trec_eval_output_names(ours, printed):
    assert trec_eval_name(ours) == printed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("IPrec", r"IPrec needs a recall level, e\.g\. IPrec\(recall=0\.5\)"),
        ("IPrec(recall=1.5)", r"recall must be a recall level in \[0, 1\], got 1\.5"),
        ("IPrec(recall=0.5,rounding=floor)", "rounding must be one of nearest, trec9"),
        ("IPrecAvg(levels=())", "levels must not be empty"),
        ("IPrecAvg(levels=(0.5,2))", r"levels\[1\] must be a recall level in \[0, 1\], got 2"),
        ("RBP(normalise=run)", "normalise must be one of qrels, topic"),
        ("RBP_resid(tail_if_judged=yes)", "tail_if_judged must be True or False"),
        ("Unjudged", r"Unjudged needs a cutoff, e\.g\. Unjudged@10"),
        ("YAAP(rel=0)", "rel must be a relevance level, a number > 0"),
    ],
)
def test_bad_parameters_raise_one_line_errors(text, message):
    with pytest.raises((ValueError, TypeError), match=message) as err:
        parse_measure(text)
    assert "\n" not in str(err.value)
    if "IPrec" in text or "RBP" in text:
        assert isinstance(err.value, MeasureError)
