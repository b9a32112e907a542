"""Significance changes under damaged judgments (Sakai & Kando 2008, Table 5): false alarms,
reversals and misses against the full judgments."""

from __future__ import annotations

import pandas as pd

from metaeval.report import document as doc
from metaeval.report import figures as fig
from metaeval.report.model import Report, intervals_text
from metaeval.report.sections.common import lowest_level
from metaeval.report.sections.registry import register_section


@register_section("significance_changes")
def significance_changes(rep: Report, rows: pd.DataFrame) -> list[doc.Block]:
    """The significance changes section: false alarms, reversals and misses by level."""
    s = rep.summary
    counts = ["n_significant", "false_alarms", "reversals", "misses"]
    tab = s[(s["kind"] == "significance_changes") & s["statistic"].isin(counts)]
    keys = ["world", "degrader", "level", "measure"]
    means = (
        tab.pivot_table(index=keys, columns="statistic", values="mean", sort=False)
        .reset_index()
        .reindex(columns=keys + counts)
    )
    # every count with its interval; the share is a ratio of two means (no interval)
    shown = tab.assign(shown=intervals_text(tab, decimals=1))
    wide = (
        shown.pivot_table(
            index=keys, columns="statistic", values="shown", aggfunc="first", sort=False
        )
        .reset_index()
        .reindex(columns=keys + counts)
    )
    share = means[keys].assign(
        false_alarm_share=100
        * means["false_alarms"]
        / means["n_significant"].where(means["n_significant"] > 0)
    )
    wide = wide.merge(share, on=keys, how="left", sort=False)
    wide = wide[keys + counts[:2] + ["false_alarm_share"] + counts[2:]]
    wide = wide.rename(
        columns={
            "n_significant": "significant (damaged)",
            "false_alarms": "of which not with full",
            "false_alarm_share": "% of them not with full",
            "reversals": "reversed",
            "misses": "lost",
        }
    )
    wide = rep.sorted_rows(wide)
    lowest = lowest_level(rows)
    at_lowest = wide[
        wide.set_index(["world", "degrader", "level"]).index.isin(
            list(set(zip(lowest["world"], lowest["degrader"], lowest["level"])))
        )
    ]
    return [
        doc.heading("Significance changes"),
        doc.text(
            "System pairs significant under damaged judgments, and how that compares with the "
            "full judgments (Sakai & Kando 2008, Table 5): significant under damaged "
            "judgments but not under the full ones, significant under both but in opposite "
            "directions, and significant under the full judgments but lost. Means over trials "
            f"and replicates, with their {rep.basis(tab, plural=True)}; the share of false "
            "alarms is the ratio of two means."
        ),
        doc.figure(
            fig.significance_bars(lowest),
            "significance_changes",
            "At the most damaged level of each degrader",
        ),
        doc.table(
            at_lowest,
            "significance_changes_lowest",
            "At the most damaged level (mean number of system pairs, with its interval)",
            decimals=1,
        ),
        doc.table(
            wide,
            "significance_changes",
            "Every level (mean number of system pairs, with its interval)",
            decimals=1,
            collapsed=True,
        ),
    ]
