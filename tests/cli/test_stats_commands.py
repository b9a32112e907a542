"""``metaeval compare``, ``topics-needed``, ``anova`` and ``reliability`` on a small simulated
TREC collection: every number printed is the library function's on the same per-topic scores,
and bad input is one ``error:`` line with a non-zero status."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval.stats import (
    anova,
    anova_residual_variance,
    d_study,
    expected_ci_width,
    expected_tau,
    g_study,
    min_detectable_difference_anova,
    min_detectable_difference_paired_t,
    paired_comparisons,
    power_anova,
    power_paired_t,
    randomized_tukey_hsd,
    residual_variance,
    topic_set_size_anova,
    topic_set_size_ci,
    topic_set_size_paired_t,
    topics_needed,
    tukey_hsd,
    westfall_young,
)

# JSON keeps 10 decimals: p-values near 0 are compared to that absolute precision.
CLOSE = {"rel": 1e-8, "abs": 1e-9}


@pytest.fixture(scope="module")
def collection(trec_collection):
    """(qrels, run files, run names) of 4 simulated runs over 12 topics."""
    root = trec_collection(
        "stats_cli",
        n_topics=12,
        n_systems=4,
        rng=np.random.default_rng(2),
        n_candidates=300,
        rel_median=15.0,
        depth=100,
        pool_depth=20,
    )
    runs = sorted(str(p) for p in (root / "runs").iterdir())
    names = sorted(metaeval.read_runs(runs).names)
    return str(root / "qrels.txt"), runs, names


def scores(collection, measure: str = "AP") -> pd.DataFrame:
    """The per-topic scores the commands rest on, as the library takes them."""
    qrels, runs, _ = collection
    frame = metaeval.evaluate(runs, qrels, [measure], per_topic=True)
    return frame[["run", "topic", "value"]].reset_index(drop=True)


def as_json(cli, argv):
    code, out, err = cli(argv)
    assert code == 0, err
    return json.loads(out)


def one_error_line(err: str) -> bool:
    lines = [x for x in err.splitlines() if x.strip()]
    return len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err


# ---------------------------------------------------------------------------- compare
def test_compare_equals_paired_comparisons_with_intervals_and_effect_sizes(cli, collection):
    qrels, runs, names = collection
    tests = ["t", "wilcoxon", "sign", "randomization", "bootstrap"]
    argv = ["compare", qrels, *runs, "-m", "AP", "-B", "2000", "--seed", "4", "--format", "json"]
    for t in tests:
        argv += ["--test", t]
    got = pd.DataFrame(as_json(cli, argv))
    X = scores(collection)
    want = paired_comparisons(
        X,
        family="all_pairs",
        tests=tests,
        correction="holm",
        residual_variance=anova_residual_variance(X),
        B=2000,
        rng=4,
    )
    assert len(got) == len(want) == 6 * len(tests)
    assert (got["family"] == "all_pairs").all() and (got["correction"] == "holm").all()
    assert list(got["test"]) == list(want["test"])
    for col in ["system_a", "system_b", "estimand", "ci_method"]:
        assert list(got[col]) == list(want[col]), col
    for col in [
        "diff",
        "estimate",
        "ci_low",
        "ci_high",
        "ci_level",
        "p_value",
        "p_adjusted",
        "effect_size",
        "effect_size_ve",
    ]:
        assert got[col].to_numpy() == pytest.approx(want[col].to_numpy(), **CLOSE), col
    # the two effect sizes are the pair's d_z and its difference over sqrt(V_E)
    assert got["effect_size_ve"].to_numpy() == pytest.approx(
        (got["diff"] / np.sqrt(anova_residual_variance(X))).to_numpy(), **CLOSE
    )


def test_compare_table_names_the_family_and_shows_intervals(cli, collection):
    qrels, runs, names = collection
    code, out, err = cli(["compare", qrels, *runs, "-m", "AP", "--test", "wilcoxon"])
    assert code == 0, err
    assert "family: every pair of the 4 runs (6 pairs)" in out
    assert "Holm over the 6 pairs" in out
    header = next(line for line in out.splitlines() if line.lstrip().startswith("system_a"))
    for col in ("estimate", "ci_low", "ci_high", "ci_level", "p_adjusted", "d_z", "d_VE"):
        assert col in header.split()
    code, out, err = cli(
        ["compare", qrels, *runs, "-m", "AP", "--baseline", names[1], "--correction", "bh"]
    )
    assert code == 0, err
    assert f"family: every run against the baseline {names[1]} (3 pairs)" in out
    assert "Benjamini-Hochberg over the 3 pairs" in out


def test_compare_baseline_family_equals_the_library(cli, collection):
    qrels, runs, names = collection
    base = names[2]
    got = pd.DataFrame(
        as_json(
            cli,
            ["compare", qrels, *runs, "-m", "P@5", "--baseline", base, "--test", "sign"]
            + ["--correction", "none", "--format", "json"],
        )
    )
    X = scores(collection, "P@5")
    want = paired_comparisons(
        X,
        family="baseline",
        baseline=base,
        tests=["sign"],
        correction=None,
        residual_variance=anova_residual_variance(X),
    )
    assert (got["family"] == "baseline").all() and (got["system_b"] == base).all()
    assert list(got["system_a"]) == list(want["system_a"])
    for col in ["estimate", "ci_low", "ci_high", "p_value", "p_adjusted"]:
        assert got[col].to_numpy() == pytest.approx(want[col].to_numpy(), **CLOSE), col
    assert (got["p_adjusted"] == got["p_value"]).all()


def test_compare_westfall_young_equals_the_library(cli, collection):
    qrels, runs, _ = collection
    argv = ["compare", qrels, *runs, "-m", "AP", "--test", "randomization"]
    argv += ["--correction", "westfall-young", "-B", "3000", "--seed", "9", "--format", "json"]
    got = pd.DataFrame(as_json(cli, argv))
    wy = westfall_young(scores(collection), family="all_pairs", B=3000, rng=9)
    assert list(zip(got["system_a"], got["system_b"])) == list(zip(wy.system_a, wy.system_b))
    # the raw p-values are the randomisation test's on the very sign flips Westfall-Young uses
    assert got["p_value"].to_numpy() == pytest.approx(wy.p_value, **CLOSE)
    assert got["p_adjusted"].to_numpy() == pytest.approx(wy.p_adjusted, **CLOSE)
    assert (got["correction"] == "westfall-young").all()
    assert (got["significant"] == (wy.p_adjusted < 0.05)).all()


# ---------------------------------------------------------------------------- topics-needed
def test_topics_needed_equals_the_design_functions(cli, collection):
    qrels, runs, _ = collection
    rows = as_json(
        cli,
        ["topics-needed", qrels, *runs, "-m", "AP", "--alpha", "0.05", "--power", "0.8"]
        + ["--min-diff", "0.05", "--ci-width", "0.1", "--format", "json"],
    )
    ve = residual_variance(scores(collection))
    t_row, ci_row = rows
    assert (t_row["design"], ci_row["design"]) == ("paired t", "ci")
    assert t_row["V_E"] == pytest.approx(ve.residual, **CLOSE) and t_row["df_E"] == ve.df
    need = topic_set_size_paired_t(0.05, ve, alpha=0.05, beta=0.2)
    assert t_row["topics_needed"] == need.n_topics
    assert t_row["power_at_needed"] == pytest.approx(need.power, **CLOSE)
    assert t_row["topics"] == 12
    assert t_row["power_at_topics"] == pytest.approx(power_paired_t(12, 0.05, ve), **CLOSE)
    assert t_row["min_diff_at_topics"] == pytest.approx(
        min_detectable_difference_paired_t(12, ve, beta=0.2), **CLOSE
    )
    ci = topic_set_size_ci(0.1, ve, alpha=0.05)
    assert ci_row["topics_needed"] == ci.n_topics
    assert ci_row["width_at_needed"] == pytest.approx(ci.expected_width, **CLOSE)
    assert ci_row["width_at_topics"] == pytest.approx(expected_ci_width(12, ve), **CLOSE)


def test_topics_needed_anova_design(cli, collection):
    qrels, runs, _ = collection
    argv = ["topics-needed", qrels, *runs, "-m", "nDCG@10", "--design", "anova"]
    argv += ["--power", "0.9", "--min-diff", "0.1", "--alpha", "0.01"]
    (row,) = as_json(cli, [*argv, "--systems", "10", "--format", "json"])
    ve = residual_variance(scores(collection, "nDCG@10"))
    need = topic_set_size_anova(0.1, ve, 10, alpha=0.01, beta=0.1)
    assert row["n_systems"] == 10 and row["topics_needed"] == need.n_topics
    assert row["power_at_needed"] == pytest.approx(need.power, **CLOSE)
    assert row["power_at_topics"] == pytest.approx(
        power_anova(12, 0.1, ve, 10, alpha=0.01), **CLOSE
    )
    assert row["min_diff_at_topics"] == pytest.approx(
        min_detectable_difference_anova(12, ve, 10, alpha=0.01, beta=0.1), **CLOSE
    )
    # without --systems, the ANOVA is over the runs given
    (row,) = as_json(cli, [*argv, "--format", "json"])
    assert row["n_systems"] == 4
    assert row["topics_needed"] == topic_set_size_anova(0.1, ve, 4, alpha=0.01, beta=0.1).n_topics
    code, out, err = cli(argv)
    assert code == 0, err
    assert f"{need.n_topics} topics" not in out  # the table is the 4-run design, not 10
    assert "one-way ANOVA over 4 runs" in out and "with the collection's 12 topics" in out


# ---------------------------------------------------------------------------- anova
def test_anova_table_equals_the_library(cli, collection):
    qrels, runs, _ = collection
    got = pd.DataFrame(as_json(cli, ["anova", qrels, *runs, "-m", "AP", "--format", "json"]))
    want = anova(scores(collection)).to_frame()
    assert list(got["source"]) == list(want.index) == ["system", "topic", "residual", "total"]
    for col in ["ss", "df", "ms", "F", "p"]:
        assert got[col].to_numpy(dtype=float) == pytest.approx(
            want[col].to_numpy(), nan_ok=True, **CLOSE
        ), col
    code, out, err = cli(["anova", qrels, *runs, "-m", "AP"])
    assert code == 0, err
    assert f"V_E = {anova(scores(collection)).V_E:.6g} (residual mean square, 33 degrees" in out


@pytest.mark.parametrize("randomized", [False, True])
def test_anova_tukey_equals_the_library(cli, collection, randomized):
    qrels, runs, _ = collection
    argv = ["anova", qrels, *runs, "-m", "AP", "--alpha", "0.1", "--format", "json"]
    X = scores(collection)
    if randomized:
        argv += ["--randomized", "-B", "800", "--seed", "5"]
        want = randomized_tukey_hsd(X, B=800, alpha=0.1, rng=5)
    else:
        argv += ["--tukey"]
        want = tukey_hsd(X, alpha=0.1)
    got = pd.DataFrame(as_json(cli, argv))
    pairs = want.to_frame()
    assert (got["method"] == want.method).all()
    assert got["critical_difference"].to_numpy() == pytest.approx(want.critical_difference)
    assert list(got["system_a"]) == list(pairs["system_a"])
    for col in ["diff", "effect_size", "statistic", "p", "ci_low", "ci_high"]:
        assert got[col].to_numpy() == pytest.approx(pairs[col].to_numpy(), **CLOSE), col
    assert list(got["significant"]) == list(pairs["significant"])


# ---------------------------------------------------------------------------- reliability
def test_reliability_equals_the_library(cli, collection):
    qrels, runs, _ = collection
    argv = ["reliability", qrels, *runs, "-m", "AP", "--sizes", "25,50"]
    argv += ["--topics-for", "0.9,0.95", "--confidence", "0.9", "--format", "json"]
    got = pd.DataFrame(as_json(cli, argv))
    g = g_study(scores(collection), level=0.9)
    d = d_study(g, [12, 25, 50], level=0.9)
    need = topics_needed(g, [0.9, 0.95], level=0.9)

    def value(quantity, **key):
        rows = got[got["quantity"] == quantity]
        for k, v in key.items():
            rows = rows[rows[k] == v]
        assert len(rows) == 1, (quantity, key)
        return rows.iloc[0][["estimate", "low", "high"]].to_numpy(dtype=float)

    assert value("var_system") == pytest.approx([g.var_s, g.var_s_low, g.var_s_high], **CLOSE)
    assert value("var_topic") == pytest.approx([g.var_t, g.var_t_low, g.var_t_high], **CLOSE)
    assert value("var_system_x_topic") == pytest.approx(
        [g.var_st, g.var_st_low, g.var_st_high], **CLOSE
    )
    for i, n in enumerate([12, 25, 50]):
        erho2 = [d.erho2[i], d.erho2_low[i], d.erho2_high[i]]
        assert value("erho2", n_topics=n) == pytest.approx(erho2, **CLOSE)
        assert value("phi", n_topics=n) == pytest.approx(
            [d.phi[i], d.phi_low[i], d.phi_high[i]], **CLOSE
        )
        assert value("expected_tau", n_topics=n) == pytest.approx(
            [expected_tau(v) for v in erho2], **CLOSE
        )
    for i, t in enumerate([0.9, 0.95]):
        assert value("topics_for_erho2", target=t) == pytest.approx(
            [need.erho2[i], need.erho2_low[i], need.erho2_high[i]]
        )
        assert value("topics_for_phi", target=t) == pytest.approx(
            [need.phi[i], need.phi_low[i], need.phi_high[i]]
        )
    assert (got["level"] == 0.9).all()


def test_reliability_table(cli, collection):
    qrels, runs, _ = collection
    code, out, err = cli(["reliability", qrels, *runs, "-m", "AP", "--ci", "jackknife"])
    assert code == 0, err
    g = g_study(scores(collection), ci="jackknife")
    need = topics_needed(g, 0.95)
    assert "G-study of 4 runs x 12 topics" in out and "jackknife intervals" in out
    row = next(line for line in out.splitlines() if line.split()[:1] == ["0.95"])
    assert row.split()[1] == str(int(need.erho2[0]))  # the topics needed, a whole number


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "argv, says",
    [
        (["compare", "--test", "perm"], ["--test", "perm"]),
        (["compare", "--baseline", "nope"], ["--baseline", "nope"]),
        (["compare", "--alpha", "1.5"], ["--alpha"]),
        (["compare", "--test", "t", "--correction", "westfall-young"], ["westfall-young"]),
        (["compare", "-m", "Nope"], ["Nope"]),
        (["topics-needed", "--power", "1.5"], ["--power"]),
        (["topics-needed", "--power", "0"], ["--power"]),
        (["topics-needed", "--power", "0.03"], ["--power", "--alpha"]),
        (["topics-needed", "--alpha", "0"], ["--alpha"]),
        (["topics-needed", "--alpha", "nan"], ["--alpha"]),
        (["topics-needed", "--min-diff", "-0.1"], ["--min-diff"]),
        (["topics-needed", "--ci-width", "0"], ["--ci-width"]),
        (["topics-needed", "--design", "f"], ["--design"]),
        (["topics-needed", "--systems", "5"], ["--systems", "--design anova"]),
        (["topics-needed", "-m", "Nope"], ["Nope"]),
        (["anova", "--alpha", "2"], ["--alpha"]),
        (["anova", "-m", "AP@"], ["AP@"]),
        (["anova", "-B", "0", "--randomized"], ["-B"]),
        (["reliability", "--topics-for", "1"], ["--topics-for"]),
        (["reliability", "--topics-for", "0.9,x"], ["--topics-for"]),
        (["reliability", "--sizes", "0"], ["--sizes"]),
        (["reliability", "--confidence", "1"], ["--confidence"]),
        (["reliability", "-m", "Nope"], ["Nope"]),
    ],
)
def test_bad_input_is_one_error_line(cli, collection, argv, says):
    qrels, runs, _ = collection
    code, out, err = cli([argv[0], qrels, *runs, *argv[1:]])
    assert code == 2 and out == ""
    assert one_error_line(err), err
    assert all(s in err for s in says), err


@pytest.mark.parametrize("command", ["compare", "topics-needed", "anova", "reliability"])
def test_one_run_or_one_topic_is_refused(cli, collection, command):
    qrels, runs, names = collection
    code, _, err = cli([command, qrels, runs[0]])
    assert code == 2 and one_error_line(err) and "two" in err
    code, _, err = cli([command, qrels, *runs, "--runs", names[0]])
    assert code == 2 and one_error_line(err) and "--runs" in err
    topic = str(scores(collection)["topic"].iloc[0])
    code, _, err = cli([command, qrels, *runs, "--topics", topic])
    assert code == 2 and one_error_line(err) and "topic" in err


def test_jackknife_needs_three_runs(cli, collection):
    qrels, runs, _ = collection
    code, _, err = cli(["reliability", qrels, *runs[:2], "--ci", "jackknife"])
    assert code == 2 and one_error_line(err) and "--ci jackknife" in err


@pytest.mark.parametrize(
    "command, option",
    [
        ("compare", "--correction"),
        ("topics-needed", "--min-diff"),
        ("anova", "--tukey"),
        ("reliability", "--topics-for"),
    ],
)
def test_help(cli, command, option):
    code, out, _ = cli([command, "--help"])
    assert code == 0 and "qrels" in out and "--measure" in out and option in out
