"""The claims section: one verdict per claim and world, the numbers behind it, and every part
with its interval (the verdicts are judged by :mod:`metaeval.report.claims`)."""

from __future__ import annotations

import pandas as pd

from metaeval.report import document as doc


def claim_verdicts(
    verdicts: pd.DataFrame, parts: pd.DataFrame, confidence: float
) -> list[doc.Block]:
    """The claims section: the verdicts overview, what they rest on, and every part."""
    seen = list(dict.fromkeys(verdicts["world"]))
    worlds = [w for w in seen if w != "(analytic)"] + [w for w in seen if w == "(analytic)"]
    wide = verdicts.pivot_table(
        index="claim", columns="world", values="verdict", aggfunc="first", sort=False
    )
    wide = wide.reindex(columns=worlds).fillna("")
    first = verdicts.drop_duplicates("claim").set_index("claim")
    said = [
        f"{text} ({source})" if source else text
        for text, source in zip(
            first.loc[wide.index, "text"].to_numpy(), first.loc[wide.index, "source"].to_numpy()
        )
    ]
    overview = pd.DataFrame(
        {
            "claim": wide.index,
            "what it says (source)": said,
            **{w: wide[w].to_numpy() for w in worlds},
        }
    )
    counts = verdicts["verdict"].value_counts()
    failed = verdicts[verdicts["verdict"] == "does not hold"]
    plain = (
        f"Of {len(verdicts)} verdicts (claims x worlds), {counts.get('holds', 0)} hold, "
        f"{counts.get('does not hold', 0)} do not hold and "
        f"{counts.get('inconclusive', 0)} are inconclusive."
    )
    if len(failed):
        plain += (
            " Does not hold on our data: "
            + "; ".join(
                f"{c} ({', '.join(failed.loc[failed['claim'] == c, 'world'])})"
                for c in dict.fromkeys(failed["claim"])
            )
            + ". That is a finding about these collections, not an error: the numbers below "
            "say by how much."
        )
    level = f"{confidence:.0%}"
    blocks = [
        doc.heading("Claims"),
        doc.text(
            "Each claim is checked on every world. What it claims (a difference between two "
            "measures, a value against a bound, a change between two levels) is estimated by "
            "its mean over trials and replicates, with a "
            f"{level} interval for its expected value from a paired bootstrap over the topics "
            "(the same topic resamples for every measure, level and trial), the trials and "
            "the replicates. A claim **holds** when the interval lies on the claimed side, "
            "**does not hold** when it lies on the other side, and is **inconclusive** "
            "otherwise; a claim that two measures behave alike, or that a value stays flat, "
            "holds when the whole interval is within the tolerance. A claim with several "
            "parts (pairs, levels, measures) holds when every part holds and does not hold "
            "when a part is firmly reversed after Holm's correction over its parts. Analytic "
            "claims are checked exactly on constructed lists."
        ),
        doc.text(plain),
        doc.table(overview, "claims_overview", "Verdicts, claim by world"),
        doc.text(
            "The numbers behind each verdict: the claimed quantities (means over trials and "
            f"replicates), their difference with its {level} interval `[low, high]`, and "
            "what the intervals rest on."
        ),
        doc.table(
            verdicts[["claim", "world", "verdict", "numbers", "basis"]],
            "claims_numbers",
            "The numbers",
        ),
    ]
    if len(parts):
        blocks.append(
            doc.table(
                parts, "claim_parts", "Every part of every claim, with its interval", collapsed=True
            )
        )
    return blocks
