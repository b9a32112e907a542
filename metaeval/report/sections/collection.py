"""The collections: statistics describing each real or simulated collection."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metaeval.report import document as doc
from metaeval.report import figures as fig
from metaeval.report.model import Report, with_interval
from metaeval.report.sections.registry import register_section


@register_section("collection")
def collection(rep: Report, rows: pd.DataFrame) -> list[doc.Block]:
    """The collections section: each statistic on each world, real and simulated."""
    s = rep.summary
    d = s[(s["kind"] == "collection") & (s["statistic"] != "")]
    decimals = {
        stat: 0 if np.allclose(v, np.round(v)) else (1 if np.nanmax(np.abs(v)) >= 10 else 3)
        for stat, v in d.groupby("statistic", sort=False)["mean"]
    }

    counts = d.groupby("world", sort=False)["replicates"].max()
    replicates = "; ".join(
        f"{w}: {n} replicates" if n > 1 else f"{w}: one value" for w, n in counts.items()
    )
    text = d.assign(
        value=[
            with_interval(m, lo, hi, decimals[stat])
            for stat, m, lo, hi in zip(d["statistic"], d["mean"], d["low"], d["high"])
        ]
    )
    wide = text.pivot_table(
        index="statistic", columns="world", values="value", aggfunc="first", sort=False
    )
    wide.columns.name = None
    return [
        doc.heading("The collections"),
        doc.text(
            "What each collection looks like, measured the same way on real and simulated "
            "ones. A collection is described as it is (its topics are not resampled): a real "
            "one by its value, a simulated one by the mean over its replicates with the "
            f"{rep.confidence:.0%} interval of that mean over the replicates, `[low, high]` "
            f"({replicates})."
        ),
        doc.figure(
            fig.collection_panels(d),
            "collection",
            "Each statistic on each collection (dot: the value, or the mean over replicates; "
            "bar: its interval)",
        ),
        doc.table(wide.reset_index(), "collection", "Collection statistics"),
    ]
