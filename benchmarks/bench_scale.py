"""Scale: 1,000 runs x 250 topics x depth 1000, five measures and a robustness grid, peak memory.

Run from the repository root:

    python benchmarks/bench_scale.py [--runs 1000] [--topics 250] [--depth 1000] [--chunk 50]

1. A synthetic collection is generated in the benchmark: 3000 candidate documents per topic
   (ids unique across topics), grades 0-3 with probabilities 85/8/5/2%, 30% of the candidates
   judged; run s scores quality_s * grade + N(0, 1) and ranks its top ``depth`` candidates.
   250 million ranked documents held at once as Runs (Arrow string ids and float64 scores)
   would take most of the budget, so the runs are generated ``--chunk`` at a time: each chunk is built into an
   EvalTensor against the qrels and dropped, and the chunk tensors are joined with
   ``EvalTensor.concat`` (only their judged entries are kept).
2. On the whole tensor: AP, nDCG, P@10, RR and Bpref; then a robustness grid of 10 judgment sets
   (stratified sampling at 90, 70, 50, 30, 10% x 2 trials): ``metaeval.meta.robustness`` with
   Kendall's tau and tau_AP against the full judgments, without significance tests.
3. Peak memory: the process's peak resident set size (``ru_maxrss``) after each step, against
   the 8 GB budget.
4. Where the sparse path pays: on a 100 x 50 x 1000 collection judged at 10-90% of its ranks,
   the five measures on the entries (``using("sparse")``) and on the dense codes
   (``using("dense")``, codes already built) -- the measurements behind
   ``metaeval.engine.tensor.SPARSE_SHARE``.

Writes ``benchmarks/results/scale.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

import metaeval
from metaeval.engine import EvalTensor
from metaeval.meta.robustness import robustness
from simulators import StratifiedSampling

ROOT = Path(__file__).resolve().parents[1]
MEASURES = ["AP", "nDCG", "P@10", "RR", "Bpref"]
N_CANDIDATES = 3000
GRADE_P = [0.85, 0.08, 0.05, 0.02]
BUDGET_GB = 8.0


def peak_gb() -> float:
    """Peak resident set size of this process so far, in GB (Linux reports KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


class Collection:
    """The synthetic collection: qrels, and a generator of runs chunk by chunk."""

    def __init__(self, n_topics: int, depth: int, judged: float, seed: int = 11):
        rng = np.random.default_rng(seed)
        self.n_topics, self.depth = n_topics, depth
        self.grades = rng.choice(4, size=(n_topics, N_CANDIDATES), p=GRADE_P).astype(np.int8)
        self.topics = np.array([f"{400 + t}" for t in range(n_topics)], dtype=object)
        ids = np.arange(n_topics * N_CANDIDATES).reshape(n_topics, N_CANDIDATES)
        self.names = pa.array([f"D{i}" for i in range(n_topics * N_CANDIDATES)])
        t_idx, c_idx = np.nonzero(rng.random((n_topics, N_CANDIDATES)) < judged)
        self.qrels = metaeval.Qrels(
            pa.array(self.topics[t_idx].astype(str)),
            self.names.take(pa.array(ids[t_idx, c_idx])),
            self.grades[t_idx, c_idx],
        )
        self.ids = ids
        self.rng = rng

    def runs(self, first: int, count: int) -> metaeval.RunSet:
        """Runs first .. first+count-1, already in ranking order (Run.from_ranked)."""
        out = []
        offsets = np.arange(self.n_topics + 1, dtype=np.int64) * self.depth
        for s in range(first, first + count):
            quality = self.rng.uniform(0, 2)
            noise = self.rng.standard_normal((self.n_topics, N_CANDIDATES), dtype=np.float32)
            score = quality * self.grades + noise
            top = np.argpartition(-score, self.depth - 1, axis=1)[:, : self.depth]
            top_score = np.take_along_axis(score, top, axis=1)
            order = np.argsort(-top_score, axis=1, kind="stable")
            top = np.take_along_axis(top, order, axis=1)
            rows = np.take_along_axis(self.ids, top, axis=1).reshape(-1)
            out.append(
                metaeval.Run.from_ranked(
                    f"run{s:04d}",
                    self.topics,
                    offsets,
                    self.names.take(pa.array(rows)),
                    np.take_along_axis(top_score, order, axis=1).reshape(-1).astype(np.float64),
                )
            )
        return metaeval.RunSet(out)


def run_bytes(runs: metaeval.RunSet) -> int:
    return sum(r.docs.nbytes + r.scores.nbytes + r.offsets.nbytes for r in runs)


def scale(args) -> dict:
    facts: dict = {}
    t0 = time.perf_counter()
    coll = Collection(args.topics, args.depth, args.judged)
    facts["qrels"] = len(coll.qrels)
    chunks, t_gen, t_build, runs_bytes = [], 0.0, 0.0, 0
    for first in range(0, args.runs, args.chunk):
        start = time.perf_counter()
        runs = coll.runs(first, min(args.chunk, args.runs - first))
        t_gen += time.perf_counter() - start
        runs_bytes += run_bytes(runs)
        start = time.perf_counter()
        chunks.append(EvalTensor.build(runs, coll.qrels))
        t_build += time.perf_counter() - start
        del runs
        print(f"  runs {first + args.chunk}/{args.runs}, peak {peak_gb():.2f} GB", flush=True)
    start = time.perf_counter()
    tensor = EvalTensor.concat(chunks)
    del chunks
    t_concat = time.perf_counter() - start
    facts.update(
        shape=tensor.shape,
        entries=tensor.n_entries,
        sparse=tensor.sparse,
        runs_gb=runs_bytes / 1024**3,
        dense_gb=5 * np.prod(tensor.shape, dtype=np.int64) / 1024**3,
        tensor_gb=sum(
            a.nbytes
            for a in (tensor.entry_group, tensor.entry_rank, tensor.entry_row, tensor.lengths)
        )
        / 1024**3,
        t_gen=t_gen,
        t_build=t_build,
        t_concat=t_concat,
        peak_build=peak_gb(),
    )
    start = time.perf_counter()
    scores = metaeval.score_matrices(tensor, MEASURES)
    facts["t_measures"] = time.perf_counter() - start
    facts["peak_measures"] = peak_gb()
    facts["means"] = {m: float(v.mean()) for m, v in scores.items()}
    del scores
    start = time.perf_counter()
    sets = StratifiedSampling(rates=(90, 70, 50, 30, 10)).generate(
        tensor, trials=2, rng=np.random.default_rng(5)
    )
    facts["t_sets"] = time.perf_counter() - start
    start = time.perf_counter()
    result = robustness(tensor, MEASURES, sets, significance=False)
    facts["t_grid"] = time.perf_counter() - start
    facts["peak_grid"] = peak_gb()
    taus = result.frame.query("statistic == 'tau_b' and against == 'full'")
    facts["tau_at_10"] = taus[taus.level == 10].groupby("measure")["value"].mean().to_dict()
    facts["n_sets"] = len(sets)
    facts["total"] = time.perf_counter() - t0
    return facts


def crossover(repeats: int) -> list[tuple]:
    """Five measures on the sparse and the dense path, at several judged shares."""
    rows = []
    for judged in (0.1, 0.3, 0.5, 0.7, 0.9):
        # Judged candidates are drawn independently of their grades, so about this share of
        # the ranks is judged.
        coll = Collection(50, 1000, judged, seed=3)
        tensor = EvalTensor.build(coll.runs(0, 100), coll.qrels)
        sparse, dense = tensor.using("sparse"), tensor.using("dense")
        dense.codes  # noqa: B018 (built before timing: the dense path's best case)
        times = {}
        for label, view in (("sparse", sparse), ("dense", dense)):
            best = float("inf")
            for _ in range(repeats):
                start = time.perf_counter()
                metaeval.score_matrices(view, MEASURES)
                best = min(best, time.perf_counter() - start)
            times[label] = best
        share = tensor.n_entries / np.prod(tensor.shape)
        rows.append((share, times["sparse"], times["dense"]))
        print(f"  judged {share:.0%}: sparse {times['sparse']:.3f} s, dense {times['dense']:.3f} s")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--topics", type=int, default=250)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--chunk", type=int, default=50)
    ap.add_argument("--judged", type=float, default=0.3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "scale.md")
    args = ap.parse_args()
    load_start = os.getloadavg()[0]
    facts = scale(args)
    cross = crossover(args.repeats)
    s, t, d = facts["shape"]
    peak = max(facts["peak_build"], facts["peak_measures"], facts["peak_grid"])
    command = "python benchmarks/bench_scale.py"
    if (args.runs, args.topics, args.depth, args.chunk) != (1000, 250, 1000, 50):
        command += f" --runs {args.runs} --topics {args.topics} --depth {args.depth}"
        command += f" --chunk {args.chunk}"
    lines = [
        "# Scale: 1,000 runs x 250 topics x depth 1000",
        "",
        f"Command (repository root): `{command}`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs (shared with other jobs; load "
        f"average {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end), "
        f"24 GB, Python {platform.python_version()}, numpy {np.__version__}, pyarrow "
        f"{pa.__version__}. One run; wall clock.",
        "",
        f"Collection: {s:,} runs x {t} topics x depth {d} = {s * t * d:,} ranked documents; "
        f"{facts['qrels']:,} judgments (30% of {N_CANDIDATES} candidates per topic); "
        f"{facts['entries']:,} judged entries ({facts['entries'] / (s * t * d):.0%} of the "
        f"ranks), measures on the {'sparse' if facts['sparse'] else 'dense'} path.",
        "",
        "| step | time | peak memory (process) |",
        "|---|---|---|",
        f"| generate the runs, {args.chunk} at a time (benchmark input) | "
        f"{facts['t_gen']:.1f} s | |",
        f"| build the tensor of each chunk (hash join) | {facts['t_build']:.1f} s | "
        f"{facts['peak_build']:.2f} GB after building |",
        f"| join the chunk tensors (`EvalTensor.concat`) | {facts['t_concat']:.1f} s | |",
        f"| **AP, nDCG, P@10, RR, Bpref** | **{facts['t_measures']:.1f} s** | "
        f"{facts['peak_measures']:.2f} GB |",
        f"| draw {facts['n_sets']} stratified judgment sets | {facts['t_sets']:.1f} s | |",
        f"| **robustness grid: {facts['n_sets']} sets x 5 measures, tau_b and tau_AP** | "
        f"**{facts['t_grid']:.1f} s** | {facts['peak_grid']:.2f} GB |",
        f"| whole benchmark | {facts['total']:.1f} s | **{peak:.2f} GB** |",
        "",
        f"Peak memory {peak:.2f} GB against the {BUDGET_GB:.0f} GB budget: "
        f"{'met' if peak < BUDGET_GB else 'NOT met'}.",
        "",
        f"Memory model: the tensor keeps {facts['tensor_gb']:.2f} GB of entries (12 bytes per "
        "judged rank) and per-list arrays; its dense codes and document index would add "
        f"{facts['dense_gb']:.2f} GB (5 bytes per rank) and are never built here; the runs "
        f"themselves, held at once, would take {facts['runs_gb']:.1f} GB (ids, offsets and "
        "scores), which is why they are generated and built a chunk at a time.",
        "",
        "Mean Kendall tau_b against the full judgments at the 10% level: "
        + ", ".join(f"{m} {v:.3f}" for m, v in sorted(facts["tau_at_10"].items()))
        + ".",
        "",
        "## Sparse or dense: where the entries pay",
        "",
        f"AP, nDCG, P@10, RR and Bpref on 100 runs x 50 topics x depth 1000 (best of "
        f"{args.repeats}); the dense path with its codes already built.",
        "",
        "| judged share of the ranks | sparse (s) | dense (s) | dense / sparse |",
        "|---|---|---|---|",
    ]
    lines += [f"| {share:.0%} | {sp:.3f} | {de:.3f} | {de / sp:.2f} |" for share, sp, de in cross]
    lines += [
        "",
        "`SPARSE_SHARE` (0.5) is where the tensor switches from the entries to the dense codes.",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
