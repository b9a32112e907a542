"""Real-valued relevance grades (0, 0.5, 1.33, 2): reading and writing them, their levels, and
every measure that reads grade values.

Oracles, none of them our own output:

* a brute-force implementation written here from the formulas (one Python loop over each
  ranked list) of nDCG@k (linear and exponential gain), ERR@k, RBP, the Q-measure, AP at a real
  level ``rel`` and P@k, on random qrels with real grades, pooled-but-unjudged (-1) rows,
  unpooled documents in the runs, topics without a relevant document, and topics a run did not
  answer; agreement to 1e-12;
* cwl_eval (Azzopardi, Thomas & Moffat, SIGIR 2019), which reads real-valued gains from a
  qrels file, for C/W/L measures on a qrels file of real grades;
* invariances: halving every grade leaves nDCG (linear gain) unchanged; integer grades given
  as floats (0.0, 1.0, 2.0) are integer grades, with identical values.
"""

from __future__ import annotations

import dataclasses
import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from metaeval import EvalTensor, Qrels, RunSet, read_qrels, write_qrels
from metaeval.data.errors import TrecFormatError
from metaeval.measures import parse_measure, registered
from tests.engine.test_sparse import dense_oracle
from tests.test_param_constraints import study

#: Grade values drawn for the random collections: real, with 0 and a few repeats.
GRADES = (0.0, 0.0, 0.25, 0.5, 0.5, 1.0, 1.33, 2.0, 2.7)


# ------------------------------------------------------------------------------ collections
def random_collection(seed: int, *, n_topics: int = 8, n_runs: int = 3):
    """Qrels ``{topic: {doc: grade}}`` with real grades and -1 rows, and runs ``{run: {topic:
    [docs in ranking order]}}`` with unpooled documents, lists of 0 to 25 documents, topics
    without a relevant document and topics a run did not answer."""
    rng = np.random.default_rng(seed)
    qrels: dict = {}
    for t in range(n_topics):
        docs = {f"d{i}": float(rng.choice(GRADES)) for i in range(int(rng.integers(3, 20)))}
        for d in rng.choice(list(docs), size=min(2, len(docs)), replace=False):
            docs[str(d)] = -1.0  # pooled but unjudged
        if t % 4 == 3:  # nothing relevant: grades 0 and unjudged only
            docs = {d: (0.0 if g >= 0 else g) for d, g in docs.items()}
        qrels[f"t{t}"] = docs
    runs: dict = {}
    for s in range(n_runs):
        lists = {}
        for t, judged in qrels.items():
            if rng.random() < 0.15:
                continue  # not answered: scores 0
            pool = list(judged) + [f"x{i}" for i in range(12)]  # x: unpooled
            n = int(rng.integers(0, 26))
            lists[t] = [str(d) for d in rng.permutation(pool)[: min(n, len(pool))]]
        runs[f"s{s}"] = lists
    return qrels, runs


def as_runset(runs: dict) -> RunSet:
    """Ranked lists as a RunSet: distinct descending scores keep the given order."""
    return RunSet.from_dict(
        {
            name: {
                t: {d: float(len(docs) - i) for i, d in enumerate(docs)}
                for t, docs in lists.items()
            }
            for name, lists in runs.items()
        }
    )


def build(qrels: dict, runs: dict) -> EvalTensor:
    return EvalTensor.build(as_runset(runs), Qrels.from_dict(qrels), warn_extra_topics=False)


# ------------------------------------------------------------------------------ brute force
def grade_of(judged: dict, doc: str) -> float | None:
    """The document's grade, None when unjudged (not in the qrels, or a negative grade)."""
    g = judged.get(doc)
    return None if g is None or g < 0 else g


