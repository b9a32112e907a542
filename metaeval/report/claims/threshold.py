"""``threshold`` checks: each measure above a bound, below one, or between two.

``measures`` above ``above`` (or below ``below``, or between the two when both are given: an
equivalence band) on ``statistic`` of ``criterion`` at ``level`` (or every one of
``levels``); each measure is a part.
"""

from __future__ import annotations

from metaeval.report.claims.base import ResultsCheck, Table, finite_number, register_check
from metaeval.report.claims.values import ClaimValues, _contexts, _where, as_list
from metaeval.report.claims.verdict import Part, _say, _shown


@register_check
class ThresholdCheck(ResultsCheck):
    """``measures`` against ``above`` and/or ``below``: one part per measure, level and
    reference."""

    kind = "threshold"
    required = frozenset({"criterion", "statistic", "measures"})
    optional = frozenset({"level", "levels", "above", "below"})

    @classmethod
    def validate_own(cls, check: dict, table: Table) -> None:
        """above and/or below, finite numbers, the lower bound below the upper one."""
        if "above" not in check and "below" not in check:
            raise table.error(
                None, "a threshold check needs above = x, below = y, or both (a band)"
            )
        finite_number(check, table, "above")
        finite_number(check, table, "below")
        if "above" in check and "below" in check and not (check["above"] < check["below"]):
            raise table.error("below", f"must be above the lower bound ({check['above']})")

    def parts(self, claim: ClaimValues) -> list[Part]:
        """The claim's parts on one world (see the module docstring)."""
        check = self.params
        contexts = _contexts(check)
        many_l = len({lv for lv, _ in contexts}) > 1
        many_a = len({a for _, a in contexts}) > 1
        if "above" in check and "below" in check:
            return self._band(claim, contexts, many_l, many_a)
        above = "above" in check
        t = float(check["above"] if above else check["below"])
        side = "above" if above else "below"
        parts = []
        for level, against in contexts:
            where = _where(level, against, many_l, many_a)
            for m in as_list(check["measures"]):
                v = claim.values(m, level, against)
                # the claimed quantity: the distance from the bound on the claimed side
                label = f"{m}{where} - {t:g}" if above else f"{t:g} - {m}{where}"
                iv = claim.interval(v - t if above else -(v - t), label)
                shown = claim.interval(v, label)
                text = f"{m}{where} {_shown(shown, signed=False)}, claimed {side} {t:g}"
                parts.append(Part(label, "above", 0.0, iv, text))
        return parts

    def _band(self, claim: ClaimValues, contexts, many_l: bool, many_a: bool) -> list[Part]:
        """A threshold with both ``above`` and ``below``: the value lies between them, judged as
        equivalence to their midpoint within half their distance (the whole interval inside)."""
        check = self.params
        low, high = float(check["above"]), float(check["below"])
        mid, half = (low + high) / 2, (high - low) / 2
        parts = []
        for level, against in contexts:
            where = _where(level, against, many_l, many_a)
            for m in as_list(check["measures"]):
                v = claim.values(m, level, against)
                label = f"{m}{where} - {mid:g}"
                iv = claim.interval(v - mid, label)
                shown = claim.interval(v, label)
                text = (
                    f"{m}{where} {_shown(shown, signed=False)}, "
                    f"claimed between {low:g} and {high:g}"
                )
                parts.append(Part(label, "within", half, iv, text))
        return parts

    def say(self, parts: list[Part]) -> str:
        """:meth:`numbers` in this kind's words."""
        return _say(parts, "measures")
