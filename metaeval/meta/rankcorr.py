"""Rank correlation between system rankings: Kendall's tau-a / tau-b and AP correlation (tau_AP).

All functions take *score vectors* (higher is better), not rank vectors: item ``i`` of ``x`` is
the score of system ``i``, and two systems with equal scores are tied.

Every function is vectorised over many rankings at once: pass a 2-D array of shape
``(k, m)`` (``k`` rankings of the same ``m`` systems) and get ``k`` values back. This is what a
study needs when it correlates the full-judgment ranking with the rankings of every reduction
level and every trial.

References
----------
.. [KE] M. G. Kendall (1945). The treatment of ties in ranking problems. Biometrika 33(3).
.. [YAR] E. Yilmaz, J. A. Aslam, S. Robertson (2008). A new rank correlation coefficient for
   information retrieval. SIGIR 2008, 587-594.
.. [MAT] N. Ferro et al. MATTERS (Matlab toolkit), ``apCorr.m``, a port of M. D. Smucker's
   ``apcorr.r`` (TREC 2013 Crowdsourcing track).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from metaeval._validation import as_generator, check_int, check_probability, shown_ids

__all__ = [
    "kendall_tau",
    "tau_ap",
    "TauBootstrapCI",
    "tau_bootstrap_ci",
]

# Rows processed at once by the O(k m^2) pairwise kernels: bounds the temporary
# (rows x m x m) boolean arrays to a few tens of MB whatever k is.
_PAIRWISE_ELEMENTS = 4_000_000


def _score_rows(a, name: str) -> np.ndarray:
    """Validate one score argument and return it as a 2-D float array (rows = rankings)."""
    try:
        arr = np.asarray(a, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array of scores") from exc
    if arr.ndim == 1:
        arr = arr[None, :]
    elif arr.ndim != 2:
        raise ValueError(
            f"{name} must be 1-D (m systems) or 2-D (k rankings x m systems), "
            f"got {arr.ndim}-D with shape {arr.shape}"
        )
    if arr.shape[1] < 2:
        raise ValueError(f"{name} must score at least 2 systems, got {arr.shape[1]}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _frame_scores(x, y, xname: str, yname: str):
    """Two tidy frames of system scores (``run``, ``value``) as two vectors in one run order."""
    if not (isinstance(x, pd.DataFrame) and isinstance(y, pd.DataFrame)):
        raise TypeError(f"{xname} and {yname} must both be DataFrames or both be arrays")
    vectors = []
    for frame, name in ((x, xname), (y, yname)):
        missing = {"run", "value"} - set(frame.columns)
        if missing:
            raise ValueError(f"{name} must have columns run and value; missing {sorted(missing)}")
        if "measure" in frame.columns and frame["measure"].nunique() > 1:
            raise ValueError(f"{name} holds several measures; select one first")
        if frame["run"].duplicated().any():
            raise ValueError(
                f"{name} has several rows for run "
                f"{frame['run'][frame['run'].duplicated()].iloc[0]!r}: give one "
                "score per run (aggregate over topics first)"
            )
        vectors.append(frame.set_index("run")["value"].astype(float))
    a, b = vectors
    only = sorted(map(str, set(a.index) ^ set(b.index)))
    if only:
        raise ValueError(
            f"{xname} and {yname} must score the same runs; run(s) on one side "
            f"only: {shown_ids(only)}"
        )
    return a.to_numpy(), b.reindex(a.index).to_numpy()


def _broadcast_pair(x, y, xname: str, yname: str):
    """Return (X, Y, scalar_output) with X and Y broadcast to a common (k, m) shape."""
    if isinstance(x, pd.DataFrame) or isinstance(y, pd.DataFrame):
        x, y = _frame_scores(x, y, xname, yname)
    X = _score_rows(x, xname)
    Y = _score_rows(y, yname)
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"{xname} and {yname} must score the same number of systems, "
            f"got {X.shape[1]} and {Y.shape[1]}"
        )
    if X.shape[0] != Y.shape[0] and 1 not in (X.shape[0], Y.shape[0]):
        raise ValueError(
            f"{xname} and {yname} have {X.shape[0]} and {Y.shape[0]} rankings; "
            "they must be equal or one of them must be a single ranking"
        )
    scalar = np.ndim(x) == 1 and np.ndim(y) == 1
    k = max(X.shape[0], Y.shape[0])
    return np.broadcast_to(X, (k, X.shape[1])), np.broadcast_to(Y, (k, Y.shape[1])), scalar


def _row_chunks(k: int, m: int):
    step = max(1, _PAIRWISE_ELEMENTS // (m * m))
    for start in range(0, k, step):
        yield slice(start, min(k, start + step))


# --------------------------------------------------------------------------------------------
# Kendall's tau
# --------------------------------------------------------------------------------------------


def kendall_tau(x, y, variant: Literal["a", "b"] = "b"):
    r"""Kendall's rank correlation between two score vectors (higher = better).

    Over the :math:`n_0 = m(m-1)/2` pairs of systems, let :math:`C` be the number of concordant
    pairs, :math:`D` the discordant ones, and :math:`n_1`, :math:`n_2` the number of pairs tied in
    ``x`` and in ``y``. Then (Kendall 1945; docs/methods.md §5)

    .. math::

        \tau_a = \frac{C - D}{n_0}, \qquad
        \tau_b = \frac{C - D}{\sqrt{(n_0 - n_1)(n_0 - n_2)}} .

    Ties are exact equality of the scores. :math:`\tau_b` (the default, as
    ``scipy.stats.kendalltau``) is NaN when either vector is constant (a zero denominator);
    :math:`\tau_a` is then 0. :math:`\tau_a` equals the expectation of Kendall's tau over
    uniformly random tie-breaking, so identical vectors with ties give :math:`\tau_a < 1`.

    Parameters
    ----------
    x, y : array_like, shape (m,) or (k, m), or pandas.DataFrame
        Scores of the same ``m`` systems. 2-D input holds ``k`` rankings; a 1-D argument is
        paired with every row of the other. Or two tidy frames with columns ``run`` and
        ``value`` (one score per run, e.g. ``evaluate(..., per_topic=False)`` for one
        measure), matched by run.
    variant : {"b", "a"}
        Which coefficient.

    Returns
    -------
    float or numpy.ndarray
        A float when both inputs are 1-D, otherwise an array of ``k`` values.

    Examples
    --------
    >>> kendall_tau([.1, .2, .2, .3, .5], [.1, .3, .2, .2, .4], variant="a")
    0.6
    """
    if variant not in ("a", "b"):
        raise ValueError(f"variant must be 'a' or 'b', got {variant!r}")
    X, Y, scalar = _broadcast_pair(x, y, "x", "y")
    k, m = X.shape
    iu, ju = np.triu_indices(m, 1)
    n0 = iu.size
    out = np.empty(k)
    for sl in _row_chunks(k, m):
        sx = np.sign(X[sl, iu] - X[sl, ju])
        sy = np.sign(Y[sl, iu] - Y[sl, ju])
        s = (sx * sy).sum(axis=1)
        if variant == "a":
            out[sl] = s / n0
        else:
            # n0 - n1 is simply the number of pairs not tied in x.
            nx = np.count_nonzero(sx, axis=1).astype(float)
            ny = np.count_nonzero(sy, axis=1).astype(float)
            defined = (nx > 0) & (ny > 0)
            # Divided by one square root after the other and clipped to [-1, 1], as scipy does:
            # the values are scipy.stats.kendalltau's to the last bit.
            tau = s / np.sqrt(np.where(defined, nx, 1.0)) / np.sqrt(np.where(defined, ny, 1.0))
            out[sl] = np.where(defined, np.clip(tau, -1.0, 1.0), np.nan)
    return float(out[0]) if scalar else out


# --------------------------------------------------------------------------------------------
# AP correlation
# --------------------------------------------------------------------------------------------


def _harmonic(n: int) -> np.ndarray:
    """H[j] = sum_{i=1}^{j} 1/i for j = 0..n (H[0] = 0)."""
    h = np.zeros(n + 1)
    h[1:] = np.cumsum(1.0 / np.arange(1, n + 1))
    return h


def _tau_ap_expected(T: np.ndarray, E: np.ndarray, coupled: bool) -> np.ndarray:
    """Exact expectation of tau_AP(E | T) over random tie-breaking, one value per row.

    Write tau_AP as a sum over ordered pairs (a above b in E) of conc(a, b) / (pos_E(b) - 1).
    By linearity the expectation is a sum of per-pair expectations, each of which has a closed
    form in harmonic numbers (see :func:`tau_ap` for the derivation). For item b let s be the
    number of items strictly above it in E and g the size of its tie group in E, so its
    position is uniform on s+1..s+g.
    """
    k, m = E.shape
    H = _harmonic(m)
    out = np.empty(k)
    for sl in _row_chunks(k, m):
        e = E[sl]
        t = T[sl]
        # [r, a, b]: relations of item a to item b.
        e_gt = e[:, :, None] > e[:, None, :]
        e_eq = e[:, :, None] == e[:, None, :]
        t_gt = t[:, :, None] > t[:, None, :]
        t_eq = t[:, :, None] == t[:, None, :]
        s = e_gt.sum(axis=1).astype(float)  # items strictly above b in E
        g = e_eq.sum(axis=1).astype(float)  # b's tie group size in E (b included)
        above_conc = (e_gt & t_gt).sum(axis=1)  # a above b in E, and strictly above in T
        above_ttie = (e_gt & t_eq).sum(axis=1)  # a above b in E, tied with b in T
        # Number of other members of b's E-group tied with b in T (b itself excluded).
        group_ttie = (e_eq & t_eq).sum(axis=1) - 1

        si = s.astype(int)
        gi = g.astype(int)
        has_above = si >= 1
        # sum_{j=s}^{s+g-1} 1/j = H[s+g-1] - H[s-1]; only used when s >= 1.
        hs = np.where(has_above, H[si + gi - 1] - H[np.maximum(si - 1, 0)], 0.0)
        # E[1 / (pos_E(b) - 1)], pos uniform on s+1..s+g.
        w_strict = hs / g
        if coupled:
            # E[1{pi(a) < pi(b)} / (pos(b) - 1)] for a outside b's group: given b is k-th of
            # its group, a precedes b in the shared order with probability k/(g+1).
            # sum_k k/(s+k-1) = g + (1-s) * (H[s+g-1] - H[s-1]).
            w_tie = np.where(has_above, (g + (1.0 - s) * hs) / (g * (g + 1.0)), 0.0)
        else:
            w_tie = 0.5 * w_strict
        # Within b's own E-group: E[1{a above b} / (pos(b) - 1)] for a in the group is
        # K = sum_{j=1}^{g-1} j/(s+j) / (g(g-1)) = ((g-1) - s (H[s+g-1] - H[s])) / (g(g-1)).
        with np.errstate(invalid="ignore", divide="ignore"):
            kk = ((g - 1.0) - s * (H[si + gi - 1] - H[si])) / (g * (g - 1.0))
        kk = np.where(g >= 2, kk, 0.0)
        if coupled:
            # A T-strict pair in the group is concordant in exactly one of its two E orders; a
            # T-tied pair is concordant in both (the shared order breaks both ties alike).
            # Half of each unordered pair's weight is credited to each of its two members.
            within = kk * ((g - 1.0) + group_ttie) / 2.0
        else:
            within = kk * (g - 1.0) / 2.0
        total = (above_conc * w_strict + above_ttie * w_tie + within).sum(axis=1)
        out[sl] = 2.0 / (m - 1) * total - 1.0
    return out


def _tau_ap_untied(T: np.ndarray, E: np.ndarray) -> np.ndarray:
    """tau_AP(E | T) for rows with strict orders, by the paper's definition (positions in E)."""
    k, m = E.shape
    out = np.empty(k)
    for sl in _row_chunks(k, m):
        e = E[sl]
        t = T[sl]
        order = np.argsort(-e, axis=1, kind="stable")
        t_sorted = np.take_along_axis(t, order, axis=1)
        # C(i) = number of items above position i in E that T also ranks above E's i-th item.
        above = np.tril(np.ones((m, m), dtype=bool), -1)  # [i, j]: j above i in E
        conc = (t_sorted[:, None, :] > t_sorted[:, :, None]) & above
        c = conc.sum(axis=2)[:, 1:]
        out[sl] = 2.0 / (m - 1) * (c / np.arange(1, m)).sum(axis=1) - 1.0
    return out


