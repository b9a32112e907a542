"""A report card for a measure: how it ranks among baselines on every criterion.

:func:`card_study` writes the study file of the built-in battery (robustness under stratified
sampling and under shallower pools, discriminative power, topic-subset stability,
informativeness where the measure has a max-ent expectation, agreement with the baselines) on
a simulated world or on a TREC world taken from a study file; :func:`card_table` ranks the new
measure among the baselines on each criterion from the saved results.

Every value comes with its interval for the expected value (the study's paired bootstrap over
topics, trials and replicates, :mod:`metaeval.report.inference`), and a rank is a range: a
baseline is firmly ahead of the measure when the interval of their *paired* difference lies
wholly on its better side, firmly behind when wholly on the worse side, and the measure's rank
runs from 1 + (firmly ahead) to n - (firmly behind), ``1-3 of 6``. Equal estimates, or ones
apart by rounding only (a tau of 0.9999999999999999), never order two measures. A criterion
where most measures reach the statistic's bound (tau 1, power 1, RMS 0) is noted as one that
cannot tell them apart. Worlds are never averaged: a study of several has a row per world.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from metaeval.report.inference import Evidence, NoData, Sources, interval, summarise
from metaeval.study.spec import DEFAULT_CONFIDENCE, toml_value

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as a package
    import tomli as tomllib

#: (criterion, statistic, against, level, x, higher is better, short label, what it measures)
BATTERY = [
    (
        "robustness",
        "tau_b",
        "full",
        "lowest:sampled",
        None,
        True,
        "tau vs full, 10% judged",
        "tau_b with its own full ranking, 10% of the judgments (stratified)",
    ),
    (
        "robustness",
        "tau_b",
        "full",
        "lowest:pool",
        None,
        True,
        "tau vs full, depth-5 pool",
        "tau_b with its own full ranking, a depth-5 pool",
    ),
    (
        "robustness",
        "tau_b",
        "truth",
        "full",
        None,
        True,
        "tau vs truth, full",
        "tau_b with its ranking under the true judgments (simulated worlds)",
    ),
    (
        "discriminative_power",
        "power",
        "",
        "full",
        None,
        True,
        "power, full",
        "discriminative power, full judgments (paired bootstrap, alpha 0.05)",
    ),
    (
        "discriminative_power",
        "power",
        "",
        "lowest:sampled",
        None,
        True,
        "power, 10% judged",
        "discriminative power, 10% of the judgments",
    ),
    (
        "stability",
        "tau_subset",
        "",
        "full",
        10,
        True,
        "tau, 10 topics",
        "tau_b between the ranking on 10 random topics and on all topics",
    ),
    (
        "informativeness",
        "rms",
        "",
        "full",
        1,
        False,
        "RMS, grade >= 1",
        "RMS error of the max-ent precision-recall curve, grade >= 1",
    ),
    (
        "reliability",
        "erho2",
        "",
        "full",
        None,
        True,
        "E(rho^2), all topics",
        "reliability of its ranking of the systems with the world's topics (generalizability "
        "coefficient E(rho^2))",
    ),
]

#: The best value a battery statistic can take, and what reaching it means: an interval that
#: reaches it cannot tell measures apart.
BOUNDS = {
    "tau_b": (1.0, "tau 1 (the same ranking)"),
    "tau_subset": (1.0, "tau 1 (the same ranking)"),
    "power": (1.0, "power 1 (every pair of systems told apart)"),
    "rms": (0.0, "RMS 0 (the precision-recall curve exactly)"),
    "erho2": (1.0, "E(rho^2) 1 (a perfectly reliable ranking)"),
}
#: The statistics that share one axis in the card's figure (one unit, one scale).
SCALES = {
    "tau_b": "tau",
    "tau_subset": "tau",
    "power": "power",
    "rms": "rms",
    "erho2": "reliability",
}
#: A difference smaller than this is rounding (a tau of 0.9999999999999999 is 1): it never
#: orders two measures, nor keeps a value off its bound.
NOISE = 1e-9


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
    return "[[worlds]]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in values.items())


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
        '[[criteria]]\nkind = "reliability"\n',
        '[[criteria]]\nkind = "agreement"\nstatistics = ["tau_b", "tau_ap"]\n',
    ]
    return "\n".join(lines)


def _lowest(results: pd.DataFrame, degrader: str) -> str | None:
    levels = pd.to_numeric(
        results.loc[results["degrader"] == degrader, "level"], errors="coerce"
    ).dropna()
    return None if levels.empty else f"{levels.min():g}"


def _battery_rows(results: pd.DataFrame):
    """For each criterion of the battery that the results hold: its entry and its saved rows
    (every world, measure, replicate and trial). A study with two criteria of one kind gives
    the first one's rows."""
    if results.empty:
        return
    for entry in BATTERY:
        crit, stat, against, level, x = entry[:5]
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
        d = d[d["level"].astype(str) == level]
        if x is not None:
            d = d[np.isclose(d["x"].astype(float), float(x))]
        if len(d):
            yield entry, d[d["criterion"] == d["criterion"].iloc[0]]


