"""Verdicts on published claims, from a study's saved results.

A claim in a study file names what it says and how to check it::

    [[claims]]
    id = "SK3"
    text = "With 10% of the judgments, AP' keeps more discriminative power than AP"
    source = "Sakai & Kando 2008, Table 4"
    check = { kind = "order", criterion = "discriminative_power", statistic = "power",
              level = "10", greater = ["AP'"], than = ["AP"] }

Check kinds (each is judged on every world):

``order``
    ``greater`` and ``than`` (a measure or a group; or ``less`` and ``than``) on ``statistic``
    of ``criterion`` at ``level`` (default ``"full"``; ``levels = [...]``: at every one of
    them). Every pair is a part of the claim; ``mode = "mean"`` compares the groups' means
    instead; ``tolerance``: the difference must exceed it. ``like`` and ``than`` with
    ``within = w``: the measures behave alike, their difference within +-w (an equivalence).
``threshold``
    ``measures`` above ``above`` (or below ``below``, or between the two when both are
    given: an equivalence band); each measure is a part.
``trend``
    ``measures`` ``direction = "falls" | "rises" | "flat"`` from level ``from`` to level
    ``to`` by more than ``tolerance`` (within it, for flat: an equivalence). Without ``from``
    the statistic is itself a change (as ``mean_drift``).
``analytic``
    computed on constructed lists while the study runs (see :mod:`metaeval.study.analytic`):
    exact, the saved outcome is read here.

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

**The verdict rule.** Each part of a claim is a claimed quantity theta (a difference between
two measures, a value against a bound, a change between two levels), formed value by value and
given its interval at the study's confidence c (95% by default) by the paired two-stage
bootstrap of :mod:`metaeval.report.inference` (topics, trials, replicates). A part
**holds** when its interval lies on the claimed side of the tolerance (for "within +-d"
claims, wholly inside +-d), **does not hold** when it lies on the other side (wholly outside
+-d), and is **inconclusive** otherwise. Each side of a one-sided claim is so wrong at most
(1 - c)/2 of the time.

A claim with several parts (every pair of two groups, every level, every measure) **holds**
when every part holds: an intersection-union test, which needs no correction for the number
of parts (Berger 1982). It **does not hold** when at least one part is firmly reversed after
Holm's correction over the parts (Holm 1979): the part with the strongest evidence against the
claim is judged at (1 - c)/(2m) for m parts, the next at (1 - c)/(2(m - 1)), and so on, so
that one reversal among twenty pairs is not declared by chance. Otherwise it is
**inconclusive**.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from metaeval.report.inference import (
    DEFAULT_METHOD,
    FULL,
    Evidence,
    Interval,
    NoData,
    Sources,
    Values,
    interval,
    mean_of,
)
from metaeval.study.spec import DEFAULT_CONFIDENCE

HOLDS, FAILS, UNSURE = "holds", "does not hold", "inconclusive"
COLUMNS = ["claim", "world", "verdict", "numbers", "basis", "text", "source"]
PART_COLUMNS = [
    "claim",
    "world",
    "part",
    "verdict",
    "estimate",
    "low",
    "high",
    "claimed",
    "side",
    "tolerance",
]


# ------------------------------------------------------------------------------ parts
@dataclass
class Part:
    """One claimed quantity of a claim on one world, with its interval.

    ``kind`` is ``"above"`` (the claim is theta > ``tol``) or ``"within"`` (|theta| <= ``tol``).
    ``text`` shows the numbers in the claim's words; ``verdict`` is set by :func:`judge`.
    """

    label: str
    kind: str
    tol: float
    interval: Interval
    text: str
    verdict: str = UNSURE

    @property
    def holds(self) -> bool:
        iv = self.interval
        if not iv.defined:
            return False
        if self.kind == "above":
            return iv.low > self.tol
        return -self.tol <= iv.low and iv.high <= self.tol

    def fails_at(self, a: float) -> bool:
        """Firmly reversed at one-sided level ``a``: the bound of the interval at confidence
        1 - 2a lies on the other side."""
        iv = self.interval
        if not iv.defined:
            return False
        if self.kind == "above":
            return iv.quantile(1 - a) < self.tol
        return iv.quantile(a) > self.tol or iv.quantile(1 - a) < -self.tol

    def evidence_against(self) -> float:
        """The one-sided bootstrap p-value of "the part is firmly reversed" (the smaller, the
        stronger the evidence against the claim); orders Holm's steps."""
        iv = self.interval
        if not iv.defined:
            return np.inf
        if self.kind == "above":
            return iv.share_at_least(self.tol)
        return min(iv.share_at_most(self.tol), iv.share_at_least(-self.tol))

    @property
    def margin(self) -> float:
        """How far the interval is inside the claimed side (negative: outside)."""
        iv = self.interval
        if not iv.defined:
            return -np.inf
        if self.kind == "above":
            return iv.low - self.tol
        return self.tol - max(abs(iv.low), abs(iv.high))


