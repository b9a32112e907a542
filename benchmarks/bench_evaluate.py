"""Side-by-side timings: metaeval against pytrec_eval (trec_eval) and ranx, in one run.

Two collections:
  (a) every official run of TREC DL 2020 (59 runs x 54 judged topics, depth <= 1000), read from
      ../shared/data;
  (b) a synthetic collection of 100 runs x 50 topics x depth 1000 (5,000,000 run lines),
      written to a temporary folder first.

Timed, each the best of --repeats:
  ingest      run and qrels files -> each tool's in-memory form (metaeval: RunSet + Qrels;
              pytrec_eval: parse_run / parse_qrel dicts; ranx: Run.from_file / Qrels.from_file).
              Run files are gzip; ranx cannot read gzip, so it reads decompressed copies.
  tensor      metaeval only: building the EvalTensor from the parsed runs
  evaluate    AP, nDCG, P@10, RR, Bpref after ingestion (metaeval: on the tensor;
              pytrec_eval: RelevanceEvaluator + evaluate per run; ranx: evaluate per run,
              after one warm-up call so numba's compilation is not counted)
  cold start  a fresh Python process that imports the tool, reads one run and the qrels and
              prints MAP (wall time of the whole process)

Usage: python benchmarks/bench_evaluate.py [--repeats 3] [--skip-synthetic]
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import metaeval

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
MEASURES = ["AP", "nDCG", "P@10", "RR", "Bpref"]
PYTREC_MEASURES = {"map", "ndcg", "P_10", "recip_rank", "bpref"}
RANX_MEASURES = ["map", "ndcg", "precision@10", "mrr", "bpref"]


def best_of(fn, repeats):
    times = []
    result = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def synthetic(folder: Path, n_runs=100, n_topics=50, depth=1000, seed=7):
    """A TREC-shaped synthetic collection written to ``folder``: qrels + n_runs gzip run files."""
    rng = np.random.default_rng(seed)
    n_docs = 3000
    grades = rng.choice(4, size=(n_topics, n_docs), p=[0.85, 0.08, 0.05, 0.02])
    judged = rng.random((n_topics, n_docs)) < 0.3
    lines = [
        f"{t} 0 doc{d} {grades[t, d]}"
        for t in range(n_topics)
        for d in range(n_docs)
        if judged[t, d]
    ]
    (folder / "qrels.txt").write_text("\n".join(lines) + "\n")
    paths = []
    for s in range(n_runs):
        quality = rng.uniform(0, 2)
        rows = []
        for t in range(n_topics):
            score = quality * grades[t] + rng.normal(0, 1, n_docs)
            top = np.argsort(-score)[:depth]
            rows.append(
                "\n".join(f"{t} Q0 doc{d} {r + 1} {score[d]:.6f} run{s}" for r, d in enumerate(top))
            )
        path = folder / f"run{s}.gz"
        path.write_bytes(gzip.compress(("\n".join(rows) + "\n").encode(), compresslevel=1))
        paths.append(path)
    return folder / "qrels.txt", paths


def cold_start(code: str, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return min(times)


def bench(name, qrels_path, run_paths, repeats, with_cold=True):
    import pytrec_eval
    import ranx

    rows = {}
    # ---------------------------------------------------------------- ingest
    t_me, (runs, qrels) = best_of(
        lambda: (metaeval.read_runs(run_paths), metaeval.read_qrels(qrels_path)), repeats
    )

    def pytrec_ingest():
        with open(qrels_path) as fh:
            q = pytrec_eval.parse_qrel(fh)
        out = []
        for p in run_paths:
            with gzip.open(p, "rt") as fh:
                out.append(pytrec_eval.parse_run(fh))
        return q, out

    t_pt, (pt_qrels, pt_runs) = best_of(pytrec_ingest, repeats)

    # ranx reads plain text only: it gets decompressed copies (its ingest skips gunzip).
    plain_dir = Path(tempfile.mkdtemp())
    plain = []
    for p in run_paths:
        out = plain_dir / Path(p).name.replace(".gz", "")
        out.write_bytes(gzip.decompress(Path(p).read_bytes()))
        plain.append(out)
    t_rx, (rx_qrels, rx_runs) = best_of(
        lambda: (
            ranx.Qrels.from_file(str(qrels_path), kind="trec"),
            [ranx.Run.from_file(str(p), kind="trec") for p in plain],
        ),
        repeats,
    )
    rows["ingest"] = (t_me, t_pt, t_rx)

    # ---------------------------------------------------------------- tensor
    t_tensor, tensor = best_of(lambda: metaeval.EvalTensor.build(runs, qrels), repeats)
    rows["tensor (metaeval only)"] = (t_tensor, None, None)

    # ---------------------------------------------------------------- evaluate
    t_me_eval, scores = best_of(lambda: metaeval.score_matrices(tensor, MEASURES), repeats)

    def pytrec_eval_all():
        ev = pytrec_eval.RelevanceEvaluator(pt_qrels, PYTREC_MEASURES)
        return [ev.evaluate(r) for r in pt_runs]

    t_pt_eval, _ = best_of(pytrec_eval_all, repeats)
    ranx.evaluate(rx_qrels, rx_runs[0], RANX_MEASURES)  # numba compilation, not counted
    t_rx_eval, _ = best_of(
        lambda: [ranx.evaluate(rx_qrels, r, RANX_MEASURES) for r in rx_runs], repeats
    )
    rows["evaluate 5 measures"] = (t_me_eval, t_pt_eval, t_rx_eval)
    rows["tensor + evaluate"] = (t_tensor + t_me_eval, t_pt_eval, t_rx_eval)

    # ---------------------------------------------------------------- cold start
    if with_cold:
        run0, q = str(run_paths[0]), str(qrels_path)
        me = cold_start(
            f"import metaeval; print(metaeval.evaluate({run0!r}, {q!r}, 'AP', "
            "per_topic=False)['value'].iloc[0])",
            repeats,
        )
        pt = cold_start(
            "import gzip, pytrec_eval\n"
            f"q = pytrec_eval.parse_qrel(open({q!r}))\n"
            f"r = pytrec_eval.parse_run(gzip.open({run0!r}, 'rt'))\n"
            "v = pytrec_eval.RelevanceEvaluator(q, {'map'}).evaluate(r)\n"
            "print(sum(x['map'] for x in v.values()) / len(v))",
            repeats,
        )
        rx = cold_start(
            "import ranx\n"
            f"q = ranx.Qrels.from_file({q!r}, kind='trec')\n"
            f"r = ranx.Run.from_file({str(plain[0])!r}, kind='trec')\n"
            "print(ranx.evaluate(q, r, 'map'))",
            1,
        )
        rows["cold start to first result"] = (me, pt, rx)
    for p in plain:
        p.unlink()
    plain_dir.rmdir()
    return name, len(runs), tensor.shape, rows


def fmt(v):
    return "-" if v is None else f"{v:.3f}"


def ratio(a, b):
    return "-" if a is None or b is None else f"{b / a:.1f}x"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-synthetic", action="store_true")
    args = parser.parse_args()
    results = []
    dl = DATA / "trec-dl-2020"
    if dl.exists():
        results.append(
            bench(
                "TREC DL 2020", dl / "qrels.txt", sorted((dl / "runs").glob("*.gz")), args.repeats
            )
        )
    else:
        print(f"skipping DL 2020: {dl} not found", file=sys.stderr)
    if not args.skip_synthetic:
        with tempfile.TemporaryDirectory() as tmp:
            qrels_path, paths = synthetic(Path(tmp))
            results.append(bench("synthetic 100 x 50 x 1000", qrels_path, paths, args.repeats))
    print(
        f"Python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}; best of {args.repeats}\n"
    )
    for name, n_runs, shape, rows in results:
        print(f"### {name} ({n_runs} runs, tensor {shape[0]} x {shape[1]} x {shape[2]})\n")
        print("| step | metaeval (s) | pytrec_eval (s) | ranx (s) | vs pytrec_eval | vs ranx |")
        print("|---|---|---|---|---|---|")
        for step, (me, pt, rx) in rows.items():
            if step.startswith("cold"):
                print(f"| {step} | {fmt(me)} | {fmt(pt)} | {fmt(rx)} | - | - |")
            else:
                print(
                    f"| {step} | {fmt(me)} | {fmt(pt)} | {fmt(rx)} | {ratio(me, pt)} | "
                    f"{ratio(me, rx)} |"
                )
        print()


if __name__ == "__main__":
    main()
