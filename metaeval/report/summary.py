"""Every statistic of a study with its interval, in one table: what the report's tables and
figures draw (:func:`summarise`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metaeval.report.inference import DEFAULT_METHOD, Evidence, interval
from metaeval.study.spec import DEFAULT_CONFIDENCE

#: What identifies a statistic in a study's results (besides replicate and trial).
KEYS = ["world", "degrader", "level", "kind", "criterion", "measure", "other", "statistic", "x"]
SUMMARY_COLUMNS = [
    *KEYS,
    "mean",
    "low",
    "high",
    "topics",
    "resamples",
    "trials",
    "replicates",
]


def summarise(
    results: pd.DataFrame,
    resamples: pd.DataFrame | None = None,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
    method: str = DEFAULT_METHOD,
) -> pd.DataFrame:
    """Every statistic of a study with its interval: :data:`KEYS`, then ``mean`` (over
    replicates and trials, on the observed topics), ``low`` and ``high`` (the bounds of its
    interval at ``confidence``), and what it rests on: ``topics`` (the number of topics; the
    smallest when a topic filter varies it), ``resamples`` (topic resamples; 0: none),
    ``trials`` and ``replicates``. Groups keep the order in which they first appear."""
    from metaeval.study.seeding import generator

    if results.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    evidence = Evidence(results, resamples)
    keys = [k for k in KEYS if k in results.columns]
    out = []
    for key, values in evidence.grouped(keys):
        ident = [None if isinstance(k, float) and np.isnan(k) else k for k in key]
        iv = interval(values, confidence, generator(seed, "verdict", {"statistic": ident}), method)
        src = values.sources
        out.append(
            (
                *key,
                iv.estimate,
                iv.low,
                iv.high,
                min(src.topics) if src.topics else np.nan,
                src.resamples,
                src.trials,
                src.replicates,
            )
        )
    return pd.DataFrame(out, columns=[*keys, *SUMMARY_COLUMNS[len(KEYS) :]])


__all__ = ["KEYS", "SUMMARY_COLUMNS", "summarise"]
