"""Writing runs: reading a written run back gives the same scores, bit for bit, hence the same
ranking; plain and gzip files; errors for runs that cannot be written."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import metaeval

AWKWARD = [
    1e-17,
    -0.0,
    0.0,
    1 / 3,
    2.0**60,
    2.0**53 + 2,
    -(2.0**62),
    123456789012345678.0,
    5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    -2.781925163045964e-07,
    0.99247670173645019531,
    0.1,
    1e22,
]


def assert_same_run(a: metaeval.Run, b: metaeval.Run) -> None:
    assert list(a.topics) == list(b.topics)
    assert np.array_equal(a.offsets, b.offsets)
    assert a.docs.equals(b.docs)
    # Bit for bit: -0.0 stays -0.0.
    assert np.array_equal(a.scores.view(np.int64), b.scores.view(np.int64))


@pytest.mark.parametrize("suffix", [".run", ".run.gz"])
def test_awkward_scores_round_trip_exactly(tmp_path, suffix):
    n = len(AWKWARD)
    run = metaeval.Run(
        "a run/with space",
        ["q1"] * (n // 2) + ["q2"] * (n - n // 2),
        [f"d{i}" for i in range(n)],
        AWKWARD,
    )
    path = tmp_path / f"out{suffix}"
    metaeval.write_run(run, path)
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if suffix.endswith(".gz") else raw).decode()
    assert text.splitlines()[0].endswith(" a_run/with_space")
    back = metaeval.read_run(path)
    assert back.name == "a_run/with_space"
    assert_same_run(run, back)
    assert " -0 " in text and " 1e-17 " in text and " 0.3333333333333333 " in text


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=40),
    st.sampled_from(["trec_eval", "input"]),
)
def test_random_scores_round_trip(tmp_path_factory, scores, ties):
    folder = tmp_path_factory.mktemp("runs")
    topics = [f"t{i % 3}" for i in range(len(scores))]
    run = metaeval.Run("r", topics, [f"d{i}" for i in range(len(scores))], scores, ties=ties)
    path = metaeval.write_runs(metaeval.RunSet([run]), folder)[0]
    assert_same_run(run, metaeval.read_run(path, ties=ties))


def test_write_runs_writes_every_run(tmp_path):
    runs = metaeval.RunSet(
        metaeval.Run(f"r{i}", ["a", "a", "b"], ["x", "y", "x"], [1.0, 0.5, i]) for i in range(5)
    )
    paths = metaeval.write_runs(runs, tmp_path / "out")
    assert [p.name for p in paths] == [f"r{i}.run" for i in range(5)]
    back = metaeval.read_runs(paths)
    for a, b in zip(runs, back):
        assert_same_run(a, b)
    assert (tmp_path / "out" / "r0.run").read_text().splitlines()[0] == "a Q0 x 1 1 r0"


def test_unwritable_runs_are_errors(tmp_path):
    spaced = metaeval.Run("r", ["q1", "q1"], ["d 1", "d2"], [1.0, 2.0])
    with pytest.raises(ValueError, match="whitespace"):
        metaeval.write_run(spaced, tmp_path / "x.run")
    assert not (tmp_path / "x.run").exists()
    clash = metaeval.RunSet(
        [metaeval.Run("a/b", ["q"], ["d"], [1.0]), metaeval.Run("a_b", ["q"], ["d"], [1.0])]
    )
    with pytest.raises(ValueError, match="same file"):
        metaeval.write_runs(clash, tmp_path)
    with pytest.raises(TypeError, match="Run"):
        metaeval.write_run("not a run", tmp_path / "y.run")


@pytest.mark.parametrize("suffix", [".txt", ".txt.gz"])
def test_qrels_round_trip(tmp_path, suffix):
    qrels = metaeval.Qrels.from_dict(
        {"10": {"b": 2, "a": -1, "c": 0}, "9": {"a": 3}, "x": {"d": 1}}
    )
    path = tmp_path / f"q{suffix}"
    metaeval.write_qrels(qrels, path)
    assert metaeval.read_qrels(path) == qrels
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if suffix.endswith(".gz") else raw).decode()
    assert text.splitlines()[:2] == ["10 0 a -1", "10 0 b 2"]
