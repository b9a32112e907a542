"""What the meta criteria share: score-matrix validation and the resampling machinery.

Private to :mod:`metaeval.meta`. The public face of the resampling is :func:`resamples`
(exported from :mod:`metaeval.meta`): one draw of bootstrap samples, Tukey permutations or
randomisation sign vectors that several measures, levels and criteria reuse, so that their
results differ only through their scores (common random numbers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from metaeval._validation import as_generator, check_choice, check_int
from metaeval._warnings import warn

# Ties at the observed statistic: discrete measures produce them, and float rounding can put a
# tied resample just below the observed value (docs/methods.md §1.2). A resample counts as at least
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


def score_matrix(
    scores, *, name: str = "scores", systems=None, min_topics: int = 2, topics=None, runs=None
):
    """Validate per-topic scores; return (X float (S, T), system names, topic labels).

    ``scores`` is an (S systems x T topics) array, or a tidy DataFrame with columns ``run``,
    ``topic`` and ``value`` (an optional ``measure`` column must hold a single measure).
    ``topics`` and ``runs`` select rows of a frame by id (anything
    :func:`metaeval.data.parse_ids` reads: ``"601-650"``, a list, a file); an array has no
    ids, so there they are an error (index the array instead).
    """
    if (topics is not None or runs is not None) and not isinstance(scores, pd.DataFrame):
        raise TypeError(
            f"topics= and runs= select rows of a tidy frame by id; {name} is an "
            "array: index its rows (runs) and columns (topics) instead"
        )
    if isinstance(scores, pd.DataFrame):
        scores = _select(scores, topics, runs)
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
            raise ValueError(
                f"systems must be None when {name} is a DataFrame (names come from 'run')"
            )
        dup = scores.duplicated(["run", "topic"])
        if dup.any():
            r = scores.loc[dup].iloc[0]
            raise ValueError(
                f"{name} has duplicate (run, topic) rows, e.g. ({r['run']!r}, {r['topic']!r})"
            )
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
            raise TypeError(
                f"{name} must be a numeric (systems x topics) array or a DataFrame"
            ) from exc
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


def _select(frame: pd.DataFrame, topics, runs) -> pd.DataFrame:
    from metaeval.data import parse_ids

    if topics is not None and "topic" in frame.columns:
        ids = frame["topic"].astype(str)
        frame = frame[ids.isin(parse_ids(topics, available=sorted(set(ids)), what="topic"))]
    if runs is not None and "run" in frame.columns:
        ids = frame["run"].astype(str)
        frame = frame[ids.isin(parse_ids(runs, available=sorted(set(ids)), what="run"))]
    return frame


def check_B(B, alpha: float | None = None, name: str = "B") -> int:
    """A number of resamples; warns when it is too small for any ASL to fall below alpha."""
    B = check_int(name, B, min=1)
    if alpha is not None and B * alpha < 1:
        warn(
            f"{name}={B} resamples cannot give an achieved significance level below "
            f"alpha={alpha:g} (the smallest is 1/{B}); use {name} >= {math.ceil(1 / alpha)}, "
            "e.g. 1000"
        )
    return B


def kth(alpha: float, B: int) -> int:
    """1-based position ceil(alpha * B), clamped to 1..B (guarding 0.05 * 1000 = 50.000...01)."""
    return int(min(B, max(1, math.ceil(alpha * B - 1e-9))))


# --------------------------------------------------------------------------------------------
# Bootstrap core (shared with significance.compare)
# --------------------------------------------------------------------------------------------


def observed_t(Z: np.ndarray):
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


def bootstrap_core(Z: np.ndarray, counts: np.ndarray, alpha: float):
    """Sakai's studentised null-shifted paired bootstrap for every row of Z at once.

    Parameters
    ----------
    Z : (P, T) per-topic differences z = x - y of P pairs.
    counts : (B, T) times each topic is drawn in each of the B shared bootstrap samples.

    Returns
    -------
    t_obs (P,), asl (P,), diff (P,)  -- see docs/methods.md 1.1.
    """
    B, n = counts.shape
    P = Z.shape[0]
    zbar, _, t_obs, const, zero_mean = observed_t(Z)
    W = Z - zbar[:, None]  # shift to the null hypothesis: mean(w) = 0
    scale = np.abs(Z).max(axis=1)
    abs_obs = np.abs(t_obs)
    with np.errstate(invalid="ignore"):
        thresh = np.maximum(abs_obs - (STAT_ATOL + STAT_RTOL * abs_obs), 0.0)
    # |t*| >= thresh  <=>  r* = S1^2 / dev >= thresh^2 n / (n - 1), where S1 = sum of the
    # resample, dev = sum of squared deviations = SS - S1^2 / n, and t*^2 = (n-1)/n * S1^2/dev.
    # Working with r* (monotone in |t*|) saves the square roots and divisions of t*.
    r_thresh = thresh * thresh * (n / (n - 1.0))
    k = kth(alpha, B)
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
                # (docs/methods.md §1.1.5); dev there is float noise, so r must be set explicitly.
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
    # Observed sd = 0 (docs/methods.md §1.1.5): identical systems are never significant (ASL = 1), a
    # constant non-zero difference always is (ASL = 0). w is then 0 up to rounding, so diff = 0.
    asl = np.where(const, np.where(zero_mean, 1.0, 0.0), asl)
    diff = np.where(const, 0.0, diff)
    return t_obs, asl, diff


# --------------------------------------------------------------------------------------------
# Tukey core
# --------------------------------------------------------------------------------------------


def tukey_ranges(X: np.ndarray, B: int, rng: np.random.Generator) -> np.ndarray:
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
# Shared resamples
# --------------------------------------------------------------------------------------------

RESAMPLING = ("bootstrap", "tukey", "randomization")
DEFAULT_B = {"bootstrap": 1000, "tukey": 5000, "randomization": 10000}


@dataclass(frozen=True, eq=False)
class Resamples:
    """One draw of resamples, shared by every measure, level and criterion that uses it.

    Attributes
    ----------
    method : {"bootstrap", "tukey", "randomization"}
    B : int
    n_topics : int
    n_systems : int or None
        Tukey only: the permutations shuffle the S systems of every topic. None for bootstrap
        samples and sign vectors, which resample topics only and so fit any number of systems.
    indices : ndarray of int, shape (B, T), or None
        Bootstrap: the topics of each sample (drawn with replacement).
    signs : ndarray of float, shape (B, T), or None
        Randomisation: the sign vectors (+1 / -1).
    seed : int or None
        Tukey: the seed of the permutations. They are regenerated from it when needed (B x T x
        S indices would take too much memory to keep); a permutation does not depend on the
        values permuted, so every measure with the same S and T sees the same permutations.
    """

    method: str
    B: int
    n_topics: int
    n_systems: int | None = None
    indices: np.ndarray | None = field(default=None, repr=False)
    signs: np.ndarray | None = field(default=None, repr=False)
    seed: int | None = None

    def counts(self) -> np.ndarray:
        """Bootstrap: (B, T) times each topic is drawn in each sample."""
        if self.indices is None:
            raise ValueError(f"{self.method} resamples have no bootstrap samples")
        B, n = self.indices.shape
        flat = (self.indices + np.arange(B)[:, None] * n).ravel()
        return np.bincount(flat, minlength=B * n).reshape(B, n).astype(float)

    def check(self, method: str, X: np.ndarray) -> None:
        """Raise ValueError unless these resamples fit ``method`` and the (S, T) scores."""
        S, n = X.shape
        if method != self.method:
            raise ValueError(f"resamples were drawn for the {self.method} method, not {method}")
        if n != self.n_topics:
            raise ValueError(
                f"resamples were drawn for {self.n_topics} topics; the scores have {n}"
            )
        if self.n_systems is not None and self.n_systems != S:
            raise ValueError(
                f"resamples were drawn for {self.n_systems} systems; the scores have {S}"
            )


def resamples(
    method: str, *, n_topics: int, n_systems: int | None = None, B: int | None = None, rng=None
) -> Resamples:
    """Draw resamples once, to share them (common random numbers).

    A study, or a user comparing measures, draws them once per collection and passes them as
    ``resamples=`` to :func:`~metaeval.meta.discriminative_power`,
    :func:`~metaeval.meta.compare` and :func:`~metaeval.meta.significance_inconsistency`, so
    that every measure and every judgment set is tested on the same samples and differences
    come from the scores alone. ``discriminative_power(X, rng=r)`` gives exactly the result of
    ``discriminative_power(X, resamples=resamples(..., rng=r))``.

    Parameters
    ----------
    method : {"bootstrap", "tukey", "randomization"}
    n_topics : int
    n_systems : int, optional
        Needed by "tukey", whose permutations shuffle the systems; ignored by the other
        methods, whose resamples depend on the topics alone and fit scores of any number of
        systems.
    B : int, optional
        Default 1000 (bootstrap), 5000 (tukey), 10000 (randomization).
    rng : None, int, SeedSequence or Generator

    Returns
    -------
    Resamples
    """
    check_choice("method", method, RESAMPLING)
    n_topics = check_int("n_topics", n_topics, min=1)
    B = DEFAULT_B[method] if B is None else check_int("B", B, min=1)
    gen = as_generator(rng)
    if method == "bootstrap":
        idx = gen.integers(0, n_topics, size=(B, n_topics))
        idx.setflags(write=False)
        return Resamples(method, B, n_topics, indices=idx)
    if method == "randomization":
        signs = 1.0 - 2.0 * gen.integers(0, 2, size=(B, n_topics)).astype(float)
        signs.setflags(write=False)
        return Resamples(method, B, n_topics, signs=signs)
    if n_systems is None:
        raise ValueError("tukey resamples permute systems: give n_systems")
    n_systems = check_int("n_systems", n_systems, min=2)
    return Resamples(method, B, n_topics, n_systems, seed=int(gen.integers(0, 2**63)))
