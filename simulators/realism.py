"""Does a world calibrated to a collection give the meta-evaluation of that collection?

:func:`meta_evaluation` computes, for one collection, the two results of the Sakai & Kando
(2008) study that most depend on how the collection is made: the discriminative power of every
measure under full judgments (Sakai's paired bootstrap) and the Kendall tau-b between each
measure's ranking of the systems with the full judgments and with a Buckley-Voorhees stratified
sample of them (10% by default), averaged over trials.

:func:`check_calibration` simulates worlds from fitted parameters at the collection's size and
compares them with the collection on those results and on the statistics of
:func:`~simulators.calibrate.collection_stats`, with the tolerances a study on the world must
meet to stand in for the collection:

* discriminative power of every measure within 0.05 (5 points) of the collection's;
* tau at the reduced rate within 0.05;
* the order of the measures by that tau: Spearman correlation at least 0.8;
* every collection statistic inside the range of the simulated replicates, or within 15%.

:func:`fit_meta` is the third stage of :func:`~simulators.calibrate.calibrate`: it moves the
parameters that set how well systems are told apart (system and interaction spread, how
unequal relevant documents are) to minimise the distance of the simulated
meta-evaluation to the collection's, by Nelder-Mead with common random numbers.

References
----------
T. Sakai and N. Kando (2008). On information retrieval metrics designed for evaluation with
incomplete relevance assessments. Information Retrieval 11(5), 447-470.
C. Buckley and E. M. Voorhees (2004). Retrieval evaluation with incomplete information. SIGIR.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import optimize, stats

from metaeval._validation import as_generator, check_int
from metaeval.data import Qrels, RunSet
from metaeval.engine import EvalTensor
from metaeval.evaluation import score_matrices
from simulators.degraders import StratifiedSampling
from simulators.worlds import WorldParams, make_world

__all__ = [
    "SAKAI_KANDO_MEASURES",
    "meta_evaluation",
    "CalibrationCheck",
    "check_calibration",
    "fit_meta",
]

#: The ten measures of Sakai & Kando (2008), label -> measure (gains 1 and 3 for relevant and
#: highly relevant, as the paper).
SAKAI_KANDO_MEASURES = {
    "AP": "AP",
    "Q": "Q(gains={1:1,2:3})",
    "nDCG": "nDCG(discount=jk,base=2,gains={1:1,2:3})@1000",
    "RBP.5": "RBP(p=0.5,gains={1:1,2:3})",
    "RBP.8": "RBP(p=0.8,gains={1:1,2:3})",
    "RBP.95": "RBP(p=0.95,gains={1:1,2:3})",
    "bpref_R": "Bpref_R",
    "AP'": "AP'",
    "Q'": "Q'(gains={1:1,2:3})",
    "nDCG'": "nDCG'(discount=jk,base=2,gains={1:1,2:3})@1000",
}

DP_TOLERANCE = 0.05
TAU_TOLERANCE = 0.05
MIN_SPEARMAN = 0.8
STAT_TOLERANCE = 0.15


def meta_evaluation(
    qrels: Qrels,
    runs: RunSet,
    *,
    measures: dict[str, str] | None = None,
    rate: int = 10,
    trials: int = 10,
    B: int = 1000,
    rng=None,
) -> pd.DataFrame:
    """Discriminative power and robustness to a stratified reduction, per measure.

    Parameters
    ----------
    qrels, runs : Qrels, RunSet
        The collection.
    measures : dict label -> measure name, optional
        Default :data:`SAKAI_KANDO_MEASURES`.
    rate : int
        The reduced judgments: ``rate`` percent of each topic's relevant and non-relevant
        documents (at least 1 and 10), Buckley & Voorhees' stratified sampling.
    trials : int
        Independent reductions; tau is their mean.
    B : int
        Bootstrap samples of the discriminative power (Sakai's paired bootstrap, alpha 0.05).
    rng : None, int, SeedSequence or Generator

    Returns
    -------
    pandas.DataFrame
        Indexed by measure label: ``power`` (share of system pairs significantly different
        with full judgments) and ``tau`` (mean Kendall tau-b of the reduced ranking with the
        full one), over ``runs`` x topics of ``qrels``.
    """
    # imported here: metaeval.meta imports scipy.stats and the whole meta-evaluation stack
    from metaeval.meta.discrimination import discriminative_power
    from metaeval.meta.rankcorr import kendall_tau

    measures = dict(SAKAI_KANDO_MEASURES if measures is None else measures)
    check_int("trials", trials, min=1)
    gen = as_generator(rng)
    tensor = EvalTensor.build(runs, qrels, warn_extra_topics=False)
    names = list(measures.values())
    full = score_matrices(tensor, names)
    boot_seed, sample_seed = gen.integers(0, 2**32, size=2)
    power = [discriminative_power(full[m], B=B, rng=int(boot_seed)).power for m in names]
    sets = StratifiedSampling(rates=(rate,)).generate(qrels, trials=trials, rng=int(sample_seed))
    taus = np.zeros((trials, len(names)))
    # Means rounded to 12 digits: systems tied in a measure (P@10 often) stay tied whatever
    # order float summation took.
    full_means = {m: np.round(full[m].mean(axis=1), 12) for m in names}
    for k, judgments in enumerate(sets):
        reduced = score_matrices(judgments.apply(tensor), names)
        for j, m in enumerate(names):
            taus[k, j] = kendall_tau(full_means[m], np.round(reduced[m].mean(axis=1), 12))
    return pd.DataFrame(
        {"power": power, "tau": np.nanmean(taus, axis=0)},
        index=pd.Index(list(measures), name="measure"),
    )


@dataclass(frozen=True, eq=False)
class CalibrationCheck:
    """The collection against worlds drawn from fitted parameters (:func:`check_calibration`).

    Attributes
    ----------
    measures : pandas.DataFrame
        Per measure: the collection's ``power`` and ``tau``, the worlds' mean (``sim_power``,
        ``sim_tau``), their 2.5-97.5 percentile range over replicates, the differences and
        whether each is within its tolerance.
    statistics : pandas.DataFrame
        Per collection statistic: the collection's value, the worlds' mean and range, the
        relative difference and whether the value is inside the range or within 15%.
    spearman : float
        Spearman correlation between the collection's and the worlds' order of the measures by
        tau (the worlds' mean tau).
    replicates : int
        Worlds drawn.
    """

    measures: pd.DataFrame
    statistics: pd.DataFrame
    spearman: float
    replicates: int
    params: WorldParams = field(repr=False)

    @property
    def passed(self) -> dict[str, bool]:
        """Each requirement: met or not."""
        return {
            "power within 0.05": bool(self.measures["power_ok"].all()),
            "tau within 0.05": bool(self.measures["tau_ok"].all()),
            "order of measures by tau (Spearman >= 0.8)": bool(self.spearman >= MIN_SPEARMAN),
            "collection statistics": bool(self.statistics["ok"].all()),
        }

    def to_markdown(self, title: str = "Calibration check") -> str:
        """The comparison as a Markdown page: requirements, measures, statistics."""
        m = self.measures
        lines = [f"# {title}", ""]
        lines += [
            f"The collection against {self.replicates} simulated worlds of its size drawn from "
            "the fitted parameters; a world's value is the mean over the worlds, with the "
            "2.5-97.5 percentile range over them.",
            "",
            "| requirement | met |",
            "|---|---|",
        ]
        lines += [f"| {k} | {'yes' if v else 'no'} |" for k, v in self.passed.items()]
        lines += [
            "",
            f"Spearman correlation of the order of the measures by tau: {self.spearman:.3f}.",
            "",
        ]
        lines += [
            "| measure | power | worlds | difference | tau | worlds | difference |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, r in m.iterrows():
            lines.append(
                f"| {name} | {r['power']:.3f} | {r['sim_power']:.3f} "
                f"[{r['sim_power_low']:.3f}, {r['sim_power_high']:.3f}] | "
                f"{r['power_diff']:+.3f}{'' if r['power_ok'] else ' (off)'} | {r['tau']:.3f} | "
                f"{r['sim_tau']:.3f} [{r['sim_tau_low']:.3f}, {r['sim_tau_high']:.3f}] | "
                f"{r['tau_diff']:+.3f}{'' if r['tau_ok'] else ' (off)'} |"
            )
        lines += ["", "| statistic | collection | worlds | relative difference | met |"]
        lines += ["|---|---|---|---|---|"]
        for name, r in self.statistics.iterrows():
            lines.append(
                f"| {name} | {r['real']:.4g} | {r['sim']:.4g} [{r['sim_low']:.4g}, "
                f"{r['sim_high']:.4g}] | {r['relative_diff']:+.1%} | {'yes' if r['ok'] else 'no'} |"
            )
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        met = sum(self.passed.values())
        return (
            f"CalibrationCheck({met} of {len(self.passed)} requirements met, "
            f"{self.replicates} worlds)"
        )


def _range(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.percentile(values, 2.5, axis=0), np.percentile(values, 97.5, axis=0)


def check_calibration(
    qrels: Qrels,
    runs: RunSet,
    params: WorldParams,
    *,
    replicates: int = 5,
    measures: dict[str, str] | None = None,
    rate: int = 10,
    trials: int = 10,
    B: int = 1000,
    rel: int = 1,
    rng=None,
    jobs: int = 1,
) -> CalibrationCheck:
    """Compare a collection with ``replicates`` worlds of its size drawn from ``params``.

    The same :func:`meta_evaluation` (and :func:`~simulators.calibrate.collection_stats`, at
    relevance level ``rel``) is computed on the collection and on each world's official pooled
    qrels and runs. The worlds' tau is the mean over ``replicates`` x ``trials`` reductions;
    the collection's averages as many (its tau over 10 reductions of 43 topics moves by several
    hundredths from one set of reductions to another). ``rng`` (None, an int, a SeedSequence or
    a Generator) draws the worlds and the resamples; the worlds are made and measured on
    ``jobs`` worker processes, with the same results for any number.
    """
    from simulators.calibrate import collection_stats

    check_int("replicates", replicates, min=1)
    check_int("jobs", jobs, min=1)
    gen = as_generator(rng)
    seeds = gen.integers(0, 2**32, size=(replicates + 1, 2))
    kw = dict(measures=measures, rate=rate, trials=trials, B=B)
    real = meta_evaluation(
        qrels, runs, rng=int(seeds[0, 0]), **{**kw, "trials": trials * replicates}
    )
    real_stats = collection_stats(qrels, runs, rel=rel, rng=int(seeds[0, 1])).summary()
    S, T = len(runs), len(qrels.topics)
    drawn = _map_worlds(
        _world_check,
        [(params, T, S, int(a), int(b), kw, rel) for a, b in seeds[1:]],
        jobs,
    )
    sims, sim_stats = [d[0] for d in drawn], [d[1] for d in drawn]
    power = np.array([s["power"].to_numpy() for s in sims])
    tau = np.array([s["tau"].to_numpy() for s in sims])
    out = real.copy()
    for name, values in (("power", power), ("tau", tau)):
        lo, hi = _range(values)
        out[f"sim_{name}"] = values.mean(axis=0)
        out[f"sim_{name}_low"], out[f"sim_{name}_high"] = lo, hi
        out[f"{name}_diff"] = out[f"sim_{name}"] - out[name]
    out["power_ok"] = out["power_diff"].abs() <= DP_TOLERANCE
    out["tau_ok"] = out["tau_diff"].abs() <= TAU_TOLERANCE
    spearman = float(stats.spearmanr(out["tau"], out["sim_tau"]).statistic)
    rows = []
    for key, value in real_stats.items():
        if not np.isfinite(value):
            continue  # not measurable on this collection (no runs holding the same documents)
        values = np.array([s[key] for s in sim_stats], dtype=float)
        lo, hi = _range(values)
        mean = float(values.mean())
        if value:
            rel_diff = (mean - value) / abs(value)
        else:
            rel_diff = 0.0 if mean == value else math.inf
        inside = lo <= value <= hi
        rows.append(
            {
                "statistic": key,
                "real": value,
                "sim": mean,
                "sim_low": float(lo),
                "sim_high": float(hi),
                "relative_diff": rel_diff,
                "ok": bool(inside or abs(rel_diff) <= STAT_TOLERANCE),
            }
        )
    return CalibrationCheck(
        measures=out,
        statistics=pd.DataFrame(rows).set_index("statistic"),
        spearman=spearman,
        replicates=replicates,
        params=params,
    )


def _map_worlds(function, arguments: list[tuple], jobs: int) -> list:
    """``function(*a)`` for every ``a``, in order: in this process (``jobs`` = 1) or on
    ``jobs`` loky worker processes. Each world has its own seeds among the arguments, so the
    results are the same whatever ``jobs`` is."""
    if jobs == 1 or len(arguments) == 1:
        return [function(*a) for a in arguments]
    from joblib import Parallel, delayed

    with Parallel(n_jobs=min(jobs, len(arguments)), backend="loky") as parallel:
        return parallel(delayed(function)(*a) for a in arguments)


def _world_check(params, T, S, world_seed, seed, kw, rel):
    """A world's meta-evaluation and collection statistics (one replicate of the check)."""
    from simulators.calibrate import collection_stats

    world = make_world(params, n_topics=T, n_systems=S, rng=world_seed)
    meta = meta_evaluation(world.qrels, world.runs, rng=seed, **kw)
    return meta, collection_stats(world, rel=rel, rng=seed).summary()


def _world_moments(params, T, S, seed, kw):
    """A world's meta-evaluation (as an array) and the second stage's main moments."""
    from simulators.calibrate import world_targets

    world = make_world(params, n_topics=T, n_systems=S, rng=seed)
    meta = meta_evaluation(world.qrels, world.runs, rng=seed, **kw).to_numpy()
    got = world_targets(world, lists=False)  # the third stage does not read it
    return meta, [got[k] for k in _MOMENTS]


# ------------------------------------------------------------------------------- stage 3
#: The second stage's targets that the third keeps.
_MOMENTS = (
    "mean",
    "system_sd",
    "topic_sd",
    "residual_sd",
    "map_sd",
    "rel",
    "judged",
    "distinct10",
    "top_agreement",
)

#: What stage 3 moves: how far systems are apart, how much they differ by topic, how unequal
#: relevant documents are and how much of that the systems share (spreads on log scales, the
#: share on the logit scale).
FREE = ("system_sd", "interaction_sd", "doc_strength_sd", "doc_strength_share")
_BOUNDS = {
    "system_sd": (1e-3, 20.0),
    "interaction_sd": (1e-3, 20.0),
    "doc_strength_sd": (0.05, 3.0),
    "doc_strength_share": (0.02, 0.98),
}
_SHARES = {"doc_strength_share"}


def _to_vector(p: WorldParams) -> np.ndarray:
    out = []
    for k in FREE:
        v = min(max(getattr(p, k), _BOUNDS[k][0]), _BOUNDS[k][1])
        out.append(math.log(v / (1 - v)) if k in _SHARES else math.log(v))
    return np.array(out)


def _from_vector(p: WorldParams, x: np.ndarray) -> WorldParams:
    values = {}
    for k, v in zip(FREE, x):
        value = 1 / (1 + math.exp(-v)) if k in _SHARES else math.exp(v)
        values[k] = float(np.clip(value, *_BOUNDS[k]))
    return dataclasses.replace(p, **values)


def fit_meta(
    qrels: Qrels,
    runs: RunSet,
    params: WorldParams,
    *,
    evaluations: int = 40,
    replicates: int = 4,
    trials: int = 10,
    B: int = 500,
    measures: dict[str, str] | None = None,
    rate: int = 10,
    reference_trials: int = 30,
    rng=None,
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
) -> WorldParams:
    """Move ``system_sd``, ``interaction_sd``, ``doc_strength_sd`` and ``doc_strength_share``
    so that worlds drawn from the parameters give the collection's meta-evaluation.

    The loss is the sum over measures of ((power_sim - power) / 0.05)^2 + ((tau_sim - tau) /
    0.05)^2, plus, so that the fit keeps the collection's statistics, the sum over the second
    stage's main targets (mean, system, topic and residual sd of nDCG, sd of MAP over the
    systems, judged and relevant documents per topic, distinct documents in the top 10,
    agreement on the relevant documents ranked high) of ((sim - real) / (0.15 |real|))^2.
    The simulated values are the mean over ``replicates`` worlds drawn with the same seeds at
    every evaluation (common random numbers, so the loss follows the parameters and not the
    noise; four rather than two, as the fit matches the worlds it draws: over three seeds of
    DL 2019, two worlds met power for 8, 4 and 7 measures and tau for 8, 6 and 9, four met
    power for 6, 9 and 9 and tau for 9, 8 and 8). A world's tau is the mean over ``trials``
    reductions of its judgments: ten rather than three, as three left a third of one world's
    variance in AP's tau to the reductions (over the same three seeds, with the second stage
    averaging four worlds, three reductions met power for 7, 5 and 9 measures and tau for 9,
    3 and 8; ten met power for 8, 8 and 10 and tau for 10, 7 and 10, in about the same
    time: making a world costs three times a meta-evaluation with ten).
    The collection's tau, the target, is the mean over ``reference_trials`` reductions, so
    that the fit does not chase the noise of a few. Minimised by Nelder-Mead
    from ``params`` (the second stage's fit), spreads on log scales and the share on the logit
    scale, the first simplex one unit away on each axis, at most ``evaluations`` evaluations.
    An evaluation's worlds are made and measured on ``jobs`` worker processes (the same fit
    for any number). ``progress``, if given, is called with a line of text after each
    evaluation.
    """
    from simulators.calibrate import calibration_targets

    check_int("evaluations", evaluations, min=1)
    check_int("jobs", jobs, min=1)
    check_int("reference_trials", reference_trials, min=1)
    gen = as_generator(rng)
    seeds = gen.integers(0, 2**32, size=(replicates + 1,))
    kw = dict(measures=measures, rate=rate, trials=trials, B=B)
    real = meta_evaluation(
        qrels, runs, rng=int(seeds[0]), **{**kw, "trials": reference_trials}
    ).to_numpy()
    moments = calibration_targets(qrels, runs)
    real_moments = np.array([moments[k] for k in _MOMENTS])
    S, T = len(runs), len(qrels.topics)
    scale = np.array([DP_TOLERANCE, TAU_TOLERANCE])

    calls: list[float] = []

    def loss(x: np.ndarray) -> float:
        p = _from_vector(params, x)
        drawn = _map_worlds(_world_moments, [(p, T, S, int(s), kw) for s in seeds[1:]], jobs)
        sims, moms = [d[0] for d in drawn], [d[1] for d in drawn]
        meta = (np.nanmean(sims, axis=0) - real) / scale
        stats_ = (np.mean(moms, axis=0) - real_moments) / (STAT_TOLERANCE * np.abs(real_moments))
        value = float(np.nansum(meta**2) + np.nansum(stats_**2))
        calls.append(value)
        if progress:
            progress(
                f"meta-evaluation, evaluation {len(calls)} of at most {evaluations}: loss "
                f"{value:.2f} (lowest {min(calls):.2f})"
            )
        return value

    x0 = _to_vector(params)
    simplex = np.vstack([x0] + [x0 + np.eye(len(x0))[i] for i in range(len(x0))])
    res = optimize.minimize(
        loss,
        x0,
        method="Nelder-Mead",
        options={"maxfev": evaluations, "initial_simplex": simplex, "xatol": 0.02, "fatol": 0.5},
    )
    return _from_vector(params, res.x)
