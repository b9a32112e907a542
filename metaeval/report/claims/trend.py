"""``trend`` checks: a statistic falls, rises or stays flat between two levels.

``measures`` ``direction = "falls" | "rises" | "flat"`` from level ``from`` to level ``to``
by more than ``tolerance`` (within it, for flat: an equivalence). Without ``from`` the
statistic is itself a change (as ``mean_drift``).
"""

from __future__ import annotations

import numpy as np

from metaeval.report.claims.base import ResultsCheck, Table, finite_number, register_check
from metaeval.report.claims.values import ClaimValues, as_list
from metaeval.report.claims.verdict import Part, _say, _shown

_CLAIMED = {
    "falls": "claimed to fall by more than {tol:g}",
    "rises": "claimed to rise by more than {tol:g}",
    "flat": "claimed to stay within {tol:g}",
}


@register_check
class TrendCheck(ResultsCheck):
    """``measures`` ``direction`` from ``from`` to ``to``: one part per measure and
    reference."""

    kind = "trend"
    required = frozenset({"criterion", "statistic", "measures", "to", "direction"})
    optional = frozenset({"from", "tolerance"})

    @classmethod
    def validate_own(cls, check: dict, table: Table) -> None:
        """direction falls, rises or flat; tolerance a number >= 0."""
        # a direction the report cannot say would only fail when the report is drawn
        if check["direction"] not in _CLAIMED:
            raise table.error(
                "direction",
                f"must be {', '.join(list(_CLAIMED)[:-1])} or {list(_CLAIMED)[-1]}, "
                f"got {check['direction']!r}",
            )
        finite_number(check, table, "tolerance", ">= 0")

    def parts(self, claim: ClaimValues) -> list[Part]:
        """The claim's parts on one world (see the module docstring)."""
        check = self.params
        tol = float(check.get("tolerance", 0.0))
        direction = check.get("direction", "falls")
        parts = []
        for against in as_list(check.get("against")) or [None]:
            for m in as_list(check["measures"]):
                end = claim.values(m, str(check["to"]), against)
                change = (
                    end - claim.values(m, str(check["from"]), against) if "from" in check else end
                )
                name = m + (f" against {against}" if against is not None else "")
                label = {"falls": "fall of ", "rises": "rise of "}.get(
                    direction, "change of "
                ) + name
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

    def say(self, parts: list[Part]) -> str:
        """:meth:`numbers` in this kind's words."""
        check = self.params
        claimed = _CLAIMED[check.get("direction", "falls")].format(
            tol=float(check.get("tolerance", 0.0))
        )
        return f"{_say(parts, 'measures')} ({claimed})"
