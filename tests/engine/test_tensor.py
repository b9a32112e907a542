"""The evaluation tensor: layout, reduced judgment sets by gather, condensed views, topic policy."""

from __future__ import annotations

import numpy as np
import pytest

import metaeval
from metaeval.engine import UNJUDGED, UNPOOLED, EvalTensor

# The warning about the unjudged topic t9 is asserted in test_layout.
pytestmark = pytest.mark.filterwarnings("ignore:.*have no judgments")

MEASURES = [
    "AP",
    "P@5",
    "Rprec",
    "RR",
    "R@10",
    "nDCG",
    "nDCG@5",
    "Bpref",
    "infAP",
    "Success@3",
    "NumRet",
    "NumRel",
    "NumRelRet",
    "Judged@5",
    "AP(rel=2)",
]


@pytest.fixture
def small():
    qrels = metaeval.Qrels.from_dict(
        {
            "t1": {"a": 2, "b": 0, "c": 1, "d": -1, "z": 1},
            "t2": {"a": 0, "e": 1},
            "t3": {"x": 0},
        }
    )
    runs = metaeval.RunSet.from_dict(
        {
            "s1": {
                "t1": {"a": 5, "u": 4, "b": 3, "c": 2, "d": 1},
                "t2": {"e": 1, "a": 0.5},
                "t9": {"a": 1},
            },
            "s2": {"t1": {"z": 1.0, "c": 0.9}},
        }
    )
    return runs, qrels


def test_layout(small):
    runs, qrels = small
    with pytest.warns(UserWarning, match="t9"):
        tensor = EvalTensor.build(runs, qrels)
    assert tensor.shape == (2, 3, 5)
    assert list(tensor.topics) == ["t1", "t2", "t3"]
    assert tensor.codes[0, 0].tolist() == [2, UNPOOLED, 0, 1, UNJUDGED]
    assert tensor.codes[0, 1, :2].tolist() == [1, 0]
    assert tensor.lengths.tolist() == [[5, 2, 0], [2, 0, 0]]
    assert tensor.answered.tolist() == [[True, True, False], [True, False, False]]
    assert tensor.grade_counts.tolist() == [[1, 2, 1], [1, 1, 0], [1, 0, 0]]
    assert tensor.n_relevant(1).tolist() == [3, 1, 0]
    assert tensor.n_relevant(2).tolist() == [1, 0, 0]
    # every retrieved judged document points at its own qrels row
    docs = qrels.docs.to_pylist()
    assert docs[tensor.doc_index[0, 0, 0]] == "a" and tensor.doc_index[0, 0, 1] == len(qrels)


def test_depth_cut(small):
    runs, qrels = small
    tensor = EvalTensor.build(runs, qrels, depth=2, warn_extra_topics=False)
    assert tensor.depth == 2 and tensor.lengths.max() == 2
    with pytest.raises(ValueError, match="depth"):
        EvalTensor.build(runs, qrels, depth=0)
    with pytest.raises(ValueError, match="depth"):  # not an OverflowError deep inside
        EvalTensor.build(runs, qrels, depth=10**30)


@pytest.mark.filterwarnings(
    # rebuilt from a random 60% of the judgments, a topic can keep no grade-2 document: AP(rel=2)
    # is then 0 there, as warned
    r"ignore:.*is above the highest grade in the qrels:UserWarning"
)
def test_with_judgments_equals_rebuilding(small):
    runs, qrels = small
    tensor = EvalTensor.build(runs, qrels, warn_extra_topics=False)
    rng = np.random.default_rng(3)
    for dropped in ("unpooled", "unjudged"):
        for _ in range(5):
            keep = rng.random(len(qrels)) < 0.6
            reduced = tensor.with_judgments(keep, dropped=dropped)
            rebuilt = EvalTensor.build(runs, reduced.judged_qrels(), warn_extra_topics=False)
            # The rebuilt qrels lose whole topics when all their rows go; compare on shared ones.
            shared = np.isin(tensor.topics, rebuilt.topics)
            for m in MEASURES:
                a = metaeval.parse_measure(m).compute(reduced)[:, shared]
                b = metaeval.parse_measure(m).compute(rebuilt)
                np.testing.assert_allclose(a, b, atol=1e-12, err_msg=f"{m} {dropped}")


def test_with_judgments_validates(small):
    runs, qrels = small
    tensor = EvalTensor.build(runs, qrels, warn_extra_topics=False)
    with pytest.raises(ValueError, match="keep"):
        tensor.with_judgments(np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match="dropped"):
        tensor.with_judgments(np.ones(len(qrels), dtype=bool), dropped="gone")
    with pytest.raises(ValueError, match="codes"):
        tensor.with_grades(np.full(len(qrels), 9))


def test_with_grades_changes_grades_only(small):
    runs, qrels = small
    tensor = EvalTensor.build(runs, qrels, warn_extra_topics=False)
    flipped = tensor.with_grades(
        np.where(tensor.judgments == 0, 1, tensor.judgments).astype(np.int8)
    )
    assert flipped.codes[0, 0, 2] == 1 and flipped.codes[0, 0, 1] == UNPOOLED
    assert flipped.grade_counts[:, 0].sum() == 0


