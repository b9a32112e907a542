"""M_lo / M_hi: the least and greatest value of a measure over the grades of the unknown
documents, against a brute force over every assignment of grades, and containing the value
under the full judgments of a collection whose judgments were cut."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

from metaeval.data import Qrels, RunSet
from metaeval.engine import EvalTensor
from metaeval.measures import parse_measure

MEASURES = [
    "AP",
    "AP@3",
    "AP(rel=2)",
    "P@3",
    "P(rel=2)@2",
    "R@3",
    "R",
    "RR",
    "RR@2",
    "Success@2",
    "RBP(p=0.7)",
    "RBP(gains={1:3,2:1})",
    "nCG",
    "nCG@3",
    "nCG(gains={1:3,2:1},gain=exp)@4",
    "ERR@4",
    "NumRelRet",
    "CWL_P@3",
    "INSQ(T=2,output=ETU)",
    "Rprec",
    "Rprec(rel=2)",
    "YAAP",
    "YAAP(rel=2)",
    "AP'",
    "P'@3",
    "IPrec(recall=0)",
    "GAP(g=(0,1))",
    "eGAP(g=(1,0))",
    "NumRel",
    "NumRel(rel=2)",
    "NumRet",
    "SetP",
    "SetP(rel=2)",
    "SetRelP",
    "SetRelP(rel=2)",
    "SetAP",
    "SetF",
    "SetF(beta=0.25)",
    "SetF(beta=4,rel=2)",
    "SetF(beta=0)",
    "Utility",
    "Utility(a=2,b=1,c=-1,d=0.5,num_docs=20)",
    "Utility(a=-1,b=1,c=1)",
    "Utility(rel=2,c=-2)",
    "NumNonrelJudgedRet",
    "NumNonrelJudgedRet(rel=2)",
    "RelP@1",
    "RelP@3",
    "RelP(rel=2)@2",
    "RelP@10",
    "Rprec(mult=0.05)",
    "Rprec(mult=0.2)",
    "Rprec(mult=0.5)",
    "Rprec(mult=1.5)",
    "Rprec(mult=3)",
    "Rprec(rel=2,mult=0.6)",
    # no grade reaches 3: no unknown document can be made relevant
    "SetP(rel=3)",
    "Utility(rel=3)",
    "RelP(rel=3)@2",
    "Rprec(rel=3,mult=0.5)",
    "BinG",
    "BinG(rel=2)",
    "BinG'",
]


def _case(seed):
    """One topic: judged documents, three whose judgments were removed (their rows stay,
    without a grade), and runs that retrieve judged, removed and unpooled documents."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(8)]
    rows = pd.DataFrame({"topic": "q", "doc": docs, "rel": rng.choice([0, 1, 2], size=8)})
    keep = np.ones(8, dtype=bool)
    keep[rng.choice(8, size=3, replace=False)] = False
    lists = []
    for r in range(3):
        chosen = rng.choice(docs + ["x1", "x2"], size=int(rng.integers(3, 7)), replace=False)
        lists += [(f"r{r}", "q", d, float(len(chosen) - i)) for i, d in enumerate(chosen)]
    frame = pd.DataFrame(lists, columns=["run", "topic", "doc", "score"])
    return rows, frame, keep


def _tensor(rows, frame, keep):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = EvalTensor.build(RunSet.from_df(frame), Qrels.from_df(rows))
    return full, full.with_judgments(keep)


