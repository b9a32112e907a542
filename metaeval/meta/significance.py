"""Pairwise significance tests between runs, with multiple-comparison corrections.

The user-facing counterpart of :mod:`metaeval.meta.discrimination`: the same per-topic score
matrices and the same vectorised resampling machinery, but reporting p-values, corrected
p-values and effect sizes per pair instead of a single discriminative power.

References
----------
.. [SAC07] M. D. Smucker, J. Allan, B. Carterette (2007). A comparison of statistical
   significance tests for information retrieval evaluation. CIKM 2007.
.. [S06] T. Sakai (2006). Evaluating evaluation metrics based on the bootstrap. SIGIR 2006.
.. [HOL] S. Holm (1979). A simple sequentially rejective multiple test procedure. Scand. J.
   Statist. 6(2).
.. [BH] Y. Benjamini, Y. Hochberg (1995). Controlling the false discovery rate. JRSS B 57(1).
.. [PS] B. Phipson, G. K. Smyth (2010). Permutation p-values should never be zero. Stat. Appl.
   Genet. Mol. Biol. 9(1).
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from metaeval._validation import as_generator, check_alpha, check_choice
from metaeval._warnings import warn
from metaeval.meta._resampling import (
    STAT_ATOL,
    STAT_RTOL,
    Resamples,
    bootstrap_core,
    check_B,
    observed_t,
    score_matrix,
)
from metaeval.meta._resampling import resamples as draw_resamples

__all__ = ["compare", "holm", "benjamini_hochberg"]

# Resamples of the randomisation and bootstrap tests when neither B nor resamples is given.
DEFAULT_COMPARE_B = 10000
# Sign vectors x pairs evaluated at once by the randomisation test (bounds memory to ~32 MB).
_RAND_ELEMENTS = 4_000_000
# The randomisation test enumerates all 2^T sign vectors when 2^T <= B, but never beyond this
# many topics (2^16 vectors), to keep the enumeration's memory bounded whatever B is.
_MAX_EXACT_TOPICS = 16


def holm(p) -> np.ndarray:
    r"""Holm's step-down adjusted p-values (Holm 1979), controlling the family-wise error rate.

    With the m p-values sorted ascending, :math:`\tilde p_{(i)} = \max_{j \le i}
    \min(1, (m - j + 1) p_{(j)})`.
    """
    p = _p_values(p)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    adj_sorted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj_sorted
    return out


def benjamini_hochberg(p) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (false discovery rate), via scipy."""
    p = _p_values(p)
    if p.size == 0:
        return p.copy()
    return stats.false_discovery_control(p, method="bh")


