r"""Score-level worlds: per-topic scores simulated from fitted margins and copulas.

A document-level world (:mod:`simulators.worlds`) makes judgments and runs; a score-level world
makes what the criteria that need only scores read, a (systems x topics) matrix of one
measure's per-topic scores (or one per measure, simulated together), with a known truth: every
system's expected score. It follows Urbano & Nagler (2018):

* each system's scores over topics have a **margin** :math:`F_s`, a distribution on [0, 1]
  fitted to a real run's scores and chosen among several families by AIC or BIC
  (:mod:`simulators.margins`);
* the dependence between systems (a hard topic is hard for every system) is a **copula**
  :math:`C`, fitted to the pseudo-observations (ranks) of the real scores: a Gaussian copula,
  a vine copula (pyvinecopulib, the C++ core of the R package the papers use), or, for a pair
  of systems, a bivariate copula chosen among parametric families by AIC;
* a topic's scores are :math:`x_s = F_s^{-1}(u_s)` with :math:`u \sim C`, so each system's
  expected score is its margin's mean, known exactly; :func:`~simulators.margins.transform_mean`
  moves a margin to any expected value, to make pairs with a known difference.

Two designs:

* :class:`ScoreWorld` (``design = "systems"``): every kept run of a collection at once, with
  its margin and one copula over all of them: a new collection of the same systems on new
  topics. Fitted to several measures of the collection, it has a margin per measure and run
  and one copula over them all, so the measures' rankings agree as the collection's do.
* :func:`simulate_pairs` (``design = "pairs"``), the protocol of Urbano, Lima & Hanjalic (2019)
  for the error rates of tests: each trial picks a collection (with probability proportional
  to its number of runs), two of its runs at random, the bivariate copula fitted to that pair,
  and the first run's margin for **both** systems (a null pair: equal expected scores), or the
  first run's margin and the same margin moved by ``delta`` (a known difference).

Before fitting, runs whose per-topic scores equal another run's (within 1e-5 on every topic)
and the runs below the ``drop_bottom`` quantile of mean score are removed, as the papers do
(those runs are buggy or uninteresting, and they distort the copulas).

References
----------
.. [UN18] J. Urbano, T. Nagler (2018). Stochastic simulation of test collections: evaluation
   scores. SIGIR 2018, 695-704.
.. [ULH19] J. Urbano, H. Lima, A. Hanjalic (2019). Statistical significance testing in
   information retrieval: an empirical analysis of type I, type II and type III errors.
   SIGIR 2019, 505-514.
.. [ACFB09] K. Aas, C. Czado, A. Frigessi, H. Bakken (2009). Pair-copula constructions of
   multiple dependence. Insurance: Mathematics and Economics 44(2).
"""

from __future__ import annotations

import csv
import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from scipy.optimize import minimize

from metaeval._validation import as_generator, check_int, check_real
from simulators.margins import Margin, fit_margin, transform_mean

#: Bivariate copula families. Every name but two is pyvinecopulib's ("tawn" is its Tawn copula with
#: three parameters); "tawn1" and "tawn2" are the two-parameter Tawn copulas of R's VineCopula
#: (its families 104 and 204), fitted here as VineCopula fits them (:func:`_fit_tawn`); "tll" is
#: pyvinecopulib's nonparametric family.
COPULA_FAMILIES = (
    "indep",
    "gaussian",
    "student",
    "clayton",
    "gumbel",
    "frank",
    "joe",
    "bb1",
    "bb6",
    "bb7",
    "bb8",
    "tawn",
    "tawn1",
    "tawn2",
    "tll",
)
TWO_PARAMETER_TAWNS = ("tawn1", "tawn2")
#: The default set of a pair of runs: R's VineCopula's (``BiCopSelect(familyset = NA)``), the set
#: the papers selected from: every parametric family, Tawn with two parameters.
PAIR_FAMILIES = tuple(f for f in COPULA_FAMILIES if f not in ("tawn", "tll"))
#: The default set of a vine: pyvinecopulib's parametric families (a vine fits its pair copulas
#: in C++, where only pyvinecopulib's own families exist).
VINE_FAMILIES = tuple(f for f in COPULA_FAMILIES if f not in (*TWO_PARAMETER_TAWNS, "tll"))
COPULAS = ("gaussian", "vine", "independent")
DESIGNS = ("systems", "pairs")
_DUPLICATE_TOL = 1e-5


