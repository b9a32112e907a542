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
    ``greater`` and ``than`` (a measure or a group; or ``less`` and ``than``) on ``statistic``
    of ``criterion`` at ``level`` (default ``"full"``; ``levels = [...]``: at every one of
    them). Each pair is compared trial by trial; ``mode = "mean"`` compares the groups' means
    instead of every pair; ``tolerance``: the difference must exceed it. ``like`` and
    ``than`` with ``within = w``: the measures behave alike (their difference stays within
    +-w; outside it entirely: does not hold).
``threshold``
    ``measures`` above ``above`` (or below ``below``).
``trend``
    ``measures`` ``direction = "falls" | "rises" | "flat"`` from level ``from`` to level
    ``to`` by more than ``tolerance`` (within it, for flat). Without ``from`` the statistic is
    itself a change (as ``mean_drift``).
``analytic``
    computed on constructed lists while the study runs (see :mod:`metaeval.study.analytic`):
    the saved outcome is read here.

What is compared can be narrowed or transformed, in every kind but ``analytic``:

``against``
    The other side of a pairwise statistic: the reference ranking of a robustness statistic
    (``"full"``, ``"truth"``), or the other measure of an agreement; a list checks every one
    (``against_mode = "mean"``: the statistic averaged over the list instead, a measure's
    own entry left out: "the measure least like the others").
``degrader``, ``x``
    The degrader of ``level`` (needed when several have it); ``x``: the topic-set size of a
    stability statistic, the relevance threshold of an informativeness one (a list: the
    statistic averaged over them, e.g. the mean RMS error over two thresholds).
``absolute``
    Compare sizes: the absolute value of the statistic (a drift of -0.2 is larger than one
    of +0.05).
``per``
    Divide by another statistic of the same cell (``false_alarms`` per ``n_significant``).
``relative_to``
    Divide by the same statistic at another level (``power`` at 10% relative to ``"full"``:
    the share of its discriminative power a measure keeps).
``change_from``
    Subtract the same statistic of another criterion (tau with AP on a topic subset minus tau
    with AP on all topics: how far the subset moves it).

Verdicts: **holds** when the claimed direction is seen and the 95% interval (2.5-97.5
percentiles over trials and replicates) excludes the opposite; **does not hold** when the
opposite is seen with the same confidence; **inconclusive** otherwise. A real collection under
its full judgments has one value (nothing random to repeat): its verdict is that value's.
A claim about a group holds when every pair holds, and does not hold when any pair does not.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd

HOLDS, FAILS, UNSURE = "holds", "does not hold", "inconclusive"
COLUMNS = ["claim", "world", "verdict", "numbers", "text", "source"]
FULL = "full"
_KEYS = ["replicate", "trial"]


class _NoData(LookupError):
    """What a check needs is not in the saved results (the message says what)."""


# ------------------------------------------------------------------------------ numbers
def _interval(values) -> tuple[float, float, float, int]:
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return np.nan, np.nan, np.nan, 0
    return float(v.mean()), float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5)), v.size


def _num(v: float, signed: bool = False) -> str:
    if v is None or np.isnan(v):
        return "nan"
    return f"{v:+.3f}" if signed else f"{v:.3f}"


def _spread(mean: float, lo: float, hi: float, n: int, signed: bool = True) -> str:
    """``+0.178 [+0.067, +0.276], n = 30``, or ``+0.178 (one value)``."""
    if n <= 1:
        return f"{_num(mean, signed)} (one value)"
    return f"{_num(mean, signed)} [{_num(lo, signed)}, {_num(hi, signed)}], n = {n}"


def _judge_positive(lo: float, hi: float, tol: float = 0.0) -> str:
    """Verdict for "the quantity is > tol": holds / does not hold / inconclusive."""
    if np.isnan(lo):
        return UNSURE
    if lo > tol:
        return HOLDS
    if hi < tol:
        return FAILS
    return UNSURE


def _within(lo: float, hi: float, tol: float) -> str:
    """Verdict for "the quantity is within +-tol": the whole interval inside holds, wholly
    outside does not hold."""
    if np.isnan(lo):
        return UNSURE
    if -tol <= lo and hi <= tol:
        return HOLDS
    if lo > tol or hi < -tol:
        return FAILS
    return UNSURE


def _combine(verdicts: Sequence[str]) -> str:
    if not verdicts:
        return UNSURE
    if FAILS in verdicts:
        return FAILS
    return HOLDS if all(v == HOLDS for v in verdicts) else UNSURE


