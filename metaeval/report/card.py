"""A report card for a measure: how it ranks among baselines on every criterion.

:func:`card_study` writes the study file of the built-in battery (robustness under stratified
sampling and under shallower pools, discriminative power, topic-subset stability,
informativeness where the measure has a max-ent expectation, agreement with the baselines) on
a simulated world or on a TREC world taken from a study file; :func:`card_table` ranks the new
measure among the baselines on each criterion from the saved results.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import tomllib

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
    study file, its paths made absolute)."""
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
    base = Path(path).resolve().parent
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    chosen = [w for w in data.get("worlds", []) if w.get("id") == wid]
    if not chosen:
        ids = [w.get("id") for w in data.get("worlds", [])]
        raise ValueError(f"{path} has no world {wid!r}; worlds: {', '.join(map(str, ids))}")
    w = dict(chosen[0])
    for key in ("qrels", "runs"):
        value = w.get(key)
        if isinstance(value, str):
            w[key] = str(base / value) if not Path(value).is_absolute() else value
        elif isinstance(value, list):
            w[key] = [str(base / v) if not Path(v).is_absolute() else v for v in value]
    return "[[worlds]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in w.items())


def card_study(
    measure: str,
    against: list[str],
    world: str = "trec_like",
    plugins: list[str] = (),
    seed: int = 2024,
) -> str:
    """The study file (TOML text) of a measure's report card."""
    from metaeval.measures import canonical_name

    names = [canonical_name(measure)] + [
        canonical_name(m) for m in against if canonical_name(m) != canonical_name(measure)
    ]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", names[0]).strip("-")[:40] or "measure"
    lines = [
        "schema = 1",
        "",
        "[study]",
        f'name = "card-{slug}"',
        f"seed = {seed}",
        f'description = "Report card of {names[0]} against {", ".join(names[1:])}."',
        f"plugins = {json.dumps([str(Path(p).resolve()) for p in plugins])}",
        "",
        _world_block(world),
        '[[degraders]]\nid = "sampled"\nmethod = "stratified"\nlevels = [50, 20, 10]\ntrials = 5\n',
        '[[degraders]]\nid = "pool"\nmethod = "pool_depth"\nlevels = [20, 10, 5]\n',
        "[measures]",
        f"names = {json.dumps(names)}",
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


def card_table(results: pd.DataFrame, measure: str) -> pd.DataFrame:
    """Rank of ``measure`` among every measure of the results, on each criterion of the
    battery (mean over worlds, replicates and trials; rank 1 is the best)."""
    rows = []
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
        means = d.groupby("measure")["value"].mean().dropna()
        if measure not in means or len(means) < 2:
            continue
        ranked = means.sort_values(ascending=not higher)
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
    return pd.DataFrame(rows)


def quickstart_summary(summary: pd.DataFrame) -> pd.DataFrame:
    """Measures as rows, a few telling numbers as columns (means over worlds and trials)."""
    picks = {
        "tau vs full, 10% judged": ("robustness", "tau_b", "full", "10", None),
        "tau vs truth, full": ("robustness", "tau_b", "truth", "full", None),
        "power, full": ("discriminative_power", "power", "", "full", None),
        "power, 10%": ("discriminative_power", "power", "", "10", None),
        "tau, 10 topics": ("stability", "tau_subset", "", "full", 10),
        "RMS (informativeness)": ("informativeness", "rms", "", "full", 1),
    }
    table = {}
    for column, (kind, stat, other, level, x) in picks.items():
        d = summary[
            (summary["kind"] == kind)
            & (summary["statistic"] == stat)
            & (summary["other"] == other)
            & (summary["level"] == level)
        ]
        if x is not None:
            d = d[np.isclose(d["x"].astype(float), float(x))]
        if len(d):
            table[column] = d.groupby("measure", sort=False)["mean"].mean()
    return pd.DataFrame(table)


__all__ = ["card_study", "card_table", "quickstart_summary", "BATTERY"]