def _tau_ap_sampled(T: np.ndarray, E: np.ndarray, n_samples: int, rng) -> np.ndarray:
    """MATTERS' estimator: average over ``n_samples`` shared random tie-breaking orders."""
    k, m = E.shape
    acc = np.zeros(k)
    for _ in range(n_samples):
        # A random priority per item (shared by T and E) breaks ties in both lists alike.
        priority = rng.random((k, m))
        rank_p = np.argsort(np.argsort(priority, axis=1), axis=1)
        # Lexicographic (score, -priority) as a strict score: tied items keep their score
        # order and fall in priority order.
        te = _strict_scores(T, rank_p)
        ee = _strict_scores(E, rank_p)
        acc += _tau_ap_untied(te, ee)
    return acc / n_samples


def _strict_scores(S: np.ndarray, rank_p: np.ndarray) -> np.ndarray:
    """Strict scores (dense rank of S, then priority) with the same order as S, ties broken."""
    k, m = S.shape
    out = np.empty((k, m))
    for r in range(k):
        _, dense = np.unique(S[r], return_inverse=True)
        out[r] = dense * m + (m - 1 - rank_p[r])
    return out


def tau_ap(
    truth,
    estimate,
    symmetric: bool = False,
    *,
    ties: Literal["coupled", "independent", "sample"] = "coupled",
    n_samples: int = 1000,
    rng=None,
):
    r"""AP rank correlation tau_AP (Yilmaz, Aslam & Robertson, SIGIR 2008).

    The estimated ranking E is scored against the true ranking T; errors near the top of E
    weigh more. With :math:`m` systems,

    .. math::

        \tau_{AP}(E \mid T) = \frac{2}{m-1} \sum_{i=2}^{m} \frac{C(i)}{i-1} - 1,

    where :math:`C(i)` is the number of systems ranked above position :math:`i` *in E* that T
    also ranks above E's :math:`i`-th system. As in the paper and in MATTERS' ``apCorr.m``, the
    sum runs over the positions of the **estimated** ranking, as in Urbano's ``ircor``
    (``tauAP``, which divides by the estimated rank; docs/methods.md §5). It is asymmetric;
    ``symmetric=True`` returns :math:`(\tau_{AP}(E\mid T) + \tau_{AP}(T\mid E)) / 2`.

    Tie policy
    ----------
    tau_AP is defined for strict orders. MATTERS breaks ties by drawing a random order of the
    systems, shared by both lists, and averages over 1000 such draws. metaeval returns the
    **exact expectation** of that procedure (``ties="coupled"``, the default), i.e. its limit
    for infinitely many draws, derived in closed form:

    Write :math:`\tau_{AP}` as :math:`\frac{2}{m-1}\sum_{a \succ_E b} \mathrm{conc}(a,b) /
    (\mathrm{pos}_E(b)-1) - 1` and take expectations pair by pair. For system b let s be the
    number of systems strictly above it in E and g the size of its tie group in E, so that its
    position is uniform on :math:`s+1..s+g`, and let :math:`H_j` be harmonic numbers. Then

    * a above b's group in E, strictly above b in T: weight
      :math:`\frac1g\sum_{j=s}^{s+g-1}\frac1j`;
    * a above b's group in E, tied with b in T: a precedes b in the shared order with
      probability :math:`k/(g+1)` when b is k-th of its group, giving
      :math:`\frac{1}{g(g+1)}\sum_{k=1}^{g}\frac{k}{s+k-1}`;
    * a and b in the same E group: :math:`K = \frac{1}{g(g-1)}\sum_{j=1}^{g-1}\frac{j}{s+j}`
      per unordered pair, counted once if T orders the pair strictly and twice if T ties it
      (the shared order then makes it concordant whichever way E breaks it).

    Consequences: identical score vectors give exactly 1 even with ties; an estimate with all
    systems tied gives 0 against any truth with no ties; with two systems tau_AP equals
    Kendall's tau. ``ties="independent"`` instead breaks ties in T and in E independently (a
    tied pair in T then counts 1/2, the analogue of :math:`\tau_a`; identical vectors with ties
    score below 1). ``ties="sample"`` runs MATTERS' Monte-Carlo average literally, with
    ``n_samples`` draws from ``rng``; it is slow and is kept to check the closed form. Without
    ties the three policies agree exactly. Urbano & Marrero (SIGIR 2017) propose
    :math:`\tau_{AP,a}` / :math:`\tau_{AP,b}`, which are different coefficients and not
    implemented here.

    Parameters
    ----------
    truth : array_like, shape (m,) or (k, m), or pandas.DataFrame
        Scores defining the reference ranking T (higher is better); or a tidy frame with
        columns ``run`` and ``value``, matched by run with ``estimate``.
    estimate : array_like, shape (m,) or (k, m)
        Scores defining the estimated ranking(s) E, e.g. one row per reduced-judgment trial.
    symmetric : bool
        Return the mean of both directions.
    ties : {"coupled", "independent", "sample"}
        Tie policy, see above.
    n_samples : int
        Tie-breaking draws for ``ties="sample"``.
    rng : None, int, SeedSequence or Generator
        Only used by ``ties="sample"``.

    Returns
    -------
    float or numpy.ndarray
        A float when both inputs are 1-D, otherwise one value per ranking.

    Examples
    --------
    The MATTERS ``apCorr`` example (truth = column 1, estimate = column 2):

    >>> round(tau_ap([6, 2, 3, 4, 5, 1], [1, 6, 4, 5, 3, 2]), 4)
    -0.4
    """
    if ties not in ("coupled", "independent", "sample"):
        raise ValueError(f"ties must be 'coupled', 'independent' or 'sample', got {ties!r}")
    if not isinstance(symmetric, (bool, np.bool_)):
        raise TypeError(f"symmetric must be a bool, got {type(symmetric).__name__}")
    T, E, scalar = _broadcast_pair(truth, estimate, "truth", "estimate")
    if ties == "sample":
        n_samples = check_int("n_samples", n_samples, min=1)
        gen = as_generator(rng)

        def one(t, e):
            return _tau_ap_sampled(
                np.ascontiguousarray(t), np.ascontiguousarray(e), int(n_samples), gen
            )
    else:
        coupled = ties == "coupled"

        def one(t, e):
            return _tau_ap_expected(t, e, coupled)

    val = one(T, E)
    if symmetric:
        val = (val + one(E, T)) / 2.0
    return float(val[0]) if scalar else val


