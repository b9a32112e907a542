"""Names, the one parser, results keyed by any spelling, plugin clashes, and bad values."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

import numpy as np
import pytest

import metaeval
from metaeval import EvalTensor, Qrels, RunSet
from metaeval.measures import (
    Measure,
    MeasureDict,
    canonical_name,
    load_plugin,
    parse_measure,
    register,
    split_call,
)


@pytest.fixture
def tensor():
    q = Qrels.from_dict({"t1": {"a": 3, "b": 1, "c": 0}, "t2": {"a": 2, "d": 0}})
    r = RunSet.from_dict(
        {
            "r1": {"t1": {"a": 1.0, "b": 0.5}, "t2": {"d": 1.0, "a": 0.5}},
            "r2": {"t1": {"c": 1.0, "a": 0.2}, "t2": {"a": 1.0}},
        }
    )
    return EvalTensor.build(r, q)


def test_split_call_is_the_parser():
    assert split_call("nDCG'(gain=exp,gains={1:1,2:3})@10") == (
        "nDCG",
        {"gain": "exp", "gains": {1: 1, 2: 3}},
        "10",
        True,
    )
    assert split_call("gmean(mode=shift)", what="aggregate") == (
        "gmean",
        {"mode": "shift"},
        None,
        False,
    )
    with pytest.raises(ValueError, match="given twice"):
        split_call("RBP(p=0.5,p=0.8)")
    with pytest.raises(ValueError, match="name=value"):
        split_call("RBP(0.5)")


def test_any_spelling_finds_the_scores(tensor):
    scores = metaeval.score_matrices(tensor, ["Q(gains={1:1,2:3},beta=1)", "GAP(g=(1,0,0))"])
    assert isinstance(scores, MeasureDict)
    assert list(scores) == ["Q(gains={1:1,2:3})", "GAP(g=(1,0,0))"]
    for spelling in (
        "Q(gains={1:1,2:3},beta=1)",
        "Q(beta=1.0,gains={2:3,1:1})",
        parse_measure("Q(gains={1:1,2:3})"),
    ):
        assert spelling in scores
        np.testing.assert_array_equal(scores[spelling], scores["Q(gains={1:1,2:3})"])
    assert "AP" not in scores and "not a measure(" not in scores
    with pytest.raises(KeyError, match="is not a measure name"):
        scores["not a measure("]
    assert canonical_name("GAP(g=(1.0,0.0,0))") == "GAP(g=(1,0,0))"


def test_nan_is_an_error_naming_run_and_topic(registry):
    @register
    @dataclass(frozen=True, kw_only=True)
    class NaNMeasure(Measure):
        """A broken plugin measure: NaN for one topic."""

        name = "NaNMeasure"

        def _compute(self, tensor):
            out = np.zeros((tensor.n_runs, tensor.n_topics))
            out[1, 1] = np.nan
            return out

    with pytest.raises(
        ValueError,
        match=r"NaNMeasure: the value for run 'r2', topic 't2' is "
        r"nan",
    ):
        metaeval.evaluate(
            RunSet.from_dict({"r1": {"t1": {"a": 1.0}}, "r2": {"t2": {"a": 1.0}}}),
            Qrels.from_dict({"t1": {"a": 1}, "t2": {"a": 1}}),
            "NaNMeasure",
            missing="skip",
        )


def test_overflowing_parameters_are_refused_at_parse_time():
    with pytest.raises(ValueError, match="beta must be a finite number"):
        parse_measure("Q(beta=1e308)")


@pytest.mark.parametrize(
    "name", ["AP(rel=5)", "P(rel=9)@10", "Q(rel=4)", "infAP(rel=4)", "Bpref(rel=5)", "RR(rel=4)"]
)
def test_relevance_level_above_the_highest_grade_is_not_silent(tensor, name):
    with pytest.warns(
        UserWarning,
        match=r"above the highest grade in the qrels \(3\): no "
        r"document is relevant",
    ) as caught:
        values = parse_measure(name).compute(tensor)
    assert np.all(values == 0)
    assert caught[0].filename == __file__


def test_default_level_on_judgments_without_relevant_documents():
    import warnings

    q = Qrels.from_dict({"t": {"a": 0}})
    t = EvalTensor.build(RunSet.from_dict({"r": {"t": {"a": 1.0}}}), q)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_measure("AP").compute(t)[0, 0] == 0.0


def test_a_plugin_cannot_replace_a_builtin(tmp_path, registry):
    plugin = tmp_path / "evil.py"
    plugin.write_text(
        "from dataclasses import dataclass\n"
        "from metaeval.measures import Measure, register\n"
        "@register\n@dataclass(frozen=True, kw_only=True)\n"
        "class AP(Measure):\n    name = 'AP'\n"
        "    def _compute(self, tensor):\n        return 0 * tensor.lengths\n"
    )
    with pytest.raises(
        ValueError,
        match="a measure named 'AP' is already registered by metaeval.measures.binary.AP",
    ):
        load_plugin(plugin)
    assert type(parse_measure("AP")).__module__ == "metaeval.measures.binary"


def test_a_plugin_cannot_replace_another_plugin(tmp_path, registry):
    one, two = tmp_path / "one.py", tmp_path / "two.py"
    body = (
        "from dataclasses import dataclass\n"
        "from metaeval.measures import Measure, register\n"
        "@register\n@dataclass(frozen=True, kw_only=True)\n"
        "class Mine(Measure):\n    name = 'MineClash'\n"
        "    def _compute(self, tensor):\n        return 0.0 * tensor.lengths\n"
    )
    one.write_text(body)
    two.write_text(body)
    load_plugin(one)
    load_plugin(one)  # the same file again is fine
    with pytest.raises(ValueError, match="'MineClash' is already registered"):
        load_plugin(two)


def test_plugin_module_name_is_the_same_in_every_process(tmp_path):
    plugin = tmp_path / "same.py"
    plugin.write_text("X = 1\n")
    code = (
        "import sys; from metaeval.measures import load_plugin; load_plugin(sys.argv[1]); "
        "print([m for m in sys.modules if m.startswith('metaeval_plugin_same')][0])"
    )
    names = {
        subprocess.run(
            [sys.executable, "-c", code, str(plugin)], capture_output=True, text=True, check=True
        ).stdout.strip()
        for _ in range(2)
    }
    assert len(names) == 1


def test_at_level_moves_only_binary_measures_left_at_the_default_level():
    from metaeval.measures import parse_measure
    from metaeval.measures.base import states_no_level

    assert parse_measure("P@10").at_level(2) == parse_measure("P(rel=2)@10")
    assert parse_measure("P(rel=3)@10").at_level(2) == parse_measure("P(rel=3)@10")
    assert parse_measure("nDCG@10").at_level(2) == parse_measure("nDCG@10")  # graded
    assert states_no_level("P.10") and states_no_level("map")
    assert not states_no_level("P(rel=1)@10") and not states_no_level("nDCG@10")
    assert not states_no_level("NoSuchMeasure")