def _as_list(v) -> list:
    if v is None:
        return []
    return [v] if isinstance(v, (str, int, float)) else list(v)


# ------------------------------------------------------------------------------ values
class _Data:
    """The saved rows a claim reads."""

    def __init__(self, results: pd.DataFrame):
        self.results = results

    def rows(self, check: dict, world: str, level: str, criterion: str, against) -> pd.DataFrame:
        r = self.results
        d = r[
            (r["world"] == world)
            & (r["criterion"] == criterion)
            & (r["statistic"] == check["statistic"])
        ]
        return self._narrow(d, check, level, against)

    def _narrow(self, d: pd.DataFrame, check: dict, level: str, against) -> pd.DataFrame:
        d = d[d["level"].astype(str) == str(level)]
        if str(level) != FULL:
            if "degrader" in check:
                d = d[d["degrader"] == check["degrader"]]
            elif d["degrader"].nunique() > 1:
                raise _NoData(
                    f"several degraders have level {level} "
                    f"({', '.join(sorted(d['degrader'].unique()))}): name one with degrader"
                )
        if against is not None and "other" in d.columns:
            d = d[d["other"] == against]
        if "x" in check and "x" in d.columns:
            xs = np.asarray([float(x) for x in _as_list(check["x"])])
            d = d[np.isclose(d["x"].astype(float).to_numpy()[:, None], xs).any(axis=1)]
        return d

    def series(
        self,
        check: dict,
        world: str,
        measure: str,
        level: str,
        against=None,
        criterion: str | None = None,
        statistic: str | None = None,
    ) -> pd.Series:
        """One value per (replicate, trial) of one measure (averaged over the listed ``x``)."""
        criterion = criterion or check["criterion"]
        check = {**check, "statistic": statistic or check["statistic"]}
        d = self.rows(check, world, level, criterion, against)
        return d[d["measure"] == measure].groupby(_KEYS)["value"].mean()

    def values(self, check: dict, world: str, measure: str, level: str, against) -> pd.Series:
        """The compared quantity of one measure, with ``per``, ``relative_to`` and
        ``change_from`` applied; ``against`` a tuple: averaged over those references (the
        measure itself left out)."""
        if isinstance(against, tuple):
            refs = [a for a in against if a != measure]
            parts = [self.values(check, world, measure, level, a) for a in refs]
            return pd.concat(parts, axis=1).mean(axis=1).dropna()
        v = self.series(check, world, measure, level, against)
        if v.empty:
            raise _NoData(
                f"no saved {check['statistic']} of {measure} at level {level}"
                + (f" against {against}" if against is not None else "")
            )
        if "per" in check:
            v = v / self.series(check, world, measure, level, against, statistic=check["per"])
        if "relative_to" in check:
            base = self.series(check, world, measure, check["relative_to"], against)
            if "per" in check:
                base = base / self.series(
                    check, world, measure, check["relative_to"], against, statistic=check["per"]
                )
            v = v / _broadcast(base, v)
        if "change_from" in check:
            base = self.series(
                check, world, measure, level, against, criterion=check["change_from"]
            )
            v = v - _broadcast(base, v)
        if check.get("absolute"):
            v = v.abs()
        return v.replace([np.inf, -np.inf], np.nan).dropna()


def _broadcast(base: pd.Series, like: pd.Series) -> np.ndarray:
    """``base`` aligned with ``like``: by the same keys when they match, else (the full
    judgments: one value per replicate) by replicate."""
    if base.index.equals(like.index) or (
        base.index.nlevels == like.index.nlevels and like.index.isin(base.index).all()
    ):
        return base.reindex(like.index).to_numpy()
    per_replicate = base.groupby(level="replicate").mean()
    return per_replicate.reindex(like.index.get_level_values("replicate")).to_numpy()


def _contexts(check: dict) -> list[tuple[str, object]]:
    """(level, against) pairs the claim must hold at; with ``against_mode = "mean"`` the
    references are one context (the statistic averaged over them)."""
    levels = [str(lv) for lv in _as_list(check.get("levels"))] or [str(check.get("level", FULL))]
    against = _as_list(check.get("against")) or [None]
    if check.get("against_mode") == "mean":
        against = [tuple(against)]
    return list(itertools.product(levels, against))


