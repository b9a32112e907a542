"""Small studies for the tests: a simulated world and a TREC world written to files."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from metaeval.study import worlds


@pytest.fixture(autouse=True)
def _fresh_worker_cache():
    worlds.clear_cache()
    yield
    worlds.clear_cache()


@pytest.fixture(scope="session")
def trec_files(trec_collection):
    """A small TREC collection on disk (a simulated world written as qrels and run files)."""
    return trec_collection(
        "trec",
        n_topics=12,
        n_systems=8,
        rng=np.random.default_rng(5),
        n_candidates=400,
        rel_median=20.0,
        depth=200,
        pool_depth=30,
    )


SMALL = """
schema = 1

[study]
name = "small"
seed = 7
# every statistic is still recomputed on topic resamples, 20 of them instead of the default
# 200 (which take 80% of the time of this study); the tests of this study are about running
# it, not about the width of its intervals
topic_resamples = 20

[[worlds]]
id = "sim"
kind = "simulator"
preset = "trec_like"
n_topics = 10
n_systems = 6
replicates = 2
params = {{ n_candidates = 300, rel_median = 15.0, depth = 100, pool_depth = 20 }}

[[degraders]]
id = "bv"
method = "stratified"
levels = [50, 20]
trials = 2

[measures]
names = {measures}

[[criteria]]
kind = "robustness"
against = ["full", "truth", "effect"]

[[criteria]]
kind = "discriminative_power"
B = 200

[[criteria]]
kind = "significance_changes"
B = 200

[[criteria]]
kind = "stability"
repeats = 5

[[criteria]]
kind = "agreement"
"""


def write_spec(folder, text: str, name: str = "study.toml"):
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def small_spec(tmp_path):
    """A small simulated study file; ``small_spec(measures=[...])`` to change the measures."""

    def make(measures=("AP", "nDCG@10", "P@5")):
        names = "[" + ", ".join(f'"{m}"' for m in measures) + "]"
        return write_spec(tmp_path, SMALL.format(measures=names))

    return make
