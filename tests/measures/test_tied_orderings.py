"""ties="expected": every measure's expected value over the orderings of tied documents.

Oracles: the mean over every ordering of every group of tied documents, each ordering
evaluated as a run without ties (small lists, enumerated); closed forms on single groups too
large to enumerate; and on TREC DL, whose groups of tied documents are up to 1000 long, the
mean over random orderings.
"""

from __future__ import annotations

import io
import itertools
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval import evaluate
from metaeval.data import Qrels, RunSet, read_qrels, read_runs
from metaeval.engine import EvalTensor
from metaeval.engine.tensor import distinct_arrangements
from metaeval.measures import parse_measure

#: Every measure with an expected value, with cutoffs inside and across tie groups.
MEASURES = [
    "AP",
    "AP@3",
    "AP(rel=2)",
    "P@1",
    "P@3",
    "P(rel=2)@4",
    "R@3",
    "Rprec",
    "RR",
    "RR@2",
    "RR(rel=2)",
    "Success@1",
    "Success@3",
    "Bpref",
    "Bpref_R",
    "Bpref_N",
    "infAP",
    "infAP(rel=2)",
    "nDCG",
    "nDCG@3",
    "nDCG(gain=exp)@5",
    "nDCG(discount=jk,base=3)@4",
    "nCG@3",
    "Q",
    "Q@3",
    "Q(beta=0.5,rel=2)",
    "RBP(p=0.7)",
    "RBP(p=0.9,normalise=topic)@4",
    "RBP_resid(p=0.6)",
    "RBP_resid(p=0.8,tail_if_judged=False)",
    "RBP_resid(p=0.8,tail_if_judged=False)@3",
    "ERR",
    "ERR@3",
    "ERR(gains={1:1,2:2,3:5})@4",
    "nERR@3",
    "nERR'",
    "GAP",
    "GAP(g=(0.2,0.3,0.5))",
    "eGAP",
    "xGAP(g=(0,0.5,0.5))",
    "BinG",
    "BinG(rel=2)",
    "BinG'",
    "nDCG_rel",
    "nDCG_rel(gains={1:3,2:1})",
    "nDCG_rel'(gain=exp)",
    "RnDCG",
    "RnDCG(rel=2)",
    "RnDCG(gains={0:1,2:5})",
    "RnDCG'",
    "Rprec(mult=0.2)",
    "Rprec(mult=1.5)",
    "Rprec(mult=2,rel=2)",
    "Rprec'(mult=0.6)",
    "RelP@1",
    "RelP@3",
    "RelP(rel=2)@4",
    "RelP'@2",
    "SetP",
    "SetRelP'",
    "SetF(beta=0.5)",
    "Utility(c=-1)",
    "NumNonrelJudgedRet",
    "CWL_P@3",
    "CWL_RBP(theta=0.7,output=ETU)",
    "CWL_RR",
    "CWL_RR(output=ETU)",
    "CWL_RR(output=ETC,cost=2)",
    "CWL_RR(output=ED,max_depth=4)",
    "CWL_RR(gain=grade,max_gain=3,output=EU,max_depth=5)",
    "CWL_RR(output=EC,cost=2)",
    "CWL_RR(output=ResEU)",
    "CWL_RR(output=ResETU,gain=grade,max_gain=3)",
    "CWL_RR(output=ResETC,cost=2,max_depth=4)",
    "CWL_RR(output=ResED,max_depth=3)",
    "CWL_RR(output=ResED,max_depth=9)",
    "CWL_RR(output=ResEC)",
    "CWL_AP",
    "CWL_AP(gain=grade,max_gain=3)",
    "CWL_AP(output=EC,cost=3)",
    "CWL_AP(output=ResEC)",
    "INST(output=EC,cost=2)",
    "BPM(T=2,K=4,output=ResEC)",
    "SDCG(output=ResEU)@4",
    "INSQ(T=2)",
    "TBG(output=ResETU)",
    "Umeasure",
    "Judged@3",
    "Unjudged@4",
    "NumRelRet",
    "NumRet",
    "NumRel",
    "AP'",
    "P'@2",
    "nDCG'@3",
    "RR'",
    "Bpref'",
    "IPrec(recall=0.3)",
    "IPrec(recall=0)",
    "IPrec(recall=1,rounding=trec9)",
    "IPrecAvg",
    "IPrecAvg'",
    "G",
    "YAAP",
    "YAAP(rel=2)",
    "YAAP'",
    # C(i) reads i, g(i) and G(i): a recursion over the states of each group (BPM on gains of
    # a third, whose sums the orderings round apart: its openings)
    "INST",
    "INST(output=ResETU)",
    "INST(T=2,output=ED,max_depth=6)",
    "BPM(T=2.5,K=4)",
    "BPM(T=1,K=3,output=ETU)",
    "BPM(T=2.5,K=9,max_depth=5)",
    "BPM(T=2,K=5,gain=grade,max_gain=3)",
    "BPM(gains={1:0.5,2:0.75,3:1},T=1.25,output=ETU)",
    "NERR_eq10(max_depth=4,output=ResEU)",
    "IFT_goal(T=2,b1=0.9,R1=10)",
    "IFT_rate(A=0.2,b2=0.9,R2=10,output=ResETC)",
    "IFT_goal_rate(T=2,b1=0.9,R1=10,A=0.2,b2=0.9,R2=10,output=ResEU)",
    "NERR_eq8@5",
    "NERR_eq9(output=ResED)@4",
    "NERR_eq10(output=ETU)",
    "NERR_eq11",
    # CWL_AP: 1/S(1) through its Laplace transform, and a group across the depth enumerated
    "CWL_AP(output=ETU)",
    "CWL_AP(output=ED)",
    "CWL_AP(output=ResEU)",
    "CWL_AP(output=ResETU)",
    "CWL_AP(output=ResED,gain=grade,max_gain=3)",
    "CWL_AP(max_depth=4)",
    "CWL_AP(output=ETC,max_depth=4,cost=2)",
    "CWL_AP'(output=ED)",
    "INST'(output=ResETU)",
    # BPM_dynamic: the recursion where its sums are exact (integer gains, halves), else its
    # openings, the ranks its cost budget lets a user read (gains of a third)
    "BPM_dynamic(gain=grade,max_gain=3)",
    "BPM_dynamic(gain=grade,max_gain=3,T=2,K=5,hb=0.5,gain_med=1,output=ResETU)",
    "BPM_dynamic(gains={1:0.5,2:0.75,3:1},output=ED)",
    "BPM_dynamic(output=ETU)",
    "BPM_dynamic(K=4,output=ResEU)",
    "BPM_dynamic(T=2,K=3,hb=0.7,gain_med=0.3,output=ED)",
]


