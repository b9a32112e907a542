"""How often verdicts are right: claims judged on worlds where the answer is known.

A verdict can be trusted when the rule that gives it is calibrated: on collections where a
claim is false, it rarely says *holds*; where it is true, it rarely says *does not hold*; and it
gives firm verdicts as often as the evidence allows. :func:`calibrate_verdicts` measures this
the way a user meets verdicts, through a real study:

1. **A population of topics with fixed systems.** A simulated collection of ``population``
   topics and ``n_systems`` systems, written as TREC files, each topic under two ids with the
   same judgments and runs (``<t>a`` and ``<t>b``, twins).
2. **Collections drawn from it.** ``n_worlds`` TREC worlds, each a random set of
   ``n_topics`` of those ids (without replacement): what a test collection is, a sample of
   topics judged for a fixed set of systems. One study runs them all, with claims.
3. **Claims with a known answer.**

   * *Nulls by construction*: ``Twin(first, second, side)`` measures
     (:mod:`metaeval.study.calibration_measures`) make two measures whose every statistic has
     exactly the same expected value, so "TwinA is more discriminative than TwinB" is false
     and so is its reverse: any firm verdict is wrong. "TwinA behaves like TwinB within d" is
     true: *does not hold* is wrong.
   * *Known differences*: ``Blend`` measures move a statistic between two measures' values
     in steps, and real pairs (AP' against AP at 10% of the judgments) differ by a lot. Their
     true value, the expected statistic at this number of topics, is the mean of the
     estimates over all the collections (its Monte-Carlo error is reported).

4. **Counting.** For every claim: how often each verdict comes out, how often a firm verdict
   is wrong (with a 95% Wilson interval of that rate), how often the interval contains the
   true value (coverage), and the rate of correct firm verdicts against the size of the true
   difference and the number of topics (power).

The page ``docs/calibration.md`` shows a run of it (``benchmarks/bench_calibration.py``); the
test suite runs a small one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from metaeval.study.spec import toml_value

#: The plugin file of the Twin and Blend measures.
MEASURES_FILE = Path(__file__).with_name("calibration_measures.py")

TWIN_A = "Twin(first=AP,second='P@10',side=a)"
TWIN_B = "Twin(first=AP,second='P@10',side=b)"


@dataclass(frozen=True)
class Claim:
    """A claim of the calibration: its check, and its true value when known exactly (a null
    by construction); None when it is estimated from the collections."""

    id: str
    text: str
    check: dict
    truth: float | None = None


def _order(criterion: str, statistic: str, level: str = "full", **check) -> dict:
    extra = {"against": "full"} if statistic == "tau_b" else {}
    return {
        "kind": "order",
        "criterion": criterion,
        "statistic": statistic,
        "level": level,
        **extra,
        **check,
    }


def _value(criterion: str, statistic: str, measure: str, level: str = "full", **check) -> dict:
    extra = {"against": "full"} if statistic == "tau_b" else {}
    return {
        "kind": "threshold",
        "criterion": criterion,
        "statistic": statistic,
        "level": level,
        "measures": [measure],
        **extra,
        **check,
    }


def _drift(measure: str, direction: str) -> dict:
    return {
        "kind": "trend",
        "criterion": "robustness",
        "statistic": "mean_drift",
        "to": "10",
        "direction": direction,
        "tolerance": 0.02,
        "measures": [measure],
    }


def default_claims(shares: tuple[float, ...] = (0.5,)) -> list[Claim]:
    """The claims :func:`calibrate_verdicts` judges.

    Nulls by construction (Twin measures) on discriminative power with all and with 10% of the
    judgments, on rank correlation with the full ranking at 10% and on mean drift; two true
    equivalences; graded true differences (``Blend`` measures at ``shares``, and the real
    measures at share 1); and claims on single values (a measure's discriminative power, the
    share of it kept at 10%, its tau at 10%, its drift), whose intervals are for the value
    itself rather than a difference.
    """
    dp, rob = "discriminative_power", "robustness"
    twins = {"greater": ["TwinA"], "than": ["TwinB"]}
    alike = {"like": ["TwinA"], "than": ["TwinB"], "within": 0.05}
    kept = {"relative_to": "full", "above": 0.5}
    claims = [
        Claim(
            "null_dp", "TwinA is more discriminative than TwinB", _order(dp, "power", **twins), 0.0
        ),
        Claim(
            "null_dp10", "... with 10% of the judgments", _order(dp, "power", "10", **twins), 0.0
        ),
        Claim(
            "null_tau",
            "TwinA keeps its ranking better at 10%",
            _order(rob, "tau_b", "10", **twins),
            0.0,
        ),
        Claim(
            "null_drift",
            "TwinA drifts up more at 10%",
            _order(rob, "mean_drift", "10", **twins),
            0.0,
        ),
        Claim(
            "equiv_tau",
            "TwinA keeps its ranking like TwinB",
            _order(rob, "tau_b", "10", **alike),
            0.0,
        ),
        Claim("equiv_dp", "TwinA is as discriminative as TwinB", _order(dp, "power", **alike), 0.0),
    ]
    for q in (*shares, 1.0):
        label, pct = f"{q:.0%}", f"{q * 100:.0f}"
        claims += [
            Claim(
                f"dp_{pct}",
                f"AP on {label} of the topics (P@10 elsewhere) is more discriminative than P@10",
                _order(dp, "power", greater=[f"DP{pct}"], than=["P@10"]),
            ),
            Claim(
                f"tau_{pct}",
                f"AP' on {label} of the topics (AP elsewhere) keeps its ranking better than AP",
                _order(rob, "tau_b", "10", greater=[f"T{pct}"], than=["AP"]),
            ),
        ]
    claims += [
        Claim(
            "value_dp",
            "AP's discriminative power is above 0.5",
            _value(dp, "power", "AP", above=0.5),
        ),
        Claim("value_dp10", "AP keeps half of it at 10%", _value(dp, "power", "AP", "10", **kept)),
        Claim(
            "value_dp10_condensed",
            "AP' keeps half of it at 10%",
            _value(dp, "power", "AP'", "10", **kept),
        ),
        Claim(
            "value_tau", "AP's tau at 10% is above 0.8", _value(rob, "tau_b", "AP", "10", above=0.8)
        ),
        Claim(
            "value_tau_condensed",
            "AP''s tau at 10% is above 0.8",
            _value(rob, "tau_b", "AP'", "10", above=0.8),
        ),
        Claim("drift_falls", "AP falls by more than 0.02 at 10%", _drift("AP", "falls")),
        Claim("condensed_flat", "AP' stays within 0.02 at 10%", _drift("AP'", "flat")),
    ]
    return claims


def _measures(claims: list[Claim]) -> list[dict]:
    """The study's measures: the ones the claims name, with their labels."""
    named = {
        m
        for c in claims
        for k in ("greater", "than", "like", "measures")
        for m in c.check.get(k, [])
    }
    table = {"AP": "AP", "AP'": "AP'", "P@10": "P@10", "TwinA": TWIN_A, "TwinB": TWIN_B}
    for label in named:
        if label.startswith("DP"):
            q = float(label[2:]) / 100
            table[label] = "AP" if q == 1 else f"Blend(first=AP,second='P@10',share={q:g})"
        elif label.startswith("T") and label[1:].isdigit():
            q = float(label[1:]) / 100
            table[label] = "AP'" if q == 1 else f'Blend(first="AP\'",second=AP,share={q:g})'
    return [{"name": table[m], "label": m} for m in sorted(named | {"AP", "P@10"})]


