"""User-defined measures: the example plugin file, loaded from Python and through the CLI's
``--plugin``; the generated measure documentation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import metaeval
from metaeval import EvalTensor, Qrels, RunSet
from metaeval.cli import app
from metaeval.measures import load_plugin, measure_doc, parse_measure, registered
from metaeval.measures.docs import measures_markdown

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "examples" / "my_measures.py"

QRELS = {
    "t1": {"a": 2, "b": 1, "c": 0, "d": 1, "e": 2, "u": -1},  # R = 4, ceil(R/2) = 2
    "t2": {"x": 1, "y": 0, "z": 1},
}  # R = 2, ceil(R/2) = 1
RUN = {"t1": ["c", "a", "u", "b"], "t2": ["x", "y"]}


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "".join(f"{t} 0 {d} {g}\n" for t, docs in QRELS.items() for d, g in docs.items())
    )
    run = tmp_path / "mine.run"
    run.write_text(
        "".join(
            f"{t} Q0 {d} {i + 1} {10 - i} mine\n"
            for t, docs in RUN.items()
            for i, d in enumerate(docs)
        )
    )
    return qrels, run


def _tensor():
    runs = {"mine": {t: {d: float(10 - i) for i, d in enumerate(docs)} for t, docs in RUN.items()}}
    return EvalTensor.build(RunSet.from_dict(runs), Qrels.from_dict(QRELS))


def test_plugin_from_python():
    load_plugin(PLUGIN)
    load_plugin(str(PLUGIN))  # idempotent
    assert "RprecHalf" in registered()
    tensor = _tensor()
    # t1: top-2 = c (0), a (2) -> 1/2; t2: top-1 = x (1) -> 1.
    np.testing.assert_allclose(parse_measure("RprecHalf").compute(tensor), [[0.5, 1.0]])
    # rel=2: t1 R = 2, top-1 = c -> 0; t2 R = 0 -> 0.
    np.testing.assert_allclose(parse_measure("RprecHalf(rel=2)").compute(tensor), [[0.0, 0.0]])
    # Condensed variant for free: t1 judged-only list c, a, b -> top-2 = c, a -> 1/2.
    np.testing.assert_allclose(parse_measure("RprecHalf'").compute(tensor), [[0.5, 1.0]])
    frame = metaeval.evaluate(
        RunSet.from_dict(
            {"mine": {t: {d: float(10 - i) for i, d in enumerate(docs)} for t, docs in RUN.items()}}
        ),
        QRELS,
        ["RprecHalf", "AP"],
        per_topic=False,
    )
    assert frame.set_index("measure").loc["RprecHalf", "value"] == pytest.approx(0.75)
    doc = measure_doc(registered()["RprecHalf"])
    assert doc["parameters"] == {"rel": 1} and "ceil(R/2)" in doc["formula"]
    with pytest.raises(ValueError, match="rel must be a relevance level, a number > 0"):
        parse_measure("RprecHalf(rel=0)")


def test_plugin_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_plugin(tmp_path / "nope.py")


def test_cli_evaluate_with_plugin(files):
    qrels, run = files
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            str(qrels),
            str(run),
            "-m",
            "RprecHalf",
            "-m",
            "RprecHalf'",
            "-m",
            "GAP",
            "--plugin",
            str(PLUGIN),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = {r["measure"]: r["value"] for r in json.loads(result.stdout)}
    assert rows["RprecHalf"] == pytest.approx(0.75)
    assert rows["RprecHalf'"] == pytest.approx(0.75)
    assert 0 < rows["GAP"] < 1


def test_cli_evaluate_per_topic_with_plugin(files):
    qrels, run = files
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            str(qrels),
            str(run),
            "-m",
            "RprecHalf(rel=2)",
            "--per-topic",
            "--plugin",
            str(PLUGIN),
            "--format",
            "tsv",
        ],
    )
    assert result.exit_code == 0, result.output
    lines = [line.split("\t") for line in result.output.strip().splitlines()]
    assert lines[0] == ["run", "topic", "measure", "value"]
    rows = [(t, float(v)) for _, t, _, v in lines[1:]]
    assert rows == [("t1", 0.0), ("t2", 0.0), ("all", 0.0)]  # trec_eval's -q: "all" last


def test_cli_plugin_with_error(tmp_path, files):
    qrels, run = files
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('broken plugin')\n")
    result = CliRunner().invoke(
        app, ["evaluate", str(qrels), str(run), "-m", "AP", "--plugin", str(bad)]
    )
    assert result.exit_code == 2
    assert "broken plugin" in result.output


def test_cli_measures_lists_plugin_and_new_measures():
    result = CliRunner().invoke(app, ["measures", "--plugin", str(PLUGIN), "--format", "json"])
    assert result.exit_code == 0, result.output
    names = {d["name"] for d in json.loads(result.output)}
    assert {
        "RprecHalf",
        "GAP",
        "xGAP",
        "eGAP",
        "Q",
        "RBP",
        "RBP_resid",
        "ERR",
        "nERR",
        "nCG",
        "Bpref_R",
        "Bpref_N",
    } <= names
    md = CliRunner().invoke(app, ["measures", "--plugin", str(PLUGIN), "--format", "markdown"])
    assert md.exit_code == 0 and "## RprecHalf" in md.output


def test_measures_markdown():
    text = measures_markdown()
    for name, cls in registered().items():
        assert f"\n## {name}\n" in text
        if cls.formula:
            assert cls.formula in text
    assert "| `g` | `None` |" in text
    assert "| `p` | `0.8` |" in text


def test_generated_docs_file_lists_every_builtin():
    path = ROOT / "docs" / "measures.md"
    text = path.read_text()
    builtins = [n for n, cls in registered().items() if cls.__module__.startswith("metaeval.")]
    assert len(builtins) >= 24
    for name in builtins:
        assert f"\n## {name}\n" in text, (
            f"{name} missing: regenerate {path} with measures_markdown()"
        )


def test_entry_point_group_registers_measures(monkeypatch, tmp_path):
    """A package's `metaeval.measures` entry point is imported the first time measures are
    listed or parsed, and its measures then parse like built-ins."""
    import sys

    from metaeval.measures import plugins

    module = tmp_path / "ep_measures_pkg.py"
    module.write_text(
        "from dataclasses import dataclass\n"
        "import numpy as np\n"
        "from metaeval.measures import Measure, register\n"
        "@register\n"
        "@dataclass(frozen=True, kw_only=True)\n"
        "class EntryPointOnes(Measure):\n"
        "    name = 'EntryPointOnes'\n"
        "    def _compute(self, tensor):\n"
        "        return np.ones((tensor.n_runs, tensor.n_topics))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    class FakeEntryPoint:
        def load(self):
            import importlib

            return importlib.import_module("ep_measures_pkg")

    monkeypatch.setattr(plugins, "_loaded_entry_points", False)
    monkeypatch.setattr(
        plugins,
        "entry_points",
        lambda group: [FakeEntryPoint()] if group == plugins.ENTRY_POINT_GROUP else [],
    )
    try:
        measure = metaeval.parse_measure("EntryPointOnes")
        frame = metaeval.evaluate({"s": {"q": {"d": 1.0}}}, {"q": {"d": 1}}, [measure])
        assert frame["value"].tolist() == [1.0]
    finally:
        from metaeval.measures import base

        base._REGISTRY.remove("EntryPointOnes")  # keep later tests' registry as it was
        sys.modules.pop("ep_measures_pkg", None)
