"""``analytic`` checks: computed exactly on constructed lists while the study runs.

The study runs the named test of :mod:`metaeval.study.analytic` with the check's other keys
as its parameters and saves its outcome (the ``claims`` table); a report reads that outcome.
"""

from __future__ import annotations

import inspect

import pandas as pd

from metaeval.report.claims.base import ClaimCheck, StudyNames, Table, register_check
from metaeval.report.claims.verdict import FAILS, HOLDS, UNSURE


@register_check
class AnalyticCheck(ClaimCheck):
    """``test = "..."`` and that test's parameters; judged once, not per world."""

    kind = "analytic"

    @classmethod
    def from_table(cls, table: Table, study: StudyNames) -> AnalyticCheck:
        """The named test of :mod:`metaeval.study.analytic` and its parameters, checked
        against its signature."""
        from metaeval.study.analytic import TESTS

        c = table
        test = c.take("test", str)
        if test not in TESTS:
            raise c.error(
                "test", f"unknown analytic test {test!r}; known: {', '.join(sorted(TESTS))}"
            )
        params = c.rest()
        sig = inspect.signature(TESTS[test])
        for key in params:
            if key not in sig.parameters:
                raise c.error(
                    key,
                    f"not a parameter of the {test} test; parameters: {', '.join(sig.parameters)}",
                )
        missing = [
            k
            for k, p in sig.parameters.items()
            if p.default is inspect.Parameter.empty and k not in params
        ]
        if missing:
            raise c.error(missing[0], "is required")
        return cls({"test": test, **params})

    @staticmethod
    def verdict(table: pd.DataFrame | None, claim_id: str) -> tuple[str, str]:
        """The verdict of one analytic claim and its numbers, from the saved outcomes of the
        analytic checks (the ``claims`` table): holds when every check of the claim passed."""
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
