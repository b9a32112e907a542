"""Claim checks (every kind and modifier, a case that holds and one that does not), the number
format of report tables, and what each figure draws."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metaeval.report import document as doc
from metaeval.report import figures
from metaeval.report.claims import FAILS, HOLDS, UNSURE, verdicts


def _rows(values: dict, *, level="10", degrader="bv", statistic="power", criterion="dp", **extra):
    """Five trials per measure around the given values (spread 0.01); ``values`` maps a
    measure to a value or to (value, other)."""
    rows = []
    for m, v in values.items():
        v, other = v if isinstance(v, tuple) else (v, "")
        for t in range(5):
            rows.append(
                dict(
                    world="w",
                    replicate=0,
                    degrader=degrader,
                    level=level,
                    trial=t,
                    criterion=criterion,
                    kind=criterion,
                    measure=m,
                    other=other,
                    statistic=statistic,
                    x=extra.get("x", np.nan),
                    value=v + 0.01 * (t - 2),
                )
            )
    return pd.DataFrame(rows)


def _verdict(check, results):
    out = verdicts([{"id": "c", "text": "", "check": check}], results)
    return out["verdict"].iloc[0], out["numbers"].iloc[0]


ORDER = {"kind": "order", "criterion": "dp", "statistic": "power", "level": "10"}


# ---------------------------------------------------------------------------- modifiers
def test_like_within_holds_inside_and_fails_outside_the_tolerance():
    check = {**ORDER, "like": ["A"], "than": ["B"], "within": 0.05}
    assert _verdict(check, _rows({"A": 0.50, "B": 0.52}))[0] == HOLDS
    assert _verdict(check, _rows({"A": 0.50, "B": 0.70}))[0] == FAILS
    straddles = _rows({"A": 0.50, "B": 0.54})
    straddles.loc[straddles["measure"] == "B", "value"] += [-0.03, -0.02, 0.0, 0.02, 0.03]
    assert _verdict(check, straddles)[0] == UNSURE  # the difference runs from 0.01 to 0.07


def test_levels_must_all_hold():
    data = pd.concat([_rows({"A": 0.6, "B": 0.4}, level="50"), _rows({"A": 0.4, "B": 0.6})])
    check = {k: v for k, v in ORDER.items() if k != "level"}
    check |= {"levels": ["50", "10"], "greater": ["A"], "than": ["B"]}
    verdict, numbers = _verdict(check, data)
    assert verdict == FAILS and "level 10" in numbers
    assert _verdict({**check, "levels": ["50"]}, data)[0] == HOLDS


def test_per_divides_by_another_statistic():
    hits = _rows({"A": 10.0, "B": 10.0}, statistic="false_alarms")
    total = _rows({"A": 20.0, "B": 100.0}, statistic="n_significant")
    check = {**ORDER, "statistic": "false_alarms", "per": "n_significant"}
    data = pd.concat([hits, total])
    assert _verdict({**check, "greater": ["A"], "than": ["B"]}, data)[0] == HOLDS  # .5 > .1
    assert _verdict({**check, "greater": ["B"], "than": ["A"]}, data)[0] == FAILS
    threshold = {**check, "kind": "threshold", "measures": ["B"], "below": 0.2}
    assert _verdict(threshold, data)[0] == HOLDS
    assert _verdict({**threshold, "measures": ["A"]}, data)[0] == FAILS


def test_relative_to_divides_by_the_full_judgments_value():
    full = _rows({"A": 0.6, "B": 0.6}, level="full", degrader="").query("trial == 0")
    low = _rows({"A": 0.5, "B": 0.1})
    check = {
        "kind": "threshold",
        "criterion": "dp",
        "statistic": "power",
        "level": "10",
        "relative_to": "full",
        "above": 0.5,
    }
    data = pd.concat([full, low])
    verdict, numbers = _verdict({**check, "measures": ["A"]}, data)
    assert verdict == HOLDS and "0.862" in numbers  # keeps 0.5 of its 0.58 at full
    assert _verdict({**check, "measures": ["B"]}, data)[0] == FAILS


def test_change_from_compares_what_a_topic_subset_does_to_each_measure():
    everything = _rows({"A": (0.9, "R"), "B": (0.9, "R")}, level="full", degrader="")
    subset = _rows({"A": (0.85, "R"), "B": (0.5, "R")}, level="full", degrader="", criterion="few")
    data = pd.concat([everything, subset])
    check = {
        "kind": "order",
        "criterion": "few",
        "change_from": "dp",
        "statistic": "power",
        "against": "R",
        "less": ["B"],
        "than": ["A"],
    }
    verdict, numbers = _verdict(check, data)
    assert verdict == HOLDS and numbers.startswith("Change from dp")
    assert _verdict({**check, "less": ["A"], "than": ["B"]}, data)[0] == FAILS
    assert _verdict({**check, "tolerance": 0.5}, data)[0] == FAILS  # drops 0.35 further, not 0.5


def test_absolute_compares_sizes_of_changes():
    data = _rows({"A": -0.30, "B": 0.05}, statistic="mean_drift")
    check = {**ORDER, "statistic": "mean_drift", "absolute": True}
    assert _verdict({**check, "less": ["B"], "than": ["A"]}, data)[0] == HOLDS
    assert _verdict({**{k: v for k, v in check.items() if k != "absolute"}, "less": ["B"], "than": ["A"]}, data)[0] == FAILS  # fmt: skip


def test_against_lists_check_every_reference_or_their_mean():
    data = pd.concat(
        [
            _rows({"A": (0.9, "R1"), "B": (0.5, "R1")}, level="full", degrader=""),
            _rows({"A": (0.4, "R2"), "B": (0.6, "R2")}, level="full", degrader=""),
        ]
    )
    check = {**ORDER, "level": "full", "greater": ["A"], "than": ["B"], "against": ["R1", "R2"]}
    assert _verdict(check, data)[0] == FAILS  # holds against R1, not against R2
    # on average over the references A (0.65) is above B (0.55)
    assert _verdict({**check, "against_mode": "mean"}, data)[0] == HOLDS
    assert _verdict({**check, "against_mode": "mean", "greater": ["B"], "than": ["A"]}, data)[0] == FAILS  # fmt: skip


def test_a_reference_is_not_compared_with_itself():
    data = pd.concat(
        [
            _rows({"B": (0.9, "A"), "C": (0.5, "A")}, level="full", degrader=""),
            _rows({"A": (0.9, "B"), "C": (0.5, "B")}, level="full", degrader=""),
        ]
    )
    check = {
        **ORDER,
        "level": "full",
        "greater": ["A", "B"],
        "than": ["C"],
        "against": ["A", "B"],
    }
    verdict, numbers = _verdict(check, data)
    assert verdict == HOLDS and numbers.startswith("2 of 2 pairs hold")


def test_x_lists_average_the_statistic():
    data = pd.concat(
        [
            _rows({"A": 0.10, "B": 0.20}, level="full", degrader="", statistic="rms", x=1.0),
            _rows({"A": 0.25, "B": 0.10}, level="full", degrader="", statistic="rms", x=2.0),
        ]
    )
    check = {**ORDER, "level": "full", "statistic": "rms", "less": ["A"], "than": ["B"]}
    assert _verdict({**check, "x": 1}, data)[0] == HOLDS
    assert _verdict({**check, "x": 2}, data)[0] == FAILS
    assert _verdict({**check, "x": [1, 2]}, data)[0] == FAILS  # means .175 vs .15


def test_one_value_with_nothing_resampled_has_no_interval_and_no_firm_verdict():
    # However large the difference, one value gives no interval: the verdict cannot be firm.
    data = _rows({"A": 0.6, "B": 0.5}, level="full", degrader="").query("trial == 0")
    verdict, numbers = _verdict({**ORDER, "level": "full", "greater": ["A"], "than": ["B"]}, data)
    assert verdict == UNSURE and "no interval: one value, nothing resampled" in numbers
    assert "+0.100" in numbers and "[" not in numbers


def test_a_check_that_cannot_find_its_values_is_inconclusive_and_says_why():
    verdict, numbers = _verdict({**ORDER, "greater": ["A"], "than": ["Z"]}, _rows({"A": 0.5}))
    assert verdict == UNSURE and "Z" in numbers


def test_spec_accepts_the_modifiers_and_rejects_bad_ones(tmp_path):
    from metaeval.study import load_spec
    from metaeval.study.spec import SpecError
    from tests.study.conftest import SMALL

    base = SMALL.format(measures='["AP", "AP\'"]')
    good = (
        base
        + """