def _resamples_of(resamples: pd.DataFrame | None, rows: pd.DataFrame) -> pd.DataFrame | None:
    """The resamples of some results rows only (their units and statistics): the bootstrap's
    lookups stay small."""
    if resamples is None or resamples.empty or "unit" not in rows or "unit" not in resamples:
        return resamples
    keep = resamples["unit"].isin(set(rows["unit"])) & resamples["statistic"].isin(
        set(rows["statistic"])
    )
    return resamples[keep]


def _rank_ranges(values: dict, higher: bool, confidence: float, rng_for) -> dict:
    """Each measure's rank range from the intervals of its paired differences with every
    other measure: ``{measure: (best rank, worst rank)}``.

    A measure is firmly ahead of another when the interval of their paired difference lies
    wholly on its better side, beyond rounding (:data:`NOISE`); a tie in the estimates, or an
    interval that cannot be drawn, orders nothing. Each pair is judged at ``confidence`` on
    its own (no correction for the number of pairs): the range is the ranks the measure can
    hold, not a test."""
    names = list(values)
    ahead = dict.fromkeys(names, 0)  # measures firmly ahead of this one
    behind = dict.fromkeys(names, 0)  # measures firmly behind it
    sign = 1.0 if higher else -1.0
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            try:
                iv = interval(values[a] - values[b], confidence, rng_for(a, b))
            except NoData:  # resampled differently: no paired difference
                continue
            if not iv.defined:
                continue
            low, high = sorted((sign * iv.low, sign * iv.high))
            if low > NOISE:
                ahead[b] += 1
                behind[a] += 1
            elif high < -NOISE:
                ahead[a] += 1
                behind[b] += 1
    n = len(names)
    return {m: (1 + ahead[m], n - behind[m]) for m in names}


def rank_text(best: int, worst: int, n: int) -> str:
    """``2 of 6``, or ``1-3 of 6`` when the intervals leave the rank open."""
    return f"{best} of {n}" if best == worst else f"{best}-{worst} of {n}"


def _reaches(row, bound: float, higher: bool) -> bool:
    """Whether a measure's interval (its value when it has none) reaches the bound."""
    edge = row["high"] if higher else row["low"]
    if not np.isfinite(edge):
        edge = row["value"]
    return bool(edge >= bound - NOISE) if higher else bool(edge <= bound + NOISE)


def _bound_notes(frame: pd.DataFrame, statistic: str, higher: bool) -> list[str]:
    """The note of each measure of one criterion and world where it sits at the statistic's
    bound: every measure, most of them (the row tells them apart little), or this one."""
    if statistic not in BOUNDS or frame.empty:
        return [""] * len(frame)
    bound, what = BOUNDS[statistic]
    word = "ceiling" if higher else "floor"
    at = [_reaches(row, bound, higher) for _, row in frame.iterrows()]
    k, n = sum(at), len(at)
    if n > 1 and k == n:
        return [
            f"at the {word}: every measure reaches {what} here; this row does not tell them apart"
        ] * n
    if n > 1 and k > n / 2:
        return [
            f"near the {word}: {k} of {n} measures reach {what}; this row tells them apart little"
        ] * n
    return [f"at the {word}: its interval reaches {what}" if a else "" for a in at]


#: The columns of :func:`card_values`.
VALUE_COLUMNS = [
    "criterion",
    "label",
    "world",
    "measure",
    "value",
    "low",
    "high",
    "rank_best",
    "rank_worst",
    "n",
    "rank",
    "higher_is_better",
    "scale",
    "note",
    "rests_on",
    "caveats",
]


