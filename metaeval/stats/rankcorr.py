"""Tie-aware rank correlation: tau_AP_a / tau_AP_b and rank-biased overlap with ties.

:mod:`metaeval.meta.rankcorr` has Kendall's tau-a/b and tau_AP with the expectation of
MATTERS' random tie-breaking. This module adds the coefficients designed for ties:

* :func:`tau_ap_a` and :func:`tau_ap_b` (Urbano & Marrero, ICTIR 2017): tau_AP for an
  estimated ranking with ties against a true ranking without (*accuracy*), and between two
  rankings that both have ties (*agreement*);
* :func:`rbo` and :func:`rbo_rankings`: rank-biased overlap (Webber, Moffat & Zobel 2010)
  with the tie-aware variants RBO^w, RBO^a and RBO^b of Corsi & Urbano (SIGIR 2024).

Score functions take *score vectors* (higher is better; equal scores are tied), 1-D or
``(k, m)`` for ``k`` rankings of the same ``m`` systems, as :mod:`metaeval.meta.rankcorr`.

References
----------
.. [UM17] J. Urbano, M. Marrero (2017). The treatment of ties in AP correlation. ACM ICTIR
   2017, 321-324; and Urbano's R package ``ircor`` (``tauAP_a``, ``tauAP_b``).
.. [YAR] E. Yilmaz, J. A. Aslam, S. Robertson (2008). A new rank correlation coefficient for
   information retrieval. SIGIR 2008.
.. [WMZ10] W. Webber, A. Moffat, J. Zobel (2010). A similarity measure for indefinite
   rankings. ACM TOIS 28(4), article 20.
.. [CU24] M. Corsi, J. Urbano (2024). The treatment of ties in rank-biased overlap. SIGIR
   2024; and its reference code (``julian-urbano/sigir2024-rbo``, ``rbo.py`` / ``rbo.R``).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from metaeval._validation import check_real
from metaeval.meta.rankcorr import _broadcast_pair, _row_chunks, _tau_ap_expected

__all__ = ["tau_ap_a", "tau_ap_b", "rbo", "rbo_rankings", "RBOResult"]

_TIES = ("a", "b", "w")


# --------------------------------------------------------------------------------------------
# tau_AP with ties
# --------------------------------------------------------------------------------------------


def tau_ap_a(truth, estimate):
    r"""tau_AP_a: AP correlation of an estimate with ties against a truth without ties.

    Urbano & Marrero (ICTIR 2017) define :math:`\tau_{AP,a}` for the *accuracy* scenario: the
    true ranking T has no ties, and the estimated ranking E (e.g. by a measure on few topics)
    may tie systems because it cannot tell them apart. It is the expectation of
    :math:`\tau_{AP}(E \mid T)` (Yilmaz et al. 2008; positions in E) over all orderings of E's
    tie groups, in closed form: with :math:`p_i` the first position of item i's tie group in
    E and :math:`t_i` its size, :math:`c_i` the items in groups strictly above it that T
    also ranks above it,

    .. math::

        \tau_{AP,a} = \frac{2}{m-1}\sum_i\left[ c_i\,\frac{1}{t_i}\sum_{k=1}^{t_i}
        \frac{1}{p_i + k - 2} + \frac{1}{2t_i}\sum_{k=1}^{t_i-1}\frac{k}{p_i + k - 1}
        \right] - 1,

    the first term summed over items outside the top group. Without ties in T this is exactly
    what :func:`metaeval.meta.tau_ap` computes, so that closed form is reused; without ties
    in either it is Yilmaz et al.'s tau_AP.

    Parameters
    ----------
    truth : array_like, shape (m,) or (k, m), or pandas.DataFrame
        Scores of the true ranking T, without ties (higher is better).
    estimate : array_like, shape (m,) or (k, m), or pandas.DataFrame
        Scores of the estimated ranking(s) E; ties allowed.

    Returns
    -------
    float or numpy.ndarray
        A float when both inputs are 1-D, otherwise one value per ranking.

    Raises
    ------
    ValueError
        If ``truth`` has ties (use :func:`tau_ap_b`).

    Examples
    --------
    ``ircor``'s README example (``tauAP_a(x, y)`` with ``y`` rounded to fifths):

    >>> x = [0.06, 0.2, 0.27, 0.37, 0.57, 0.63, 0.66, 0.9, 0.91, 0.94]
    >>> y = [0.4, 0.0, 0.2, 0.2, 0.6, 0.6, 0.6, 1.0, 0.8, 1.0]
    >>> round(tau_ap_a(x, y), 7)
    0.6074515
    """
    T, E, scalar = _broadcast_pair(truth, estimate, "truth", "estimate")
    sorted_t = np.sort(T, axis=1)
    tied = (sorted_t[:, 1:] == sorted_t[:, :-1]).any(axis=1)
    if tied.any():
        row = int(np.flatnonzero(tied)[0])
        where = "" if T.shape[0] == 1 else f" (ranking {row})"
        raise ValueError(
            f"truth has tied scores{where}; tau_AP_a assumes a true ranking without ties. "
            "Use tau_ap_b for two rankings that both have ties"
        )
    # With a strict truth, MATTERS' coupled tie-breaking only permutes E's groups: its exact
    # expectation is Urbano & Marrero's tau_AP_a.
    out = _tau_ap_expected(T, E, coupled=True)
    return float(out[0]) if scalar else out


def _tau_ap_b_one_way(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Asymmetric tau_AP_b(X | Y): positions from Y's tie groups, concordance from X."""
    k, m = Y.shape
    out = np.empty(k)
    for sl in _row_chunks(k, m):
        y = Y[sl]
        x = X[sl]
        # [r, j, i]: item j relative to item i.
        y_above = y[:, :, None] > y[:, None, :]
        x_above = x[:, :, None] > x[:, None, :]
        above = y_above.sum(axis=1)  # items in groups strictly above i: p_i - 1
        conc = (y_above & x_above).sum(axis=1)  # of those, the ones X ranks strictly above i
        not_top = above > 0
        n_not_top = not_top.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            total = np.where(not_top, conc / np.where(not_top, above, 1), 0.0).sum(axis=1)
            out[sl] = np.where(n_not_top > 0, 2.0 * total / n_not_top - 1.0, np.nan)
    return out


