"""Benchmark: the Tukey HSD tests of every pair of runs of TREC DL 2020 (59 runs x 54 topics).

The randomised (topic-blocked) Tukey HSD with B = 10,000 permutations and the studentised one,
on nDCG@10 (with the grades as gains), each timed as the best
of ``--repeats`` calls on the shared 2-core machine. Reads ``../shared/data/trec-dl-2020``.

    python benchmarks/bench_tukey.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np

import metaeval
from metaeval.stats import randomized_tukey_hsd, tukey_hsd

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec-dl-2020"


def best_of(repeats: int, fn) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    qrels = metaeval.read_qrels(DATA / "qrels.txt")
    runs = metaeval.read_runs(sorted((DATA / "runs").glob("*.gz")))
    tensor = metaeval.EvalTensor.build(runs, qrels)
    X = metaeval.score_matrices(tensor, ["nDCG@10"])["nDCG@10"]
    S, T = X.shape
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}; DL 2020 nDCG@10: {S} runs x {T} topics, "
        f"{S * (S - 1) // 2} pairs"
    )
    seconds, res = best_of(args.repeats, lambda: randomized_tukey_hsd(X, B=10_000, rng=1))
    print(
        f"randomised Tukey HSD, B = 10,000: {seconds:.2f} s "
        f"({int(res.to_frame()['significant'].sum())} pairs significant)"
    )
    seconds, res = best_of(args.repeats, lambda: tukey_hsd(X))
    print(
        f"studentised Tukey HSD: {seconds:.2f} s "
        f"({int(res.to_frame()['significant'].sum())} pairs significant)"
    )


if __name__ == "__main__":
    main()