def card_values(
    results: pd.DataFrame,
    resamples: pd.DataFrame | None = None,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
    order: list[str] | None = None,
) -> pd.DataFrame:
    """Every measure on each criterion of the battery, world by world, with its interval and
    its rank range.

    Parameters
    ----------
    results, resamples : DataFrame
        A study's ``results`` and ``resamples`` tables (:func:`metaeval.study.load_results`);
        without resamples, intervals rest on the trials and replicates alone.
    confidence : float
        Of every interval.
    seed : int
        The study's seed: the bootstrap draws derive from it, so a card is the same whenever
        it is drawn (and a measure's interval is the one of the study's full report).
    order : list of str, optional
        The measures' order (the study's); by default, as they first appear in the results.

    Returns
    -------
    DataFrame
        :data:`VALUE_COLUMNS`: the criterion (what it measures, and a short ``label``), the
        world, the measure, its ``value`` (the mean over replicates and trials) with the
        bounds ``low`` and ``high`` of its interval, its rank range (``rank_best`` to
        ``rank_worst`` among ``n`` measures, and as text in ``rank``; rank 1 is the best),
        whether higher is better, the ``scale`` its figure axis shares (tau, power, rms), a
        ``note`` where the value sits at the statistic's bound, and what the interval rests on
        (``rests_on``, ``caveats``: what makes it rough). Worlds are never combined: a study of
        several worlds has a row per world.
    """
    from metaeval.study.seeding import generator

    seen = list(dict.fromkeys(results["measure"])) if len(results) else []
    rank = {m: i for i, m in enumerate([*(order or []), *seen])}
    out = []
    for entry, d in _battery_rows(results):
        _, stat, _, _, _, higher, label, what = entry
        res = _resamples_of(resamples, d)
        summary = summarise(d, res, confidence=confidence, seed=seed)
        evidence = Evidence(d, res)
        for world, s in summary.groupby("world", sort=False):
            s = s[np.isfinite(s["mean"].astype(float))]
            if s.empty:
                continue
            s = s.iloc[np.argsort(s["measure"].map(rank).to_numpy(), kind="stable")]
            w = d[d["world"] == world]
            values = {m: evidence.series(w[w["measure"] == m]) for m in s["measure"]}

            def rng_for(a, b, what=what, world=world):
                return generator(seed, "verdict", {"card": what, "world": world, "pair": [a, b]})

            ranks = _rank_ranges(values, higher, confidence, rng_for)
            frame = pd.DataFrame(
                {
                    "measure": s["measure"].to_numpy(),
                    "value": s["mean"].to_numpy(dtype=float),
                    "low": s["low"].to_numpy(dtype=float),
                    "high": s["high"].to_numpy(dtype=float),
                }
            )
            notes = _bound_notes(frame, stat, higher)
            n = len(frame)
            for row, note in zip(frame.itertuples(index=False), notes):
                best, worst = ranks[row.measure]
                sources = values[row.measure].sources
                out.append(
                    {
                        "criterion": what,
                        "label": label,
                        "world": world,
                        "measure": row.measure,
                        "value": row.value,
                        "low": row.low,
                        "high": row.high,
                        "rank_best": best,
                        "rank_worst": worst,
                        "n": n,
                        "rank": rank_text(best, worst, n),
                        "higher_is_better": higher,
                        "scale": SCALES.get(stat, stat),
                        "note": note,
                        "rests_on": sources.text(),
                        "caveats": "; ".join(sources.caveats()),
                    }
                )
    return pd.DataFrame(out, columns=VALUE_COLUMNS)


#: The columns of :func:`card_table` (``world`` only when the study has several).
TABLE_COLUMNS = [
    "criterion",
    "label",
    "world",
    "value",
    "low",
    "high",
    "rank",
    "best baseline",
    "its value",
    "its low",
    "its high",
    "better is",
    "note",
    "rests on",
    "caveats",
]


def _best(frame: pd.DataFrame, higher: bool) -> pd.Series:
    """The row of the best value; estimates equal up to rounding keep the study's order."""
    key = np.round(frame["value"].to_numpy(dtype=float), 9)
    order = np.argsort(-key if higher else key, kind="stable")
    return frame.iloc[order[0]]


