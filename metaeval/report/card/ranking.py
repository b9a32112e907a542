"""A card's numbers, from a study's saved results: every measure's value on each criterion
of the battery with its interval, its rank range among the measures, and its agreement with
each baseline. Pure data: :mod:`metaeval.report.card.page` shows them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metaeval.report.card.battery import BATTERY, BOUNDS, NOISE, SCALES
from metaeval.report.inference import Evidence, NoData, interval
from metaeval.report.summary import summarise
from metaeval.study.spec import DEFAULT_CONFIDENCE


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
