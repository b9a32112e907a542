"""Shared test fixtures: the real TREC data beside the repository, read once per session."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

import metaeval

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
FIXTURES = DATA / "trec_eval-fixtures"


def need_data(*parts: str) -> Path:
    """The path under ../shared/data, or skip the test saying why."""
    path = DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(
            f"real TREC data not found at {path} (it lives in ../shared/data beside the "
            "repository; absent on a user's machine)"
        )
    return path


class CliResult(NamedTuple):
    """What ``metaeval ARGV`` did: unpacks as ``code, out, err``."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@pytest.fixture(scope="session")
def cli():
    """``cli(argv)``: run ``metaeval ARGV`` as the console script runs it (through
    :func:`metaeval.cli.run`, whose error handling every command relies on) and return its
    exit status, standard output and standard error."""
    from metaeval.cli import run

    def call(argv, capsys=None) -> CliResult:  # capsys: accepted, not needed
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run([str(a) for a in argv])
        return CliResult(code, out.getvalue(), err.getvalue())

    return call


@pytest.fixture(scope="session")
def trec_collection(tmp_path_factory):
    """Write a small simulated TREC collection as files: ``trec_collection(name, **params)``
    makes a ``trec_like`` world with ``params`` and returns the folder holding ``qrels.txt``
    and ``runs/``."""
    from metaeval.data import write_qrels, write_runs
    from simulators import make_world

    def write(name: str, **params) -> Path:
        root = tmp_path_factory.mktemp(name)
        world = make_world("trec_like", **params)
        write_qrels(world.qrels, root / "qrels.txt")
        write_runs(world.runs, root / "runs")
        return root

    return write


def float32_scores(runs: metaeval.RunSet) -> metaeval.RunSet:
    """The same runs with scores rounded to float32.

    pytrec-eval-terrier compares scores as float32 (docs/methods.md §6.0), so two scores that differ
    below float32 precision tie there; rounding first makes both tools see the same ties.
    """
    out = []
    for run in runs:
        topics = np.repeat(run.topics, np.diff(run.offsets))
        out.append(
            metaeval.Run(
                run.name, topics, run.docs, run.scores.astype(np.float32).astype(np.float64)
            )
        )
    return metaeval.RunSet(out)


@pytest.fixture(scope="session", params=["2019", "2020"])
def dl_collection(request):
    """(qrels, runs) of TREC DL 2019 or 2020, scores rounded to float32."""
    folder = need_data(f"trec-dl-{request.param}")
    qrels = metaeval.read_qrels(folder / "qrels.txt")
    runs = metaeval.read_runs(sorted((folder / "runs").glob("*.gz")))
    return request.param, qrels, runs


@pytest.fixture
def registry():
    """Measures registered inside a test (by a plugin file, say) are forgotten after it."""
    from metaeval.measures import base

    saved = base._REGISTRY.snapshot()
    yield
    base._REGISTRY.restore(saved)