def card_table(
    results: pd.DataFrame,
    measure: str,
    resamples: pd.DataFrame | None = None,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
    values: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """How ``measure`` ranks among every measure of the results, on each criterion of the
    battery: its value with its interval, its rank range (rank 1 is the best; ``1-3 of 6``
    where the intervals of its paired differences leave the rank open, see
    :func:`card_values`), the best baseline with its value and interval, and a note where the
    criterion is at its bound; what the interval rests on (``rests on``) and what makes it
    rough (``caveats``).

    A criterion the measure has no value for is listed with an empty value and the reason in
    ``rank``. One row per criterion, or per criterion and world (a ``world`` column) when the
    study has several worlds. ``values``: what :func:`card_values` returned for these results,
    when the caller has it already.
    """
    if values is None:
        values = card_values(results, resamples, confidence=confidence, seed=seed)
    several = values["world"].nunique() > 1
    rows = []
    for (what, world), d in values.groupby(["criterion", "world"], sort=False):
        higher = bool(d["higher_is_better"].iloc[0])
        others = d[d["measure"] != measure]
        if measure not in set(d["measure"]) and len(others) < 2:
            continue
        best = _best(others, higher) if len(others) else None
        row = {
            "criterion": what,
            "label": d["label"].iloc[0],
            "world": world,
            "best baseline": best["measure"] if best is not None else "",
            "its value": best["value"] if best is not None else np.nan,
            "its low": best["low"] if best is not None else np.nan,
            "its high": best["high"] if best is not None else np.nan,
            "better is": "higher" if higher else "lower",
        }
        mine = d[d["measure"] == measure]
        if mine.empty:
            kind = next(e[0] for e in BATTERY if e[-1] == what)
            why = (
                "no maximum-entropy expectation"
                if kind == "informativeness"
                else "not computed for this measure"
            )
            row |= {
                "value": np.nan,
                "low": np.nan,
                "high": np.nan,
                "rank": f"n/a: {why}",
                "note": "",
                "rests on": "",
                "caveats": "",
            }
        else:
            m = mine.iloc[0]
            row |= {
                "value": m["value"],
                "low": m["low"],
                "high": m["high"],
                "rank": m["rank"],
                "note": m["note"],
                "rests on": m["rests_on"],
                "caveats": m["caveats"],
            }
        rows.append(row)
    columns = [c for c in TABLE_COLUMNS if several or c != "world"]
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)[columns]


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


def agreement_table(
    results: pd.DataFrame,
    measure: str,
    resamples: pd.DataFrame | None = None,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
) -> pd.DataFrame:
    """Kendall's tau_b and tau_AP between ``measure``'s ranking of the systems and each
    baseline's, under the full judgments, with their intervals (``tau_b_low``,
    ``tau_b_high``...); a ``world`` column when the study has several worlds (they are not
    combined)."""
    columns = ["baseline", "tau_b", "tau_b_low", "tau_b_high", "tau_AP", "tau_AP_low"]
    columns += ["tau_AP_high"]
    d = results[
        (results["kind"] == "agreement")
        & (results["level"] == "full")
        & ((results["measure"] == measure) | (results["other"] == measure))
    ]
    if d.empty:
        return pd.DataFrame(columns=columns)
    s = summarise(d, _resamples_of(resamples, d), confidence=confidence, seed=seed)
    # tau_b is symmetric: the rows with the measure first (the others, when it has none);
    # tau_AP: the rows with the baseline as the reference ranking
    forward = s[(s["statistic"] == "tau_b") & (s["measure"] == measure)]
    backward = s[(s["statistic"] == "tau_b") & (s["other"] == measure)]
    tau_b = pd.concat(
        [
            forward.assign(baseline=forward["other"]),
            backward.assign(baseline=backward["measure"]),
        ]
    ).drop_duplicates(["world", "baseline"])
    ap = s[(s["statistic"] == "tau_ap") & (s["other"] == measure)]
    tau_ap = ap.assign(baseline=ap["measure"])
    keep = ["world", "baseline", "mean", "low", "high"]
    out = pd.merge(
        tau_b[keep].rename(columns={"mean": "tau_b", "low": "tau_b_low", "high": "tau_b_high"}),
        tau_ap[keep].rename(columns={"mean": "tau_AP", "low": "tau_AP_low", "high": "tau_AP_high"}),
        on=["world", "baseline"],
        how="outer",
        sort=False,
    )
    order = {w: i for i, w in enumerate(dict.fromkeys(results["world"]))}
    out = out.assign(_w=out["world"].map(order)).sort_values(
        ["_w", "tau_b"], ascending=[True, False], kind="stable"
    )
    several = out["world"].nunique() > 1
    return out[(["world"] if several else []) + columns].reset_index(drop=True)


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
    import json as _json

    from metaeval.report import document as doc
    from metaeval.report import figures as fig
    from metaeval.study.store import load_results

    directory = Path(directory)
    folder = Path(out) if out is not None else directory / "report"
    folder.mkdir(parents=True, exist_ok=True)
    results = load_results(directory)
    resamples = (
        load_results(directory, "resamples")
        if (directory / "results" / "resamples").is_dir()
        else None
    )
    spec = tomllib.loads((directory / "study.toml").read_text(encoding="utf-8"))
    manifest = _json.loads((directory / "manifest.json").read_text())
    confidence = float(spec.get("study", {}).get("confidence", DEFAULT_CONFIDENCE))
    seed = int(manifest.get("seed") or 0)
    names = spec.get("measures", {}).get("names", [])
    labels = [n if isinstance(n, str) else n.get("label", n.get("name", "")) for n in names]
    values = card_values(results, resamples, confidence=confidence, seed=seed, order=labels)
    table = card_table(results, measure, values=values)
    agreement = agreement_table(results, measure, resamples, confidence=confidence, seed=seed)
    baselines = labels[1:]
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


