"""Informativeness: RMS error of the maximum-entropy precision-recall curve inferred from a
measure's value (Aslam, Yilmaz & Pavlu 2005)."""

from __future__ import annotations

import pandas as pd

from metaeval.report import document as doc
from metaeval.report import figures as fig
from metaeval.report.model import Report, intervals_text
from metaeval.report.sections.registry import register_section
from metaeval.study.spec.model import CriterionSpec, criterion_as_dict


@register_section("informativeness")
def informativeness(rep: Report, rows: pd.DataFrame) -> list[doc.Block]:
    """The informativeness section: mean RMS error by relevance threshold."""
    s = rep.summary
    d = s[(s["kind"] == "informativeness") & (s["statistic"] == "rms")]
    n = s[(s["kind"] == "informativeness") & (s["statistic"] == "n_lists")]
    wide = d.assign(shown=intervals_text(d)).pivot_table(
        index=["world", "measure"], columns="x", values="shown", aggfunc="first", sort=False
    )
    wide.columns = [f"RMS, grade >= {c:g}" for c in wide.columns]
    lists = n.pivot_table(index=["world", "measure"], columns="x", values="mean", sort=False)
    lists.columns = [f"lists, grade >= {c:g}" for c in lists.columns]
    # counts (a mean over replicates, rounded); none where a measure has no lists
    lists = lists.round().astype("Int64").astype(object).where(lists.notna(), "")
    table = rep.sorted_rows(wide.join(lists).reset_index())
    bars = d.rename(columns={"x": "threshold", "mean": "rms"})
    params = next(
        (c["params"] for c in rep.spec["criteria"] if c["kind"] == "informativeness"), None
    )
    if params is None:  # no study file to say how: the criterion's defaults
        params = criterion_as_dict(CriterionSpec("informativeness", "informativeness"))["params"]
    k = params["min_relevant"]
    selection = (
        f"the ranked lists that retrieved at least {k} documents of every relevant grade "
        "(Robertson et al. 2010's selection), the same lists at every threshold"
        if params["select"] == "each_grade"
        else f"at each threshold, the ranked lists that retrieved at least {k} documents at or "
        "above it"
    )
    return [
        doc.heading("Informativeness"),
        doc.text(
            "RMS error between each ranked list's actual precision-recall curve and the one "
            "inferred by maximum entropy from the measure's value alone (Aslam, Yilmaz & "
            "Pavlu 2005; Robertson, Kanoulas & Yilmaz 2010), at each relevance threshold: "
            "the lower, the more the value says about the list. Measures without a "
            f"maximum-entropy expectation are left out. Lists: {selection}. Bars and table: "
            "the mean RMS error over the lists; error bars and `[low, high]`: its "
            f"{rep.basis(d)}."
        ),
        doc.figure(
            fig.informativeness_bars(bars),
            "informativeness",
            "Mean RMS error of the inferred precision-recall curve (lower is better)",
        ),
        doc.table(
            table,
            "informativeness",
            "Mean RMS error by threshold with its interval, and the number of lists it is "
            "averaged over",
            decimals=3,
        ),
    ]
