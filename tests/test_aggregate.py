"""Aggregation over topics: mean, trec_eval's gm_map, Robertson's shifted gmean, logit, median."""

from __future__ import annotations

import math

import numpy as np
import pytest

import metaeval
from metaeval.aggregate import Aggregate, eps_sensitivity, parse_aggregate

X = np.array([0.5, 0.0, 0.25, 1.0])


def test_mean_and_median():
    assert Aggregate("mean")(X) == pytest.approx(0.4375)
    assert Aggregate("median")(X) == pytest.approx(0.375)


def test_gmean_floor_is_trec_eval_gm_map():
    expected = math.exp((math.log(0.5) + math.log(1e-5) + math.log(0.25) + math.log(1.0)) / 4)
    assert Aggregate("gmean")(X) == pytest.approx(expected, rel=1e-12)


def test_gmean_shift_is_robertson():
    eps = 0.01
    expected = math.exp(np.mean(np.log(X + eps))) - eps
    assert parse_aggregate("gmean(mode=shift,eps=0.01)")(X) == pytest.approx(expected, rel=1e-12)


def test_logit_mean_maps_back():
    eps = 1e-5
    logits = np.log((X + eps) / (1 - X + eps))
    m = math.exp(logits.mean())
    assert Aggregate("logit")(X) == pytest.approx((m * (1 + eps) - eps) / (1 + m), rel=1e-12)
    # a constant list aggregates to itself
    assert Aggregate("logit")(np.full(5, 0.3)) == pytest.approx(0.3, rel=1e-12)
    assert Aggregate("gmean", mode="shift")(np.full(5, 0.3)) == pytest.approx(0.3, rel=1e-12)


def test_nan_topics_are_left_out_and_all_nan_gives_nan():
    rows = np.array([[0.5, np.nan, 0.25], [np.nan, np.nan, np.nan]])
    out = Aggregate("mean")(rows, axis=1)
    assert out[0] == pytest.approx(0.375) and np.isnan(out[1])
    assert np.isnan(Aggregate("gmean")(rows, axis=1)[1])


def test_parse_and_print_round_trip():
    for text in [
        "mean",
        "median",
        "gmean",
        "gmean(mode=shift)",
        "gmean(eps=0.001)",
        "logit(eps=0.01)",
    ]:
        assert str(parse_aggregate(text)) == text
    for bad in ["harmonic", "gmean(mode=up)", "gmean(eps=-1)", "gmean(tau=2)", "gmean(eps)"]:
        with pytest.raises(ValueError):
            parse_aggregate(bad)
    with pytest.raises(TypeError):
        parse_aggregate(3)


def test_eps_sensitivity_table():
    frame = eps_sensitivity(np.array([[0.0, 0.5], [0.2, 0.2]]), [1e-5, 1e-1])
    assert list(frame.columns) == ["eps", "system", "value"] and len(frame) == 4
    small = frame[(frame.eps == 1e-5) & (frame.system == 0)]["value"].item()
    large = frame[(frame.eps == 1e-1) & (frame.system == 0)]["value"].item()
    assert small == pytest.approx(math.sqrt(1e-5 * 0.5)) and large == pytest.approx(math.sqrt(0.05))
    # the system with a zero topic moves with eps, the one without does not
    steady = frame[frame.system == 1]["value"].to_numpy()
    assert steady == pytest.approx([0.2, 0.2])


def test_evaluate_uses_the_aggregate():
    qrels = {"a": {"d": 1}, "b": {"d": 1}}
    run = {"s": {"a": {"d": 1.0, "x": 0.5}, "b": {"x": 1.0, "d": 0.5}}}
    mean = metaeval.evaluate(run, qrels, "RR", per_topic=False)["value"].item()
    gmean = metaeval.evaluate(run, qrels, "RR", per_topic=False, agg="gmean")["value"].item()
    assert mean == pytest.approx(0.75) and gmean == pytest.approx(math.sqrt(0.5))


def test_gm_map_has_no_per_topic_rows_and_says_so():
    qrels = {"a": {"d": 1}, "b": {"d": 1}}
    run = {"s": {"a": {"d": 1.0, "x": 0.5}, "b": {"x": 1.0, "d": 0.5}}}
    all_rows = metaeval.evaluate(run, qrels, ["gm_map", "AP"], per_topic=False)
    assert all_rows.set_index("measure")["value"]["gm_map"] == pytest.approx(math.sqrt(0.5))
    with pytest.warns(UserWarning, match="gm_map: a mean over the topics, with no per-topic"):
        by_topic = metaeval.evaluate(run, qrels, ["gm_map", "AP"])
    assert set(by_topic["measure"]) == {"AP"}
