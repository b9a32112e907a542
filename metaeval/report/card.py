"""A report card for a measure: how it ranks among baselines on every criterion.

:func:`card_study` writes the study file of the built-in battery (robustness under stratified
sampling and under shallower pools, discriminative power, topic-subset stability,
informativeness where the measure has a max-ent expectation, agreement with the baselines) on
a simulated world or on a TREC world taken from a study file; :func:`card_table` ranks the new
measure among the baselines on each criterion from the saved results.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as a package
    import tomli as tomllib

#: (criterion, statistic, against, level, x, higher is better, what it measures)
BATTERY = [
    (
        "robustness",
        "tau_b",
        "full",
        "lowest:sampled",
        None,
        True,
        "tau_b with its own full ranking, 10% of the judgments (stratified)",
    ),
    (
        "robustness",
        "tau_b",
        "full",
        "lowest:pool",
        None,
        True,
        "tau_b with its own full ranking, a depth-5 pool",
    ),
    (
        "robustness",
        "tau_b",
        "truth",
        "full",
        None,
        True,
        "tau_b with its ranking under the true judgments (simulated worlds)",
    ),
    (
        "discriminative_power",
        "power",
        "",
        "full",
        None,
        True,
        "discriminative power, full judgments (paired bootstrap, alpha 0.05)",
    ),
    (
        "discriminative_power",
        "power",
        "",
        "lowest:sampled",
        None,
        True,
        "discriminative power, 10% of the judgments",
    ),
    (
        "stability",
        "tau_subset",
        "",
        "full",
        10,
        True,
        "tau_b between the ranking on 10 random topics and on all topics",
    ),
    (
        "informativeness",
        "rms",
        "",
        "full",
        1,
        False,
        "RMS error of the max-ent precision-recall curve, grade >= 1",
    ),
]


def _world_block(world: str) -> str:
    """A TOML [[worlds]] block: a simulator preset, or ``STUDY.toml:WORLD_ID`` (a world of a
    study file, as :func:`metaeval.study.load_spec` reads it: its paths absolute)."""
    from metaeval.study import load_spec
    from metaeval.study.spec import canonical_json
    from simulators.worlds import PRESETS

    if world in PRESETS:
        return (
            f'[[worlds]]\nid = "{world}"\nkind = "simulator"\npreset = "{world}"\n'
            "n_topics = 50\nn_systems = 30\nreplicates = 2\n"
        )
    path, _, wid = world.rpartition(":")
    if not path or not Path(path).is_file():
        raise ValueError(
            f"--world must be a simulator preset ({', '.join(sorted(PRESETS))}) "
            f"or STUDY.toml:WORLD_ID, got {world!r}"
        )
    spec = load_spec(path)
    ids = [w.id for w in spec.worlds]
    if wid not in ids:
        raise ValueError(f"{path} has no world {wid!r}; worlds: {', '.join(ids)}")
    w = spec.world(wid)
    # its kind, and every key that is not at its default
    keys = {"kind": w.kind} | {
        f.name: getattr(w, f.name)
        for f in dataclasses.fields(w)
        if f.init and getattr(w, f.name) != f.default
    }
    values = json.loads(canonical_json(keys))
    return "[[worlds]]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in values.items())


def _toml(value) -> str:
    """A TOML value: strings, numbers and booleans as JSON writes them, arrays, inline
    tables."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


def card_study(
    measure: str,
    against: list[str],
    world: str = "trec_like",
    plugins: list[str] = (),
    seed: int = 2024,
) -> str:
    """The study file (TOML text) of a measure's report card."""
    from metaeval.measures import canonical_name

    # measures keep the spelling they were given as their label (RBP(p=0.8) stays that,
    # where its canonical name, RBP, would hide the default p)
    given = [measure] + [m for m in against if canonical_name(m) != canonical_name(measure)]
    given = list({canonical_name(m): m.strip() for m in reversed(given)}.values())[::-1]
    names = [canonical_name(m) for m in given]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", given[0]).strip("-")[:40] or "measure"
    lines = [
        "schema = 1",
        "",
        "[study]",
        f'name = "card-{slug}"',
        f"seed = {seed}",
        f'description = "Report card of {given[0]} against {", ".join(given[1:])}."',
        f"plugins = {json.dumps([str(Path(p).resolve()) for p in plugins])}",
        "",
        _world_block(world),
        '[[degraders]]\nid = "sampled"\nmethod = "stratified"\nlevels = [50, 20, 10]\ntrials = 5\n',
        '[[degraders]]\nid = "pool"\nmethod = "pool_depth"\nlevels = [20, 10, 5]\n',
        "[measures]",
        "names = ["
        + ", ".join(
            f"{{ name = {json.dumps(n)}, label = {json.dumps(g)} }}" for n, g in zip(names, given)
        )
        + "]",
        "",
        '[[criteria]]\nkind = "robustness"\nagainst = ["full", "truth"]\n'
        'statistics = ["tau_b", "tau_ap"]\n',
        '[[criteria]]\nkind = "discriminative_power"\nB = 500\nlevels = ["full", "10"]\n',
        '[[criteria]]\nkind = "stability"\nsizes = [5, 10, 20]\nrepeats = 30\n',
        '[[criteria]]\nkind = "informativeness"\n',
        '[[criteria]]\nkind = "agreement"\nstatistics = ["tau_b", "tau_ap"]\n',
    ]
    return "\n".join(lines)