def _case(seed: int, *, grades=(0, 1, 2, 3)):
    """A few topics and runs whose lists hold groups of tied documents: judged documents
    of several grades, pooled but unjudged ones (grade -1) and documents outside the qrels."""
    rng = np.random.default_rng(seed)
    qrels, runs = [], []
    for t in range(3):
        pool = [f"d{t}_{i}" for i in range(12)]
        for doc in pool[:9]:
            qrels.append((f"q{t}", doc, rng.choice([-1, *grades], p=None)))
        for r in range(3):
            length = int(rng.integers(3, 8))
            docs = rng.choice(pool, size=length, replace=False)
            scores = np.sort(rng.integers(1, 4, size=length))[::-1].astype(float)
            for doc, score in zip(docs, scores):
                runs.append((f"run{r}", f"q{t}", doc, score))
    q = Qrels.from_df(pd.DataFrame(qrels, columns=["topic", "doc", "rel"]))
    frame = pd.DataFrame(runs, columns=["run", "topic", "doc", "score"])
    return q, frame


def _orderings(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[tuple[str, str, str]]]:
    """Every ordering of every ranked list's tie groups, each as a run of its own (scores
    made distinct), and (run, topic, ordering run) for each."""
    rows, owners = [], []
    for (run, topic), lst in frame.groupby(["run", "topic"], sort=True):
        lst = lst.sort_values(["score", "doc"], ascending=[False, False])
        groups = [list(g["doc"]) for _, g in lst.groupby("score", sort=False)]
        for k, choice in enumerate(itertools.product(*map(itertools.permutations, groups))):
            name = f"{run}|{topic}|{k}"
            order = [doc for group in choice for doc in group]
            rows += [(name, topic, doc, float(len(order) - i)) for i, doc in enumerate(order)]
            owners.append((run, topic, name))
    return pd.DataFrame(rows, columns=["run", "topic", "doc", "score"]), owners


