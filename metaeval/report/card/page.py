"""A card as it is shown: the ranking table with intervals as text, the lines printed on a
terminal, and the one-page ``card.md`` and self-contained ``card.html``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from metaeval.report.card.ranking import agreement_table, card_table, card_values
from metaeval.report.sections.study import world_measures
from metaeval.study.spec import DEFAULT_CONFIDENCE


def shown(value: float, low: float, high: float, decimals: int = 3) -> str:
    """``0.808 [0.771, 0.842]``; the value alone when it has no interval, ``-`` when it has
    no value."""
    if value is None or not np.isfinite(value):
        return "-"
    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return f"{value:.{decimals}f}"
    return f"{value:.{decimals}f} [{low:.{decimals}f}, {high:.{decimals}f}]"


def card_display(table: pd.DataFrame, measure: str, *, short: bool = False) -> pd.DataFrame:
    """The ranking table as it is shown: values with their intervals as text, the criterion
    by its description (or its short label with ``short``), the note last."""
    best = [
        f"{b}: {shown(v, lo, hi)}" if b else "-"
        for b, v, lo, hi in zip(
            table["best baseline"], table["its value"], table["its low"], table["its high"]
        )
    ]
    out = pd.DataFrame({"criterion": table["label" if short else "criterion"]})
    if "world" in table:
        out["world"] = table["world"].to_numpy()
    out[measure] = [
        shown(v, lo, hi) for v, lo, hi in zip(table["value"], table["low"], table["high"])
    ]
    # short: the reason a rank is missing goes to the notes, the column stays narrow
    out["rank"] = [r.split(":")[0] if short else r for r in table["rank"]]
    out["best baseline"] = best
    if not short:
        out["better is"] = table["better is"].to_numpy()
        out["note"] = table["note"].to_numpy()
    return out


def _rests_on(table: pd.DataFrame) -> list[tuple[str, str]]:
    """What the card's intervals rest on: ``(basis, the criteria's labels)``, one pair per
    distinct basis (trials differ between criteria)."""
    d = table[table["rests on"] != ""]
    groups = d.groupby("rests on", sort=False)["label"].agg(lambda v: "; ".join(dict.fromkeys(v)))
    return list(groups.items())


def _caveats(table: pd.DataFrame) -> str:
    """What makes the card's intervals rough (few trials, replicates...), once each."""
    found = [c for v in table["caveats"] for c in str(v).split("; ") if c]
    return "; ".join(dict.fromkeys(found))


def _rests_on_text(table: pd.DataFrame, confidence: float) -> str:
    """:func:`_rests_on` as a sentence."""
    groups = _rests_on(table)
    if not groups:
        return "No interval could be drawn: nothing was resampled."
    level = f"{confidence:.0%}"
    if len(groups) == 1:
        return f"The {level} intervals rest on {groups[0][0]}."
    return (
        f"The {level} intervals rest on "
        + "; ".join(f"{basis} ({labels})" for basis, labels in groups)
        + "."
    )


#: What a rank range means, said on the card and under the printed table.
RANKS_MEAN = (
    "Rank 1 is the best. A rank is a range where the intervals leave it open: '2-4 of 6' "
    "means that one measure is firmly ahead of this one and two are firmly behind it. A "
    "measure counts as firmly ahead (or behind) when the interval of its paired difference "
    "with this one (the same topics, trials and replicates for both) lies wholly on one side "
    "of zero; each pair is judged on its own, without a correction for the number of pairs, "
    "and equal values never order two measures."
)


def _plain(frame: pd.DataFrame) -> str:
    """A frame of text as a terminal table: columns left-aligned, two spaces apart."""
    cells = [[str(c) for c in frame.columns]] + [
        [str(v) for v in row] for row in frame.itertuples(index=False)
    ]
    widths = [max(len(r[i]) for r in cells) for i in range(len(frame.columns))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in cells)


def card_lines(table: pd.DataFrame, measure: str, confidence: float = DEFAULT_CONFIDENCE) -> str:
    """The card as printed on a terminal: the table with short labels (about 100 characters
    wide), then the notes, what the intervals rest on and what a rank range means."""
    import textwrap

    def fill(text, indent=""):
        return textwrap.fill(text, 100, initial_indent=indent, subsequent_indent=indent + "  ")

    level = f"{confidence:.0%}"
    shown_table = card_display(table, measure, short=True).rename(
        columns={measure: f"{measure} [{level} interval]"}
    )
    lines = [_plain(shown_table)]
    notes = [
        (lab, r.split(": ", 1)[1]) for lab, r in zip(table["label"], table["rank"]) if ":" in r
    ]
    notes += [(lab, n) for lab, n in zip(table["label"], table["note"]) if n]
    if notes:
        lines += ["", "Notes:"] + [fill(f"{lab}: {n}", "  ") for lab, n in notes]
    groups = _rests_on(table)
    if len(groups) == 1:
        lines += ["", fill(f"Intervals ({level}) rest on {groups[0][0]}.")]
    elif groups:
        lines += ["", f"Intervals ({level}) rest on:"]
        lines += [fill(f"{basis}: {labels}", "  ") for basis, labels in groups]
    caveats = _caveats(table)
    if caveats:
        lines += [fill(f"Rough intervals: {caveats}; a rank range could narrow with more.")]
    lines += [fill(RANKS_MEAN)]
    return "\n".join(lines)