def judge(parts: list[Part], confidence: float) -> str:
    """The claim's verdict from its parts (the rule of the module docstring); sets each part's
    own verdict: holds, does not hold (after Holm's correction) or inconclusive."""
    a = (1 - confidence) / 2
    for p in parts:
        p.verdict = HOLDS if p.holds else UNSURE
    m = len(parts)
    for k, p in enumerate(sorted(parts, key=lambda p: p.evidence_against())):
        if not p.fails_at(a / (m - k)):
            break
        p.verdict = FAILS
    if not parts:
        return UNSURE
    if any(p.verdict == FAILS for p in parts):
        return FAILS
    return HOLDS if all(p.verdict == HOLDS for p in parts) else UNSURE


# ------------------------------------------------------------------------------ numbers
def _num(v: float, signed: bool = False) -> str:
    if v is None or not np.isfinite(v):
        return "nan"
    return f"{v:+.3f}" if signed else f"{v:.3f}"


def _shown(iv: Interval, signed: bool = True, sign: float = 1.0) -> str:
    """``+0.178 [+0.067, +0.276]`` (``sign = -1`` shows the negated quantity)."""
    est = sign * iv.estimate
    if not iv.defined:
        return (
            f"{_num(est, signed)} (no interval: {', '.join(iv.sources.caveats()) or 'no values'})"
        )
    lo, hi = sorted((sign * iv.low, sign * iv.high))
    return f"{_num(est, signed)} [{_num(lo, signed)}, {_num(hi, signed)}]"


def _as_list(v) -> list:
    if v is None:
        return []
    return [v] if isinstance(v, (str, int, float)) else list(v)


def basis(sources: Sources, confidence: float) -> str:
    """What a verdict's intervals rest on: ``95% intervals over 54 topics (200 paired
    resamples), 10 trials``, and what makes them rough."""
    text = f"{confidence:.0%} intervals over {sources.text()}"
    caveats = sources.caveats()
    return text + (f" ({'; '.join(caveats)}: rough)" if caveats else "")