# --------------------------------------------------------------------------------------------
# Bootstrap confidence interval over topics
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class TauBootstrapCI:
    """Bootstrap-over-topics confidence interval of a rank correlation.

    Attributes
    ----------
    estimate : float
        The coefficient on the observed topics (system means over all topics).
    low, high : float
        Percentile interval bounds.
    level : float
        Confidence level, e.g. 0.95.
    statistic : str
        Which coefficient.
    B : int
        Bootstrap samples.
    distribution : numpy.ndarray
        The ``B`` bootstrap values (NaN where undefined, e.g. tau_b of a constant ranking),
        kept so that other intervals can be computed.
    """

    estimate: float
    low: float
    high: float
    level: float
    statistic: str
    B: int
    distribution: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        """One row: ``statistic, estimate, low, high, level, B``."""
        return pd.DataFrame(
            [
                {
                    "statistic": self.statistic,
                    "estimate": self.estimate,
                    "low": self.low,
                    "high": self.high,
                    "level": self.level,
                    "B": self.B,
                }
            ]
        )


_STATISTICS = ("tau_b", "tau_a", "tau_ap", "tau_ap_symmetric")


def _correlate(statistic: str, truth, estimate):
    if statistic == "tau_b":
        return kendall_tau(truth, estimate, variant="b")
    if statistic == "tau_a":
        return kendall_tau(truth, estimate, variant="a")
    return tau_ap(truth, estimate, symmetric=statistic == "tau_ap_symmetric")


