"""The set-based measures (SetP, R (set_recall), SetRelP, SetAP, SetF, Utility, NumNonrelJudgedRet),
R-precision at multiples of R (``Rprec(mult=...)``) and relative precision (``RelP@k``).

Oracles: trec_eval 10.0 itself, built from its source (``tests/oracle/test_trec_eval10.py``),
per topic and on the ``all`` line within 1e-9, under ``-c`` and with ``-l``, ``-J``, ``-M`` and
``-N``, on trec_eval's own test inputs, on random collections and on TREC DL 2019 runs; the
mean over every ordering of tied documents; a brute force over every assignment of grades to
the unjudged documents for the bounds; and hand examples.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest

import metaeval
from metaeval.measures import NumNonrelJudgedRet, RelP, Rprec, SetF, Utility, parse_measure
from metaeval.measures.base import MeasureError
from metaeval.measures.binary import rprec_mult_bounds
from metaeval.measures.bounds import rprec_bounds
from tests.conftest import FIXTURES, need_data
from tests.measures.test_bounds import _case as bounds_case
from tests.measures.test_bounds import _every_completion
from tests.measures.test_bounds import _tensor as bounds_tensor
from tests.measures.test_research import tensor_of
from tests.measures.test_tied_orderings import _case as tied_case
from tests.measures.test_tied_orderings import _expected
from tests.oracle import test_trec_eval10 as oracle
from tests.oracle.test_trec_eval10 import random_collection, run_trec_eval

#: The oracle's fixtures: the patched trec_eval 10.0 binary, built once per session, and
#: three TREC DL 2019 runs as plain text.
trec_eval10 = oracle.trec_eval10
dl_files = oracle.dl_files

TOLERANCE = 1e-9
#: Documents in the collection given to trec_eval's -N (utility's d weighs them).
N_DOCS = 100_000
#: trec_eval calls: (measures, extra flags). A measure is asked once per call, so its
#: parameter variants are spread over the calls.
CALLS = [
    (
        (
            *("set_P", "set_recall", "set_relative_P", "set_map", "set_F", "utility"),
            *("num_nonrel_judged_ret", "Rprec_mult", "relative_P"),
        ),
        (),
    ),
    (
        (
            "set_F.0.5",
            "utility.2,-0.5,-1,0.25",
            "Rprec_mult.0.05,0.1,0.3,0.7,1.1,2.5,3",
            "relative_P.1,2,3,7,50",
        ),
        ("-N", str(N_DOCS)),
    ),
    (("set_F.3", "utility.0.5,0,-2,1"), ()),
]
#: Values per topic over the calls: set_P, set_recall, set_relative_P, set_map, set_F x 3,
#: utility x 3, num_nonrel_judged_ret, Rprec_mult x (10 + 7), relative_P x (9 + 5).
PER_TOPIC = 4 + 3 + 3 + 1 + 17 + 14
#: trec_eval's output names of the measures without parameters, and ours.
NAMES = {
    "set_P": "SetP",
    "set_recall": "R",
    "set_relative_P": "SetRelP",
    "set_map": "SetAP",
    "set_F": "SetF",
    "utility": "Utility",
    "num_nonrel_judged_ret": "NumNonrelJudgedRet",
}


def ours(name: str, flags) -> str:
    """Our measure for a trec_eval output name under its flags (-l, -J, -N)."""
    num_docs = int(flags[flags.index("-N") + 1]) if "-N" in flags else 0
    if name in NAMES:
        text = NAMES[name]
    elif name.startswith("set_F_"):
        text = f"SetF(beta={float(name[6:])!r})"
    elif name.startswith("Rprec_mult_"):
        text = f"Rprec(mult={float(name[11:])!r})"
    elif name.startswith("relative_P_"):
        text = f"RelP@{int(name[11:])}"
    elif name.startswith("utility_"):
        a, b, c, d = name[8:].split(",")
        text = f"Utility(a={a},b={b},c={c},d={d},num_docs={num_docs})"
    else:
        raise AssertionError(f"unexpected trec_eval output {name!r}")
    measure = parse_measure(text)
    for flag in flags:
        if flag.startswith("-l"):
            measure = dataclasses.replace(measure, rel=int(flag[2:]))
    return str(measure.condensed() if "-J" in flags else measure)


def compare(binary, qrels_path, run_path, flags=()) -> tuple[int, float]:
    """Every per-topic and ``all`` value of trec_eval -c against ours: (values compared,
    largest absolute difference)."""
    flags = ("-c", *flags)
    expected, names = {}, {}
    for measures, extra in CALLS:
        values = run_trec_eval(binary, qrels_path, run_path, measures, (*flags, *extra))
        expected.update(values)
        names.update({name: ours(name, (*flags, *extra)) for name, _ in values})
    depth = next((int(f[2:]) for f in flags if f.startswith("-M")), None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rel=3 above a topic's grades, ids as numbers...
        run = metaeval.read_run(run_path, extra_fields="ignore")
        qrels = metaeval.read_qrels(qrels_path)
        tensor = metaeval.EvalTensor.build(run, qrels, depth=depth, warn_extra_topics=False)
        scores = metaeval.score_matrices(tensor, list(dict.fromkeys(names.values())))
    topics = {str(t): i for i, t in enumerate(tensor.topics)}
    compared, worst = 0, 0.0
    for (name, topic), value in expected.items():
        got = scores[names[name]][0]
        if topic == "all":  # trec_eval sums its counts over the topics, averages the rest
            mine = got.sum() if name == "num_nonrel_judged_ret" else got.mean()
        else:
            mine = got[topics[topic]]
        diff = abs(float(mine) - value)
        assert diff <= TOLERANCE, (str(run_path), flags, name, topic, mine, value)
        worst, compared = max(worst, diff), compared + 1
    per_topic = {name for name, topic in expected if topic != "all"}
    assert len(per_topic) == PER_TOPIC, sorted(per_topic)
    assert compared == PER_TOPIC * (len(topics) + 1)
    return compared, worst


# ---------------------------------------------------------------------------- trec_eval
FIXTURE_CASES = [
    ("qrels.test", "results.test", ()),
    ("qrels.test", "results.trunc", ()),  # topic 302 missing: -c scores it
    ("qrels.test", "results.trunc", ("-M100",)),
    ("qrels.test", "results.trunc", ("-J",)),
    ("qrels.rel_level", "results.test", ()),  # grades 0-4 and -1 (pooled, unjudged)
    ("qrels.rel_level", "results.test", ("-l2",)),
    ("qrels.rel_level", "results.test", ("-J",)),
    ("qrels.rel_level", "results.test", ("-l3", "-J", "-M50")),
]


@pytest.mark.parametrize(("qrels", "run", "flags"), FIXTURE_CASES)
def test_trec_eval_fixtures(trec_eval10, qrels, run, flags):
    need_data("trec_eval-fixtures")
    compared, worst = compare(trec_eval10, FIXTURES / qrels, FIXTURES / run, flags)
    assert compared >= 3 * PER_TOPIC and worst <= TOLERANCE


@pytest.fixture(scope="module")
def random_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("set_collections")
    return [random_collection(seed, folder) for seed in (21, 22, 23, 24)]


@pytest.mark.parametrize("flags", [(), ("-l2",), ("-J",), ("-M7",), ("-l3", "-J"), ("-l2", "-M5")])
def test_random_collections(trec_eval10, random_files, flags):
    for qrels, run in random_files:
        compared, worst = compare(trec_eval10, qrels, run, flags)
        assert compared == PER_TOPIC * 13 and worst <= TOLERANCE  # 12 topics and all


@pytest.mark.parametrize("flags", [(), ("-l2",), ("-l2", "-J")])
def test_trec_dl_2019_runs(trec_eval10, dl_files, flags):
    qrels, runs = dl_files
    assert len(runs) == 3
    for run in runs:
        compared, worst = compare(trec_eval10, qrels, run, flags)
        assert compared == PER_TOPIC * 44 and worst <= TOLERANCE  # 43 topics and all


# ---------------------------------------------------------------------------- by hand
def hand_tensor():
    """One topic, R = 3 at rel 1 and 1 at rel 2: the run ranks d1 (1), d2 (0), x (outside
    the qrels), d5 (pooled, unjudged) and d3 (2); d4 (1) is not retrieved."""
    qrels = {"t": {"d1": 1, "d2": 0, "d3": 2, "d4": 1, "d5": -1}}
    return tensor_of(qrels, {"run": {"t": ["d1", "d2", "x", "d5", "d3"]}})


HAND = {
    "SetP": 2 / 5,
    "R": 2 / 3,
    "SetRelP": 2 / 3,  # 2 / min(5, 3)
    "SetAP": 4 / 15,
    "SetF": 0.5,  # 2 P R / (P + R)
    "SetF(beta=4)": 10 / 17,  # van Rijsbergen's F_2 = 5 P R / (4 P + R)
    "SetF(beta=0)": 2 / 5,  # P
    "SetP(rel=2)": 1 / 5,
    "Utility": -1.0,  # 2 - 3
    "Utility(a=2,b=-0.5,c=-1,d=0.25,num_docs=100)": 4 - 1.5 - 1 + 0.25 * 94,
    "NumNonrelJudgedRet": 1.0,  # d2
    "NumNonrelJudgedRet(rel=2)": 2.0,  # d1, d2
    "Rprec": 1 / 3,
    "Rprec(mult=0.5)": 1 / 2,  # k = trunc(1.5 + 0.9) = 2
    "Rprec(mult=2)": 2 / 6,  # k = 6, past the list
    "Rprec(mult=0.1)": 1.0,  # k = trunc(0.3 + 0.9) = 1
    "Rprec(mult=0.02)": 0.0,  # k = trunc(0.06 + 0.9) = 0
    "RelP@1": 1.0,
    "RelP@4": 1 / 3,
    "RelP@10": 2 / 3,  # C(10) / min(10, 3)
    "RelP(rel=2)@2": 0.0,
    "RelP(rel=2)@5": 1.0,
    "SetP'": 2 / 3,  # d1, d2, d3
    "Utility'": 2 - 1.0,
    "NumNonrelJudgedRet'": 1.0,
    "Rprec'(mult=0.5)": 1 / 2,
    "RelP'@3": 2 / 3,
}


def test_hand_example():
    tensor = hand_tensor()
    for name, expected in HAND.items():
        assert parse_measure(name).compute(tensor)[0, 0] == pytest.approx(expected), name


def test_set_f_weighs_recall_by_beta_as_trec_eval():
    """beta enters trec_eval's formula unsquared: SetF(beta=b) is van Rijsbergen's F at
    sqrt(b), and (b + 1) num_rel_ret / (num_ret + b R) per topic."""
    tensor = hand_tensor()
    p, r = 2 / 5, 2 / 3
    for b in (0.25, 1.0, 4.0, 9.0):
        f = (1 + b) * p * r / (b * p + r)
        assert SetF(beta=b).compute(tensor)[0, 0] == pytest.approx(f)
        assert f == pytest.approx((b + 1) * 2 / (5 + b * 3))


def test_a_topic_the_run_did_not_answer():
    # trec_eval -c ranks one document outside the qrels for it: 0 for the default utility
    # (trec_eval sets it), b + c R + d (N - 1 - R) for other weights, c R + d (N - R) under -J
    qrels = {"t": {"a": 1}, "u": {"b": 1, "c": 1, "e": 0}}
    tensor = tensor_of(qrels, {"run": {"t": ["a"]}})
    u = list(tensor.topics).index("u")
    weights = "a=2,b=-0.5,c=-1,d=0.25,num_docs=10"
    values = {
        "Utility": 0.0,
        "Utility'": 0.0,
        f"Utility({weights})": -0.5 - 2 + 0.25 * (10 - 1 - 2),
        f"Utility'({weights})": -2 + 0.25 * (10 - 2),
        "SetP": 0.0,
        "SetF": 0.0,
        "NumNonrelJudgedRet": 0.0,
        "Rprec(mult=0.4)": 0.0,
        "RelP@2": 0.0,
    }
    for name, expected in values.items():
        assert parse_measure(name).compute(tensor)[0, u] == pytest.approx(expected), name


# ---------------------------------------------------------------------------- ties
def test_the_ties_change_the_order_dependent_measures():
    # else the test above could not fail
    names = ["Rprec(mult=0.5)", "Rprec(mult=1.5)", "RelP@3"]
    gaps = []
    for seed in range(6):
        qrels, frame = tied_case(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trec = metaeval.evaluate(frame, qrels, names).set_index(["run", "topic", "measure"])
        gap = (trec["value"] - _expected(frame, qrels, names).loc[trec.index]).abs()
        gaps.append(gap.groupby(level="measure").max())
    assert (np.max(gaps, axis=0) > 0.05).all()


# ---------------------------------------------------------------------------- bounds
@pytest.mark.filterwarnings(r"ignore:.*is above the highest grade in the qrels:UserWarning")
def test_judged_non_relevant_bounds_when_no_grade_reaches_the_level():
    # every assignment then judges the unknown documents retrieved non-relevant: the upper
    # bound counts them, the lower one stays the value (which does not count them)
    rows, frame, keep = bounds_case(0)
    full, cut = bounds_tensor(rows, frame, keep)
    every = [
        _every_completion(rows, keep, frame[frame["run"] == r], ["NumNonrelJudgedRet(rel=3)"])
        for r in sorted(set(frame["run"]))
    ]
    value = parse_measure("NumNonrelJudgedRet(rel=3)").compute(cut)[:, 0]
    lo = parse_measure("NumNonrelJudgedRet_lo(rel=3)").compute(cut)[:, 0]
    hi = parse_measure("NumNonrelJudgedRet_hi(rel=3)").compute(cut)[:, 0]
    counts = [e["NumNonrelJudgedRet(rel=3)"] for e in every]
    assert all(c.min() == c.max() for c in counts)
    np.testing.assert_array_equal(hi, [c[0] for c in counts])
    np.testing.assert_array_equal(lo, value)
    assert (lo < hi).any()


@pytest.mark.parametrize("seed", range(12))
def test_rprec_bounds_at_multiple_one_are_the_scan_over_r(seed):
    # Rprec keeps its scan of the ranks at mult = 1; the scan over R gives the same
    _, cut = bounds_tensor(*bounds_case(seed))
    for rel in (1, 2):
        for side in ("lo", "hi"):
            scan = rprec_mult_bounds(cut, rel, 1.0, side)
            np.testing.assert_array_equal(scan, rprec_bounds(cut, rel, side))


# ---------------------------------------------------------------------------- names
def test_names_and_aliases():
    assert str(Rprec()) == "Rprec" and str(Rprec(mult=1)) == "Rprec"
    assert parse_measure("Rprec(mult=0.2)") == Rprec(mult=0.2)
    assert str(parse_measure("Rprec(mult=0.2,rel=2)")) == "Rprec(rel=2,mult=0.2)"
    assert str(parse_measure("Rprec(mult=1.0)")) == "Rprec"
    assert str(parse_measure("RelP@10")) == "RelP@10"
    assert str(SetF(beta=1)) == "SetF" and str(SetF(beta=0.5)) == "SetF(beta=0.5)"
    assert str(Utility(a=1, b=-1)) == "Utility"
    assert str(Utility(c=-1, num_docs=5)) == "Utility(c=-1,num_docs=5)"
    aliases = {**NAMES, "set_P'(rel=2)": "SetP'(rel=2)"}
    for alias, name in aliases.items():
        assert str(parse_measure(alias)) == name
    assert NumNonrelJudgedRet.summed_by_trec_eval
    for measure in ("SetP", "SetRelP", "SetAP", "SetF", "Utility", "NumNonrelJudgedRet"):
        assert parse_measure(measure).order_free
    assert not RelP(cutoff=3).order_free and not Rprec(mult=2).order_free
    # past R (mult > 1) an ideal list no longer scores 1
    assert Rprec.recall_normalised and Rprec(mult=0.5).recall_normalised
    assert not Rprec(mult=2).recall_normalised


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: SetF(beta=-1), "SetF: beta must be a number in [0, 1e12], got -1"),
        (lambda: SetF(beta=math.nan), "SetF: beta must be a number in [0, 1e12], got nan"),
        (lambda: Rprec(mult=0), "Rprec: mult must be a number in (0, 1000], got 0"),
        (lambda: Rprec(mult=-0.5), "Rprec: mult must be a number in (0, 1000], got -0.5"),
        (lambda: Utility(a=math.inf), "Utility: a must be a number in [-1e12, 1e12], got inf"),
        (lambda: Utility(num_docs=-1), "Utility: num_docs must be an integer in [0, "),
        (lambda: Utility(num_docs=1.5), "Utility: num_docs must be an integer in [0, "),
        (lambda: RelP(), "RelP needs a cutoff, e.g. RelP@10"),
        (lambda: parse_measure("Rprec(mult=0)"), "'Rprec(mult=0)': Rprec: mult must be a "),
        (lambda: parse_measure("RelP@0"), "'RelP@0': RelP: cutoff must be an integer >= 1, got 0"),
    ],
)
def test_bad_parameters_are_refused_in_one_line(make, message):
    with pytest.raises(MeasureError) as err:
        make()
    assert str(err.value).startswith(message), str(err.value)
    assert "\n" not in str(err.value)