# ------------------------------------------------------------------------------ values
class _Claim:
    """One claim on one world: its values, with the check's modifiers applied, and the
    intervals of its parts."""

    def __init__(
        self, evidence: Evidence, check: dict, world: str, confidence: float, rng_for, method: str
    ):
        self.evidence, self.check, self.world = evidence, check, world
        self.confidence, self.rng_for, self.method = confidence, rng_for, method

    def series(self, measure, level, against=None, criterion=None, statistic=None) -> Values:
        c = self.check
        rows = self.evidence.rows(
            self.world,
            criterion or c["criterion"],
            statistic or c["statistic"],
            level,
            degrader=c.get("degrader"),
            against=against,
            x=c.get("x"),
        )
        try:
            return self.evidence.values(rows, measure)
        except NoData:
            raise NoData(
                f"no saved {statistic or c['statistic']} of {measure} at level {level}"
                + (f" against {against}" if against is not None else "")
            ) from None

    def values(self, measure: str, level: str, against) -> Values:
        """The compared quantity of one measure, with ``per``, ``relative_to`` and
        ``change_from`` applied; ``against`` a tuple: averaged over those references (the
        measure itself left out)."""
        c = self.check
        if isinstance(against, tuple):
            return mean_of([self.values(measure, level, a) for a in against if a != measure])
        v = self.series(measure, level, against)
        if "per" in c:
            v = v / self.series(measure, level, against, statistic=c["per"])
        if "relative_to" in c:
            base = self.series(measure, c["relative_to"], against)
            if "per" in c:
                base = base / self.series(measure, c["relative_to"], against, statistic=c["per"])
            v = v / base
        if "change_from" in c:
            v = v - self.series(measure, level, against, criterion=c["change_from"])
        if c.get("absolute"):
            v = abs(v)
        return v

    def interval(self, values: Values, label: str) -> Interval:
        return interval(values, self.confidence, self.rng_for(label), self.method)

    def n_pairs(self, level: str) -> float | None:
        """The number of system pairs a discriminative power is a share of."""
        c = self.check
        if c.get("statistic") != "power" or {"per", "relative_to", "change_from"} & set(c):
            return None
        rows = self.evidence.rows(self.world, c["criterion"], "n_pairs", level)
        return float(rows["value"].mean()) if len(rows) else None


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
def _order(claim: _Claim) -> list[Part]:
    check = claim.check
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
    changed = "change_from" in check
    parts = []
    for level, against in contexts:
        where = _where(level, against, many_l, many_a)
        # a measure is not compared with itself, nor against itself as the reference
        g_side = [m for m in greater if m != against]
        t_side = [m for m in than if m != against]
        if not g_side or not t_side:
            continue
        if check.get("mode", "each") == "mean":
            a = mean_of([claim.values(m, level, against) for m in g_side])
            b = mean_of([claim.values(m, level, against) for m in t_side])
            pairs = [(" + ".join(g_side), " + ".join(t_side), a, b)]
        else:
            pairs = [
                (g, t, claim.values(g, level, against), claim.values(t, level, against))
                for g in g_side
                for t in t_side
                if g != t
            ]
        n_pairs = claim.n_pairs(level)
        for g, t, a, b in pairs:
            label = f"{g} - {t}{where}"
            iv = claim.interval(a - b, label)
            if word == "like":
                text = (
                    f"{g} {_num(a.estimate)} vs {t} {_num(b.estimate)}{where}: difference "
                    f"{_shown(iv)}, claimed within {within:g}"
                )
                parts.append(Part(label, "within", within, iv, text))
                continue
            # say it in the claim's words: "A above B" ("B below A" for a less-than claim)
            first, second, x, y, sign = (
                (g, t, a.estimate, b.estimate, 1.0)
                if word == "above"
                else (t, g, b.estimate, a.estimate, -1.0)
            )
            effect = ""
            if n_pairs and np.isfinite(iv.estimate):
                effect = f" ({sign * iv.estimate * n_pairs:+.0f} of {n_pairs:,.0f} pairs)"
            text = (
                f"{first} {_num(x, changed)} vs {second} {_num(y, changed)}{where}: difference "
                f"{_shown(iv, sign=sign)}{effect}" + (f", claimed beyond {tol:g}" if tol else "")
            )
            parts.append(Part(label, "above", tol, iv, text))
    return parts


def _threshold(claim: _Claim) -> list[Part]:
    check = claim.check
    contexts = _contexts(check)
    many_l = len({lv for lv, _ in contexts}) > 1
    many_a = len({a for _, a in contexts}) > 1
    if "above" in check and "below" in check:
        return _band(claim, contexts, many_l, many_a)
    above = "above" in check
    t = float(check["above"] if above else check["below"])
    side = "above" if above else "below"
    parts = []
    for level, against in contexts:
        where = _where(level, against, many_l, many_a)
        for m in _as_list(check["measures"]):
            v = claim.values(m, level, against)
            # the claimed quantity: the distance from the bound on the claimed side
            label = f"{m}{where} - {t:g}" if above else f"{t:g} - {m}{where}"
            iv = claim.interval(v - t if above else -(v - t), label)
            shown = claim.interval(v, label)
            text = f"{m}{where} {_shown(shown, signed=False)}, claimed {side} {t:g}"
            parts.append(Part(label, "above", 0.0, iv, text))
    return parts