def _pv():
    try:
        import pyvinecopulib
    except ImportError as err:  # pragma: no cover - a declared dependency
        raise ImportError(
            "score-level worlds need pyvinecopulib (pip install pyvinecopulib)"
        ) from err
    return pyvinecopulib


def _family_names(names, default: tuple) -> tuple:
    names = default if names is None else tuple(names)
    unknown = [n for n in names if n not in COPULA_FAMILIES]
    if unknown or not names:
        raise ValueError(
            f"unknown copula family {unknown[0]!r}; known: {', '.join(COPULA_FAMILIES)}"
            if unknown
            else "copula families must name at least one family"
        )
    return names


def _families(names) -> list:
    """pyvinecopulib's families of a vine."""
    names = _family_names(names, VINE_FAMILIES)
    tawns = [n for n in names if n in TWO_PARAMETER_TAWNS]
    if tawns:
        raise ValueError(
            f"copula family {tawns[0]!r} is fitted for a pair of runs only; a vine takes "
            "pyvinecopulib's families (its 'tawn' has three parameters)"
        )
    pv = _pv()
    return [getattr(pv.BicopFamily, n) for n in names]


# ------------------------------------------------------------------------------ data


def read_score_matrix(path) -> pd.DataFrame:
    """A (topics x runs) matrix of one measure's per-topic scores from a CSV file.

    One column per run, named in the header row (which is required, each name once), one row
    per topic; a first column of topic ids (any non-numeric column) is used as the index.
    Every score must be a finite number in [0, 1].
    """
    path = Path(path)
    try:
        frame = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise ValueError(
            f"{path}: empty file; a score matrix has a header row of run names, then a row "
            "per topic"
        ) from None
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: cannot read a score matrix: {err}") from None
    # the header as written: pandas renames a repeated name (r1, r1.1)
    with path.open(encoding="utf-8-sig", newline="") as f:
        header = next((row for row in csv.reader(f) if row), [])
    indexed = frame.shape[1] > 0 and not pd.api.types.is_numeric_dtype(frame.iloc[:, 0])
    if indexed:
        frame = frame.set_index(frame.columns[0])
    runs = header[1:] if indexed else header
    if runs and all(_is_score(name) for name in runs):
        # without a header row, pandas takes the first topic's scores for the runs' names
        # (runs named by numbers, 1, 2, 3..., are not all within [0, 1])
        shown = ", ".join(header[:4]) + (", ..." if len(header) > 4 else "")
        raise ValueError(
            f"{path}: the first row ({shown}) holds numbers, not run names; the file needs a "
            "header row of run names"
        )
    twice = next((name for name in header if header.count(name) > 1), None)
    if twice is not None:
        raise ValueError(f"{path}: column {twice!r} is named twice in the header row")

    if frame.shape[0] < 3 or frame.shape[1] < 2:
        raise ValueError(
            f"{path}: needs at least 3 topics (rows) and 2 runs (columns), got {frame.shape}"
        )

    # a file line for a cell: the header is line 1, the first topic line 2
    def line(row: int) -> str:
        return f"line {row + 2}"

    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]):
            numbers = pd.to_numeric(frame[column], errors="coerce")
            row = int(np.flatnonzero(numbers.isna() & frame[column].notna())[0])
            raise ValueError(
                f"{path}, {line(row)}: run {column!r} has {frame[column].iloc[row]!r}, not a number"
            )
    values = frame.to_numpy(dtype=float)
    for problem, bad in (
        ("is missing or not finite", ~np.isfinite(values)),
        ("lies outside [0, 1]", (values < 0) | (values > 1)),
    ):
        if bad.any():
            row, col = (int(i[0]) for i in np.nonzero(bad))
            raise ValueError(
                f"{path}, {line(row)}: the score of run {frame.columns[col]!r} "
                f"({values[row, col]}) {problem}"
            )
    return frame


