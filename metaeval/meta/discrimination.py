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

The exact procedures followed are METHODS.md sections 1.1 and 1.2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Mapping

import numpy as np
import pandas as pd

__all__ = [
    "DiscriminativePowerResult",
    "discriminative_power",
    "asl_curve_frame",
    "plot_asl_curves",
]

# Ties at the observed statistic: discrete measures produce them, and float rounding can put a
# tied resample just below the observed value (METHODS.md 1.2). A resample counts as at least
# as extreme when stat* >= stat_obs - (ATOL + RTOL * |stat_obs|).
STAT_ATOL = 1e-10
STAT_RTOL = 1e-10
# A sample whose variance is below VAR_RTOL times its mean square is a constant sample seen
# through float noise (the count-matrix variance sum(c w^2) - T mean^2 cancels to ~1e-16 of
# the mean square); it is treated as having sd exactly 0.
VAR_RTOL = 1e-13
# A mean below ZERO_RTOL times the largest |score difference| of the pair is zero.
ZERO_RTOL = 1e-12

# (pairs x samples) elements processed together in the bootstrap. Small blocks keep the ~20
# elementwise passes over each block in cache: 128 pairs x B = 1000 ran 1.7x faster than 2048.
_BLOCK_ELEMENTS = 131_072
# (pairs x samples) elements per matrix product: two such float arrays (~64 MB) at most.
_MATMUL_ELEMENTS = 4_194_304
# Tukey permutations drawn per chunk: bounds the (chunk x T x S) permuted array.
_TUKEY_ELEMENTS = 2_000_000


# --------------------------------------------------------------------------------------------
# Input validation shared by the meta modules
# --------------------------------------------------------------------------------------------


def _as_generator(rng) -> np.random.Generator:
    """Return a Generator for ``rng`` (Generator, int seed or None)."""
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"rng must be a numpy.random.Generator, an int seed or None, got {type(rng).__name__}"
    )


def _check_alpha(alpha) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)):
        raise TypeError(f"alpha must be a float in (0, 1), got {type(alpha).__name__}")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return float(alpha)


def _check_B(B, name: str = "B") -> int:
    if isinstance(B, bool) or not isinstance(B, (int, np.integer)):
        raise TypeError(f"{name} must be a positive integer, got {type(B).__name__}")
    if B < 1:
        raise ValueError(f"{name} must be a positive integer (>= 1), got {B}")
    return int(B)


