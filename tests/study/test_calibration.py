"""The verdict rule, calibrated: claims whose answer is known, judged through real studies on
collections drawn from a simulated population of topics (a small version of
``benchmarks/bench_calibration.py``, whose full run is in docs/calibration.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metaeval.study.calibration import (
    Claim,
    calibrate_verdicts,
    calibration_study,
    default_claims,
    write_population,
)


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    keep = {"null_dp", "null_tau", "null_drift", "equiv_tau", "tau_100", "drift_falls"}
    claims = [c for c in default_claims(shares=()) if c.id in keep]
    return calibrate_verdicts(
        tmp_path_factory.mktemp("calibration"),
        n_topics=(24,),
        n_worlds=40,
        population=150,
        n_systems=8,
        claims=claims,
        topic_resamples=100,
        B=200,
        trials=3,
        seed=3,
        jobs=2,  # the same results as one worker (tests/study/test_runner.py), in less time
    )


def test_nulls_by_construction_rarely_get_a_firm_verdict(calibrated):
    """TwinA and TwinB have the same expected value of every statistic: a firm verdict either
    way is wrong. At 95% it should be wrong about 5% of the time at most; with 40 collections
    allow 5 of 40 (a rule that reads one value or a spread of trials fails this badly: every
    full-judgment comparison would be firm)."""
    s = calibrated.summary.set_index("claim")
    for claim in ("null_dp", "null_tau", "null_drift"):
        assert s.loc[claim, "truth"] == 0.0
        assert s.loc[claim, "wrong"] <= 5 / 40, s.loc[claim]
    assert s.loc[["null_dp", "null_tau", "null_drift"], "wrong"].mean() <= 0.08


def test_a_true_equivalence_is_never_rejected(calibrated):
    s = calibrated.summary.set_index("claim")
    assert s.loc["equiv_tau", "does_not_hold"] <= 2 / 40


def test_large_true_differences_are_found_and_never_reversed(calibrated):
    s = calibrated.summary.set_index("claim")
    assert s.loc["drift_falls", "truth"] > 0.05  # AP falls far more than 0.02 at 10%
    assert s.loc["drift_falls", "power"] >= 0.9
    assert s.loc["tau_100", "truth"] > 0.05  # AP' keeps its ranking better than AP
    assert s.loc["tau_100", "does_not_hold"] == 0
    assert s.loc["tau_100", "holds"] >= 0.3


def test_intervals_cover_the_expected_value(calibrated):
    # the truth of a non-null is the mean estimate over the collections (Monte-Carlo error)
    s = calibrated.summary
    assert (s["coverage"] >= 0.85).all(), s[["claim", "coverage"]]
    v = calibrated.verdicts
    assert len(v) == 6 * 40 and set(v["n_topics"]) == {24}
    assert (v["low"] <= v["high"]).all()


def test_the_population_gives_every_topic_two_identical_ids(tmp_path):
    from metaeval.data import read_qrels

    qrels, runs = write_population(tmp_path, n_topics=5, n_systems=3, seed=1)
    q = read_qrels(qrels).to_df()
    a = q[q["topic"].str.endswith("a")].assign(topic=lambda d: d["topic"].str[:-1])
    b = q[q["topic"].str.endswith("b")].assign(topic=lambda d: d["topic"].str[:-1])
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))
    assert len(list(runs.glob("*"))) == 3


def test_the_study_draws_distinct_topic_sets(tmp_path):
    from metaeval.study import load_spec

    qrels, runs = write_population(tmp_path, n_topics=30, n_systems=3, seed=1)
    claims = [Claim("c", "TwinA above TwinB", {**default_claims()[0].check})]
    text = calibration_study(qrels, runs, claims, n_topics=10, n_worlds=5, seed=2)
    spec = load_spec(tmp_path / "cal.toml", text=text)
    topics = [tuple(w.topics) for w in spec.worlds]
    assert len(set(topics)) == 5 and all(len(t) == 10 == len(set(t)) for t in topics)
    assert np.isin(["TwinA", "TwinB"], list(spec.labels)).all()
