"""One summary of repeated values: the mean and the 2.5 / 97.5 percentiles, per group."""

from __future__ import annotations

import warnings

import pandas as pd


def interval_summary(
    frame: pd.DataFrame, keys: list[str], *, value: str = "value", count: str = "n"
) -> pd.DataFrame:
    """``keys`` + ``mean``, ``p025``, ``p975`` and ``count`` of ``value`` per group.

    NaN values are left out; a group of NaN only (an undefined tau, say) gets NaN, quietly.
    Groups keep the order in which they first appear.
    """
    grouped = frame.groupby(keys, sort=False, dropna=False)[value]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # groupwise quantiles (linear interpolation, NaN left out, as numpy's percentile):
        # vectorised, where a Python function per group was the cost of a summary
        out = grouped.mean().to_frame("mean")
        out["p025"] = grouped.quantile(0.025)
        out["p975"] = grouped.quantile(0.975)
    out[count] = grouped.count()
    return out.reset_index()


__all__ = ["interval_summary"]
