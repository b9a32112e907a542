"""The fallback section of a criterion kind without its own (a plugin's that registers none):
every statistic as a table."""

from __future__ import annotations

import pandas as pd

from metaeval.report import document as doc
from metaeval.report.model import Report, intervals_text


def generic(rep: Report, rows: pd.DataFrame) -> list[doc.Block]:
    """A criterion the report has no section for (a plugin's): its statistics as a table,
    means over trials and replicates, one row per world, level, measure (and other)."""
    kind = str(rows["kind"].iloc[0])
    s = rep.summary[rep.summary["kind"] == kind]
    index = ["world", "degrader", "level", "measure"]
    if (s["other"] != "").any():
        index.append("other")
    if s["x"].notna().any():
        index.append("x")
    # one number format per statistic (a plugin's statistics can be counts, shares...)
    shown = pd.concat(
        [d.assign(shown=intervals_text(d)) for _, d in s.groupby("statistic", sort=False)]
        or [s.assign(shown="")]
    )
    wide = shown.pivot_table(
        index=index, columns="statistic", values="shown", aggfunc="first", sort=False
    )
    wide.columns.name = None
    table = rep.sorted_rows(wide.reset_index())
    if (table["degrader"] == "").all():
        table = table.drop(columns=["degrader", "level"])
    title = kind.replace("_", " ")
    return [
        doc.heading(title[:1].upper() + title[1:]),
        doc.text(
            f"The statistics of the `{kind}` criterion (its documentation says what they "
            "mean): means over trials and replicates, with "
            f"their {rep.basis(s, plural=True)}."
        ),
        doc.table(table, kind, f"{title[:1].upper() + title[1:]}: every statistic"),
    ]
