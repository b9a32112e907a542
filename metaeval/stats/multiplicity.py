r"""Multiple comparisons over a declared family of system pairs.

* :func:`holm` (Holm 1979, family-wise error rate) and :func:`benjamini_hochberg` (Benjamini &
  Hochberg 1995, false discovery rate): the functions of :mod:`metaeval.meta.significance`,
  re-exported (the tests check them against ``statsmodels.stats.multitest.multipletests``).
* :func:`westfall_young`: Westfall & Young's (1993) resampling max-T and min-P adjustments,
  single-step and step-down, on the paired randomisation (sign-flip) distribution. Written
  here: no Python library computes them for paired sign flips. They control the family-wise
  error rate while using the dependence between the pairs' statistics (every pair shares the
  topics), so they are less conservative than Holm.

The family is always an argument: every pair of systems (``family="all_pairs"``) or every
system against a named baseline (``family="baseline"``, many-vs-one). A corrected p-value
means nothing without the family it was corrected over.

References
----------
.. [WY93] P. H. Westfall, S. S. Young (1993). Resampling-Based Multiple Testing: Examples and
   Methods for p-Value Adjustment. Wiley. (Algorithms 2.5 and 2.8: single-step and step-down
   max-T and min-P.)
.. [HOL79] S. Holm (1979). A simple sequentially rejective multiple test procedure. Scand. J.
   Statist. 6(2).
.. [BH95] Y. Benjamini, Y. Hochberg (1995). Controlling the false discovery rate. JRSS B 57(1).
.. [PS10] B. Phipson, G. K. Smyth (2010). Permutation p-values should never be zero.
.. [SAC07] M. D. Smucker, J. Allan, B. Carterette (2007). A comparison of statistical
   significance tests for information retrieval evaluation. CIKM 2007.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from metaeval._validation import check_alpha, check_choice
from metaeval.meta._resampling import (
    STAT_ATOL,
    STAT_RTOL,
    VAR_RTOL,
    ZERO_RTOL,
    Resamples,
    score_matrix,
)
from metaeval.meta.significance import benjamini_hochberg, holm
from metaeval.stats.paired import FAMILIES, _generator, _randomization_setup, family_pairs

__all__ = ["holm", "benjamini_hochberg", "westfall_young", "WestfallYoungResult", "FAMILIES"]

# (pairs x sign vectors) elements of one block of flipped statistics (~16 MB per array).
_BLOCK_ELEMENTS = 2_000_000


@dataclass(frozen=True, eq=False)
class WestfallYoungResult:
    """Westfall-Young adjusted p-values over a family of pairs.

    Attributes
    ----------
    family : {"all_pairs", "baseline"}
    baseline : system name or None
    procedure : {"maxT", "minP"}
    method : {"step-down", "single-step"}
    statistic : {"t", "mean"}
        The per-pair statistic max-T takes the maximum of (min-P does not depend on it).
    exact : bool
        True: all :math:`2^n` sign vectors; False: the identity and B random ones.
    n_resamples : int
        Size of the reference set (:math:`2^n` or B + 1).
    alpha : float
    system_a, system_b : tuple
        The pairs (diff = a - b).
    diff : ndarray
        Mean difference per pair.
    observed : ndarray
        |t| or |mean difference| per pair.
    p_value : ndarray
        The unadjusted randomisation p-value (as :func:`metaeval.stats.paired.randomization_test`
        on the same sign vectors).
    p_adjusted : ndarray
    null_distribution : ndarray
        Over the reference set: :math:`\\max_h |T_h(s)|` (max-T) or :math:`\\min_h p_h(s)` (min-P)
        over the whole family, the distribution the single-step adjustment reads.
    """

    family: str
    baseline: object
    procedure: str
    method: str
    statistic: str
    exact: bool
    n_resamples: int
    alpha: float
    system_a: tuple
    system_b: tuple
    diff: np.ndarray = field(repr=False)
    observed: np.ndarray = field(repr=False)
    p_value: np.ndarray = field(repr=False)
    p_adjusted: np.ndarray = field(repr=False)
    null_distribution: np.ndarray = field(repr=False)

    @property
    def significant(self) -> np.ndarray:
        """``p_adjusted < alpha`` per pair."""
        return self.p_adjusted < self.alpha

    def to_frame(self) -> pd.DataFrame:
        """One row per pair: system_a, system_b, diff, statistic, p_value, p_adjusted,
        significant."""
        return pd.DataFrame(
            {
                "system_a": list(self.system_a),
                "system_b": list(self.system_b),
                "diff": self.diff,
                "statistic": self.observed,
                "p_value": self.p_value,
                "p_adjusted": self.p_adjusted,
                "significant": self.significant,
            }
        )


def _flipped(Zb: np.ndarray, signsT: np.ndarray, Q: np.ndarray, scale: np.ndarray, stat: str):
    """Flipped statistics of a block of pairs: (pairs x sign vectors), in comparable units.

    "mean": |sum(s z)| (n |mean|). "t": r = S1^2 / (Q - S1^2 / n), S1 = sum(s z), Q = sum(z^2)
    (a sign flip leaves Q unchanged), which is increasing in |t| (t^2 = r (n - 1) / n) and the
    same function of |t| for every pair, so maxima over pairs are maxima of |t|.
    """
    n = Zb.shape[1]
    S1 = Zb @ signsT
    if stat == "mean":
        return np.abs(S1)
    a = S1 * S1
    dev = Q[:, None] - a / n
    with np.errstate(divide="ignore", invalid="ignore"):
        r = a / dev
    flat = dev <= VAR_RTOL * Q[:, None]
    if flat.any():
        # sd = 0 after the flip: t = 0 if the flipped mean is 0 too, else infinite.
        ci, cb = np.nonzero(flat)
        zero = np.abs(S1[ci, cb]) / n <= ZERO_RTOL * scale[ci]
        r[ci, cb] = np.where(zero, 0.0, np.inf)
    return r


def _threshold(obs: np.ndarray, n: int, stat: str) -> np.ndarray:
    """Lowest flipped statistic that counts as at least as extreme as ``obs`` (tie tolerance)."""
    if stat == "mean":
        m = obs / n
        return n * (m - (STAT_ATOL + STAT_RTOL * m))
    with np.errstate(invalid="ignore"):
        t = np.sqrt(obs * (n - 1) / n)
        t = np.maximum(t - (STAT_ATOL + STAT_RTOL * t), 0.0)
        thr = t * t * n / (n - 1)
    return np.where(np.isinf(obs), np.inf, thr)


def _to_user_units(v: np.ndarray, n: int, stat: str) -> np.ndarray:
    if stat == "mean":
        return v / n
    return np.sqrt(v * (n - 1) / n)


def _monotone(p_sorted_least_first: np.ndarray) -> np.ndarray:
    """Step-down monotonicity: a hypothesis's adjusted p is at least every more significant
    one's. Input ordered from the least to the most significant."""
    return np.maximum.accumulate(p_sorted_least_first[::-1])[::-1]


