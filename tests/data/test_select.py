"""Topic and run subsets: Qrels.subset, Run.subset, RunSet.subset, parse_ids, evaluate(topics=)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import metaeval
from metaeval.data import Qrels, Run, RunSet, parse_ids


@pytest.fixture
def qrels():
    return Qrels.from_dict({str(t): {"a": 1, "b": 0, f"d{t}": 2} for t in range(598, 603)})


@pytest.fixture
def runs():
    return RunSet.from_dict(
        {
            name: {str(t): {"a": 1.0 + k, "b": 2.0, "x": 0.5} for t in range(598, 605)}
            for k, name in enumerate(["bm25", "neural", "rand"])
        }
    )


def test_parse_ids_ranges_lists_files(tmp_path):
    assert parse_ids("601-603,610") == ["601", "602", "603", "610"]
    assert parse_ids([601, "602"]) == ["601", "602"]
    assert parse_ids("007-009") == ["007", "008", "009"]
    f = tmp_path / "ids.txt"
    f.write_text("# my topics\n601 602\n603,604  # trailing\n")
    assert parse_ids(str(f)) == ["601", "602", "603", "604"]
    assert parse_ids(f) == ["601", "602", "603", "604"]
    avail = ["601", "602", "2019-1"]
    assert parse_ids("2019-1,601", available=avail) == ["601", "2019-1"]  # order of available
    with pytest.raises(
        ValueError,
        match=r"2 topic\(s\) of the selection are not in the qrels: "
        r"603, 604",
    ):
        parse_ids("601-604", available=avail)
    with pytest.raises(ValueError, match="backwards"):
        parse_ids("610-601")
    with pytest.raises(ValueError, match="names no topic"):
        parse_ids(" , ")


def test_qrels_subset(qrels):
    sub = qrels.subset(["599", "601"])
    assert list(sub.topics) == ["599", "601"] and len(sub) == 6
    assert sub.to_dict()["601"] == qrels.to_dict()["601"]
    with pytest.raises(ValueError, match="not in the qrels: 700"):
        qrels.subset(["601", "700"])


def test_run_and_runset_subsets(runs):
    r = runs["neural"].subset(["600", "603", "999"])
    assert list(r.topics) == ["600", "603"]
    assert r.to_dict() == {t: runs["neural"].to_dict()[t] for t in ("600", "603")}
    assert runs.subset(["rand", "bm25"]).names == ["rand", "bm25"]
    with pytest.raises(ValueError, match="not among the runs: bm26"):
        runs.subset(["bm26"])
    with pytest.raises(ValueError, match="answered none"):
        runs["bm25"].subset(["1"])


def test_evaluate_on_a_subset_equals_evaluating_the_subset(qrels, runs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sub = metaeval.evaluate(
            runs, qrels, ["AP", "P@2"], topics="599-601", run_names=["rand", "bm25"], per_topic=True
        )
    # run topics 603, 604 have no judgments (warned), 598, 602 were left out on purpose
    texts = [str(w.message) for w in caught]
    assert len(texts) == 1 and "603" in texts[0] and "598" not in texts[0]
    assert set(sub["topic"]) == {"599", "600", "601"} and set(sub["run"]) == {"rand", "bm25"}
    with pytest.warns(UserWarning, match="have no judgments"):  # the topics left out
        direct = metaeval.evaluate(
            RunSet([runs["rand"], runs["bm25"]]), qrels.subset(["599", "600", "601"]), ["AP", "P@2"]
        )
    merged = sub.merge(direct, on=["run", "topic", "measure"])
    assert len(merged) == len(sub) == len(direct) == 2 * 3 * 2
    assert np.allclose(merged["value_x"], merged["value_y"])
    assert isinstance(runs["bm25"], Run)
