r"""Type I, II and III error rates of paired significance tests, where the truth is known.

On a real test collection nobody knows which pairs of systems truly differ, so a test's error
rates cannot be counted there. On a simulated collection they can (Urbano, Lima & Hanjalic
2019): every system has a latent effect, so the truth about every pair is known, and each test
is run on random topic subsets of several sizes and its decisions are checked against it.

For a pair of systems (a, b) with latent effects :math:`e_a, e_b` (a simulated world's
``system_effect``) and a tolerance :math:`\epsilon \ge 0`:

* the pair is **null** when :math:`|e_a - e_b| \le \epsilon`: the systems are equally good, and
  a test that rejects makes a **type I** error;
* otherwise it **truly differs**, in the direction :math:`\mathrm{sign}(e_a - e_b)`. A test
  that does not reject makes a **type II** error; one that rejects while the observed mean
  difference :math:`\bar z = \bar x_a - \bar x_b` has the other sign (or is 0) makes a
  **type III** error (Kaiser 1960: significant, in the wrong direction). The rest, rejections
  in the right direction, are the test's (directional) power.

With :math:`N_0` null and :math:`N_1` truly different decisions (a decision is one test of
one pair on one topic subset), the rates are

.. math::

    \mathrm{type\ I} = \frac{\#\{\text{null, rejected}\}}{N_0}, \quad
    \mathrm{type\ II} = \frac{\#\{\text{different, not rejected}\}}{N_1}, \quad
    \mathrm{type\ III} = \frac{\#\{\text{different, rejected}, \mathrm{sign}\,\bar z \ne
    \mathrm{sign}(e_a - e_b)\}}{N_1},

and power = 1 - type II - type III. A test rejects when its two-sided p-value is below
:math:`\alpha` (as :func:`~metaeval.stats.paired.paired_comparisons` decides). A type I rate
near :math:`\alpha` says the test keeps its promise on these scores; the type II rate, how
many real differences it misses at each number of topics.

The five tests are those of :mod:`metaeval.stats.paired` (t, Wilcoxon signed-rank, sign,
randomisation, Sakai's bootstrap), run by their vectorised cores on every pair and every
topic subset of a size at once; the randomisation and bootstrap tests draw one set of sign
vectors and one set of bootstrap samples per size, shared by all the pairs and subsets of that
size, so each decision equals the single-pair function's
(:func:`~metaeval.stats.paired.randomization_test`,
:func:`~metaeval.stats.paired.bootstrap_test`) given those :attr:`ErrorRates.resamples`.
The Wilcoxon p-value of tied or zero differences on at most 13 topics, which scipy gets by
enumerating every sign vector and ranking each one again, is enumerated here for all the pairs
at once, with the same result.

The decisions of one collection are not independent (pairs share systems, subsets share
topics), so binomial standard errors of the counts would be too small: the uncertainty of a
rate comes from independent collections (a study's replicates, or :meth:`ErrorRates.pooled`
over several calls and the spread of their rates).

References
----------
.. [ULH19] J. Urbano, H. Lima, A. Hanjalic (2019). Statistical significance testing in
   information retrieval: an empirical analysis of type I, type II and type III errors.
   SIGIR 2019, 505-514.
.. [K60] H. F. Kaiser (1960). Directional statistical decisions. Psychological Review 67(3).
.. [SAC07] M. D. Smucker, J. Allan, B. Carterette (2007). A comparison of statistical
   significance tests for information retrieval evaluation. CIKM 2007.
.. [S06] T. Sakai (2006). Evaluating evaluation metrics based on the bootstrap. SIGIR 2006.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from metaeval._validation import as_generator, check_alpha, check_choice, check_int, check_real
from metaeval.meta._resampling import bootstrap_core, check_B, observed_t, score_matrix
from metaeval.meta._resampling import resamples as draw_resamples
from metaeval.meta.significance import _exact
from metaeval.stats.paired import (
    TESTS,
    _randomization_setup,
    _sign_core,
    _snap,
    _t_core,
)
from metaeval.stats.paired import _randomization_core as _randomization_p

__all__ = ["TESTS", "COUNTS", "RATES", "ErrorRates", "error_rates", "rates_of"]

#: The counts of :attr:`ErrorRates.counts`, per topic-set size and test.
COUNTS = ("subsets", "n_null", "n_type1", "n_different", "n_type2", "n_type3")
#: The rates :func:`rates_of` adds to them.
RATES = ("type1_rate", "type2_rate", "type3_rate", "power")

#: Resamples of the randomisation and bootstrap tests when B is not given: enough for a
#: p-value below 0.05 to be resolved to about +-0.007, and fast over thousands of pairs.
DEFAULT_B = 1000

#: The bootstrap tests :func:`error_rates` can run (see its ``bootstrap`` parameter).
BOOTSTRAPS = ("studentized", "mean")

# Elements (rows x topics) of the difference matrix built at once: the cores allocate a few
# arrays of (rows x resamples) per block of their own, so this only bounds the gathered copy.
_ROW_ELEMENTS = 2_000_000

# scipy's signed-rank test enumerates every sign vector for tied or zero differences up to
# this many topics (2^13 sign vectors), and uses the normal approximation beyond.
_MAX_PERMUTATION_TOPICS = 13

# Streams drawn for each topic-set size, by kind: a size's subsets and resamples depend on
# the seed and the size alone, so adding a size or a test leaves the others' draws unchanged.
_STREAM = {"subsets": 0, "randomization": 1, "bootstrap": 2}


@dataclass(frozen=True, eq=False)
class ErrorRates:
    """Result of :func:`error_rates`: the decisions of every test, counted against the truth.

    Attributes
    ----------
    counts : pandas.DataFrame
        One row per topic-set size and test (sizes ascending, tests in the order asked):
        ``n_topics``, ``test``, ``subsets`` (topic subsets of that size), ``n_null`` and
        ``n_different`` (decisions on null and on truly different pairs: pairs x subsets),
        ``n_type1``, ``n_type2``, ``n_type3`` (the errors, see the module docstring).
    alpha : float
    null_tolerance : float
        The largest difference of latent effects a null pair may have.
    pairs : numpy.ndarray of int, shape (P, 2)
        The row indices (a, b) of the pairs tested; differences are a - b.
    null : numpy.ndarray of bool, shape (P,)
        Which pairs are null.
    true_sign : numpy.ndarray of int8, shape (P,)
        sign(e_a - e_b) of each pair (0 for a null pair).
    subsets : dict
        Topic-set size -> (K, n) positions of the topics of each of its K subsets (sorted).
    resamples : dict
        Topic-set size -> ``{"randomization": Resamples or None, "bootstrap": Resamples or
        None}``: the draws the two resampling tests used at that size (None when the test was
        not run, or for a randomisation test that enumerates every sign vector).
    rejected : dict
        (size, test) -> (P, K) bool: the test rejected the pair on the subset.
    direction : dict
        Size -> (P, K) int8: the sign of the observed mean difference (0 when it is 0).
    """

    counts: pd.DataFrame
    alpha: float
    null_tolerance: float
    pairs: np.ndarray = field(repr=False)
    null: np.ndarray = field(repr=False)
    true_sign: np.ndarray = field(repr=False)
    subsets: dict = field(repr=False)
    resamples: dict = field(repr=False)
    rejected: dict = field(repr=False)
    direction: dict = field(repr=False)

    def to_frame(self) -> pd.DataFrame:
        """:attr:`counts` with the rates of :func:`rates_of` (``type1_rate``,
        ``type2_rate``, ``type3_rate``, ``power``; NaN where their denominator is 0)."""
        return rates_of(self.counts)

    @staticmethod
    def pooled(results: Sequence[ErrorRates]) -> pd.DataFrame:
        """The counts of several results (independent collections, say) summed per size and
        test, with their rates: the pooled rate weighs every decision alike.

        Parameters
        ----------
        results : sequence of ErrorRates

        Returns
        -------
        pandas.DataFrame
            The columns of :meth:`to_frame`.
        """
        results = list(results)
        if not results:
            raise ValueError("results must hold at least one ErrorRates")
        for r in results:
            if not isinstance(r, ErrorRates):
                raise TypeError(f"results must be ErrorRates, got {type(r).__name__}")
        alphas = {r.alpha for r in results}
        if len(alphas) > 1:
            raise ValueError(f"results tested at different alphas ({sorted(alphas)})")
        frame = pd.concat([r.counts for r in results], ignore_index=True)
        summed = frame.groupby(["n_topics", "test"], sort=False, as_index=False)[list(COUNTS)].sum()
        return rates_of(summed)


def rates_of(counts: pd.DataFrame) -> pd.DataFrame:
    """Counts (the columns of :attr:`ErrorRates.counts`) with their rates added.

    ``type1_rate`` = n_type1 / n_null, ``type2_rate`` = n_type2 / n_different,
    ``type3_rate`` = n_type3 / n_different, ``power`` = 1 - type2_rate - type3_rate (the
    share of true differences found in the right direction); NaN where the denominator is 0.
    """
    out = counts.copy()
    n0 = out["n_null"].to_numpy(dtype=float)
    n1 = out["n_different"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["type1_rate"] = np.where(n0 > 0, out["n_type1"] / n0, np.nan)
        out["type2_rate"] = np.where(n1 > 0, out["n_type2"] / n1, np.nan)
        out["type3_rate"] = np.where(n1 > 0, out["n_type3"] / n1, np.nan)
        found = n1 - out["n_type2"].to_numpy(dtype=float) - out["n_type3"].to_numpy(dtype=float)
        out["power"] = np.where(n1 > 0, found / n1, np.nan)
    return out


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _effects(effects, names: tuple) -> np.ndarray:
    """(S,) latent effects in the row order of the scores."""
    if isinstance(effects, (Mapping, pd.Series)):
        missing = [n for n in names if n not in effects]
        if missing:
            raise ValueError(f"effects has no value for system {missing[0]!r}")
        values = [effects[n] for n in names]
    else:
        values = effects
    try:
        e = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError("effects must be numbers, one per system") from exc
    if e.ndim != 1 or e.size != len(names):
        raise ValueError(
            f"effects must hold one number per system ({len(names)}), got shape {e.shape}"
        )
    if not np.all(np.isfinite(e)):
        raise ValueError("effects contains NaN or infinite values")
    return e


def _pairs(pairs, S: int) -> np.ndarray:
    if pairs is None:
        ia, ib = np.triu_indices(S, 1)
        return np.column_stack([ia, ib])
    try:
        p = np.asarray(pairs)
    except (TypeError, ValueError) as exc:
        raise TypeError("pairs must be a (P, 2) array of row indices") from exc
    if p.ndim != 2 or p.shape[1] != 2 or p.shape[0] == 0:
        raise ValueError(f"pairs must be a non-empty (P, 2) array of row indices, got {p.shape}")
    if not np.issubdtype(p.dtype, np.integer):
        raise TypeError("pairs must hold integer row indices")
    if (p < 0).any() or (p >= S).any():
        raise ValueError(f"pairs must hold row indices in 0..{S - 1}")
    if (p[:, 0] == p[:, 1]).any():
        raise ValueError("pairs must pair two different systems")
    return p.astype(np.intp)


def _sizes(sizes, T: int) -> tuple[int, ...]:
    if sizes is None:
        return (T,)
    if isinstance(sizes, (int, np.integer)) and not isinstance(sizes, bool):
        sizes = (sizes,)
    sizes = tuple(sizes)
    if not sizes:
        raise ValueError("sizes must not be empty")
    out = [check_int(f"sizes[{i}]", n, min=2, max=T) for i, n in enumerate(sizes)]
    if len(set(out)) != len(out):
        raise ValueError(f"sizes must not repeat a size, got {list(out)}")
    return tuple(sorted(out))


def _tests(tests) -> tuple[str, ...]:
    if isinstance(tests, str):
        tests = (tests,)
    tests = tuple(tests)
    if not tests:
        raise ValueError(f"tests must name at least one of {', '.join(TESTS)}")
    for t in tests:
        check_choice("tests", t, TESTS)
    if len(set(tests)) != len(tests):
        raise ValueError(f"tests must not repeat a test, got {list(tests)}")
    return tests


# --------------------------------------------------------------------------------------------
# Counting
# --------------------------------------------------------------------------------------------


def _stream(base: int, size: int, kind: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([base, size, _STREAM[kind]]))


def _draw_subsets(T: int, n: int, repeats: int, gen: np.random.Generator) -> np.ndarray:
    """(K, n) sorted positions: ``repeats`` random subsets of n of the T topics, drawn without
    replacement; the whole set once when n = T (every subset would be the same)."""
    if n == T:
        return np.arange(T)[None, :]
    return np.sort(np.stack([gen.permutation(T)[:n] for _ in range(repeats)]), axis=1)


def _signrank_permutation_p(Zs: np.ndarray) -> np.ndarray:
    r"""Two-sided p of the signed-rank sum over all 2^n sign vectors, per row of Zs (n <= 13).

    What ``scipy.stats.wilcoxon`` computes for differences with ties or zeros and n <= 13 (a
    permutation test enumerating every sign vector, zeros dropped, average ranks), here as one
    matrix product for all rows: scipy recomputes the ranks of every row for every sign vector,
    which took a second per 450 pairs at n = 10. Flipping signs leaves the ranks of the
    non-zero |z| unchanged, so the null values are :math:`\sum_i r_i I_i` over every
    indicator vector I, and :math:`p = \min(1, 2\min(P(T \le t), P(T \ge t)))`. The sums
    are of half-integers, exact in floating point, so ties compare exactly.
    """
    m, n = Zs.shape
    a = np.abs(Zs)
    zero = a == 0
    # Zeros rank below every non-zero |z|: the average ranks among all, minus their number,
    # are the average ranks among the non-zero ones.
    r = stats.rankdata(a, method="average", axis=1) - zero.sum(axis=1, keepdims=True)
    r[zero] = 0.0
    observed = (r * (Zs > 0)).sum(axis=1)
    indicators = np.array(list(itertools.product((0.0, 1.0), repeat=n))).T  # (n, 2^n)
    N = indicators.shape[1]
    p = np.empty(m)
    block = max(1, _ROW_ELEMENTS // N)
    for start in range(0, m, block):
        sl = slice(start, min(m, start + block))
        null = r[sl] @ indicators
        t = observed[sl, None]
        low = np.count_nonzero(null <= t, axis=1)
        high = np.count_nonzero(null >= t, axis=1)
        p[sl] = np.minimum(1.0, 2.0 * np.minimum(low, high) / N)
    return p


def _wilcoxon_p(Z: np.ndarray) -> np.ndarray:
    """The Wilcoxon signed-rank p-value of every row of Z, equal to
    :func:`~metaeval.stats.paired.wilcoxon_test`'s (its core's row grouping and scipy's method
    choice), without the Hodges-Lehmann interval and with the permutation p of tied small
    samples computed at once (:func:`_signrank_permutation_p`)."""
    P, n = Z.shape
    Zs = _snap(Z)
    nonzero = Zs != 0
    srt = np.sort(np.abs(Zs), axis=1)
    ties = ((srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] > 0)).any(axis=1)
    live = nonzero.any(axis=1)  # identical systems on every topic: p = 1
    flagged = live & (~nonzero.all(axis=1) | ties)
    p = np.ones(P)
    # scipy decides exact / permutation / asymptotic once for a whole batch, so rows without
    # ties or zeros (exact up to 50 topics) go separately from rows with them.
    plain = np.flatnonzero(live & ~flagged)
    if plain.size:
        p[plain] = stats.wilcoxon(Zs[plain], axis=1).pvalue
    flagged = np.flatnonzero(flagged)
    if flagged.size and n <= _MAX_PERMUTATION_TOPICS:
        p[flagged] = _signrank_permutation_p(Zs[flagged])
    elif flagged.size:
        with warnings.catch_warnings():
            # scipy warns that ties make the exact distribution inexact: it then uses the
            # normal approximation, as wilcoxon_test does
            warnings.simplefilter("ignore", UserWarning)
            p[flagged] = stats.wilcoxon(Zs[flagged], axis=1).pvalue
    return p


def _mean_bootstrap_p(Z: np.ndarray, counts: np.ndarray) -> np.ndarray:
    r"""Two-sided p of the bootstrap test of the mean difference (not studentised), per row.

    The differences are shifted to mean 0 (:math:`w = z - \bar z`, the null hypothesis) and
    :math:`p = \#\{b : |\bar w^*_b| \ge |\bar z|\} / B` over the B shared samples: the
    bootstrap test Urbano, Lima & Hanjalic (2019) ran (they centre the resampled means on
    their own average instead of on :math:`\bar z`, the same to within the resampling
    error)."""
    B, n = counts.shape
    zbar = Z.mean(axis=1)
    W = Z - zbar[:, None]
    p = np.empty(Z.shape[0])
    countsT = np.ascontiguousarray(counts.T, dtype=float)
    block = max(1, _ROW_ELEMENTS // B)
    scale = np.abs(Z).max(axis=1, initial=0.0)
    for start in range(0, Z.shape[0], block):
        sl = slice(start, min(Z.shape[0], start + block))
        means = np.abs(W[sl] @ countsT) / n
        # a resampled mean equal to |zbar| up to rounding counts as reaching it
        reach = np.abs(zbar[sl])[:, None] - 1e-12 * scale[sl, None]
        p[sl] = np.count_nonzero(means >= reach, axis=1) / B
    return p


def _p_values(
    Z: np.ndarray,
    test: str,
    alpha: float,
    draws: dict,
    *,
    sign_tolerance: float = 0.0,
    bootstrap: str = "studentized",
) -> np.ndarray:
    """The two-sided p-value of ``test`` on every row of Z (differences a - b)."""
    if test == "t":
        # ttest_rel works on the differences: x = z, y = 0 is the same test as x = a, y = b
        return _t_core(Z, np.zeros_like(Z), 1.0 - alpha)["p_value"]
    if test == "wilcoxon":
        return _wilcoxon_p(Z)
    if test == "sign":
        if sign_tolerance:
            Z = np.where(np.abs(Z) <= sign_tolerance, 0.0, Z)
        return _sign_core(Z, 1.0 - alpha)["p_value"]
    if test == "randomization":
        # Confidence 1 asks for no interval (no shift can be rejected at level 0), which the
        # core then skips: only the p-value is needed here.
        return _randomization_p(Z, draws["signs"], 1.0)["p_value"]
    if bootstrap == "mean":
        return _mean_bootstrap_p(Z, draws["counts"])
    _, asl, _ = bootstrap_core(Z, draws["counts"], alpha)
    return asl


def error_rates(
    scores,
    effects,
    *,
    sizes=None,
    repeats: int = 20,
    tests=TESTS,
    alpha: float = 0.05,
    null_tolerance: float = 0.0,
    B: int | None = None,
    pairs=None,
    sign_tolerance: float = 0.0,
    bootstrap: str = "studentized",
    rng=None,
) -> ErrorRates:
    r"""Count the type I, II and III errors of paired tests on scores whose truth is known.

    For each topic-set size n, ``repeats`` random subsets of n topics are drawn (without
    replacement; the whole set once when n is the number of topics), every test is run on
    every pair of systems on every subset, and each decision is checked against the latent
    effects (Urbano, Lima & Hanjalic 2019): a rejection of a null pair
    (:math:`|e_a - e_b| \le` ``null_tolerance``) is a type I error; a non-rejection of a
    truly different pair a type II error; a rejection of a truly different pair whose observed
    mean difference has the wrong sign a type III error (see the module docstring for the
    rates).

    The tests are vectorised over pairs and subsets (the cores of
    :mod:`metaeval.stats.paired`); the randomisation and bootstrap tests use one draw of B
    sign vectors and B bootstrap samples per size, shared by every pair and subset of it (the
    randomisation test enumerates all :math:`2^n` sign vectors when :math:`2^n \le B`).

    Parameters
    ----------
    scores : array_like (S, T) or pandas.DataFrame
        Per-topic scores of one collection (rows = systems), or a tidy frame with columns
        ``run``, ``topic``, ``value``.
    effects : array_like (S,) or mapping
        The latent effect of every system (a simulated world's ``system_effect``), in row
        order, or by system name (a frame's rows are its runs sorted by name).
    sizes : int or sequence of int, optional
        Topic-set sizes, each in 2..T; default the whole set only.
    repeats : int
        Topic subsets per size (below the whole set).
    tests : sequence of {"t", "wilcoxon", "sign", "randomization", "bootstrap"}
    alpha : float
        A test rejects when its two-sided p-value is below alpha.
    null_tolerance : float
        The largest :math:`|e_a - e_b|` of a null pair, >= 0. With 0 only exactly equal
        effects are null (every pair of a world whose systems are identical in distribution,
        whose effects are all 0).
    B : int, optional
        Sign vectors of the randomisation test and bootstrap samples of the bootstrap test;
        default 1000.
    pairs : array_like (P, 2) of int, optional
        Row indices of the pairs to test; default every pair a < b.
    sign_tolerance : float
        The sign test counts a difference with :math:`|z| \le` ``sign_tolerance`` as a tie
        (dropped, as a zero is); Urbano, Lima & Hanjalic (2019) used 0.01. Default 0.
    bootstrap : {"studentized", "mean"}
        The bootstrap test: Sakai's studentised one (default, as
        :func:`~metaeval.stats.paired.bootstrap_test`) or the test of the mean difference
        the 2019 paper ran (resampled means of the null-shifted differences against
        :math:`|\bar z|`).
    rng : None, int, SeedSequence or Generator
        Seeds the subsets and resamples; a size's draws depend on it and on the size alone.

    Returns
    -------
    ErrorRates
        ``.to_frame()``: counts and rates per size and test.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> X = rng.normal(size=(6, 40)) + rng.normal(size=40)  # six identical systems
    >>> res = error_rates(X, np.zeros(6), sizes=[10, 40], tests=["t"], rng=2)
    >>> res.counts[["n_topics", "test", "subsets", "n_null", "n_different"]].to_numpy().tolist()
    [[10, 't', 20, 300, 0], [40, 't', 1, 15, 0]]
    """
    X, names, _ = score_matrix(scores)
    S, T = X.shape
    e = _effects(effects, names)
    sizes = _sizes(sizes, T)
    repeats = check_int("repeats", repeats, min=1)
    tests = _tests(tests)
    alpha = check_alpha(alpha)
    null_tolerance = check_real("null_tolerance", null_tolerance, min=0.0)
    sign_tolerance = check_real("sign_tolerance", sign_tolerance, min=0.0)
    bootstrap = check_choice("bootstrap", bootstrap, BOOTSTRAPS)
    B = check_B(DEFAULT_B if B is None else B, alpha if "bootstrap" in tests else None)
    pairs = _pairs(pairs, S)
    ia, ib = pairs[:, 0], pairs[:, 1]
    gap = e[ia] - e[ib]
    null = np.abs(gap) <= null_tolerance
    true_sign = np.where(null, 0, np.sign(gap)).astype(np.int8)
    D = X[ia] - X[ib]  # (P, T) per-topic differences of every pair
    P = D.shape[0]
    base = int(as_generator(rng).integers(0, 2**63))

    records, subsets, resamples, rejected, direction = [], {}, {}, {}, {}
    for n in sizes:
        sub = _draw_subsets(T, n, repeats, _stream(base, n, "subsets"))
        K = sub.shape[0]
        subsets[n] = sub
        draws, used = {}, {"randomization": None, "bootstrap": None}
        if "randomization" in tests:
            if not _exact(n, B):
                used["randomization"] = draw_resamples(
                    "randomization", n_topics=n, B=B, rng=_stream(base, n, "randomization")
                )
            draws["signs"], _ = _randomization_setup(
                n, B, used["randomization"], alpha, lambda: None
            )
        if "bootstrap" in tests:
            used["bootstrap"] = draw_resamples(
                "bootstrap", n_topics=n, B=B, rng=_stream(base, n, "bootstrap")
            )
            draws["counts"] = used["bootstrap"].counts()
        resamples[n] = used
        reject = {t: np.empty(P * K, dtype=bool) for t in tests}
        sign = np.empty(P * K, dtype=np.int8)
        # Rows are (pair, subset), pair-major; a block of pairs at a time bounds the copy.
        block = max(1, _ROW_ELEMENTS // (K * n))
        for start in range(0, P, block):
            Z = D[start : start + block][:, sub].reshape(-1, n)
            rows = slice(start * K, start * K + Z.shape[0])
            zbar, _, _, _, zero_mean = observed_t(Z)
            sign[rows] = np.where(zero_mean, 0, np.sign(zbar)).astype(np.int8)
            for t in tests:
                p = _p_values(
                    Z, t, alpha, draws, sign_tolerance=sign_tolerance, bootstrap=bootstrap
                )
                reject[t][rows] = p < alpha
        null_rows = np.repeat(null, K)
        truth_rows = np.repeat(true_sign, K)
        direction[n] = sign.reshape(P, K)
        for t in tests:
            r = reject[t]
            rejected[(n, t)] = r.reshape(P, K)
            records.append(
                {
                    "n_topics": n,
                    "test": t,
                    "subsets": K,
                    "n_null": int(np.count_nonzero(null_rows)),
                    "n_type1": int(np.count_nonzero(r & null_rows)),
                    "n_different": int(np.count_nonzero(~null_rows)),
                    "n_type2": int(np.count_nonzero(~r & ~null_rows)),
                    "n_type3": int(np.count_nonzero(r & ~null_rows & (sign != truth_rows))),
                }
            )
    counts = pd.DataFrame(records, columns=["n_topics", "test", *COUNTS])
    return ErrorRates(
        counts=counts,
        alpha=alpha,
        null_tolerance=null_tolerance,
        pairs=pairs,
        null=null,
        true_sign=true_sign,
        subsets=subsets,
        resamples=resamples,
        rejected=rejected,
        direction=direction,
    )
