"""What every command promises: one seed policy, options given twice, one-line errors, no
tracebacks, pipes, selections, warnings as lines."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from metaeval.cli import run

ROOT = Path(__file__).resolve().parents[2]
RUN_A = "q1 Q0 d1 1 3.0 A\nq1 Q0 d2 2 2.0 A\nq2 Q0 d9 1 1.0 A\nq3 Q0 d1 1 1.0 A\n"
RUN_B = "q1 Q0 d2 1 3.0 B\nq1 Q0 d1 2 2.0 B\nq2 Q0 d8 1 1.0 B\nq3 Q0 d3 1 1.0 B\n"
QRELS = "q1 0 d1 0\nq1 0 d2 1\nq2 0 d9 2\nq2 0 d8 0\nq3 0 d1 1\nq3 0 d3 0\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_B)
    (tmp_path / "qrels").write_text(QRELS)
    return str(tmp_path / "qrels"), str(tmp_path / "a.run"), str(tmp_path / "b.run")


def one_line_error(err: str) -> bool:
    lines = [x for x in err.splitlines() if x.strip()]
    return len([x for x in lines if x.startswith("error:")]) == 1 and "Traceback" not in err


def test_seed_printed_when_omitted_and_repeatable(cli, files, capsys):
    qrels, a, b = files
    code, out, err = cli(
        ["discriminate", qrels, a, b, "-m", "AP", "-B", "200", "--format", "json"], capsys
    )
    assert code == 0 and "seed: " in err
    seed = err.split("seed: ")[1].split()[0]
    again = cli(
        ["discriminate", qrels, a, b, "-m", "AP", "-B", "200", "--format", "json", "--seed", seed],
        capsys,
    )
    assert again[1] == out and "seed:" not in again[2]


def test_negative_seed_names_the_option(cli, files, capsys):
    qrels, a, b = files
    code, out, err = cli(["discriminate", qrels, a, b, "--seed", "-1"], capsys)
    assert code == 2 and "--seed" in err and "Traceback" not in err


def test_an_option_given_twice_is_an_error(cli, files, capsys, tmp_path):
    qrels, a, b = files
    code, _, err = cli(
        ["degrade", qrels, "--rate", "10", "--rate", "30", "--out", tmp_path / "x"], capsys
    )
    assert code == 2 and "--rate is given twice" in err
    code, _, err = cli(["evaluate", qrels, a, "--agg=mean", "--agg", "gmean"], capsys)
    assert code == 2 and "--agg is given twice" in err
    code, out, _ = cli(["evaluate", qrels, a, "-m", "AP", "-m", "P@1", "--format", "csv"], capsys)
    assert code == 0 and "P@1" in out and "AP" in out  # a repeatable option takes every value


def test_unwritable_outputs_are_one_line_errors(cli, files, capsys, tmp_path):
    qrels, a, b = files
    blocker = tmp_path / "file"
    blocker.write_text("")
    for argv in (
        ["simulate", "--topics", "2", "--systems", "2", "--seed", "1", "--out", blocker / "world"],
        ["degrade", qrels, "--rate", "50", "--seed", "1", "--out", blocker / "q.txt"],
        ["discriminate", qrels, a, b, "-B", "100", "--seed", "1", "--plot", blocker / "asl.png"],
        ["informativeness", qrels, a, b, "--min-relevant", "1", "--plot", blocker / "figs"],
    ):
        code, _, err = cli(argv, capsys)
        assert code == 2 and one_line_error(err), (argv, err)


PLUGIN = """
from dataclasses import dataclass
from metaeval.measures import Measure, register

@register
@dataclass(frozen=True, kw_only=True)
class Broken(Measure):
    name = "BrokenCLI"
    def _compute(self, tensor):
        return 1 / 0

@register
@dataclass(frozen=True, kw_only=True)
class Shapeless(Measure):
    name = "ShapelessCLI"
    def _compute(self, tensor):
        return [1.0, 2.0, 3.0]
