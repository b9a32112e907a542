"""Verdicts on published claims, from a study's saved results.

A claim in a study file names what it says and how to check it::

    [[claims]]
    id = "SK3"
    text = "With 10% of the judgments, AP' keeps more discriminative power than AP"
    source = "Sakai & Kando 2008, Table 4"
    check = { kind = "order", criterion = "discriminative_power", statistic = "power",
              level = "10", greater = ["AP'"], than = ["AP"] }

Check kinds (each is evaluated on every world, over its trials and replicates):

``order``
    ``greater`` and ``than`` (a measure or a group) on ``statistic`` of ``criterion`` at
    ``level`` (optionally ``against``: the reference of a robustness statistic, ``degrader``,
    ``x``: e.g. a topic-set size). Each pair is compared trial by trial; ``mode = "mean"``
    compares the groups' means instead of every pair.
``threshold``
    ``measures`` above ``above`` (or below ``below``).
``trend``
    ``measures`` ``direction = "falls" | "rises" | "flat"`` from level ``from`` to level
    ``to`` by more than ``tolerance`` (within it, for flat). Without ``from`` the statistic is
    itself a change (as ``mean_drift``).
``analytic``
    computed on constructed lists while the study runs (see :mod:`metaeval.study.analytic`):
    the saved outcome is read here.

Verdicts: **holds** when the claimed direction is seen and the 95% interval (2.5-97.5
percentiles over trials and replicates) excludes the opposite; **does not hold** when the
opposite is seen with the same confidence; **inconclusive** otherwise. A claim about a group
holds when every pair holds, does not hold when any pair does not hold.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

HOLDS, FAILS, UNSURE = "holds", "does not hold", "inconclusive"
COLUMNS = ["claim", "world", "verdict", "numbers", "text", "source"]


def _interval(values: np.ndarray) -> tuple[float, float, float]:
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return np.nan, np.nan, np.nan
    return float(v.mean()), float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))


def _judge_positive(lo: float, hi: float, tol: float = 0.0) -> str:
    """Verdict for "the quantity is > tol": holds / does not hold / inconclusive."""
    if np.isnan(lo):
        return UNSURE
    if lo > tol:
        return HOLDS
    if hi < tol:
        return FAILS
    return UNSURE


def _combine(verdicts: Sequence[str]) -> str:
    if not verdicts:
        return UNSURE
    if FAILS in verdicts:
        return FAILS
    return HOLDS if all(v == HOLDS for v in verdicts) else UNSURE


def _as_list(v) -> list:
    return [v] if isinstance(v, str) else list(v or [])


def _select(results: pd.DataFrame, check: dict, world: str, level) -> pd.DataFrame:
    d = results[
        (results["world"] == world)
        & (results["criterion"] == check["criterion"])
        & (results["statistic"] == check["statistic"])
    ]
    if level is not None:
        d = d[d["level"] == str(level)]
        if str(level) != "full" and "degrader" in check:
            d = d[d["degrader"] == check["degrader"]]
    if "against" in check:
        d = d[d["other"] == check["against"]]
    if "x" in check:
        d = d[np.isclose(d["x"].astype(float), float(check["x"]))]
    return d


def _series(d: pd.DataFrame, measure: str) -> pd.Series:
    """One value per (replicate, trial) of one measure."""
    m = d[d["measure"] == measure]
    return m.groupby(["replicate", "trial"])["value"].mean()


def _order(results, check, world) -> tuple[str, str]:
    d = _select(results, check, world, check.get("level", "full"))
    # "less = A, than = B" is "greater = B, than = A" (lower is better, e.g. an RMS error)
    if "less" in check:
        greater, than = _as_list(check["than"]), _as_list(check["less"])
    else:
        greater, than = _as_list(check["greater"]), _as_list(check["than"])
    tol = float(check.get("tolerance", 0.0))
    if check.get("mode", "each") == "mean":
        a = pd.concat([_series(d, m) for m in greater], axis=1).mean(axis=1)
        b = pd.concat([_series(d, m) for m in than], axis=1).mean(axis=1)
        pairs = [(" + ".join(greater), " + ".join(than), a, b)]
    else:
        pairs = [(g, t, _series(d, g), _series(d, t)) for g in greater for t in than]
    verdicts, shown = [], []
    for g, t, a, b in pairs:
        diff = (a - b).dropna()
        mean, lo, hi = _interval(diff.to_numpy())
        verdict = _judge_positive(lo, hi, tol)
        verdicts.append(verdict)
        shown.append(
            (
                lo,
                f"{g} {_num(a.mean())} vs {t} {_num(b.mean())}: difference "
                f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}] (n = {len(diff)})",
            )
        )
    if not shown:
        return UNSURE, "no saved values"
    verdict = _combine(verdicts)
    held = verdicts.count(HOLDS)
    worst = min(shown)[1] if len(shown) > 1 else shown[0][1]
    prefix = f"{held}/{len(verdicts)} pairs hold; closest: " if len(shown) > 1 else ""
    return verdict, prefix + worst


def _threshold(results, check, world) -> tuple[str, str]:
    d = _select(results, check, world, check.get("level", "full"))
    verdicts, shown = [], []
    for m in _as_list(check["measures"]):
        mean, lo, hi = _interval(_series(d, m).to_numpy())
        if "above" in check:
            t = float(check["above"])
            v = _judge_positive(lo - t, hi - t)
        else:
            t = float(check["below"])
            v = _judge_positive(t - hi, t - lo)
        verdicts.append(v)
        shown.append(f"{m} {_num(mean)} [{_num(lo)}, {_num(hi)}]")
    side = f"above {check['above']}" if "above" in check else f"below {check['below']}"
    return _combine(verdicts), f"{'; '.join(shown)} ({side})"


def _trend(results, check, world) -> tuple[str, str]:
    tol = float(check.get("tolerance", 0.0))
    direction = check.get("direction", "falls")
    to = _select(results, check, world, check["to"])
    start = _select(results, check, world, check["from"]) if "from" in check else None
    verdicts, shown = [], []
    for m in _as_list(check["measures"]):
        end = _series(to, m)
        if start is not None:
            first = _series(start, m)
            # the full judgments have one value per replicate: pair them with every trial
            base = first.groupby(level="replicate").mean()
            change = end - base.reindex(end.index.get_level_values("replicate")).to_numpy()
        else:
            change = end
        mean, lo, hi = _interval(change.to_numpy())
        if direction == "falls":
            v = _judge_positive(-hi - tol, -lo - tol)
        elif direction == "rises":
            v = _judge_positive(lo - tol, hi - tol)
        else:  # flat: the whole interval within +-tol holds; entirely outside does not
            if np.isnan(lo):
                v = UNSURE
            elif -tol <= lo and hi <= tol:
                v = HOLDS
            elif lo > tol or hi < -tol:
                v = FAILS
            else:
                v = UNSURE
        verdicts.append(v)
        shown.append(f"{m} {mean:+.3f} [{lo:+.3f}, {hi:+.3f}]")
    return _combine(verdicts), f"change: {'; '.join(shown)} ({direction}, tolerance {tol:g})"


def _analytic(table: pd.DataFrame | None, claim_id: str) -> tuple[str, str]:
    if table is None or table.empty:
        return UNSURE, "not computed yet"
    rows = table[table["claim"] == claim_id]
    if rows.empty:
        return UNSURE, "not computed yet"
    ok = rows["passed"].astype(bool)
    shown = "; ".join(
        f"{r.check}: {_num(r.value)} (expected {r.expected})" for r in rows.itertuples(index=False)
    )
    return (HOLDS if ok.all() else FAILS), shown


def _num(v: float) -> str:
    return "nan" if v is None or np.isnan(v) else f"{v:.3f}"


CHECKS = {"order": _order, "threshold": _threshold, "trend": _trend}


def verdicts(
    claims: Sequence[dict], results: pd.DataFrame, analytic: pd.DataFrame | None = None
) -> pd.DataFrame:
    """One row per claim and world: ``claim, world, verdict, numbers, text, source``.

    ``claims`` are the study file's ``[[claims]]`` tables; ``results`` its saved results;
    ``analytic`` the saved outcomes of analytic checks (the ``claims`` table).
    """
    rows = []
    worlds = list(dict.fromkeys(results["world"])) if len(results) else []
    for claim in claims:
        check = claim.get("check", {})
        kind = check.get("kind")
        base = {
            "claim": claim.get("id", ""),
            "text": claim.get("text", ""),
            "source": claim.get("source", ""),
        }
        if kind == "analytic":
            verdict, numbers = _analytic(analytic, base["claim"])
            rows.append({**base, "world": "(analytic)", "verdict": verdict, "numbers": numbers})
            continue
        wanted = _as_list(check.get("worlds")) or worlds
        for world in wanted:
            if kind not in CHECKS:
                verdict, numbers = UNSURE, f"unknown check kind {kind!r}"
            elif len(results) == 0:
                verdict, numbers = UNSURE, "no saved results"
            else:
                verdict, numbers = CHECKS[kind](results, check, world)
            rows.append({**base, "world": world, "verdict": verdict, "numbers": numbers})
    return pd.DataFrame(rows, columns=COLUMNS)


__all__ = ["verdicts", "HOLDS", "FAILS", "UNSURE", "CHECKS"]
