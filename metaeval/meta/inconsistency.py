"""Significance conclusions that change when judgments are reduced.

Given per-topic scores of the *same* systems under the full judgments and under reduced
judgments (a shallower pool, a sample of the qrels), run the same significance test on every
pair under each, and count how many of the pairs found significant with the reduced judgments
are not significant with the full ones ("absent") or significant the other way round
("reversed"). This is the analysis of Table 5 of Sakai & Kando (2008), "On information
retrieval metrics designed for evaluation with incomplete relevance assessments", Information
Retrieval 11(5), 447-470 (see also Sakai, SIGIR 2007).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from metaeval._validation import check_alpha, shown_ids
from metaeval.meta._resampling import resamples as draw_resamples
from metaeval.meta._resampling import score_matrix
from metaeval.meta.discrimination import DiscriminativePowerResult, discriminative_power

__all__ = ["InconsistencyResult", "significance_inconsistency", "change_status"]


@dataclass(frozen=True, eq=False)
class InconsistencyResult:
    """Result of :func:`significance_inconsistency`.

    Attributes
    ----------
    n_pairs : int
        Number of system pairs.
    n_significant_full, n_significant_reduced : int
        Pairs with ASL < alpha under each judgment set.
    n_consistent : int
        Reduced-significant pairs also significant, in the same direction, under full.
    n_absent : int
        Reduced-significant pairs not significant under full.
    n_reversed : int
        Reduced-significant pairs significant in the opposite direction under full.
    n_missed : int
        Full-significant pairs not significant under reduced.
    pairs : pandas.DataFrame
        One row per pair: ``system_a, system_b, diff_full, asl_full, significant_full,
        diff_reduced, asl_reduced, significant_reduced, status`` with status one of
        ``"consistent"``, ``"absent"``, ``"reversed"``, ``"missed"``, ``"neither"``.
    full, reduced : DiscriminativePowerResult
        The two underlying results.
    """

    n_pairs: int
    n_significant_full: int
    n_significant_reduced: int
    n_consistent: int
    n_absent: int
    n_reversed: int
    n_missed: int
    pairs: pd.DataFrame
    full: DiscriminativePowerResult
    reduced: DiscriminativePowerResult

    def to_frame(self) -> pd.DataFrame:
        """One row per pair of systems (a copy of :attr:`pairs`)."""
        return self.pairs.copy()

    @property
    def inconsistent(self) -> int:
        """Reduced-significant pairs that the full judgments do not confirm (absent + reversed)."""
        return self.n_absent + self.n_reversed


def _check_topics(full: tuple, reduced: tuple, *, ordered: bool) -> None:
    """Refuse scores on other topics (or, ``ordered``, on the same topics in another order)."""
    if set(full) != set(reduced):
        raise ValueError(
            "full and reduced scores must cover the same topics; "
            f"only in full: {shown_ids(sorted(map(str, set(full) - set(reduced)))) or 'none'}, "
            f"only in reduced: {shown_ids(sorted(map(str, set(reduced) - set(full)))) or 'none'}"
        )
    if ordered and full != reduced:
        raise ValueError(
            "full and reduced results must hold the same topics in the same order: their "
            "per-topic scores are paired by position"
        )


def _align(full_scores, reduced_scores, systems, topics=None, runs=None):
    """Return the two (S x T) matrices on the same system order, validating that they match."""
    if isinstance(full_scores, pd.DataFrame) != isinstance(reduced_scores, pd.DataFrame):
        raise TypeError("full_scores and reduced_scores must both be arrays or both be DataFrames")
    Xf, nf, tf = score_matrix(
        full_scores, name="full_scores", systems=systems, topics=topics, runs=runs
    )
    Xr, nr, tr = score_matrix(
        reduced_scores, name="reduced_scores", systems=systems, topics=topics, runs=runs
    )
    if set(nf) != set(nr):
        raise ValueError(
            "full_scores and reduced_scores must hold the same systems; "
            f"only in full: {sorted(map(str, set(nf) - set(nr)))}, "
            f"only in reduced: {sorted(map(str, set(nr) - set(nf)))}"
        )
    if isinstance(full_scores, pd.DataFrame):
        _check_topics(tf, tr, ordered=False)
    if Xf.shape != Xr.shape:
        raise ValueError(
            "full_scores and reduced_scores must have the same shape, got "
            f"{Xf.shape} and {Xr.shape}"
        )
    order = [nr.index(s) for s in nf]
    Xr = Xr[order]
    if isinstance(full_scores, pd.DataFrame):
        Xr = Xr[:, [tr.index(t) for t in tf]]
    return Xf, Xr, nf


def significance_inconsistency(
    full_scores,
    reduced_scores,
    *,
    method: Literal["bootstrap", "tukey"] = "bootstrap",
    alpha: float = 0.05,
    B: int | None = None,
    rng=None,
    systems=None,
    resamples=None,
    topics=None,
    runs=None,
) -> InconsistencyResult:
    """Significant pairs under full and reduced judgments, and how they disagree.

    Runs :func:`~metaeval.meta.discrimination.discriminative_power` (Sakai's paired bootstrap
    or the randomised Tukey HSD) on both score matrices with **the same resamples**, so the two
    conclusions differ only through the judgments (common random numbers), not through
    resampling noise.

    Either side may be a :class:`~metaeval.meta.DiscriminativePowerResult` computed earlier
    with shared resamples: it is reused, not recomputed (a robustness study tests the full
    judgments once and compares every reduced judgment set with that one result). ``method``,
    ``alpha`` and the resamples then come from it.

    A pair significant under the reduced judgments is

    * ``consistent`` if significant under full with the same sign of the mean difference,
    * ``reversed`` if significant under full with the opposite sign,
    * ``absent`` if not significant under full;

    a pair significant only under full is ``missed``; otherwise ``neither``.

    Parameters
    ----------
    full_scores, reduced_scores : array_like (S, T), pandas.DataFrame or DiscriminativePowerResult
        Per-topic scores of the same systems on the same topics (tidy frames are matched by
        run and topic names; arrays by row and column order), or results.
    method : {"bootstrap", "tukey"}
    alpha : float
    B : int, optional
        Default 1000 (bootstrap) or 5000 (tukey).
    rng : None, int, SeedSequence or Generator
        Draws the shared resamples when neither ``resamples`` nor a result gives them.
    systems : sequence, optional
        Names of the rows of array inputs.
    resamples : Resamples, optional
        Resamples drawn beforehand by :func:`~metaeval.meta.resamples`.
    topics, runs : selection, optional
        For tidy frames: only these topics and runs.

    Returns
    -------
    InconsistencyResult
    """
    given = [r for r in (full_scores, reduced_scores) if isinstance(r, DiscriminativePowerResult)]
    if given:
        first = given[0]
        if resamples is not None and resamples is not first.resamples:
            raise ValueError(
                "resamples differ from those of the result given: a result keeps its own resamples"
            )
        method, alpha, resamples = first.method, first.alpha, first.resamples
        for r in given[1:]:
            if r.resamples is not resamples or r.alpha != alpha:
                raise ValueError("the two results must share their resamples and alpha")
    alpha = check_alpha(alpha)

    def test(side):
        if isinstance(side, DiscriminativePowerResult):
            return side
        return discriminative_power(
            side,
            method=method,
            alpha=alpha,
            resamples=resamples,
            systems=systems,
            topics=topics,
            runs=runs,
        )

    if not given:
        Xf, Xr, names = _align(full_scores, reduced_scores, systems, topics, runs)
        if resamples is None:
            resamples = draw_resamples(
                method, n_topics=Xf.shape[1], n_systems=Xf.shape[0], B=B, rng=rng
            )
        full = discriminative_power(
            Xf, method=method, alpha=alpha, resamples=resamples, systems=names
        )
        red = discriminative_power(
            Xr, method=method, alpha=alpha, resamples=resamples, systems=names
        )
    else:
        full, red = test(full_scores), test(reduced_scores)
        if full.systems != red.systems:
            raise ValueError(
                "full and reduced results must hold the same systems in the same order"
            )
        _check_topics(full.topics, red.topics, ordered=True)
    return _compare(full, red)


def _compare(
    full: DiscriminativePowerResult, red: DiscriminativePowerResult
) -> InconsistencyResult:
    pf, pr = full.pairs, red.pairs
    sf = pf["significant"].to_numpy()
    sr = pr["significant"].to_numpy()
    status = change_status(sf, pf["diff"].to_numpy(), sr, pr["diff"].to_numpy())
    table = pd.DataFrame(
        {
            "system_a": pf["system_a"],
            "system_b": pf["system_b"],
            "diff_full": pf["diff"],
            "asl_full": pf["asl"],
            "significant_full": sf,
            "diff_reduced": pr["diff"].to_numpy(),
            "asl_reduced": pr["asl"].to_numpy(),
            "significant_reduced": sr,
            "status": status,
        }
    )
    return InconsistencyResult(
        n_pairs=int(len(table)),
        n_significant_full=int(sf.sum()),
        n_significant_reduced=int(sr.sum()),
        n_consistent=int((status == "consistent").sum()),
        n_absent=int((status == "absent").sum()),
        n_reversed=int((status == "reversed").sum()),
        n_missed=int((status == "missed").sum()),
        pairs=table,
        full=full,
        reduced=red,
    )


def change_status(significant_full, diff_full, significant_reduced, diff_reduced) -> np.ndarray:
    """Per pair of systems, how its conclusion changed from the full to the reduced judgments:
    ``"consistent"``, ``"reversed"``, ``"absent"``, ``"missed"`` or ``"neither"`` (as
    :func:`significance_inconsistency` defines them), from each side's significance flags and
    mean differences."""
    sf = np.asarray(significant_full, dtype=bool)
    sr = np.asarray(significant_reduced, dtype=bool)
    same_dir = np.sign(diff_full) == np.sign(diff_reduced)
    return np.select(
        [sr & sf & same_dir, sr & sf & ~same_dir, sr & ~sf, ~sr & sf],
        ["consistent", "reversed", "absent", "missed"],
        default="neither",
    )