[[claims]]
id = "ok"
text = "t"
check = { kind = "order", criterion = "robustness", statistic = "tau_b", against = ["full"], levels = [20], like = ["AP'"], than = ["AP"], within = 0.1, absolute = true }
"""
    )
    (tmp_path / "good.toml").write_text(good)
    spec = load_spec(tmp_path / "good.toml")
    assert list(spec.claims[0].check_dict()["levels"]) == ["20"]
    for bad, where in (
        ('like = ["AP"], than = ["AP\'"]', "within"),
        ('greater = ["AP"], than = ["AP\'"], levels = [33]', r"levels\[0\]"),
        ('greater = ["AP"], than = ["AP\'"], change_from = "nope"', "change_from"),
    ):
        text = (
            base
            + f"""
[[claims]]
id = "bad"
text = "t"
check = {{ kind = "order", criterion = "robustness", statistic = "tau_b", {bad} }}
"""
        )
        (tmp_path / "bad.toml").write_text(text)
        with pytest.raises(SpecError, match=rf"claims\[0\]\.check\.{where}:"):
            load_spec(tmp_path / "bad.toml")


# ---------------------------------------------------------------------------- tables
def test_one_number_format_per_table():
    frame = pd.DataFrame({"measure": ["A", "B"], "tau": [1.0, 0.983], "asl": [0.0009778, 0.035]})
    md = doc.markdown_table(frame)
    assert "| A | 1.000 | 0.001 |" in md and "| B | 0.983 | 0.035 |" in md
    counts = pd.DataFrame({"measure": ["A", "B"], "pairs": [180.0, 15.4], "n": [3, 4]})
    assert "| A | 180.0 | 3 |" in doc.markdown_table(counts)  # integers stay integers
    assert "| B | 15.4 | 4 |" in doc.markdown_table(counts)
    whole = pd.DataFrame({"measure": ["A"], "pairs": [18.0]})
    assert "| A | 18 |" in doc.markdown_table(whole)
    html = doc.html_table(frame)
    assert ">1.000<" in html and ">0.001<" in html and ">1<" not in html


# ---------------------------------------------------------------------------- figures
def _level_rows(statistic="power", other=""):
    rows = []
    for m, base in (("AP", 0.6), ("AP'", 0.7)):
        rows.append(dict(world="w", degrader="", level="full", trial=0, measure=m, other=other,
                         statistic=statistic, value=base, replicate=0))  # fmt: skip
        for level, drop in (("50", 0.1), ("10", 0.3)):
            for t in range(2):
                rows.append(dict(world="w", degrader="bv", level=level, trial=t, measure=m,
                                 other=other, statistic=statistic, value=base - drop + 0.02 * t,
                                 replicate=0))  # fmt: skip
    return pd.DataFrame(rows)


def _named_lines(ax):
    return {ln.get_label(): ln for ln in ax.get_lines() if not ln.get_label().startswith("_")}


def test_power_curves_draw_the_mean_at_each_level_with_full_at_100():
    ax = figures.power_curves(_level_rows(), percent=["bv"]).axes[0]
    lines = _named_lines(ax)
    x, y = lines["AP"].get_data()
    assert list(x) == [10.0, 50.0, 100.0] and np.allclose(y, [0.31, 0.51, 0.6])
    assert lines["AP'"].get_linestyle() == "--"
    assert ax.xaxis_inverted()


def test_power_with_one_level_is_a_dot_per_measure():
    rows = _level_rows().query("level == 'full'")
    ax = figures.power_curves(rows).axes[0]
    dots = {c.get_label(): c.lines[0] for c in ax.containers}
    assert float(dots["AP"].get_xdata()[0]) == pytest.approx(0.6)
    assert float(dots["AP'"].get_ydata()[0]) == 1.0  # second row
    assert [t.get_text() for t in ax.get_yticklabels()] == ["AP", "AP'"]


def test_drift_curves_draw_the_drift_and_a_zero_line():
    rows = _level_rows(statistic="mean_drift", other="full").query("level != 'full'")
    ax = figures.drift_curves(rows, percent=["bv"]).axes[0]
    x, y = _named_lines(ax)["AP'"].get_data()
    assert list(x) == [10.0, 50.0] and np.allclose(y, [0.41, 0.61])
    assert any(np.allclose(ln.get_ydata(), 0.0) for ln in ax.get_lines())


def test_top_heaviness_curves_draw_the_values_per_rank():
    frame = pd.DataFrame(
        {
            "measure": ["nCG"] * 3 + ["RBP"] * 3,
            "n_relevant": 10,
            "rank": [1, 2, 3] * 2,
            "value": [0.1, 0.1, 0.1, 0.5, 0.25, 0.125],
        }
    )
    fig = figures.top_heaviness_curves(frame)
    lines = _named_lines(fig.axes[0])
    assert list(lines["RBP"].get_ydata()) == [0.5, 0.25, 0.125]
    assert fig.axes[0].get_title() == "R = 10"
    with pytest.raises(ValueError, match="y must be"):
        figures.top_heaviness_curves(frame, y="log")


def test_pr_curves_draw_the_actual_curve_in_black():
    curves = pd.DataFrame(
        {
            "curve": ["actual"] * 2 + ["AP"] * 2,
            "recall": [0.5, 1.0] * 2,
            "precision": [1.0, 0.5, 0.9, 0.6],
        }
    )
    lines = _named_lines(figures.pr_curves(curves).axes[0])
    assert lines["actual"].get_color() == "black"
    assert list(lines["AP"].get_ydata()) == [0.9, 0.6]


def test_agreement_heatmap_follows_the_given_order():
    agree = pd.DataFrame(
        {
            "world": "w",
            "measure": ["B", "A"],
            "other": ["A", "B"],
            "statistic": "tau_b",
            "value": [0.6, 0.6],
        }  # fmt: skip
    )
    ax = figures.agreement_heatmap(agree, order=["A", "B"]).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["A", "B"]


def test_card_dots_highlight_the_measure_under_study():
    values = pd.DataFrame(
        {
            "criterion": ["power"] * 3,
            "measure": ["NEW", "AP", "P@10"],
            "value": [0.7, 0.6, 0.5],
            "higher_is_better": True,
        }
    )
    ax = figures.card_dots(values, "NEW").axes[0]
    red = [c for c in ax.collections if np.allclose(c.get_facecolor()[0][:3], (0.839, 0.153, 0.157), atol=0.01)]  # fmt: skip
    assert len(red) == 1 and np.allclose(red[0].get_offsets(), [[0.7, 0.0]])  # NEW: first row
    labels = {t.get_text(): t for t in ax.get_yticklabels()}
    assert list(labels) == ["NEW", "AP", "P@10"] and labels["NEW"].get_color() == "#d62728"


def test_collection_panels_draw_one_dot_per_world_per_statistic():
    frame = pd.DataFrame(
        {"world": ["real", "sim", "sim"], "statistic": "R median", "value": [28.0, 40.0, 42.0]}
    )
    ax = figures.collection_panels(frame).axes[0]
    xs = sorted(float(c.lines[0].get_xdata()[0]) for c in ax.containers)
    assert xs == [28.0, 41.0]
    assert ax.get_title() == "R median"


def test_legend_of_many_measures_sits_under_the_panels_and_widens_one_panel():
    rows = []
    for i in range(12):
        for level in ("50", "10"):
            rows.append(dict(world="w", degrader="bv", level=level, trial=0, replicate=0,
                             measure=f"measure-{i}", other="full", statistic="tau_b",
                             value=0.5 + i / 100))  # fmt: skip
    fig = figures.robustness_curves(pd.DataFrame(rows), percent=["bv"])
    assert fig.get_figwidth() >= 7.0 and len(fig.legends) == 1
    lines = _named_lines(fig.axes[0]).values()
    colour_marker = {(ln.get_color(), ln.get_marker()) for ln in lines}
    assert len(colour_marker) == 12  # no two measures look alike


def test_pr_curves_at_several_thresholds_draw_every_actual_curve_in_black():
    curves = pd.DataFrame(
        {
            "curve": ["actual (grade >= 1)"] * 2 + ["actual (grade >= 2)"] * 2 + ["AP"] * 2,
            "actual": [True] * 4 + [False] * 2,
            "recall": [0.5, 1.0] * 3,
            "precision": [1.0, 0.5, 0.5, 0.25, 0.9, 0.6],
            "run": "r",
            "topic": "7",
            "threshold": [1, 1, 2, 2, 1, 1],
        }
    )
    fig = figures.pr_curves(curves)
    lines = _named_lines(fig.axes[0])
    assert lines["actual (grade >= 1)"].get_color() == "black"
    assert lines["actual (grade >= 2)"].get_color() == "black"
    assert (
        lines["actual (grade >= 1)"].get_linestyle() != lines["actual (grade >= 2)"].get_linestyle()
    )
    assert lines["AP"].get_color() != "black"
    assert fig.axes[0].get_title() == "r / topic 7 (grade >= 1 or 2)"