def tau_bootstrap_ci(
    truth_scores,
    estimate_scores,
    *,
    statistic: Literal["tau_b", "tau_a", "tau_ap", "tau_ap_symmetric"] = "tau_b",
    B: int = 1000,
    level: float = 0.95,
    rng=None,
) -> TauBootstrapCI:
    r"""Confidence interval of a rank correlation by resampling topics.

    Both inputs are (S systems x T topics) per-topic score matrices of the same systems on the
    same topics, e.g. one measure under full and under reduced judgments, or two measures.
    Each bootstrap sample draws T topics with replacement (the *same* topics for both
    matrices), ranks the systems by their mean over the sample in each matrix, and computes
    the coefficient between the two rankings (``truth_scores`` gives T for tau_AP). The
    interval is the percentile interval :math:`[q_{(1-\ell)/2}, q_{(1+\ell)/2}]` of the
    bootstrap values (Efron & Tibshirani 1993, ch. 13), with NaN values (undefined tau_b)
    dropped.

    Parameters
    ----------
    truth_scores, estimate_scores : array_like, shape (S, T)
        Per-topic scores; rows are systems, columns topics.
    statistic : {"tau_b", "tau_a", "tau_ap", "tau_ap_symmetric"}
    B : int
        Number of bootstrap samples (>= 1).
    level : float
        Confidence level in (0, 1).
    rng : None, int, SeedSequence or Generator
        Source of randomness; ``None`` draws fresh entropy.

    Returns
    -------
    TauBootstrapCI
    """
    if statistic not in _STATISTICS:
        raise ValueError(f"statistic must be one of {_STATISTICS}, got {statistic!r}")
    B = check_int("B", B, min=1)
    level = check_probability("level", level, open_low=True, open_high=True)
    gen = as_generator(rng)
    X = np.asarray(truth_scores, dtype=float)
    Y = np.asarray(estimate_scores, dtype=float)
    for arr, name in ((X, "truth_scores"), (Y, "estimate_scores")):
        if arr.ndim != 2:
            raise ValueError(
                f"{name} must be a 2-D (systems x topics) array, got shape {arr.shape}"
            )
        if arr.shape[0] < 2 or arr.shape[1] < 1:
            raise ValueError(f"{name} needs at least 2 systems and 1 topic, got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} contains NaN or infinite values")
    if X.shape != Y.shape:
        raise ValueError(
            "truth_scores and estimate_scores must have the same shape, got "
            f"{X.shape} and {Y.shape}"
        )
    n_topics = X.shape[1]
    idx = gen.integers(0, n_topics, size=(int(B), n_topics))
    # counts[b, t] = times topic t is drawn in sample b; sample means are one matrix product.
    flat = (idx + np.arange(int(B))[:, None] * n_topics).ravel()
    counts = np.bincount(flat, minlength=int(B) * n_topics).reshape(int(B), n_topics).astype(float)
    mx = counts @ X.T / n_topics
    my = counts @ Y.T / n_topics
    dist = np.asarray(_correlate(statistic, mx, my), dtype=float)
    est = float(_correlate(statistic, X.mean(axis=1), Y.mean(axis=1)))
    finite = dist[np.isfinite(dist)]
    if finite.size:
        low, high = np.quantile(finite, [(1 - level) / 2, (1 + level) / 2])
    else:
        low = high = np.nan
    dist.setflags(write=False)
    return TauBootstrapCI(
        estimate=est,
        low=float(low),
        high=float(high),
        level=float(level),
        statistic=statistic,
        B=int(B),
        distribution=dist,
    )
