"""nDCG forms (trec_eval, Burges exp gains, Jarvelin-Kekalainen discount, custom gains), nCG,
and parity with trec_eval (pytrec_eval) on the TREC DL 2019 / 2020 runs: ndcg with rewritten
qrels grades, condensed lists (``-J``) and gm_map."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval import EvalTensor, Qrels, Run, RunSet
from metaeval.aggregate import parse_aggregate
from metaeval.measures import parse_measure
from metaeval.measures.graded import nCG, nDCG

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def tensor_of(qrels: dict, lists: dict[str, dict[str, list[str]]]) -> EvalTensor:
    """Tensor of runs given as ranked doc-id lists per topic (scores descending)."""
    runs = {
        name: {
            t: {d: float(len(docs) - i) for i, d in enumerate(docs)} for t, docs in topics.items()
        }
        for name, topics in lists.items()
    }
    return EvalTensor.build(RunSet.from_dict(runs), Qrels.from_dict(qrels))


def value(measure: str, tensor: EvalTensor) -> np.ndarray:
    return parse_measure(measure).compute(tensor)


# A topic with grades 0..3 and one unjudged (qrels -1) document; the run ranks
# d1(1) d2(3) x(unpooled) d3(0) d4(2) u(unjudged) d5(3).
QRELS = {"t": {"d1": 1, "d2": 3, "d3": 0, "d4": 2, "d5": 3, "d6": 1, "u": -1}}
RANKING = ["d1", "d2", "x", "d3", "d4", "u", "d5"]
GRADES = [1, 3, 0, 0, 2, 0, 3]  # gain of each rank, unjudged as 0
IDEAL_GRADES = [3, 3, 2, 1, 1]  # judged documents of positive grade, sorted


@pytest.fixture(scope="module")
def small():
    return tensor_of(QRELS, {"run": {"t": RANKING}})


def dcg(gains, weights):
    return sum(g * w for g, w in zip(gains, weights))


def test_default_ndcg_is_trec_eval_form(small):
    w = [1 / math.log2(r + 1) for r in range(1, 20)]
    expected = dcg(GRADES, w) / dcg(IDEAL_GRADES, w)
    assert value("nDCG", small)[0, 0] == pytest.approx(expected, rel=1e-12)
    expected_3 = dcg(GRADES[:3], w) / dcg(IDEAL_GRADES[:3], w)
    assert value("nDCG@3", small)[0, 0] == pytest.approx(expected_3, rel=1e-12)


def test_exp_gain(small):
    w = [1 / math.log2(r + 1) for r in range(1, 20)]
    exp = lambda gs: [2**g - 1 for g in gs]  # noqa: E731
    expected = dcg(exp(GRADES[:5]), w) / dcg(exp(IDEAL_GRADES[:5]), w)
    assert value("nDCG(gain=exp)@5", small)[0, 0] == pytest.approx(expected, rel=1e-12)
    # An explicit mapping equal to 2^g - 1 is the same measure value.
    np.testing.assert_allclose(
        value("nDCG(gains={1:1,2:3,3:7})@5", small), value("nDCG(gain=exp)@5", small), rtol=1e-12
    )


def test_partial_gains_mapping_keeps_other_grades():
    # trec_eval ndcg_p semantics: unnamed grades keep their default gain (the grade).
    q = {"t": {"a": 1, "b": 2, "c": 3}}
    t = tensor_of(q, {"r": {"t": ["a", "b", "c"]}})
    w = [1 / math.log2(r + 1) for r in range(1, 5)]
    gains = [10, 2, 3]  # grade 1 -> 10, the others unchanged
    ideal = [10, 3, 2]
    assert value("nDCG(gains={1:10})", t)[0, 0] == pytest.approx(dcg(gains, w) / dcg(ideal, w))


@pytest.mark.parametrize("base", [2.0, 3.0, 10.0])
def test_jk_discount(small, base):
    def disc(r):
        return 1.0 if r <= base else math.log(r) / math.log(base)

    w = [1 / disc(r) for r in range(1, 20)]
    expected = dcg(GRADES, w) / dcg(IDEAL_GRADES, w)
    m = nDCG(discount="jk", base=base)
    assert m.compute(small)[0, 0] == pytest.approx(expected, rel=1e-12)
    assert parse_measure(str(m)) == m
    # b = 2 does not discount ranks 1 and 2 (JK 2002), unlike log2(r+1).
    if base == 2.0:
        assert w[:2] == [1.0, 1.0] and w[3] == pytest.approx(0.5)


def test_ncg(small):
    assert value("nCG@2", small)[0, 0] == pytest.approx((1 + 3) / (3 + 3))
    assert value("nCG@5", small)[0, 0] == pytest.approx(6 / 10)
    # Without a cutoff: the share of the topic's total gain retrieved (d6 is missing).
    assert value("nCG", small)[0, 0] == pytest.approx(9 / 10)
    assert value("nCG(gain=exp)@2", small)[0, 0] == pytest.approx((1 + 7) / 14)


def test_unjudged_have_gain_zero_and_condensed_removes_them(small):
    w = [1 / math.log2(r + 1) for r in range(1, 20)]
    condensed = [1, 3, 0, 2, 3]  # x and u removed
    assert value("nDCG'", small)[0, 0] == pytest.approx(dcg(condensed, w) / dcg(IDEAL_GRADES, w))


def test_no_relevant_scores_zero():
    t = tensor_of({"t": {"a": 0, "b": 0}}, {"r": {"t": ["a", "b"]}})
    for m in ("nDCG", "nDCG@1", "nDCG(gain=exp)", "nDCG(discount=jk)", "nCG"):
        assert value(m, t)[0, 0] == 0.0


@pytest.mark.parametrize(
    "text, match",
    [
        ("nDCG(gain=cubic)", "gain must be one of"),
        ("nDCG(discount=log3)", "discount must be one of"),
        ("nDCG(base=3)", "base applies to discount=jk"),
        ("nDCG(discount=jk,base=1)", "base must be a number > 1"),
        ("nDCG(gains={1:-1})", "gains values must be finite"),
        ("nDCG(gains={-1:2})", "gains keys must be grades, finite numbers >= 0"),
        ("nDCG(gains=3)", "gains must map grades"),
        ("nCG(gain=log)", "gain must be one of"),
    ],
)
def test_bad_parameters(text, match):
    with pytest.raises(ValueError, match=match):
        parse_measure(text)


def test_python_dict_gains_are_hashable_and_equal_to_parsed():
    m = nDCG(gains={3: 7, 1: 1, 2: 3}, cutoff=10)
    assert m == parse_measure("nDCG(gains={1:1,2:3,3:7})@10")
    assert hash(m) == hash(parse_measure(str(m)))
    assert str(nCG(gain="exp", cutoff=5)) == "nCG(gain=exp)@5"


# ---------------------------------------------------------------------------- trec_eval parity
pytrec_eval = pytest.importorskip("pytrec_eval")


def _dl(year: int, every: int = 3):
    """Qrels, every ``every``-th run (float32 scores), their tensor and pytrec_eval dicts.

    A third of the runs keeps the module at a few seconds; it still compares thousands of
    (run, topic) values per measure.
    """
    folder = DATA / f"trec-dl-{year}"
    if not (folder / "qrels.txt").is_file():
        pytest.skip(f"TREC DL {year} data not found at {folder} (shared data folder absent)")
    qrels = metaeval.read_qrels(folder / "qrels.txt")
    runs = []
    for path in sorted((folder / "runs").glob("*.gz"))[::every]:
        df = pd.read_csv(
            path,
            sep=r"\s+",
            header=None,
            usecols=[0, 2, 4],
            names=["topic", "doc", "score"],
            dtype={"topic": str, "doc": str},
        )
        # pytrec_eval compares scores as float32 (METHODS §6.0): give both tools the same ties.
        scores = df["score"].to_numpy().astype(np.float32).astype(np.float64)
        runs.append(Run(path.name, df["topic"].to_numpy(), df["doc"].to_numpy(), scores))
    runset = RunSet(runs)
    return qrels, runset, EvalTensor.build(runset, qrels), [r.to_dict() for r in runs]


@pytest.fixture(scope="module", params=[2019, 2020])
def dl(request):
    return _dl(request.param)


def _pytrec(qrels_dict, run_dicts, measures, **kwargs):
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, measures, **kwargs)
    return [evaluator.evaluate(r) for r in run_dicts]


def _compare(tensor, ours: str, results, key: str, *, zero_elsewhere: bool = True):
    got = parse_measure(ours).compute(tensor)
    topics = list(tensor.topics)
    checked = 0
    for s, per_topic in enumerate(results):
        seen = np.zeros(len(topics), dtype=bool)
        for topic, values in per_topic.items():
            i = topics.index(topic)
            seen[i] = True
            assert got[s, i] == pytest.approx(values[key], abs=1e-12), (ours, tensor.runs[s], topic)
            checked += 1
        if zero_elsewhere:
            # trec_eval -c: a topic the run did not answer (or, with -J, has no judged
            # document for) scores 0.
            assert np.all(got[s, ~seen] == 0.0), (ours, tensor.runs[s])
    assert checked > 500


def test_ndcg_default_parity(dl):
    qrels, _, tensor, run_dicts = dl
    results = _pytrec(qrels.to_dict(), run_dicts, {"ndcg", "ndcg_cut.10", "ndcg_cut.100"})
    _compare(tensor, "nDCG", results, "ndcg")
    _compare(tensor, "nDCG@10", results, "ndcg_cut_10")
    _compare(tensor, "nDCG@100", results, "ndcg_cut_100")


@pytest.mark.parametrize(
    "mapping, also",
    [
        ({0: 0, 1: 1, 2: 3, 3: 7}, "nDCG(gain=exp)"),
        # Grade 1 worthless (so out of the ideal list too) and gains not monotone in the grade.
        ({0: 0, 1: 0, 2: 5, 3: 2}, None),
    ],
)
def test_ndcg_custom_gains_parity_by_rewriting_qrels(dl, mapping, also):
    qrels, _, tensor, run_dicts = dl
    # trec_eval's gains are the qrels values: rewriting the grades is trec_eval with these gains.
    rewritten = {t: {d: mapping[g] for d, g in docs.items()} for t, docs in qrels.to_dict().items()}
    results = _pytrec(rewritten, run_dicts, {"ndcg", "ndcg_cut.10"})
    gains = "{" + ",".join(f"{k}:{v}" for k, v in mapping.items() if k > 0) + "}"
    _compare(tensor, f"nDCG(gains={gains})", results, "ndcg")
    _compare(tensor, f"nDCG(gains={gains})@10", results, "ndcg_cut_10")
    if also:
        _compare(tensor, also, results, "ndcg")


def test_condensed_parity_with_trec_eval_J(dl):
    qrels, _, tensor, run_dicts = dl
    results = _pytrec(
        qrels.to_dict(),
        run_dicts,
        {"map", "ndcg", "ndcg_cut.10", "P.10", "recip_rank", "bpref"},
        judged_docs_only_flag=True,
    )
    _compare(tensor, "AP'", results, "map")
    _compare(tensor, "nDCG'", results, "ndcg")
    _compare(tensor, "nDCG'@10", results, "ndcg_cut_10")
    _compare(tensor, "P'@10", results, "P_10")
    _compare(tensor, "RR'", results, "recip_rank")
    _compare(tensor, "Bpref'", results, "bpref")
    # The condensed list really differs from the full one on these runs.
    assert not np.allclose(value("AP'", tensor), value("AP", tensor))


def test_gm_map_parity(dl):
    qrels, _, tensor, run_dicts = dl
    results = _pytrec(qrels.to_dict(), run_dicts, {"gm_map"})
    ap = value("AP", tensor)
    topics = list(tensor.topics)
    gmean = parse_aggregate("gmean")
    for s, per_topic in enumerate(results):
        idx = [topics.index(t) for t in per_topic]
        # trec_eval's per-topic gm_map value is ln(max(AP, 1e-5)); the run's gm_map is exp(mean).
        expected = math.exp(np.mean([v["gm_map"] for v in per_topic.values()]))
        assert float(gmean(ap[s, idx])) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("level", [1, 2, 3])
def test_gap_family_point_mass_is_trec_eval_map_at_level(dl, level):
    """GAP, xGAP, eGAP with all threshold mass on grade k, and Q(beta=0,rel=k), are trec_eval's
    map with -l k, per topic, on real runs."""
    qrels, _, tensor, run_dicts = dl
    results = _pytrec(qrels.to_dict(), run_dicts, {"map"}, relevance_level=level)
    g = "(" + ",".join("1" if j == level else "0" for j in (1, 2, 3)) + ")"
    for family in ("GAP", "xGAP", "eGAP"):
        _compare(tensor, f"{family}(g={g})", results, "map")
    _compare(tensor, f"Q(beta=0,rel={level})", results, "map")


def test_bpref_r_is_trec_eval_bpref_when_n_at_least_r(dl):
    """trec_eval divides by min(N, R): where N >= R that is R, i.e. bpref_R (METHODS §6.2)."""
    qrels, _, tensor, run_dicts = dl
    results = _pytrec(qrels.to_dict(), run_dicts, {"bpref"})
    got = value("Bpref_R", tensor)
    topics = list(tensor.topics)
    wide = tensor.n_nonrelevant(1) >= tensor.n_relevant(1)
    checked = 0
    for s, per_topic in enumerate(results):
        for topic, values in per_topic.items():
            i = topics.index(topic)
            if wide[i]:
                assert got[s, i] == pytest.approx(values["bpref"], abs=1e-12)
                checked += 1
    assert checked > 300
