"""Analytic checks of published claims: exact properties of measures on constructed lists.

Some claims are about what a measure *is*, not about data: "RBP of an ideal list is 1 - p^R",
"with one relevant document AP equals the reciprocal rank", "as n grows, xGAP tends to
1 - g2^2". A study states them as ``check = { kind = "analytic", test = ..., ... }`` and they
are computed when the study runs (in the driver: they take milliseconds), saved under
``results/claims/``, and read by the report like every other result.

Every test returns rows ``check, value, expected, passed``. The tests:

``value``
    A measure on one constructed ranking: ``measure``, ``ranking`` (the grades at ranks 1, 2,
    ...) or ``ideal = R`` (R relevant documents on top), optional ``judged`` (documents judged
    per grade, counting the ranked ones; default: just the ranked ones), ``expect``,
    ``tolerance``.
``equal``
    Measures that must agree on every list: ``measures`` (two or more), ``lists`` random graded
    rankings (``max_grade``, ``seed``), under an optional ``condition``: ``"one_relevant"``
    (exactly one relevant document) or ``"relevant_within_R"`` (binary, every relevant document
    ranked within the first R).
``limit``
    ``n`` documents of grade ``low`` followed by one of grade ``high``: the measure for every n
    of ``n`` (increasing) must approach ``expect`` (the last within ``tolerance``, the distance
    shrinking).
``pivot_probability``
    The probability that GAP's or xGAP's user model picks a document of ``grade`` as the pivot
    (step 1 of the random experiment), for ``counts`` documents per grade.
``swap_lowers``
    On random lists: moving a document below a lower-graded one never raises the measure, and
    the list in non-increasing grade order scores highest.
``top_heaviness``
    One relevant document at ranks 1..20 (of ``R`` relevant): ``equal_at = [1, 2]`` (the
    measure cannot tell those ranks apart), ``flat = true`` (the same at every rank), or
    ``negligible_after = k`` (below ``ratio`` of the rank-1 value beyond rank k). The curve
    is saved too (rows of ``kind = "curve"``), for the report's figure.
``aggregate``
    Robertson (2006)'s example: 50 skewed per-topic values with three 0 and three 0.01.
    ``effect = "shift_all"`` (adding 0.05 raises MAP by exactly 0.05 and GMAP by more),
    ``"shift_low_vs_high"`` (adding 0.05 to the lowest half raises GMAP more than adding it to
    the highest half; MAP rises the same), ``"eps"`` (GMAP grows with its epsilon).
``first_relevant``
    Mean rank of the first relevant document against mean reciprocal rank, on two systems
    (``ranks_a``, ``ranks_b``: the rank of the first relevant document per topic): the mean
    rank is dominated by the worst-ranked topics, the reciprocal rank by the top.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from metaeval._registry import Registry

#: The analytic tests a claim may name, by name (``test_x`` is ``x``).
TESTS: Registry[Callable] = Registry("analytic test")


def analytic_test(fn: Callable) -> Callable:
    """Decorator: make ``fn`` an analytic test claims can name (without its ``test_``)."""
    return TESTS.add(fn.__name__.removeprefix("test_"), fn)


def _row(check: str, value: float, expected, passed: bool) -> dict:
    return {
        "check": check,
        "value": float(value),
        "expected": str(expected),
        "passed": bool(passed),
    }


def _tensor(rankings: list[list[int]], judged: list[dict[int, int]] | None = None):
    """One run, one topic per ranking: document k of topic t has the grade ranking[t][k];
    extra judged documents (not retrieved) make up ``judged`` counts per grade."""
    from metaeval import EvalTensor, Qrels, RunSet

    qrels, run = {}, {}
    for t, grades in enumerate(rankings):
        topic = f"t{t}"
        docs = {f"d{t}_{k}": int(g) for k, g in enumerate(grades)}
        extra = {}
        for grade, count in (judged[t] if judged else {}).items():
            have = sum(1 for g in grades if g == int(grade))
            extra.update({f"x{t}_{grade}_{i}": int(grade) for i in range(int(count) - have)})
        qrels[topic] = docs | extra
        run[topic] = {d: float(len(grades) - k) for k, d in enumerate(docs)}
    return EvalTensor.build(RunSet.from_dict({"r": run}), Qrels.from_dict(qrels))


def _values(measure: str, rankings, judged=None) -> np.ndarray:
    from metaeval.measures import parse_measure

    return parse_measure(measure).compute(_tensor(rankings, judged))[0]


@analytic_test
def test_value(
    measure: str,
    expect: float,
    ranking: list | None = None,
    ideal: int | None = None,
    judged: dict | None = None,
    tolerance: float = 5e-5,
) -> list[dict]:
    if (ranking is None) == (ideal is None):
        raise ValueError(
            "give ranking (grades by rank) or ideal (a number of relevant documents on top)"
        )
    ranking = list(ranking) if ranking is not None else [1] * int(ideal)
    judged = {int(k): v for k, v in (judged or {}).items()}
    v = _values(measure, [ranking], [judged] if judged else None)[0]
    shown = f"an ideal list of {ideal}" if ideal is not None else f"{ranking}"
    return [_row(f"{measure} on {shown}", v, expect, abs(v - expect) <= tolerance)]


def _random_lists(n: int, max_grade: int, seed: int, condition: str | None):
    rng = np.random.default_rng(seed)
    rankings, judged = [], []
    for _ in range(n):
        length = int(rng.integers(3, 30))
        grades = rng.integers(0, max_grade + 1, length)
        if condition == "one_relevant":
            grades = np.zeros(length, dtype=int)
            grades[rng.integers(length)] = 1
        elif condition == "relevant_within_R":
            R = int(rng.integers(1, length))
            grades = np.zeros(length, dtype=int)
            grades[rng.choice(R, size=int(rng.integers(1, R + 1)), replace=False)] = 1
            # R counts every relevant document: put the missing ones among the unretrieved
            judged.append({1: R, 0: int((grades == 0).sum()) + 5})
            rankings.append(list(grades))
            continue
        rankings.append(list(grades))
        judged.append(
            {g: int((grades == g).sum()) + int(rng.integers(0, 3)) for g in range(max_grade + 1)}
            if condition != "one_relevant"
            else {1: 1, 0: length + 3}
        )
    return rankings, judged


@analytic_test
def test_equal(
    measures: list,
    lists: int = 200,
    max_grade: int = 1,
    seed: int = 0,
    condition: str | None = None,
    tolerance: float = 1e-12,
) -> list[dict]:
    rankings, judged = _random_lists(lists, max_grade, seed, condition)
    values = [_values(m, rankings, judged) for m in measures]
    rows = []
    for m, v in zip(measures[1:], values[1:]):
        gap = float(np.max(np.abs(v - values[0])))
        rows.append(_row(f"max |{m} - {measures[0]}| over {lists} lists", gap, 0, gap <= tolerance))
    return rows


@analytic_test
def test_limit(
    measure: str, n: list, expect: float, low: int = 1, high: int = 2, tolerance: float = 0.01
) -> list[dict]:
    values = [_values(measure, [[low] * int(k) + [high]])[0] for k in n]
    distance = np.abs(np.asarray(values) - expect)
    shrinking = bool(np.all(np.diff(distance) <= 1e-12))
    rows = [_row(f"{measure}, n = {k}", v, expect, True) for k, v in zip(n, values)]
    rows.append(
        _row(
            f"{measure} at n = {n[-1]} within {tolerance} of the limit, distance shrinking",
            values[-1],
            expect,
            distance[-1] <= tolerance and shrinking,
        )
    )
    return rows


@analytic_test
def test_pivot_probability(
    measure: str, counts: dict, grade: int, expect: float, tolerance: float = 1e-9
) -> list[dict]:
    """GAP picks a pivot of grade i with probability G(i) / sum_j R_j G(j); xGAP with
    A(i) = sum_{j <= i} g_j / R^(j), R^(j) the documents of grade >= j."""
    from metaeval.measures import parse_measure

    m = parse_measure(measure)
    R = {int(k): int(v) for k, v in counts.items()}
    top = max(R)
    g = np.asarray(m.thresholds(top + 1)[1:] if hasattr(m, "thresholds") else m.g, float)
    G = np.cumsum(g)
    if m.name == "GAP":
        p = G[grade - 1] / sum(R.get(j, 0) * G[j - 1] for j in range(1, top + 1))
    elif m.name == "xGAP":
        at_least = {j: sum(v for k, v in R.items() if k >= j) for j in range(1, top + 1)}
        p = sum(g[j - 1] / at_least[j] for j in range(1, grade + 1))
    else:
        raise ValueError(f"pivot probabilities are defined for GAP and xGAP, not {m.name}")
    return [
        _row(
            f"{measure}: P(pivot is a grade-{grade} document), counts {R}",
            p,
            expect,
            abs(p - expect) <= tolerance,
        )
    ]


@analytic_test
def test_swap_lowers(
    measure: str, lists: int = 200, max_grade: int = 2, seed: int = 0
) -> list[dict]:
    rng = np.random.default_rng(seed)
    rankings, swapped, ideal, judged = [], [], [], []
    for _ in range(lists):
        grades = list(rng.integers(0, max_grade + 1, int(rng.integers(4, 25))))
        pairs = [
            (i, j)
            for i in range(len(grades))
            for j in range(i + 1, len(grades))
            if grades[i] > grades[j]
        ]
        if not pairs:
            continue
        i, j = pairs[int(rng.integers(len(pairs)))]
        worse = list(grades)
        worse[i], worse[j] = worse[j], worse[i]
        counts = {g: grades.count(g) for g in range(max_grade + 1)}
        rankings.append(grades)
        swapped.append(worse)
        ideal.append(sorted(grades, reverse=True))
        judged.append(counts)
    v, w, best = (_values(measure, x, judged) for x in (rankings, swapped, ideal))
    raised = float(np.max(w - v))
    above = float(np.max(v - best))
    return [
        _row(
            f"{measure}: largest gain from moving a document below a lower-graded one",
            raised,
            "<= 0",
            raised <= 1e-12,
        ),
        _row(
            f"{measure}: largest excess of a list over its non-increasing order",
            above,
            "<= 0",
            above <= 1e-12,
        ),
    ]


@analytic_test
def test_top_heaviness(
    measure: str,
    R: int = 10,
    equal_at: list | None = None,
    flat: bool = False,
    negligible_after: int | None = None,
    ratio: float = 1e-3,
) -> list[dict]:
    from metaeval.measures.curves import top_heaviness

    frame = top_heaviness([measure], n_relevant=[R], max_rank=20).sort_values("rank")
    v = frame["value"].to_numpy()
    # the curve itself, for the report's figure (rows of kind "curve" are not checks)
    rows = [
        {
            **_row(f"{measure} at rank {int(r)}", value, "", True),
            "kind": "curve",
            "measure": measure,
            "n_relevant": R,
            "x": float(r),
        }
        for r, value in zip(frame["rank"], v)
    ]
    if equal_at:
        a, b = (int(r) - 1 for r in equal_at)
        rows.append(
            _row(
                f"{measure} with the document at rank {a + 1} and at {b + 1}",
                v[b] - v[a],
                0,
                abs(v[b] - v[a]) <= 1e-12,
            )
        )
    if flat:
        spread = float(v.max() - v.min())
        rows.append(_row(f"{measure}: spread over ranks 1-20", spread, 0, spread <= 1e-12))
    if negligible_after is not None:
        tail = float(v[negligible_after:].max() / v[0]) if v[0] > 0 else np.nan
        rows.append(
            _row(
                f"{measure}: largest value beyond rank {negligible_after}, relative to rank 1",
                tail,
                f"< {ratio:g}",
                tail < ratio,
            )
        )
    return rows


def skewed_scores(n: int = 50, zeros: int = 3, small: int = 3) -> np.ndarray:
    """Per-topic values like Robertson (2006)'s example: ``zeros`` zeros, ``small`` values of
    0.01, and the rest the quantiles of a Beta(1.2745, 2.3601) distribution, skewed towards 0.

    The Beta parameters were fitted to the paper's two summaries of its example (MAP .309,
    GMAP .117 with eps 1e-5); the paper's other numbers then follow: GMAP .102 / .117 / .134
    at eps 1e-6 / 1e-5 / 1e-4 (the paper's exactly), and after adding 0.05 everywhere MAP .359,
    GMAP .268 (paper: .263), to the lowest half GMAP .255 (.249), to the highest .123 (.123).
    """
    from scipy import stats

    rest = n - zeros - small
    body = stats.beta.ppf((np.arange(rest) + 0.5) / rest, 1.2745, 2.3601)
    return np.concatenate([np.zeros(zeros), np.full(small, 0.01), body])


def _gmap(x: np.ndarray, eps: float = 1e-5) -> float:
    from metaeval.aggregate import Aggregate

    return float(Aggregate("gmean", eps, "shift")(x))


@analytic_test
def test_aggregate(effect: str, boost: float = 0.05) -> list[dict]:
    x = skewed_scores()
    order = np.argsort(x, kind="stable")
    low, high = order[: len(x) // 2], order[len(x) // 2 :]
    if effect == "shift_all":
        d_map = float((x + boost).mean() - x.mean())
        d_gmap = _gmap(x + boost) - _gmap(x)
        return [
            _row(
                "MAP rise when every value rises by 0.05", d_map, boost, abs(d_map - boost) <= 1e-12
            ),
            _row(
                f"GMAP rise minus MAP rise (MAP {x.mean():.3f} -> {(x + boost).mean():.3f}, "
                f"GMAP {_gmap(x):.3f} -> {_gmap(x + boost):.3f})",
                d_gmap - d_map,
                "> 0",
                d_gmap > d_map,
            ),
        ]
    if effect == "shift_low_vs_high":
        lo, hi = x.copy(), x.copy()
        lo[low] += boost
        hi[high] += boost
        return [
            _row(
                f"GMAP rise, lowest half boosted, minus highest half boosted (GMAP "
                f"{_gmap(x):.3f} -> {_gmap(lo):.3f} and {_gmap(hi):.3f})",
                (_gmap(lo) - _gmap(x)) - (_gmap(hi) - _gmap(x)),
                "> 0",
                _gmap(lo) > _gmap(hi),
            ),
            _row(
                "MAP rise, lowest half boosted, minus highest half boosted",
                lo.mean() - hi.mean(),
                0,
                abs(lo.mean() - hi.mean()) <= 1e-12,
            ),
        ]
    if effect == "eps":
        values = [_gmap(x, e) for e in (1e-6, 1e-5, 1e-4)]
        return [
            _row(f"GMAP with eps {e:g}", v, "increasing with eps", True)
            for e, v in zip((1e-6, 1e-5, 1e-4), values)
        ] + [
            _row(
                "GMAP(eps=1e-4) - GMAP(eps=1e-6)",
                values[2] - values[0],
                "> 0",
                values[0] < values[1] < values[2],
            )
        ]
    raise ValueError(f"effect must be shift_all, shift_low_vs_high or eps, got {effect!r}")


@analytic_test
def test_first_relevant(ranks_a: list, ranks_b: list) -> list[dict]:
    a, b = np.asarray(ranks_a, float), np.asarray(ranks_b, float)
    mean_rank = a.mean() - b.mean()  # lower is better
    mrr = (1 / a).mean() - (1 / b).mean()  # higher is better
    return [
        _row("mean rank of A minus B (B better when > 0)", mean_rank, "> 0", mean_rank > 0),
        _row("mean reciprocal rank of A minus B (A better when > 0)", mrr, "> 0", mrr > 0),
    ]


def run_check(claim_id: str, check: dict) -> pd.DataFrame:
    """The rows of one analytic claim (``check`` without its ``kind``)."""
    params = {k: v for k, v in check.items() if k not in ("kind", "test")}
    rows = TESTS[check["test"]](**params)
    return pd.DataFrame([{"claim": claim_id, **r} for r in rows])


__all__ = ["TESTS", "run_check", "skewed_scores"]
