"""Reports: drawn from saved results only, figures that draw their data, self-contained HTML,
claim verdicts, audits, report cards, the quickstart."""

from __future__ import annotations

import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval.cli import run
from metaeval.report import claims as checks
from metaeval.report import figures
from metaeval.report.claims import COLUMNS, FAILS, HOLDS, UNSURE, verdicts
from metaeval.report.summary import SUMMARY_COLUMNS, summarise
from metaeval.study import load_spec, run_study

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A small finished study: its output folder."""
    from tests.study.conftest import SMALL

    folder = tmp_path_factory.mktemp("study")
    text = (
        SMALL.format(measures='["AP", "AP\'", "P@5"]')
        + """
[[criteria]]
kind = "informativeness"
min_relevant = 1

[[claims]]
id = "C1"
text = "AP' keeps its ranking better than AP at 20%."
check = { kind = "order", criterion = "robustness", statistic = "tau_b", against = "full", level = "20", greater = ["AP'"], than = ["AP"] }

[[claims]]
id = "C2"
text = "RBP of an ideal list of 10 with p = 0.95 is 0.4013."
check = { kind = "analytic", test = "value", measure = "RBP(p=0.95)", ideal = 10, expect = 0.4013 }
"""
    )
    (folder / "study.toml").write_text(text)
    run_study(load_spec(folder / "study.toml"), folder / "out", jobs=2, quiet=True)
    return folder / "out"


BLOCK_SIMULATORS = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "simulators" or name.startswith("simulators."):
            raise ImportError("simulators is not importable in this process")
sys.meta_path.insert(0, Block())
from metaeval.report import write_report
written = write_report(sys.argv[1], out=sys.argv[2])
assert "simulators" not in sys.modules
print(written["html"])
"""


