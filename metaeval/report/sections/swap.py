"""The swap method (Voorhees & Buckley 2002): the minimum difference by topic-set size."""

from __future__ import annotations

import pandas as pd

from metaeval.report import document as doc
from metaeval.report.model import Report, intervals_text
from metaeval.report.sections.registry import register_section


@register_section("swap")
def swap(rep: Report, rows: pd.DataFrame) -> list[doc.Block]:
    """The swap method section: the minimum difference by topic-set size."""
    s = rep.summary
    d = s[(s["kind"] == "swap") & (s["statistic"] == "min_difference")]
    tables = []
    for values in ("mean", "shown"):
        wide = d.assign(shown=intervals_text(d)).pivot_table(
            index=["world", "measure"], columns="x", values=values, aggfunc="first", sort=False
        )
        wide.columns = [f"c = {int(c)}" for c in wide.columns]
        tables.append(rep.sorted_rows(wide.reset_index()))
    return [
        doc.heading("Swap method"),
        doc.text(
            "The smallest difference in mean score for which two topic sets of c topics "
            "order a pair of systems the same way at least 95% of the time (Voorhees & "
            "Buckley 2002): the mean over replicates; the folded table gives it with its "
            f"{rep.basis(d)}."
        ),
        # many sizes: the means at a glance, their intervals folded
        doc.table(tables[0], "swap", "Minimum difference by topic-set size"),
        doc.table(
            tables[1],
            "swap_intervals",
            "Minimum difference by topic-set size, with its interval",
            collapsed=True,
        ),
    ]
