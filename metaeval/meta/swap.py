"""The swap method (Voorhees & Buckley, SIGIR 2002): error rate of a measure per topic-set
size and score-difference bin, with extrapolation to larger topic sets.

For two disjoint random topic sets Q1 and Q2 of the same size c, a "swap" is a pair of systems
that Q1 orders one way and Q2 the other. The error rate of the pairs whose difference on Q1
falls in a given bin estimates how often a difference of that size, observed on c topics, is
reversed on another set of c topics.

References
----------
.. [VB02] E. M. Voorhees, C. Buckley (2002). The effect of topic set size on retrieval
   experiment error. SIGIR 2002, 316-323.
.. [S06] T. Sakai (2006). Evaluating evaluation metrics based on the bootstrap. SIGIR 2006
   (swap rates compared at a fixed c; topics sampled with replacement).
.. [UMM13] J. Urbano, M. Marrero, D. Martin (2013). On the measurement of test collection
   reliability. SIGIR 2013 (``split-half.R``: dropping the worst systems; the exponential
   and power-law extrapolations).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from metaeval._validation import as_generator, check_int, check_real
from metaeval.meta._resampling import score_matrix

__all__ = ["SwapResult", "swap_method"]

# Mean differences this small are float noise of equal means (e.g. the same multiset of a
# discrete measure's values summed in another order) and are taken as exactly 0.
_ZERO_DIFF = 1e-12
# A |difference| within this many bin widths below a bin edge belongs to the upper bin, so that
# 0.03 / 0.01 = 2.9999999999999996 still lands in bin 3.
_EDGE_EPS = 1e-9


@dataclass(frozen=True, eq=False)
class SwapResult:
    """Result of :func:`swap_method`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (topic-set size, bin): ``topic_set_size``, ``bin``, ``diff_low``,
        ``diff_high`` (``inf`` for the last, open bin), ``pairs`` (pair-trials whose |d1| fell
        in the bin), ``swaps`` and ``error_rate`` = swaps / pairs (NaN when pairs = 0).
    trials, bin_width, n_bins, drop_worst, with_replacement, zero_is_swap
        The parameters used.
    systems : tuple
        The systems kept (after dropping the worst).
    n_topics : int
    """

    table: pd.DataFrame
    trials: int
    bin_width: float
    n_bins: int
    drop_worst: float
    with_replacement: bool
    zero_is_swap: bool
    systems: tuple
    n_topics: int

    def to_frame(self) -> pd.DataFrame:
        """One row per topic-set size and bin (a copy of :attr:`table`)."""
        return self.table.copy()

    def extrapolate(self, target_size: int, model: Literal["exp", "power"] = "exp") -> pd.DataFrame:
        r"""Extrapolate each bin's error rate to ``target_size`` topics.

        Per bin, fit by least squares over the observed topic-set sizes c

        * ``model="exp"`` (Voorhees & Buckley 2002; Urbano's ``extrapolate.exp2``):
          :math:`\log \mathrm{err} = a + b c`;
        * ``model="power"`` (Urbano's ``exp1``): :math:`\log \mathrm{err} = a + b \log c`;

        dropping points with zero error (log undefined) or no pairs, and predict at
        ``target_size``. Bins with fewer than two usable points at distinct c get NaN. The
        prediction is returned as is (not capped at 1).

        Returns
        -------
        pandas.DataFrame
            Columns ``bin, diff_low, diff_high, n_points, intercept, slope, target_size,
            error_rate``.
        """
        if model not in ("exp", "power"):
            raise ValueError(f"model must be 'exp' or 'power', got {model!r}")
        target_size = check_int("target_size", target_size, min=1)
        rows = []
        for b, grp in self.table.groupby("bin", sort=True):
            ok = (grp["pairs"] > 0) & (grp["error_rate"] > 0)
            c = grp.loc[ok, "topic_set_size"].to_numpy(float)
            y = np.log(grp.loc[ok, "error_rate"].to_numpy(float))
            x = c if model == "exp" else np.log(c)
            if np.unique(x).size >= 2:
                slope, intercept = np.polyfit(x, y, 1)
                xt = float(target_size) if model == "exp" else np.log(float(target_size))
                pred = float(np.exp(intercept + slope * xt))
            else:
                slope = intercept = pred = np.nan
            rows.append(
                {
                    "bin": int(b),
                    "diff_low": float(grp["diff_low"].iloc[0]),
                    "diff_high": float(grp["diff_high"].iloc[0]),
                    "n_points": int(ok.sum()),
                    "intercept": float(intercept),
                    "slope": float(slope),
                    "target_size": int(target_size),
                    "error_rate": pred,
                }
            )
        return pd.DataFrame(rows)

    def min_difference(self, topic_set_size: int | None = None, max_error: float = 0.05) -> float:
        """Lower edge of the smallest difference bin whose swap rate is <= ``max_error``.

        Sakai's (2006) comparison quantity: at topic-set size ``topic_set_size`` (default: the
        largest size evaluated), the smallest absolute difference (bin lower edge) for which
        the observed error rate is at most ``max_error`` (default 5%). Bins without pairs are
        skipped. NaN if no bin qualifies.
        """
        if not 0 <= max_error <= 1:
            raise ValueError(f"max_error must be in [0, 1], got {max_error!r}")
        sizes = self.table["topic_set_size"].unique()
        c = int(sizes.max()) if topic_set_size is None else topic_set_size
        if c not in sizes:
            raise ValueError(
                f"topic_set_size {c!r} was not evaluated; evaluated sizes: {sorted(sizes.tolist())}"
            )
        return self.min_differences(max_error)[c]

    def min_differences(self, max_error: float = 0.05) -> dict[int, float]:
        """:meth:`min_difference` at every topic-set size evaluated, in increasing size."""
        if not 0 <= max_error <= 1:
            raise ValueError(f"max_error must be in [0, 1], got {max_error!r}")
        t = self.table
        size = t["topic_set_size"].to_numpy()
        ok = (t["pairs"].to_numpy() > 0) & (t["error_rate"].to_numpy() <= max_error)
        low = np.where(ok, t["diff_low"].to_numpy(dtype=float), np.inf)
        sizes, where = np.unique(size, return_inverse=True)
        smallest = np.full(sizes.size, np.inf)
        np.minimum.at(smallest, where, low)
        return {
            int(c): float(v) if np.isfinite(v) else float("nan") for c, v in zip(sizes, smallest)
        }


def swap_method(
    scores,
    *,
    trials: int = 50,
    bin_width: float = 0.01,
    n_bins: int = 21,
    drop_worst: float = 0.0,
    subset_sizes=None,
    with_replacement: bool = False,
    zero_is_swap: bool = False,
    rng=None,
    systems=None,
    topics=None,
    runs=None,
) -> SwapResult:
    r"""Swap-method error rates (Voorhees & Buckley 2002; docs/methods.md §2).

    1. Optionally drop the worst ``floor(drop_worst * S)`` systems by mean score (Urbano et
       al. 2013 drop the bottom 25%: ``drop_worst=0.25``).
    2. For each topic-set size c and each of ``trials`` trials draw two topic sets Q1, Q2 of c
       topics: disjoint and without replacement by default (so c <= T/2, default sizes
       1..floor(T/2)); with ``with_replacement=True`` each set is drawn independently with
       replacement from all T topics (Sakai's variant, so c can reach T; default sizes 1..T).
    3. For every pair of systems, :math:`d_1 = \bar x_{Q1} - \bar y_{Q1}` and :math:`d_2` on
       Q2. The pair falls in bin :math:`\min(\lfloor |d_1| / w \rfloor, n_{bins} - 1)` (w =
       ``bin_width``; the last bin is open, ">= (n_bins - 1) w"), and it is a swap when
       :math:`d_1 d_2 < 0`.
    4. error rate = swaps / pairs per (c, bin).

    **Zero convention.** A difference of exactly 0 (|d| <= 1e-12, float noise of equal means)
    orders neither way. By default (``zero_is_swap=False``) only a strict reversal,
    :math:`d_1 d_2 < 0`, is a swap, so a tie on either set is never an error. With
    ``zero_is_swap=True`` a tie counts as a swap, :math:`d_1 d_2 \le 0`, as in Dunaiski's code.

    All pairs and trials of one size are computed at once: with 0/1 (or multiplicity) count
    matrices of the topic sets, the system means of all trials are one matrix product.

    Parameters
    ----------
    scores : array_like (S, T) or pandas.DataFrame
        Per-topic scores (rows = systems) or a tidy frame ``run, topic, value``.
    trials : int
        Trials per topic-set size (VB2002 used 50).
    bin_width : float
        Width of the absolute-difference bins (0.01).
    n_bins : int
        Number of bins (21: 0.00-0.01, ..., 0.19-0.20, >= 0.20).
    drop_worst : float
        Fraction of systems to drop, in [0, 1).
    subset_sizes : iterable of int, optional
        Topic-set sizes c to evaluate.
    with_replacement : bool
        Sakai's sampling with replacement instead of disjoint halves.
    zero_is_swap : bool
        Count :math:`d_1 d_2 = 0` as a swap.
    rng : None, int, SeedSequence or Generator
    systems : sequence, optional
        Names of the rows of an array ``scores``.
    topics, runs : selection, optional
        For a tidy frame: only these topics and runs.

    Returns
    -------
    SwapResult
    """
    trials = check_int("trials", trials, min=1)
    bin_width = check_real("bin_width", bin_width, min=0.0, min_open=True)
    n_bins = check_int("n_bins", n_bins, min=1)
    drop_worst = check_real("drop_worst", drop_worst, min=0.0, max=1.0, max_open=True)
    gen = as_generator(rng)
    X, names, _ = score_matrix(scores, systems=systems, topics=topics, runs=runs)
    n_drop = int(np.floor(drop_worst * X.shape[0]))
    if n_drop:
        keep = np.sort(np.argsort(X.mean(axis=1), kind="stable")[n_drop:])
        X = X[keep]
        names = tuple(names[i] for i in keep)
        if X.shape[0] < 2:
            raise ValueError(f"drop_worst={drop_worst} leaves fewer than 2 systems")
    S, n = X.shape
    max_c = n if with_replacement else n // 2
    if subset_sizes is None:
        sizes = list(range(1, max_c + 1))
    else:
        try:
            sizes = [int(c) for c in subset_sizes]
        except (TypeError, ValueError) as exc:
            raise TypeError("subset_sizes must be an iterable of integers") from exc
        bad = [c for c in sizes if c < 1 or c > max_c]
        if bad or not sizes:
            raise ValueError(
                f"subset_sizes must be non-empty integers in 1..{max_c} "
                f"({'with' if with_replacement else 'without'} replacement, {n} topics), "
                f"got {sizes}"
            )
    ia, ib = np.triu_indices(S, 1)
    XT = X.T
    trial_rows = np.arange(int(trials))[:, None]
    rows = []
    for c in sizes:
        if with_replacement:
            q1 = gen.integers(0, n, size=(trials, c))
            q2 = gen.integers(0, n, size=(trials, c))
        else:
            perm = np.argsort(gen.random((trials, n)), axis=1)
            q1, q2 = perm[:, :c], perm[:, c : 2 * c]
        c1 = np.zeros((trials, n))
        c2 = np.zeros((trials, n))
        np.add.at(c1, (np.broadcast_to(trial_rows, q1.shape), q1), 1.0)
        np.add.at(c2, (np.broadcast_to(trial_rows, q2.shape), q2), 1.0)
        m1 = c1 @ XT / c
        m2 = c2 @ XT / c
        d1 = m1[:, ia] - m1[:, ib]
        d2 = m2[:, ia] - m2[:, ib]
        s1 = np.where(np.abs(d1) <= _ZERO_DIFF, 0.0, np.sign(d1))
        s2 = np.where(np.abs(d2) <= _ZERO_DIFF, 0.0, np.sign(d2))
        prod = s1 * s2
        swap = prod <= 0 if zero_is_swap else prod < 0
        bins = np.minimum(np.floor(np.abs(d1) / bin_width + _EDGE_EPS), n_bins - 1).astype(np.int64)
        bins = np.where(np.abs(d1) <= _ZERO_DIFF, 0, bins)
        count = np.bincount(bins.ravel(), minlength=n_bins)
        swaps = np.bincount(bins.ravel(), weights=swap.ravel().astype(float), minlength=n_bins)
        for b in range(n_bins):
            rows.append((c, b, count[b], int(swaps[b])))
    table = pd.DataFrame(rows, columns=["topic_set_size", "bin", "pairs", "swaps"])
    table.insert(2, "diff_low", table["bin"] * float(bin_width))
    table.insert(
        3,
        "diff_high",
        np.where(table["bin"] == n_bins - 1, np.inf, (table["bin"] + 1) * float(bin_width)),
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        table["error_rate"] = np.where(
            table["pairs"] > 0, table["swaps"] / table["pairs"].where(table["pairs"] > 0, 1), np.nan
        )
    table = table[
        ["topic_set_size", "bin", "diff_low", "diff_high", "pairs", "swaps", "error_rate"]
    ]
    return SwapResult(
        table=table,
        trials=int(trials),
        bin_width=float(bin_width),
        n_bins=int(n_bins),
        drop_worst=float(drop_worst),
        with_replacement=bool(with_replacement),
        zero_is_swap=bool(zero_is_swap),
        systems=names,
        n_topics=n,
    )