def test_condensed_view_equals_judged_only_runs(small):
    runs, qrels = small
    tensor = EvalTensor.build(runs, qrels, warn_extra_topics=False)
    condensed = tensor.condensed()
    assert condensed.judged_only and condensed.condensed() is condensed
    assert tensor.condensed() is condensed  # cached
    assert condensed.codes[0, 0, :3].tolist() == [2, 0, 1]
    assert condensed.lengths.tolist() == [[3, 2, 0], [2, 0, 0]]
    judged = {t: {d for d, g in docs.items() if g >= 0} for t, docs in qrels.to_dict().items()}
    only = metaeval.RunSet.from_dict(
        {
            r.name: {
                t: {d: s for d, s in docs.items() if d in judged.get(t, ())}
                for t, docs in r.to_dict().items()
            }
            for r in runs
        }
    )
    plain = EvalTensor.build(only, qrels, warn_extra_topics=False)
    for m in MEASURES:
        measure = metaeval.parse_measure(m)
        np.testing.assert_allclose(
            measure.condensed().compute(tensor), measure.compute(plain), atol=1e-12, err_msg=m
        )


def test_missing_topic_policy(small):
    runs, qrels = small
    zero = metaeval.evaluate(runs, qrels, "AP")
    assert len(zero) == 6  # every qrels topic for every run
    assert zero.loc[(zero.run == "s2") & (zero.topic == "t2"), "value"].item() == 0
    skip = metaeval.evaluate(runs, qrels, "AP", missing="skip")
    assert len(skip) == 3
    mean_zero = metaeval.evaluate(runs, qrels, "AP", per_topic=False).set_index("run")["value"]
    mean_skip = metaeval.evaluate(runs, qrels, "AP", per_topic=False, missing="skip").set_index(
        "run"
    )["value"]
    assert mean_skip["s2"] == pytest.approx(3 * mean_zero["s2"])
    with pytest.raises(ValueError, match="missing"):
        metaeval.evaluate(runs, qrels, "AP", missing="drop")


def test_topic_without_relevant_documents_scores_zero(small):
    runs, qrels = small
    frame = metaeval.evaluate(runs, qrels, ["AP", "nDCG", "Bpref", "RR"])
    assert (frame.loc[frame.topic == "t3", "value"] == 0).all()


def test_values_by_hand(small):
    runs, qrels = small
    got = metaeval.evaluate(runs, qrels, MEASURES).set_index(["run", "topic", "measure"])["value"]
    # s1, t1: ranking a(2) u(-) b(0) c(1) d(pooled unjudged); relevant a, c, z: R = 3
    assert got["s1", "t1", "AP"] == pytest.approx((1 / 1 + 2 / 4) / 3)
    assert got["s1", "t1", "P@5"] == pytest.approx(2 / 5)
    assert got["s1", "t1", "Rprec"] == pytest.approx(1 / 3)
    assert got["s1", "t1", "RR"] == 1
    assert got["s1", "t1", "AP(rel=2)"] == 1
    assert got["s1", "t1", "NumRet"] == 5 and got["s1", "t1", "NumRel"] == 3
    assert got["s1", "t1", "NumRelRet"] == 2
    assert got["s1", "t1", "Judged@5"] == pytest.approx(3 / 5)
    # bpref: N = 1; a has no non-relevant above (1), c has b above: 1 - min(1,3)/min(1,3) = 0
    assert got["s1", "t1", "Bpref"] == pytest.approx(1 / 3)
    # nDCG: DCG = 2/log2(2) + 1/log2(5); ideal 2, 1, 1 at ranks 1-3
    dcg = 2 + 1 / np.log2(5)
    ideal = 2 + 1 / np.log2(3) + 1 / np.log2(4)
    assert got["s1", "t1", "nDCG"] == pytest.approx(dcg / ideal)
    # infAP at c (j=3): 1/4 + 3/4 * (1 rel + 1 nonrel + 0 unj)/3 * (1+e)/(1+1+2e)
    e = 1e-5
    term = 1 / 4 + 3 / 4 * (2 / 3) * ((1 + e) / (2 + 2 * e))
    assert got["s1", "t1", "infAP"] == pytest.approx((1 + term) / 3)


def test_evaluate_accepts_many_input_shapes(tmp_path, small):
    runs, qrels = small
    expected = metaeval.evaluate(runs, qrels, ["AP", "nDCG@3"])
    metaeval.write_qrels(qrels, tmp_path / "q")
    paths = metaeval.write_runs(runs, tmp_path / "runs")
    for r, q in (
        (paths, tmp_path / "q"),
        (list(runs), qrels.to_df()),
        (runs.to_dict(), qrels.to_dict()),
        (runs.to_df(), qrels),
    ):
        got = metaeval.evaluate(r, q, ["AP", "nDCG@3"])
        np.testing.assert_allclose(got["value"], expected["value"])
    single = metaeval.evaluate(runs[0], qrels, "AP")
    assert set(single.run) == {"s1"}
    with pytest.raises(TypeError):
        metaeval.evaluate(42, qrels, "AP")
    with pytest.raises(ValueError, match="measures"):
        metaeval.evaluate(runs, qrels, [])