# ------------------------------------------------------------------------------ population
def write_population(
    folder: str | Path,
    *,
    n_topics: int = 500,
    n_systems: int = 16,
    preset: str = "trec_like",
    seed: int = 0,
    params: dict | None = None,
) -> tuple[Path, Path]:
    """Write a simulated collection whose every topic has two ids (twins): ``qrels.txt`` and
    ``runs/*.txt`` in ``folder``. Returns (qrels path, runs folder)."""
    from metaeval.data import Qrels, Run, RunSet, write_qrels, write_runs
    from simulators import make_world

    folder = Path(folder)
    params = {"depth": 100, "pool_depth": 50, **(params or {})}
    world = make_world(preset, n_topics=n_topics, n_systems=n_systems, rng=seed, **params)

    def twins(frame: pd.DataFrame) -> pd.DataFrame:
        topic = frame["topic"].astype(str)
        return pd.concat(
            [frame.assign(topic=topic + "a"), frame.assign(topic=topic + "b")], ignore_index=True
        )

    qrels = Qrels.from_df(twins(world.qrels.to_df()))
    runs = RunSet([Run.from_df(twins(r.to_df()), r.name) for r in world.runs])
    folder.mkdir(parents=True, exist_ok=True)
    write_qrels(qrels, folder / "qrels.txt")
    write_runs(runs, folder / "runs")
    return folder / "qrels.txt", folder / "runs"


