"""The card and the report sections show uncertainty: values with their intervals, ranks as
ranges from paired differences, a note at the ceiling, one x axis per kind of criterion in the
card's figure, and report tables with the summary's intervals instead of trial percentiles.

Results and their topic resamples are built by hand, so that every answer is known."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from metaeval.report import figures
from metaeval.report.card import card_lines, card_table, card_values
from metaeval.study.spec import DegraderSpec, SimWorld, StudySpec, spec_as_dict

R = 200  # topic resamples
NOISE_TAU = 0.9999999999999999  # a tau of 1 after rounding


def _frames(stats: dict, *, kind="discriminative_power", statistic="power", other=""):
    """``results`` and ``resamples`` of one statistic under the full judgments, one world, one
    replicate, one trial: ``stats`` maps a measure to (its value on the observed topics, its
    values on the R topic resamples)."""
    results, resamples = [], []
    for measure, (value, draws) in stats.items():
        ident = dict(
            world="w",
            replicate=0,
            degrader="",
            level="full",
            trial=0,
            criterion=kind,
            kind=kind,
            measure=measure,
            other=other,
            statistic=statistic,
            x=np.nan,
            unit="u1",
        )
        results.append({**ident, "value": float(value)})
        resamples.append({**ident, "n_topics": 50, "values": np.asarray(draws, dtype=float)})
    return pd.DataFrame(results), pd.DataFrame(resamples)


def _ranks(results, resamples) -> dict:
    values = card_values(results, resamples, seed=1)
    return dict(zip(values["measure"], values["rank"]))


# ---------------------------------------------------------------------------- rank ranges
def test_overlapping_paired_differences_give_a_range_and_firm_ones_a_single_rank():
    rng = np.random.default_rng(3)
    common = rng.normal(0, 0.02, R)  # what a topic resample does to every measure alike
    results, resamples = _frames(
        {
            # A and B: 0.005 apart, with paired noise of 0.02 each: their order is open
            "A": (0.800, 0.800 + common + rng.normal(0, 0.02, R)),
            "B": (0.795, 0.795 + common + rng.normal(0, 0.02, R)),
            # C: 0.3 below both, whatever the resample
            "C": (0.500, 0.500 + common + rng.normal(0, 0.02, R)),
        }
    )
    assert _ranks(results, resamples) == {"A": "1-2 of 3", "B": "1-2 of 3", "C": "3 of 3"}
    table = card_table(results, "B", resamples, seed=1)
    assert table["rank"].tolist() == ["1-2 of 3"]
    assert table["best baseline"].tolist() == ["A"]
    assert table[["low", "high"]].notna().all(axis=None)


def test_ranks_come_from_the_paired_difference_not_from_overlapping_intervals():
    # A and B move together from resample to resample (the topics are the same for both):
    # their own intervals overlap almost entirely, their difference is always about +0.01
    rng = np.random.default_rng(5)
    common = rng.normal(0, 0.05, R)
    results, resamples = _frames(
        {
            "A": (0.80, 0.80 + common + rng.normal(0, 0.001, R)),
            "B": (0.79, 0.79 + common + rng.normal(0, 0.001, R)),
        }
    )
    values = card_values(results, resamples, seed=1).set_index("measure")
    assert values.loc["B", "high"] > values.loc["A", "low"]  # the intervals overlap
    assert values["rank"].to_dict() == {"A": "1 of 2", "B": "2 of 2"}
    lower_is_better = _frames(
        {"A": (0.80, 0.80 + common), "B": (0.79, 0.79 + common)},
        kind="informativeness",
        statistic="rms",
    )
    rms = lower_is_better[0].assign(x=1.0)
    draws = lower_is_better[1].assign(x=1.0)
    assert _ranks(rms, draws) == {"A": "2 of 2", "B": "1 of 2"}  # a lower RMS is better


def test_float_noise_never_orders_two_measures():
    # one measure at tau 1 exactly, one at 1 after rounding: the same rank range either way,
    # and the best baseline is the study's first, not the one rounding favours
    rng = np.random.default_rng(7)
    low = 0.9 + rng.normal(0, 0.01, R)
    ranks = []
    for first, second in ((NOISE_TAU, 1.0), (1.0, NOISE_TAU)):
        results, resamples = _frames(
            {"A": (first, np.full(R, first)), "B": (second, np.full(R, second)), "C": (0.9, low)},
            kind="robustness",
            statistic="tau_b",
            other="truth",
        )
        ranks.append(_ranks(results, resamples))
        assert card_table(results, "C", resamples)["best baseline"].tolist() == ["A"]
    assert ranks[0] == ranks[1] == {"A": "1-2 of 3", "B": "1-2 of 3", "C": "3 of 3"}


# ---------------------------------------------------------------------------- ceiling
def test_a_row_where_every_measure_keeps_the_full_ranking_says_it_tells_nothing_apart():
    results, resamples = _frames(
        {m: (v, np.full(R, v)) for m, v in (("A", 1.0), ("B", NOISE_TAU), ("C", 1.0))},
        kind="robustness",
        statistic="tau_b",
        other="truth",
    )
    table = card_table(results, "C", resamples, seed=1)
    note = table["note"].iloc[0]
    assert note.startswith("at the ceiling: every measure reaches tau 1")
    assert "does not tell them apart" in note
    assert table["rank"].iloc[0] == "1-3 of 3"
    assert "at the ceiling" in card_lines(table, "C")
    # far from the bound: no note
    rng = np.random.default_rng(1)
    apart, draws = _frames(
        {m: (v, v + rng.normal(0, 0.02, R)) for m, v in (("A", 0.6), ("B", 0.5), ("C", 0.4))},
        kind="robustness",
        statistic="tau_b",
        other="truth",
    )
    assert card_table(apart, "C", draws, seed=1)["note"].tolist() == [""]


# ---------------------------------------------------------------------------- figure
def test_card_figure_draws_intervals_on_one_axis_per_kind_of_criterion():
    rows = []
    crits = [
        ("tau, 10% judged", "tau", True, {"NEW": (0.50, 0.45, 0.55), "AP": (0.60, 0.55, 0.64)}),
        ("tau vs truth", "tau", True, {"NEW": (0.98, 0.97, 0.99), "AP": (0.99, 0.985, 1.0)}),
        ("power, full", "power", True, {"NEW": (0.70, 0.65, 0.75), "AP": (0.72, 0.68, 0.76)}),
        ("power, 10%", "power", True, {"NEW": (0.10, 0.05, 0.15), "AP": (0.30, 0.25, 0.35)}),
        ("RMS", "rms", False, {"NEW": (0.05, 0.04, 0.06), "AP": (0.10, 0.09, 0.11)}),
    ]
    for crit, scale, higher, by_measure in crits:
        for m, (v, lo, hi) in by_measure.items():
            row = dict(criterion=crit, measure=m, value=v, low=lo, high=hi)
            rows.append(
                row | dict(higher_is_better=higher, scale=scale, world="w", rank="1-2 of 2")
            )
    fig = figures.card_dots(pd.DataFrame(rows), "NEW")
    limits = [ax.get_xlim() for ax in fig.axes]
    assert limits[0] == limits[1]  # the two tau rows: one axis, not each zoomed to its data
    assert limits[2] == limits[3]  # the two power rows
    assert limits[0] != limits[2]
    assert limits[0][0] < 0.45 and limits[0][1] >= 1.0  # from the lowest bound to tau 1
    assert limits[2][1] >= 1.0
    assert limits[4][0] > limits[4][1] and limits[4][1] <= 0.0  # RMS: from 0, best end right
    # the interval as a bar, red for the measure under study
    red = [
        ln
        for ln in fig.axes[1].get_lines()
        if ln.get_color() == "#d62728" and len(ln.get_xdata()) == 2
    ]
    assert len(red) == 1 and list(red[0].get_xdata()) == [0.97, 0.99]
    assert fig.axes[1].get_title(loc="left").endswith("NEW 1-2 of 2")


# ---------------------------------------------------------------------------- report
def _robustness_study():
    """A robustness statistic at a damaged level over 5 trials whose values spread widely
    (0.50 to 0.70), with topic resamples that move it little."""
    rng = np.random.default_rng(11)
    results, resamples = [], []
    for m, base in (("AP", 0.6), ("P@5", 0.4)):
        for trial in range(5):
            ident = dict(
                world="w",
                replicate=0,
                degrader="bv",
                level="10",
                trial=trial,
                criterion="robustness",
                kind="robustness",
                measure=m,
                other="full",
                statistic="tau_b",
                x=np.nan,
                unit=f"u{trial}",
            )
            value = base - 0.1 + 0.05 * trial
            results.append({**ident, "value": value})
            draws = value + rng.normal(0, 0.01, R)
            resamples.append({**ident, "n_topics": 40, "values": draws})
    data = {
        "tables": {"results": pd.DataFrame(results), "resamples": pd.DataFrame(resamples)},
        # the normalised spec a report reads (spec.json): a stratified degrader, one world
        "spec": spec_as_dict(
            StudySpec(
                name="robustness",
                seed=3,
                worlds=(SimWorld("w", "trec_like", n_topics=40, n_systems=5),),
                degraders=(DegraderSpec("bv", "stratified", (10,), trials=5),),
                measures=(),
                criteria=(),
            )
        ),
        "planned": pd.DataFrame(columns=["unit", "measure"]),
        "manifest": {"seed": 3},
    }
    return data, pd.DataFrame(results)


def test_a_report_section_shows_the_interval_of_the_mean_not_the_trial_percentiles():
    from metaeval.report.model import Report
    from metaeval.report.reader import StudyOutput
    from metaeval.report.sections.robustness import robustness

    data, results = _robustness_study()
    rep = Report(StudyOutput(**data))
    blocks = robustness(rep, rep.results)
    text = " ".join(b.text for b in blocks if b.kind == "text")
    assert "percentile" not in text
    assert "95% intervals over 40 topics (200 paired resamples), 5 trials" in text
    table = next(b.frame for b in blocks if b.kind == "table")
    s = rep.summary.set_index("measure")
    for m in ("AP", "P@5"):
        cell = table.loc[table["measure"] == m, "10%"].iloc[0]
        mean, low, high = s.loc[m, ["mean", "low", "high"]]
        assert cell == f"{mean:.3f} [{low:.3f}, {high:.3f}]"
        # the spread of the five trials (about 0.50 to 0.70 for AP) is not shown as one
        trials = results.loc[results["measure"] == m, "value"]
        p025, p975 = np.percentile(trials, [2.5, 97.5])
        assert f"{p025:.3f}" not in cell and f"{p975:.3f}" not in cell
        assert high - low < p975 - p025  # the mean of five trials varies less than one
    # the figure's band is that interval too
    band = next(b.figure for b in blocks if b.kind == "figure").axes[0].collections[0]
    ys = band.get_paths()[0].vertices[:, 1]  # the first measure's (AP's)
    assert (ys.min(), ys.max()) == pytest.approx((s.loc["AP", "low"], s.loc["AP", "high"]))


def test_figures_given_raw_trials_draw_means_without_a_band():
    _, results = _robustness_study()
    ax = figures.robustness_curves(results, percent=["bv"]).axes[0]
    assert len(ax.collections) == 0  # a spread of trials is not an interval
    line = [ln for ln in ax.get_lines() if ln.get_label() == "AP"][0]
    assert np.allclose(line.get_ydata(), [0.6])


def test_card_lines_keep_intervals_whole_and_say_what_they_rest_on():
    rng = np.random.default_rng(2)
    results, resamples = _frames(
        {m: (v, v + rng.normal(0, 0.02, R)) for m, v in (("AP", 0.8), ("RBP(p=0.8)", 0.7))}
    )
    text = card_lines(card_table(results, "RBP(p=0.8)", resamples, seed=1), "RBP(p=0.8)")
    assert max(len(line) for line in text.splitlines()) <= 100
    assert re.search(r"0\.700 \[0\.\d{3}, 0\.\d{3}\]\s+2 of 2\s+AP: 0\.800 \[", text)
    assert "rest on 50 topics (200 paired resamples)" in text
    assert "Rough intervals" not in text  # 200 resamples: not rough