def _p_values(p) -> np.ndarray:
    """p-values as a 1-D float array, each in [0, 1] (a NaN would count in m but not be
    ranked: a silent change of the family)."""
    try:
        p = np.asarray(p, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("p-values must be numbers") from None
    if p.ndim != 1:
        raise ValueError(f"p-values must be a 1-D sequence, got shape {p.shape}")
    bad = ~((p >= 0.0) & (p <= 1.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"p-values must be numbers in [0, 1]; p[{i}] is {float(p[i])!r}")
    return p


def _exact(n_topics: int, B: int) -> bool:
    """Whether the randomisation test enumerates every sign vector of ``n_topics`` topics."""
    return n_topics <= _MAX_EXACT_TOPICS and 2**n_topics <= B


def _randomization(Z: np.ndarray, B: int, shared: Resamples | None):
    """Fisher's paired randomisation (sign-flip) test on the mean difference, per row of Z.

    Exact (all 2^T sign vectors, p = count / 2^T) when 2^T <= B and T <= 16; otherwise the B
    shared random sign vectors and p = (1 + count) / (B + 1) (Phipson & Smyth 2010), which
    keeps the sampled test valid: P(p <= alpha) <= alpha under the null.
    """
    P, n = Z.shape
    zbar = Z.mean(axis=1)
    absobs = np.abs(zbar)
    thresh = absobs - (STAT_ATOL + STAT_RTOL * absobs)
    exact = _exact(n, B)
    if exact:
        signs = 1.0 - 2.0 * np.array(list(itertools.product((0, 1), repeat=n)), dtype=float)
    else:
        signs = shared.signs
    N = signs.shape[0]
    counts = np.zeros(P, dtype=np.int64)
    block = max(1, _RAND_ELEMENTS // N)
    for start in range(0, P, block):
        sl = slice(start, min(P, start + block))
        perm_means = np.abs(Z[sl] @ signs.T) / n  # (pairs x sign vectors)
        counts[sl] = np.count_nonzero(perm_means >= thresh[sl, None], axis=1)
    if exact:
        return zbar, counts / N, True
    return zbar, (1.0 + counts) / (N + 1.0), False


def compare(
    scores,
    *,
    test: Literal["t", "randomization", "bootstrap"] = "t",
    correction: Literal["holm", "bh"] | None = "holm",
    alpha: float = 0.05,
    B: int | None = None,
    rng=None,
    baseline=None,
    systems=None,
    resamples: Resamples | None = None,
    topics=None,
    runs=None,
) -> pd.DataFrame:
    r"""Paired significance tests between runs, with corrections and effect sizes.

    For each pair (a, b) the per-topic differences are :math:`z_i = s_{a,i} - s_{b,i}`.

    * ``test="t"``: paired Student t-test, ``scipy.stats.ttest_rel`` (two-sided);
      ``statistic`` is t.
    * ``test="randomization"``: Fisher's paired randomisation test (Smucker et al. 2007):
      under the null each :math:`z_i` is equally likely to have either sign; the statistic is
      the mean difference and p is the share of sign vectors with
      :math:`|\overline{\pm z}| \ge |\bar z|`. It is **exact** (all :math:`2^T` sign vectors
      enumerated, p = count / :math:`2^T`) when :math:`2^T \le B` (and T <= 16); otherwise it
      uses B random sign vectors shared by all pairs and p = (1 + count) / (B + 1) (Phipson &
      Smyth 2010), so that B random sign vectors with :math:`\alpha (B + 1) \le 1` cannot
      give a p-value below alpha (a warning says so).
      ``statistic`` is the mean difference.
    * ``test="bootstrap"``: Sakai's (2006) studentised, null-shifted paired bootstrap with B
      samples shared by all pairs, exactly as in
      :func:`~metaeval.meta.discrimination.discriminative_power`; p is the ASL and
      ``statistic`` the observed t.

    Resampled statistics are compared with the observed one with a tolerance
    (``>= obs - (1e-10 + 1e-10 |obs|)``), so exact ties count (docs/methods.md §1.2).

    Corrections: ``"holm"`` (Holm 1979, family-wise error rate), ``"bh"``
    (Benjamini-Hochberg 1995, false discovery rate, ``scipy.stats.false_discovery_control``)
    or ``None``; the family is all pairs compared in this call. A pair is ``significant`` when
    ``p_adjusted < alpha`` (strict, as Sakai's discriminative power).

    ``effect_size`` is the paired Cohen's d (also called :math:`d_z`),
    :math:`\bar z / \hat\sigma_z` with ddof = 1: the mean difference in units of the standard
    deviation of the per-topic differences.

    Degenerate pairs (all differences equal, sd = 0): if the mean difference is 0 the pair is
    not different (statistic 0, p = 1, effect size 0); otherwise it differs on every topic by
    the same amount (t and effect size :math:`\pm\infty`, p = 0 for the t-test and the
    bootstrap; the randomisation test needs no special case and gives its exact p).

    Parameters
    ----------
    scores : array_like (S, T) or pandas.DataFrame
        Per-topic scores (rows = runs) or a tidy frame with columns ``run``, ``topic``,
        ``value``.
    test : {"t", "randomization", "bootstrap"}
    correction : {"holm", "bh", None}
    alpha : float
        Significance level in (0, 1).
    B : int, optional
        Resamples for the randomisation and bootstrap tests; default 10000. Not with
        ``resamples``, which hold their own number.
    rng : None, int, SeedSequence or Generator
        Randomness for the resampling tests (ignored with ``resamples``).
    baseline : run name, optional
        Compare every other run with this one only (``system_b`` is the baseline, so ``diff``
        = run - baseline). Default: all pairs a < b in run order.
    systems : sequence, optional
        Run names for an array ``scores``.
    resamples : Resamples, optional
        Bootstrap samples or sign vectors drawn beforehand by
        :func:`~metaeval.meta.resamples` (method "bootstrap" or "randomization"), shared with
        other measures; ``B`` then comes from them (a different ``B`` is an error).
    topics, runs : selection, optional
        For a tidy frame: only these topics and runs.

    Returns
    -------
    pandas.DataFrame
        Columns ``system_a, system_b, mean_a, mean_b, diff, statistic, p_value, p_adjusted,
        significant, effect_size``; ``diff = mean_a - mean_b``.
    """
    check_choice("test", test, ("t", "randomization", "bootstrap"))
    check_choice("correction", correction, ("holm", "bh", None))
    alpha = check_alpha(alpha)
    if B is not None:
        B = check_B(B)
    gen = as_generator(rng)
    X, names, _ = score_matrix(scores, systems=systems, topics=topics, runs=runs)
    if resamples is not None and B is not None and B != resamples.B:
        raise ValueError(f"B={B} but the resamples hold {resamples.B}; give one or the other")
    if test != "t":
        if resamples is None:
            resamples = draw_resamples(
                test, n_topics=X.shape[1], B=DEFAULT_COMPARE_B if B is None else B, rng=gen
            )
        resamples.check(test, X)
        B = check_B(resamples.B, alpha if test == "bootstrap" else None)
        if test == "randomization" and not _exact(X.shape[1], B) and alpha * (B + 1) <= 1:
            warn(
                f"B={B} random sign vectors cannot give a p-value below alpha={alpha:g} (the "
                f"smallest is 1/{B + 1}); use B >= {math.ceil(1 / alpha)}, e.g. 10000"
            )
    S, n = X.shape
    if baseline is None:
        ia, ib = np.triu_indices(S, 1)
    else:
        if baseline not in names:
            raise ValueError(f"baseline {baseline!r} is not one of the runs {list(names)}")
        j = names.index(baseline)
        ia = np.array([i for i in range(S) if i != j])
        ib = np.full(ia.size, j)
    Z = X[ia] - X[ib]
    zbar, var, t_obs, const, zero_mean = observed_t(Z)
    if test == "t":
        # Degenerate pairs make scipy warn about cancellation; they are overridden below.
        with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            res = stats.ttest_rel(X[ia], X[ib], axis=1)
        statistic = np.asarray(res.statistic, dtype=float)
        p = np.asarray(res.pvalue, dtype=float)
        statistic = np.where(const, t_obs, statistic)
        p = np.where(const, np.where(zero_mean, 1.0, 0.0), p)
    elif test == "randomization":
        statistic, p, _ = _randomization(Z, B, resamples)
    else:
        statistic, p, _ = bootstrap_core(Z, resamples.counts(), alpha)
    if correction == "holm":
        p_adj = holm(p)
    elif correction == "bh":
        p_adj = benjamini_hochberg(p)
    else:
        p_adj = p.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        effect = zbar / np.sqrt(var)
    effect = np.where(const, np.where(zero_mean, 0.0, np.copysign(np.inf, zbar)), effect)
    means = X.mean(axis=1)
    return pd.DataFrame(
        {
            "system_a": [names[i] for i in ia],
            "system_b": [names[i] for i in ib],
            "mean_a": means[ia],
            "mean_b": means[ib],
            "diff": means[ia] - means[ib],
            "statistic": statistic,
            "p_value": p,
            "p_adjusted": p_adj,
            "significant": p_adj < alpha,
            "effect_size": effect,
        }
    )