def _is_score(text: str) -> bool:
    """Whether a header field reads as a score, a number in [0, 1]."""
    try:
        return 0.0 <= float(text) <= 1.0
    except ValueError:
        return False


def keep_runs(X: np.ndarray, *, drop_bottom: float = 0.1, drop_duplicates: bool = True):
    """Indices of the runs (columns of the (T, S) matrix X) the papers keep: no run equal to
    an earlier one (within 1e-5 on every topic), none below the ``drop_bottom`` quantile of
    the mean scores (R's default type-7 quantile, as the papers computed it)."""
    X = np.asarray(X, dtype=float)
    keep = np.arange(X.shape[1])
    if drop_duplicates:
        dup = np.zeros(X.shape[1], dtype=bool)
        for i in range(X.shape[1] - 1):
            if dup[i]:
                continue
            same = np.all(np.abs(X[:, i + 1 :] - X[:, [i]]) <= _DUPLICATE_TOL, axis=0)
            dup[i + 1 :] |= same
        keep = keep[~dup]
    if drop_bottom:
        mu = X[:, keep].mean(axis=0)
        keep = keep[mu >= np.quantile(mu, drop_bottom)]
    return keep


def pseudo_observations(X: np.ndarray, rng=None) -> np.ndarray:
    """(T, d) ranks of each column divided by T + 1, ties broken at random (as R's
    ``pobs(ties.method = "random")``): the uniforms a copula is fitted to."""
    X = np.asarray(X, dtype=float)
    gen = as_generator(rng)
    T = X.shape[0]
    u = np.empty_like(X)
    for j in range(X.shape[1]):
        order = np.lexsort((gen.random(T), X[:, j]))
        u[order, j] = np.arange(1, T + 1)
    return u / (T + 1)


# ------------------------------------------------------------------------------ copulas


@dataclass(frozen=True)
class GaussianCopula:
    r"""The Gaussian copula of a correlation matrix R: :math:`u = \Phi(z)`,
    :math:`z \sim N(0, R)`.

    Fitted by the correlation of the normal scores :math:`\Phi^{-1}(u)` of the
    pseudo-observations (van der Waerden); with fewer topics than systems R is singular, and
    sampling uses its positive semi-definite square root (eigenvalues below 0 set to 0).
    """

    corr: np.ndarray

    @property
    def dim(self) -> int:
        return self.corr.shape[0]

    @classmethod
    def fit(cls, u: np.ndarray) -> GaussianCopula:
        z = stats.norm.ppf(np.asarray(u, dtype=float))
        corr = np.atleast_2d(np.corrcoef(z, rowvar=False))
        return cls(np.nan_to_num(corr, nan=0.0) * (1 - np.eye(len(corr))) + np.eye(len(corr)))

    @functools.cached_property
    def _root(self) -> np.ndarray:
        w, V = np.linalg.eigh(self.corr)
        return V * np.sqrt(np.clip(w, 0.0, None))

    def simulate(self, n: int, rng=None) -> np.ndarray:
        z = as_generator(rng).standard_normal((n, self.dim)) @ self._root.T
        sd = np.sqrt(np.clip(np.diag(self.corr), 1e-300, None))
        return stats.norm.cdf(z / sd)

    def to_dict(self) -> dict:
        return {"copula": "gaussian", "corr": self.corr.tolist()}


@dataclass(frozen=True)
class IndependenceCopula:
    """Independent uniforms: systems unrelated across topics (no topic difficulty)."""

    dim: int

    def simulate(self, n: int, rng=None) -> np.ndarray:
        return as_generator(rng).random((n, self.dim))

    def to_dict(self) -> dict:
        return {"copula": "independent", "dim": self.dim}


