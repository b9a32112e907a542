"""Benchmark of the simulators: world generation, writing runs, degraded re-evaluation.

Run from the repository root:

    python benchmarks/bench_simulators.py [--data ../shared/data] [--repeat 5]

1. Generating a 100-system x 50-topic x depth-1000 world (target < 5 s), for the ``trec_like``
   and ``dl_like`` presets: ``simulators.make_world`` end to end (truth and pooled Qrels, 100
   TREC-shaped Runs with Arrow string ids).
2. Writing that world's 100 runs (5,000,000 lines) with ``metaeval.write_runs`` (target
   <= 2 s), and ``metaeval simulate --systems 100`` end to end in a fresh process (world,
   truth and pooled qrels, runs, world.json).
3. On TREC DL 2020 (59 runs x 54 topics x depth 1000), one degraded judgment set (stratified
   sampling at 10%) plus re-evaluation of AP, nDCG, P@10, RR and Bpref through the tensor fast
   path: ``score_matrices(tensor.with_judgments(mask), [...])`` (target < 50 ms). The tensor is
   built once, outside the timing, as a study does.

Writes ``benchmarks/results/simulators.md``. Times are the median (and min) of ``--repeat``
runs, wall clock, on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import metaeval
from simulators import StratifiedSampling, UniformSampling, make_world

ROOT = Path(__file__).resolve().parents[1]
MEASURES = ["AP", "nDCG", "P@10", "RR", "Bpref"]


def timed(fn, repeat):
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out), min(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "simulators.md")
    args = ap.parse_args()
    load_start = os.getloadavg()[0]

    rows = []
    for preset in ("trec_like", "dl_like"):
        seeds = iter(range(1000))
        med, best = timed(
            lambda: make_world(
                preset, n_topics=50, n_systems=100, rng=np.random.default_rng(next(seeds))
            ),
            args.repeat,
        )
        rows.append(
            (f"make_world({preset!r}, 100 systems x 50 topics x depth 1000)", med, best, "< 5 s")
        )
        print(rows[-1])

    world = make_world("trec_like", n_topics=50, n_systems=100, rng=np.random.default_rng(1))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "runs"
        med, best = timed(lambda: metaeval.write_runs(world.runs, out), args.repeat)
        rows.append(("write_runs(100 runs x 50 topics x depth 1000)", med, best, "<= 2 s"))
        print(rows[-1])
        cli = [sys.executable, "-m", "metaeval", "simulate", "--systems", "100", "--seed", "1"]
        med, best = timed(
            lambda: subprocess.run(
                [*cli, "--out", str(Path(tmp) / "world")], check=True, capture_output=True
            ),
            max(1, args.repeat // 2),
        )
        rows.append(("`metaeval simulate --systems 100` (fresh process)", med, best, ""))
        print(rows[-1])

    folder = args.data / "trec-dl-2020"
    qrels = metaeval.read_qrels(folder / "qrels.txt")
    runs = metaeval.read_runs(sorted(folder.glob("runs/*.gz")))
    tensor = metaeval.EvalTensor.build(runs, qrels)
    rng = np.random.default_rng(0)
    strat = StratifiedSampling(rates=[10])
    uni = UniformSampling(rates=[10])

    def stratified_and_eval():
        j = strat.generate(tensor, rng=rng)[0]
        metaeval.score_matrices(tensor.with_judgments(j.keep, dropped=j.dropped), MEASURES)

    def uniform_and_eval():
        j = uni.generate(tensor, rng=rng)[0]
        metaeval.score_matrices(tensor.with_judgments(j.keep, dropped=j.dropped), MEASURES)

    def mask_only():
        strat.generate(tensor, rng=rng)

    def eval_only(mask=strat.generate(tensor, rng=rng)[0].keep):
        metaeval.score_matrices(tensor.with_judgments(mask), MEASURES)

    reps = max(args.repeat * 4, 20)
    shape = f"{tensor.n_runs} runs x {tensor.n_topics} topics x depth {tensor.depth}"
    for label, fn, target in (
        (f"DL 2020 ({shape}): stratified 10% mask + 5 measures", stratified_and_eval, "< 50 ms"),
        ("  of which: stratified 10% mask only", mask_only, ""),
        ("  of which: with_judgments + 5 measures only", eval_only, ""),
        ("DL 2020: uniform 10% mask + 5 measures", uniform_and_eval, ""),
    ):
        med, best = timed(fn, reps)
        rows.append((label, med, best, target))
        print(rows[-1])

    # Where the time goes: the gather, then each measure on the degraded tensor.
    mask = strat.generate(tensor, rng=rng)[0].keep
    med, best = timed(lambda: tensor.with_judgments(mask).entries(), reps)
    rows.append(
        ("  breakdown: tensor.with_judgments(mask) and the codes of its entries", med, best, "")
    )
    degraded = tensor.with_judgments(mask)
    degraded.entries()  # each measure below reads these codes
    for m in MEASURES:
        med, best = timed(lambda: metaeval.score_matrices(degraded, [m]), reps)
        rows.append((f"  breakdown: {m}", med, best, ""))
    print(*rows[-6:], sep="\n")

    def fmt(v):
        if v < 0.01:
            return f"{v * 1000:.1f} ms"
        return f"{v * 1000:.0f} ms" if v < 1 else f"{v:.2f} s"

    lines = [
        "# Simulators benchmark",
        "",
        "Command (repository root): `python benchmarks/bench_simulators.py`",
        "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs "
        f"(shared with other jobs; load average {load_start:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end), "
        f"Python {platform.python_version()}, numpy {np.__version__}.",
        "",
        f"Measures re-evaluated: {', '.join(MEASURES)}. Median (min) wall time over "
        f"{args.repeat} world generations and {reps} degraded re-evaluations.",
        "",
        "| task | median | min | target |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {label} | {fmt(med)} | {fmt(best)} | {target} |" for label, med, best, target in rows
    ]
    lines += [
        "",
        "Notes:",
        "",
        "- World generation draws S x C normal scores per topic (C = 3000 candidates for "
        "`trec_like`, 6250 for `dl_like`), takes each system's top 1000 with `argpartition`, and "
        "builds the 100 Runs and the truth/pool Qrels (Arrow strings).",
        "- Degraded re-evaluation: `with_judgments` re-codes the 11,386 judgments, and each "
        "measure reads the codes of the tensor's judged entries only (325,605 of its 3.2 "
        "million ranks), never the dense tensor.",
        "- `metaeval simulate` is a fresh process: besides generating and writing the world, "
        "it imports metaeval and the simulators package, but not scipy.stats, which only the "
        "collection statistics (`simulators.collection_stats`, for their split-half Kendall "
        "tau) import, through `metaeval.meta`.",
        "- Writing runs: Arrow's CSV writer, one run per thread; repeated topic ids and the "
        "constant Q0 and tag columns are dictionary arrays, scores are written as the "
        "shortest text that reads back as the same double.",
        f"- Targets: world < 5 s {'met' if rows[0][1] < 5 and rows[1][1] < 5 else 'NOT met'}; "
        f"write_runs <= 2 s {'met' if rows[2][1] <= 2 else 'NOT met'}; "
        f"degraded re-evaluation < 50 ms {'met' if rows[4][1] < 0.05 else 'NOT met'} "
        "(medians).",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