def _lowest(results: pd.DataFrame, degrader: str) -> str | None:
    levels = pd.to_numeric(
        results.loc[results["degrader"] == degrader, "level"], errors="coerce"
    ).dropna()
    return None if levels.empty else f"{levels.min():g}"


def _battery_means(results: pd.DataFrame):
    """For each criterion of the battery that the results hold: its kind, its name, whether
    higher is better, and every measure's mean value (over worlds, replicates and trials)."""
    for crit, stat, against, level, x, higher, what in BATTERY:
        d = results[
            (results["kind"] == crit)
            & (results["statistic"] == stat)
            & (results["other"] == against)
        ]
        if level.startswith("lowest:"):
            degrader = level.split(":", 1)[1]
            level = _lowest(results, degrader)
            d = d[d["degrader"] == degrader]
        if level is None:
            continue
        d = d[d["level"] == level]
        if x is not None:
            d = d[np.isclose(d["x"].astype(float), float(x))]
        yield crit, what, higher, d.groupby("measure", sort=False)["value"].mean().dropna()


def card_table(results: pd.DataFrame, measure: str) -> pd.DataFrame:
    """Rank of ``measure`` among every measure of the results, on each criterion of the
    battery (mean over worlds, replicates and trials; rank 1 is the best). A criterion the
    measure has no value for is listed with an empty rank and the reason."""
    rows = []
    for crit, what, higher, means in _battery_means(results):
        if len(means) < 2 and measure not in means:
            continue
        if measure not in means:
            why = (
                "no maximum-entropy expectation"
                if crit == "informativeness"
                else "not computed for this measure"
            )
            rows.append(
                {
                    "criterion": what,
                    "value": np.nan,
                    "rank": f"n/a: {why}",
                    "best baseline": means.idxmax() if higher else means.idxmin(),
                    "its value": means.max() if higher else means.min(),
                    "better is": "higher" if higher else "lower",
                }
            )
            continue
        ranked = means.sort_values(ascending=not higher, kind="stable")
        rank = int(list(ranked.index).index(measure)) + 1
        best_other = ranked.drop(measure).index[0]
        rows.append(
            {
                "criterion": what,
                "value": means[measure],
                "rank": f"{rank} of {len(means)}",
                "best baseline": best_other,
                "its value": means[best_other],
                "better is": "higher" if higher else "lower",
            }
        )
    return pd.DataFrame(
        rows, columns=["criterion", "value", "rank", "best baseline", "its value", "better is"]
    )


def card_values(results: pd.DataFrame) -> pd.DataFrame:
    """Every measure's value on each criterion of the battery (mean over worlds, replicates
    and trials): ``criterion, measure, value, higher_is_better`` (for the card's figure)."""
    rows = [
        {"criterion": what, "measure": m, "value": v, "higher_is_better": higher}
        for _, what, higher, means in _battery_means(results)
        for m, v in means.items()
    ]
    return pd.DataFrame(rows, columns=["criterion", "measure", "value", "higher_is_better"])


def agreement_table(results: pd.DataFrame, measure: str) -> pd.DataFrame:
    """Kendall's tau_b and tau_AP between ``measure``'s ranking of the systems and each
    baseline's, under the full judgments (mean over worlds and replicates)."""
    d = results[
        (results["kind"] == "agreement")
        & (results["level"] == "full")
        & ((results["measure"] == measure) | (results["other"] == measure))
    ]
    if d.empty:
        return pd.DataFrame(columns=["baseline", "tau_b", "tau_AP"])
    # tau_b is symmetric; tau_AP rows with the baseline as the reference ranking
    baseline = np.where(d["measure"] == measure, d["other"], d["measure"])
    d = d.assign(baseline=baseline)
    tau_b = d[d["statistic"] == "tau_b"].groupby("baseline", sort=False)["value"].mean()
    ap = d[(d["statistic"] == "tau_ap") & (d["other"] == measure)]
    tau_ap = ap.groupby("baseline", sort=False)["value"].mean()
    out = pd.DataFrame({"tau_b": tau_b, "tau_AP": tau_ap}).rename_axis("baseline")
    return out.sort_values("tau_b", ascending=False).reset_index()


