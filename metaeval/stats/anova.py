r"""ANOVA and Tukey's HSD test on a (systems x topics) score matrix.

In an IR test collection every system is run on the same topics, so the scores form a
two-factor design without replication: system (the factor of interest) and topic (a block, the
source of most of the variation). :func:`anova` splits the total variation into system, topic
and residual parts; the residual mean square :math:`V_E` is what Sakai's effect sizes
(:math:`(\bar x_i - \bar x_j) / \sqrt{V_E}`) and topic-set-size design
(:mod:`metaeval.stats.topic_set_size`) rest on. :func:`tukey_hsd` is the classical Tukey HSD
test of every pair of systems on that design, with simultaneous confidence intervals, and
:func:`randomized_tukey_hsd` its distribution-free version, which permutes the systems' scores
within every topic (Carterette 2012; Sakai 2014).

References
----------
.. [N03] Y. Nagata (2003). How to Design the Sample Size (in Japanese). Asakura Shoten.
.. [CAR] B. Carterette (2012). Multiple testing in statistical analysis of systems-based
   information retrieval experiments. ACM TOIS 30(1).
.. [S14] T. Sakai (2014). Statistical reform in information retrieval? SIGIR Forum 48(1).
.. [S15] T. Sakai (2015). 情報アクセス評価方法論 (Information access evaluation methodology).
   Corona Publishing; Table 5.1 is the 3 systems x 20 topics worked example the tests check.
.. [S18] T. Sakai (2018). Laboratory Experiments in Information Retrieval: Sample Sizes,
   Effect Sizes, and Statistical Power. Springer, chapters 3-5.

The procedures are those of docs/methods.md §1.2 (the randomised test) and §7.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from metaeval._validation import check_alpha, check_choice
from metaeval.meta._resampling import (
    DEFAULT_B,
    STAT_ATOL,
    STAT_RTOL,
    VAR_RTOL,
    Resamples,
    check_B,
    kth,
    score_matrix,
    tukey_ranges,
)
from metaeval.meta._resampling import resamples as draw_resamples

__all__ = [
    "AnovaResult",
    "TukeyHSDResult",
    "anova",
    "tukey_hsd",
    "randomized_tukey_hsd",
]

DESIGNS = ("two-way", "one-way")


# --------------------------------------------------------------------------------------------
# ANOVA
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class AnovaResult:
    """Result of :func:`anova`.

    Attributes
    ----------
    table : pandas.DataFrame
        The ANOVA table, one row per source (index ``system``, ``topic`` (two-way only),
        ``residual``, ``total``) with columns ``ss`` (sum of squares), ``df``, ``ms`` (mean
        square, ss / df), ``F`` (ms / V_E) and ``p`` (upper tail of the F distribution).
    design : {"two-way", "one-way"}
    V_E : float
        The residual mean square, the estimate of the within-system variance sigma^2.
    df_E : int
        Its degrees of freedom: (S - 1)(T - 1) two-way, S(T - 1) one-way.
    means : numpy.ndarray
        The system means, in row order.
    systems, topics : tuple
        System names and topic labels, in row and column order.
    """

    table: pd.DataFrame
    design: str
    V_E: float
    df_E: int
    means: np.ndarray
    systems: tuple
    topics: tuple

    def to_frame(self) -> pd.DataFrame:
        """The ANOVA table (a copy of :attr:`table`)."""
        return self.table.copy()

    @property
    def n_systems(self) -> int:
        return len(self.systems)

    @property
    def n_topics(self) -> int:
        return len(self.topics)

    @property
    def F(self) -> float:
        """F statistic of the system factor."""
        return float(self.table.loc["system", "F"])

    @property
    def p(self) -> float:
        """p-value of the system factor."""
        return float(self.table.loc["system", "p"])

    def __repr__(self) -> str:
        return (
            f"AnovaResult(design={self.design!r}, F={self.F:.4g}, p={self.p:.4g}, "
            f"V_E={self.V_E:.4g}, df_E={self.df_E}, systems={self.n_systems}, "
            f"topics={self.n_topics})"
        )


def anova(
    scores,
    *,
    design: Literal["two-way", "one-way"] = "two-way",
    systems=None,
    topics=None,
    runs=None,
) -> AnovaResult:
    r"""Analysis of variance of a (systems x topics) score matrix (Sakai 2018, ch. 3).

    **Two-way without replication** (``design="two-way"``, the default, for the usual IR
    experiment where every system is run on the same topics). With :math:`x_{ij}` the score of
    system i on topic j, S systems, T topics, system means :math:`\bar x_{i\cdot}`, topic means
    :math:`\bar x_{\cdot j}` and grand mean :math:`\bar x`:

    .. math::

        S_A = T \sum_i (\bar x_{i\cdot} - \bar x)^2, \quad
        S_B = S \sum_j (\bar x_{\cdot j} - \bar x)^2, \quad
        S_E = \sum_{ij} (x_{ij} - \bar x_{i\cdot} - \bar x_{\cdot j} + \bar x)^2,

    with :math:`\phi_A = S - 1`, :math:`\phi_B = T - 1`, :math:`\phi_E = (S-1)(T-1)`; mean
    squares :math:`V = S/\phi`; :math:`F_A = V_A / V_E` against :math:`F(\phi_A, \phi_E)` and
    :math:`F_B = V_B / V_E` against :math:`F(\phi_B, \phi_E)`. :math:`S_A + S_B + S_E` is the
    total sum of squares.

    **One-way** (``design="one-way"``, for unpaired data: each system judged on its own,
    independent topics, the columns then being replicates). The topic term is dropped:
    :math:`S_E = \sum_{ij} (x_{ij} - \bar x_{i\cdot})^2`, :math:`\phi_E = S(T - 1)`. On paired
    IR data it lumps the topic variation into the error and is far too conservative.

    A sum of squares below 1e-13 of the total is float noise and is taken as 0. With a zero
    residual (an exactly additive matrix), F is infinite (p = 0) for a factor with a non-zero
    sum of squares and undefined (NaN) for one without.

    Parameters
    ----------
    scores : array_like (S, T) or pandas.DataFrame
        Per-topic scores, rows = systems; or a tidy frame with columns ``run``, ``topic``,
        ``value``. Every system needs a score on every topic.
    design : {"two-way", "one-way"}
    systems : sequence, optional
        Names of the S rows of an array (default 0..S-1).
    topics, runs : selection, optional
        For a tidy frame: only these topics and runs (``"601-650"``, a list, a file).

    Returns
    -------
    AnovaResult

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.5, 0.4, 0.9], [0.3, 0.3, 0.6]])
    >>> res = anova(X)
    >>> res.df_E, round(res.V_E, 4)
    (2, 0.005)
    """
    check_choice("design", design, DESIGNS)
    X, names, labels = score_matrix(scores, systems=systems, topics=topics, runs=runs)
    return _anova(X, names, labels, design)


def _anova(X: np.ndarray, names: tuple, labels: tuple, design: str) -> AnovaResult:
    S, T = X.shape
    grand = X.mean()
    row = X.mean(axis=1)
    col = X.mean(axis=0)
    ss_total = float(((X - grand) ** 2).sum())
    sources = [("system", T * float(((row - grand) ** 2).sum()), S - 1)]
    if design == "two-way":
        sources.append(("topic", S * float(((col - grand) ** 2).sum()), T - 1))
        # The residual is computed from its own formula, not as total minus the effects, so
        # that it keeps full precision when the effects dominate (they do in IR: topics).
        resid = X - row[:, None] - col[None, :] + grand
        df_e = (S - 1) * (T - 1)
    else:
        resid = X - row[:, None]
        df_e = S * (T - 1)
    ss_e = float((resid * resid).sum())
    if ss_e <= VAR_RTOL * ss_total:
        ss_e = 0.0  # X is exactly additive: the residual is float noise
    ve = ss_e / df_e
    index, ss, df, ms, F, p = [], [], [], [], [], []
    for name, s, d in sources:
        if s <= VAR_RTOL * ss_total:
            s = 0.0  # identical means seen through float rounding
        m = s / d
        if ve > 0:
            f = m / ve
            pv = float(stats.f.sf(f, d, df_e))
        elif m > 0:
            f, pv = np.inf, 0.0
        else:
            f = pv = np.nan
        index.append(name)
        ss.append(s)
        df.append(d)
        ms.append(m)
        F.append(f)
        p.append(pv)
    index += ["residual", "total"]
    ss += [ss_e, ss_total]
    df += [df_e, S * T - 1]
    ms += [ve, np.nan]
    F += [np.nan, np.nan]
    p += [np.nan, np.nan]
    table = pd.DataFrame(
        {"ss": ss, "df": df, "ms": ms, "F": F, "p": p}, index=pd.Index(index, name="source")
    )
    means = row.copy()
    means.setflags(write=False)
    return AnovaResult(table, design, ve, df_e, means, names, labels)


# --------------------------------------------------------------------------------------------
# Tukey HSD
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class TukeyHSDResult:
    """Result of :func:`tukey_hsd` and :func:`randomized_tukey_hsd`.

    Attributes
    ----------
    pairs : pandas.DataFrame
        One row per pair (a before b in system order): ``system_a``, ``system_b``,
        ``mean_a``, ``mean_b``, ``diff`` (mean_a - mean_b), ``effect_size`` (diff /
        sqrt(V_E), Sakai's ES_E), ``statistic`` (studentised: q = |diff| / sqrt(V_E / T);
        randomised: |diff|), ``p`` (adjusted for all pairs: family-wise), ``significant``
        (p < alpha), ``ci_low`` and ``ci_high`` (the simultaneous interval, diff -+
        ``critical_difference``).
    method : {"studentized", "randomized"}
    design : {"two-way", "one-way"}
        The randomised test is always two-way (topic-blocked).
    alpha : float
    V_E : float
        Residual mean square of the ANOVA (:attr:`anova`), the variance the effect sizes use.
    df_E : int
    critical_difference : float
        The honestly significant difference: a pair whose |diff| exceeds it is significant, and
        its interval excludes 0. Studentised: q_crit sqrt(V_E / T). Randomised: the
        ceil(alpha B)-th largest permuted range.
    anova : AnovaResult
        The ANOVA the test rests on (its table: ``anova.to_frame()``).
    systems, topics : tuple
    q_crit : float or None
        Studentised: the 1 - alpha quantile of the studentised range distribution with S means
        and df_E degrees of freedom.
    B : int or None
        Randomised: the number of permutations.
    range_distribution : numpy.ndarray or None
        Randomised: the B permuted ranges max - min of the system means, in draw order.
    resamples : Resamples or None
        Randomised: the permutations used (their seed), to test other scores on the same ones.
    """

    pairs: pd.DataFrame
    method: str
    design: str
    alpha: float
    V_E: float
    df_E: int
    critical_difference: float
    anova: AnovaResult
    systems: tuple
    topics: tuple
    q_crit: float | None = None
    B: int | None = None
    range_distribution: np.ndarray | None = None
    resamples: Resamples | None = None

    def to_frame(self) -> pd.DataFrame:
        """One row per pair of systems (a copy of :attr:`pairs`)."""
        return self.pairs.copy()

    @property
    def n_topics(self) -> int:
        return len(self.topics)

    @property
    def n_pairs(self) -> int:
        return int(len(self.pairs))

    @property
    def n_significant(self) -> int:
        return int(self.pairs["significant"].sum())

    def __repr__(self) -> str:
        extra = f", B={self.B}" if self.B is not None else ""
        return (
            f"TukeyHSDResult(method={self.method!r}, design={self.design!r}, "
            f"significant={self.n_significant}/{self.n_pairs}, "
            f"critical_difference={self.critical_difference:.4g}, alpha={self.alpha}{extra}, "
            f"systems={len(self.systems)}, topics={self.n_topics})"
        )


def tukey_hsd(
    scores,
    *,
    alpha: float = 0.05,
    design: Literal["two-way", "one-way"] = "two-way",
    systems=None,
    topics=None,
    runs=None,
) -> TukeyHSDResult:
    r"""Tukey's HSD test of every pair of systems, with simultaneous intervals (Sakai 2018, ch. 4).

    From the ANOVA of the scores (:func:`anova`, two-way by default), for systems i and j with
    means :math:`\bar x_i, \bar x_j` over T topics:

    .. math::

        q_{ij} = \frac{|\bar x_i - \bar x_j|}{\sqrt{V_E / T}}, \qquad
        p_{ij} = P(Q_{S, \phi_E} \ge q_{ij}), \qquad
        \bar x_i - \bar x_j \pm q_{S, \phi_E; \alpha} \sqrt{V_E / T},

    where :math:`Q_{S, \phi_E}` follows the studentised range distribution of S means with
    :math:`\phi_E` degrees of freedom (``scipy.stats.studentized_range``) and
    :math:`q_{S, \phi_E; \alpha}` is its upper alpha point. The p-values are adjusted for all
    S(S-1)/2 comparisons (the family-wise error rate is alpha), and the intervals cover all
    true differences together with probability 1 - alpha. The effect size of a pair is
    :math:`ES_E = (\bar x_i - \bar x_j) / \sqrt{V_E}` (Sakai 2014).

    The two-way design is the right one for IR scores: topics are blocks, and
    :math:`V_E` is the variance left after removing both the system and the topic effects,
    with :math:`\phi_E = (S-1)(T-1)`. With two systems, the two-way test is the paired t-test
    (:math:`q = \sqrt 2 |t|`). ``design="one-way"`` is the textbook test for independent
    samples (unpaired data), as ``statsmodels.stats.multicomp.pairwise_tukeyhsd``.

    With :math:`V_E = 0` (an exactly additive matrix), a pair with a non-zero difference has
    q = inf and p = 0, identical systems q = 0 and p = 1.

    Parameters
    ----------
    scores : array_like (S, T) or pandas.DataFrame
        Per-topic scores, rows = systems; or a tidy frame with columns ``run``, ``topic``,
        ``value``.
    alpha : float
        Family-wise significance level, in (0, 1); the intervals have confidence 1 - alpha.
    design : {"two-way", "one-way"}
    systems : sequence, optional
        Names of the S rows of an array.
    topics, runs : selection, optional
        For a tidy frame: only these topics and runs.

    Returns
    -------
    TukeyHSDResult

    Notes
    -----
    scipy integrates the studentised range distribution numerically, a few milliseconds a
    pair: about 10 s for the 1,711 pairs of 59 systems. :func:`randomized_tukey_hsd` is
    faster on many systems.
    """
    alpha = check_alpha(alpha)
    check_choice("design", design, DESIGNS)
    X, names, labels = score_matrix(scores, systems=systems, topics=topics, runs=runs)
    res = _anova(X, names, labels, design)
    S, T = X.shape
    ia, ib = np.triu_indices(S, 1)
    d = res.means[ia] - res.means[ib]
    absd = np.abs(d)
    se = np.sqrt(res.V_E / T)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(absd == 0, 0.0, absd / se)
    p = np.ones_like(q)
    # The distribution is integrated per value (slow): once per distinct finite positive q.
    finite = np.isfinite(q) & (q > 0)
    if finite.any():
        uniq, inverse = np.unique(q[finite], return_inverse=True)
        p[finite] = np.clip(stats.studentized_range.sf(uniq, S, res.df_E), 0.0, 1.0)[inverse]
    p[np.isinf(q)] = 0.0
    q_crit = float(stats.studentized_range.ppf(1.0 - alpha, S, res.df_E))
    hsd = q_crit * float(se)
    pairs = _pairs_frame(names, res, ia, ib, q, p, alpha, hsd)
    return TukeyHSDResult(
        pairs=pairs,
        method="studentized",
        design=design,
        alpha=alpha,
        V_E=res.V_E,
        df_E=res.df_E,
        critical_difference=hsd,
        anova=res,
        systems=names,
        topics=labels,
        q_crit=q_crit,
    )


def randomized_tukey_hsd(
    scores,
    *,
    B: int | None = None,
    alpha: float = 0.05,
    rng=None,
    resamples: Resamples | None = None,
    systems=None,
    topics=None,
    runs=None,
) -> TukeyHSDResult:
    r"""The randomised Tukey HSD test, topic by topic (Carterette 2012; Sakai 2014).

    For b = 1..B the S scores of **every topic** are permuted among the systems independently
    (the topic is the block: the permutation never moves a score to another topic, which a
    one-way permutation of all S T scores would do, mixing the large topic effects into the
    null distribution), and :math:`r_b = \max_i \bar x^{*b}_i - \min_i \bar x^{*b}_i` is the
    range of the permuted system means. Then, for every pair,

    .. math::

        p_{ij} = \frac{\#\{b : r_b \ge |\bar x_i - \bar x_j|\}}{B}, \qquad
        \bar x_i - \bar x_j \pm r_{(k)}, \quad k = \lceil \alpha B \rceil,

    one reference distribution (of the largest difference among all systems) for all pairs,
    which controls the family-wise error rate; :math:`r_{(k)}`, the k-th largest :math:`r_b`,
    is the critical difference and the half-width of the simultaneous intervals (a pair is
    significant exactly when its interval excludes 0). With two systems this is Fisher's
    randomisation (sign-flip) test. The effect sizes :math:`(\bar x_i - \bar x_j)/\sqrt{V_E}`
    use the residual variance of the two-way ANOVA (:attr:`TukeyHSDResult.anova`).

    The permutations and the p-values are those of
    ``metaeval.meta.discriminative_power(..., method="tukey")`` (docs/methods.md §1.2, ties
    within 1e-10 count as at least as extreme): the same ``rng`` or ``resamples`` give the
    same p-values.

    Parameters
    ----------
    scores : array_like (S, T) or pandas.DataFrame
        Per-topic scores, rows = systems; or a tidy frame with columns ``run``, ``topic``,
        ``value``.
    B : int, optional
        Number of permutations, default 5000 (or that of ``resamples``).
    alpha : float
        Family-wise significance level, in (0, 1).
    rng : None, int, SeedSequence or Generator
        The only source of randomness; None draws fresh entropy. Ignored with ``resamples``.
    resamples : Resamples, optional
        Permutations drawn beforehand by ``metaeval.meta.resamples("tukey", ...)``, shared with
        other measures or judgment sets.
    systems : sequence, optional
        Names of the S rows of an array.
    topics, runs : selection, optional
        For a tidy frame: only these topics and runs.

    Returns
    -------
    TukeyHSDResult

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).random((4, 25))
    >>> res = randomized_tukey_hsd(X, B=1000, rng=1)
    >>> res.n_pairs, res.range_distribution.shape
    (6, (1000,))
    """
    alpha = check_alpha(alpha)
    X, names, labels = score_matrix(scores, systems=systems, topics=topics, runs=runs)
    S, T = X.shape
    if resamples is None:
        resamples = draw_resamples(
            "tukey", n_topics=T, n_systems=S, B=DEFAULT_B["tukey"] if B is None else B, rng=rng
        )
    elif not isinstance(resamples, Resamples):
        raise TypeError(
            "resamples must come from metaeval.meta.resamples('tukey', ...), "
            f"got {type(resamples).__name__}"
        )
    elif B is not None and B != resamples.B:
        raise ValueError(f"B={B} but the resamples hold {resamples.B}; give one or the other")
    resamples.check("tukey", X)
    B = check_B(resamples.B, alpha)
    res = _anova(X, names, labels, "two-way")
    ranges = tukey_ranges(X, B, np.random.default_rng(resamples.seed))
    r_sorted = np.sort(ranges)
    ia, ib = np.triu_indices(S, 1)
    absd = np.abs(res.means[ia] - res.means[ib])
    # A permuted range tied with the observed difference counts as at least as extreme, even
    # when float rounding put it a hair below (docs/methods.md §1.2).
    thresh = absd - (STAT_ATOL + STAT_RTOL * absd)
    p = (B - np.searchsorted(r_sorted, thresh, side="left")) / B
    crit = float(r_sorted[B - kth(alpha, B)])
    pairs = _pairs_frame(names, res, ia, ib, absd, p, alpha, crit)
    ranges.setflags(write=False)
    return TukeyHSDResult(
        pairs=pairs,
        method="randomized",
        design="two-way",
        alpha=alpha,
        V_E=res.V_E,
        df_E=res.df_E,
        critical_difference=crit,
        anova=res,
        systems=names,
        topics=labels,
        B=B,
        range_distribution=ranges,
        resamples=resamples,
    )


def _pairs_frame(names, res: AnovaResult, ia, ib, statistic, p, alpha, half_width):
    d = res.means[ia] - res.means[ib]
    sd = np.sqrt(res.V_E)
    with np.errstate(divide="ignore", invalid="ignore"):
        # V_E = 0: a non-zero difference is infinitely many residual sds; none is 0.
        effect = np.where(d == 0, 0.0, d / sd)
    return pd.DataFrame(
        {
            "system_a": [names[i] for i in ia],
            "system_b": [names[j] for j in ib],
            "mean_a": res.means[ia],
            "mean_b": res.means[ib],
            "diff": d,
            "effect_size": effect,
            "statistic": statistic,
            "p": p,
            "significant": p < alpha,
            "ci_low": d - half_width,
            "ci_high": d + half_width,
        }
    )