def bf_ndcg(ranking, judged, k, exp=False):
    def gain(g):
        return (2.0**g - 1.0) if exp else g

    gains = [gain(grade_of(judged, d) or 0.0) for d in ranking[:k]]
    dcg = sum(g / math.log2(r + 2) for r, g in enumerate(gains))
    ideal = sorted((gain(g) for g in judged.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def bf_err(ranking, judged, k, g_max):
    total, reach = 0.0, 1.0
    for r, d in enumerate(ranking[:k], start=1):
        g = grade_of(judged, d) or 0.0
        stop = (2.0**g - 1.0) / 2.0**g_max
        total += reach * stop / r
        reach *= 1.0 - stop
    return total


def bf_rbp(ranking, judged, p, g_max):
    return (1 - p) * sum((grade_of(judged, d) or 0.0) / g_max * p**r for r, d in enumerate(ranking))


def bf_q(ranking, judged, rel, beta=1.0):
    relevant = sorted((g for g in judged.values() if g >= rel), reverse=True)
    if not relevant:
        return 0.0
    ideal_cg = np.cumsum(relevant)
    total, count, cg = 0.0, 0, 0.0
    for r, d in enumerate(ranking, start=1):
        g = grade_of(judged, d)
        if g is None or g < rel:
            continue
        count += 1
        cg += g
        cg_star = ideal_cg[min(r, len(relevant)) - 1]
        total += (count + beta * cg) / (r + beta * cg_star)
    return total / len(relevant)


def bf_ap(ranking, judged, rel):
    n_rel = sum(1 for g in judged.values() if g >= rel)
    if not n_rel:
        return 0.0
    found, total = 0, 0.0
    for r, d in enumerate(ranking, start=1):
        g = grade_of(judged, d)
        if g is not None and g >= rel:
            found += 1
            total += found / r
    return total / n_rel


def bf_p(ranking, judged, rel, k):
    return sum(1 for d in ranking[:k] if (grade_of(judged, d) or -1.0) >= rel) / k


#: Each measure of the brute-force comparison: (ranking, judged, highest grade) -> value.
BRUTE_FORCE = {
    "nDCG@10": lambda r, j, top: bf_ndcg(r, j, 10),
    "nDCG": lambda r, j, top: bf_ndcg(r, j, 10**6),
    "nDCG(gain=exp)@5": lambda r, j, top: bf_ndcg(r, j, 5, exp=True),
    "ERR@10": lambda r, j, top: bf_err(r, j, 10, top),
    "ERR": lambda r, j, top: bf_err(r, j, 10**6, top),
    "RBP": lambda r, j, top: bf_rbp(r, j, 0.8, top),
    "RBP(p=0.95)": lambda r, j, top: bf_rbp(r, j, 0.95, top),
    "Q": lambda r, j, top: bf_q(r, j, 1.0),
    "Q(rel=0.5)": lambda r, j, top: bf_q(r, j, 0.5),
    "Q(beta=0.25,rel=1.33)": lambda r, j, top: bf_q(r, j, 1.33, beta=0.25),
    "AP": lambda r, j, top: bf_ap(r, j, 1.0),
    "AP(rel=0.5)": lambda r, j, top: bf_ap(r, j, 0.5),
    "AP(rel=0.3)": lambda r, j, top: bf_ap(r, j, 0.3),
    "AP(rel=1.33)": lambda r, j, top: bf_ap(r, j, 1.33),
    "P(rel=0.5)@5": lambda r, j, top: bf_p(r, j, 0.5, 5),
    "P(rel=2)@10": lambda r, j, top: bf_p(r, j, 2.0, 10),
    "P@3": lambda r, j, top: bf_p(r, j, 1.0, 3),
}


def brute_force(qrels: dict, runs: dict, name: str) -> np.ndarray:
    """(S, T) values of one of :data:`BRUTE_FORCE`, in the qrels' topic order (sorted); a
    topic a run did not answer is an empty list."""
    topics = sorted(qrels)
    top = max(max(g for g in docs.values()) for docs in qrels.values())
    out = np.zeros((len(runs), len(topics)))
    for s, lists in enumerate(runs.values()):
        for t, topic in enumerate(topics):
            out[s, t] = BRUTE_FORCE[name](lists.get(topic, []), qrels[topic], top)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_measures_agree_with_a_brute_force_implementation(seed):
    qrels, runs = random_collection(seed)
    tensor = build(qrels, runs)
    assert not tensor.integer_grades and tensor.levels[0] == 0.0
    for path in ("sparse", "dense"):
        view = tensor.using(path)
        for name in BRUTE_FORCE:
            ours = parse_measure(name).compute(view)
            np.testing.assert_allclose(
                ours, brute_force(qrels, runs, name), rtol=0, atol=1e-12, err_msg=name
            )


def test_condensed_lists_are_the_brute_force_on_judged_documents():
    qrels, runs = random_collection(11)
    judged_only = {
        name: {
            t: [d for d in docs if grade_of(qrels[t], d) is not None] for t, docs in lists.items()
        }
        for name, lists in runs.items()
    }
    tensor = build(qrels, runs)
    for name in ("nDCG@10", "AP(rel=0.5)", "Q(rel=0.5)", "P(rel=0.5)@5"):
        np.testing.assert_allclose(
            parse_measure(name).condensed().compute(tensor),
            brute_force(qrels, judged_only, name),
            rtol=0,
            atol=1e-12,
            err_msg=name,
        )


# ------------------------------------------------------------------------------ cwl_eval
def _cwl_values(qrels_path, lists: dict, make, max_gain: float) -> dict:
    from cwl.ruler.ranking import RankingMaker
    from cwl.seeker.trec_qrel_handler import TrecQrelHandler

    handler = TrecQrelHandler(str(qrels_path))
    handler.validate_gains(min_gain=0.0, max_gain=max_gain)  # as its command line does
    out = {}
    for pos, (topic, docs) in lists.items():
        maker = RankingMaker(
            topic, handler, None, max_gain=max_gain, max_cost=1.0, min_cost=1.0, max_n=1000
        )
        for doc in docs:
            maker.add(doc, "Q0")
        metric = make()
        metric.residuals = True
        metric.measure(maker.get_ranking())
        values = []
        for a in ("expected_utility", "expected_total_utility", "expected_items"):
            values += [getattr(metric, a), getattr(metric, "residual_" + a)]
        out[pos] = values
    return out


@pytest.mark.parametrize("top", [1.0, 2.5])
def test_cwl_measures_agree_with_cwl_eval_on_real_grades(tmp_path, top):
    """cwl_eval is given the qrels file of real grades itself (its reader takes floats as
    gains); ours read the same file, with the grades as gains (``gain=grade``)."""
    pytest.importorskip("cwl.ruler.cwl_ruler", reason="cwl-eval is not installed")
    from cwl.ruler.measures.cwl_dcg import NDCGCWLMetric
    from cwl.ruler.measures.cwl_inst import INSTCWLMetric
    from cwl.ruler.measures.cwl_precision import PrecisionCWLMetric
    from cwl.ruler.measures.cwl_rbp import RBPCWLMetric
    from cwl.ruler.measures.cwl_rr import RRCWLMetric

    qrels, runs = random_collection(5)
    scale = top / max(g for docs in qrels.values() for g in docs.values())
    # cwl_eval refuses negative gains and treats an absent document as unjudged: the -1 rows
    # are left out of its file (and of ours, so both files are the same).
    real = {
        t: {d: g * scale for d, g in docs.items() if g >= 0} for t, docs in qrels.items() if docs
    }
    path = tmp_path / "real.qrels"
    write_qrels(Qrels.from_dict(real), path)
    ours_qrels = read_qrels(path)
    assert not ours_qrels.integer_grades and ours_qrels.levels[-1] == pytest.approx(top)
    runset = as_runset(runs)
    tensor = EvalTensor.build(runset, ours_qrels, warn_extra_topics=False)
    position = {t: i for i, t in enumerate(tensor.topics)}
    lists = {
        (s, position[t]): (t, docs)
        for s, one in enumerate(runs.values())
        for t, docs in one.items()
        if t in position
    }
    g = f"gain=grade,max_gain={top:g}"
    measures = {
        f"CWL_RBP({g})": RBPCWLMetric,
        f"CWL_RBP(theta=0.5,{g})": lambda: RBPCWLMetric(0.5),
        f"CWL_P({g})@5": lambda: PrecisionCWLMetric(5),
        f"SDCG({g})@10": lambda: NDCGCWLMetric(10),
        f"CWL_RR({g})": RRCWLMetric,
    }
    if top <= 1.0:
        measures[f"INST({g})"] = lambda: INSTCWLMetric(1.0)
        measures[f"INST(T=2,{g})"] = lambda: INSTCWLMetric(2.0)
    outputs = ("EU", "ResEU", "ETU", "ResETU", "ED", "ResED")
    for text, make in measures.items():
        expected = _cwl_values(path, lists, make, top)
        measure = parse_measure(text)
        for o, output in enumerate(outputs):
            values = dataclasses.replace(measure, output=output).compute(tensor)
            for (s, t), theirs in expected.items():
                assert values[s, t] == pytest.approx(theirs[o], abs=1e-9), (text, output, s, t)


# ------------------------------------------------------------------------------ invariances
#: Not RBP(normalise=topic): trec_eval's rule divides the gains by the highest only when it
#: is above 1, so halved grades below 1 are kept as they are.
SCALE_FREE = ["nDCG", "nDCG@5", "nCG@10", "RBP", "RBP(p=0.5)@5", "GAP", "eGAP", "xGAP"]


def test_halving_every_grade_changes_no_scale_free_measure():
    """Gains divided by a constant leave nDCG, nCG and RBP unchanged (a power of two: exactly);
    the GAP family depends on the order of the grades only; AP and P at the halved level are
    AP and P at the level."""
    qrels, runs = random_collection(2)
    half = {t: {d: g * 0.5 if g >= 0 else g for d, g in docs.items()} for t, docs in qrels.items()}
    tensor, halved = build(qrels, runs), build(half, runs)
    np.testing.assert_array_equal(halved.levels, tensor.levels * 0.5)
    for name in SCALE_FREE:
        np.testing.assert_array_equal(
            parse_measure(name).compute(halved), parse_measure(name).compute(tensor), name
        )
    for level in (0.5, 1.33, 2):
        for name in ("AP", "P@5", "Rprec", "infAP", "Bpref", "NumRel"):
            m = parse_measure(name)
            np.testing.assert_array_equal(
                dataclasses.replace(m, rel=level / 2).compute(halved),
                dataclasses.replace(m, rel=level).compute(tensor),
                f"{name} at {level}",
            )
    # not scale-free: the exponential gain and ERR's stopping probabilities
    assert not np.allclose(
        parse_measure("ERR").compute(halved), parse_measure("ERR").compute(tensor)
    )


def _integer_collection(seed: int):
    rng = np.random.default_rng(seed)
    rows = [(f"t{t}", f"d{i}", int(rng.integers(-1, 4))) for t in range(6) for i in range(15)]
    runs = {
        f"s{s}": {f"t{t}": [f"d{i}" for i in rng.permutation(20)[:12]] for t in range(6)}
        for s in range(3)
    }
    return pd.DataFrame(rows, columns=["topic", "doc", "grade"]), runs


def test_integer_grades_written_as_floats_are_integer_grades():
    frame, runs = _integer_collection(0)
    ints = Qrels.from_df(frame)
    floats = Qrels.from_df(frame.assign(grade=frame["grade"].astype(float)))
    assert floats == ints and floats.integer_grades and ints.integer_grades
    np.testing.assert_array_equal(floats.levels, np.arange(4.0))
    np.testing.assert_array_equal(floats.grades, frame.sort_values(["topic", "doc"])["grade"])
    assert floats.to_dict() == ints.to_dict()
    assert all(isinstance(g, int) for docs in floats.to_dict().values() for g in docs.values())
    assert floats.to_df()["grade"].dtype == np.int64
    a, b = (EvalTensor.build(as_runset(runs), q) for q in (ints, floats))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rel above the highest grade, for some measures
        for cls in registered().values():
            if not cls.__module__.startswith("metaeval."):
                continue
            m = cls.example()
            np.testing.assert_array_equal(m.compute(a), m.compute(b), str(m))


def test_a_whole_level_is_the_integer_level():
    qrels, runs = random_collection(3)
    tensor = build(qrels, runs)
    for written, canonical in [
        ("P(rel=2.0)@10", "P(rel=2)@10"),
        ("AP(rel=1.0)", "AP"),
        ("Q(rel=2.0)", "Q(rel=2)"),
    ]:
        m = parse_measure(written)
        assert str(m) == canonical and m == parse_measure(canonical)
        assert isinstance(m.rel, int)
        np.testing.assert_array_equal(m.compute(tensor), parse_measure(canonical).compute(tensor))
    real = parse_measure("P(rel=0.5)@10")
    assert str(real) == "P(rel=0.5)@10" and parse_measure(str(real)) == real
    assert str(parse_measure("AP").at_level(0.5)) == "AP(rel=0.5)"
    assert str(parse_measure("AP").at_level(2.0)) == "AP(rel=2)"


def test_a_level_between_grades_counts_the_grades_above_it():
    # grades 0, 0.5, 1.33, 2: rel=1 keeps 1.33 and 2, rel=0.3 keeps 0.5 too
    qrels = {"t": {"a": 0.5, "b": 1.33, "c": 0.0, "d": 2.0, "e": -1}}
    tensor = build(qrels, {"s": {"t": ["a", "b", "c", "d", "e"]}})
    np.testing.assert_array_equal(tensor.levels, [0.0, 0.5, 1.33, 2.0])
    assert [tensor.code_at_least(r) for r in (0.3, 0.5, 1, 1.33, 2, 2.01)] == [1, 1, 2, 2, 3, 4]
    assert [int(tensor.n_relevant(r)[0]) for r in (0.3, 1, 2, 3)] == [3, 2, 1, 0]
    assert [int(tensor.n_nonrelevant(r)[0]) for r in (0.3, 1, 2, 3)] == [1, 2, 3, 4]
    np.testing.assert_array_equal(tensor.relevant(1.0)[0, 0, :5], [False, True, False, True, False])
    values = {r: parse_measure(f"P(rel={r})@5").compute(tensor)[0, 0] for r in (0.3, 1, 2)}
    assert values == {0.3: 0.6, 1: 0.4, 2: 0.2}
    with pytest.warns(UserWarning, match=r"rel=2.5 is above the highest grade in the qrels \(2\)"):
        assert parse_measure("P(rel=2.5)@5").compute(tensor)[0, 0] == 0.0


def test_grades_below_one_warn_at_the_default_level():
    tensor = build({"t": {"a": 0.5, "b": 0.8}}, {"s": {"t": ["a", "b"]}})
    with pytest.warns(UserWarning, match=r"rel=1 is above the highest grade in the qrels \(0.8\)"):
        assert parse_measure("AP").compute(tensor)[0, 0] == 0.0
    assert parse_measure("AP(rel=0.5)").compute(tensor)[0, 0] == 1.0


def test_gains_name_real_grades():
    qrels = {"t": {"a": 0.5, "b": 1.33, "c": 2.0}}
    tensor = build(qrels, {"s": {"t": ["a", "b", "c"]}})
    w = [1 / math.log2(r + 2) for r in range(3)]

    def ndcg(gains):
        ideal = sorted(gains, reverse=True)
        return sum(g * x for g, x in zip(gains, w)) / sum(g * x for g, x in zip(ideal, w))

    # a key equal to a grade overrides its gain; 1 and 3 are no grade of these qrels
    m = parse_measure("nDCG(gains={0.5:4,1:7,3:9})")
    assert str(m) == "nDCG(gains={0.5:4,1:7,3:9})"
    assert m.compute(tensor)[0, 0] == pytest.approx(ndcg([4.0, 1.33, 2.0]), abs=1e-12)
    exp = parse_measure("nDCG(gain=exp)").compute(tensor)[0, 0]
    assert exp == pytest.approx(ndcg([2**0.5 - 1, 2**1.33 - 1, 3.0]), abs=1e-12)
    assert parse_measure("nDCG(gains={2.0:3})") == parse_measure("nDCG(gains={2:3})")
    with pytest.raises(ValueError, match="gains keys must be grades"):
        parse_measure("nDCG(gains={nan:1})")


def test_gap_thresholds_are_the_grades_in_order():
    """All threshold mass on the j-th grade above 0 is AP at that grade's value."""
    qrels, runs = random_collection(4)
    tensor = build(qrels, runs)
    levels = tensor.levels[1:]
    for j, level in enumerate(levels):
        g = tuple(1.0 if i == j else 0.0 for i in range(len(levels)))
        ap = parse_measure(f"AP(rel={float(level)!r})").compute(tensor)
        for name in ("GAP", "eGAP"):
            np.testing.assert_allclose(
                dataclasses.replace(parse_measure(name), g=g).compute(tensor), ap, atol=1e-12
            )
    with pytest.raises(ValueError, match="g has 1 threshold probabilities"):
        parse_measure("GAP(g=(1,))").compute(tensor)


# ------------------------------------------------------------------------------ levels
def test_levels_of_real_grades():
    q = Qrels.from_dict({"1": {"a": 0.5, "b": 2, "c": -3}, "2": {"x": 1.33, "y": 0.5}})
    np.testing.assert_array_equal(q.levels, [0.0, 0.5, 1.33, 2.0])  # 0 added: code 0 is grade 0
    assert not q.integer_grades and q.max_grade == 2.0
    assert q.to_dict() == {"1": {"a": 0.5, "b": 2.0, "c": -1.0}, "2": {"x": 1.33, "y": 0.5}}
    assert q.code_at_least(1) == 2 and q.code_at_least(5) == 4
    assert repr(q) == "Qrels(2 topics, 5 judgments, grades [-1, 0.5, 1.33, 2])"
    # derived qrels keep the levels (up to their highest grade)
    sub = q.subset(["2"])
    np.testing.assert_array_equal(sub.levels, [0.0, 0.5, 1.33])
    assert sub.to_dict() == {"2": {"x": 1.33, "y": 0.5}}
    assert Qrels.from_df(q.to_df()) == q and Qrels.from_dict(q.to_dict()) == q
    # fold_grades counts grades: the top 2 stay, with their values
    assert q.fold_grades(2).to_dict() == {
        "1": {"a": 0.0, "b": 2.0, "c": -1.0},
        "2": {"x": 1.33, "y": 0.0},
    }
    back = pickle.loads(pickle.dumps(q))
    assert back == q and back.to_dict() == q.to_dict()
    # any negative grade is unjudged, a real one too, whatever the other grades
    assert Qrels.from_dict({"1": {"a": -0.5, "b": 2}}).to_dict() == {"1": {"a": -1, "b": 2}}
    assert Qrels.from_dict({"1": {"a": -0.5, "b": 0.5}}).to_dict() == {"1": {"a": -1.0, "b": 0.5}}


def test_the_tensor_carries_the_levels_to_every_view():
    qrels, runs = random_collection(7)
    q = Qrels.from_dict(qrels)
    tensor = EvalTensor.build(as_runset(runs), q, warn_extra_topics=False)
    np.testing.assert_array_equal(tensor.levels, q.levels)
    keep = np.random.default_rng(0).random(len(q)) < 0.5
    views = [
        tensor.with_judgments(keep),
        tensor.with_judgments(keep, dropped="unjudged"),
        tensor.with_grades(tensor.judgments),
        tensor.condensed(),
        tensor.using("dense"),
        EvalTensor.concat([tensor]),
        pickle.loads(pickle.dumps(tensor)),
        dense_oracle(tensor),
    ]
    for view in views:
        np.testing.assert_array_equal(view.levels, tensor.levels)
    condensed = parse_measure("nDCG'@10").compute(tensor)
    for view in views[2:]:  # the same judgments: the same values
        np.testing.assert_array_equal(parse_measure("nDCG@10").compute(view.condensed()), condensed)
    judged = views[0].judged_qrels()
    assert judged == q.with_grades(q.grades, keep=keep)
    np.testing.assert_array_equal(judged.levels, q.levels[: len(judged.levels)])
    with pytest.raises(ValueError, match="same qrels"):
        other = build({t: {d: 2 * g for d, g in docs.items()} for t, docs in qrels.items()}, runs)
        EvalTensor.concat([tensor, dataclasses.replace(other, runs=["a", "b", "c"])])


def test_degraders_keep_the_levels():
    from simulators.degraders import make_degrader

    qrels, runs = random_collection(8, n_topics=6)
    q = Qrels.from_dict(qrels)
    tensor = EvalTensor.build(as_runset(runs), q, warn_extra_topics=False)
    strat = make_degrader("stratified", rates=[50], rel=1.33, min_nonrel=1)
    (sample,) = strat.trial(tensor, rng=0)
    kept = sample.to_qrels()
    np.testing.assert_array_equal(kept.levels, q.levels[: len(kept.levels)])
    values = dict(zip(zip(q.topics[q.topic_index], q.docs.to_pylist()), q.grade_values))
    for (t, d), g in zip(
        zip(kept.topics[kept.topic_index], kept.docs.to_pylist()), kept.grade_values
    ):
        assert values[(t, d)] == g
    # every relevant stratum (grade >= 1.33) keeps at least min_rel = 1 document of a topic
    relevant = q.grade_values >= 1.33
    for t in range(len(q.topics)):
        if relevant[q.topic_index == t].any():
            assert (sample.keep & relevant & (q.topic_index == t)).any()
    noise = make_degrader("assessor_noise", rates=[0.5])
    (noisy,) = noise.trial(tensor, rng=0)
    assert set(noisy.to_qrels().grade_values[noisy.to_qrels().grades >= 0]) <= set(q.levels)


# ------------------------------------------------------------------------------ reading
def test_a_qrels_file_with_real_grades_reads_and_writes_back(tmp_path):
    text = "q1 0 d1 0.5\nq1 0 d2 1.25\nq1 0 d3 0\nq2 0 d1 2\nq2 0 d7 -1\nq2 0 d9 0.125\n"
    path = tmp_path / "real.qrels"
    path.write_text(text)
    q = read_qrels(path)
    np.testing.assert_array_equal(q.levels, [0.0, 0.125, 0.5, 1.25, 2.0])
    assert q.to_dict() == {
        "q1": {"d1": 0.5, "d2": 1.25, "d3": 0.0},
        "q2": {"d1": 2.0, "d7": -1.0, "d9": 0.125},
    }
    write_qrels(q, tmp_path / "back.qrels")
    assert (tmp_path / "back.qrels").read_text() == text  # the values as they were written
    assert read_qrels(tmp_path / "back.qrels") == q
    # a gzip file too, and integer files still write integers
    write_qrels(q, tmp_path / "back.qrels.gz")
    assert read_qrels(tmp_path / "back.qrels.gz") == q
    (tmp_path / "int.qrels").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    write_qrels(read_qrels(tmp_path / "int.qrels"), tmp_path / "int2.qrels")
    assert (tmp_path / "int2.qrels").read_text() == "q1 0 d1 1\nq1 0 d2 0\n"


@pytest.mark.parametrize(
    "line, problem",
    [
        ("q1 0 d2 nan", "grade 'nan' is not a finite number"),
        ("q1 0 d2 -inf", "grade '-inf' is not a finite number"),
        ("q1 0 d2 1.5x", "grade '1.5x' is not a number"),
        ("q1 0 d2 1000", "grade 1000 is above the largest supported integer grade, 127"),
    ],
)
def test_a_bad_grade_is_one_line_naming_the_file_and_line(tmp_path, line, problem):
    path = tmp_path / "bad.qrels"
    path.write_text(f"q1 0 d1 1\n{line}\n")  # integer grades: a grade of 1000 is one
    with pytest.raises(TrecFormatError) as info:
        read_qrels(path)
    assert str(info.value) == f"{path}, line 2: {problem}"


def test_more_distinct_grades_than_the_codes_hold_is_one_line(tmp_path):
    path = tmp_path / "many.qrels"
    path.write_text("".join(f"q1 0 d{i} {i / 1000}\n" for i in range(200)))
    with pytest.raises(TrecFormatError) as info:
        read_qrels(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: 199 distinct grades above 0")
    assert "127" in message and "round the grades, e.g. to 2 decimals" in message
    # rounded to 2 decimals they fit
    frame = pd.DataFrame({"topic": "q1", "doc": [f"d{i}" for i in range(200)]})
    rounded = Qrels.from_df(frame.assign(grade=np.round(np.arange(200) / 1000, 2)))
    assert len(rounded.levels) == 21
    with pytest.raises(ValueError, match=r"^grade column 'grade': 199 distinct grades above 0"):
        Qrels.from_df(frame.assign(grade=np.arange(200) / 1000))
    # 127 distinct positive grades do fit
    assert len(Qrels.from_df(frame[:128].assign(grade=np.arange(128) / 1000)).levels) == 128


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "x", None])
def test_a_bad_grade_in_a_table_names_the_row(bad):
    frame = pd.DataFrame({"topic": ["1", "1"], "doc": ["a", "b"], "grade": [0.5, bad]})
    with pytest.raises(ValueError) as info:
        Qrels.from_df(frame)
    message = str(info.value)
    assert message.startswith("grade column 'grade', row 1: ") and "not a finite number" in message
    with pytest.raises(ValueError, match="row"):
        Qrels.from_dict({"1": {"a": 0.5, "b": bad}})


def test_the_command_line_takes_a_real_level(tmp_path):
    from typer.testing import CliRunner

    from metaeval.cli import app

    (tmp_path / "q").write_text("t 0 a 0.5\nt 0 b 1.25\nt 0 c 0\n")
    (tmp_path / "r").write_text("t Q0 a 1 3 s\nt Q0 c 2 2 s\nt Q0 b 3 1 s\n")
    args = ["evaluate", str(tmp_path / "q"), str(tmp_path / "r"), "-m", "P@2", "--format", "csv"]
    out = CliRunner().invoke(app, [*args, "-l", "0.5"])
    assert out.exit_code == 0, out.output
    assert "P@2" in out.output and "0.5" in out.output.splitlines()[-1]
    bad = CliRunner().invoke(app, [*args, "-l", "0"])
    assert bad.exit_code == 2 and "--level 0: must be a relevance level, a number > 0" in bad.output


@pytest.mark.parametrize("written, read", [("0.5", 0.5), ("2.0", 2), ("3", 3)])
def test_a_study_world_takes_a_real_level(written, read):
    from metaeval.study.spec import load_spec

    spec = load_spec("study.toml", text=study(world=f"rel = {written}"))
    (world,) = spec.worlds
    assert world.rel == read and type(world.rel) is type(read)


@pytest.mark.parametrize("written", ["0", "-0.5", "nan", "inf", '"x"'])
def test_a_study_world_refuses_a_level_that_is_no_positive_number(written):
    from metaeval.study.spec import SpecError, load_spec

    with pytest.raises(SpecError) as info:
        load_spec("study.toml", text=study(world=f"rel = {written}"))
    message = str(info.value)
    assert message.startswith("study.toml: worlds[0].rel: ") and "\n" not in message