# ------------------------------------------------------------------------------ the study
def calibration_study(
    qrels: Path,
    runs: Path,
    claims: list[Claim],
    *,
    n_topics: int,
    n_worlds: int,
    seed: int = 0,
    topic_resamples: int = 200,
    confidence: float = 0.95,
    B: int = 1000,
    trials: int = 5,
) -> str:
    """The study file (TOML) of one calibration run: ``n_worlds`` collections of
    ``n_topics`` topics drawn from the population, the claims, and what they need."""
    from metaeval.data import read_qrels

    ids = sorted(map(str, read_qrels(qrels).topics))
    rng = np.random.default_rng([seed, n_topics])
    lines = [
        "schema = 1",
        "[study]",
        f'name = "calibration-{n_topics}"',
        f"seed = {seed}",
        f"confidence = {confidence}",
        f"topic_resamples = {topic_resamples}",
        f"plugins = {toml_value([str(MEASURES_FILE)])}",
        "",
    ]
    for w in range(n_worlds):
        topics = sorted(rng.choice(ids, size=n_topics, replace=False).tolist())
        lines += [
            "[[worlds]]",
            f'id = "w{w:03d}"',
            'kind = "trec"',
            f"qrels = {toml_value(str(qrels))}",
            f"runs = {toml_value(str(runs) + '/*')}",
            f"topics = {toml_value(topics)}",
            "rel = 1",  # the simulated population's convention: every grade >= 1 is relevant
            "",
        ]
    lines += [
        "[[degraders]]",
        'id = "bv"',
        'method = "stratified"',
        "levels = [10]",
        f"trials = {trials}",
        "",
        "[measures]",
        f"names = {toml_value(_measures(claims))}",
        "",
    ]
    criteria = {c.check["criterion"] for c in claims}
    if "discriminative_power" in criteria:
        # at 10% of the judgments too when a claim is about it
        at = {
            str(c.check.get("level", "full"))
            for c in claims
            if c.check["criterion"] == "discriminative_power"
        }
        lines += [
            "[[criteria]]",
            'kind = "discriminative_power"',
            f"B = {B}",
            f"levels = {toml_value(sorted(at | {'full'}))}",
            "",
        ]
    if "robustness" in criteria:
        lines += [
            "[[criteria]]",
            'kind = "robustness"',
            'statistics = ["tau_b"]',
            'against = ["full"]',
            'levels = ["10"]',
            "",
        ]
    for c in claims:
        lines += [
            "[[claims]]",
            f'id = "{c.id}"',
            f"text = {toml_value(c.text)}",
            f"check = {toml_value(c.check)}",
            "",
        ]
    return "\n".join(lines)


# ------------------------------------------------------------------------------ counting
def _wilson_upper(k: int, n: int, z: float = 1.959964) -> float:
    """Upper bound of the 95% Wilson interval of a rate k / n."""
    if n == 0:
        return np.nan
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return float((centre + half) / (1 + z * z / n))


def _wrong(verdict: str, truth: float, kind: str, tol: float) -> bool:
    """Is a verdict wrong, given the true value of the claimed quantity?"""
    from metaeval.report.claims import FAILS, HOLDS

    if kind == "above":  # the claim is "theta > tol"
        true = truth > tol
        false = truth < tol
        if truth == tol:  # a null: neither side is claimed truly
            return verdict in (HOLDS, FAILS)
        return (verdict == HOLDS and false) or (verdict == FAILS and true)
    inside = abs(truth) <= tol  # "within +-tol"
    return (verdict == HOLDS and not inside) or (verdict == FAILS and inside)


@dataclass(frozen=True)
class CalibrationResult:
    """What :func:`calibrate_verdicts` found.

    Attributes
    ----------
    verdicts : DataFrame
        One row per collection and claim: ``n_topics, claim, world, verdict, estimate, low,
        high, truth, wrong, covered``.
    summary : DataFrame
        One row per number of topics and claim: ``truth`` (exact, or the mean of the
        estimates), ``truth_se`` (its Monte-Carlo error; 0 when exact), ``worlds``, ``holds``,
        ``does_not_hold``, ``inconclusive`` (rates), ``wrong`` (rate of wrong firm
        verdicts), ``wrong_upper`` (the upper bound of its 95% Wilson interval), ``power``
        (rate of correct firm verdicts) and ``coverage`` (rate of intervals containing the
        truth).
    """

    verdicts: pd.DataFrame
    summary: pd.DataFrame