def test_report_reads_only_saved_results(saved, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(saved, copy)
    out = subprocess.run(
        [sys.executable, "-c", BLOCK_SIMULATORS, str(copy), str(tmp_path / "r")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "r" / "index.html").read_text()
    md = (tmp_path / "r" / "index.md").read_text()
    assert md.startswith("# Study small") and "<h1>Study small</h1>" in page
    for text in (page, md):
        assert "C1" in text and "C2" in text and "Informativeness" in text
    summary = pd.read_csv(tmp_path / "r" / "tables" / "summary.csv")
    assert list(summary.columns) == SUMMARY_COLUMNS
    assert set(summary["measure"]) == {"AP", "AP'", "P@5"}
    assert {"robustness", "informativeness"} <= set(summary["kind"])
    claims = pd.read_csv(tmp_path / "r" / "tables" / "claims.csv")
    assert list(claims.columns) == COLUMNS
    assert list(zip(claims["claim"], claims["world"])) == [("C1", "sim"), ("C2", "(analytic)")]
    assert set(claims["verdict"]) <= {HOLDS, FAILS, UNSURE}


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_folder_saved_without_spec_json_draws_the_same_report(saved, tmp_path):
    from metaeval.report import write_report
    from metaeval.report.reader import read

    copy = tmp_path / "copy"
    shutil.copytree(saved, copy)
    spec = read(copy).spec
    assert spec == json.loads((copy / "spec.json").read_text())
    write_report(copy, out=tmp_path / "with")
    # as an older metaeval saved it: the spec is read from the study file as run
    (copy / "spec.json").unlink()
    assert read(copy).spec == spec
    write_report(copy, out=tmp_path / "without")
    with_spec, without = _files(tmp_path / "with"), _files(tmp_path / "without")
    assert with_spec.keys() == without.keys() and "figures/robustness_tau_b_full.png" in with_spec
    for name in with_spec:
        assert with_spec[name] == without[name], name
    # the Reproduce section shows the study file as written (its comments too)
    md = with_spec["index.md"].decode()
    study = (copy / "study.toml").read_text()
    assert "# every statistic is still recomputed" in study and study.strip() in md


def test_a_study_file_that_cannot_be_read_leaves_its_spec_out(saved, tmp_path):
    """Without spec.json, a study file that is not TOML, or names a file that is gone, gives
    the report no worlds, degraders or settings (a warning says why when it is TOML); the
    report is still drawn, and shows the study file as written."""
    from metaeval.report import build
    from metaeval.report.reader import blank_spec, read

    copy = tmp_path / "copy"
    shutil.copytree(saved, copy)
    (copy / "spec.json").unlink()
    text = (copy / "study.toml").read_text()
    gone = text.replace("[study]", '[study]\nplugins = ["gone.py"]', 1)
    (copy / "study.toml").write_text(gone)
    with pytest.warns(UserWarning, match=r"study.toml cannot be read as a study file \(.*gone"):
        data = read(copy)
    assert data.spec == blank_spec(data.manifest) and data.spec_text == gone
    assert data.spec["worlds"] == [] and data.spec["confidence"] == 0.95
    (copy / "study.toml").write_text("not TOML = = [")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = read(copy)
    assert data.spec == blank_spec(data.manifest)
    _, blocks, _ = build(copy)
    text = " ".join(b.text for b in blocks if b.kind in ("text", "code"))
    assert "Worlds: -." in text and "not TOML = = [" in text
    assert any(b.kind == "heading" and b.text == "Informativeness" for b in blocks)


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs, self.images, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("src", "href"):
                (self.images if tag == "img" else self.refs).append(value)

    def handle_data(self, data):
        self.text.append(data)


@pytest.fixture(scope="module")
def written(saved, tmp_path_factory):
    """The report of the small study, written once (HTML and Markdown) for the tests that only
    read it."""
    from metaeval.report import write_report

    return write_report(saved, out=tmp_path_factory.mktemp("report") / "r")


def test_html_is_self_contained_and_complete(written):
    page = written["html"].read_text()
    parser = _Links()
    parser.feed(page)
    parser.close()
    assert parser.images and all(s.startswith("data:image/png;base64,") for s in parser.images)
    assert not [r for r in parser.refs if not r.startswith("#")], parser.refs
    assert not re.search(r"https?://|url\(", page)
    text = " ".join(parser.text)
    assert "metaeval study run study.toml" in text and "metaeval report" in text
    assert 'kind = "robustness"' in text  # the study file is included
    assert "holds" in text and "C1" in text and "C2" in text
    md = written["md"].read_text()
    for image in re.findall(r"\(figures/([^)]+\.png)\)", md):
        assert (written["md"].parent / "figures" / image).is_file()


def test_incomplete_study_gets_a_banner(saved, tmp_path):
    from metaeval.report import build

    copy = tmp_path / "copy"
    shutil.copytree(saved, copy)
    for f in sorted((copy / "results" / "units").glob("*.parquet"))[:2]:
        f.unlink()
    from metaeval.study.saved import StoreWarning

    # the report reads what is saved and says, once, which records are missing
    with pytest.warns(StoreWarning, match="are missing"):
        _, blocks, _ = build(copy)
    banners = [b.text for b in blocks if b.kind == "banner"]
    assert banners and "incomplete" in banners[0]


# ---------------------------------------------------------------------------- figures
def _robustness_frame():
    rows = []
    for m, base in (("AP", 0.9), ("AP'", 0.95), ("P@5", 0.8)):
        for level, drop in (("50", 0.0), ("20", 0.1)):
            for trial in range(3):
                rows.append(
                    dict(
                        world="w",
                        replicate=0,
                        degrader="bv",
                        level=level,
                        trial=trial,
                        criterion="robustness",
                        kind="robustness",
                        measure=m,
                        other="full",
                        statistic="tau_b",
                        x=np.nan,
                        value=base - drop + 0.01 * trial,
                    )
                )
    return pd.DataFrame(rows)


def test_robustness_curves_draw_the_means_condensed_dashed_in_the_base_colour():
    frame = _robustness_frame()
    fig = figures.robustness_curves(frame, percent=["bv"])
    ax = fig.axes[0]
    lines = {
        line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")
    }
    assert set(lines) == {"AP", "AP'", "P@5"}
    x, y = lines["AP"].get_data()
    assert list(x) == [20.0, 50.0] and np.allclose(y, [0.81, 0.91])
    assert lines["AP'"].get_linestyle() == "--" and lines["AP"].get_linestyle() == "-"
    assert lines["AP'"].get_color() == lines["AP"].get_color() != lines["P@5"].get_color()
    assert len(ax.collections) == 0  # raw trials: their spread is not an interval, no band
    assert ax.xaxis_inverted()
    # a study's summary brings the interval of each mean: one band per measure, from low to high
    summary = summarise(frame)
    ax = figures.robustness_curves(summary, percent=["bv"]).axes[0]
    assert len(ax.collections) == 3
    ap = summary[summary["measure"] == "AP"].sort_values("level", key=lambda v: v.astype(int))
    band = ax.collections[0].get_paths()[0].vertices
    for x, low, high in zip((20.0, 50.0), ap["low"], ap["high"]):
        at = band[np.isclose(band[:, 0], x), 1]
        assert at.min() == pytest.approx(low) and at.max() == pytest.approx(high)


def test_categorical_levels_put_the_full_judgments_first():
    frame = _robustness_frame().replace({"level": {"50": "20", "20": "5"}})
    full = frame[frame["level"] == "20"].assign(level="full", degrader="", trial=0)
    fig = figures.robustness_curves(pd.concat([frame, full]), percent=[])
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["full", "20", "5"]


def test_asl_stability_heatmap_and_bars_draw_their_values():
    asl = pd.DataFrame(
        {
            "world": "w",
            "degrader": "",
            "level": "full",
            "measure": "AP",
            "rank": [1, 2, 3],
            "asl": [0.0, 0.01, 0.5],
        }
    )
    ax = figures.asl_curves(asl).axes[0]
    line = [ln for ln in ax.get_lines() if ln.get_label() == "AP"][0]
    assert list(line.get_data()[1]) == [0.0, 0.01, 0.5]
    stab = pd.DataFrame(
        {
            "world": "w",
            "measure": "AP",
            "statistic": ["tau_subset"] * 2 + ["tau_subset_p025"] * 2 + ["tau_subset_p975"] * 2,
            "x": [5, 10] * 3,
            "value": [0.6, 0.8, 0.5, 0.7, 0.7, 0.9],
        }
    )
    ax = figures.stability_curves(stab).axes[0]
    assert list(ax.get_lines()[0].get_data()[1]) == [0.6, 0.8]
    agree = pd.DataFrame(
        {
            "world": "w",
            "measure": ["AP", "P@5"],
            "other": ["P@5", "AP"],
            "statistic": "tau_b",
            "value": [0.7, 0.7],
        }
    )
    ax = figures.agreement_heatmap(agree).axes[0]
    assert np.allclose(
        np.asarray(ax.collections[0].get_array()).reshape(2, 2), [[1.0, 0.7], [0.7, 1.0]]
    )
    sig = pd.DataFrame(
        {
            "world": "w",
            "degrader": "bv",
            "level": "10",
            "measure": "AP",
            "statistic": ["false_alarms", "reversals", "misses"] * 2,
            "trial": [0, 0, 0, 1, 1, 1],
            "value": [2, 0, 5, 4, 0, 7],
        }
    )
    ax = figures.significance_bars(sig).axes[0]
    assert sorted(round(p.get_height(), 6) for p in ax.patches if p.get_height() > 0) == [3, 6]
    info = pd.DataFrame({"measure": ["AP", "P@10"], "threshold": [1, 1], "rms": [0.05, 0.2]})
    ax = figures.informativeness_bars(info).axes[0]
    assert sorted(round(p.get_height(), 6) for p in ax.patches if p.get_height() > 0) == [0.05, 0.2]


def test_figures_touch_no_pyplot_state():
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    figures.robustness_curves(_robustness_frame())
    assert plt.get_fignums() == before


# ---------------------------------------------------------------------------- claims
def _results(values: dict, level="10", statistic="power", criterion="dp", trials=5, spread=0.01):
    rows = []
    for m, v in values.items():
        for t in range(trials):
            rows.append(
                dict(
                    world="w",
                    replicate=0,
                    degrader="bv",
                    level=level,
                    trial=t,
                    criterion=criterion,
                    kind=criterion,
                    measure=m,
                    other="",
                    statistic=statistic,
                    x=np.nan,
                    value=v + spread * (t - 2),
                )
            )
    return pd.DataFrame(rows)


def _verdict(check, results):
    return verdicts([{"id": "c", "text": "", "check": check}], results)["verdict"].iloc[0]


@pytest.mark.parametrize(
    "values, expected",
    [({"A": 0.6, "B": 0.4}, HOLDS), ({"A": 0.4, "B": 0.6}, FAILS), ({"A": 0.5, "B": 0.5}, UNSURE)],
)
def test_order_check(values, expected):
    check = {
        "kind": "order",
        "criterion": "dp",
        "statistic": "power",
        "level": "10",
        "greater": ["A"],
        "than": ["B"],
    }
    assert _verdict(check, _results(values)) == expected
    less = {k: v for k, v in check.items() if k != "greater"} | {"less": ["B"], "than": ["A"]}
    assert _verdict(less, _results(values)) == expected  # B less than A is A greater than B


def test_group_order_check_needs_every_pair():
    check = {
        "kind": "order",
        "criterion": "dp",
        "statistic": "power",
        "level": "10",
        "greater": ["A", "B"],
        "than": ["C"],
    }
    assert _verdict(check, _results({"A": 0.7, "B": 0.6, "C": 0.5})) == HOLDS
    assert _verdict(check, _results({"A": 0.7, "B": 0.4, "C": 0.5})) == FAILS
    assert _verdict({**check, "mode": "mean"}, _results({"A": 0.7, "B": 0.4, "C": 0.5})) == HOLDS


@pytest.mark.parametrize(
    "side, bound, expected",
    [
        ("above", 0.5, HOLDS),
        ("above", 0.9, FAILS),
        ("below", 0.9, HOLDS),
        ("below", 0.5, FAILS),
        ("above", 0.7, UNSURE),
    ],
)
def test_threshold_check(side, bound, expected):
    check = {
        "kind": "threshold",
        "criterion": "dp",
        "statistic": "power",
        "level": "10",
        "measures": ["A"],
        side: bound,
    }
    assert _verdict(check, _results({"A": 0.7}, spread=0.05)) == expected


def test_trend_check():
    full = _results({"A": 0.5, "B": 0.5}, level="full").assign(degrader="", trial=0)
    low = _results({"A": 0.2, "B": 0.51}, level="10")
    data = pd.concat([full, low])
    falls = {
        "kind": "trend",
        "criterion": "dp",
        "statistic": "power",
        "from": "full",
        "to": "10",
        "direction": "falls",
        "tolerance": 0.05,
        "degrader": "bv",
    }
    assert _verdict({**falls, "measures": ["A"]}, data) == HOLDS
    assert _verdict({**falls, "measures": ["B"]}, data) == FAILS
    flat = {**falls, "direction": "flat"}
    assert _verdict({**flat, "measures": ["B"]}, data) == HOLDS
    assert _verdict({**flat, "measures": ["A"]}, data) == FAILS
    drift = _results({"A": -0.3, "B": 0.0}, statistic="mean_drift")
    no_from = {
        "kind": "trend",
        "criterion": "dp",
        "statistic": "mean_drift",
        "to": "10",
        "direction": "falls",
        "tolerance": 0.05,
    }
    assert _verdict({**no_from, "measures": ["A"]}, drift) == HOLDS


def test_analytic_checks_hold_and_fail():
    from metaeval.study.analytic import run_check

    good = run_check(
        "a",
        {
            "kind": "analytic",
            "test": "value",
            "measure": "RBP(p=0.95)",
            "ideal": 10,
            "expect": 0.4013,
        },
    )
    bad = run_check(
        "b",
        {"kind": "analytic", "test": "value", "measure": "RBP(p=0.95)", "ideal": 10, "expect": 0.5},
    )
    table = pd.concat([good, bad])
    rows = [
        {"id": "a", "text": "", "check": {"kind": "analytic"}},
        {"id": "b", "text": "", "check": {"kind": "analytic"}},
    ]
    out = verdicts(rows, pd.DataFrame(), table)
    assert list(out["verdict"]) == [HOLDS, FAILS]
    assert checks.CHECKS.keys() == {"order", "threshold", "trend"}


# ---------------------------------------------------------------------------- commands
def test_audit_of_the_sakai_kando_study_on_a_small_simulated_world(tmp_path, capsys, monkeypatch):
    text = (ROOT / "studies" / "sakai-kando-2008.toml").read_text()
    # keep the simulated world only, smaller; fewer trials, samples and topic resamples
    worlds = re.findall(r"\[\[worlds\]\].*?(?=\n\[\[|\n\[measures)", text, flags=re.S)
    for block in worlds:
        if 'kind = "trec"' in block:
            text = text.replace(block, "")
    text = text.replace("n_topics = 50", "n_topics = 15").replace("n_systems = 30", "n_systems = 8")
    text = text.replace("replicates = 3", "replicates = 1").replace("trials = 10", "trials = 2")
    text = text.replace("B = 1000", "B = 200")
    text = re.sub(r"(?m)^topic_resamples = \d+\n", "", text)
    text = text.replace("[study]", "[study]\ntopic_resamples = 40", 1)
    path = tmp_path / "sk.toml"
    path.write_text(text)
    import metaeval.report

    builds, built = [], {}
    build = metaeval.report.build

    def build_once(directory):
        # the --strict audit below reads the same saved results: it reuses this build (checked
        # here) instead of building the report a second time, for time
        builds.append(directory)
        if directory not in built:
            built[directory] = build(directory)
        return built[directory]

    monkeypatch.setattr(metaeval.report, "build", build_once)
    code = run(["audit", str(path), "--out", str(tmp_path / "out"), "--jobs", "2", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert len(builds) == 1  # the report and the verdicts printed come from one build
    page = (tmp_path / "out" / "report" / "index.html").read_text()
    for claim in ("SK1", "SK4", "SK6", "SK7", "SK8", "SK9c"):
        assert re.search(rf"^{claim}\s", out, flags=re.M), claim
        assert f"<td>{claim}</td>" in page, claim
    assert re.search(r"\d+ hold, \d+ do not hold, \d+ inconclusive", out)
    # every verdict's numbers and what its intervals rest on, wrapped, never cut
    assert "95% intervals over 15 topics (40 paired resamples)" in out
    assert max(len(line) for line in out.splitlines() if "report:" not in line) <= 100
    assert not any(line.rstrip().endswith("[") for line in out.splitlines())
    strict = run(["audit", str(path), "--out", str(tmp_path / "out"), "--quiet", "--strict"])
    fails = "does not hold" in capsys.readouterr().out.split("\n\n")[0]
    assert strict == (1 if fails else 0)
    assert len(builds) == 2 and builds[1] == builds[0]  # the same saved results, resumed


SMALL_WORLD = """schema = 1
[study]
name = "small-world"
seed = 1
[[worlds]]
id = "small"
kind = "simulator"
preset = "trec_like"
n_topics = 20
n_systems = 10
params = { n_candidates = 300, rel_median = 15.0, depth = 100, pool_depth = 30 }
[measures]
names = ["AP"]
[[criteria]]
kind = "robustness"
"""


def test_card_on_the_example_plugin(tmp_path, capsys, registry):
    # the whole battery on a small simulated world (--world STUDY.toml:WORLD_ID), not on the
    # default one (50 topics, 30 systems, 2 draws), for time; with 20 topics the stability
    # criterion keeps every topic-set size of the battery (5, 10, 20)
    (tmp_path / "small.toml").write_text(SMALL_WORLD)
    code = run(
        [
            "card",
            "-m",
            "RprecHalf",
            "--plugin",
            str(ROOT / "examples" / "my_measures.py"),
            "--against",
            "AP,P@10",
            "--world",
            f"{tmp_path / 'small.toml'}:small",
            "--out",
            str(tmp_path / "card"),
            "--quiet",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "RprecHalf" in (tmp_path / "card" / "report" / "card.md").read_text()
    # the study file the manifest names is kept beside the results: it can be run again
    manifest = json.loads((tmp_path / "card" / "manifest.json").read_text())
    spec_path = Path(manifest["spec_path"])
    assert spec_path.is_file() and spec_path.parent == (tmp_path / "card").resolve()
    assert load_spec(spec_path).name == manifest["study"]
    assert (
        f"metaeval study run {spec_path.name}"
        in (tmp_path / "card" / "report" / "index.md").read_text()
    )
    assert re.search(r"\d of 3", out)  # ranked among three measures
    # each value with its interval, its rank as a range where intervals leave it open, and
    # what the intervals rest on
    assert "RprecHalf [95% interval]" in out
    assert re.search(r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]\s+\d(-\d)? of 3", out)
    assert "rest on" in out and "paired resamples" in out and "Rank 1 is the best" in out
    # the one-page card: every criterion of the battery, the agreement with each baseline,
    # one self-contained HTML page (links only to the full report beside it)
    from metaeval.report.card import BATTERY

    page = (tmp_path / "card" / "report" / "card.html").read_text()
    parser = _Links()
    parser.feed(page)
    assert parser.images and all(s.startswith("data:image/png;base64,") for s in parser.images)
    assert set(parser.refs) <= {"index.html", "index.md"}
    text = " ".join(parser.text)
    for what in (b[-1] for b in BATTERY):
        assert what in text, what
    assert "no maximum-entropy expectation" in text  # RprecHalf has none: said, not skipped
    assert "Agreement with each baseline" in text and "P@10" in text


def test_card_world_from_a_study_file_is_that_world(tmp_path, monkeypatch):
    """``--world STUDY.toml:WORLD_ID``: the world as the study file means it (its paths from
    the study file's folder), wherever the card is made."""
    from metaeval.report.card import card_study

    study = tmp_path / "study"
    (study / "runs").mkdir(parents=True)
    (study / "w.qrels").write_text("1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n2 0 d4 0\n")
    for name in ("a", "b"):
        (study / "runs" / f"{name}.run").write_text(
            f"1 Q0 d1 1 2 {name}\n1 Q0 d2 2 1 {name}\n2 Q0 d3 1 1 {name}\n"
        )
    (study / "s.toml").write_text(
        """schema = 1
[study]
name = "s"
seed = 1
[[worlds]]
id = "trec"
kind = "trec"
qrels = "w.qrels"
runs = "runs/*.run"
topics = "1-2"
depth = 5
[measures]
names = ["AP"]
[[criteria]]
kind = "robustness"
"""
    )
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    text = card_study("AP", ["P@10"], "../study/s.toml:trec")
    world = load_spec("card.toml", text=text).worlds[0]
    assert world == load_spec(study / "s.toml").world("trec")


def test_quickstart_runs_the_quickstart_study(tmp_path, capsys, monkeypatch):
    from metaeval.study import spec as spec_module

    # the shipped quickstart study with 20 topic resamples instead of its 200, for time (the
    # rest of the file as shipped)
    shipped = spec_module.study_file("quickstart.toml")
    text = re.sub(r"(?m)^topic_resamples = \d+\n", "", shipped.read_text())
    copy = tmp_path / "quickstart.toml"
    copy.write_text(text.replace("[study]", "[study]\ntopic_resamples = 20", 1))
    monkeypatch.setattr(spec_module, "study_file", {"quickstart.toml": copy}.__getitem__)
    code = run(["quickstart", "--out", str(tmp_path / "qs"), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "tau vs full, 10% judged" in out and "Q1 (sim)" in out
    assert re.search(r"^AP\s+\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]", out, flags=re.M)
    assert "95% intervals of the expected value over 30 topics (20 paired resamples)" in out
    assert max(len(line) for line in out.split("\nClaims:")[0].splitlines()) <= 100
    page = (tmp_path / "qs" / "report" / "index.html").read_text()
    assert "<h1>Study quickstart</h1>" in page and "<td>Q1</td>" in page
    claims = pd.read_csv(tmp_path / "qs" / "report" / "tables" / "claims.csv")
    printed = set(re.findall(r"^  (\S+) \(\S+\): ", out, flags=re.M))
    assert "Q1" in printed and printed == set(claims["claim"])  # the report's claims


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (Debian package chromium)")
def test_the_html_report_renders_in_a_headless_browser(written, tmp_path):
    page = written["html"]
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    dom = subprocess.run(
        [CHROMIUM, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120
    )
    assert "Study small" in dom.stdout and "Claims" in dom.stdout
    shot = tmp_path / "page.png"
    subprocess.run(
        [CHROMIUM, *flags, "--window-size=1200,1600", f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        timeout=120,
    )
    import matplotlib.image as mpimg

    pixels = mpimg.imread(shot)
    # the page shows figures: many distinct colours, not a blank or error page
    assert len(np.unique(pixels.reshape(-1, pixels.shape[-1])[:, :3], axis=0)) > 100
    # nothing spills out of the 1100-pixel column (wide tables scroll inside it): in a
    # 1600-pixel window the outer 200 pixels on each side stay blank
    wide = tmp_path / "wide.png"
    subprocess.run(
        [CHROMIUM, *flags, "--window-size=1600,3000", f"--screenshot={wide}", page.as_uri()],
        capture_output=True,
        timeout=120,
    )
    rgb = mpimg.imread(wide)[:, :, :3]
    assert rgb.shape[1] == 1600
    margins = np.concatenate([rgb[:, :200], rgb[:, -200:]], axis=1)
    assert (margins > 0.97).all(), "something is drawn outside the report's column"


def test_table_and_figure_names_make_links_that_hold(tmp_path):
    # A table named after a level ("full judgments") once gave tables/x_full judgments.csv,
    # and a Markdown link with a space in it, which renderers cut short.
    import matplotlib.figure

    from metaeval.report import document as doc

    blocks = [
        doc.table(pd.DataFrame({"a": [1.0]}), "power_full judgments", "Power"),
        doc.figure(matplotlib.figure.Figure(), "asl/full (10%)", "ASL"),
    ]
    assert [b.name for b in blocks] == ["power_full_judgments", "asl_full_10_"]
    markdown = doc.write_markdown(blocks, tmp_path, "t").read_text()
    links = re.findall(r"\]\(([^)]*)\)", markdown)
    assert links == ["tables/power_full_judgments.csv", "figures/asl_full_10_.png"]
    assert all((tmp_path / link).is_file() for link in links)