def _card_world(w: dict) -> str:
    """A world of the card's study (normalised), in a few words."""
    if w["kind"] == "simulator":
        return (
            f"simulated {w['preset']}: {w['n_topics']} topics, {w['n_systems']} systems, "
            f"{w['replicates']} replicates"
        )
    if w["kind"] == "scores":
        return f"score-level {world_measures(w)} scores, {w['n_topics']} topics"
    return f"TREC files {Path(str(w['as_written']['qrels'])).name}"


def write_card(directory: str | Path, measure: str, out: str | Path | None = None) -> dict:
    """Write the one-page report card of ``measure`` from a finished card study: ``card.md``
    (with its figure and tables) and a self-contained ``card.html``, beside the study's full
    report (``<directory>/report`` by default).

    Returns
    -------
    dict
        ``{"md": path, "html": path, "table": the ranking table (:func:`card_table`),
        "confidence": the confidence of its intervals}``.
    """
    from metaeval.report import document as doc
    from metaeval.report import figures as fig
    from metaeval.report.reader import read_spec
    from metaeval.study.saved import load_results
    from metaeval.study.store import Store

    directory = Path(directory)
    folder = Path(out) if out is not None else directory / "report"
    folder.mkdir(parents=True, exist_ok=True)
    results = load_results(directory)
    resamples = (
        load_results(directory, "resamples")
        if (directory / "results" / "resamples").is_dir()
        else None
    )
    manifest = Store(directory).read_manifest()
    spec = read_spec(directory, manifest)  # normalised: every key present
    confidence = float(spec["confidence"])
    seed = int(manifest.get("seed") or 0)
    labels = [m["label"] for m in spec["measures"]]
    values = card_values(results, resamples, confidence=confidence, seed=seed, order=labels)
    table = card_table(results, measure, values=values)
    agreement = agreement_table(results, measure, resamples, confidence=confidence, seed=seed)
    baselines = labels[1:]
    worlds = "; ".join(f"{w['id']} ({_card_world(w)})" for w in spec["worlds"])
    level = f"{confidence:.0%}"
    several = "world" in table
    caveats = _caveats(values)
    blocks = [
        doc.text(
            f"How **{measure}** ranks among {len(baselines)} baselines ({', '.join(baselines)}) "
            f"on each criterion of metaeval's battery, on {worlds}. Each value is the mean over "
            "replicates and trials, with its "
            f"{level} interval `[low, high]` for the expected value (a paired bootstrap over "
            "the topics, the trials and the replicates)"
            + ("; each world has its own row, never averaged" if several else "")
            + f". {RANKS_MEAN} Seed {manifest.get('seed')}."
        ),
        doc.text(_rests_on_text(table, confidence)),
    ]
    if caveats:
        blocks.append(
            doc.banner(
                f"Rough intervals: {caveats}. With more of them, an interval could move and a "
                "rank range narrow or widen."
            )
        )
    blocks.append(doc.table(card_display(table, measure), "card", "Rank on each criterion"))
    if len(values):
        blocks.append(
            doc.figure(
                fig.card_dots(values, measure),
                "card",
                f"Every measure on each criterion, with its {level} interval; {measure} in red, "
                "the best end to the right. Criteria of one kind (tau, power) share one axis, "
                "so a gap looks as large as it is",
            )
        )
    if len(agreement):
        shown_agreement = agreement.drop(
            columns=[c for c in agreement if c.endswith(("_low", "_high"))]
        ).assign(
            tau_b=[
                shown(*v)
                for v in zip(agreement["tau_b"], agreement["tau_b_low"], agreement["tau_b_high"])
            ],
            tau_AP=[
                shown(*v)
                for v in zip(agreement["tau_AP"], agreement["tau_AP_low"], agreement["tau_AP_high"])
            ],
        )
        blocks += [
            doc.text(
                f"Agreement with the baselines: Kendall's tau_b (and tau_AP, the baseline's "
                f"ranking taken as the truth) between {measure}'s ranking of the systems and "
                f"each baseline's, under the full judgments, with its {level} interval. Near "
                "1: it ranks systems as that baseline does (it adds little as a second "
                "opinion); low: it sees something else."
            ),
            doc.table(shown_agreement, "card_agreement", "Agreement with each baseline"),
        ]
    blocks.append(
        doc.text(
            "The full report of the card's study, with every figure and table: "
            "[index.html](index.html) ([index.md](index.md))."
        )
    )
    title = f"Report card: {measure}"
    md = doc.write_markdown(blocks, folder, title, name="card.md")
    html = doc.write_html(blocks, folder / "card.html", title)
    return {"md": md, "html": html, "table": table, "confidence": confidence}