def _band(claim: _Claim, contexts, many_l: bool, many_a: bool) -> list[Part]:
    """A threshold with both ``above`` and ``below``: the value lies between them, judged as
    equivalence to their midpoint within half their distance (the whole interval inside)."""
    check = claim.check
    low, high = float(check["above"]), float(check["below"])
    mid, half = (low + high) / 2, (high - low) / 2
    parts = []
    for level, against in contexts:
        where = _where(level, against, many_l, many_a)
        for m in _as_list(check["measures"]):
            v = claim.values(m, level, against)
            label = f"{m}{where} - {mid:g}"
            iv = claim.interval(v - mid, label)
            shown = claim.interval(v, label)
            text = f"{m}{where} {_shown(shown, signed=False)}, claimed between {low:g} and {high:g}"
            parts.append(Part(label, "within", half, iv, text))
    return parts


def _trend(claim: _Claim) -> list[Part]:
    check = claim.check
    tol = float(check.get("tolerance", 0.0))
    direction = check.get("direction", "falls")
    parts = []
    for against in _as_list(check.get("against")) or [None]:
        for m in _as_list(check["measures"]):
            end = claim.values(m, str(check["to"]), against)
            change = end - claim.values(m, str(check["from"]), against) if "from" in check else end
            name = m + (f" against {against}" if against is not None else "")
            label = {"falls": "fall of ", "rises": "rise of "}.get(direction, "change of ") + name
            iv = claim.interval(change, label)
            if direction == "flat":
                part = Part(label, "within", tol, iv, "")
            else:
                sign = -1.0 if direction == "falls" else 1.0
                part = Part(label, "above", tol, claim.interval(change * sign, label), "")
            if iv.defined and iv.low < 0 < iv.high:
                part.text = f"{m} changes by {_shown(iv)}"
            else:
                moved = "falls" if iv.estimate < 0 else "rises"
                part.text = (
                    f"{m} {moved} by {_shown(iv, signed=False, sign=np.sign(iv.estimate) or 1)}"
                )
            parts.append(part)
    return parts


def _say(parts: list[Part], what: str, direction: str | None = None) -> str:
    """One part as is; several: how many hold, the firmly reversed and the inconclusive ones
    (worst first), or the closest when all hold."""
    if len(parts) == 1:
        return parts[0].text
    held = sum(p.verdict == HOLDS for p in parts)
    out = [f"{held} of {len(parts)} {what} hold"]
    for verdict, label in (
        (FAILS, f"Does not hold (Holm over {len(parts)}) for"),
        (UNSURE, "Inconclusive for"),
    ):
        these = sorted((p for p in parts if p.verdict == verdict), key=lambda p: p.margin)
        if these:
            shown = "; ".join(p.text for p in these[:3])
            more = f"; and {len(these) - 3} more" if len(these) > 3 else ""
            out.append(f"{label}: {shown}{more}")
    if held == len(parts):
        out.append(f"Closest: {min(parts, key=lambda p: p.margin).text}")
    return ". ".join(out)


_CLAIMED = {
    "falls": "claimed to fall by more than {tol:g}",
    "rises": "claimed to rise by more than {tol:g}",
    "flat": "claimed to stay within {tol:g}",
}


def _numbers(kind: str, check: dict, parts: list[Part]) -> str:
    if not parts:
        return "no saved values"
    if kind == "order":
        out = _say(parts, "pairs")
        return f"Change from {check['change_from']}: {out}" if "change_from" in check else out
    if kind == "threshold":
        return _say(parts, "measures")
    claimed = _CLAIMED[check.get("direction", "falls")].format(
        tol=float(check.get("tolerance", 0.0))
    )
    return f"{_say(parts, 'measures')} ({claimed})"


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


