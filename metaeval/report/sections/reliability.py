"""Reliability by generalizability theory (Brennan 2001; Urbano et al. 2013): variance
components, E(rho^2) and Phi."""

from __future__ import annotations

import pandas as pd

from metaeval.report import document as doc
from metaeval.report.model import Report
from metaeval.report.sections.common import by_statistic, summary_of
from metaeval.report.sections.registry import register_section


@register_section("reliability")
def reliability(rep: Report, rows: pd.DataFrame) -> list[doc.Block]:
    """The reliability section: variance components, E(rho^2) and Phi, topics needed."""
    s = summary_of(rep, "reliability")
    own = by_statistic(
        rep,
        "reliability",
        {
            "var_system": "var(system)",
            "var_topic": "var(topic)",
            "var_residual": "var(system x topic)",
            "erho2": "E(rho^2)",
            "phi": "Phi",
        },
    )
    at = by_statistic(rep, "reliability", {"erho2_at": "E(rho^2)", "phi_at": "Phi"}, x="topics")
    needed = by_statistic(
        rep, "reliability", {"topics_erho2": "for E(rho^2)", "topics_phi": "for Phi"}, x="target"
    )
    blocks = [
        doc.heading("Reliability (generalizability theory)"),
        doc.text(
            "How much of the variation in the scores is due to the systems, the topics and "
            "their interaction (a G-study: variance components from the two-way ANOVA), and "
            "how reliable the ranking of the systems is with this many topics: E(rho^2), the "
            "generalizability coefficient (relative decisions, the ranking), and Phi, the "
            "dependability index (absolute scores); Brennan 2001, Urbano et al. 2013. Values "
            "(means over replicates where a world has several) with their "
            f"{rep.basis(s, plural=True)}."
        ),
        doc.table(own, "reliability", "Variance components and reliability at the world's size"),
    ]
    if len(at):
        blocks.append(doc.table(at, "reliability_at", "Reliability at other numbers of topics"))
    if len(needed):
        blocks.append(doc.table(needed, "reliability_topics", "Topics needed for a target"))
    return blocks