@dataclass(frozen=True, eq=False)
class VineCopula:
    """A regular-vine copula (Aas et al. 2009) fitted by pyvinecopulib: a tree of bivariate
    copulas chosen by AIC among ``families``, truncated after ``trunc_lvl`` trees (None: all).

    Sampling feeds the generator's own uniforms through the vine's inverse Rosenblatt
    transform, so the draws depend on the study's random stream alone."""

    model: object  # pyvinecopulib.Vinecop

    @property
    def dim(self) -> int:
        return int(self.model.dim)

    @classmethod
    def fit(cls, u: np.ndarray, *, families=None, criterion="aic", trunc_lvl=None) -> VineCopula:
        pv = _pv()
        controls = pv.FitControlsVinecop(
            family_set=_families(families),
            selection_criterion=criterion,
            **({} if trunc_lvl is None else {"trunc_lvl": int(trunc_lvl)}),
        )
        return cls(pv.Vinecop.from_data(np.asarray(u, dtype=float), controls=controls))

    def simulate(self, n: int, rng=None) -> np.ndarray:
        w = as_generator(rng).random((n, self.dim))
        return np.asarray(self.model.inverse_rosenblatt(w))

    def to_dict(self) -> dict:
        return {"copula": "vine", "json": self.model.to_json()}


@dataclass(frozen=True, eq=False)
class PairCopula:
    """A bivariate copula chosen by AIC (or BIC) among ``families``, as R's
    ``VineCopula::BiCopSelect`` chooses it for the papers (default: its family set,
    :data:`PAIR_FAMILIES`).

    pyvinecopulib fits and selects its own families (with their rotations and its
    preselection); the two-parameter Tawn copulas are fitted by :func:`_fit_tawn`, and the
    candidate with the least criterion is kept. ``family`` names it, with its rotation
    ("gumbel", "tawn1180", ...)."""

    model: object  # pyvinecopulib.Bicop
    family: str
    dim: int = field(default=2, init=False)

    @classmethod
    def fit(cls, u: np.ndarray, *, families=None, criterion="aic") -> PairCopula:
        pv = _pv()
        u = np.asarray(u, dtype=float)
        names = _family_names(families, PAIR_FAMILIES)
        if criterion not in ("aic", "bic"):
            raise ValueError(f"criterion must be 'aic' or 'bic', got {criterion!r}")
        penalty = 2.0 if criterion == "aic" else float(np.log(len(u)))
        candidates = []  # (criterion, family name, model)
        own = [n for n in names if n not in TWO_PARAMETER_TAWNS]
        if own:
            controls = pv.FitControlsBicop(
                family_set=[getattr(pv.BicopFamily, n) for n in own],
                selection_criterion=criterion,
            )
            model = pv.Bicop.from_data(u, controls=controls)
            value = -2.0 * model.loglik(u) + penalty * model.npars
            candidates.append((value, str(model.family).rsplit(".", 1)[-1], model))
        tawns = [n for n in names if n in TWO_PARAMETER_TAWNS]
        if tawns:
            tau = float(stats.kendalltau(u[:, 0], u[:, 1]).statistic)
            for rotation in _tawn_rotations(u, tau):
                for name in tawns:
                    model, loglik = _fit_tawn(u, name, rotation, tau)
                    candidates.append((-2.0 * loglik + 2 * penalty, name, model))
        _, name, model = min(candidates, key=lambda c: c[0])
        rotation = int(model.rotation)
        return cls(model, name if rotation == 0 else f"{name}{rotation}")

    @property
    def tau(self) -> float:
        """Kendall's tau of the fitted copula."""
        return float(self.model.parameters_to_tau(self.model.parameters))

    def simulate(self, n: int, rng=None) -> np.ndarray:
        w = as_generator(rng).random((n, 2))
        # v = h^{-1}(w2 | u1): the second coordinate given the first
        v = self.model.hinv1(w)
        return np.column_stack([w[:, 0], v])

    def to_dict(self) -> dict:
        return {"copula": "pair", "family": self.family, "json": self.model.to_json()}


