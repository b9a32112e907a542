"""``order`` checks: one measure (or group) above another on a statistic, or two alike.

``greater`` and ``than`` (a measure or a group; or ``less`` and ``than``) on ``statistic`` of
``criterion`` at ``level`` (default ``"full"``; ``levels = [...]``: at every one of them).
Every pair is a part of the claim; ``mode = "mean"`` compares the groups' means instead;
``tolerance``: the difference must exceed it. ``like`` and ``than`` with ``within = w``: the
measures behave alike, their difference within +-w (an equivalence).
"""

from __future__ import annotations

import numpy as np

from metaeval.report.claims.base import ResultsCheck, Table, finite_number, register_check
from metaeval.report.claims.values import ClaimValues, _contexts, _where, as_list
from metaeval.report.claims.verdict import Part, _num, _say, _shown
from metaeval.report.inference import mean_of


@register_check
class OrderCheck(ResultsCheck):
    """``greater``/``less``/``like`` ... ``than``: every pair of the two sides (or their
    means), at every level and reference."""

    kind = "order"
    required = frozenset({"criterion", "statistic", "than"})
    optional = frozenset(
        {"level", "levels", "greater", "less", "like", "within", "mode", "tolerance"}
    )

    @classmethod
    def validate_own(cls, check: dict, table: Table) -> None:
        """Exactly one of greater, less and like; like goes with within; mode each or mean;
        tolerance a number >= 0, within one > 0."""
        if sum(k in check for k in ("greater", "less", "like")) != 1:
            raise table.error(
                None,
                "an order check names its measures with greater = [...], less = [...] or "
                "like = [...] (with within = ...), and than = [...]",
            )
        if ("like" in check) != ("within" in check):
            raise table.error(
                "within" if "like" in check else "like", "like and within go together"
            )
        if check.get("mode", "each") not in ("each", "mean"):
            raise table.error("mode", f"must be each or mean, got {check['mode']!r}")
        finite_number(check, table, "tolerance", ">= 0")
        finite_number(check, table, "within", "> 0")  # no difference lies within +-0

    def parts(self, claim: ClaimValues) -> list[Part]:
        """The claim's parts on one world (see the module docstring)."""
        check = self.params
        # "less = A, than = B" is "greater = B, than = A" (lower is better, e.g. an RMS error);
        # "like = A, than = B, within = w": A and B no more than w apart
        if "less" in check:
            greater, than, word = as_list(check["than"]), as_list(check["less"]), "below"
        elif "like" in check:
            greater, than, word = as_list(check["like"]), as_list(check["than"]), "like"
        else:
            greater, than, word = as_list(check["greater"]), as_list(check["than"]), "above"
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
                    f"{first} {_num(x, changed)} vs {second} {_num(y, changed)}{where}: "
                    f"difference {_shown(iv, sign=sign)}{effect}"
                    + (f", claimed beyond {tol:g}" if tol else "")
                )
                parts.append(Part(label, "above", tol, iv, text))
        return parts

    def say(self, parts: list[Part]) -> str:
        """:meth:`numbers` in this kind's words."""
        out = _say(parts, "pairs")
        check = self.params
        return f"Change from {check['change_from']}: {out}" if "change_from" in check else out