def _where(level: str, against, many_levels: bool, many_against: bool) -> str:
    parts = []
    if many_levels:
        parts.append("full judgments" if level == FULL else f"level {level}")
    if isinstance(against, tuple):
        parts.append("mean over the other measures")
    elif many_against and against is not None:
        parts.append(f"against {against}")
    return f" ({', '.join(parts)})" if parts else ""


# ------------------------------------------------------------------------------ checks
def _order(data: _Data, check: dict, world: str) -> tuple[str, str]:
    # "less = A, than = B" is "greater = B, than = A" (lower is better, e.g. an RMS error);
    # "like = A, than = B, within = w": A and B no more than w apart
    if "less" in check:
        greater, than, word = _as_list(check["than"]), _as_list(check["less"]), "below"
    elif "like" in check:
        greater, than, word = _as_list(check["like"]), _as_list(check["than"]), "like"
    else:
        greater, than, word = _as_list(check["greater"]), _as_list(check["than"]), "above"
    tol = float(check.get("tolerance", 0.0))
    within = float(check.get("within", 0.0))
    contexts = _contexts(check)
    many_l = len({lv for lv, _ in contexts}) > 1
    many_a = len({a for _, a in contexts}) > 1
    outcomes = []  # (verdict, lo, text)
    for level, against in contexts:
        where = _where(level, against, many_l, many_a)

        def val(m, level=level, against=against):
            return data.values(check, world, m, level, against)

        # a measure is not compared with itself, nor against itself as the reference
        g_side = [m for m in greater if m != against]
        t_side = [m for m in than if m != against]
        if not g_side or not t_side:
            continue
        if check.get("mode", "each") == "mean":
            a = pd.concat([val(m) for m in g_side], axis=1).mean(axis=1)
            b = pd.concat([val(m) for m in t_side], axis=1).mean(axis=1)
            pairs = [(" + ".join(g_side), " + ".join(t_side), a, b)]
        else:
            pairs = [(g, t, val(g), val(t)) for g in g_side for t in t_side if g != t]
        for g, t, a, b in pairs:
            diff = (a - b).dropna()
            mean, lo, hi, n = _interval(diff.to_numpy())
            if word == "like":
                verdict = _within(lo, hi, within)
                text = (
                    f"{g} {_num(a.mean())} vs {t} {_num(b.mean())}{where}: difference "
                    + _spread(mean, lo, hi, n)
                    + f", claimed within {within:g}"
                )
                outcomes.append((verdict, within - max(abs(lo), abs(hi)), text))
                continue
            verdict = _judge_positive(lo, hi, tol)
            # say it in the claim's words: "A above B" ("B below A" for a less-than claim)
            first, second, x, y, sign = (
                (g, t, a.mean(), b.mean(), 1) if word == "above" else (t, g, b.mean(), a.mean(), -1)
            )
            changed = "change_from" in check
            text = (
                f"{first} {_num(x, changed)} vs {second} {_num(y, changed)}{where}: difference "
                + _spread(sign * mean, *sorted((sign * lo, sign * hi)), n)
                + (f", claimed beyond {tol:g}" if tol else "")
            )
            outcomes.append((verdict, lo - tol, text))
    if not outcomes:
        return UNSURE, "no saved values"
    out = _summarise(outcomes, "pairs")
    if "change_from" in check:
        out = f"Change from {check['change_from']}: {out}"
    return _combine([o[0] for o in outcomes]), out


def _summarise(outcomes: list[tuple[str, float, str]], what: str) -> str:
    """One outcome as is; several: how many hold, and the ones that do not (worst first)."""
    if len(outcomes) == 1:
        return outcomes[0][2]
    held = sum(1 for v, _, _ in outcomes if v == HOLDS)
    out = [f"{held} of {len(outcomes)} {what} hold"]
    for verdict, label in ((FAILS, "Does not hold for"), (UNSURE, "Inconclusive for")):
        these = sorted((o for o in outcomes if o[0] == verdict), key=lambda o: o[1])
        if these:
            shown = "; ".join(o[2] for o in these[:3])
            more = f"; and {len(these) - 3} more" if len(these) > 3 else ""
            out.append(f"{label}: {shown}{more}")
    if held == len(outcomes):
        worst = min(outcomes, key=lambda o: o[1])
        out.append(f"Closest: {worst[2]}")
    return ". ".join(out)


