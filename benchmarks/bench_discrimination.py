"""Benchmark: discriminative power for 100 systems (4,950 pairs) x 50 topics.

Times, in one run and on the same score matrix:

* metaeval's vectorised paired bootstrap (Sakai 2006), B = 1000, all pairs at once;
* a plain per-pair loop implementation of the same test (written here: one pair at a time,
  numpy over the B samples of that pair, as MATTERS does), B = 1000, with the same bootstrap
  samples, and checks that both give identical ASLs;
* metaeval's randomised Tukey HSD, B = 5000.

Run from the repository root:

    python benchmarks/bench_discrimination.py [--repeats 5] [--out benchmarks/results/discrimination.md]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import time

import numpy as np

from metaeval.meta._testing import null_scores
from metaeval.meta.discrimination import discriminative_power

S, T, B_BOOT, B_TUKEY, SEED = 100, 50, 1000, 5000, 20240601


def per_pair_loop(X: np.ndarray, B: int, alpha: float, seed: int):
    """Sakai's bootstrap, one pair at a time (the straightforward implementation)."""
    n_sys, n = X.shape
    idx = np.random.default_rng(seed).integers(0, n, size=(B, n))
    k = math.ceil(alpha * B)
    asl, diff = [], []
    for a in range(n_sys):
        for b in range(a + 1, n_sys):
            z = X[a] - X[b]
            t_obs = z.mean() / (z.std(ddof=1) / math.sqrt(n))
            w = z - z.mean()
            ws = w[idx]  # (B, n): the B resamples of this pair
            m = ws.mean(axis=1)
            t = m / (ws.std(axis=1, ddof=1) / math.sqrt(n))
            asl.append(np.mean(np.abs(t) >= abs(t_obs) - 1e-10 * (1 + abs(t_obs))))
            diff.append(abs(m[np.argsort(-np.abs(t), kind="stable")[k - 1]]))
    asl = np.array(asl)
    return float(np.mean(asl < alpha)), asl, float(max(diff))


def timed(fn, repeats):
    """(best wall time, median wall time, best CPU time of this process, result)."""
    times, cpu, out = [], [], None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return min(times), statistics.median(times), min(cpu), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--repeats", type=int, default=5, help="timed repetitions (min and median reported)"
    )
    ap.add_argument(
        "--loop-repeats", type=int, default=1, help="repetitions of the slow per-pair loop"
    )
    ap.add_argument("--out", default=None, help="also write the markdown report to this file")
    args = ap.parse_args()
    if args.repeats < 1 or args.loop_repeats < 1:
        ap.error("--repeats and --loop-repeats must be >= 1")

    rng = np.random.default_rng(SEED)
    # A realistic spread: topic effects plus system effects of up to .15 and noise.
    X = np.clip(null_scores(S, T, rng=rng) + np.linspace(0, 0.15, S)[:, None], 0, 1)

    # warm-up (imports, BLAS threads)
    discriminative_power(X[:5], B=50, rng=0)

    vb_min, vb_med, vb_cpu, vec = timed(
        lambda: discriminative_power(X, B=B_BOOT, rng=SEED), args.repeats
    )
    lp_min, lp_med, lp_cpu, (lp_power, lp_asl, lp_diff) = timed(
        lambda: per_pair_loop(X, B_BOOT, 0.05, SEED), args.loop_repeats
    )
    tk_min, tk_med, tk_cpu, tk = timed(
        lambda: discriminative_power(X, method="tukey", B=B_TUKEY, rng=SEED), args.repeats
    )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")

    same = np.array_equal(vec.pairs["asl"].to_numpy(), lp_asl)
    rows = [
        (
            "metaeval bootstrap (vectorised)",
            B_BOOT,
            vb_min,
            vb_med,
            vb_cpu,
            vec.power,
            vec.diff_required,
        ),
        ("per-pair loop bootstrap (reference)", B_BOOT, lp_min, lp_med, lp_cpu, lp_power, lp_diff),
        (
            "metaeval randomised Tukey HSD",
            B_TUKEY,
            tk_min,
            tk_med,
            tk_cpu,
            tk.power,
            tk.diff_required,
        ),
    ]
    lines = [
        f"Discriminative power, {S} systems ({S * (S - 1) // 2} pairs) x {T} topics, alpha = 0.05.",
        "",
        "| implementation | B | best wall (s) | median wall (s) | best CPU (s) | power | diff required |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, b, tmin, tmed, tcpu, power, diff in rows:
        lines.append(
            f"| {name} | {b} | {tmin:.3f} | {tmed:.3f} | {tcpu:.3f} | {power:.4f} | {diff:.4f} |"
        )
    lines += [
        "",
        f"Speed-up of the vectorised bootstrap over the per-pair loop: {lp_min / vb_min:.0f}x (best times).",
        f"Identical ASLs for all pairs (same bootstrap samples): {'yes' if same else 'NO'}.",
        "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs (shared), "
        f"Python {platform.python_version()}, numpy {np.__version__}. "
        f"Repeats: {args.repeats} (loop: {args.loop_repeats}). 1-min load average at the end: {load:.1f} "
        "(other developers share the machine; CPU time is the steadier number).",
        "",
        "Command: `python benchmarks/bench_discrimination.py`",
    ]
    report = "\n".join(lines)
    print(report)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("# Benchmark: discriminative power\n\n" + report + "\n")


if __name__ == "__main__":
    main()
