"""``spec.json``: a study saves its normalised spec beside its results (every default filled
in, what each degrader's levels are), and a folder saved without one reads the same spec from
its study file."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil

import pytest

import metaeval
from metaeval.report.reader import read_spec
from metaeval.study import load_spec, run_study
from metaeval.study.spec import (
    DEFAULT_CONFIDENCE,
    DEFAULT_TOPIC_RESAMPLES,
    DegraderSpec,
    canonical_json,
    spec_as_dict,
)
from metaeval.study.spec.model import degrader_as_dict
from metaeval.study.store import SPEC, Store
from simulators.degraders import registered_degraders
from tests.study.conftest import write_spec

STUDY = """
schema = 1

[study]
name = "normalised"
seed = 11
topic_resamples = 10

[[worlds]]
id = "coll"
kind = "trec"
qrels = "{root}/qrels.txt"
runs = "{root}/runs/*"
topics = "topics.txt"
rel = 1

[[worlds]]
id = "sim"
kind = "simulator"
n_topics = 6
n_systems = 4
params = {{ n_candidates = 200, rel_median = 10.0, depth = 50, pool_depth = 10 }}

[[degraders]]
method = "stratified"
levels = [50.0]

[[degraders]]
id = "pool"
method = "pool_depth"
levels = [5]

[measures]
names = ["AP", {{ name = "P@5", aggregate = "gmean" }}]

[[criteria]]
kind = "robustness"
statistics = ["tau_b"]
against = ["full"]
"""


@pytest.fixture(scope="module")
def study(tmp_path_factory, trec_files):
    """A finished study of a TREC world (its files named relative to the study file, its
    topics from a file) and a simulated one, under two degraders: the study file and the
    output folder."""
    folder = tmp_path_factory.mktemp("normalised")
    topics = list(metaeval.read_qrels(trec_files / "qrels.txt").topics)[:8]
    (folder / "topics.txt").write_text("\n".join(topics) + "\n")
    root = os.path.relpath(trec_files, folder)
    path = write_spec(folder, STUDY.format(root=root))
    run_study(load_spec(path), folder / "out", quiet=True)
    return path, folder / "out"


def test_a_run_saves_the_normalised_spec_of_its_study_file(study):
    path, out = study
    text = (out / SPEC).read_text(encoding="utf-8")
    saved = json.loads(text)
    assert saved == spec_as_dict(load_spec(path))
    assert text == canonical_json(saved) + "\n"  # canonical JSON, one line


def test_the_normalised_spec_fills_in_every_default(study):
    path, out = study
    saved = json.loads((out / SPEC).read_text(encoding="utf-8"))
    assert saved["confidence"] == DEFAULT_CONFIDENCE and saved["description"] == ""
    assert saved["topic_resamples"] == 10 != DEFAULT_TOPIC_RESAMPLES  # as the file says
    assert (saved["aggregate"], saved["missing"], saved["plugins"]) == ("mean", "zero", [])
    assert [(m["label"], m["aggregate"]) for m in saved["measures"]] == [
        ("AP", "mean"),
        ("P@5 [gmean]", "gmean"),
    ]

    coll, sim = saved["worlds"]
    # the files as the study file names them, and as the reader resolved them
    assert coll["as_written"]["topics"] == "topics.txt"
    assert coll["topics"] == str(path.parent / "topics.txt")
    assert coll["as_written"]["qrels"].endswith("/qrels.txt") and not os.path.isabs(
        coll["as_written"]["qrels"]
    )
    assert os.path.isabs(coll["qrels"]) and len(coll["runs"]) == 8
    assert (coll["rel"], coll["top_grades"], coll["depth"], coll["best_runs"]) == (
        1,
        None,
        None,
        None,
    )
    assert (sim["preset"], sim["replicates"], sim["best_runs"]) == ("trec_like", 1, None)
    assert (
        sim["params"]
        == sim["as_written"]["params"]
        == {
            "depth": 50,
            "n_candidates": 200,
            "pool_depth": 10,
            "rel_median": 10.0,
        }
    )

    sampled, pool = saved["degraders"]
    assert (sampled["id"], sampled["trials"], sampled["levels"]) == ("stratified", 1, [50])
    assert sampled["params"] == {
        "min_nonrel": 10,
        "min_rel": 1,
        "rel": 1,
        "rounding": "trunc",
        "strata": "relevance",
    }
    assert (sampled["level_field"], sampled["level_unit"]) == ("rates", "percent")
    assert sampled["level_meaning"] == "% of the judgments kept (stratified sampling)"
    assert (pool["level_field"], pool["level_unit"], pool["level_meaning"]) == (
        "depths",
        "depth",
        "pool depth",
    )
    assert pool["params"] == {"runs": None}

    (robustness,) = saved["criteria"]
    assert robustness["params"] == {"against": ["full"], "statistics": ["tau_b"]}
    assert robustness["levels"] == "all"  # the criterion's default: full and every level
    assert robustness["worlds"] == ["coll", "sim"] and robustness["topic_filter"] is None


def test_a_folder_saved_without_spec_json_reads_the_same_spec(study, tmp_path):
    _, out = study
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    saved = json.loads((copy / SPEC).read_text(encoding="utf-8"))
    manifest = Store(copy).read_manifest()
    assert read_spec(copy, manifest) == saved
    (copy / SPEC).unlink()
    # read from study.toml, its paths from where the study was run (the manifest says where)
    assert read_spec(copy, manifest) == saved
    (copy / SPEC).write_text("{ damaged")
    assert read_spec(copy, manifest) == saved
    Store(copy).discard()
    assert not (copy / SPEC).exists() and not (copy / "manifest.json").exists()


def test_every_registered_degrader_says_what_its_levels_are():
    built_in = {}
    for name, cls in registered_degraders().items():
        # the default of its level field, or one team (leave_one_group_out has no default; a
        # plugin's field may be called "levels", the name of the method too)
        defaults = {f.name: f.default for f in dataclasses.fields(cls)}
        if cls.level_field not in defaults:
            continue  # a test's degrader that no study can set levels on
        default = defaults[cls.level_field]
        levels = tuple(default) if isinstance(default, (tuple, list)) and default else ("a",)
        meta = degrader_as_dict(DegraderSpec(name, name, levels))
        assert meta["level_field"] == cls.level_field
        assert meta["level_unit"] == cls.level_unit
        assert meta["level_meaning"] and meta["level_meaning"] == (
            cls.level_meaning or f"levels of {name}"
        )
        assert cls.level_field not in meta["params"]  # the levels are the levels
        if cls.__module__ == "simulators.degraders":
            built_in[name] = cls
    assert len(built_in) == 6
    for name, cls in built_in.items():
        assert cls.level_unit and cls.level_meaning, name
    # the percentages of the judgments kept: what a report shows as 10% on a numeric axis
    percent = {name for name, cls in built_in.items() if cls.level_unit == "percent"}
    assert percent == {"stratified", "uniform"}
