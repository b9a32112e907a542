"""The report's evidence read fast gives what it gave frame by frame: the rows a claim asks
for, a measure's values from them, and the summary of every statistic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval.report.inference import Evidence, NoData, interval
from metaeval.report.summary import KEYS, SUMMARY_COLUMNS, summarise
from metaeval.study.saved import load_results

REPORTS = Path(__file__).resolve().parents[2] / "reports"


def _saved(name: str):
    return load_results(REPORTS / name), load_results(REPORTS / name, "resamples")


def _same(a, b) -> None:
    np.testing.assert_array_equal(a.array, b.array)  # NaN where NaN
    assert a.sources == b.sources and a.bounds == b.bounds
    assert a.resample_trials == b.resample_trials


def test_values_are_those_of_the_measure_rows():
    results, resamples = _saved("ferrante-2014")  # three worlds, a degrader's levels
    evidence = Evidence(results, resamples)
    asked = results[["world", "criterion", "statistic", "level", "degrader", "other"]]
    asked = asked.drop_duplicates().iloc[::7]  # a spread of them: worlds, levels, references
    assert len(asked) >= 20 and asked["level"].nunique() > 1
    for world, criterion, statistic, level, degrader, other in asked.itertuples(index=False):
        rows = evidence.rows(world, criterion, statistic, level, degrader=degrader, against=other)
        again = evidence.rows(world, criterion, statistic, level, degrader=degrader, against=other)
        assert again is rows and len(rows)
        for measure in dict.fromkeys(rows["measure"]):
            _same(
                evidence.values(rows, measure),
                evidence.series(rows[rows["measure"] == measure]),
            )
        with pytest.raises(NoData, match="no saved value of nothing"):
            evidence.values(rows, "nothing")
    # a frame made elsewhere (not one rows() gave) is read too
    rows = results[results["statistic"] == results["statistic"].iloc[0]].copy()
    rows = rows[rows["world"] == rows["world"].iloc[0]]
    rows = rows[(rows["level"] == rows["level"].iloc[0]) & (rows["other"] == rows["other"].iloc[0])]
    measure = rows["measure"].iloc[0]
    _same(evidence.values(rows, measure), evidence.series(rows[rows["measure"] == measure]))


def test_summarise_is_the_statistic_by_statistic_summary():
    from metaeval.study.seeding import generator

    # a small study (the reference below cuts a frame per statistic: slow)
    results, resamples = _saved("robertson-kanoulas-yilmaz-2010")
    got = summarise(results, resamples, seed=7)
    evidence = Evidence(results, resamples)
    keys = [k for k in KEYS if k in results.columns]
    out = []
    for key, rows in results.groupby(keys, sort=False, dropna=False):
        values = evidence.series(rows)
        ident = [None if isinstance(k, float) and np.isnan(k) else k for k in key]
        iv = interval(values, 0.95, generator(7, "verdict", {"statistic": ident}))
        src = values.sources
        out.append(
            (*key, iv.estimate, iv.low, iv.high, min(src.topics) if src.topics else np.nan)
            + (src.resamples, src.trials, src.replicates)
        )
    want = pd.DataFrame(out, columns=[*keys, *SUMMARY_COLUMNS[len(KEYS) :]])
    pd.testing.assert_frame_equal(got, want, check_exact=True)