def _every_completion(rows, keep, run: pd.DataFrame, measures) -> dict:
    """Each measure's values for ``run`` under every assignment of grades 0..2 to its unknown
    documents: the removed rows and the documents it retrieved outside the qrels. Each
    assignment is a topic of its own, so one tensor holds them all."""
    outside = [d for d in run["doc"] if d not in set(rows["doc"])]
    unknown = [d for d, k in zip(rows["doc"], keep) if not k] + outside
    docs = [*rows["doc"], *outside]
    known = dict(zip(rows["doc"], rows["rel"]))
    qrels, lists = [], []
    for k, grades in enumerate(itertools.product([0, 1, 2], repeat=len(unknown))):
        assigned = dict(zip(unknown, grades))
        topic = f"a{k:04d}"
        qrels += [(topic, d, assigned.get(d, known.get(d, 0))) for d in docs]
        lists += [("r", topic, d, s) for d, s in zip(run["doc"], run["score"])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tensor = EvalTensor.build(
            RunSet.from_df(pd.DataFrame(lists, columns=["run", "topic", "doc", "score"])),
            Qrels.from_df(pd.DataFrame(qrels, columns=["topic", "doc", "rel"])),
        )
    return {name: parse_measure(name).compute(tensor)[0] for name in measures}


#: Measures whose bounds hold without always being the least and greatest values.
HOLDING = [
    "nDCG",
    "nDCG@3",
    "nDCG(gain=exp,gains={1:3,2:1})@4",
    "nERR",
    "nERR@3",
    "Q",
    "Q@3",
    "Q(beta=0.5,rel=2)",
    "GAP",
    "eGAP",
    "xGAP",
    "xGAP(g=(0.3,0.7))",
    "IPrec(recall=0.5)",
    "IPrec(recall=0.3,rounding=trec9)",
    "IPrecAvg",
    "IPrecAvg(rel=2)",
    "Bpref",
    "Bpref(rel=2)",
    "Bpref_R",
    "Bpref_N",
    "infAP",
    "RBP(p=0.7,normalise=topic)",
    "RBP(normalise=topic,gains={1:3,2:1})@4",
    "INST(T=2)",
    "INST(output=ETU)",
    "INST(output=ED)",
    "CWL_RR",
    "CWL_RR(output=ETC)",
    "CWL_AP",
    "CWL_AP(output=ETU)",
    "CWL_AP(output=ETC)",
    "CWL_AP(output=ED)",
    "BPM(T=1,K=4)",
    "BPM_dynamic(T=1,K=5,hb=0.5)",
    "BPM_dynamic(T=1,K=5,hb=2,output=ETU)",
    "IFT_goal(T=1,b1=0.9,R1=10)",
    "IFT_rate(A=0.2,b2=0.9,R2=10)",
    "IFT_goal_rate(T=1,b1=0.9,R1=10,A=0.2,b2=0.9,R2=10)",
    "NERR_eq8@3",
    "NERR_eq11(T=2,output=EC)",
    "G",
    "G(gains={1:3,2:1})",
    "G(gain=exp)",
    "nDCG_rel",
    "nDCG_rel(gains={1:3,2:1})",
    "RnDCG",
    "RnDCG(rel=2)",
    "RnDCG(gains={0:1,2:5})",
]


@pytest.mark.filterwarnings(r"ignore:.*is above the highest grade in the qrels:UserWarning")
@pytest.mark.parametrize("seed", range(8))
def test_bounds_against_every_assignment_of_grades(seed):
    # MEASURES: the bounds are the least and greatest values; HOLDING: they contain them
    rows, frame, keep = _case(seed)
    full, cut = _tensor(rows, frame, keep)
    runs = sorted(set(frame["run"]))
    names = MEASURES + HOLDING
    every = [_every_completion(rows, keep, frame[frame["run"] == r], names) for r in runs]
    for name in names:
        least = np.array([e[name].min() for e in every])
        greatest = np.array([e[name].max() for e in every])
        lo = parse_measure(f"{parse_measure(name).name}_lo{_rest(name)}").compute(cut)[:, 0]
        hi = parse_measure(f"{parse_measure(name).name}_hi{_rest(name)}").compute(cut)[:, 0]
        if name in MEASURES:
            np.testing.assert_allclose(lo, least, atol=1e-12, err_msg=name)
            np.testing.assert_allclose(hi, greatest, atol=1e-12, err_msg=name)
        else:
            assert (lo <= least + 1e-12).all() and (hi >= greatest - 1e-12).all(), name
            low, high = parse_measure(name).bounds
            assert ((lo >= low) & (hi <= high)).all(), name
        truth = parse_measure(name).compute(full)[:, 0]
        assert (lo <= truth + 1e-12).all() and (truth <= hi + 1e-12).all(), name


def _rest(name: str) -> str:
    """What follows a measure's name: its parameters and cutoff."""
    base = parse_measure(name).name
    return name[len(base) :]


def test_an_unknown_document_below_the_cutoff_can_raise_a_topics_divisor():
    # RBP normalised per topic divides by the topic's highest grade (here 1; 2 exists in
    # another topic): the document at rank 2, below the cutoff and outside the qrels, can
    # hold grade 2, and the value at rank 1 is then (1 - p) 1/2 = 0.25, not 0.5
    rows = pd.DataFrame({"topic": ["q", "q", "t"], "doc": ["a", "b", "c"], "rel": [1, 0, 2]})
    frame = pd.DataFrame({"run": "r", "topic": "q", "doc": ["a", "x"], "score": [2.0, 1.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tensor = EvalTensor.build(RunSet.from_df(frame), Qrels.from_df(rows))
    value = parse_measure("RBP(p=0.5,normalise=topic)@1").compute(tensor)[0]
    lo = parse_measure("RBP_lo(p=0.5,normalise=topic)@1").compute(tensor)[0]
    hi = parse_measure("RBP_hi(p=0.5,normalise=topic)@1").compute(tensor)[0]
    q = list(tensor.topics).index("q")
    assert value[q] == 0.5 and lo[q] == 0.25 and hi[q] == 0.5


def test_names_and_refusals():
    assert str(parse_measure("AP_lo")) == "AP_lo"
    assert str(parse_measure("P_hi(rel=2)@10")) == "P_hi(rel=2)@10"
    assert str(parse_measure("map_hi")) == "AP_hi"
    rows, frame, keep = _case(0)
    _, cut = _tensor(rows, frame, keep)
    for name, why in (
        ("INST_hi(output=ResEU)", "a residual is already the width"),
        ("Judged_lo@5", "it measures the judgments themselves"),
        ("Unjudged_hi@5", "it measures the judgments themselves"),
        ("RBP_resid_lo", "it measures the judgments themselves"),
    ):
        with pytest.raises(ValueError, match=r"its bounds over the grades of unjudged") as err:
            parse_measure(name).compute(cut)
        assert why in str(err.value) and "\n" not in str(err.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tied_runs = RunSet.from_df(frame.assign(score=1.0), ties="expected")
        tied = EvalTensor.build(tied_runs, Qrels.from_df(rows))
    with pytest.raises(ValueError, match="^AP_lo: bounds are for lists in one order"):
        parse_measure("AP_lo").compute(tied.with_judgments(keep))
    # a condensed measure's bounds are the measure's: no document is left unjudged
    np.testing.assert_array_equal(
        parse_measure("AP_lo'").compute(cut), parse_measure("AP_lo").compute(cut)
    )
    assert str(parse_measure("AP_lo'@10")) == "AP_lo'@10"


def test_bounds_contain_the_full_and_the_true_values_of_a_cut_simulated_world():
    from simulators.worlds import make_world

    world = make_world("trec_like", n_topics=10, n_systems=12, rng=3, n_candidates=400, depth=200)
    full = world.pool_tensor()
    rng = np.random.default_rng(4)
    cut = full.with_judgments((full.judgments >= 0) & (rng.random(len(full.judgments)) < 0.3))
    names = ["AP", "AP@100", "P@10", "R@100", "RR", "RBP(p=0.8)", "ERR@20", "NumRelRet"]
    names += ["nCG@20", "nDCG@10", "nDCG", "nERR@20", "Q", "Q@100", "Rprec", "YAAP", "infAP"]
    names += ["Bpref", "Bpref_R", "Bpref_N", "GAP", "eGAP", "xGAP", "IPrec(recall=0.2)"]
    names += ["IPrecAvg", "INST", "CWL_RR(output=ETU)", "BPM(T=2,K=20)", "NERR_eq8@10"]
    names += ["RBP(p=0.9,normalise=topic)", "CWL_AP", "BPM_dynamic(T=2,K=20,hb=2)", "AP'@100"]
    names += ["G", "nDCG_rel", "RnDCG", "BinG", "SetF", "Utility", "Rprec(mult=0.5)", "RelP@10"]
    for name in names:
        measure = parse_measure(name)
        lo = parse_measure(f"{measure.name}_lo{_rest(name)}").compute(cut)
        hi = parse_measure(f"{measure.name}_hi{_rest(name)}").compute(cut)
        for truth in (measure.compute(full), measure.compute(world.truth_tensor())):
            assert (lo <= truth + 1e-12).all() and (truth <= hi + 1e-12).all(), name
        assert (hi - lo).mean() > 0.01, name  # the cut judgments leave room: not empty bounds


#: The built-in measures without bounds: they measure the judgments themselves.
WITHOUT = {"Judged", "Unjudged", "RBP_resid"}


def test_every_measure_gives_bounds_or_refuses_in_one_line():
    from metaeval.measures.base import registered

    rows, frame, keep = _case(3)
    full, cut = _tensor(rows, frame, keep)
    # the built-in measures (other test files register plugins in the same process)
    for cls in {c for c in registered().values() if c.__module__.startswith("metaeval.")}:
        measure = cls.example()
        lo, hi = (
            parse_measure(f"{cls.name}_{side}{str(measure)[len(cls.name) :]}")
            for side in ("lo", "hi")
        )
        if cls.name in WITHOUT:
            with pytest.raises(ValueError, match="its bounds over the grades of unjudged") as err:
                lo.compute(cut)
            assert "\n" not in str(err.value)
            continue
        low, high = lo.compute(cut), hi.compute(cut)
        truth = measure.compute(full)
        assert np.isfinite(low).all() and np.isfinite(high).all(), cls.name
        assert (low <= truth + 1e-12).all() and (truth <= high + 1e-12).all(), cls.name