def tau_ap_b(x, y):
    r"""tau_AP_b: AP correlation between two rankings that may both have ties.

    Urbano & Marrero (ICTIR 2017) define :math:`\tau_{AP,b}` for the *agreement* scenario (two
    observers, e.g. two measures or two judgment sets, either of which may tie systems), the
    analogue of Kendall's :math:`\tau_b`. One way, with positions from Y's tie groups: for each
    item i outside Y's top group let :math:`p_i` be the first position of its group and
    :math:`c_i` the items in groups strictly above it in Y that X ranks strictly above it;
    with :math:`n^*` such items

    .. math::

        \tau_{AP,b}(X \mid Y) = \frac{2}{n^*}\sum_{i:\,p_i > 1} \frac{c_i}{p_i - 1} - 1,
        \qquad
        \tau_{AP,b} = \frac{\tau_{AP,b}(X \mid Y) + \tau_{AP,b}(Y \mid X)}{2}.

    Pairs tied in either ranking thus count neither as concordant nor in the normalisation
    (identical rankings score 1, ties or not). Without ties it is the symmetric tau_AP,
    ``metaeval.meta.tau_ap(x, y, symmetric=True)``. NaN when either ranking ties all systems
    (as :math:`\tau_b`).

    Parameters
    ----------
    x, y : array_like, shape (m,) or (k, m), or pandas.DataFrame
        Scores of the same ``m`` systems (higher is better); ties allowed in both.

    Returns
    -------
    float or numpy.ndarray
        A float when both inputs are 1-D, otherwise one value per ranking.

    Examples
    --------
    ``ircor``'s README example (both vectors rounded to fifths):

    >>> x = [0.0, 0.2, 0.2, 0.4, 0.6, 0.6, 0.6, 0.8, 1.0, 1.0]
    >>> y = [0.4, 0.0, 0.2, 0.2, 0.6, 0.6, 0.6, 1.0, 0.8, 1.0]
    >>> round(tau_ap_b(x, y), 7)
    0.6269841
    """
    X, Y, scalar = _broadcast_pair(x, y, "x", "y")
    out = (_tau_ap_b_one_way(X, Y) + _tau_ap_b_one_way(Y, X)) / 2.0
    return float(out[0]) if scalar else out


# --------------------------------------------------------------------------------------------
# Rank-biased overlap
# --------------------------------------------------------------------------------------------


def _check_p(p) -> float:
    return check_real("p", p, min=0.0, max=1.0, min_open=True, max_open=True)


def _check_ties(ties) -> str:
    if ties not in _TIES:
        raise ValueError(f"ties must be 'a', 'b' or 'w', got {ties!r}")
    return ties