def _mean_over_orderings(frame, qrels, measures) -> pd.DataFrame:
    every, owners = _orderings(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = evaluate(RunSet.from_df(every, ties="input"), qrels, measures)
    owner = pd.DataFrame(owners, columns=["orig", "topic", "run"])
    values = values.merge(owner, on=["run", "topic"])  # each ordering on its own topic
    return values.groupby(["orig", "topic", "measure"])["value"].mean()


def _expected(frame, qrels, measures) -> pd.Series:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = evaluate(frame, qrels, measures, ties="expected")
    return values.set_index(["run", "topic", "measure"])["value"]


def _tolerance(names) -> np.ndarray:
    """1e-12, or the width of the interval whose centre is the expected EU of an adaptive
    C/W/L measure (for a residual, two such centres)."""
    from metaeval.measures.cwl import CWLMeasure
    from metaeval.measures.cwl_ties import TIED_RATIO_TOLERANCE

    def of(name):
        m = parse_measure(name)
        if isinstance(m, CWLMeasure) and m.reads_its_state and m.output.endswith("EU"):
            return 2 * TIED_RATIO_TOLERANCE
        return 1e-12

    return np.array([of(name) for name in names])


@pytest.mark.parametrize("seed", range(6))
def test_expected_value_is_the_mean_over_every_ordering(seed):
    qrels, frame = _case(seed)
    truth = _mean_over_orderings(frame, qrels, MEASURES)
    got = _expected(frame, qrels, MEASURES)
    got.index.names = truth.index.names
    got = got.loc[truth.index]
    # absolute, and relative for the outputs that reach 100 and more (CWL_AP's upper ED)
    gap = np.abs(got - truth)
    allowed = _tolerance(truth.index.get_level_values("measure")) + 1e-13 * truth.abs()
    assert (gap <= allowed).all(), gap[gap > allowed]


def test_expected_value_on_real_valued_grades():
    qrels, frame = _case(11, grades=(0, 0.5, 1.25, 2))
    measures = ["AP(rel=0.5)", "nDCG@3", "Q(rel=1.25)", "RBP(p=0.7)", "RR(rel=1.25)", "ERR@4"]
    measures += ["BinG(rel=0.5)", "nDCG_rel", "RnDCG(rel=1.25)"]
    measures += ["IPrec(recall=0.3,rel=0.5)", "IPrecAvg(rel=1.25)", "G", "G(gain=exp)"]
    truth = _mean_over_orderings(frame, qrels, measures)
    got = _expected(frame, qrels, measures)
    got.index.names = truth.index.names
    np.testing.assert_allclose(got.loc[truth.index].to_numpy(), truth.to_numpy(), atol=1e-12)


def test_the_test_sees_ties_that_matter():
    # The cases must differ between trec_eval's order and the expectation, or the test
    # above could not fail.
    qrels, frame = _case(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trec = evaluate(frame, qrels, ["AP", "nDCG@3", "RR"])["value"].to_numpy()
    assert np.abs(trec - _expected(frame, qrels, ["AP", "nDCG@3", "RR"]).to_numpy()).max() > 0.05


def test_runs_differing_only_in_document_ids_score_the_same():
    qrels, frame = _case(3)
    # Renaming reverses the id order of the documents, so trec_eval orders every tie group
    # the other way round; the judgments follow the documents.
    names = sorted(set(frame["doc"]) | set(qrels.to_df()["doc"]))
    rename = dict(zip(names, reversed([f"x{i:03d}" for i in range(len(names))])))
    renamed_frame = frame.assign(doc=frame["doc"].map(rename))
    q = qrels.to_df()
    renamed_qrels = Qrels.from_df(q.assign(doc=q["doc"].map(rename)))
    measures = [m for m in MEASURES if not m.startswith("Num")]
    before = _expected(frame, qrels, measures).to_numpy()
    after = _expected(renamed_frame, renamed_qrels, measures).to_numpy()
    np.testing.assert_allclose(before, after, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trec = [evaluate(f, q_, measures)["value"] for f, q_ in [(frame, qrels)]]
        trec_renamed = evaluate(renamed_frame, renamed_qrels, measures)["value"]
    assert not np.allclose(trec[0].to_numpy(), trec_renamed.to_numpy())


def _tensor(frame, qrels, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return EvalTensor.build(RunSet.from_df(frame, ties="expected"), qrels, **kw)


#: A measure scored in every ordering: CWL_AP where a group crosses the depth.
ENUMERATED = "CWL_AP(output=ED,max_depth=10)"


def _wide_tie(n_relevant: int, n: int, topics: int = 1):
    """Lists of n tied documents, n_relevant of them relevant, on each topic."""
    q = Qrels.from_df(
        pd.DataFrame(
            [(f"{t}", f"d{i}", int(i < n_relevant)) for t in range(topics) for i in range(n)],
            columns=["topic", "doc", "rel"],
        )
    )
    run = pd.DataFrame(
        [("r", f"{t}", f"d{i}", 1.0) for t in range(topics) for i in range(n)],
        columns=["run", "topic", "doc", "score"],
    )
    return q, run


def test_a_measure_without_a_closed_form_is_refused_past_the_orderings_it_enumerates():
    from metaeval.measures.base import ENUMERATED_ORDERINGS

    per_list, in_all = ENUMERATED_ORDERINGS
    # C(20, 10) = 184,756 orderings of one list
    q, run = _wide_tie(10, 20)
    with pytest.raises(ValueError) as err:
        parse_measure(ENUMERATED).compute(_tensor(run, q))
    assert str(err.value) == (
        f"{ENUMERATED}: its expected value over tied orderings has no closed form, and "
        "run 'r', topic "
        f"'0' has about 1.85e+05 orderings of its tied documents, more than the {per_list:,} "
        "enumerated; order ties by trec_eval or input"
    )
    # AP has a closed form: computed whatever the ties
    assert np.isfinite(parse_measure("AP").compute(_tensor(run, q))).all()
    # C(14, 7) = 3,432 a list, 100 lists
    q, run = _wide_tie(7, 14, topics=100)
    assert per_list >= 3432 and in_all < 3432 * 100
    with pytest.raises(ValueError, match=r"about 3.43e\+05 orderings of tied documents in all"):
        parse_measure(ENUMERATED).compute(_tensor(run, q))
    # Ties among documents of one code change nothing: nothing is enumerated.
    q = Qrels.from_df(pd.DataFrame({"topic": ["1"] * 3, "doc": ["a", "b", "c"], "rel": [1, 0, 1]}))
    run = pd.DataFrame(
        {"run": "r", "topic": "1", "doc": ["a", "c", "b", "x", "y"], "score": [3, 3, 2, 1, 1]}
    )
    calm = _tensor(run, q)
    assert not calm.order_ties
    assert list(calm.tie_orderings(1, 1)) == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = EvalTensor.build(RunSet.from_df(run), q)
    assert parse_measure("INST").compute(calm) == parse_measure("INST").compute(plain)


def test_orderings_are_the_distinct_arrangements_of_each_group_taken_jointly():
    # one list: a group of 3 (two relevant, one outside the qrels), then one of 2 (a relevant
    # and a non-relevant document): 3 x 2 orderings, each once
    q = Qrels.from_df(
        pd.DataFrame({"topic": "1", "doc": ["a", "b", "c", "d"], "rel": [1, 1, 1, 0]})
    )
    run = pd.DataFrame(
        {"run": "r", "topic": "1", "doc": ["a", "b", "x", "c", "d"], "score": [2, 2, 2, 1, 1]}
    )
    (lists, part), *rest = list(_tensor(run, q).tie_orderings(100, 100))
    assert rest == [] and (lists == 0).all()
    seen = {tuple(codes) for codes in part.codes[:, 0, :5].tolist()}
    assert len(seen) == part.n_runs == 6
    heads = [(1, 1, -1), (1, -1, 1), (-1, 1, 1)]
    assert seen == {(*head, *tail) for head in heads for tail in [(1, 0), (0, 1)]}
    # cut into tensors of at most 4 runs (a list's orderings across two): the same orderings
    tensor = _tensor(run, q)
    parts = list(tensor.tie_orderings(100, 100, cells=4 * tensor.depth))
    assert [p.n_runs for _, p in parts] == [4, 2]
    cut = [tuple(c) for _, p in parts for c in p.codes[:, 0, :5].tolist()]
    assert sorted(cut) == sorted(seen) and all((lists == 0).all() for lists, _ in parts)


def test_condensed_view_keeps_the_judged_members_of_each_tie_group():
    qrels, frame = _case(2)
    tensor = _tensor(frame, qrels)
    view = tensor.condensed()
    group, rank, codes, start, size = view.tied_entries()
    assert (codes >= 0).all()
    assert ((rank >= start) & (rank < start + size)).all()


def test_a_depth_cut_through_a_tie_group_is_refused():
    q = Qrels.from_df(pd.DataFrame({"topic": ["1"] * 2, "doc": ["a", "b"], "rel": [1, 0]}))
    run = pd.DataFrame({"run": "r", "topic": "1", "doc": ["a", "b", "c"], "score": [2, 1, 1]})
    with pytest.raises(ValueError, match="the depth cut at 2 splits a group of tied documents"):
        _tensor(run, q, depth=2)
    assert _tensor(run, q, depth=1).order_ties is False


def test_trec_eval_order_is_unchanged_by_the_option():
    qrels, frame = _case(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = evaluate(frame, qrels, MEASURES)
        tensor = EvalTensor.build(RunSet.from_df(frame), qrels)
    assert tensor.ties is None
    assert len(plain) == len(MEASURES) * 3 * 3


DL = Path(__file__).parents[2] / ".." / "shared" / "data" / "trec-dl-2020"


@pytest.mark.skipif(not DL.exists(), reason="TREC DL 2020 not available")
def test_expected_value_on_trec_dl_matches_random_orderings():
    # Groups of tied documents of TREC DL are up to 1000 documents long: the expected value
    # is checked against the mean over random orderings, within 4 standard errors.
    paths = sorted((DL / "runs").glob("*"))[:8]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = read_runs(paths)
        qrels = read_qrels(DL / "qrels.txt")
    frames = [run.to_df().assign(run=run.name) for run in runs]
    frame = pd.concat(frames, ignore_index=True)
    measures = [
        "AP(rel=2)",
        "nDCG@10",
        "RR(rel=2)",
        "P(rel=2)@10",
        "Bpref(rel=2)",
        "Q@100",
        "ERR@20",
        "nERR",
        "Success(rel=2)@5",
        "CWL_RR",
        "CWL_AP",
        "infAP(rel=2)",
        "CWL_RR(output=ResEU)",
        "BinG(rel=2)",
        "nDCG_rel",
        "RnDCG",
        "IPrec(recall=0.5,rel=2)",
        "IPrecAvg(rel=2)",
        "G",
        "YAAP(rel=2)",
        "INST(output=ED)",
        "BPM(T=2)",
        "BPM_dynamic(gain=grade,max_gain=3,T=2)",
        "BPM_dynamic",
    ]
    exact = _expected(frame, qrels, measures).groupby(["run", "measure"]).mean()
    rng = np.random.default_rng(5)
    draws = []
    for _ in range(40):
        shuffled = frame.assign(key=rng.random(len(frame)))
        shuffled = shuffled.sort_values(["run", "topic", "score", "key"], ascending=False)
        shuffled["score"] = -np.arange(len(shuffled), dtype=float)  # distinct, in that order
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = evaluate(RunSet.from_df(shuffled, ties="input"), qrels, measures)
        draws.append(values.groupby(["run", "measure"])["value"].mean())
    draws = pd.concat(draws, axis=1)
    sd = draws.std(axis=1, ddof=1) / np.sqrt(draws.shape[1])
    gap = (draws.mean(axis=1) - exact.loc[draws.index]).abs()
    assert (gap <= 4 * sd + 1e-9).all(), gap[gap > 4 * sd + 1e-9]
    assert (sd > 0).any()  # the orderings differ: the check is not empty


def test_command_line_option_and_its_refusal(tmp_path, cli):
    qrels, frame = _case(1)
    q = tmp_path / "qrels.txt"
    q.write_text(
        "".join(f"{t} 0 {d} {g:g}\n" for t, d, g in qrels.to_df()[["topic", "doc", "grade"]].values)
    )
    r = tmp_path / "run0.txt"
    one = frame[frame["run"] == "run0"]
    r.write_text(
        "".join(f"{t} Q0 {d} 1 {s:g} run0\n" for t, d, s in one[["topic", "doc", "score"]].values)
    )
    code, out, err = cli(
        ["evaluate", q, r, "-m", "AP", "-m", "nDCG@3", "--ties", "expected", "--format", "csv"]
    )
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out)).set_index("measure")["value"]
    exact = _expected(one, qrels, ["AP", "nDCG@3"]).groupby(level="measure").mean()
    np.testing.assert_allclose(got.loc[exact.index].to_numpy(), exact.to_numpy(), atol=1e-6)
    q.write_text("".join(f"0 0 d{i} {int(i < 10)}\n" for i in range(20)))
    r.write_text("".join(f"0 Q0 d{i} 1 1 r\n" for i in range(20)))
    code, _, err = cli(["evaluate", q, r, "-m", ENUMERATED, "--ties", "expected"])
    assert code != 0
    assert f"{ENUMERATED}: its expected value over tied orderings has no closed form" in err
    assert len(err.strip().splitlines()) == 1


def test_every_measure_gives_its_expected_value():
    from metaeval.measures.base import registered

    qrels, frame = _case(5)
    tensor = _tensor(frame, qrels)
    # the built-in measures (other test files register plugins in the same process)
    for cls in {c for c in registered().values() if c.__module__.startswith("metaeval.")}:
        assert np.isfinite(cls.example().compute(tensor)).all(), cls.name


def test_cwl_rr_residual_stops_at_an_unjudged_item_before_judged_ones_without_gain():
    # The upper bound stops at the first item that is not a judged one without gain: here the
    # unjudged "x" at rank 1, before "a" (judged, no gain) and the tie of "b" and "c".
    q = Qrels.from_df(pd.DataFrame({"topic": ["1"] * 3, "doc": ["a", "b", "c"], "rel": [0, 1, 0]}))
    lists = {
        "gap": (["x", "a", "b", "c"], [5, 4, 3, 3]),
        "chain": (["a", "c", "b", "x"], [5, 4, 4, 3]),
        "notional": (["a", "c", "b"], [4, 3, 3]),
    }
    frame = pd.concat(
        pd.DataFrame({"run": name, "topic": "1", "doc": docs, "score": scores})
        for name, (docs, scores) in lists.items()
    )
    measures = ["CWL_RR(output=ResEU)", "CWL_RR(output=ResED,max_depth=3)"]
    truth = _mean_over_orderings(frame, q, measures)
    got = _expected(frame, q, measures)
    got.index.names = truth.index.names
    np.testing.assert_allclose(got.loc[truth.index].to_numpy(), truth.to_numpy(), atol=1e-12)


#: Measures whose expected value is exact at any size of tie group, without a closed form.
LARGE_TIES = [f"IPrec(recall={x})" for x in (0, 0.1, 0.2, 0.3, 0.5, 0.7, 1)] + [
    "IPrec(recall=0.5,rounding=trec9)",
    "IPrec(recall=0.3,rel=2)",
    "IPrecAvg",
    "IPrecAvg(rel=2,rounding=trec9)",
    "G",
    "G(gain=exp)",
    "G(gains={0:1,1:3.5,2:9.0})",
    "YAAP",
    "YAAP(rel=2)",
]


@pytest.mark.parametrize("seed", range(4))
def test_large_tie_methods_equal_every_ordering_of_longer_lists(seed, monkeypatch):
    # Lists of 12-18 documents in five tie groups, with relevant documents of two grades
    # before, inside and between them: the exact methods against the mean over every
    # ordering (the enumeration every measure without a closed form uses).
    from metaeval.measures import base

    monkeypatch.setattr(base, "ENUMERATED_ORDERINGS", (10**5, 10**6))
    rng = np.random.default_rng(seed)
    rows, runs = [], []
    for t in range(4):
        n = int(rng.integers(12, 19))
        rel = rng.choice([0, 1, 2], size=n, p=[0.5, 0.3, 0.2])
        rows += [(f"{t}", f"d{i}", int(g)) for i, g in enumerate(rel)]
        rows += [(f"{t}", f"x{i}", 1) for i in range(3)]  # relevant, never retrieved
        scores = np.sort(rng.integers(0, 5, size=n))[::-1]
        runs += [("r", f"{t}", f"d{i}", float(s)) for i, s in zip(rng.permutation(n), scores)]
    q = Qrels.from_df(pd.DataFrame(rows, columns=["topic", "doc", "rel"]))
    tensor = _tensor(pd.DataFrame(runs, columns=["run", "topic", "doc", "score"]), q)
    assert tensor.order_ties
    for name in LARGE_TIES:
        measure = parse_measure(name)
        every = base.Measure._expected(measure, tensor)
        np.testing.assert_allclose(measure.compute(tensor), every, rtol=0, atol=1e-12)


def test_interpolated_precision_over_a_group_too_large_to_enumerate():
    # 30 relevant and 200 other documents tied after 5 relevant and 5 non-relevant ones:
    # C(230, 30) ~ 1e37 orderings. At recall 1 the value is the precision at the last
    # relevant document, which has x of the others above it with probability
    # C(x + 29, 29) / C(230, 30): E = sum_x 35 / (40 + x) C(x + 29, 29) / C(230, 30).
    from scipy.special import comb

    q = Qrels.from_df(
        pd.DataFrame(
            [("1", f"d{i}", int(i < 5 or 10 <= i < 40)) for i in range(240)],
            columns=["topic", "doc", "rel"],
        )
    )
    scores = [10.0 - i for i in range(10)] + [0.0] * 230
    run = pd.DataFrame({"run": "r", "topic": "1", "doc": [f"d{i}" for i in range(240)]})
    tensor = _tensor(run.assign(score=scores), q)
    x = np.arange(201)
    truth = np.sum(35 / (40 + x) * comb(x + 29, 29) / comb(230, 30))
    got = parse_measure("IPrec(recall=1)").compute(tensor)
    np.testing.assert_allclose(got, [[truth]], rtol=1e-12)
    # at recall 0 the first five documents are relevant: the value is 1, whatever the ties
    assert parse_measure("IPrec(recall=0)").compute(tensor)[0, 0] == 1.0


@pytest.mark.parametrize(
    "name", ["IPrec(recall=0.5)", "G", "YAAP", "INST(output=ED)", "CWL_AP(output=ED)"]
)
def test_large_tie_methods_are_refused_past_their_work_limit(name, monkeypatch):
    from metaeval.measures import base
    from metaeval.measures._common import laplace_nodes
    from metaeval.measures.binary import YAAP_CELL
    from metaeval.measures.cwl_ties import _LAPLACE_CELL, _RANK_CELL, _STATE_CELL

    q, run = _wide_tie(10, 20)
    tensor = _tensor(run, q)
    monkeypatch.setattr(base, "TIED_MAXIMUM_CELLS", 100)
    with pytest.raises(ValueError) as err:
        parse_measure(name).compute(tensor)
    # G: 16 a (rank, state, gain), here 20 ranks x 11 states x 1 gain; YAAP: 16 a cell of
    # its two transforms at each node, each a steps over b + 1 positions
    work = {
        "IPrec(recall=0.5)": _work(10, 10, 5),
        "G": 16 * 20 * 11,
        # (its nodes span 1 + R - S and 1 + S in [1, 1 + R], R = 10)
        "YAAP": YAAP_CELL * 2 * len(laplace_nodes(11)[0]) * 10 * 11,
        # INST: a cell a state held (the relevant documents placed, 0..10), rank and gain,
        # and the interpreter's work at each of the group's 20 ranks
        "INST(output=ED)": _STATE_CELL * 11 * 20 * 2 + _RANK_CELL * 20,
        # CWL_AP: the states' at each Laplace node, for S(1)/G(n) in [1/1000, 1] (depth 1000),
        # for its one transform (ED)
        "CWL_AP(output=ED)": _LAPLACE_CELL * len(laplace_nodes(1000)[0]) * 11 * 20 * 2
        + _RANK_CELL * 20,
    }[name]
    assert str(err.value) == (
        f"{name}: its exact expected value over tied orderings would take {work:.2g} steps, "
        f"more than the 1e+02 allowed (run 'r', topic '0' alone {work:.2g}); order ties by "
        "trec_eval or input"
    )


def _work(a: int, b: int, first: int) -> int:
    """The cells of one group's exact computation: its possible values above a floor of 0,
    from the least, the last relevant document's precision with every other one above it."""
    j = np.arange(first, a + 1)[:, None]
    values = j / (j + np.arange(b + 1)[None, :])
    values = np.unique(values[values >= a / (a + b)])
    return (a - first + 1) * (len(values) + 1) * (b + 1)


def test_g_over_a_group_too_large_to_enumerate():
    # 30 relevant (grade 1) and 200 other documents, all tied: C(230, 30) ~ 1e37 orderings.
    # The ideal list costs one a rank, so the j-th relevant document, with x others above,
    # scores 1 / log2(2 + x), and x has the chance C(x + j - 1, j - 1) C(229 - x - j, 30 - j)
    # / C(230, 30) of a random arrangement: G = (1/30) sum over j and x of the two.
    from scipy.special import comb

    q, run = _wide_tie(30, 230)
    x = np.arange(201)[:, None]
    j = np.arange(1, 31)[None, :]
    chance = comb(x + j - 1, j - 1) * comb(200 - x + 30 - j, 30 - j) / comb(230, 30)
    np.testing.assert_allclose(chance.sum(axis=0), 1.0, rtol=1e-12)
    truth = np.sum(chance / np.log2(2 + x)) / 30
    got = parse_measure("G").compute(_tensor(run, q))
    np.testing.assert_allclose(got, [[truth]], rtol=1e-12)


def test_yaap_over_a_group_too_large_to_enumerate():
    # 2 relevant documents ranked first, then 3 relevant and 150 other documents tied, and 4
    # relevant documents never retrieved (R = 9): C(153, 3) = 585,276 orderings, each scored
    # here from the positions of the three tied relevant documents.
    q = Qrels.from_df(
        pd.DataFrame(
            [("1", f"d{i}", int(i < 5)) for i in range(155)]
            + [("1", f"x{i}", 1) for i in range(4)],
            columns=["topic", "doc", "rel"],
        )
    )
    run = pd.DataFrame({"run": "r", "topic": "1", "doc": [f"d{i}" for i in range(155)]}).assign(
        score=[3.0, 2.0] + [1.0] * 153
    )
    positions = np.array(list(itertools.combinations(range(153), 3)))  # 0-based, in the group
    s = 1.0 + 1.0 + np.sum(np.arange(3, 6) / (positions + 3.0), axis=1)
    truth = np.mean(np.log((1.0 + s) / (1.0 + 9.0 - s)))
    got = parse_measure("YAAP").compute(_tensor(run, q))
    np.testing.assert_allclose(got, [[truth]], rtol=0, atol=1e-12)


ADAPTIVE_LARGE = [
    "INST(output=ED)",
    "INST(T=2,output=ETU)",
    "INST(output=ResETC,cost=2)",
    "BPM(T=2.9,K=12)",
    "BPM(T=2.2,K=30,output=ResEU)",
    "IFT_goal_rate(T=2,b1=0.9,R1=10,A=0.2,b2=0.9,R2=10,output=ED)",
    "NERR_eq10(phi=0.4)",
    "NERR_eq11(output=ResETU)",
    "CWL_AP(output=ED)",
    "CWL_AP(output=ResETU,cost=3)",
    "CWL_AP(output=ResETC,cost=3)",
]


@pytest.mark.parametrize("name", ADAPTIVE_LARGE)
def test_adaptive_cwl_over_a_group_too_large_to_enumerate(name):
    # After 12 documents of grades 0-3 and unjudged ones, 20 tied documents, 10 of grade 2
    # and 10 unjudged (C(20, 10) = 184,756 orderings, past the 10,000 enumerated), then 8
    # more: every arrangement of the group scored as a ranking of its own, and averaged.
    from metaeval.measures.cwl import _Ranks

    head = [3, 0, -1, 1, 2, 0, 0, -1, 1, 0, 0, 2]
    tail = [1, 0, -1, 3, 0, 0, 1, 0]
    grades = {f"h{i}": g for i, g in enumerate(head)} | {f"t{i}": g for i, g in enumerate(tail)}
    grades |= {f"g{i}": 2 for i in range(10)}
    rows = [("1", d, g) for d, g in grades.items() if g >= 0]
    q = Qrels.from_df(pd.DataFrame(rows, columns=["topic", "doc", "rel"]))
    docs = [f"h{i}" for i in range(12)] + [f"g{i}" for i in range(20)] + [f"t{i}" for i in range(8)]
    scores = [100.0 - i for i in range(12)] + [50.0] * 20 + [40.0 - i for i in range(8)]
    run = pd.DataFrame({"run": "r", "topic": "1", "doc": docs, "score": scores})
    measure = parse_measure(name)
    measure = type(measure)(**{**measure.__dict__, "max_depth": 45})
    got = measure.compute(_tensor(run, q))[0, 0]

    table = measure.gain_values(4)
    ranks = _Ranks(45, measure.cost)
    residual = measure.output.startswith("Res")
    key = measure.output[3:] if residual else measure.output

    def mean_over_arrangements(unknown: float) -> float:
        gain = [table[g] if g >= 0 else unknown for g in head]
        after = [table[g] if g >= 0 else unknown for g in tail]
        lists = np.full((184_756, 45), unknown)  # past the list: notional items
        lists[:, :12] = gain
        lists[:, 12:32] = unknown
        for row, chosen in enumerate(itertools.combinations(range(20), 10)):
            lists[row, [12 + c for c in chosen]] = table[2]
        lists[:, 32:40] = after
        return measure._outputs(key, lists, ranks).mean()

    truth = mean_over_arrangements(0.0)
    if residual:
        truth = mean_over_arrangements(measure.max_gain) - truth
    tolerance = 1e-12 if key != "EU" or name.startswith("BPM") else 1e-10
    assert abs(got - truth) <= tolerance, (got, truth)


@pytest.mark.parametrize(
    ("name", "relevant", "tied"),
    [
        ("INST", 10, 20),
        ("INST", 3, 50),
        ("NERR_eq10", 4, 60),
        ("IFT_goal(T=2,b1=0.9,R1=5)", 2, 30),
        # moments to order 32 leave 2e-8: the openings of 1, 2, 4, then 8 items close it
        ("IFT_goal(T=2,b1=0.9,R1=10)", 4, 36),
        # read to rank k: the openings of k ranks of a group the depth cuts
        ("NERR_eq8@5", 3, 40),
        ("NERR_eq9@4", 6, 30),
    ],
)
def test_adaptive_cwl_eu_of_a_wide_tie_is_the_mean_over_its_arrangements(name, relevant, tied):
    # a few relevant documents tied among many at the top: the second moments leave EU wide
    # open, and the higher ones, or every arrangement enumerated, close it; the oracle is the
    # measure scoring each of the C(tied, relevant) rankings, up to 487,635 of them
    from itertools import combinations

    from metaeval.measures.cwl import _Ranks

    q, run = _wide_tie(relevant, tied)
    measure = parse_measure(name)
    got = measure.compute(_tensor(run, q))[0, 0]
    ranks = _Ranks(measure.max_depth, measure.cost)
    where = np.array(list(combinations(range(tied), relevant)))
    total = 0.0
    for chunk in np.array_split(where, -(-len(where) * ranks.n // 10**7)):
        gains = np.zeros((len(chunk), ranks.n))
        np.put_along_axis(gains, chunk, 1.0, axis=1)
        total += measure._outputs("EU", gains, ranks).sum()
    assert abs(got - total / len(where)) <= 1e-10


def test_adaptive_cwl_refusals(monkeypatch):
    from metaeval.measures import base, cwl_ties

    # 10 relevant among 300 tied documents at the top: IFT_goal's EU spreads too far over
    # the orderings to be bracketed by moments to order 32, or by the openings of up to 16
    # items, and the group's openings are too many to enumerate further
    q, run = _wide_tie(10, 300)
    tensor = _tensor(run, q)
    with pytest.raises(ValueError) as err:
        parse_measure("IFT_goal(T=2,b1=0.9,R1=10)").compute(tensor)
    assert re.fullmatch(
        r"IFT_goal\(T=2,b1=0\.9,R1=10\): run 'r', topic '0': its expected value over tied "
        r"orderings is bracketed only to \+-\de-0\d \(at most 1e-10 is allowed\), and narrowing "
        r"it would need moments past order 32, or more than 2,000 openings of its first groups "
        r"of tied documents \(16,777,216 openings x ranks where every group is enumerated\); "
        r"order ties by trec_eval or input",
        str(err.value),
    ), str(err.value)
    # its ED is exact, and BPM's EU too (C is 0 or 1: the stopping rank is the depth)
    assert np.isfinite(parse_measure("IFT_goal(T=2,b1=0.9,R1=10,output=ED)").compute(tensor)).all()
    assert np.isfinite(parse_measure("BPM(T=3)").compute(tensor)).all()
    # narrowing counts its work before doing it: with 2 relevant among 5 tied documents at
    # the top and again at ranks 6-10, the moments to order 16 of both groups
    rel = {f"d{i}": int(i in (0, 1, 5, 6)) for i in range(10)}
    q_two = Qrels.from_df(pd.DataFrame({"topic": "1", "doc": list(rel), "rel": list(rel.values())}))
    run_two = pd.DataFrame(
        {"run": "r", "topic": "1", "doc": list(rel), "score": [10.0] * 5 + [5.0] * 5}
    )
    measure = parse_measure("NERR_eq10")
    counts, n = np.array([3, 2]), cwl_ties._ranks_read(measure).n
    recursion = cwl_ties._group_work(counts, cwl_ties._STATE_CELL, n - 5)
    recursion += cwl_ties._group_work(counts, cwl_ties._STATE_CELL, n)
    moments = cwl_ties._moment_work(counts, 17, n) + cwl_ties._moment_work(counts, 17, n - 5)
    monkeypatch.setattr(base, "TIED_MAXIMUM_CELLS", recursion + moments - 1)
    with pytest.raises(ValueError, match=r"narrowing it would take more than the \de\+\d+ steps"):
        measure.compute(_tensor(run_two, q_two))
    monkeypatch.setattr(base, "TIED_MAXIMUM_CELLS", 10**11)
    assert np.isfinite(measure.compute(_tensor(run_two, q_two))).all()
    monkeypatch.setattr(cwl_ties, "MAX_GROUP_STATES", 1)
    with pytest.raises(ValueError) as err:
        parse_measure("INST(output=ED)").compute(tensor)
    assert str(err.value) == (
        "INST(output=ED): run 'r', topic '0' has a group of tied documents whose exact "
        "expected value would hold 11 states at once, more than the 1 allowed; order ties by "
        "trec_eval or input"
    )


@pytest.mark.parametrize("name", ["BPM(T=2,output=ED)", "BPM_dynamic(T=1.5,output=ETU)"])
def test_bpm_reads_a_large_group_only_to_its_cost_budget(name):
    # 3,000 tied documents of grades 0, 1 and 2 open the list: their recursion would hold a
    # million states over 3,000 ranks (2.7e11 steps, refused), but no user reads past K = 10
    # ranks, and ten ranks hold 121 states. Truth: every sequence of ten gains, weighted by
    # its chance of opening the group (drawn without replacement), scored as a ranking.
    from metaeval.measures.cwl import _Ranks

    grades = np.repeat([0, 1, 2], 1000)
    rows = [("1", f"d{i}", int(g)) for i, g in enumerate(grades)]
    q = Qrels.from_df(pd.DataFrame(rows, columns=["topic", "doc", "rel"]))
    run = pd.DataFrame({"run": "r", "topic": "1", "doc": [r[1] for r in rows], "score": 1.0})
    measure = parse_measure(name)
    got = measure.compute(_tensor(run, q))[0, 0]

    table = measure.gain_values(3)  # 0, 1/2, 1: sums of halves are exact
    sequences = np.array(list(itertools.product(range(3), repeat=10)))
    chance = np.ones(len(sequences))
    left = np.full((len(sequences), 3), 1000.0)
    for p in range(10):
        picked = sequences[:, p]
        chance *= left[np.arange(len(sequences)), picked] / (3000 - p)
        left[np.arange(len(sequences)), picked] -= 1
    ranks = _Ranks(measure.max_depth, measure.cost)
    values = []
    for block in np.array_split(sequences, 12):
        lists = np.full((len(block), measure.max_depth), 0.5)  # the rest: never read
        lists[:, :10] = table[block]
        values.append(measure._outputs(measure.output, lists, ranks))
    values = np.concatenate(values)
    assert abs(chance.sum() - 1) < 1e-12
    assert abs(got - chance @ values) <= 1e-12, (got, chance @ values)


def test_bpm_dynamic_openings_are_refused_past_their_limits(monkeypatch):
    from metaeval.measures import base, cwl_ties

    # 20 tied documents of grades 0-3 (gains of a third: sums the orderings round apart)
    rows = [("0", f"d{i}", i % 4) for i in range(20)]
    q = Qrels.from_df(pd.DataFrame(rows, columns=["topic", "doc", "rel"]))
    run = pd.DataFrame({"run": "r", "topic": "0", "doc": [r[1] for r in rows], "score": 1.0})
    tensor = _tensor(run, q)
    measure = parse_measure("BPM_dynamic(T=3,K=4)")
    assert np.isfinite(measure.compute(tensor)).all()
    monkeypatch.setattr(cwl_ties, "OPENING_CELLS", 4 * 10)
    with pytest.raises(ValueError) as err:
        measure.compute(tensor)
    assert str(err.value) == (
        "BPM_dynamic(T=3,K=4): its expected value over tied orderings would score more than 10 "
        "distinct openings of the 4 ranks a user may read in run 'r', topic '0'; order ties by "
        "trec_eval or input"
    )
    monkeypatch.setattr(cwl_ties, "OPENING_CELLS", 1 << 24)
    monkeypatch.setattr(base, "TIED_MAXIMUM_CELLS", 1000)
    with pytest.raises(
        ValueError, match=r"would take more than the 1e\+03 steps allowed \(reached "
    ):
        measure.compute(tensor)


@pytest.mark.parametrize(
    "name",
    [
        "BPM(T=2,K=9)",
        "BPM(T=1.5,K=8,output=ETU)",
        "BPM_dynamic(T=2,K=8,hb=0.5)",
        "BPM_dynamic(T=1.5,K=10,hb=1.5,gain_med=0.2,output=ETU)",
        "BPM_dynamic(T=2,K=9,hb=0.7,gain_med=0.3,output=ED)",
    ],
)
def test_bpm_openings_merged_by_their_sums_equal_every_arrangement(name):
    # Gains of a third (grades 0-3): sums the orderings round apart, so openings are scored;
    # a group of 10 opening the list has 12,600 arrangements, and its openings that reach
    # the same sums (G, and BPM_dynamic's budget T) are merged: the truth scores each one.
    from metaeval.measures.cwl import _Ranks

    grades = [0, 0, 0, 0, 1, 1, 1, 2, 2, 3]
    tail = [2, 0, 3, 1, 0]
    rows = [("1", f"g{i}", g) for i, g in enumerate(grades)]
    rows += [("1", f"t{i}", g) for i, g in enumerate(tail)]
    q = Qrels.from_df(pd.DataFrame(rows, columns=["topic", "doc", "rel"]))
    scores = [10.0] * len(grades) + [5.0 - i for i in range(len(tail))]
    run = pd.DataFrame({"run": "r", "topic": "1", "doc": [r[1] for r in rows], "score": scores})
    measure = parse_measure(name)
    got = measure.compute(_tensor(run, q))[0, 0]

    table = measure.gain_values(4)
    orders = distinct_arrangements(np.array(grades))
    assert len(orders) == 12_600
    lists = np.zeros((len(orders), measure.max_depth))
    lists[:, :10] = table[orders]
    lists[:, 10:15] = table[tail]
    truth = measure._outputs(measure.output, lists, _Ranks(measure.max_depth, measure.cost))
    assert abs(got - truth.mean()) <= 1e-12, (got, truth.mean())


@pytest.mark.parametrize(
    ("counts", "length"), [((3, 2), 5), ((3, 2), 3), ((5, 1, 2), 4), ((2, 2, 2), 6), ((6, 1), 3)]
)
def test_openings_of_a_group_are_its_distinct_prefixes_with_their_chances(counts, length):
    # every ordering of the group's items (equal items told apart), cut to its opening
    from collections import Counter
    from itertools import permutations

    from metaeval.measures.cwl_ties import _opening_count, _openings

    values = np.array([0.0, 0.5, 1.0])[: len(counts)]
    items = np.repeat(values, counts)
    seen = Counter(tuple(p[:length]) for p in permutations(items))
    orders, chance = _openings(values, np.array(counts), length)
    assert _opening_count(np.array(counts), length, 10**6) == len(orders) == len(seen)
    total = sum(seen.values())
    for order, p in zip(orders, chance):
        assert p == pytest.approx(seen[tuple(order)] / total, rel=1e-12)
    assert _opening_count(np.array(counts), length, 2) == min(len(seen), 3)