def _tawn_rotations(u: np.ndarray, tau: float) -> list[int]:
    """The rotations of a Tawn copula worth fitting to ``u``: those of the sign of ``tau``
    (0 and 180 for positive dependence, 90 and 270 for negative), narrowed as vinecopulib
    narrows those of Gumbel's and Joe's, the families with an upper tail: with c1 and c2 the
    correlations of the normal scores in the two quadrants of that dependence (upper right
    and lower left when ``tau > 0``), c1 - c2 > 0.05 keeps only the rotation whose tail is in
    the first quadrant (0 or 270), c1 - c2 < -0.05 only the other (180 or 90)."""
    x = stats.norm.ppf(u)
    if tau > 0:
        first, second = (x[:, 0] > 0) & (x[:, 1] > 0), (x[:, 0] < 0) & (x[:, 1] < 0)
        rotations = [0, 180]
    else:
        first, second = (x[:, 0] < 0) & (x[:, 1] > 0), (x[:, 0] > 0) & (x[:, 1] < 0)
        rotations = [90, 270]

    def corr(mask):  # an empty or degenerate quadrant counts as independent
        if mask.sum() < 3:
            return 0.0
        c = np.corrcoef(x[mask].T)[0, 1]
        return float(c) if np.isfinite(c) else 0.0

    gap = corr(first) - corr(second)
    if gap > 0.05:
        return [r for r in rotations if r not in (90, 180)]
    if gap < -0.05:
        return [r for r in rotations if r in (90, 180)]
    return rotations


def _fit_tawn(u: np.ndarray, name: str, rotation: int, tau: float):
    r"""A two-parameter Tawn copula fitted to ``u`` as R's VineCopula fits its families 104 and
    204 (``MLE_intern_Tawn``), and its log-likelihood.

    Tawn's extreme-value copula has a dependence parameter :math:`\theta \ge 1` and two
    asymmetry weights :math:`\psi_1, \psi_2 \in [0, 1]` (pyvinecopulib's "tawn", with both
    weights 1, is Gumbel's copula); "tawn1" frees :math:`\psi_1` with :math:`\psi_2 = 1`,
    "tawn2" the reverse, so each is the other's transpose. Maximum likelihood by L-BFGS-B within
    VineCopula's bounds, :math:`\theta \in [1.001, 20]` and
    :math:`\psi \in [\max(|\tau| - 0.1, 10^{-4}), \min(|\tau| + 0.2, 0.99)]` around the
    empirical Kendall's tau, from its start :math:`\theta = 1 + 6|\tau|`,
    :math:`\psi = \min(|\tau| + 0.1, 0.999)`. Those bounds keep the asymmetry near the
    dependence, and they decide how asymmetric the papers' pairs are, so the error rates of
    the sign and Wilcoxon tests depend on them.
    """
    pv = _pv()
    a = abs(tau)
    bounds = [(1.001, 20.0), (max(a - 0.1, 1e-4), min(a + 0.2, 0.99))]
    start = [1.0 + 6.0 * a, min(a + 0.1, 0.999)]
    start = [min(max(x, lo), hi) for x, (lo, hi) in zip(start, bounds)]

    def model(x):
        theta, psi = x
        weights = (psi, 1.0) if name == "tawn1" else (1.0, psi)
        parameters = np.array([[weights[0]], [weights[1]], [theta]])
        return pv.Bicop(family=pv.BicopFamily.tawn, rotation=rotation, parameters=parameters)

    def minus_loglik(x):
        value = model(x).loglik(u)
        return -value if np.isfinite(value) else 1e250

    best = minimize(minus_loglik, start, bounds=bounds, method="L-BFGS-B")
    return model(best.x), -float(best.fun)


def fit_copula(u: np.ndarray, kind: str, *, families=None, criterion="aic", trunc_lvl=None):
    """A copula of ``kind`` ("gaussian", "vine" or "independent") fitted to pseudo-observations."""
    if kind == "gaussian":
        return GaussianCopula.fit(u)
    if kind == "vine":
        return VineCopula.fit(u, families=families, criterion=criterion, trunc_lvl=trunc_lvl)
    if kind == "independent":
        return IndependenceCopula(np.asarray(u).shape[1])
    raise ValueError(f"unknown copula {kind!r}; known: {', '.join(COPULAS)}")


