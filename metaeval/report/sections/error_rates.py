"""Error rates of significance tests on collections whose truth is known (Urbano, Lima &
Hanjalic 2019)."""

from __future__ import annotations

import pandas as pd

from metaeval.report import document as doc
from metaeval.report.model import Report, intervals_text
from metaeval.report.sections.common import summary_of
from metaeval.report.sections.registry import register_section


@register_section("error_rates")
def error_rates(rep: Report, rows: pd.DataFrame) -> list[doc.Block]:
    """The error rates section: type I, II, III errors and power of each test by topics."""
    s = summary_of(rep, "error_rates")
    rates = {
        "type1_rate": "type I",
        "type2_rate": "type II",
        "type3_rate": "type III",
        "power": "power",
    }
    d = s[s["statistic"].isin(rates)]
    if d.empty:
        return []
    shown = pd.concat(
        [g.assign(shown=intervals_text(g, 3)) for _, g in d.groupby("statistic", sort=False)]
    )
    wide = shown.pivot_table(
        index=["world", "measure", "other", "x"],
        columns="statistic",
        values="shown",
        aggfunc="first",
        sort=False,
    )
    wide = wide[[c for c in rates if c in wide.columns]].rename(columns=rates)
    wide.columns.name = None
    table = rep.sorted_rows(wide.reset_index()).rename(columns={"other": "test", "x": "topics"})
    table["topics"] = table["topics"].map(lambda v: f"{v:g}")
    return [
        doc.heading("Error rates of the tests"),
        doc.text(
            "How often each significance test is wrong on collections whose truth is known "
            "(Urbano, Lima & Hanjalic 2019): type I, a null pair (equal true effects) found "
            "significant; type II, a pair that truly differs not found significant; type III, "
            "found significant in the wrong direction; power, found in the right direction. "
            "Rates over the pairs and topic subsets of each replicate; means over replicates, "
            f"with their {rep.basis(s, plural=True)}."
        ),
        doc.table(table, "error_rates", "Error rates by test and number of topics"),
    ]
