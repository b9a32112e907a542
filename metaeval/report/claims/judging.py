"""Judge a study's claims on its saved results: one verdict per claim and world, and the
parts each verdict rests on."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from metaeval.report.claims.analytic import AnalyticCheck
from metaeval.report.claims.base import CHECKS
from metaeval.report.claims.values import ClaimValues, as_list
from metaeval.report.claims.verdict import UNSURE, basis, judge
from metaeval.report.inference import DEFAULT_METHOD, Evidence, NoData
from metaeval.study.spec import DEFAULT_CONFIDENCE

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
            verdict, numbers = AnalyticCheck.verdict(analytic, cid)
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
        for world in as_list(check.get("worlds")) or worlds:
            verdict, numbers, why = UNSURE, "", ""
            if kind not in CHECKS:
                numbers = f"unknown check kind {kind!r}"
            elif len(results) == 0:
                numbers = "no saved results"
            else:

                def rng_for(label, cid=cid, world=world):
                    return generator(seed, "verdict", {"claim": cid, "world": world, "part": label})

                checker = CHECKS[kind].from_dict(check)
                try:
                    parts = checker.parts(
                        ClaimValues(evidence, checker.params, world, confidence, rng_for, method)
                    )
                except NoData as err:
                    numbers = f"not computed: {err}"
                else:
                    verdict = judge(parts, confidence)
                    numbers = checker.numbers(parts)
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