def calibrate_verdicts(
    out: str | Path,
    *,
    n_topics: tuple[int, ...] = (25, 50, 100),
    n_worlds: int | tuple[int, ...] = 200,
    population: int = 500,
    n_systems: int = 16,
    claims: list[Claim] | None = None,
    seed: int = 0,
    topic_resamples: int = 200,
    confidence: float = 0.95,
    B: int = 1000,
    trials: int = 5,
    jobs: int = 1,
    quiet: bool = True,
    methods: tuple[str, ...] = ("expanded",),
) -> CalibrationResult:
    """Judge claims with a known answer on ``n_worlds`` collections per number of topics and
    count how often each verdict is right (see the module docstring).

    Parameters
    ----------
    out : str or Path
        A folder for the population's files and the studies' results (resumable).
    n_topics : tuple of int
        Topics per collection; one study each.
    n_worlds : int or tuple of int
        Collections per study (one number for all, or one per number of topics).
    population, n_systems : int
        Base topics (each has two ids) and systems of the simulated population.
    claims : list of Claim, optional
        Default :func:`default_claims`.
    seed, topic_resamples, confidence, B, trials
        The studies' seed, topic resamples, confidence, bootstrap test size, degrader trials.
    jobs : int
        Worker processes.
    methods : tuple of str
        How intervals are read off the bootstrap draws
        (:func:`metaeval.report.inference.interval`): each is counted apart, on the same
        studies.

    Returns
    -------
    CalibrationResult
    """
    from metaeval.report.claims import judge_claims
    from metaeval.study import load_results, load_spec, run_study

    out = Path(out)
    claims = default_claims() if claims is None else claims
    qrels, runs = out / "population" / "qrels.txt", out / "population" / "runs"
    if not qrels.is_file():
        qrels, runs = write_population(
            out / "population", n_topics=population, n_systems=n_systems, seed=seed
        )
    rows = []
    worlds = (n_worlds,) * len(n_topics) if isinstance(n_worlds, int) else tuple(n_worlds)
    if len(worlds) != len(n_topics):
        raise ValueError(f"n_worlds gives {len(worlds)} numbers for {len(n_topics)} topic counts")
    for n, w in zip(n_topics, worlds):
        folder = out / f"topics-{n}"
        text = calibration_study(
            qrels,
            runs,
            claims,
            n_topics=n,
            n_worlds=w,
            seed=seed,
            topic_resamples=topic_resamples,
            confidence=confidence,
            B=B,
            trials=trials,
        )
        spec = load_spec(out / f"calibration-{n}.toml", text=text)
        run_study(spec, folder, jobs=jobs, quiet=quiet)
        results = load_results(folder)
        resamples = load_results(folder, "resamples")
        checks = [{"id": c.id, "text": c.text, "check": c.check_dict()} for c in spec.claims]
        for method in methods:
            _, parts = judge_claims(
                checks, results, resamples, confidence=confidence, seed=seed, method=method
            )
            rows.append(parts.assign(n_topics=n, method=method))
    parts = pd.concat(rows, ignore_index=True)
    return _count(parts, claims)


def _count(parts: pd.DataFrame, claims: list[Claim]) -> CalibrationResult:
    known = {c.id: c.truth for c in claims}
    out, summary = [], []
    for (method, n, cid), d in parts.groupby(["method", "n_topics", "claim"], sort=False):
        est = d["estimate"].to_numpy(dtype=float)
        exact = known.get(cid)
        truth = exact if exact is not None else float(np.nanmean(est))
        se = (
            0.0
            if exact is not None
            else float(np.nanstd(est, ddof=1) / np.sqrt(np.isfinite(est).sum()))
        )
        kind, tol = d["side"].iloc[0], float(d["tolerance"].iloc[0])
        wrong = np.array([_wrong(v, truth, kind, tol) for v in d["verdict"]])
        covered = (d["low"] <= truth) & (truth <= d["high"])
        out.append(d.assign(truth=truth, wrong=wrong, covered=covered.to_numpy()))
        firm = d["verdict"] != "inconclusive"
        k, m = int(wrong.sum()), len(d)
        summary.append(
            {
                "method": method,
                "n_topics": n,
                "claim": cid,
                "truth": truth,
                "truth_se": se,
                "worlds": m,
                "holds": float((d["verdict"] == "holds").mean()),
                "does_not_hold": float((d["verdict"] == "does not hold").mean()),
                "inconclusive": float((d["verdict"] == "inconclusive").mean()),
                "wrong": k / m,
                "wrong_upper": _wilson_upper(k, m),
                "power": float((firm & ~wrong).mean()),
                "coverage": float(covered.mean()),
            }
        )
    columns = ["method", "n_topics", "claim", "world", "verdict", "estimate", "low", "high"]
    verdicts = pd.concat(out, ignore_index=True)[[*columns, "truth", "wrong", "covered"]]
    return CalibrationResult(verdicts=verdicts, summary=pd.DataFrame(summary))


__all__ = [
    "calibrate_verdicts",
    "calibration_study",
    "write_population",
    "default_claims",
    "Claim",
    "CalibrationResult",
]