def judge_claims(
    claims: Sequence[dict],
    results: pd.DataFrame,
    resamples: pd.DataFrame | None = None,
    analytic: pd.DataFrame | None = None,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
    method: str = DEFAULT_METHOD,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The verdicts, one row per claim and world, and the parts they rest on.

    Parameters
    ----------
    claims : sequence of dict
        The study file's ``[[claims]]`` tables (as its ``claims.json`` saves them).
    results, resamples : DataFrame
        The study's saved ``results`` and ``resamples`` tables.
    analytic : DataFrame, optional
        The saved outcomes of the analytic checks (the ``claims`` table).
    confidence : float
        Of every interval.
    seed : int
        The study seed: the trial and replicate draws of each claim's bootstrap derive from
        it and from what the claim is, so a verdict is the same whenever it is drawn.
    method : {"expanded", "centered", "percentile"}
        How intervals are read off the draws (:func:`metaeval.report.inference.interval`);
        the default is the one calibrated best (docs/calibration.md).

    Returns
    -------
    verdicts : DataFrame
        ``claim, world, verdict, numbers, basis, text, source``.
    parts : DataFrame
        ``claim, world, part, verdict, estimate, low, high, claimed``: every part's interval.
    """
    from metaeval.study.seeding import generator

    rows, part_rows = [], []
    evidence = Evidence(results, resamples)
    worlds = evidence.worlds
    for claim in claims:
        check = claim.get("check", {})
        kind = check.get("kind")
        cid = claim.get("id", "")
        base = {"claim": cid, "text": claim.get("text", ""), "source": claim.get("source", "")}
        if kind == "analytic":
            verdict, numbers = _analytic(analytic, cid)
            rows.append(
                {
                    **base,
                    "world": "(analytic)",
                    "verdict": verdict,
                    "numbers": numbers,
                    "basis": "exact, on constructed lists",
                }
            )
            continue
        for world in _as_list(check.get("worlds")) or worlds:
            verdict, numbers, why = UNSURE, "", ""
            if kind not in CHECKS:
                numbers = f"unknown check kind {kind!r}"
            elif len(results) == 0:
                numbers = "no saved results"
            else:

                def rng_for(label, cid=cid, world=world):
                    return generator(seed, "verdict", {"claim": cid, "world": world, "part": label})

                try:
                    parts = CHECKS[kind](
                        _Claim(evidence, check, world, confidence, rng_for, method)
                    )
                except NoData as err:
                    numbers = f"not computed: {err}"
                else:
                    verdict = judge(parts, confidence)
                    numbers = _numbers(kind, check, parts)
                    if parts:
                        sources = parts[0].interval.sources
                        for p in parts[1:]:
                            sources = sources.merge(p.interval.sources, sources.resamples)
                        why = basis(sources, confidence)
                    part_rows += [
                        {
                            "claim": cid,
                            "world": world,
                            "part": p.label,
                            "verdict": p.verdict,
                            "estimate": p.interval.estimate,
                            "low": p.interval.low,
                            "high": p.interval.high,
                            "claimed": ("> " if p.kind == "above" else "within +-") + f"{p.tol:g}",
                            "side": p.kind,
                            "tolerance": p.tol,
                        }
                        for p in parts
                    ]
            rows.append(
                {**base, "world": world, "verdict": verdict, "numbers": numbers, "basis": why}
            )
    return pd.DataFrame(rows, columns=COLUMNS), pd.DataFrame(part_rows, columns=PART_COLUMNS)


def verdicts(
    claims: Sequence[dict],
    results: pd.DataFrame,
    analytic: pd.DataFrame | None = None,
    resamples: pd.DataFrame | None = None,
    **kwargs,
) -> pd.DataFrame:
    """One row per claim and world: ``claim, world, verdict, numbers, basis, text, source``
    (:func:`judge_claims` without the parts)."""
    return judge_claims(claims, results, resamples, analytic, **kwargs)[0]


__all__ = ["verdicts", "judge_claims", "judge", "Part", "HOLDS", "FAILS", "UNSURE", "CHECKS"]
