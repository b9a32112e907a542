"""Property test: hypothesis-generated runs and qrels (score ties, unjudged and pooled-unjudged
documents, topics missing from runs or qrels, graded levels) against trec_eval via pytrec_eval."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metaeval
from tests.oracle.test_trec_dl import measure_map

pytrec_eval = pytest.importorskip("pytrec_eval")

DOCS = [f"d{i:02d}" for i in range(30)]
# trec_eval caches the last topic it formed by its id (form_res_rels.c), across evaluator
# objects in one process; a fresh id per example keeps one example from reading another's cache.
_EXAMPLE = itertools.count()


@st.composite
def collections(draw):
    n_topics = draw(st.integers(1, 4))
    prefix = f"e{next(_EXAMPLE)}-"
    qrels, run = {}, {}
    for t in range(n_topics):
        topic = f"{prefix}t{t}"
        judged = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=20))
        if judged:
            grades = draw(
                st.lists(
                    st.sampled_from([-1, 0, 0, 1, 2, 3]), min_size=len(judged), max_size=len(judged)
                )
            )
            # trec_eval's ndcg_cut reads rel_levels[-1] (undefined, it can loop forever) for a
            # topic whose only judgments are -1; such topics are tested on their own below.
            if max(grades) < 0:
                grades[0] = 0
            qrels[topic] = dict(zip(judged, grades))
        if draw(st.booleans()) or not judged:
            retrieved = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=25))
            # Scores from a small set of halves make ties frequent and exact in float32.
            scores = draw(
                st.lists(st.integers(0, 6), min_size=len(retrieved), max_size=len(retrieved))
            )
            run[topic] = {d: s / 2 for d, s in zip(retrieved, scores)}
    if not qrels:
        qrels[prefix + "t0"] = {"d00": 1}
    if not run:
        run[prefix + "t0"] = {"d00": 1.0}
    return qrels, run


@pytest.mark.filterwarnings(
    # rel=2 on drawn collections without a grade 2: every score 0, as warned (and as trec_eval)
    r"ignore:.*is above the highest grade in the qrels:UserWarning"
)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections(), st.sampled_from([1, 2]))
def test_random_collections_match_trec_eval(collection, rel):
    qrels_dict, run_dict = collection
    names = measure_map(rel)
    expected = pytrec_eval.RelevanceEvaluator(qrels_dict, set(names), relevance_level=rel).evaluate(
        run_dict
    )
    qrels = metaeval.Qrels.from_dict(qrels_dict)
    run = metaeval.Run.from_dict(run_dict, "sys")
    tensor = metaeval.EvalTensor.build(run, qrels, warn_extra_topics=False)
    scores = metaeval.score_matrices(tensor, list(names.values()))
    topics = list(tensor.topics)
    for topic, values in expected.items():
        for name, value in values.items():
            got = scores[str(metaeval.parse_measure(names[name]))][0, topics.index(topic)]
            assert abs(got - value) < 1e-9, (topic, name, got, value)


@settings(max_examples=60, deadline=None)
@given(collections())
def test_condensed_lists_match_trec_eval_judged_only(collection):
    """trec_eval -J (judged documents only) is the condensed-list variant, AP' etc."""
    qrels_dict, run_dict = collection
    names = {k: v for k, v in measure_map(1).items() if k not in ("num_ret",)}
    expected = pytrec_eval.RelevanceEvaluator(
        qrels_dict, set(names), judged_docs_only_flag=True
    ).evaluate(run_dict)
    qrels = metaeval.Qrels.from_dict(qrels_dict)
    run = metaeval.Run.from_dict(run_dict, "sys")
    tensor = metaeval.EvalTensor.build(run, qrels, warn_extra_topics=False)
    scores = metaeval.score_matrices(
        tensor, [metaeval.parse_measure(v).condensed() for v in names.values()]
    )
    topics = list(tensor.topics)
    for topic, values in expected.items():
        for name, value in values.items():
            key = str(metaeval.parse_measure(names[name]).condensed())
            got = scores[key][0, topics.index(topic)]
            assert abs(got - value) < 1e-9, (topic, name, got, value)


def test_topic_with_only_pooled_unjudged_documents_scores_zero():
    """No judged document at all: every measure is 0 (trec_eval's policy for R = 0)."""
    qrels = metaeval.Qrels.from_dict({"a": {"d1": -1, "d2": -1}, "b": {"d1": 1}})
    run = metaeval.Run.from_dict({"a": {"d1": 2.0, "d2": 1.0}, "b": {"d1": 1.0}}, "s")
    frame = metaeval.evaluate(run, qrels, list(measure_map(1).values()))
    values = frame[(frame.topic == "a") & ~frame.measure.isin(["NumRet"])]["value"]
    assert (values == 0).all() and len(values) == len(measure_map(1)) - 1
