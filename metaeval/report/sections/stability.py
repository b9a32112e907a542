"""Topic-subset stability: tau_b between rankings on n topics and on all topics (or two
disjoint sets), by n."""

from __future__ import annotations

import pandas as pd

from metaeval.report import document as doc
from metaeval.report import figures as fig
from metaeval.report.model import FULL, Report, intervals_text
from metaeval.report.sections.common import first_seen
from metaeval.report.sections.registry import register_section


@register_section("stability")
def stability(rep: Report, rows: pd.DataFrame) -> list[doc.Block]:
    """The topic-subset stability section: tau_b by topic-set size."""
    s = rep.summary
    d = s[(s["kind"] == "stability") & s["statistic"].isin(["tau_subset", "tau_split"])]
    out = [
        doc.heading("Topic-subset stability"),
        doc.text(
            "Kendall's tau_b between the ranking of the systems on random subsets of n topics "
            "and on all topics (and between two disjoint subsets of n topics), by n: the mean "
            "over repeats (and replicates). Every measure sees the same subsets. The band of "
            "the figures is a spread, not an interval: the 2.5-97.5 percentiles of tau_b over "
            "the random subsets, how far a ranking on one set of n topics can be from the "
            "ranking on all of them. The table gives the mean with its "
            f"{rep.basis(d)}, `[low, high]`."
        ),
    ]
    captions = {
        "tau_subset": "Ranking on n topics against the ranking on all topics",
        "tau_split": "Rankings on two disjoint sets of n topics",
    }
    for stat in ("tau_subset", "tau_split"):
        if (rows["statistic"] == stat).any():
            out.append(
                doc.figure(
                    fig.stability_curves(rows, statistic=stat),
                    f"stability_{stat}",
                    captions[stat] + " (band: the spread over random subsets)",
                )
            )
    d = d.assign(shown=intervals_text(d))
    wide = d.pivot_table(
        index=["world", "statistic", "measure"],
        columns="x",
        values="shown",
        aggfunc="first",
        sort=False,
    )
    wide.columns = [f"n = {int(c)}" for c in wide.columns]
    wide = wide.reset_index()
    wide = rep.sorted_rows(wide.assign(level=FULL)).drop(columns="level")
    first = {"tau_subset": 0, "tau_split": 1}
    wide = wide.sort_values(
        ["world", "statistic"],
        key=lambda c: c.map(first) if c.name == "statistic" else first_seen(c),
        kind="stable",
    )
    out.append(doc.table(wide, "stability", "Mean tau_b by topic-set size, with its interval"))
    return out