def _threshold(data: _Data, check: dict, world: str) -> tuple[str, str]:
    contexts = _contexts(check)
    many_l = len({lv for lv, _ in contexts}) > 1
    many_a = len({a for _, a in contexts}) > 1
    above = "above" in check
    t = float(check["above"] if above else check["below"])
    outcomes = []
    for level, against in contexts:
        where = _where(level, against, many_l, many_a)
        for m in _as_list(check["measures"]):
            mean, lo, hi, n = _interval(data.values(check, world, m, level, against).to_numpy())
            v = _judge_positive(lo - t, hi - t) if above else _judge_positive(t - hi, t - lo)
            side = "above" if above else "below"
            text = f"{m}{where} {_spread(mean, lo, hi, n, signed=False)}, claimed {side} {t:g}"
            outcomes.append((v, (lo - t) if above else (t - hi), text))
    return _combine([o[0] for o in outcomes]), _summarise(outcomes, "measures")


def _trend(data: _Data, check: dict, world: str) -> tuple[str, str]:
    tol = float(check.get("tolerance", 0.0))
    direction = check.get("direction", "falls")
    outcomes = []
    for against in _as_list(check.get("against")) or [None]:
        for m in _as_list(check["measures"]):
            end = data.values(check, world, m, str(check["to"]), against)
            if "from" in check:
                start = data.values(check, world, m, str(check["from"]), against)
                change = end - _broadcast(start, end)
            else:
                change = end
            mean, lo, hi, n = _interval(change.to_numpy())
            if direction == "falls":
                v = _judge_positive(-hi - tol, -lo - tol)
                margin = -hi - tol
            elif direction == "rises":
                v = _judge_positive(lo - tol, hi - tol)
                margin = lo - tol
            else:  # flat: the whole interval within +-tol holds; entirely outside does not
                margin = tol - max(abs(lo), abs(hi))
                v = _within(lo, hi, tol)
            moved = "falls" if mean < 0 else "rises"
            text = f"{m} {moved} by {_spread(abs(mean), *sorted((abs(lo), abs(hi))), n, False)}"
            if n > 1 and lo < 0 < hi:
                text = f"{m} changes by {_spread(mean, lo, hi, n)}"
            outcomes.append((v, margin, text))
    claimed = {
        "falls": f"claimed to fall by more than {tol:g}",
        "rises": f"claimed to rise by more than {tol:g}",
        "flat": f"claimed to stay within {tol:g}",
    }[direction]
    return _combine([o[0] for o in outcomes]), f"{_summarise(outcomes, 'measures')} ({claimed})"


def _analytic(table: pd.DataFrame | None, claim_id: str) -> tuple[str, str]:
    if table is None or table.empty:
        return UNSURE, "not computed yet"
    rows = table[table["claim"] == claim_id]
    if "kind" in rows:  # curves saved for figures are not checks
        rows = rows[rows["kind"].fillna("check") != "curve"]
    if rows.empty:
        return UNSURE, "not computed yet"
    ok = rows["passed"].astype(bool)
    shown = "; ".join(
        f"{r.check}: {_exact(r.value)} (expected {_expected(r.expected)})"
        for r in rows.itertuples(index=False)
    )
    return (HOLDS if ok.all() else FAILS), shown


def _exact(v: float) -> str:
    """An analytic value: 4 significant digits (0 when it is exactly 0)."""
    return "0" if v == 0 else f"{v:.4g}"


def _expected(e) -> str:
    try:
        return _exact(float(e))
    except (TypeError, ValueError):
        return str(e)


CHECKS = {"order": _order, "threshold": _threshold, "trend": _trend}


def verdicts(
    claims: Sequence[dict],
    results: pd.DataFrame,
    analytic: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per claim and world: ``claim, world, verdict, numbers, text, source``.

    Parameters
    ----------
    claims : sequence of dict
        The study file's ``[[claims]]`` tables (as its ``claims.json`` saves them).
    results : DataFrame
        The study's saved ``results`` table.
    analytic : DataFrame, optional
        The saved outcomes of the analytic checks (the ``claims`` table).
    """
    rows = []
    worlds = list(dict.fromkeys(results["world"])) if len(results) else []
    data = _Data(results)
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
                try:
                    verdict, numbers = CHECKS[kind](data, check, world)
                except _NoData as err:
                    verdict, numbers = UNSURE, f"not computed: {err}"
            rows.append({**base, "world": world, "verdict": verdict, "numbers": numbers})
    return pd.DataFrame(rows, columns=COLUMNS)


__all__ = ["verdicts", "HOLDS", "FAILS", "UNSURE", "CHECKS"]