# ------------------------------------------------------------------------------ worlds


@dataclass(frozen=True, eq=False)
class ScoreWorld:
    """Margins of S systems and a copula over them: new collections of the same systems.

    A world fitted to one measure's scores simulates (S, T) matrices. A world fitted to
    several measures of the same systems and topics (a mapping ``{measure: scores}``) has a
    margin per measure and system and one copula over all of them, so a simulated topic keeps
    the dependence between a system's measures (a topic with a high AP tends to have a high
    P@10) as well as between systems: it simulates (M, S, T) arrays, whose rankings by two
    measures agree as much as the real collection's do (the agreement between measures).

    Attributes
    ----------
    runs : tuple of str
        The systems' names.
    margins : tuple of Margin, or tuple of tuples of Margin
        Each system's score distribution (per measure, measure by measure, with ``measures``);
        its mean is the system's true expected score.
    copula : GaussianCopula, VineCopula or IndependenceCopula
        Over the S systems, or the M x S (measure, system) pairs in measure-major order.
    measures : tuple of str, optional
        The measures' names, for a world of several measures; None for one measure.
    """

    runs: tuple
    margins: tuple
    copula: object
    measures: tuple | None = None

    @property
    def _flat(self) -> tuple:
        return self.margins if self.measures is None else sum(self.margins, ())

    @property
    def _shape(self) -> tuple:
        return (len(self.runs),) if self.measures is None else (len(self.measures), len(self.runs))

    @property
    def system_effect(self) -> np.ndarray:
        """(S,) the systems' expected scores, the truth a simulated collection estimates; (M, S)
        for a world of several measures."""
        return np.array([m.mean for m in self._flat]).reshape(self._shape)

    def simulate(self, n_topics: int, rng=None) -> np.ndarray:
        """(S, n_topics) per-topic scores of a new collection; (M, S, n_topics) for a world of
        several measures."""
        n_topics = check_int("n_topics", n_topics, min=1)
        u = self.copula.simulate(n_topics, as_generator(rng))
        x = np.stack([m.ppf(u[:, d]) for d, m in enumerate(self._flat)])
        return x.reshape((*self._shape, n_topics))

    def with_means(self, means) -> ScoreWorld:
        """The same world with every margin moved to the given expected score (exactly); the
        means broadcast to :attr:`system_effect`'s shape."""
        means = np.broadcast_to(np.asarray(means, dtype=float), self._shape).ravel()
        flat = tuple(transform_mean(m, float(mu)) for m, mu in zip(self._flat, means))
        if self.measures is not None:
            S = len(self.runs)
            flat = tuple(flat[k * S : (k + 1) * S] for k in range(len(self.measures)))
        return ScoreWorld(self.runs, flat, self.copula, self.measures)

    @classmethod
    def fit(
        cls,
        scores,
        *,
        families=None,
        criterion: str = "aic",
        support=None,
        copula: str = "gaussian",
        copula_families=None,
        trunc_lvl=None,
        drop_bottom: float = 0.1,
        drop_duplicates: bool = True,
        rng=None,
    ) -> ScoreWorld:
        """Fit margins and a copula to a (topics x runs) score matrix (a frame, or an array
        whose columns are runs), or to a mapping ``{measure: matrix}`` of several measures'
        matrices of the same topics (rows, in the same order) and runs (columns, by name).

        With several measures, ``families`` and ``support`` are either one value for every
        measure or a mapping ``{measure: value}`` (a measure it does not name gets the
        default: every continuous family, no support). A run is dropped as a duplicate when
        every measure's scores equal an earlier run's, and the ``drop_bottom`` quantile is of
        the runs' mean over the measures' mean scores.
        """
        joint = isinstance(scores, Mapping)
        frames = same_collection(scores if joint else {None: scores})
        names = tuple(frames)
        Xs = [f.to_numpy(dtype=float) for f in frames.values()]
        keep = keep_runs(np.vstack(Xs), drop_bottom=drop_bottom, drop_duplicates=drop_duplicates)
        Xs = [X[:, keep] for X in Xs]
        fams = _per_measure(families, names, "families")
        sups = _per_measure(support, names, "support")
        margins = tuple(
            tuple(
                fit_margin(X[:, j], families=fam, criterion=criterion, support=sup)
                for j in range(X.shape[1])
            )
            for X, fam, sup in zip(Xs, fams, sups)
        )
        u = pseudo_observations(np.hstack(Xs), rng)
        cop = fit_copula(
            u, copula, families=copula_families, criterion=criterion, trunc_lvl=trunc_lvl
        )
        runs = tuple(str(frames[names[0]].columns[j]) for j in keep)
        if not joint:
            return cls(runs, margins[0], cop)
        return cls(runs, margins, cop, tuple(str(n) for n in names))


