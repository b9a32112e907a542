"""Discriminative power by level, the difference required for significance, and ASL curves."""

from __future__ import annotations

import pandas as pd

from metaeval.report import document as doc
from metaeval.report import figures as fig
from metaeval.report.model import FULL, Report, level_order
from metaeval.report.sections.common import summary_of
from metaeval.report.sections.registry import register_section


@register_section("discriminative_power")
def discriminative_power(rep: Report, rows: pd.DataFrame) -> list[doc.Block]:
    """The discriminative power section: power and difference required by level, ASL curves."""
    summary = summary_of(rep, "discriminative_power")
    power = summary[summary["statistic"] == "power"]
    out = [
        doc.heading("Discriminative power"),
        doc.text(
            "The share of system pairs whose difference is significant (achieved "
            "significance level below alpha), with the same resamples at every level: the "
            "mean over trials and replicates, with its "
            f"{rep.basis(power)} (the significance tests are redrawn on every topic resample)."
        ),
        doc.figure(
            fig.power_curves(summary, percent=rep.percent, level_names=rep.level_names()),
            "power",
            "Discriminative power" + (" by level" if rows["level"].nunique() > 1 else ""),
        ),
        *rep.level_tables(
            "power",
            "power",
            "Discriminative power (mean over trials and replicates, with its interval)",
            kind="discriminative_power",
        ),
        *rep.level_tables(
            "diff_required",
            "diff_required",
            "Estimated difference required for significance, with its interval",
            collapsed=True,
            kind="discriminative_power",
        ),
    ]
    asl = rep.in_order(rep.tables.get("asl"))
    if asl is not None and len(asl):
        asl = asl.assign(level=asl["level"].astype(str))
        lowest = [lv for lv in level_order(asl["level"]) if lv != FULL][-1:]
        shown = asl[asl["level"].isin([FULL, *lowest])]
        out.append(
            doc.figure(
                fig.asl_curves(shown),
                "asl_curves",
                "ASL curves (Sakai 2006): the lower the curve, the more pairs a measure tells "
                "apart; dashed line: alpha"
                + (f"; under the full judgments and at level {lowest[0]}" if lowest else ""),
            )
        )
    return out