def write_card(directory: str | Path, measure: str, out: str | Path | None = None) -> dict:
    """Write the one-page report card of ``measure`` from a finished card study: ``card.md``
    (with its figure and tables) and a self-contained ``card.html``, beside the study's full
    report (``<directory>/report`` by default).

    Returns
    -------
    dict
        ``{"md": path, "html": path, "table": the ranking table}``.
    """
    import json as _json

    from metaeval.report import document as doc
    from metaeval.report import figures as fig
    from metaeval.study.store import load_results

    directory = Path(directory)
    folder = Path(out) if out is not None else directory / "report"
    folder.mkdir(parents=True, exist_ok=True)
    results = load_results(directory)
    table = card_table(results, measure)
    agreement = agreement_table(results, measure)
    values = card_values(results)
    spec = tomllib.loads((directory / "study.toml").read_text(encoding="utf-8"))
    manifest = _json.loads((directory / "manifest.json").read_text())
    names = spec.get("measures", {}).get("names", [])
    baselines = [n if isinstance(n, str) else n.get("label", n.get("name", "")) for n in names][1:]
    worlds = "; ".join(
        f"{w.get('id')} ("
        + (
            f"simulated {w.get('preset')}: {w.get('n_topics')} topics, {w.get('n_systems')} "
            f"systems, {w.get('replicates', 1)} replicates"
            if w.get("kind") == "simulator"
            else f"TREC files {Path(str(w.get('qrels'))).name}"
        )
        + ")"
        for w in spec.get("worlds", [])
    )
    blocks = [
        doc.text(
            f"How **{measure}** ranks among {len(baselines)} baselines ({', '.join(baselines)}) "
            f"on each criterion of metaeval's battery, on {worlds}. Rank 1 is the best; "
            "values are means over worlds, replicates and trials. Seed "
            f"{manifest.get('seed')}."
        ),
        doc.table(table, "card", "Rank on each criterion"),
    ]
    if len(values):
        blocks.append(
            doc.figure(
                fig.card_dots(values, measure),
                "card",
                f"Every measure on each criterion; {measure} in red, the best end to the right",
            )
        )
    if len(agreement):
        blocks += [
            doc.text(
                f"Agreement with the baselines: Kendall's tau_b (and tau_AP, the baseline's "
                f"ranking taken as the truth) between {measure}'s ranking of the systems and "
                "each baseline's, under the full judgments. Near 1: it ranks systems as that "
                "baseline does (it adds little as a second opinion); low: it sees something "
                "else."
            ),
            doc.table(agreement, "card_agreement", "Agreement with each baseline"),
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
    return {"md": md, "html": html, "table": table}


def quickstart_summary(summary: pd.DataFrame) -> pd.DataFrame:
    """Measures as rows, a few telling numbers as columns (means over worlds and trials), in
    the study's order of measures; a measure a criterion does not apply to is NaN."""
    # (kind, statistic, other, degrader, level, x): the quickstart's degraders are "sampled"
    # (stratified, % kept) and "pool" (pool depth); both have a level "10"
    picks = {
        "tau vs full, 10% judged": ("robustness", "tau_b", "full", "sampled", "10", None),
        "tau vs full, depth-5 pool": ("robustness", "tau_b", "full", "pool", "5", None),
        "tau vs truth, full": ("robustness", "tau_b", "truth", "", "full", None),
        "power, full": ("discriminative_power", "power", "", "", "full", None),
        "power, 10% judged": ("discriminative_power", "power", "", "sampled", "10", None),
        "tau, 10 topics": ("stability", "tau_subset", "", "", "full", 10),
        "RMS": ("informativeness", "rms", "", "", "full", 1),
    }
    order = list(dict.fromkeys(summary["measure"])) if len(summary) else []
    table = {}
    for column, (kind, stat, other, degrader, level, x) in picks.items():
        d = summary[
            (summary["kind"] == kind)
            & (summary["statistic"] == stat)
            & (summary["other"] == other)
            & (summary["degrader"] == degrader)
            & (summary["level"] == level)
        ]
        if x is not None:
            d = d[np.isclose(d["x"].astype(float), float(x))]
        if len(d):
            table[column] = d.groupby("measure", sort=False)["mean"].mean()
    frame = pd.DataFrame(table)
    return frame.reindex([m for m in order if m in frame.index])


__all__ = [
    "card_study",
    "card_table",
    "card_values",
    "agreement_table",
    "write_card",
    "quickstart_summary",
    "BATTERY",
]