def _score_matrix(scores, *, name: str = "scores", systems=None, min_topics: int = 2):
    """Validate per-topic scores; return (X float (S, T), system names, topic labels).

    ``scores`` is an (S systems x T topics) array, or a tidy DataFrame with columns ``run``,
    ``topic`` and ``value`` (an optional ``measure`` column must hold a single measure).
    """
    if isinstance(scores, pd.DataFrame):
        missing = {"run", "topic", "value"} - set(scores.columns)
        if missing:
            raise ValueError(
                f"{name} DataFrame must have columns run, topic, value; missing {sorted(missing)}"
            )
        if "measure" in scores.columns and scores["measure"].nunique(dropna=False) > 1:
            raise ValueError(
                f"{name} holds several measures ({sorted(map(str, scores['measure'].unique()))}); "
                "select one measure first"
            )
        if systems is not None:
            raise ValueError(f"systems must be None when {name} is a DataFrame (names come from 'run')")
        dup = scores.duplicated(["run", "topic"])
        if dup.any():
            r = scores.loc[dup].iloc[0]
            raise ValueError(f"{name} has duplicate (run, topic) rows, e.g. ({r['run']!r}, {r['topic']!r})")
        try:
            wide = scores.pivot(index="run", columns="topic", values="value").astype(float)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} column 'value' must be numeric") from exc
        if wide.isna().to_numpy().any():
            n_missing = int(wide.isna().to_numpy().sum())
            raise ValueError(
                f"{name} is missing {n_missing} (run, topic) values or has NaN values; every run "
                "needs a score on every topic"
            )
        X = wide.to_numpy(dtype=float)
        names = tuple(wide.index)
        topics = tuple(wide.columns)
    else:
        try:
            X = np.array(scores, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be a numeric (systems x topics) array or a DataFrame") from exc
        if X.ndim != 2:
            raise ValueError(f"{name} must be a 2-D (systems x topics) array, got shape {X.shape}")
        if systems is None:
            names = tuple(range(X.shape[0]))
        else:
            names = tuple(systems)
            if len(names) != X.shape[0]:
                raise ValueError(
                    f"systems has {len(names)} names but {name} has {X.shape[0]} rows (systems)"
                )
            if len(set(names)) != len(names):
                raise ValueError("systems must be unique names")
        topics = tuple(range(X.shape[1]))
    if X.shape[0] < 2:
        raise ValueError(f"{name} needs at least 2 systems, got {X.shape[0]}")
    if X.shape[1] < min_topics:
        raise ValueError(f"{name} needs at least {min_topics} topics, got {X.shape[1]}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return X, names, topics


def _kth(alpha: float, B: int) -> int:
    """1-based position ceil(alpha * B), clamped to 1..B (guarding 0.05 * 1000 = 50.000...01)."""
    return int(min(B, max(1, math.ceil(alpha * B - 1e-9))))


# --------------------------------------------------------------------------------------------
# Bootstrap core (shared with significance.compare)
# --------------------------------------------------------------------------------------------


def _bootstrap_counts(n_topics: int, B: int, rng: np.random.Generator):
    """Draw the B bootstrap index sets once; return (idx (B, T) int, counts (B, T) float)."""
    idx = rng.integers(0, n_topics, size=(B, n_topics))
    flat = (idx + np.arange(B)[:, None] * n_topics).ravel()
    counts = np.bincount(flat, minlength=B * n_topics).reshape(B, n_topics).astype(float)
    return idx, counts


def _observed_t(Z: np.ndarray):
    """Studentised paired statistic per row of Z (pairs x topics) and the degeneracy masks."""
    n = Z.shape[1]
    zbar = Z.mean(axis=1)
    var = Z.var(axis=1, ddof=1)
    scale = np.abs(Z).max(axis=1)
    ms = (Z * Z).mean(axis=1)
    const = var <= VAR_RTOL * ms  # sd(z) = 0 (includes the all-zero difference)
    zero_mean = np.abs(zbar) <= ZERO_RTOL * scale
    with np.errstate(divide="ignore", invalid="ignore"):
        t = zbar / np.sqrt(var / n)
    t = np.where(const, np.where(zero_mean, 0.0, np.copysign(np.inf, zbar)), t)
    return zbar, var, t, const, zero_mean


def _bootstrap_core(Z: np.ndarray, counts: np.ndarray, alpha: float):
    """Sakai's studentised null-shifted paired bootstrap for every row of Z at once.

    Parameters
    ----------
    Z : (P, T) per-topic differences z = x - y of P pairs.
    counts : (B, T) times each topic is drawn in each of the B shared bootstrap samples.

    Returns
    -------
    t_obs (P,), asl (P,), diff (P,)  -- see METHODS.md 1.1.
    """
    B, n = counts.shape
    P = Z.shape[0]
    zbar, _, t_obs, const, zero_mean = _observed_t(Z)
    W = Z - zbar[:, None]  # shift to the null hypothesis: mean(w) = 0
    scale = np.abs(Z).max(axis=1)
    abs_obs = np.abs(t_obs)
    with np.errstate(invalid="ignore"):
        thresh = np.maximum(abs_obs - (STAT_ATOL + STAT_RTOL * abs_obs), 0.0)
    # |t*| >= thresh  <=>  r* = S1^2 / dev >= thresh^2 n / (n - 1), where S1 = sum of the
    # resample, dev = sum of squared deviations = SS - S1^2 / n, and t*^2 = (n-1)/n * S1^2/dev.
    # Working with r* (monotone in |t*|) saves the square roots and divisions of t*.
    r_thresh = thresh * thresh * (n / (n - 1.0))
    k = _kth(alpha, B)
    asl = np.empty(P)
    diff = np.empty(P)
    countsT = np.ascontiguousarray(counts.T)
    # Few large matrix products (a multithreaded BLAS pays a synchronisation per call, which
    # dominated on a busy machine), then the elementwise work in cache-sized row blocks.
    outer = max(1, _MATMUL_ELEMENTS // B)
    block = max(1, _BLOCK_ELEMENTS // B)
    for o_start in range(0, P, outer):
        o_sl = slice(o_start, min(P, o_start + outer))
        # (pairs x samples): bootstrap sums and sums of squares of w, rows contiguous.
        S1 = W[o_sl] @ countsT
        SS = (W[o_sl] * W[o_sl]) @ countsT
        for start in range(0, S1.shape[0], block):
            i_sl = slice(start, min(S1.shape[0], start + block))
            sl = slice(o_start + i_sl.start, o_start + i_sl.stop)
            s1 = S1[i_sl]
            ss = SS[i_sl]
            p = s1.shape[0]
            a = s1 * s1
            dev = a / (-n)
            dev += ss
            const_b = dev <= VAR_RTOL * ss
            r = a  # reuse the buffer: r = S1^2 / dev
            with np.errstate(divide="ignore", invalid="ignore"):
                np.divide(a, dev, out=r)
            if const_b.any():
                # Degenerate resample (sd* = 0): t* = 0 if its mean is 0 too, else +-inf
                # (METHODS 1.1.5); dev there is float noise, so r must be set explicitly.
                ci, cb = np.nonzero(const_b)
                zero = np.abs(s1[ci, cb]) / n <= ZERO_RTOL * scale[sl][ci]
                r[ci, cb] = np.where(zero, 0.0, np.inf)
            asl[sl] = np.count_nonzero(r >= r_thresh[sl, None], axis=1) / B
            # diff(X, Y): |mean(w*)| of the sample at 1-based position k of |t*| sorted
            # descending, ties resolved by sample order (a stable sort), found without
            # sorting: the k-th largest value, then the (k - #larger)-th sample equal to it.
            vk = np.partition(r, B - k, axis=1)[:, B - k]
            eq = r == vk[:, None]
            pick = np.argmax(eq, axis=1)  # first sample equal to the k-th largest
            need = k - np.count_nonzero(r > vk[:, None], axis=1)
            for i in np.nonzero(need > 1)[0]:
                pick[i] = np.flatnonzero(eq[i])[need[i] - 1]
            diff[sl] = np.abs(s1[np.arange(p), pick]) / n
    # Observed sd = 0 (METHODS 1.1.5): identical systems are never significant (ASL = 1), a
    # constant non-zero difference always is (ASL = 0). w is then 0 up to rounding, so diff = 0.
    asl = np.where(const, np.where(zero_mean, 1.0, 0.0), asl)
    diff = np.where(const, 0.0, diff)
    return t_obs, asl, diff


# --------------------------------------------------------------------------------------------
# Tukey core
# --------------------------------------------------------------------------------------------


def _tukey_ranges(X: np.ndarray, B: int, rng: np.random.Generator) -> np.ndarray:
    """r_b = max - min of the system means after permuting every topic's scores (B values)."""
    S, n = X.shape
    XT = np.ascontiguousarray(X.T)  # (T, S): one row per topic, permuted independently
    chunk = max(1, _TUKEY_ELEMENTS // (S * n))
    r = np.empty(B)
    for start in range(0, B, chunk):
        c = min(chunk, B - start)
        perm = rng.permuted(np.broadcast_to(XT, (c, n, S)), axis=2)
        means = perm.mean(axis=1)
        r[start : start + c] = means.max(axis=1) - means.min(axis=1)
    return r


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
        METHODS.md 1.1.4). Tukey: the critical difference, the ceil(alpha B)-th largest r_b
        (METHODS.md 1.2.3).
    method : {"bootstrap", "tukey"}
    B : int
    alpha : float
    systems : tuple
        System names in row order.
    n_topics : int
    asl_sorted : numpy.ndarray
        All ASL values, ascending: the ASL curve.
    pair_diffs : numpy.ndarray or None
        Bootstrap only: diff(X, Y) per pair, in ``pairs`` order.
    range_distribution : numpy.ndarray or None
        Tukey only: the B values r_b (max - min of permuted system means), in draw order.
    bootstrap_indices : numpy.ndarray or None
        Bootstrap only: the (B, T) topic indices of the shared bootstrap samples.
    """

    power: float
    pairs: pd.DataFrame
    diff_required: float
    method: str
    B: int
    alpha: float
    systems: tuple
    n_topics: int
    asl_sorted: np.ndarray
    pair_diffs: np.ndarray | None = None
    range_distribution: np.ndarray | None = None
    bootstrap_indices: np.ndarray | None = None

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
        return pd.DataFrame({"rank": np.arange(1, self.asl_sorted.size + 1), "asl": self.asl_sorted})

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
) -> DiscriminativePowerResult:
    r"""Discriminative power of a measure from its per-topic scores (Sakai 2006; Sakai 2012).

    **Paired bootstrap** (``method="bootstrap"``, default B = 1000; Sakai SIGIR 2006, as
    METHODS.md 1.1). One set of B bootstrap samples of the T topics (drawn with replacement) is
    shared by all pairs. For a pair (X, Y) with per-topic differences :math:`z_i = x_i - y_i`:

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
    2012/2014, as METHODS.md 1.2). For b = 1..B the S scores of every topic are permuted
    independently, and :math:`r_b` = max - min of the S permuted system means. Then
    :math:`\mathrm{ASL}(X, Y) = \#\{b : r_b \ge |\bar x - \bar y|\} / B`, one reference
    distribution for all pairs, which controls the family-wise error rate. ``diff_required`` is
    the critical difference, the :math:`\lceil \alpha B \rceil`-th largest :math:`r_b`.

    In both, DP = #{pairs : ASL < alpha} / C(S, 2), and "at least as extreme" is tested with a
    tolerance, ``stat* >= stat_obs - (1e-10 + 1e-10 |stat_obs|)``, so that resamples tied with
    the observed statistic count whatever float rounding did (METHODS.md 1.2).

    Degenerate cases (METHODS.md 1.1.5). A pair whose differences have sd = 0 gets ASL = 1 if
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
    rng : numpy.random.Generator, int or None
        The only source of randomness; an int is a seed, None draws fresh entropy.
    systems : sequence, optional
        Names of the S rows when ``scores`` is an array (default 0..S-1).

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
    if method not in ("bootstrap", "tukey"):
        raise ValueError(f"method must be 'bootstrap' or 'tukey', got {method!r}")
    alpha = _check_alpha(alpha)
    B = (1000 if method == "bootstrap" else 5000) if B is None else _check_B(B)
    gen = _as_generator(rng)
    X, names, _ = _score_matrix(scores, systems=systems)
    S, n = X.shape
    ia, ib = np.triu_indices(S, 1)
    means = X.mean(axis=1)
    d = means[ia] - means[ib]
    pair_diffs = range_dist = idx = None
    if method == "bootstrap":
        idx, counts = _bootstrap_counts(n, B, gen)
        statistic, asl, pair_diffs = _bootstrap_core(X[ia] - X[ib], counts, alpha)
        diff_required = float(pair_diffs.max())
        diff_estimate = pair_diffs
    else:
        range_dist = _tukey_ranges(X, B, gen)
        r_sorted = np.sort(range_dist)
        absd = np.abs(d)
        thresh = absd - (STAT_ATOL + STAT_RTOL * absd)
        asl = (B - np.searchsorted(r_sorted, thresh, side="left")) / B
        diff_required = float(r_sorted[B - _kth(alpha, B)])
        statistic = absd
        diff_estimate = np.full(d.shape, np.nan)
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
        n_topics=n,
        asl_sorted=_readonly(np.sort(asl)),
        pair_diffs=None if pair_diffs is None else _readonly(pair_diffs.copy()),
        range_distribution=None if range_dist is None else _readonly(range_dist),
        bootstrap_indices=None if idx is None else _readonly(idx),
    )


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
        raise TypeError(f"results must be a mapping of measure name to result, got {type(results).__name__}")
    frames = []
    for name, res in results.items():
        if not isinstance(res, DiscriminativePowerResult):
            raise TypeError(f"results[{name!r}] must be a DiscriminativePowerResult, got {type(res).__name__}")
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
    import seaborn as sns
    from matplotlib.figure import Figure

    frame = results if isinstance(results, pd.DataFrame) else asl_curve_frame(results)
    missing = {"measure", "rank", "asl"} - set(frame.columns)
    if missing:
        raise ValueError(f"results frame lacks columns {sorted(missing)}")
    if ax is None:
        fig = Figure(figsize=(6, 4), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    sns.lineplot(data=frame, x="rank", y="asl", hue="measure", ax=ax, drawstyle="steps-post")
    if "alpha" in frame.columns and frame["alpha"].nunique() == 1 and len(frame):
        a = float(frame["alpha"].iloc[0])
        ax.axhline(a, color="grey", linestyle="--", linewidth=0.8)
    ax.set_xlabel("system pair, sorted by ASL")
    ax.set_ylabel("achieved significance level (ASL)")
    if title:
        ax.set_title(title)
    if path is not None:
        fig.savefig(path, dpi=150)
    return fig