"""


def test_errors_inside_a_plugin_are_one_line(cli, files, capsys, tmp_path, registry):
    qrels, a, b = files
    plugin = tmp_path / "plugin.py"
    plugin.write_text(PLUGIN)
    code, _, err = cli(["evaluate", qrels, a, "-m", "BrokenCLI", "--plugin", plugin], capsys)
    assert code == 2 and one_line_error(err) and "BrokenCLI" in err and "ZeroDivisionError" in err
    code, _, err = cli(["evaluate", qrels, a, "-m", "ShapelessCLI", "--plugin", plugin], capsys)
    assert code == 2 and one_line_error(err) and "shape" in err


def test_relevance_level_above_the_highest_grade(cli, files, capsys):
    qrels, a, b = files
    code, _, err = cli(["informativeness", qrels, a, b, "--rel", "5"], capsys)
    assert code == 2 and one_line_error(err) and "above the highest grade" in err
    code, out, err = cli(["evaluate", qrels, a, "-m", "AP(rel=5)"], capsys)
    assert code == 0 and "warning: AP(rel=5): rel=5 is above the highest grade" in err


def test_small_B_warns_as_one_line(cli, files, capsys):
    qrels, a, b = files
    code, _, err = cli(["discriminate", qrels, a, b, "-B", "10", "--seed", "1"], capsys)
    assert code == 0 and "warning: B=10 resamples cannot give" in err and "sys:1" not in err


def test_file_passed_twice_and_directories(cli, files, capsys, tmp_path):
    qrels, a, b = files
    code, _, err = cli(["evaluate", qrels, a, a], capsys)
    assert code == 2 and "is given twice" in err and one_line_error(err)
    code, _, err = cli(["evaluate", tmp_path, a], capsys)
    assert code == 2 and "directory" in err


def test_topic_and_run_selections(cli, files, capsys):
    qrels, a, b = files
    code, out, err = cli(
        [
            "evaluate",
            qrels,
            a,
            b,
            "-m",
            "P@1",
            "--per-topic",
            "--format",
            "csv",
            "--topics",
            "q1,q3",
            "--runs",
            "B",
        ],
        capsys,
    )
    assert code == 0 and "warning" not in err
    rows = out.strip().splitlines()[1:]
    assert {r.split(",")[0] for r in rows} == {"B"}
    assert {r.split(",")[1] for r in rows} == {"q1", "q3", "all"}
    code, _, err = cli(["evaluate", qrels, a, "--topics", "q9"], capsys)
    assert code == 2 and "not in the qrels: q9" in err


def _main(*args, env=None, **kwargs):
    env = {**(os.environ if env is None else env), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "metaeval", *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        **kwargs,
    )


def test_input_from_pipes_and_process_substitution(files):
    qrels, a, b = files
    with open(a) as fh:
        out = _main("evaluate", qrels, "/dev/stdin", "-m", "AP", "--format", "csv", stdin=fh)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1].startswith("A,AP,")
    bash = subprocess.run(
        [
            "bash",
            "-c",
            f"{sys.executable} -m metaeval evaluate "
            f"<(cat {qrels}) <(gzip -c {a}) -m AP --format csv",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert bash.returncode == 0, bash.stderr
    assert bash.stdout.splitlines()[1].startswith("A,AP,")


def test_unexpected_errors_say_how_to_see_the_traceback(files, tmp_path, registry):
    qrels, a, b = files
    plugin = tmp_path / "p.py"
    plugin.write_text("raise SystemError('boom')\n")
    out = _main("evaluate", qrels, a, "--plugin", plugin)
    assert out.returncode == 2 and "boom" in out.stderr and "Traceback" not in out.stderr


def test_metaeval_debug_shows_the_traceback(cli, files, capsys, monkeypatch):
    """An unexpected error is one line saying how to see the traceback; with METAEVAL_DEBUG
    set, an error is raised as it is, so that the interpreter prints its traceback."""
    import metaeval.evaluation

    qrels, a, b = files

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.delenv("METAEVAL_DEBUG", raising=False)
    monkeypatch.setattr(metaeval.evaluation, "evaluate", broken)
    code, _, err = cli(["evaluate", qrels, a], capsys)
    assert code == 1 and one_line_error(err)
    assert "RuntimeError: boom" in err and "METAEVAL_DEBUG=1" in err
    monkeypatch.setenv("METAEVAL_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        run(["evaluate", qrels, a])
    monkeypatch.undo()
    # the console script: a bad measure is one line, and a traceback with METAEVAL_DEBUG
    env = {k: v for k, v in os.environ.items() if k != "METAEVAL_DEBUG"}
    plain = _main("evaluate", qrels, a, "-m", "Nope", env=env)
    debug = _main("evaluate", qrels, a, "-m", "Nope", env={**env, "METAEVAL_DEBUG": "1"})
    assert plain.returncode == 2 and one_line_error(plain.stderr), plain.stderr
    assert debug.returncode == 1 and "Traceback" in debug.stderr
    assert "ValueError: unknown measure 'Nope'" in debug.stderr


def test_ctrl_c_during_start_up_is_one_line(files):
    qrels, a, b = files
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # after the interpreter itself has started (Ctrl-C inside Python's own start-up is Python's
    # business), while the libraries load and the command runs
    for delay in (0.25, 0.5):
        proc = subprocess.Popen(
            [sys.executable, "-m", "metaeval", "evaluate", qrels, a],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert "Traceback" not in err, err
        if proc.returncode == 130:
            assert err.strip() == "interrupted"
        else:  # done before the signal (0), or stopped inside Python's own start-up (-2)
            assert proc.returncode in (0, -signal.SIGINT) and len(err.splitlines()) <= 1, err


def test_counts_in_messages_are_singular_for_one():
    from metaeval._validation import counted

    assert counted(1, "run") == "1 run"
    assert counted(37, "run") == "37 runs"
    assert counted(0, "simulated world") == "0 simulated worlds"
