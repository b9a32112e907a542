"""The values a claim compares on one world: a statistic of a measure at a level, with the
check's modifiers applied (``per``, ``relative_to``, ``change_from``, ``absolute``, a mean
over references), and the interval of a claimed quantity."""

from __future__ import annotations

import itertools

from metaeval.report.inference import FULL, Evidence, Interval, NoData, Values, interval, mean_of


def as_list(v) -> list:
    """A key that takes a value or an array of them, as a list."""
    if v is None:
        return []
    return [v] if isinstance(v, (str, int, float)) else list(v)


class ClaimValues:
    """One claim on one world: its values, with the check's modifiers applied, and the
    intervals of its parts."""

    def __init__(
        self, evidence: Evidence, check: dict, world: str, confidence: float, rng_for, method: str
    ):
        self.evidence, self.check, self.world = evidence, check, world
        self.confidence, self.rng_for, self.method = confidence, rng_for, method

    def series(self, measure, level, against=None, criterion=None, statistic=None) -> Values:
        """The values of one statistic of one measure at one level (the check's by default)."""
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
        """The interval of a claimed quantity, drawn with the part's own random stream."""
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
    levels = [str(lv) for lv in as_list(check.get("levels"))] or [str(check.get("level", FULL))]
    against = as_list(check.get("against")) or [None]
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