def same_collection(scores: Mapping) -> dict:
    """The measures' (topics x runs) frames (arrays become frames), checked to be of one
    collection: the same runs (columns, by name, in order) and topics (rows, in order).

    Raises
    ------
    ValueError
        A measure's matrix names other runs or holds other topics than the first's.
    """
    if not scores:
        raise ValueError("scores must hold at least one measure's score matrix")
    frames = {
        k: v if isinstance(v, pd.DataFrame) else pd.DataFrame(np.asarray(v))
        for k, v in scores.items()
    }
    (first, ref), *rest = frames.items()
    runs = [str(c) for c in ref.columns]
    for name, frame in rest:
        if [str(c) for c in frame.columns] != runs:
            raise ValueError(
                f"the scores of {name} must name the runs of {first}'s, in the same order"
            )
        if frame.shape[0] != ref.shape[0] or not frame.index.equals(ref.index):
            raise ValueError(
                f"the scores of {name} must hold the topics of {first}'s, in the same order "
                f"({frame.shape[0]} against {ref.shape[0]} rows)"
            )
    return frames


def _per_measure(value, names: tuple, what: str) -> list:
    """``value`` for each measure: one value for all, or a mapping from measure to value."""
    if not isinstance(value, Mapping):
        return [value] * len(names)
    unknown = [k for k in value if k not in names]
    if unknown:
        raise ValueError(f"{what} names {unknown[0]!r}, which is not a measure of the scores")
    return [value.get(n) for n in names]


@dataclass(frozen=True, eq=False)
class ScoreCollection:
    """One real collection's scores for the pairs design: its kept runs, their margins
    (fitted once) and their pairs' bivariate copulas (fitted when first drawn, then kept)."""

    name: str
    runs: tuple
    scores: np.ndarray  # (T, S) of the kept runs
    margins: tuple
    families: tuple | None = None
    criterion: str = "aic"
    _copulas: dict = field(default_factory=dict, repr=False)

    @classmethod
    def fit(
        cls,
        name: str,
        frame: pd.DataFrame,
        *,
        families=None,
        criterion: str = "aic",
        support=None,
        copula_families=None,
        drop_bottom: float = 0.1,
        drop_duplicates: bool = True,
    ) -> ScoreCollection:
        X = frame.to_numpy(dtype=float)
        keep = keep_runs(X, drop_bottom=drop_bottom, drop_duplicates=drop_duplicates)
        X = X[:, keep]
        margins = tuple(
            fit_margin(X[:, j], families=families, criterion=criterion, support=support)
            for j in range(X.shape[1])
        )
        return cls(
            name,
            tuple(str(frame.columns[j]) for j in keep),
            X,
            margins,
            None if copula_families is None else tuple(copula_families),
            criterion,
        )

    def copula(self, i: int, j: int) -> PairCopula:
        """The bivariate copula of runs i and j (in that order), fitted on first use.

        The pseudo-observations' random tie-breaking is seeded by the collection and the
        pair, so a pair's copula is the same whoever fits it first."""
        key = (min(i, j), max(i, j))
        if key not in self._copulas:
            seed = int.from_bytes(
                hashlib.sha256(f"{self.name}\0{key[0]}\0{key[1]}".encode()).digest()[:8], "big"
            )
            u = pseudo_observations(self.scores[:, list(key)], seed)
            self._copulas[key] = PairCopula.fit(u, families=self.families, criterion=self.criterion)
        return self._copulas[key]


