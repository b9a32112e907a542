"""Generalizability theory for a fully crossed systems x topics design: G-study and D-study.

A score matrix X (S systems x T topics) is modelled as random effects (Brennan 2001, ch. 2-3)

.. math::

    X_{st} = \\mu + \\nu_s + \\nu_t + \\nu_{st,e},

with uncorrelated effects of variances :math:`\\sigma^2(s)` (systems), :math:`\\sigma^2(t)`
(topics) and :math:`\\sigma^2(st,e)` (system-topic interaction confounded with error). The
**G-study** (:func:`g_study`) estimates the three variance components from the two-way ANOVA
mean squares, with confidence intervals. The **D-study** (:func:`d_study`) projects them onto a
collection of :math:`n'` topics: the generalizability coefficient :math:`E\\rho^2` (stability
of the *ranking* of systems) and the dependability index :math:`\\Phi` (stability of their
*absolute* scores), the number of topics needed for a target value (:func:`topics_needed`), and
what :math:`E\\rho^2` means in Kendall-tau terms (:func:`expected_tau`, :func:`simulate_tau`).

References
----------
.. [B01] R. L. Brennan (2001). Generalizability Theory. Springer. (ANOVA estimators, ch. 2-3;
   Satterthwaite and jackknife intervals, Feldt's and Arteaga et al.'s intervals for the
   coefficients, ch. 6; Synthetic Data Sets No. 1 and No. 4.)
.. [BL07] D. Bodoff, P. Li (2007). Test theory for assessing IR test collections. SIGIR 2007.
.. [UMM13] J. Urbano, M. Marrero, D. Martin (2013). On the measurement of test collection
   reliability. SIGIR 2013, 393-402; and Urbano's R package ``gt4ireval`` (``gstudy``,
   ``dstudy``, ``gt2tau``).
.. [U16] J. Urbano (2016). Test collection reliability: a study of bias and robustness to
   statistical assumptions via stochastic simulation. Information Retrieval Journal 19(3).
.. [F65] L. S. Feldt (1965). The approximate sampling distribution of Kuder-Richardson
   reliability coefficient twenty. Psychometrika 30(3).
.. [A82] C. Arteaga, S. Jeyaratnam, G. A. Franklin (1982). Confidence intervals for proportions
   of total variance in the two-way cross component of variance model. Communications in
   Statistics - Theory and Methods 11(15).
.. [K49] M. G. Kendall (1949). Rank and product-moment correlation. Biometrika 36(1/2)
   (Kendall's tau of a bivariate normal: :math:`\\tau = \\frac{2}{\\pi}\\arcsin\\rho`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from metaeval._validation import as_generator, check_int, check_probability
from metaeval.meta._resampling import score_matrix
from metaeval.meta.rankcorr import kendall_tau, tau_ap

__all__ = [
    "GStudy",
    "g_study",
    "DStudy",
    "d_study",
    "TopicsNeeded",
    "topics_needed",
    "expected_tau",
    "SimulatedTau",
    "simulate_tau",
]

_COMPONENTS = ("system", "topic", "system x topic,e")

# Exponents of the power laws tau ~ Erho2^a that Urbano's gt4ireval ships as gt2tau and
# gt2tauAP (fitted on TREC data, Urbano, Marrero & Martin 2013, Fig. 3).
_URBANO2013_EXPONENT = {"tau": 2.84729794002905, "tau_ap": 3.98652984123827}

# A needed number of topics is a ceiling; a ratio that is an integer up to float noise (e.g.
# 0.8 / 0.2 * 3 = 12.000000000000002) must not round up to the next integer.
_CEIL_EPS = 1e-9


# --------------------------------------------------------------------------------------------
# ANOVA
# --------------------------------------------------------------------------------------------


def _mean_squares(X: np.ndarray):
    """Sums of squares, degrees of freedom and mean squares of the two-way ANOVA without
    replication (systems = rows, topics = columns)."""
    n_s, n_t = X.shape
    gm = X.mean()
    row = X.mean(axis=1)
    col = X.mean(axis=0)
    ss_s = n_t * float(((row - gm) ** 2).sum())
    ss_t = n_s * float(((col - gm) ** 2).sum())
    # The interaction from its own residuals, not as total - ss_s - ss_t, which would cancel
    # catastrophically when the interaction is small.
    resid = X - row[:, None] - col[None, :] + gm
    ss_e = float((resid**2).sum())
    df_s, df_t = n_s - 1, n_t - 1
    df_e = df_s * df_t
    return (ss_s, ss_t, ss_e), (df_s, df_t, df_e), (ss_s / df_s, ss_t / df_t, ss_e / df_e)


def _components(ms_s, ms_t, ms_e, n_s, n_t):
    """ANOVA (expected-mean-square) estimators of the three variance components; may be < 0."""
    return (ms_s - ms_e) / n_t, (ms_t - ms_e) / n_s, ms_e


# --------------------------------------------------------------------------------------------
# Confidence intervals of the variance components
# --------------------------------------------------------------------------------------------


def _satterthwaite(estimate: float, terms, level: float):
    """Satterthwaite interval of a linear combination sum f_k MS_k of mean squares.

    The estimate is taken as approximately (estimate / nu) chi^2_nu with
    nu = estimate^2 / sum (f_k MS_k)^2 / df_k (Brennan 2001, ch. 6). Undefined (NaN) when the
    estimate is not positive.
    """
    if not estimate > 0:
        return math.nan, math.nan, math.nan
    nu = estimate**2 / sum((f * ms) ** 2 / df for f, ms, df in terms)
    a = (1.0 - level) / 2.0
    low = nu * estimate / stats.chi2.ppf(1.0 - a, nu)
    high = nu * estimate / stats.chi2.ppf(a, nu)
    return float(low), float(high), float(nu)


def _components_of_stats(n_s, n_t, G, Q, sum_r2, sum_c2):
    """Variance components of (sub)matrices from their sufficient statistics, vectorised.

    G: total, Q: sum of squares, sum_r2 / sum_c2: sums of squared row / column totals.
    """
    n = n_s * n_t
    corr = G**2 / n
    ss_s = sum_r2 / n_t - corr
    ss_t = sum_c2 / n_s - corr
    ss_e = (Q - corr) - ss_s - ss_t
    ms_s = ss_s / (n_s - 1)
    ms_t = ss_t / (n_t - 1)
    ms_e = ss_e / ((n_s - 1) * (n_t - 1))
    return np.stack(_components(ms_s, ms_t, ms_e, n_s, n_t))


def _jackknife_pseudovalues(X: np.ndarray) -> np.ndarray:
    """Jackknife pseudovalues of the three components, shape (3, S, T) (Brennan 2001, ch. 6).

    theta_{st} = S T theta - (S-1) T theta_{-s} - S (T-1) theta_{-t} + (S-1)(T-1) theta_{-s,-t},
    where theta_{-s}, theta_{-t}, theta_{-s,-t} are the estimates without system s, topic t, or
    both. The S*T leave-both-out estimates come from updates of the sums, not from S*T
    separate ANOVAs.
    """
    n_s, n_t = X.shape
    X = X - X.mean()  # components are shift invariant; centring keeps the sums small
    R = X.sum(axis=1)  # row totals (S,)
    C = X.sum(axis=0)  # column totals (T,)
    RQ = (X**2).sum(axis=1)
    CQ = (X**2).sum(axis=0)
    G = R.sum()
    Q = RQ.sum()
    sr2 = (R**2).sum()
    sc2 = (C**2).sum()
    full = _components_of_stats(n_s, n_t, G, Q, sr2, sc2)  # (3,)
    # Without system s: rows lose R_s; column totals lose x_{s.}.
    no_s = _components_of_stats(
        n_s - 1, n_t, G - R, Q - RQ, sr2 - R**2, sc2 - 2.0 * (X @ C) + RQ
    )  # (3, S)
    # Without topic t.
    no_t = _components_of_stats(
        n_s, n_t - 1, G - C, Q - CQ, sr2 - 2.0 * (R @ X) + CQ, sc2 - C**2
    )  # (3, T)
    # Without system s and topic t: sum_{i != s} (R_i - x_it)^2 and its column analogue.
    u = R @ X  # u_t = sum_i R_i x_it
    v = X @ C  # v_s = sum_t C_t x_st
    g_both = G - R[:, None] - C[None, :] + X
    q_both = Q - RQ[:, None] - CQ[None, :] + X**2
    r2_both = (sr2 - 2.0 * u + CQ)[None, :] - (R[:, None] - X) ** 2
    c2_both = (sc2 - 2.0 * v + RQ)[:, None] - (C[None, :] - X) ** 2
    no_both = _components_of_stats(n_s - 1, n_t - 1, g_both, q_both, r2_both, c2_both)
    return (
        n_s * n_t * full[:, None, None]
        - (n_s - 1) * n_t * no_s[:, :, None]
        - n_s * (n_t - 1) * no_t[:, None, :]
        + (n_s - 1) * (n_t - 1) * no_both
    )


def _jackknife(X: np.ndarray, raw, level: float):
    """Jackknife intervals theta +- t_{(1+level)/2, ST-1} * se, se from a G-study of the
    pseudovalues (Brennan 2001, ch. 6)."""
    n_s, n_t = X.shape
    pseudo = _jackknife_pseudovalues(X)
    q = stats.t.ppf((1.0 + level) / 2.0, n_s * n_t - 1)
    out = []
    for k in range(3):
        _, _, (ms_s, ms_t, ms_e) = _mean_squares(pseudo[k])
        vs, vt, ve = _components(ms_s, ms_t, ms_e, n_s, n_t)
        se = math.sqrt(max(vs / n_s + vt / n_t + ve / (n_s * n_t), 0.0))
        out.append((raw[k] - q * se, raw[k] + q * se, se))
    return out


# --------------------------------------------------------------------------------------------
# G-study
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class GStudy:
    """Result of :func:`g_study`: the ANOVA of a systems x topics matrix and its variance
    components.

    Attributes
    ----------
    n_systems, n_topics : int
    grand_mean : float
    ss_s, ss_t, ss_st : float
        Sums of squares of systems, topics and the residual (interaction confounded with error).
    df_s, df_t, df_st : int
        Degrees of freedom: S-1, T-1, (S-1)(T-1).
    ms_s, ms_t, ms_st : float
        Mean squares.
    var_s, var_t, var_st : float
        Variance components :math:`\\sigma^2(s)`, :math:`\\sigma^2(t)`, :math:`\\sigma^2(st,e)`,
        with negative ANOVA estimates set to 0 (as Brennan 2001 does). These are the values the
        D-study uses.
    var_s_raw, var_t_raw, var_st_raw : float
        The ANOVA estimates before truncation (possibly negative).
    var_s_low, var_s_high, var_t_low, var_t_high, var_st_low, var_st_high : float
        Confidence bounds (NaN where undefined, see :func:`g_study`).
    ci : str
        ``"satterthwaite"`` or ``"jackknife"``.
    level : float
        Confidence level of the intervals.
    """

    n_systems: int
    n_topics: int
    grand_mean: float
    ss_s: float
    ss_t: float
    ss_st: float
    df_s: int
    df_t: int
    df_st: int
    ms_s: float
    ms_t: float
    ms_st: float
    var_s: float
    var_t: float
    var_st: float
    var_s_raw: float
    var_t_raw: float
    var_st_raw: float
    var_s_low: float
    var_s_high: float
    var_t_low: float
    var_t_high: float
    var_st_low: float
    var_st_high: float
    ci: str
    level: float

    @property
    def negative(self) -> tuple[str, ...]:
        """Components whose ANOVA estimate was negative (and is reported as 0)."""
        raw = (self.var_s_raw, self.var_t_raw, self.var_st_raw)
        return tuple(name for name, v in zip(_COMPONENTS, raw) if v < 0)

    def to_frame(self) -> pd.DataFrame:
        """The ANOVA table: one row per source (``system``, ``topic``, ``system x topic,e``)
        with ``df, ss, ms, variance, variance_raw, percent, low, high, ci, level``."""
        var = np.array([self.var_s, self.var_t, self.var_st])
        total = var.sum()
        return pd.DataFrame(
            {
                "source": list(_COMPONENTS),
                "df": [self.df_s, self.df_t, self.df_st],
                "ss": [self.ss_s, self.ss_t, self.ss_st],
                "ms": [self.ms_s, self.ms_t, self.ms_st],
                "variance": var,
                "variance_raw": [self.var_s_raw, self.var_t_raw, self.var_st_raw],
                "percent": 100.0 * var / total if total > 0 else np.full(3, np.nan),
                "low": [self.var_s_low, self.var_t_low, self.var_st_low],
                "high": [self.var_s_high, self.var_t_high, self.var_st_high],
                "ci": self.ci,
                "level": self.level,
            }
        )

    def d_study(self, n_topics=None, *, level: float | None = None) -> DStudy:
        """Shorthand for :func:`d_study` (``level`` defaults to this G-study's)."""
        return d_study(self, n_topics, level=self.level if level is None else level)


def g_study(
    scores,
    *,
    ci: Literal["satterthwaite", "jackknife"] = "satterthwaite",
    level: float = 0.95,
    topics=None,
    runs=None,
) -> GStudy:
    r"""G-study of a fully crossed systems x topics design (Brennan 2001; Urbano et al. 2013).

    From the two-way ANOVA without replication (S systems, T topics) with mean squares
    :math:`MS_s`, :math:`MS_t` and :math:`MS_{st}`, the ANOVA estimators of the variance
    components are (Brennan 2001, the p x i design)

    .. math::

        \hat\sigma^2(st,e) = MS_{st}, \quad
        \hat\sigma^2(s) = \frac{MS_s - MS_{st}}{T}, \quad
        \hat\sigma^2(t) = \frac{MS_t - MS_{st}}{S}.

    A negative estimate of :math:`\sigma^2(s)` or :math:`\sigma^2(t)` (sampling error when the
    component is small) is **set to 0**, as Brennan (2001) and ``gt4ireval`` do; the raw
    value is kept in ``var_*_raw`` and listed by :attr:`GStudy.negative`.

    Confidence intervals (``level``, two-sided):

    * ``ci="satterthwaite"`` (default; Brennan 2001, ch. 6): a component
      :math:`\hat\sigma^2 = \sum_k f_k MS_k` is taken as :math:`\hat\sigma^2\chi^2_\nu/\nu` with
      :math:`\nu = \hat\sigma^4 / \sum_k (f_k MS_k)^2/df_k`, giving
      :math:`[\nu\hat\sigma^2/\chi^2_{\nu,(1+\ell)/2},\ \nu\hat\sigma^2/\chi^2_{\nu,(1-\ell)/2}]`.
      For :math:`\sigma^2(st,e)` this is the exact chi-square interval under normality. It is
      undefined (NaN bounds) when the raw estimate is not positive.
    * ``ci="jackknife"`` (Brennan 2001, ch. 6): the estimate
      :math:`\pm\, t_{(1+\ell)/2,\,ST-1}` times the jackknife standard error computed from the
      pseudovalues of deleting a system, a topic, and both; bounds are truncated at 0.
      Needs at least 3 systems and 3 topics.

    Parameters
    ----------
    scores : array_like, shape (S, T), or pandas.DataFrame
        Per-topic scores, rows = systems; or a tidy frame with columns ``run``, ``topic``,
        ``value`` (one measure).
    ci : {"satterthwaite", "jackknife"}
        Interval procedure.
    level : float
        Confidence level in (0, 1).
    topics, runs : selection, optional
        For a tidy frame: only these topics and runs (``"601-650"``, a list, a file).

    Returns
    -------
    GStudy

    Examples
    --------
    Brennan's (2001) Synthetic Data Set No. 1 (10 persons x 12 items) gives
    :math:`\hat\sigma^2(p) = .0574`, :math:`\hat\sigma^2(i) = .0754`,
    :math:`\hat\sigma^2(pi,e) = .1269`.
    """
    if ci not in ("satterthwaite", "jackknife"):
        raise ValueError(f"ci must be 'satterthwaite' or 'jackknife', got {ci!r}")
    level = check_probability("level", level, open_low=True, open_high=True)
    X, _, _ = score_matrix(scores, name="scores", min_topics=2, topics=topics, runs=runs)
    n_s, n_t = X.shape
    if ci == "jackknife" and (n_s < 3 or n_t < 3):
        raise ValueError(
            "ci='jackknife' needs at least 3 systems and 3 topics (it re-estimates without a "
            f"system and a topic); scores has shape {X.shape}. Use ci='satterthwaite'"
        )
    (ss_s, ss_t, ss_e), (df_s, df_t, df_e), (ms_s, ms_t, ms_e) = _mean_squares(X)
    raw = _components(ms_s, ms_t, ms_e, n_s, n_t)
    if ci == "satterthwaite":
        bounds = [
            _satterthwaite(raw[0], [(1 / n_t, ms_s, df_s), (-1 / n_t, ms_e, df_e)], level),
            _satterthwaite(raw[1], [(1 / n_s, ms_t, df_t), (-1 / n_s, ms_e, df_e)], level),
            _satterthwaite(raw[2], [(1.0, ms_e, df_e)], level),
        ]
    else:
        bounds = [(max(lo, 0.0), max(hi, 0.0), se) for lo, hi, se in _jackknife(X, raw, level)]
    var = [max(v, 0.0) for v in raw]
    return GStudy(
        n_systems=n_s,
        n_topics=n_t,
        grand_mean=float(X.mean()),
        ss_s=ss_s,
        ss_t=ss_t,
        ss_st=ss_e,
        df_s=df_s,
        df_t=df_t,
        df_st=df_e,
        ms_s=ms_s,
        ms_t=ms_t,
        ms_st=ms_e,
        var_s=var[0],
        var_t=var[1],
        var_st=var[2],
        var_s_raw=float(raw[0]),
        var_t_raw=float(raw[1]),
        var_st_raw=float(raw[2]),
        var_s_low=bounds[0][0],
        var_s_high=bounds[0][1],
        var_t_low=bounds[1][0],
        var_t_high=bounds[1][1],
        var_st_low=bounds[2][0],
        var_st_high=bounds[2][1],
        ci=ci,
        level=float(level),
    )


# --------------------------------------------------------------------------------------------
# D-study
# --------------------------------------------------------------------------------------------


def _check_gstudy(g) -> GStudy:
    if not isinstance(g, GStudy):
        raise TypeError(f"g must be the GStudy that g_study() returns, got {type(g).__name__}")
    return g


def _topic_counts(n_topics, default: int) -> np.ndarray:
    if n_topics is None:
        return np.array([default])
    scalar = np.ndim(n_topics) == 0
    values = np.atleast_1d(np.asarray(n_topics))
    if values.ndim != 1 or values.size == 0:
        raise ValueError("n_topics must be a positive integer or a 1-D sequence of them")
    out = [
        check_int("n_topics" if scalar else f"n_topics[{i}]", v.item(), min=1)
        for i, v in enumerate(values)
    ]
    return np.array(out, dtype=int)


def _snr_bounds(g: GStudy, level: float):
    """Feldt's (1965) interval of sigma^2(s) / sigma^2(st,e), the one-topic signal-to-noise
    ratio: F = MS_s / MS_st and F / (1 + T r) ~ F(df_s, df_st) under normality."""
    a = (1.0 - level) / 2.0
    if g.ms_st > 0:
        f = g.ms_s / g.ms_st
    else:  # no interaction at all: the ratio is infinite, or undefined for constant scores
        f = math.inf if g.ms_s > 0 else math.nan
    hi_q = stats.f.ppf(1.0 - a, g.df_s, g.df_st)
    lo_q = stats.f.ppf(a, g.df_s, g.df_st)
    low = max((f / hi_q - 1.0) / g.n_topics, 0.0)
    high = max((f / lo_q - 1.0) / g.n_topics, 0.0)
    return low, high


def _phi1_bound(g: GStudy, q: float) -> float:
    """Arteaga, Jeyaratnam & Franklin's (1982) bound on the one-topic Phi at quantile q
    (q = 1 - a gives the lower bound, q = a the upper), as Brennan (2001, ch. 6) and
    gt4ireval's ``dstudy``."""
    ms_s, ms_t, ms_e = g.ms_s, g.ms_t, g.ms_st
    f_inf = stats.chi2.ppf(q, g.df_s) / g.df_s  # F(df_s, infinity)
    f_e = stats.f.ppf(q, g.df_s, g.df_st)
    f_t = stats.f.ppf(q, g.df_s, g.df_t)
    num = ms_s**2 - f_inf * ms_s * ms_e + (f_inf - f_e) * f_e * ms_e**2
    den = (g.n_systems - 1) * f_inf * ms_s * ms_e + f_t * ms_s * ms_t
    if den <= 0:
        return math.nan
    ratio = num / den
    phi1 = g.n_systems * ratio / (g.n_systems * ratio + g.n_topics)
    return min(max(phi1, 0.0), 1.0)


def _erho2(var_s, var_e, n):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(var_s > 0, var_s / (var_s + var_e / n), 0.0)


def _from_ratio(n: np.ndarray, r: float) -> np.ndarray:
    """Erho2(n') = n' r / (1 + n' r) from the one-topic ratio r (1 for an infinite r)."""
    if math.isinf(r):
        return np.ones_like(n)
    return n * r / (1.0 + n * r)


def _readonly(*arrays):
    for a in arrays:
        a.setflags(write=False)
    return arrays


@dataclass(frozen=True, eq=False)
class DStudy:
    """Result of :func:`d_study`, one value per number of topics.

    Attributes
    ----------
    n_topics : numpy.ndarray of int
        The numbers of topics :math:`n'` of the hypothetical collections.
    erho2, erho2_low, erho2_high : numpy.ndarray
        Generalizability coefficient and Feldt's (1965) interval.
    phi, phi_low, phi_high : numpy.ndarray
        Dependability index and Arteaga et al.'s (1982) interval.
    level : float
    """

    n_topics: np.ndarray
    erho2: np.ndarray
    erho2_low: np.ndarray
    erho2_high: np.ndarray
    phi: np.ndarray
    phi_low: np.ndarray
    phi_high: np.ndarray
    level: float

    def to_frame(self) -> pd.DataFrame:
        """One row per ``n_topics``: ``erho2, erho2_low, erho2_high, phi, phi_low, phi_high,
        level``."""
        return pd.DataFrame(
            {
                "n_topics": self.n_topics,
                "erho2": self.erho2,
                "erho2_low": self.erho2_low,
                "erho2_high": self.erho2_high,
                "phi": self.phi,
                "phi_low": self.phi_low,
                "phi_high": self.phi_high,
                "level": self.level,
            }
        )


def d_study(g: GStudy, n_topics=None, *, level: float = 0.95) -> DStudy:
    r"""D-study: the reliability of a collection of :math:`n'` topics (Brennan 2001, ch. 4).

    .. math::

        E\rho^2(n') = \frac{\sigma^2(s)}{\sigma^2(s) + \sigma^2(st,e)/n'}, \qquad
        \Phi(n') = \frac{\sigma^2(s)}{\sigma^2(s) + (\sigma^2(t) + \sigma^2(st,e))/n'}.

    :math:`E\rho^2` counts as error only what changes the *order* of the systems (the
    interaction); :math:`\Phi` also counts the topic effect, which moves all systems' absolute
    scores (Urbano et al. 2013 call them relative and absolute stability). Both are 0 when
    :math:`\sigma^2(s) = 0`.

    Intervals (``level``, exact under normality; Brennan 2001, ch. 6, Table 6.5):

    * :math:`E\rho^2` (Feldt 1965): with :math:`F = MS_s/MS_{st}` and quantiles
      :math:`F_q` of :math:`F(S-1, (S-1)(T-1))`, the ratio
      :math:`r = \sigma^2(s)/\sigma^2(st,e)` lies in
      :math:`[(F/F_{(1+\ell)/2} - 1)/T,\ (F/F_{(1-\ell)/2} - 1)/T]` (truncated at 0), and
      :math:`E\rho^2(n') = n'r/(1 + n'r)`.
    * :math:`\Phi` (Arteaga, Jeyaratnam & Franklin 1982): bounds :math:`\Phi_1` on the
      one-topic index from :math:`MS_s, MS_t, MS_{st}` and F quantiles, then
      :math:`\Phi(n') = n'\Phi_1/(1 + (n'-1)\Phi_1)`.

    Parameters
    ----------
    g : GStudy
        From :func:`g_study`.
    n_topics : int or sequence of int, optional
        Numbers of topics :math:`n'`; default the G-study's.
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    DStudy

    Examples
    --------
    Brennan's Synthetic Data Set No. 4 (Table 6.5, 80% intervals, :math:`n' = 12`):
    :math:`E\rho^2 = .729\ [.541, .876]`, :math:`\Phi = .672\ [.457, .845]`.
    """
    g = _check_gstudy(g)
    level = check_probability("level", level, open_low=True, open_high=True)
    n = _topic_counts(n_topics, g.n_topics)
    nf = n.astype(float)
    erho2 = _erho2(g.var_s, g.var_st, nf)
    phi = _erho2(g.var_s, g.var_t + g.var_st, nf)
    r_low, r_high = _snr_bounds(g, level)
    a = (1.0 - level) / 2.0
    p_low, p_high = _phi1_bound(g, 1.0 - a), _phi1_bound(g, a)
    arrays = _readonly(
        n,
        erho2,
        _from_ratio(nf, r_low),
        _from_ratio(nf, r_high),
        phi,
        nf * p_low / (1.0 + (nf - 1.0) * p_low),
        nf * p_high / (1.0 + (nf - 1.0) * p_high),
    )
    return DStudy(*arrays, level=float(level))


# --------------------------------------------------------------------------------------------
# Topics needed
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class TopicsNeeded:
    """Result of :func:`topics_needed`, one value per target.

    Attributes
    ----------
    target : numpy.ndarray
        Target values of the coefficient.
    erho2, erho2_low, erho2_high : numpy.ndarray
        Topics needed for :math:`E\\rho^2 \\ge` target, and the interval of that number (from
        the interval of :math:`\\sigma^2(s)/\\sigma^2(st,e)`). ``inf`` when no number of
        topics suffices (a zero system variance or lower bound).
    phi, phi_low, phi_high : numpy.ndarray
        The same for :math:`\\Phi`.
    level : float
    """

    target: np.ndarray
    erho2: np.ndarray
    erho2_low: np.ndarray
    erho2_high: np.ndarray
    phi: np.ndarray
    phi_low: np.ndarray
    phi_high: np.ndarray
    level: float

    def to_frame(self) -> pd.DataFrame:
        """One row per target: ``target, erho2, erho2_low, erho2_high, phi, phi_low,
        phi_high, level`` (float columns, ``inf`` where unreachable)."""
        return pd.DataFrame(
            {
                "target": self.target,
                "erho2": self.erho2,
                "erho2_low": self.erho2_low,
                "erho2_high": self.erho2_high,
                "phi": self.phi,
                "phi_low": self.phi_low,
                "phi_high": self.phi_high,
                "level": self.level,
            }
        )


def _needed(ratio_noise_to_signal, target):
    """ceil(pi / (1 - pi) * noise / signal), at least 1; inf for an infinite ratio."""
    v = target / (1.0 - target) * ratio_noise_to_signal
    with np.errstate(invalid="ignore"):
        out = np.maximum(np.ceil(v - _CEIL_EPS), 1.0)
    return np.where(np.isinf(v), np.inf, out)  # NaN (constant scores) stays NaN


def _inv(x: float) -> float:
    if math.isnan(x):
        return math.nan
    return 1.0 / x if x > 0 else math.inf


def topics_needed(g: GStudy, target=0.95, *, level: float = 0.95) -> TopicsNeeded:
    r"""Smallest number of topics :math:`n'` whose :math:`E\rho^2` (or :math:`\Phi`) reaches
    ``target`` (Brennan 2001; Urbano et al. 2013):

    .. math::

        n'_{E\rho^2} = \left\lceil \frac{\pi\,\sigma^2(st,e)}{(1-\pi)\,\sigma^2(s)}
        \right\rceil, \qquad
        n'_{\Phi} = \left\lceil \frac{\pi\,(\sigma^2(t) + \sigma^2(st,e))}
        {(1-\pi)\,\sigma^2(s)} \right\rceil .

    The intervals invert those of :func:`d_study`: the upper bound of the topics needed comes
    from the lower bound of :math:`\sigma^2(s)/\sigma^2(st,e)` (Feldt) or of the one-topic
    :math:`\Phi_1` (Arteaga et al.), :math:`n' = \lceil\pi(1-\Phi_1)/((1-\pi)\Phi_1)\rceil`.

    Parameters
    ----------
    g : GStudy
    target : float or sequence of float
        Target coefficient(s) :math:`\pi` in (0, 1).
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    TopicsNeeded
    """
    g = _check_gstudy(g)
    level = check_probability("level", level, open_low=True, open_high=True)
    t = np.array(target, dtype=float, ndmin=1)  # a copy: it is made read-only below
    if t.ndim != 1 or t.size == 0:
        raise ValueError("target must be a number in (0, 1) or a 1-D sequence of them")
    for i, v in enumerate(t):
        check_probability(f"target[{i}]", float(v), open_low=True, open_high=True)
    r_low, r_high = _snr_bounds(g, level)
    a = (1.0 - level) / 2.0
    p_low, p_high = _phi1_bound(g, 1.0 - a), _phi1_bound(g, a)
    signal = g.var_s
    e_ratio = g.var_st / signal if signal > 0 else math.inf
    p_ratio = (g.var_t + g.var_st) / signal if signal > 0 else math.inf

    def phi_ratio(p1):
        # (1 - Phi_1) / Phi_1: the noise-to-signal ratio of one topic.
        if math.isnan(p1):
            return math.nan
        return (1.0 - p1) / p1 if p1 > 0 else math.inf

    arrays = _readonly(
        t,
        _needed(e_ratio, t),
        _needed(_inv(r_high), t),
        _needed(_inv(r_low), t),
        _needed(p_ratio, t),
        _needed(phi_ratio(p_high), t),
        _needed(phi_ratio(p_low), t),
    )
    return TopicsNeeded(*arrays, level=float(level))


# --------------------------------------------------------------------------------------------
# From E(rho^2) to Kendall's tau
# --------------------------------------------------------------------------------------------


def expected_tau(
    erho2,
    *,
    relation: Literal["normal", "urbano2013"] = "normal",
    against: Literal["split", "truth"] = "split",
    statistic: Literal["tau", "tau_ap"] = "tau",
):
    r"""Kendall's tau that a generalizability coefficient corresponds to.

    ``relation="normal"`` (default) is exact under the random-effects model with normal
    effects, derived here (not in Urbano et al. 2013): for two systems, the difference of their
    means over :math:`n'` topics is :math:`\delta + \epsilon` with :math:`\delta` the
    difference of their universe scores (variance :math:`2\sigma^2(s)`) and :math:`\epsilon`
    the interaction noise (variance :math:`2\sigma^2(st,e)/n'`; topic effects cancel). On two
    **disjoint** sets of :math:`n'` topics the two differences are bivariate normal with
    correlation :math:`E\rho^2(n')`; against the **true** (universe-score) ranking the
    correlation is :math:`\sqrt{E\rho^2(n')}`. Kendall's (1949) result for the bivariate
    normal, applied pair by pair, gives the expected tau over systems and topics drawn from the
    model:

    .. math::

        E[\tau_{\text{split}}] = \tfrac{2}{\pi}\arcsin E\rho^2(n'), \qquad
        E[\tau_{\text{truth}}] = \tfrac{2}{\pi}\arcsin \sqrt{E\rho^2(n')} .

    :func:`simulate_tau` checks these by simulation, and gives tau_AP, for which there is no
    closed form.

    ``relation="urbano2013"`` is the empirical power law that Urbano, Marrero & Martin (2013,
    Fig. 3) fitted between :math:`E\rho^2` and the data-based tau of split-half experiments
    (rankings on two disjoint topic subsets) on over 40 TREC collections, with the exponents
    of Urbano's ``gt4ireval`` (``gt2tau``, ``gt2tauAP``): :math:`\tau \approx (E\rho^2)^{2.847}`,
    :math:`\tau_{AP} \approx (E\rho^2)^{3.987}`. TREC systems are not a normal sample (a few
    bad runs stretch the scale), so it gives higher values than the normal-model relation,
    e.g. .864 against .798 at :math:`E\rho^2 = .95`; Urbano et al. warn to take it "with a
    grain of salt".

    Parameters
    ----------
    erho2 : float or array_like
        Generalizability coefficient(s) in [0, 1], e.g. ``d_study(g, n).erho2``.
    relation : {"normal", "urbano2013"}
    against : {"split", "truth"}
        Two disjoint topic sets of :math:`n'` topics each, or one set against the true
        ranking (``relation="normal"`` only).
    statistic : {"tau", "tau_ap"}
        ``"tau_ap"`` only with ``relation="urbano2013"``.

    Returns
    -------
    float or numpy.ndarray
        The shape of ``erho2``.

    Examples
    --------
    >>> round(expected_tau(0.95), 4)
    0.7978
    >>> round(expected_tau(0.95, relation="urbano2013"), 5)
    0.86412
    """
    if relation not in ("normal", "urbano2013"):
        raise ValueError(f"relation must be 'normal' or 'urbano2013', got {relation!r}")
    if against not in ("split", "truth"):
        raise ValueError(f"against must be 'split' or 'truth', got {against!r}")
    if statistic not in ("tau", "tau_ap"):
        raise ValueError(f"statistic must be 'tau' or 'tau_ap', got {statistic!r}")
    try:
        e = np.asarray(erho2, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError("erho2 must be a number or an array of numbers in [0, 1]") from exc
    if not np.all(np.isfinite(e)) or np.any((e < 0) | (e > 1)):
        raise ValueError("erho2 must be in [0, 1]")
    if relation == "urbano2013":
        if against != "split":
            raise ValueError(
                "relation='urbano2013' was fitted between two disjoint topic sets; use "
                "against='split' (or relation='normal' for against='truth')"
            )
        out = e ** _URBANO2013_EXPONENT[statistic]
    else:
        if statistic != "tau":
            raise ValueError(
                "tau_AP has no closed form under the normal model; use simulate_tau(..., "
                "statistic='tau_ap') or relation='urbano2013'"
            )
        rho = e if against == "split" else np.sqrt(e)
        out = 2.0 / np.pi * np.arcsin(rho)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True, eq=False)
class SimulatedTau:
    """Result of :func:`simulate_tau`.

    Attributes
    ----------
    mean : float
        Mean correlation over the simulated collections.
    se : float
        Its Monte-Carlo standard error (sd / sqrt(B)).
    values : numpy.ndarray
        The ``B`` correlations.
    n_topics, n_systems, B : int
    against, statistic : str
    """

    mean: float
    se: float
    values: np.ndarray
    n_topics: int
    n_systems: int
    B: int
    against: str
    statistic: str

    def to_frame(self) -> pd.DataFrame:
        """One row: ``statistic, against, n_topics, n_systems, B, mean, se``."""
        return pd.DataFrame(
            [
                {
                    "statistic": self.statistic,
                    "against": self.against,
                    "n_topics": self.n_topics,
                    "n_systems": self.n_systems,
                    "B": self.B,
                    "mean": self.mean,
                    "se": self.se,
                }
            ]
        )


def simulate_tau(
    g: GStudy,
    n_topics: int,
    *,
    against: Literal["split", "truth"] = "split",
    statistic: Literal["tau", "tau_ap"] = "tau",
    n_systems: int | None = None,
    B: int = 1000,
    rng=None,
) -> SimulatedTau:
    r"""Monte-Carlo expected rank correlation under the fitted random-effects model.

    Each of ``B`` replicates draws ``n_systems`` universe scores
    :math:`\nu_s \sim N(0, \sigma^2(s))`, topic effects :math:`\nu_t \sim N(0, \sigma^2(t))` and
    residuals :math:`\nu_{st,e} \sim N(0, \sigma^2(st,e))` from the G-study's components, and
    correlates the ranking by the mean over ``n_topics`` topics with the ranking by the mean
    over ``n_topics`` other topics (``against="split"``) or with the universe-score ranking
    (``against="truth"``). ``statistic="tau"`` is Kendall's tau (no ties occur);
    ``"tau_ap"`` is :func:`metaeval.meta.tau_ap` (for ``"truth"`` the universe scores are the
    reference ranking). Compare with :func:`expected_tau`.

    Parameters
    ----------
    g : GStudy
    n_topics : int
        Topics per set.
    against : {"split", "truth"}
    statistic : {"tau", "tau_ap"}
    n_systems : int, optional
        Systems per replicate; default the G-study's.
    B : int
        Replicates.
    rng : None, int, SeedSequence or Generator

    Returns
    -------
    SimulatedTau
    """
    g = _check_gstudy(g)
    n_topics = check_int("n_topics", n_topics, min=1)
    n_systems = check_int("n_systems", g.n_systems if n_systems is None else n_systems, min=2)
    B = check_int("B", B, min=2)
    if against not in ("split", "truth"):
        raise ValueError(f"against must be 'split' or 'truth', got {against!r}")
    if statistic not in ("tau", "tau_ap"):
        raise ValueError(f"statistic must be 'tau' or 'tau_ap', got {statistic!r}")
    if g.var_s <= 0:
        raise ValueError(
            "the G-study's system variance is 0: every ranking is noise, there is nothing to "
            "simulate (the expected tau is 0)"
        )
    gen = as_generator(rng)
    sd_s, sd_t, sd_e = math.sqrt(g.var_s), math.sqrt(g.var_t), math.sqrt(g.var_st)
    n_sets = 2 if against == "split" else 1
    universe = gen.normal(0.0, sd_s, size=(B, n_systems))
    means = []
    for _ in range(n_sets):
        topic = gen.normal(0.0, sd_t, size=(B, 1, n_topics))
        resid = gen.normal(0.0, sd_e, size=(B, n_systems, n_topics))
        means.append((universe[:, :, None] + topic + resid).mean(axis=2))
    reference = means[1] if against == "split" else universe
    if statistic == "tau":
        values = kendall_tau(reference, means[0], variant="b")
    else:
        values = tau_ap(reference, means[0])
    values = np.asarray(values, dtype=float)
    values.setflags(write=False)
    return SimulatedTau(
        mean=float(values.mean()),
        se=float(values.std(ddof=1) / math.sqrt(B)),
        values=values,
        n_topics=n_topics,
        n_systems=n_systems,
        B=B,
        against=against,
        statistic=statistic,
    )
