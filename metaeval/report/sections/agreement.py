"""Agreement between measures: rank correlation of their rankings under the same judgments."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metaeval.report import document as doc
from metaeval.report import figures as fig
from metaeval.report.figures.layout import _label
from metaeval.report.model import Report, intervals_text
from metaeval.report.sections.common import first_seen, summary_of
from metaeval.report.sections.registry import register_section


@register_section("agreement")
def agreement(rep: Report, rows: pd.DataFrame) -> list[doc.Block]:
    """The agreement section: heatmaps and tables of the rank correlations between measures."""
    summary = summary_of(rep, "agreement")
    summary = summary[summary["other"] != ""]
    out = [
        doc.heading("Agreement between measures"),
        doc.text(
            "Rank correlation between the measures' rankings of the systems under the same "
            "judgments (the full ones), mean over replicates; the last table gives each pair "
            f"with its {rep.basis(summary)}."
        ),
    ]
    for i, stat in enumerate(("tau_b", "tau_ap")):
        d = rows[rows["statistic"] == stat]
        if not len(d):
            continue
        label = _label(stat)
        out.append(
            doc.figure(
                fig.agreement_heatmap(d, statistic=stat, order=rep.order),
                f"agreement_{stat}",
                f"{label} between the measures' rankings"
                + (" (row: the reference ranking)" if stat == "tau_ap" else ""),
            )
        )
        names = [m for m in rep.order if m in set(d["measure"]) | set(d["other"])]
        mats = []
        for world, w in d.groupby("world", sort=False):
            mat = w.groupby(["measure", "other"])["value"].mean().unstack()
            mat = mat.reindex(index=names, columns=names)
            for m in names:
                mat.loc[m, m] = 1.0
            mat = mat.rename_axis("measure").reset_index()
            mat.insert(0, "world", world)
            mats.append(mat)
        out.append(
            doc.table(
                pd.concat(mats, ignore_index=True),
                f"agreement_{stat}",
                f"{label} between the measures' rankings"
                + (" (row: the reference ranking)" if stat == "tau_ap" else ""),
                collapsed=i > 0,
            )
        )
    if len(summary):
        pairs = summary.assign(shown=intervals_text(summary)).pivot_table(
            index=["world", "measure", "other"],
            columns="statistic",
            values="shown",
            aggfunc="first",
            sort=False,
        )
        pairs = pairs[[c for c in ("tau_b", "tau_ap", "tau_a") if c in pairs.columns]]
        pairs = pairs.rename(columns={s: _label(s) for s in pairs.columns})
        pairs.columns.name = None
        pairs = pairs.reset_index()
        rank = {m: i for i, m in enumerate(rep.order)}
        pairs = pairs.iloc[
            np.lexsort(
                [
                    pairs["other"].map(lambda m: rank.get(m, len(rank))).to_numpy(),
                    pairs["measure"].map(lambda m: rank.get(m, len(rank))).to_numpy(),
                    first_seen(pairs["world"]).to_numpy(),
                ]
            )
        ]
        out.append(
            doc.table(
                pairs.reset_index(drop=True),
                "agreement_intervals",
                "Every pair of measures, with its interval (tau_AP: the first measure's "
                "ranking as the reference)",
                collapsed=True,
            )
        )
    return out
