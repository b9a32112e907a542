"""Benchmark: type I error rates of the five paired tests over 1,000 null pairs.

A simulated world of the ``null`` preset (every system identical in distribution, so every
pair is null) with 46 systems and 100 topics is scored with AP; 1,000 of its 1,035 pairs are
tested by :func:`metaeval.stats.error_rates.error_rates` with the t, Wilcoxon, sign,
randomisation and bootstrap tests (B = 1000) on one topic subset of each of 3 sizes (25, 50
and all 100 topics): 15,000 tests, vectorised over the pairs (and subsets). Target: a few
seconds. Then the same with 20 subsets per size (the criterion's default), and, for scale, the
single-pair functions of :mod:`metaeval.stats.paired` on a few pairs in a loop, extrapolated to
the 15,000 tests.

Each timing is the best of ``--repeats`` calls (the machine is shared: the minimum is the
least disturbed). The world's generation is not timed.

Run from the repository root:

    python benchmarks/bench_error_rates.py [--repeats 3] [--loop 10]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from metaeval.engine import EvalTensor
from metaeval.measures import parse_measure
from metaeval.stats import paired
from metaeval.stats.error_rates import TESTS, error_rates
from simulators import make_world

N_SYSTEMS, N_TOPICS, N_PAIRS, SIZES, B = 46, 100, 1000, (25, 50, 100), 1000


def null_scores(seed: int = 0) -> np.ndarray:
    world = make_world("null", n_topics=N_TOPICS, n_systems=N_SYSTEMS, rng=seed)
    tensor = EvalTensor.build(world.runs, world.qrels, warn_extra_topics=False)
    return parse_measure("AP").compute(tensor)


def best_of(repeats: int, fn) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def loop(X: np.ndarray, pairs: np.ndarray, res) -> float:
    """Seconds of the single-pair functions on ``pairs``, every size and test, on the subsets
    and resamples ``res`` used."""
    start = time.perf_counter()
    for n in SIZES:
        sub = res.subsets[n][0]
        draws = res.resamples[n]
        for a, b in pairs:
            x, y = X[a, sub], X[b, sub]
            paired.paired_t_test(x, y)
            paired.wilcoxon_test(x, y)
            paired.sign_test(x, y)
            paired.randomization_test(x, y, resamples=draws["randomization"])
            paired.bootstrap_test(x, y, resamples=draws["bootstrap"])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--loop", type=int, default=10, help="pairs timed one at a time")
    args = parser.parse_args()

    X = null_scores()
    ia, ib = np.triu_indices(N_SYSTEMS, 1)
    pairs = np.column_stack([ia, ib])[:N_PAIRS]
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f}"
    )

    def run(repeats: int):
        return error_rates(
            X, np.zeros(N_SYSTEMS), sizes=SIZES, repeats=repeats, B=B, pairs=pairs, rng=1
        )

    seconds, res = best_of(args.repeats, lambda: run(1))
    n_tests = N_PAIRS * len(SIZES) * len(TESTS)
    print(
        f"{N_PAIRS} null pairs x {len(SIZES)} sizes x {len(TESTS)} tests "
        f"({n_tests:,} tests): {seconds:.2f} s"
    )
    print(res.to_frame()[["n_topics", "test", "n_null", "type1_rate"]].to_string(index=False))
    seconds20, res20 = best_of(1, lambda: run(20))
    decisions = int(res20.counts["n_null"].sum())
    print(f"with 20 subsets per size ({decisions:,} tests): {seconds20:.2f} s")
    if args.loop:
        one_by_one = loop(X, pairs[: args.loop], res)
        per_test = one_by_one / (args.loop * len(SIZES) * len(TESTS))
        print(
            f"single-pair functions in a loop: {per_test * 1e3:.2f} ms per test, "
            f"{per_test * n_tests:.1f} s for the {n_tests:,} tests "
            f"({per_test * n_tests / seconds:.0f}x)"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