def _contributions(top: np.ndarray, size: np.ndarray, depths: np.ndarray, ties: str):
    """Contribution of each item to the prefix of each depth, shape (..., items, depths).

    ``top`` is the number of items strictly above the item's tie group (0-based first rank),
    ``size`` the size of the group. RBO^w counts the whole group as soon as it starts (tied
    items really share a rank); RBO^a / RBO^b count the probability that a random
    tie-breaking puts the item within the prefix: (d - top) / size, clipped to [0, 1].
    """
    d = depths.astype(float)
    top = top[..., None].astype(float)
    if ties == "w":
        return (d > top).astype(float)
    return np.clip((d - top) / size[..., None], 0.0, 1.0)


def _agreement(x_d, c1, c2, ties: str):
    """A_d from the overlap X_d and the two contribution arrays (items on axis -2)."""
    if ties == "a":
        return x_d / np.arange(1, x_d.shape[-1] + 1)
    if ties == "w":
        return 2.0 * x_d / (c1.sum(axis=-2) + c2.sum(axis=-2))
    return x_d / np.sqrt((c1**2).sum(axis=-2)) / np.sqrt((c2**2).sum(axis=-2))


def rbo(x, y, *, p: float = 0.9, ties: Literal["a", "b", "w"] = "a"):
    r"""Rank-biased overlap of two rankings of the same systems, with ties.

    RBO (Webber, Moffat & Zobel 2010) is the expected overlap of the two top-d prefixes under a
    user who reads to depth d with probability :math:`(1-p)p^{d-1}`:

    .. math::

        \mathrm{RBO} = (1-p)\sum_{d\ge 1} p^{d-1} A_d, \qquad A_d = \frac{X_d}{d},

    with :math:`X_d` the number of items in both prefixes. Both rankings here cover the same
    ``m`` systems, so nothing is unseen below depth ``m`` (:math:`A_d = 1` for
    :math:`d \ge m`) and the infinite sum is exactly the paper's extrapolated
    :math:`\mathrm{RBO_{EXT}}` (which then equals :math:`\mathrm{RBO_{MAX}}`):

    .. math::

        \mathrm{RBO_{EXT}} = \frac{1-p}{p}\sum_{d=1}^{m} A_d\, p^d + p^m .

    Ties (Corsi & Urbano 2024): item i with :math:`t_i` systems strictly above its tie group of
    size :math:`g_i` contributes :math:`c_i(d)` to the depth-d prefix, and
    :math:`X_d = \sum_i c^x_i(d)\, c^y_i(d)`:

    * ``ties="a"`` (default; ties mean uncertainty): :math:`c_i(d) = \min(1, \max(0,
      (d - t_i)/g_i))`, the probability that random tie-breaking puts i in the prefix, and
      :math:`A_d = X_d/d`. RBO^a is the exact expectation of RBO over independent uniform
      tie-breakings of both rankings.
    * ``ties="b"``: the same contributions, with :math:`A_d = X_d / \sqrt{\sum_i c^x_i(d)^2
      \sum_i c^y_i(d)^2}`, correcting for the information lost to ties so that a ranking has
      RBO^b = 1 with itself.
    * ``ties="w"`` (ties mean equality): a tie group enters the prefix whole as soon as it
      starts, :math:`c_i(d) = [d > t_i]`, and :math:`A_d = 2X_d/(|x_{:d}| + |y_{:d}|)`.

    Without ties the three coincide.

    Parameters
    ----------
    x, y : array_like, shape (m,) or (k, m), or pandas.DataFrame
        Scores of the same ``m`` systems (higher is better); equal scores are tied.
    p : float
        Persistence in (0, 1); the top d ranks carry weight :math:`1 - p^d`.
    ties : {"a", "b", "w"}

    Returns
    -------
    float or numpy.ndarray
        A float when both inputs are 1-D, otherwise one value per ranking.

    See Also
    --------
    rbo_rankings : rankings of items (different items, different lengths), with the
        RBO_MIN / RBO_MAX bounds.

    Examples
    --------
    >>> rbo([4, 3, 2, 1], [3, 4, 2, 1], p=0.5)  # A_1 = 0, A_2..4 = 1: p^2 + p^3 + p^4 + p^4
    0.5
    """
    p = _check_p(p)
    ties = _check_ties(ties)
    X, Y, scalar = _broadcast_pair(x, y, "x", "y")
    k, m = X.shape
    depths = np.arange(1, m + 1)
    weights = (1.0 - p) / p * p ** depths.astype(float)
    out = np.empty(k)
    for sl in _row_chunks(k, m):
        contrib = []
        for S in (X[sl], Y[sl]):
            top = (S[:, None, :] > S[:, :, None]).sum(axis=2)  # systems strictly above i
            size = (S[:, None, :] == S[:, :, None]).sum(axis=2)
            contrib.append(_contributions(top, size, depths, ties))  # (rows, m, m)
        cx, cy = contrib
        agreement = _agreement((cx * cy).sum(axis=1), cx, cy, ties)
        out[sl] = agreement @ weights + p**m
    out = np.clip(out, 0.0, 1.0)  # float noise of identical rankings
    return float(out[0]) if scalar else out


