"""Benchmark: the full measure set on TREC DL 2020 (59 runs x 54 topics x 1000 ranks).

Times ingestion (reading the runs and qrels, building the tensor) and, separately, evaluating
every registered measure with typical parameters on the built tensor: once cold (fresh
tensor, so the condensed view and per-topic counts are computed on the way) and the best of
a few warm repeats. Target: the cold evaluation under 2 s.

    python benchmarks/bench_measures.py                 # prints, writes benchmarks/results/graded.md
    python benchmarks/bench_measures.py --no-write
    python benchmarks/bench_measures.py --data PATH/trec-dl-2020
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

import metaeval
from metaeval import EvalTensor
from metaeval.evaluation import score_matrices
from metaeval.measures import registered

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "trec-dl-2020"
RESULTS = ROOT / "benchmarks" / "results" / "graded.md"
TARGET_SECONDS = 2.0

#: Every registered measure, with the parameters a study would typically use (DL: rel=2 for
#: binary measures), plus condensed variants of the main ones.
MEASURES = [
    "AP",
    "AP(rel=2)",
    "AP@100",
    "P@10",
    "P(rel=2)@10",
    "P@20",
    "Rprec",
    "Rprec(rel=2)",
    "RR",
    "RR(rel=2)@10",
    "R@100",
    "R@1000",
    "Success@10",
    "Bpref",
    "Bpref_R",
    "Bpref_N",
    "infAP",
    "NumRet",
    "NumRel",
    "NumRelRet",
    "Judged@10",
    "nDCG",
    "nDCG@10",
    "nDCG@20",
    "nDCG(gain=exp)@10",
    "nDCG(discount=jk)@10",
    "nDCG(gains={1:0,2:1,3:3})@10",
    "nCG@10",
    "nCG",
    "Q",
    "Q(beta=0.5)",
    "Q@100",
    "RBP(p=0.5)",
    "RBP",
    "RBP(p=0.95)",
    "RBP_resid(p=0.5)",
    "RBP_resid",
    "RBP_resid(p=0.95)",
    "ERR",
    "ERR@20",
    "nERR@20",
    "GAP",
    "GAP(g=(0.1,0.3,0.6))",
    "xGAP",
    "eGAP",
    "AP'",
    "nDCG'@10",
    "Q'",
    "GAP'",
    "Bpref'",
    "RBP'",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if not (args.data / "qrels.txt").is_file():
        print(f"data not found: {args.data}", file=sys.stderr)
        return 2
    covered = {m.split("(")[0].split("@")[0].rstrip("'") for m in MEASURES}
    missing = set(registered()) - covered
    if missing:
        print(f"note: registered measures not benchmarked: {sorted(missing)}", file=sys.stderr)

    t0 = time.perf_counter()
    runs = metaeval.read_runs(sorted((args.data / "runs").glob("*.gz")))
    qrels = metaeval.read_qrels(args.data / "qrels.txt")
    t_read = time.perf_counter() - t0
    t0 = time.perf_counter()
    tensor = EvalTensor.build(runs, qrels)
    t_build = time.perf_counter() - t0

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    # Cold: a fresh tensor, as a study gets after ingestion (condensed view not yet cached).
    t0 = time.perf_counter()
    scores = score_matrices(tensor, MEASURES)
    t_cold = time.perf_counter() - t0
    warm = []
    for _ in range(max(args.repeat, 1)):
        t0 = time.perf_counter()
        score_matrices(tensor, MEASURES)
        warm.append(time.perf_counter() - t0)
    per_measure = []
    for m in MEASURES:
        t0 = time.perf_counter()
        score_matrices(tensor, [m])
        per_measure.append((m, time.perf_counter() - t0))
    assert all(np.isfinite(v).all() for v in scores.values())

    S, T, D = tensor.shape
    lines = [
        "# Benchmark: graded and research measures on TREC DL 2020",
        "",
        f"Command: `python benchmarks/bench_measures.py` (from the repository root; data "
        f"`{args.data.name}`).",
        "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPU(s) "
        f"visible (shared with other jobs), Python {platform.python_version()}, "
        f"numpy {np.__version__}. Single process. Load average at the start of the "
        f"evaluation: {load:.1f} (other developers' jobs share the machine, so times vary).",
        "",
        f"Tensor: {S} runs x {T} topics x depth {D}; {len(MEASURES)} measures "
        f"({len(registered())} registered measure classes, all covered, plus condensed variants).",
        "",
        "| step | seconds |",
        "|---|---|",
        f"| read runs + qrels (ingestion) | {t_read:.2f} |",
        f"| build tensor (ingestion) | {t_build:.2f} |",
        f"| **all {len(MEASURES)} measures, cold (after ingestion)** | **{t_cold:.2f}** |",
        f"| all measures, warm (best of {len(warm)}) | {min(warm):.2f} |",
        "",
        f"Target: under {TARGET_SECONDS:g} s after ingestion: "
        f"{'met' if t_cold < TARGET_SECONDS else 'NOT met'}.",
        "",
        "Slowest measures (warm, seconds):",
        "",
        "| measure | seconds |",
        "|---|---|",
    ]
    for m, t in sorted(per_measure, key=lambda x: -x[1])[:10]:
        lines.append(f"| `{m}` | {t:.3f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(text)
        print(f"written to {RESULTS.relative_to(ROOT)}")
    return 0 if t_cold < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
