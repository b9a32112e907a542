"""CLI tests for ``metaeval discriminate`` and ``metaeval compare``."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from metaeval.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def trec_files(tmp_path_factory):
    """Qrels and three runs over 12 topics: 'good' ranks the relevant docs first, 'bad' last,
    'mid' in between."""
    d = tmp_path_factory.mktemp("trec")
    rng = np.random.default_rng(0)
    qrels = []
    runs = {"good": [], "mid": [], "bad": []}
    for q in range(1, 13):
        docs = [f"d{q}_{i}" for i in range(20)]
        rel = set(rng.choice(20, 4, replace=False).tolist())
        qrels += [f"{q} 0 {docs[i]} {1 if i in rel else 0}" for i in range(20)]
        order_good = sorted(range(20), key=lambda i: (i not in rel, rng.random()))
        order_bad = order_good[::-1]
        order_mid = list(rng.permutation(20))
        for name, order in (("good", order_good), ("mid", order_mid), ("bad", order_bad)):
            runs[name] += [f"{q} Q0 {docs[i]} {r + 1} {20 - r} {name}" for r, i in enumerate(order)]
    (d / "qrels.txt").write_text("\n".join(qrels) + "\n")
    paths = []
    for name, lines in runs.items():
        p = d / f"{name}.run"
        p.write_text("\n".join(lines) + "\n")
        paths.append(str(p))
    return str(d / "qrels.txt"), paths


def test_discriminate_prints_power_and_writes_plot(trec_files, tmp_path):
    qrels, runs = trec_files
    png = tmp_path / "asl.png"
    res = runner.invoke(
        app,
        [
            "discriminate",
            qrels,
            *runs,
            "-m",
            "AP",
            "-m",
            "P@5",
            "-B",
            "200",
            "--seed",
            "3",
            "--plot",
            str(png),
            "--format",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert [r["measure"] for r in rows] == ["AP", "P@5"]
    ap = rows[0]
    assert ap["method"] == "bootstrap" and ap["B"] == 200 and ap["pairs"] == 3
    # good vs bad is separated on every topic; good/mid and mid/bad clearly too with AP
    assert ap["power"] == pytest.approx(1.0)
    assert ap["diff_required"] > 0
    assert png.stat().st_size > 1000
    # same seed, same numbers
    again = runner.invoke(
        app,
        [
            "discriminate",
            qrels,
            *runs,
            "-m",
            "AP",
            "-m",
            "P@5",
            "-B",
            "200",
            "--seed",
            "3",
            "--format",
            "json",
        ],
    )
    assert json.loads(again.stdout) == rows


def test_discriminate_tukey_table(trec_files):
    qrels, runs = trec_files
    res = runner.invoke(
        app,
        ["discriminate", qrels, *runs, "-m", "AP", "--method", "tukey", "-B", "500", "--seed", "1"],
    )
    assert res.exit_code == 0, res.output
    assert "tukey" in res.stdout and "diff_required" in res.stdout and "500" in res.stdout


def test_compare_pairwise_table(trec_files):
    qrels, runs = trec_files
    res = runner.invoke(
        app,
        [
            "compare",
            qrels,
            *runs,
            "-m",
            "AP",
            "--test",
            "randomization",
            "-B",
            "4096",
            "--seed",
            "2",
            "--format",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert len(rows) == 3
    assert set(rows[0]) >= {
        "measure",
        "system_a",
        "system_b",
        "p_value",
        "p_adjusted",
        "effect_size",
    }
    gb = next(r for r in rows if {r["system_a"], r["system_b"]} == {"good", "bad"})
    # 12 topics, 2^12 = 4096 <= B: exact. 'good' beats 'bad' on every topic, so only the
    # identity and the all-flipped sign vectors reach the observed |mean|: p = 2 / 4096.
    assert gb["p_value"] == pytest.approx(2 / 4096, abs=1e-9)  # JSON keeps 10 decimals
    assert gb["significant"] is True
    base = runner.invoke(
        app,
        [
            "compare",
            qrels,
            *runs,
            "-m",
            "AP",
            "--baseline",
            "mid",
            "--correction",
            "none",
            "--format",
            "json",
        ],
    )
    assert base.exit_code == 0, base.output
    assert all(r["system_b"] == "mid" for r in json.loads(base.stdout))


def test_cli_errors_are_one_line(trec_files):
    qrels, runs = trec_files
    res = runner.invoke(app, ["discriminate", qrels, *runs, "-m", "AP", "--alpha", "2"])
    assert res.exit_code == 2
    assert "alpha" in res.output
    res = runner.invoke(app, ["compare", qrels, runs[0], "-m", "AP"])
    assert res.exit_code == 2 and "two run" in res.output
    res = runner.invoke(app, ["compare", qrels, *runs, "--baseline", "nope"])
    assert res.exit_code == 2 and "baseline" in res.output
    res = runner.invoke(app, ["discriminate", qrels, *runs, "--method", "anova"])
    assert res.exit_code != 0