@dataclass(frozen=True, eq=False)
class RBOResult:
    """Result of :func:`rbo_rankings`.

    Attributes
    ----------
    ext : float
        Extrapolated RBO: the agreement seen at the end of the shorter list continues.
    min, max : float
        Bounds: no further overlap / the most overlap the unseen items allow.
    res : float
        The residual ``max - min``.
    p : float
    ties : str
    """

    ext: float
    min: float
    max: float
    res: float
    p: float
    ties: str

    def to_frame(self) -> pd.DataFrame:
        """One row: ``ties, p, ext, min, max, res``."""
        return pd.DataFrame(
            [
                {
                    "ties": self.ties,
                    "p": self.p,
                    "ext": self.ext,
                    "min": self.min,
                    "max": self.max,
                    "res": self.res,
                }
            ]
        )


def _flatten(ranking, name: str):
    """Items, first ranks (0-based) and tie-group sizes of a ranking given as a sequence of
    items and tie groups (set, frozenset, list or tuple)."""
    if isinstance(ranking, (str, bytes)) or not isinstance(ranking, Sequence):
        raise TypeError(
            f"{name} must be a sequence of items, with tied items grouped in a set, list or "
            f"tuple, e.g. ['a', {{'b', 'c'}}, 'd']; got {type(ranking).__name__}"
        )
    items, top, size = [], [], []
    for element in ranking:
        group = list(element) if isinstance(element, (set, frozenset, list, tuple)) else [element]
        if not group:
            raise ValueError(f"{name} contains an empty tie group")
        start = len(items)
        for item in group:
            if not isinstance(item, Hashable):
                raise TypeError(f"{name} items must be hashable, got {type(item).__name__}")
            items.append(item)
            top.append(start)
            size.append(len(group))
    if not items:
        raise ValueError(f"{name} must rank at least one item")
    if len(set(items)) != len(items):
        seen, dup = set(), None
        for item in items:
            if item in seen:
                dup = item
                break
            seen.add(item)
        raise ValueError(f"{name} ranks item {dup!r} more than once")
    return items, np.array(top), np.array(size)