def westfall_young(
    scores,
    *,
    family: str,
    baseline=None,
    procedure: str = "maxT",
    method: str = "step-down",
    statistic: str = "t",
    alpha: float = 0.05,
    B: int | None = None,
    rng=None,
    resamples: Resamples | None = None,
    systems=None,
    topics=None,
    runs=None,
) -> WestfallYoungResult:
    r"""Westfall-Young max-T / min-P adjusted p-values on the paired randomisation distribution.

    For every pair h of the family, :math:`z_h = x_a - x_b` per topic and a statistic
    :math:`T_h` (``statistic="t"``: the paired t; ``"mean"``: the mean difference). The
    reference set is every sign vector s over the n topics (exact, when :math:`2^n \le B` and
    n <= 16) or the identity and B random ones; **one sign vector flips the topic for every
    pair at once**, which keeps the dependence between pairs. Over the reference set
    (N vectors, the observed one included, so no p is 0; Phipson & Smyth 2010):

    * raw p: :math:`p_h = \#\{s : |T_h(s)| \ge |T_h|\} / N` (Fisher's randomisation test);
    * single-step max-T: :math:`\tilde p_h = \#\{s : \max_k |T_k(s)| \ge |T_h|\} / N`;
    * step-down max-T (Westfall & Young 1993, Alg. 2.8): order the pairs
      :math:`|T_{r_1}| \ge \dots \ge |T_{r_m}|`;
      :math:`\tilde p_{r_j} = \max_{i \le j} \#\{s : \max_{k \ge i} |T_{r_k}(s)| \ge
      |T_{r_i}|\} / N`;
    * min-P: the same with :math:`p_h(s) = \#\{s' : |T_h(s')| \ge |T_h(s)|\} / N` in place of
      :math:`|T_h(s)|` and min for max, ordered by raw p (every pair's statistic becomes its own
      p-value first, so pairs with wide or narrow null distributions weigh alike).

    Ties are counted with the 1e-10 tolerance of docs/methods.md §1.2. Both control the
    family-wise error rate under the complete null hypothesis that the per-topic differences
    of all pairs are jointly symmetric about 0 (a topic's scores reflected about their centre
    are as likely as the observed ones), and step-down keeps that control for every partial
    null under subset pivotality (Westfall & Young 1993, §2.6). The randomised Tukey HSD
    (:func:`metaeval.meta.discriminative_power`, method "tukey") is the single-step max-T of
    the mean difference over all pairs with within-topic permutations instead of sign flips.

    Parameters
    ----------
    scores : array_like (S, T) or pandas.DataFrame
        Per-topic scores (rows = systems) or a tidy frame with columns run, topic, value.
    family : {"all_pairs", "baseline"}
        Required: every pair a < b, or every other system against ``baseline``
        (diff = system - baseline).
    baseline : system name, optional
        With ``family="baseline"``.
    procedure : {"maxT", "minP"}
    method : {"step-down", "single-step"}
    statistic : {"t", "mean"}
        What max-T maximises. The t balances pairs with noisy and steady differences; the mean
        difference gives the randomised Tukey HSD's ordering. Ignored by min-P.
    alpha : float
        For ``significant`` (``p_adjusted < alpha``) and the warning on too small a B.
    B : int, optional
        Random sign vectors when not exact; default 10000.
    rng : None, int, SeedSequence or Generator
        The sign vectors come from the same stream of ``rng`` as
        :func:`~metaeval.stats.paired.randomization_test` and
        :func:`~metaeval.stats.paired.paired_comparisons` use, so the raw p-values agree.
    resamples : Resamples, optional
        "randomization" sign vectors drawn beforehand by :func:`metaeval.meta.resamples`.
    systems : sequence, optional
        Names of the rows of an array ``scores``.
    topics, runs : selection, optional
        For a tidy frame.

    Returns
    -------
    WestfallYoungResult
    """
    check_choice("procedure", procedure, ("maxT", "minP"))
    check_choice("method", method, ("step-down", "single-step"))
    check_choice("statistic", statistic, ("t", "mean"))
    alpha = check_alpha(alpha)
    X, names, _ = score_matrix(scores, systems=systems, topics=topics, runs=runs)
    if resamples is not None:
        resamples.check("randomization", X)
    ia, ib = family_pairs(names, family, baseline)
    Z = X[ia] - X[ib]
    P, n = Z.shape
    signs, exact = _randomization_setup(
        n, B, resamples, alpha, lambda: _generator(rng, "randomization")
    )
    N = signs.shape[0]
    signsT = np.ascontiguousarray(signs.T)
    Q = (Z * Z).sum(axis=1)
    scale = np.abs(Z).max(axis=1)
    block = max(1, _BLOCK_ELEMENTS // N)

    def blocks(order):
        for start in range(0, order.size, block):
            rows = order[start : start + block]
            yield rows, _flipped(Z[rows], signsT, Q[rows], scale[rows], statistic)

    # The identity is the first reference vector: its column is the observed statistic, so the
    # observed value and its flips come from the same arithmetic.
    obs = _flipped(Z, signsT[:, :1], Q, scale, statistic)[:, 0]
    thresh = _threshold(obs, n, statistic)
    natural = np.arange(P)

    raw = np.empty(P, dtype=np.int64)
    if procedure == "maxT":
        if method == "single-step":
            max_null = np.full(N, -np.inf)
            for rows, st in blocks(natural):
                raw[rows] = np.count_nonzero(st >= thresh[rows, None], axis=1)
                np.maximum(max_null, st.max(axis=0), out=max_null)
            srt = np.sort(max_null)
            adj = (N - np.searchsorted(srt, thresh, side="left")) / N
        else:
            # Least significant first: a running maximum over the pairs seen so far is the
            # maximum over every pair at most as significant (Alg. 2.8's successive maxima);
            # after the last pair it is the maximum over the family.
            order = np.argsort(obs, kind="stable")
            counts = np.empty(P, dtype=np.int64)
            max_null = np.full(N, -np.inf)
            done = 0
            for rows, st in blocks(order):
                raw[rows] = np.count_nonzero(st >= thresh[rows, None], axis=1)
                cm = np.maximum.accumulate(st, axis=0)
                np.maximum(cm, max_null, out=cm)
                max_null = cm[-1].copy()
                counts[done : done + rows.size] = np.count_nonzero(cm >= thresh[rows, None], axis=1)
                done += rows.size
            adj = np.empty(P)
            adj[order] = _monotone(counts / N)
        null = _to_user_units(max_null, n, statistic)
    else:
        # p_h(s) as counts c_h(s) = #{s' : T_h(s') >= T_h(s)}: integers, compared exactly.
        def own_counts(st):
            c = np.empty(st.shape, dtype=np.int64)
            srt = np.sort(st, axis=1)
            thr = _threshold(st, n, statistic)
            for i in range(st.shape[0]):
                c[i] = N - np.searchsorted(srt[i], thr[i], side="left")
            return c

        min_null = np.full(N, np.iinfo(np.int64).max)
        if method == "single-step":
            for rows, st in blocks(natural):
                c = own_counts(st)
                raw[rows] = c[:, 0]
                np.minimum(min_null, c.min(axis=0), out=min_null)
            srt = np.sort(min_null)
            adj = np.searchsorted(srt, raw, side="right") / N
        else:
            # The order needs every raw p first (a cheap pass), then the counts in that order.
            for rows, st in blocks(natural):
                raw[rows] = np.count_nonzero(st >= thresh[rows, None], axis=1)
            order = np.argsort(-raw, kind="stable")  # largest raw p (least significant) first
            counts = np.empty(P, dtype=np.int64)
            done = 0
            for rows, st in blocks(order):
                cm = np.minimum.accumulate(own_counts(st), axis=0)
                np.minimum(cm, min_null, out=cm)
                min_null = cm[-1].copy()
                counts[done : done + rows.size] = np.count_nonzero(cm <= raw[rows, None], axis=1)
                done += rows.size
            adj = np.empty(P)
            adj[order] = _monotone(counts / N)
        null = min_null / N
    return WestfallYoungResult(
        family=family,
        baseline=baseline,
        procedure=procedure,
        method=method,
        statistic=statistic,
        exact=exact,
        n_resamples=N,
        alpha=alpha,
        system_a=tuple(names[i] for i in ia),
        system_b=tuple(names[i] for i in ib),
        diff=Z.mean(axis=1),
        observed=_to_user_units(obs, n, statistic),
        p_value=raw / N,
        p_adjusted=np.minimum(adj, 1.0),
        null_distribution=null,
    )
