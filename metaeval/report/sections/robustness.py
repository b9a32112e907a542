"""Robustness to damaged judgments: rank correlation with the full (and the true) ranking, by
level, and the mean drift of the values."""

from __future__ import annotations

import pandas as pd

from metaeval.report import document as doc
from metaeval.report import figures as fig
from metaeval.report.figures.layout import _label
from metaeval.report.model import Report
from metaeval.report.sections.common import summary_of
from metaeval.report.sections.registry import register_section


@register_section("robustness")
def robustness(rep: Report, rows: pd.DataFrame) -> list[doc.Block]:
    """The robustness section: tau with the full (and true) ranking by level, and mean drift."""
    summary = summary_of(rep, "robustness")
    out = [
        doc.heading("Robustness to damaged judgments"),
        doc.text(
            "Rank correlation between each measure's ranking of the systems under damaged "
            "judgments and its ranking under the full judgments (1 = the same ranking), and, "
            "in simulated worlds, with its ranking under the complete true judgments. Lines "
            "and table cells are means over trials and replicates; bands and `[low, high]` "
            f"their {rep.basis(summary, plural=True)}. A condensed-list variant (') is dashed, "
            "in its base measure's colour."
        ),
    ]
    first = True
    for against in ("full", "truth", "effect"):
        for stat in ("tau_b", "tau_ap", "tau_a"):
            if not ((rows["other"] == against) & (rows["statistic"] == stat)).any():
                continue
            label = _label(stat)
            out.append(
                doc.figure(
                    fig.robustness_curves(
                        summary,
                        statistic=stat,
                        against=against,
                        percent=rep.percent,
                        level_names=rep.level_names(),
                    ),
                    f"robustness_{stat}_{against}",
                    f"{label} with the {against} ranking, by level",
                )
            )
            out += rep.level_tables(
                stat,
                f"robustness_{stat}_{against}",
                f"Mean {label} with the {against} ranking, by level, with its interval",
                collapsed=not first,
                other=against,
                kind="robustness",
            )
            first = False
    if (rows["statistic"] == "mean_drift").any():
        out += [
            doc.figure(
                fig.drift_curves(summary, percent=rep.percent, level_names=rep.level_names()),
                "mean_drift",
                "Mean drift: the reduced minus the full value, averaged over systems "
                "(below 0: the measure underestimates)",
            ),
            *rep.level_tables("mean_drift", "mean_drift", "Mean drift by level, with its interval"),
        ]
    return out
