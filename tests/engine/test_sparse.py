"""The sparse tensor: the hash join, the entries, and the sparse evaluation path against the
dense one as oracle.

Every registered measure (built-ins, condensed variants and a plugin) must give identical
values through the entries (``using("sparse")``) and through the dense codes, under random
judgment masks, grade changes and condensed views. The dense oracle is built from the dense
document index with :meth:`EvalTensor.from_index`, so it reads every code through one gather
and shares nothing with the entries.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metaeval
from metaeval.engine import UNJUDGED, UNPOOLED, EvalTensor
from metaeval.engine import tensor as tensor_module
from metaeval.measures import load_plugin, parse_measure, registered

PLUGIN = Path(__file__).resolve().parents[2] / "examples" / "my_measures.py"
load_plugin(PLUGIN)

VARIANTS = [
    "AP@3",
    "AP(rel=2)",
    "P(rel=2)@3",
    "RR@2",
    "R@4",
    "Success@2",
    "Rprec(rel=2)",
    "nDCG@3",
    "nDCG(gain=exp)",
    "nDCG(discount=jk,base=3)@4",
    "nDCG(gains={0:0.5,2:2.5})",
    "nCG@3",
    "nCG(gains={1:0.3,2:1.7,3:2.9})",
    "Q(beta=0.5)",
    "Q(rel=2)@5",
    "Q(gains={1:1,2:3,3:7})",
    "RBP(p=0.5)",
    "RBP(p=0.95,gains={3:1,2:0.9,1:0.2})@6",
    "RBP_resid(p=0.95)@5",
    "ERR@3",
    "nERR@4",
    "GAP(g=(0.2,0.3,0.5))",
    "xGAP(g=(0,0.4,0.6))",
    "eGAP(g=(0.5,0.5,0))",
    "Bpref(rel=2)",
    "Bpref_R(rel=2)",
    "Bpref_N(rel=2)",
    "infAP(rel=2)",
    "Judged@3",
    "NumRelRet(rel=2)",
    "RprecHalf(rel=2)",
]


def all_measures():
    base = [cls.example() for cls in registered().values()]
    base += [parse_measure(v) for v in VARIANTS]
    return base + [m.condensed() for m in base]


MEASURES = all_measures()


def test_every_registered_measure_and_the_plugin_are_covered():
    names = {m.name for m in MEASURES}
    assert set(registered()) <= names and "RprecHalf" in names
    assert any(m.judged_only for m in MEASURES)


@st.composite
def collections(draw):
    """Qrels (grades -1..3) and three runs with unpooled documents, topics the runs skip,
    topics without judgments and lists of different lengths."""
    n_topics = draw(st.integers(1, 4))
    qrels, runs = {}, {f"r{i}": {} for i in range(3)}
    for t in range(n_topics):
        topic = f"T{t}"
        grades = draw(st.lists(st.integers(-1, 3), min_size=1, max_size=12))
        qrels[topic] = {f"{topic}d{i}": g for i, g in enumerate(grades)}
        # Documents judged for another topic only: the join must not match them here.
        pool = list(qrels[topic]) + [f"x{i}" for i in range(draw(st.integers(0, 6)))]
        pool += [f"T{(t + 1) % n_topics}d0"]
        for name in runs:
            if draw(st.booleans()) and t > 0:
                continue
            ranking = draw(st.permutations(sorted(set(pool))))
            runs[name][topic] = ranking[: draw(st.integers(1, len(ranking)))]
    runs["r0"]["unjudged-topic"] = ["a", "b"]
    scored = {
        name: {
            t: {d: float(len(docs) - i) for i, d in enumerate(docs)} for t, docs in topics.items()
        }
        for name, topics in runs.items()
    }
    return RunSet_from(scored), metaeval.Qrels.from_dict(qrels), qrels, scored


def RunSet_from(scored):
    return metaeval.RunSet.from_dict(scored)


def dense_oracle(tensor: EvalTensor) -> EvalTensor:
    """The same tensor, rebuilt from its dense index (codes by gather), on the dense path."""
    return EvalTensor.from_index(
        doc_index=tensor.doc_index.copy(),
        judgments=tensor.judgments.copy(),
        runs=tensor.runs,
        topics=tensor.topics,
        lengths=tensor.lengths,
        answered=tensor.answered,
        judgment_topic=tensor.judgment_topic,
        n_grades=tensor.n_grades,
        levels=tensor.levels,
        qrels=tensor.qrels,
        path="dense",
    )


def assert_paths_agree(tensor: EvalTensor, label: str) -> None:
    sparse, dense = tensor.using("sparse"), dense_oracle(tensor)
    assert sparse.sparse and not dense.sparse
    for m in MEASURES:
        a, b = m.compute(sparse), m.compute(dense)
        assert np.array_equal(a, b), (label, str(m), a, b)


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(collections(), st.integers(0, 2**32 - 1))
@pytest.mark.filterwarnings("ignore:.*have no judgments", "ignore:.*above the highest grade")
def test_sparse_and_dense_paths_give_identical_values(collection, seed):
    runs, qrels, _, _ = collection
    tensor = EvalTensor.build(runs, qrels)
    rng = np.random.default_rng(seed)
    assert_paths_agree(tensor, "full")
    for dropped in ("unpooled", "unjudged"):
        keep = rng.random(len(qrels)) < rng.uniform(0, 1)
        assert_paths_agree(tensor.with_judgments(keep, dropped=dropped), dropped)
    noisy = rng.integers(UNJUDGED, tensor.n_grades, size=len(qrels)).astype(np.int8)
    assert_paths_agree(tensor.with_grades(noisy), "with_grades")


@SETTINGS
@given(collections(), st.sampled_from([None, 1, 2, 5]))
@pytest.mark.filterwarnings("ignore:.*have no judgments")
def test_build_matches_a_dictionary_lookup(collection, depth):
    runs, qrels, judged, scored = collection
    tensor = EvalTensor.build(runs, qrels, depth=depth)
    rows = {(t, d): i for i, (t, d) in enumerate(zip(qrels.to_df().topic, qrels.to_df().doc))}
    topics = list(tensor.topics)
    expected = np.full(tensor.shape, len(qrels), dtype=np.int32)
    lengths = np.zeros(tensor.shape[:2], dtype=np.int32)
    for s, run in enumerate(runs):
        for topic, ranked in run.to_dict().items():
            if topic not in topics:
                continue
            t = topics.index(topic)
            docs = list(ranked)[: depth or None]
            lengths[s, t] = len(docs)
            for r, d in enumerate(docs):
                expected[s, t, r] = rows.get((topic, d), len(qrels))
    assert np.array_equal(tensor.lengths, lengths)
    assert np.array_equal(tensor.doc_index, expected)
    grades = np.append(np.where(qrels.grades >= 0, qrels.grades, UNJUDGED), UNPOOLED)
    assert np.array_equal(tensor.codes, grades[expected])
    # Entries are the judged ranks, in (run, topic, rank) order.
    flat = tensor.entry_group.astype(np.int64) * tensor.depth + tensor.entry_rank
    assert np.array_equal(flat, np.flatnonzero(expected.reshape(-1) < len(qrels)))


@pytest.mark.filterwarnings("ignore:.*have no judgments")
def test_join_in_batches_and_by_sorted_keys(monkeypatch):
    qrels = metaeval.Qrels.from_dict(
        {f"t{t}": {f"d{(t * 7 + i) % 40}": (i % 4) - 1 for i in range(15)} for t in range(6)}
    )
    rng = np.random.default_rng(0)
    runs = metaeval.RunSet.from_dict(
        {
            f"r{s}": {
                f"t{t}": {f"d{d}": float(-i) for i, d in enumerate(rng.permutation(40)[:25])}
                for t in range(7)
            }
            for s in range(5)
        }
    )
    reference = EvalTensor.build(runs, qrels, depth=20)
    monkeypatch.setattr(tensor_module, "_JOIN_ROWS", 60)  # several batches of runs
    monkeypatch.setattr(tensor_module, "_TABLE_CELLS", 1)  # sorted keys, not a dense table
    other = EvalTensor.build(runs, qrels, depth=20)
    assert np.array_equal(other.doc_index, reference.doc_index)
    assert np.array_equal(other.codes, reference.codes)


@pytest.mark.parametrize("judged_share", [0.05, 0.5, 0.95])
def test_the_two_lookups_find_the_same_entries(monkeypatch, judged_share):
    # the hash join (few ids judged) and index_in (most ids judged) must agree to the entry,
    # whatever the sample of ids decides; here each is forced in turn
    rng = np.random.default_rng(1)
    judged = [f"j{i}" for i in range(60)]
    qrels = metaeval.Qrels.from_dict(
        {f"t{t}": {d: int(rng.integers(-1, 3)) for d in rng.choice(judged, 25)} for t in range(5)}
    )

    def ranked():
        docs = [
            str(rng.choice(judged)) if rng.random() < judged_share else f"u{rng.integers(10**6)}"
            for _ in range(40)
        ]
        return {d: float(rng.integers(5)) for d in docs}  # tied scores, repeats merged

    runs = metaeval.RunSet.from_dict(
        {f"r{s}": {f"t{t}": ranked() for t in range(6)} for s in range(4)}
    )
    built = {}
    for share in (0.0, 1.0):  # 0: index_in as soon as one sampled id is judged; 1: always join
        monkeypatch.setattr(tensor_module, "_JOIN_MATCH_SHARE", share)
        monkeypatch.setattr(tensor_module, "_JOIN_ROWS", 300)  # several batches too
        built[share] = EvalTensor.build(runs, qrels, depth=30, warn_extra_topics=False)
    for a, b in zip(built[0.0].given_entries, built[1.0].given_entries):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert built[0.0].n_entries > 0
    # and the entries are those of a lookup by hand: every (run, topic, rank) within the depth
    # whose document has a qrels row for that topic
    topic_ids = qrels.topics[qrels.topic_index]
    rows = {(t, d): i for i, (t, d) in enumerate(zip(topic_ids, qrels.docs.to_pylist()))}
    expected = [
        (s * len(qrels.topics) + list(qrels.topics).index(t), k, rows[t, d])
        for s, run in enumerate(runs)
        for t, block in zip(run.topics, np.split(run.docs.to_pylist(), run.offsets[1:-1]))
        for k, d in enumerate(block)
        if (t, d) in rows and k < 30
    ]
    got = list(zip(*(a.tolist() for a in built[1.0].given_entries)))
    assert got == expected


@pytest.mark.filterwarnings("ignore:.*have no judgments")
def test_concat_equals_building_all_runs_at_once():
    qrels = metaeval.Qrels.from_dict({"a": {"x": 1, "y": 0, "z": 2}, "b": {"x": 0, "w": 3}})
    runs = metaeval.RunSet.from_dict(
        {
            "r1": {"a": {"x": 3, "y": 2, "q": 1}, "b": {"w": 1}},
            "r2": {"a": {"z": 1}},
            "r3": {"b": {"q": 2, "x": 1, "w": 0.5, "v": 0.1}},
        }
    )
    whole = EvalTensor.build(runs, qrels)
    parts = EvalTensor.concat(
        [
            EvalTensor.build(runs.subset(["r1"]), qrels),
            EvalTensor.build(runs.subset(["r2", "r3"]), qrels),
        ]
    )
    assert parts.runs == whole.runs and parts.shape == whole.shape
    assert np.array_equal(parts.codes, whole.codes)
    assert np.array_equal(parts.lengths, whole.lengths)
    for m in ["AP", "nDCG@2", "P@2", "RR", "Bpref", "AP'"]:
        assert np.array_equal(metaeval.parse_measure(m)(parts), metaeval.parse_measure(m)(whole))
    with pytest.raises(ValueError, match="same qrels"):
        other = metaeval.Qrels.from_dict({"a": {"x": 1}})
        EvalTensor.concat([whole, EvalTensor.build(runs.subset(["r1"]), other)])
    with pytest.raises(ValueError, match="unique"):
        EvalTensor.concat([whole, whole])
    with pytest.raises(ValueError, match="empty"):
        EvalTensor.concat([])


def test_using_and_pickling():
    qrels = metaeval.Qrels.from_dict({"a": {"x": 1, "y": 0}})
    runs = metaeval.RunSet.from_dict({"r": {"a": {"x": 2, "u": 1, "y": 0}}})
    tensor = EvalTensor.build(runs, qrels)
    with pytest.raises(ValueError, match="path"):
        tensor.using("fast")
    assert tensor.using("auto") is tensor
    dense = tensor.using("dense")
    assert not dense.sparse and dense.codes.tolist() == [[[1, UNPOOLED, 0]]]
    assert "codes" in dense.__dict__
    back = pickle.loads(pickle.dumps(dense))
    assert "codes" not in back.__dict__  # derived arrays are rebuilt, not sent
    assert back.codes.tolist() == dense.codes.tolist() and back.path == "dense"
    assert tensor.n_entries == 2