@dataclass(frozen=True)
class SimulatedPairs:
    """The result of :func:`simulate_pairs`: 2P systems, rows 2k and 2k + 1 the pair k."""

    scores: np.ndarray  # (2P, n_topics)
    system_effect: np.ndarray  # (2P,) expected scores
    pairs: np.ndarray  # (P, 2) row indices
    trials: pd.DataFrame  # per pair: collection, run_a, run_b, margin, copula, tau


def simulate_pairs(
    collections, n_pairs: int, n_topics: int, *, delta: float = 0.0, rng=None
) -> SimulatedPairs:
    r"""Pairs of systems by the protocol of Urbano, Lima & Hanjalic (2019).

    Each of the ``n_pairs`` trials picks a collection with probability proportional to its
    number of runs, two distinct runs (a, b) of it uniformly, the bivariate copula fitted to
    them, and simulates ``n_topics`` topics :math:`(u, v) \sim C_{ab}`; the pair's scores are
    :math:`F_a^{-1}(u)` and :math:`F'^{-1}(v)` with :math:`F' = F_a` (``delta = 0``: a null
    pair, equal expected scores) or :math:`F_a` moved to the mean :math:`\mu_a + \delta`
    (:func:`~simulators.margins.transform_mean`; trials where that leaves (0, 1) move it
    down instead, so the pair still differs by exactly :math:`|\delta|`).
    """
    collections = list(collections)
    n_pairs = check_int("n_pairs", n_pairs, min=1)
    n_topics = check_int("n_topics", n_topics, min=1)
    delta = check_real("delta", delta)
    gen = as_generator(rng)
    sizes = np.array([len(c.runs) for c in collections], dtype=float)
    if (sizes < 2).any():
        raise ValueError("every collection must keep at least 2 runs")
    which = gen.choice(len(collections), size=n_pairs, p=sizes / sizes.sum())
    scores = np.empty((2 * n_pairs, n_topics))
    effect = np.empty(2 * n_pairs)
    records = []
    moved: dict = {}
    for k in range(n_pairs):
        c = collections[which[k]]
        a, b = gen.choice(len(c.runs), size=2, replace=False)
        cop = c.copula(int(a), int(b))
        u = cop.simulate(n_topics, gen)
        if a > b:  # the copula was fitted with the runs in index order
            u = u[:, ::-1]
        base = c.margins[a]
        other = base
        if delta:
            key = (which[k], int(a))
            if key not in moved:
                target = base.mean + delta
                if not 0.0 < target < 1.0 or not _reachable(base, target):
                    target = base.mean - delta
                moved[key] = transform_mean(base, target)
            other = moved[key]
        scores[2 * k] = base.ppf(u[:, 0])
        scores[2 * k + 1] = other.ppf(u[:, 1])
        effect[2 * k], effect[2 * k + 1] = base.mean, other.mean
        records.append((c.name, c.runs[a], c.runs[b], base.family, cop.family, cop.tau))
    trials = pd.DataFrame(
        records, columns=["collection", "run_a", "run_b", "margin", "copula", "tau"]
    )
    pairs = np.arange(2 * n_pairs).reshape(n_pairs, 2)
    return SimulatedPairs(scores, effect, pairs, trials)


def _reachable(margin: Margin, target: float) -> bool:
    lo, hi = float(margin.ppf(0.0)), float(margin.ppf(1.0))
    return lo < target < hi


__all__ = [
    "COPULA_FAMILIES",
    "PAIR_FAMILIES",
    "TWO_PARAMETER_TAWNS",
    "VINE_FAMILIES",
    "COPULAS",
    "DESIGNS",
    "read_score_matrix",
    "same_collection",
    "keep_runs",
    "pseudo_observations",
    "GaussianCopula",
    "IndependenceCopula",
    "VineCopula",
    "PairCopula",
    "fit_copula",
    "ScoreWorld",
    "ScoreCollection",
    "SimulatedPairs",
    "simulate_pairs",
]
