"""Judged@k against ir_measures' own Judged@k, and where (by design) the two differ."""

from __future__ import annotations

import numpy as np
import pytest

import metaeval

ir_measures = pytest.importorskip("ir_measures", reason="ir_measures is not installed")


def _ours(run, qrels, k):
    frame = metaeval.evaluate(
        metaeval.RunSet.from_dict({"r": run}), metaeval.Qrels.from_dict(qrels), f"Judged@{k}"
    )
    return dict(zip(frame["topic"], frame["value"]))


def _theirs(run, qrels, k):
    return {
        m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.Judged @ k], qrels, run)
    }


def test_equal_to_ir_measures_on_full_lists_without_unjudged_entries():
    rng = np.random.default_rng(0)
    qrels, run = {}, {}
    for t in range(20):
        docs = [f"d{t}_{i}" for i in range(40)]
        judged = rng.choice(docs, size=15, replace=False)
        qrels[f"q{t}"] = {d: int(rng.integers(0, 3)) for d in judged}
        scores = rng.permutation(40).astype(float)  # no ties
        run[f"q{t}"] = dict(zip(docs, scores))
    for k in (1, 5, 10, 20):
        ours, theirs = _ours(run, qrels, k), _theirs(run, qrels, k)
        assert ours.keys() == theirs.keys()
        for t in ours:
            assert ours[t] == pytest.approx(theirs[t], abs=1e-12), (k, t)


def test_documented_differences():
    qrels = {"q": {"a": 1, "b": 0, "c": -1}}
    short = {"q": {"a": 3.0, "b": 2.0}}
    assert _theirs(short, qrels, 10)["q"] == 1.0  # divided by the list's length
    assert _ours(short, qrels, 10)["q"] == 0.2  # divided by k
    pooled = {"q": {"a": 3.0, "c": 2.0}}
    assert _theirs(pooled, qrels, 2)["q"] == 1.0  # -1 counts as judged there
    assert _ours(pooled, qrels, 2)["q"] == 0.5  # pooled but unjudged is not judged