def rbo_rankings(x, y, *, p: float = 0.9, ties: Literal["a", "b", "w"] = "a") -> RBOResult:
    r"""RBO of two indefinite rankings of items, with ties: RBO_EXT, RBO_MIN, RBO_MAX.

    The general case of :func:`rbo` (Webber, Moffat & Zobel 2010, with the tie-aware variants
    of Corsi & Urbano 2024): the rankings may rank different items and have different
    lengths, as two retrieval runs cut at depth k. With s and l the lengths of the shorter (S)
    and longer (L) list and contributions :math:`c_i(d)` as in :func:`rbo`,

    * depths 1..s: :math:`A_d` from the seen overlap;
    * depths s+1..l: S is unseen beyond s. RBO_MIN adds no overlap; RBO_MAX assumes the next
      unseen items of S are the first items of L absent from S; RBO_EXT adds
      :math:`(d-s)\,A_s` times the mean contribution of those items;
    * depths beyond l: RBO_MIN keeps :math:`X_l` (adding
      :math:`X_l(\ln\frac{1}{1-p} - \sum_{d=1}^{l} p^d/d)`), RBO_MAX lets the overlap grow by
      2 per depth until all :math:`l + s - X_l` items are matched, and RBO_EXT extrapolates
      the agreement :math:`(X_l + (l-s)A_s)/l`;

    and each score is :math:`\frac{1-p}{p}(\sum_{d\le l} A_d p^d + \text{tail})`, clipped to
    [0, 1]. This follows Corsi & Urbano's reference implementation (``rbo.R`` / ``rbo.py``),
    whose published test values it reproduces. RBO^a's RBO_MIN and RBO_MAX are the
    expectations of the untied bounds over independent uniform tie-breakings of both lists, and
    so is its RBO_EXT when the lists have the same length; on uneven lists RBO_EXT
    extrapolates the expected seen agreement instead.

    Parameters
    ----------
    x, y : sequence
        Rankings, best first. Each element is an item (any hashable) or a tie group of items
        (a set, frozenset, list or tuple), e.g. ``["red", {"blue", "green"}, "yellow"]``.
    p : float
        Persistence in (0, 1).
    ties : {"a", "b", "w"}
        See :func:`rbo`.

    Returns
    -------
    RBOResult

    Examples
    --------
    Corsi & Urbano's README example, p = .95:

    >>> x = ["red", {"blue", "green"}, "yellow", "pink"]
    >>> y = [{"blue", "red"}, "white", {"yellow", "black", "purple"}, "green"]
    >>> r = rbo_rankings(x, y, p=0.95)
    >>> round(r.ext, 7), round(r.min, 7), round(r.max, 7)
    (0.6922853, 0.3310519, 0.8930692)
    """
    p = _check_p(p)
    ties = _check_ties(ties)
    fx = _flatten(x, "x")
    fy = _flatten(y, "y")
    # S is the shorter list (y on equal lengths, as the reference code; the scores do not
    # depend on it then).
    (s_items, s_top, s_size), (l_items, l_top, l_size) = (
        (fy, fx) if len(fx[0]) >= len(fy[0]) else (fx, fy)
    )
    s, l = len(s_items), len(l_items)
    in_s = set(s_items)
    l_only = [item for item in l_items if item not in in_s]  # in L's order
    omega = s_items + l_only
    row = {item: i for i, item in enumerate(omega)}
    depths = np.arange(1, l + 1)
    cS = np.zeros((len(omega), l))
    cL = np.zeros((len(omega), l))
    cS[[row[i] for i in s_items]] = _contributions(s_top, s_size, depths, ties)
    cL[[row[i] for i in l_items]] = _contributions(l_top, l_size, depths, ties)
    x_seen = (cS * cL).sum(axis=0)  # X_d at every depth 1..l

    # Depths 1..s.
    a1 = _agreement(x_seen[None, :s], cS[None, :, :s], cL[None, :, :s], ties)[0]
    a_s = a1[-1]

    # Depths s+1..l: S has d items (each contributing 1) where only s are seen.
    d2 = depths[s:].astype(float)
    lsum = cL[:, s:].sum(axis=0)
    lsq = (cL[:, s:] ** 2).sum(axis=0)

    def a2(x_d):
        if ties == "a":
            return x_d / d2
        if ties == "w":
            return 2.0 * x_d / (d2 + lsum)
        return x_d / np.sqrt(d2) / np.sqrt(lsq)

    x2 = x_seen[s:]
    unseen = cL[s : s + len(l_only), s:]  # L-only items (rows) at depths s+1..l
    # Best case: at depth s+1+j the unseen part of S holds the first j+1 L-only items.
    x2_max = x2 + np.triu(unseen[: l - s]).sum(axis=0)
    # Extrapolation: (d - s) unseen items of S, each matching with agreement A_s, weighted by
    # the mean contribution of the L-only items present at that depth.
    with np.errstate(invalid="ignore"):
        present = np.where(unseen > 0, unseen, np.nan)
        mean_present = (
            np.nanmean(present, axis=0) if present.size else np.zeros(0)
        )  # every depth > s has an L-only item present, so no all-NaN column
    x2_ext = x2 + (d2 - s) * a_s * mean_present

    # Depths beyond l.
    x_l = x_seen[-1]
    dl = depths.astype(float)
    tail_min = x_l * (math.log(1.0 / (1.0 - p)) - float((p**dl / dl).sum()))
    f = int(round(l + s - x_l))  # X_l counts whole items: all are fully in at depth l
    d3 = np.arange(l + 1, f + 1, dtype=float)
    tail_max = float(((2.0 * d3 - l - s + x_l) / d3 * p**d3).sum()) + p ** (f + 1) / (1.0 - p)
    tail_ext = (x_l + (l - s) * a_s) / l * p ** (l + 1) / (1.0 - p)

    w = p**dl
    head = float(a1 @ w[:s])
    scale = (1.0 - p) / p

    def total(a2_values, tail):
        return float(min(max(scale * (head + float(a2_values @ w[s:]) + tail), 0.0), 1.0))

    lo = total(a2(x2), tail_min)
    hi = total(a2(x2_max), tail_max)
    return RBOResult(
        ext=total(a2(x2_ext), tail_ext),
        min=lo,
        max=hi,
        res=hi - lo,
        p=p,
        ties=ties,
    )
