"""Topic-set size (Sakai 2016): the topics a collection like this one needs."""

from __future__ import annotations

import pandas as pd

from metaeval.report import document as doc
from metaeval.report.model import Report
from metaeval.report.sections.common import by_statistic, summary_of
from metaeval.report.sections.registry import register_section


@register_section("topic_set_size")
def topic_set_size(rep: Report, rows: pd.DataFrame) -> list[doc.Block]:
    """The topic-set size section: topics needed by difference and by interval width."""
    s = summary_of(rep, "topic_set_size")
    variance = by_statistic(rep, "topic_set_size", {"residual_variance": "V_E"})
    designs = by_statistic(
        rep,
        "topic_set_size",
        {
            "topics_paired_t": "topics, paired t",
            "power_paired_t": "power now, paired t",
            "topics_anova": "topics, ANOVA",
            "power_anova": "power now, ANOVA",
        },
        x="difference",
    )
    widths = by_statistic(rep, "topic_set_size", {"topics_ci": "topics"}, x="CI width")
    blocks = [
        doc.heading("Topic-set size"),
        doc.text(
            "How many topics a collection like this one needs (Sakai 2016): for a paired "
            "t-test to detect a difference with the study's power, for a one-way ANOVA over "
            "its systems to detect a gap between the best and the worst, and for a 95% "
            "interval of a paired difference no wider than a width; from the residual "
            "variance V_E of the two-way ANOVA of the scores. 'power now' is the power of the "
            "collection's own number of topics. Values (means over replicates where a world "
            f"has several) with their {rep.basis(s, plural=True)}."
        ),
        doc.table(variance, "topic_set_size_variance", "Residual variance"),
    ]
    if len(designs):
        blocks.append(doc.table(designs, "topic_set_size", "Topics needed, by difference"))
    if len(widths):
        blocks.append(doc.table(widths, "topic_set_size_ci", "Topics needed, by interval width"))
    return blocks
