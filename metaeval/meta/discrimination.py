"""Discriminative power: Sakai's paired bootstrap test and the randomised Tukey HSD test.

Discriminative power asks how many pairs of systems an evaluation measure can tell apart on a
test collection: run a significance test on every pair of systems, using the measure's
per-topic scores, and report the share of pairs whose achieved significance level (ASL) is
below alpha. The sorted ASLs drawn against the pair rank give the *ASL curve* (Sakai 2006):
the lower the curve, the more discriminative the measure.

References
----------
.. [S06] T. Sakai (2006). Evaluating evaluation metrics based on the bootstrap. SIGIR 2006,
   525-532.
.. [S12] T. Sakai (2012). Evaluation with informational and navigational intents. WWW 2012.
.. [S14] T. Sakai (2014). Statistical reform in information retrieval? SIGIR Forum 48(1);
   and Topic set size design (PROMISE 2014) for the randomised Tukey HSD test.
.. [CAR] B. Carterette (2012). Multiple testing in statistical analysis of systems-based
   information retrieval experiments. ACM TOIS 30(1) (randomised Tukey HSD in IR).
.. [MAT] N. Ferro et al. MATTERS, ``discriminativePower.m`` (checked against Sakai's C code).

The exact procedures followed are those of docs/methods.md, sections 1.1 and 1.2.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from metaeval._validation import check_alpha, check_choice
from metaeval.meta._resampling import (
    DEFAULT_B,
    STAT_ATOL,
    STAT_RTOL,
    Resamples,
    bootstrap_core,
    check_B,
    kth,
    score_matrix,
    tukey_ranges,
)
from metaeval.meta._resampling import resamples as draw_resamples

__all__ = [
    "DiscriminativePowerResult",
    "discriminative_power",
    "asl_curve_frame",
    "plot_asl_curves",
]

# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class DiscriminativePowerResult:
    """Result of :func:`discriminative_power`, with the raw material to redraw the ASL curve.

    Attributes
    ----------
    power : float
        Share of system pairs with ASL < alpha.
    pairs : pandas.DataFrame
        One row per pair (a before b in system order): ``system_a``, ``system_b``, ``mean_a``,
        ``mean_b``, ``diff`` (= mean_a - mean_b), ``statistic`` (bootstrap: the studentised
        t(z); tukey: |diff|), ``asl``, ``significant`` (asl < alpha) and ``diff_estimate``
        (bootstrap: Sakai's per-pair diff(X, Y); tukey: NaN).
    diff_required : float
        Bootstrap: max over pairs of diff(X, Y), the estimated difference required (Sakai 2006;
        docs/methods.md §1.1.4). Tukey: the critical difference, the ceil(alpha B)-th largest r_b
        (docs/methods.md §1.2.3).
    method : {"bootstrap", "tukey"}
    B : int
    alpha : float
    systems : tuple
        System names in row order.
    topics : tuple
        Topic labels in column order (a tidy frame's topic ids; column positions 0..T-1 for an
        array), so that other scores are compared on the same topics.
    asl_sorted : numpy.ndarray
        All ASL values, ascending: the ASL curve.
    pair_diffs : numpy.ndarray or None
        Bootstrap only: diff(X, Y) per pair, in ``pairs`` order.
    range_distribution : numpy.ndarray or None
        Tukey only: the B values r_b (max - min of permuted system means), in draw order.
    bootstrap_indices : numpy.ndarray or None
        Bootstrap only: the (B, T) topic indices of the shared bootstrap samples.
    resamples : Resamples
        The resamples used, to test other scores on the same samples
        (:func:`~metaeval.meta.significance_inconsistency` reuses them).
    """

    power: float
    pairs: pd.DataFrame
    diff_required: float
    method: str
    B: int
    alpha: float
    systems: tuple
    topics: tuple
    asl_sorted: np.ndarray
    pair_diffs: np.ndarray | None = None
    range_distribution: np.ndarray | None = None
    bootstrap_indices: np.ndarray | None = None
    resamples: Resamples | None = None

    def to_frame(self) -> pd.DataFrame:
        """One row per pair of systems (a copy of :attr:`pairs`)."""
        return self.pairs.copy()

    @property
    def n_topics(self) -> int:
        """Number of topics, T."""
        return len(self.topics)

    @property
    def n_pairs(self) -> int:
        """Number of system pairs, S(S-1)/2."""
        return int(len(self.pairs))

    @property
    def n_significant(self) -> int:
        """Number of pairs with ASL < alpha."""
        return int(self.pairs["significant"].sum())

    def asl_curve(self) -> pd.DataFrame:
        """The ASL curve: columns ``rank`` (1..n_pairs) and ``asl`` (ascending)."""
        return pd.DataFrame(
            {"rank": np.arange(1, self.asl_sorted.size + 1), "asl": self.asl_sorted}
        )

    def __repr__(self) -> str:
        return (
            f"DiscriminativePowerResult(method={self.method!r}, power={self.power:.4f}, "
            f"diff_required={self.diff_required:.4f}, pairs={self.n_pairs}, B={self.B}, "
            f"alpha={self.alpha}, systems={len(self.systems)}, topics={self.n_topics})"
        )


def _readonly(a):
    a = np.asarray(a)
    a.setflags(write=False)
    return a


def discriminative_power(
    scores,
    *,
    method: Literal["bootstrap", "tukey"] = "bootstrap",
    B: int | None = None,
    alpha: float = 0.05,
    rng=None,
    systems=None,
    resamples: Resamples | None = None,
    topics=None,
    runs=None,
) -> DiscriminativePowerResult:
    r"""Discriminative power of a measure from its per-topic scores (Sakai 2006; Sakai 2012).

    **Paired bootstrap** (``method="bootstrap"``, default B = 1000; Sakai SIGIR 2006, as
    docs/methods.md §1.1). One set of B bootstrap samples of the T topics (drawn with
    replacement) is shared by all pairs. For a pair (X, Y) with per-topic differences
    :math:`z_i = x_i - y_i`:

    .. math::

        t(z) = \frac{\bar z}{\hat\sigma_z / \sqrt T}, \qquad w_i = z_i - \bar z, \qquad
        \mathrm{ASL} = \frac{\#\{b : |t(w^{*b})| \ge |t(z)|\}}{B},

    where :math:`w^{*b}` is :math:`w` resampled with sample b and :math:`\hat\sigma` uses
    ddof = 1. The per-pair difference diff(X, Y) is :math:`|\bar w^{*b}|` of the sample at
    1-based position :math:`\lceil \alpha B \rceil` when the :math:`|t(w^{*b})|` are sorted in
    descending order (ties kept in sample order), and ``diff_required`` is its maximum over
    pairs. The computation is vectorised over all pairs: with ``counts[b, t]`` the number of
    times topic t is in sample b, the bootstrap means and sums of squares of all pairs are two
    matrix products.

    **Randomised Tukey HSD** (``method="tukey"``, default B = 5000; Carterette 2012, Sakai
    2012/2014, as docs/methods.md §1.2). For b = 1..B the S scores of every topic are permuted
    independently, and :math:`r_b` = max - min of the S permuted system means. Then
    :math:`\mathrm{ASL}(X, Y) = \#\{b : r_b \ge |\bar x - \bar y|\} / B`, one reference
    distribution for all pairs, which controls the family-wise error rate. ``diff_required`` is
    the critical difference, the :math:`\lceil \alpha B \rceil`-th largest :math:`r_b`.

    In both, DP = #{pairs : ASL < alpha} / C(S, 2), and "at least as extreme" is tested with a
    tolerance, ``stat* >= stat_obs - (1e-10 + 1e-10 |stat_obs|)``, so that resamples tied with
    the observed statistic count whatever float rounding did (docs/methods.md §1.2).

    Degenerate cases (docs/methods.md §1.1.5). A pair whose differences have sd = 0 gets ASL = 1 if
    the mean difference is 0 (identical systems are never significantly different) and ASL = 0
    otherwise (a constant non-zero difference on every topic is always significant); its
    diff(X, Y) is 0. A bootstrap sample with sd = 0 has t* = 0 if its mean is 0, else
    :math:`\pm\infty` (it then counts as extreme). "sd = 0" means a variance below 1e-13 times
    the mean square, i.e. zero up to float rounding; "mean 0" means below 1e-12 times the
    pair's largest |difference|.

    Parameters
    ----------
    scores : array_like (S, T) or pandas.DataFrame
        Per-topic scores, rows = systems, columns = topics; or a tidy frame with columns
        ``run``, ``topic``, ``value`` (pivoted; ``run`` values become system names, sorted).
        Every system needs a score on every topic.
    method : {"bootstrap", "tukey"}
    B : int, optional
        Number of bootstrap samples / permutations; default 1000 (bootstrap), 5000 (tukey).
    alpha : float
        Significance level in (0, 1).
    rng : None, int, SeedSequence or Generator
        The only source of randomness; None draws fresh entropy. Ignored with ``resamples``.
    systems : sequence, optional
        Names of the S rows when ``scores`` is an array (default 0..S-1).
    resamples : Resamples, optional
        Samples drawn beforehand by :func:`~metaeval.meta.resamples` (and shared with other
        measures or judgment sets); ``B`` then comes from them.
    topics, runs : selection, optional
        For a tidy frame: only these topics and runs (``"601-650"``, a list, a file).

    A B smaller than 1/alpha gets a warning: no ASL can then fall below alpha.

    Returns
    -------
    DiscriminativePowerResult

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).random((5, 30))
    >>> res = discriminative_power(X, rng=1)
    >>> res.n_pairs, res.B
    (10, 1000)
    """
    check_choice("method", method, ("bootstrap", "tukey"))
    alpha = check_alpha(alpha)
    X, names, labels = score_matrix(scores, systems=systems, topics=topics, runs=runs)
    S, n = X.shape
    if resamples is None:
        resamples = draw_resamples(
            method, n_topics=n, n_systems=S, B=DEFAULT_B[method] if B is None else B, rng=rng
        )
    elif B is not None and B != resamples.B:
        raise ValueError(f"B={B} but the resamples hold {resamples.B}; give one or the other")
    resamples.check(method, X)
    B = check_B(resamples.B, alpha)
    ia, ib = np.triu_indices(S, 1)
    means = X.mean(axis=1)
    d = means[ia] - means[ib]
    test = pair_tests(X, method, alpha, resamples)
    statistic, asl, diff_required = test.statistic, test.asl, test.diff_required
    pair_diffs = test.diff_estimate if method == "bootstrap" else None
    diff_estimate = test.diff_estimate
    range_dist = test.range_distribution
    idx = resamples.indices if method == "bootstrap" else None
    significant = asl < alpha
    pairs = pd.DataFrame(
        {
            "system_a": [names[i] for i in ia],
            "system_b": [names[j] for j in ib],
            "mean_a": means[ia],
            "mean_b": means[ib],
            "diff": d,
            "statistic": statistic,
            "asl": asl,
            "significant": significant,
            "diff_estimate": diff_estimate,
        }
    )
    return DiscriminativePowerResult(
        power=float(significant.mean()),
        pairs=pairs,
        diff_required=diff_required,
        method=method,
        B=B,
        alpha=alpha,
        systems=names,
        topics=labels,
        asl_sorted=_readonly(np.sort(asl)),
        pair_diffs=None if pair_diffs is None else _readonly(pair_diffs.copy()),
        range_distribution=None if range_dist is None else _readonly(range_dist),
        bootstrap_indices=None if idx is None else _readonly(idx),
        resamples=resamples,
    )


@dataclass(frozen=True, eq=False)
class PairTests:
    """The test of every pair of systems (a before b in row order), without names or tables:
    what a study keeps of a test repeated on many topic resamples.

    Attributes
    ----------
    statistic, asl, diff_estimate : numpy.ndarray
        Per pair, as the columns of :attr:`DiscriminativePowerResult.pairs`.
    diff : numpy.ndarray
        Per pair, the mean difference a - b.
    diff_required : float
    alpha : float
    range_distribution : numpy.ndarray or None
        Tukey only: the B permuted ranges.
    """

    statistic: np.ndarray
    asl: np.ndarray
    diff_estimate: np.ndarray
    diff: np.ndarray
    diff_required: float
    alpha: float
    range_distribution: np.ndarray | None = None

    @property
    def significant(self) -> np.ndarray:
        return self.asl < self.alpha

    @property
    def n_pairs(self) -> int:
        return int(self.asl.size)

    @property
    def n_significant(self) -> int:
        return int(np.count_nonzero(self.significant))

    @property
    def power(self) -> float:
        return float(self.n_significant / self.n_pairs) if self.n_pairs else float("nan")


def pair_tests(X: np.ndarray, method: str, alpha: float, resamples: Resamples) -> PairTests:
    """Test every pair of rows of the (S, T) scores ``X`` with shared ``resamples``: the
    computation of :func:`discriminative_power`, without its checks and tables."""
    S = X.shape[0]
    B = resamples.B
    ia, ib = np.triu_indices(S, 1)
    means = X.mean(axis=1)
    d = means[ia] - means[ib]
    if method == "bootstrap":
        statistic, asl, diff_estimate = bootstrap_core(X[ia] - X[ib], resamples.counts(), alpha)
        return PairTests(
            statistic, asl, diff_estimate, d, float(diff_estimate.max(initial=0.0)), alpha
        )
    range_dist = tukey_ranges(X, B, np.random.default_rng(resamples.seed))
    r_sorted = np.sort(range_dist)
    absd = np.abs(d)
    thresh = absd - (STAT_ATOL + STAT_RTOL * absd)
    asl = (B - np.searchsorted(r_sorted, thresh, side="left")) / B
    return PairTests(
        absd,
        asl,
        np.full(d.shape, np.nan),
        d,
        float(r_sorted[B - kth(alpha, B)]),
        alpha,
        range_distribution=range_dist,
    )


def pair_tests_many(
    X: np.ndarray, positions: np.ndarray, method: str, alpha: float, resamples: Resamples
) -> list[PairTests]:
    """:func:`pair_tests` on the columns ``positions[k]`` of the (S, T) scores ``X`` for every
    row k of ``positions`` (k topic sets of the same size, such as topic resamples), with the
    same shared ``resamples``. The paired bootstrap tests every pair of every topic set in one
    computation (its tests of different rows are independent given the draws); the Tukey test
    is run set by set."""
    if method != "bootstrap":
        return [pair_tests(X[:, p], method, alpha, resamples) for p in positions]
    S = X.shape[0]
    ia, ib = np.triu_indices(S, 1)
    P, (k, n) = ia.size, positions.shape
    Z = X[ia] - X[ib]  # (P, T): per-topic differences of every pair
    counts = resamples.counts()
    out = []
    step = max(1, _BATCH_ELEMENTS // max(1, P * n))
    for start in range(0, k, step):
        block = positions[start : start + step]
        stacked = np.moveaxis(Z[:, block], 1, 0).reshape(-1, n)  # (sets x pairs, n)
        statistic, asl, diff_estimate = bootstrap_core(stacked, counts, alpha)
        for j, p in enumerate(block):
            sl = slice(j * P, (j + 1) * P)
            means = X[:, p].mean(axis=1)
            out.append(
                PairTests(
                    statistic[sl],
                    asl[sl],
                    diff_estimate[sl],
                    means[ia] - means[ib],
                    float(diff_estimate[sl].max(initial=0.0)),
                    alpha,
                )
            )
    return out


#: Elements of the stacked differences :func:`pair_tests_many` tests at once.
_BATCH_ELEMENTS = 4_000_000


def asl_curve_frame(results: Mapping[str, DiscriminativePowerResult]) -> pd.DataFrame:
    """Tidy ASL curves of several measures, for plotting or saving.

    Parameters
    ----------
    results : mapping of str to DiscriminativePowerResult
        One result per measure name.

    Returns
    -------
    pandas.DataFrame
        Columns ``measure``, ``rank`` (1..n_pairs), ``asl`` (ascending within a measure),
        ``method``, ``alpha``.
    """
    if not isinstance(results, Mapping):
        raise TypeError(
            f"results must be a mapping of measure name to result, got {type(results).__name__}"
        )
    frames = []
    for name, res in results.items():
        if not isinstance(res, DiscriminativePowerResult):
            raise TypeError(
                f"results[{name!r}] must be a DiscriminativePowerResult, got {type(res).__name__}"
            )
        f = res.asl_curve()
        f.insert(0, "measure", name)
        f["method"] = res.method
        f["alpha"] = res.alpha
        frames.append(f)
    if not frames:
        return pd.DataFrame({"measure": [], "rank": [], "asl": [], "method": [], "alpha": []})
    return pd.concat(frames, ignore_index=True)


def plot_asl_curves(results, *, ax=None, path=None, title: str | None = None):
    """Draw ASL against pair rank, one line per measure (Sakai 2006, Fig. 3 style).

    The figure is drawn by :func:`metaeval.report.figures.asl_curves`, where every figure of
    metaeval lives; this is the entry point for results held in memory.

    Parameters
    ----------
    results : mapping of str to DiscriminativePowerResult, or pandas.DataFrame
        Results per measure, or the output of :func:`asl_curve_frame`.
    ax : matplotlib.axes.Axes, optional
        Draw into this axes; by default a new figure is created. No pyplot state is touched,
        so this works under any backend (files are written with Agg).
    path : str or pathlib.Path, optional
        Save the figure there (format from the extension).
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from metaeval.report.figures import asl_curves

    frame = results if isinstance(results, pd.DataFrame) else asl_curve_frame(results)
    missing = {"measure", "rank", "asl"} - set(frame.columns)
    if missing:
        raise ValueError(f"results frame lacks columns {sorted(missing)}")
    alpha = None
    if "alpha" in frame.columns and frame["alpha"].nunique() == 1 and len(frame):
        alpha = float(frame["alpha"].iloc[0])
    plain = frame[["measure", "rank", "asl"]]
    if ax is None:
        fig = asl_curves(plain, alpha=alpha)
        ax = fig.axes[0]
    else:
        fig = asl_curves(plain, alpha=alpha, ax=ax)
    ax.set_ylabel("achieved significance level (ASL)")
    if title:
        ax.set_title(title)
    if path is not None:
        fig.savefig(path, dpi=150)
    return fig