#: The quickstart's columns: (kind, statistic, other, degrader, level, x). Its degraders are
#: "sampled" (stratified, % kept) and "pool" (pool depth); both have a level "10".
QUICKSTART = {
    "tau vs full, 10% judged": ("robustness", "tau_b", "full", "sampled", "10", None),
    "tau vs full, depth-5 pool": ("robustness", "tau_b", "full", "pool", "5", None),
    "tau vs truth, full": ("robustness", "tau_b", "truth", "", "full", None),
    "power, full": ("discriminative_power", "power", "", "", "full", None),
    "power, 10% judged": ("discriminative_power", "power", "", "sampled", "10", None),
    "tau, 10 topics": ("stability", "tau_subset", "", "", "full", 10),
    "RMS": ("informativeness", "rms", "", "", "full", 1),
}


def _quickstart_rows(summary: pd.DataFrame):
    for column, (kind, stat, other, degrader, level, x) in QUICKSTART.items():
        d = summary[
            (summary["kind"] == kind)
            & (summary["statistic"] == stat)
            & (summary["other"] == other)
            & (summary["degrader"] == degrader)
            & (summary["level"].astype(str) == level)
        ]
        if x is not None:
            d = d[np.isclose(d["x"].astype(float), float(x))]
        if len(d):
            yield column, d


def quickstart_summary(summary: pd.DataFrame, *, intervals: bool = False) -> pd.DataFrame:
    """Measures as rows, a few telling numbers as columns, in the study's order of measures;
    a measure a criterion does not apply to is NaN (``-`` with ``intervals``).

    ``summary`` is a study's summary (:func:`metaeval.report.summarise`). Each cell is the
    mean over replicates and trials, or with ``intervals`` the text ``mean [low, high]``
    (its interval). A study of several worlds has a row per world and measure (the index
    ``world, measure``): intervals of different worlds are never averaged.
    """
    order = list(dict.fromkeys(summary["measure"])) if len(summary) else []
    worlds = list(dict.fromkeys(summary["world"])) if len(summary) else []
    index = ["world", "measure"] if len(worlds) > 1 else ["measure"]
    table = {}
    for column, d in _quickstart_rows(summary):
        d = d.drop_duplicates(["world", "measure"]).set_index(index)
        table[column] = (
            pd.Series([shown(*v) for v in zip(d["mean"], d["low"], d["high"])], index=d.index)
            if intervals
            else d["mean"].astype(float)
        )
    frame = pd.DataFrame(table)
    if frame.empty:
        return frame
    rank = {m: i for i, m in enumerate(order)}
    world_rank = {w: i for i, w in enumerate(worlds)}
    keys = frame.index.to_frame(index=False)
    key = keys["measure"].map(rank) + (
        keys["world"].map(world_rank) * len(rank) if "world" in keys else 0
    )
    frame = frame.iloc[np.argsort(key.to_numpy(), kind="stable")]
    return frame.fillna("-") if intervals else frame


def quickstart_basis(summary: pd.DataFrame, confidence: float = DEFAULT_CONFIDENCE) -> str:
    """What the intervals of :func:`quickstart_summary` rest on: ``95% intervals of the
    expected value over 30 topics (200 paired resamples), 3 trials, 2 replicates``, and what
    makes them rough."""
    parts = [d for _, d in _quickstart_rows(summary)]
    if not parts:
        return ""
    d = pd.concat(parts)
    topics = tuple(sorted({int(t) for t in d["topics"].dropna()}))
    sources = Sources(
        topics, int(d["resamples"].max()), int(d["trials"].max()), int(d["replicates"].max())
    )
    text = f"[low, high]: {confidence:.0%} intervals of the expected value over {sources.text()}"
    caveats = sources.caveats()
    return text + (f" (rough: {'; '.join(caveats)})" if caveats else "")


__all__ = [
    "card_study",
    "card_table",
    "card_values",
    "card_display",
    "card_lines",
    "agreement_table",
    "write_card",
    "quickstart_summary",
    "quickstart_basis",
    "rank_text",
    "shown",
    "BATTERY",
    "BOUNDS",
    "NOISE",
]
