"""Side-by-side timings: metaeval against pytrec_eval (trec_eval) and ranx, in one run.

Collections:
  (a) every official run of TREC DL 2020 (59 runs x 54 judged topics, depth <= 1000), read from
      ../shared/data;
  (b) a synthetic collection of 100 runs x 50 topics x depth 1000 (5,000,000 run lines),
      written to a temporary folder first (skipped with --skip-synthetic).

Workloads, each timed as the best of --repeats calls, and of more while a second has not passed
(wall clock; CPU time of metaeval beside it):
  ingest       run and qrels files -> each tool's in-memory form (metaeval: RunSet + Qrels;
               pytrec_eval: parse_qrel / parse_run dicts; ranx: Qrels / Run from_file). Run files
               are gzip; ranx cannot read gzip, so it reads decompressed copies (no gunzip).
  one-shot     parsed runs -> per-topic scores of AP, nDCG, P@10, RR and Bpref. metaeval: build
               the EvalTensor, compute the five measures, make the tidy per-topic frame;
               pytrec_eval: RelevanceEvaluator + evaluate every run; ranx: evaluate every run
               (after one call that compiles its numba code, not counted).
  re-judged    20 stratified judgment sets (rates 90, 70, 50, 30, 10 x 4 trials, Buckley &
               Voorhees sampling) x the five measures, tensor build included for metaeval:
               build once, then with_judgments + the five measures per set; pytrec_eval: a
               RelevanceEvaluator per set + evaluate every run; ranx: Qrels per set + evaluate
               every run. The 20 sets are drawn before timing, and given to pytrec_eval and ranx
               as ready {topic: {doc: grade}} dicts.
  files        files -> per-topic scores: ingest + one-shot, for each tool.
  cold start   a fresh process that imports the tool, reads one run and the qrels and prints MAP
               (best wall time of --repeats processes).

Before timing, metaeval's per-topic scores are checked against pytrec_eval's on the full
judgments and on one judgment set (every run, every topic it answered).

Usage (repository root): python -W ignore benchmarks/bench_evaluate.py [--repeats 5]
    [--skip-synthetic] [--out benchmarks/results/evaluate.md]
"""

from __future__ import annotations

import argparse
import gzip
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv

import metaeval
from metaeval.engine.tensor import _Join

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
MEASURES = ["AP", "nDCG", "P@10", "RR", "Bpref"]
PYTREC_MEASURES = {"map", "ndcg", "P_10", "recip_rank", "bpref"}
PYTREC_NAMES = {"AP": "map", "nDCG": "ndcg", "P@10": "P_10", "RR": "recip_rank", "Bpref": "bpref"}
RANX_MEASURES = ["map", "ndcg", "precision@10", "mrr", "bpref"]
RATES = (90, 70, 50, 30, 10)
TRIALS = 4

#: (label, target ratio against pytrec_eval) of the workloads with a target on DL 2020.
TARGETS = {"one-shot": 20, "re-judged": 60, "files": 5}


#: Every tool is timed over at least this long (and at least ``--repeats`` times), as timeit's
#: autorange does: a call of 25 ms repeated 5 times spans a tenth of a second, which a moment's
#: load on a shared machine can spoil entirely, where 5 calls of 0.6 s would lose one.
MIN_SECONDS = 1.0


def best_of(fn, repeats):
    """Best wall time, the CPU time of that repetition, and fn's result: ``fn`` runs
    ``repeats`` times, and more until :data:`MIN_SECONDS` have passed."""
    best = (float("inf"), 0.0)
    result = None
    done, start = 0, time.perf_counter()
    while done < repeats or time.perf_counter() - start < MIN_SECONDS:
        c0, t0 = time.process_time(), time.perf_counter()
        result = fn()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        if wall < best[0]:
            best = (wall, cpu)
        done += 1
    return best[0], best[1], result


def synthetic(folder: Path, n_runs=100, n_topics=50, depth=1000, seed=7):
    """A TREC-shaped synthetic collection written to ``folder``: qrels + n_runs gzip run files.

    3000 candidate documents per topic with grades 0-3 (85/8/5/2%), 30% of them judged; run s
    scores quality_s * grade + N(0, 1) and ranks its top ``depth``.
    """
    rng = np.random.default_rng(seed)
    n_docs = 3000
    grades = rng.choice(4, size=(n_topics, n_docs), p=[0.85, 0.08, 0.05, 0.02])
    judged = rng.random((n_topics, n_docs)) < 0.3
    t_idx, d_idx = np.nonzero(judged)
    lines = [f"{t} 0 doc{d} {grades[t, d]}" for t, d in zip(t_idx, d_idx)]
    (folder / "qrels.txt").write_text("\n".join(lines) + "\n")
    doc_names = pa.array([f"doc{d}" for d in range(n_docs)])
    topic_names = pa.array([str(t) for t in range(n_topics)])
    options = pa_csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    paths = []
    for s in range(n_runs):
        quality = rng.uniform(0, 2)
        score = quality * grades + rng.normal(0, 1, (n_topics, n_docs))
        top = np.argsort(-score, axis=1)[:, :depth]
        top_scores = np.round(np.take_along_axis(score, top, axis=1), 6)
        n = n_topics * depth
        table = pa.table(
            {
                "topic": topic_names.take(pa.array(np.repeat(np.arange(n_topics), depth))),
                "q0": pa.array(np.full(n, "Q0")),
                "doc": doc_names.take(pa.array(top.reshape(-1))),
                "rank": np.tile(np.arange(1, depth + 1), n_topics),
                "score": top_scores.reshape(-1),
                "tag": pa.array(np.full(n, f"run{s}")),
            }
        )
        path = folder / f"run{s}.gz"
        with pa.CompressedOutputStream(str(path), "gzip") as sink:
            pa_csv.write_csv(table, sink, options)
        paths.append(path)
    return folder / "qrels.txt", paths


def cold_start(code: str, repeats: int) -> tuple[float, float]:
    """Best wall time of a fresh ``python -c code`` process, and its user + system CPU."""
    best = (float("inf"), 0.0)
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if wall < best[0]:
            best = (wall, cpu)
    return best


def judgment_sets(tensor):
    """The 20 stratified judgment sets: rates 90..10, four trials, one seeded stream."""
    from simulators import StratifiedSampling

    rng = np.random.default_rng(2020)
    return StratifiedSampling(rates=RATES).generate(tensor, trials=TRIALS, rng=rng)


def check_against_pytrec(scores, tensor, pytrec_results) -> float:
    """Largest difference between metaeval's and pytrec_eval's per-topic scores."""
    worst = 0.0
    topic_pos = {str(t): i for i, t in enumerate(tensor.topics)}
    for s, per_topic in enumerate(pytrec_results):
        for topic, values in per_topic.items():
            t = topic_pos[topic]
            for name, pt_name in PYTREC_NAMES.items():
                worst = max(worst, abs(float(scores[name][s, t]) - values[pt_name]))
    return worst


def bench(name, qrels_path, run_paths, repeats, with_cold=True):
    import pytrec_eval
    import ranx

    rows = {}
    # ---------------------------------------------------------------- ingest
    wall, cpu, (runs, qrels) = best_of(
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

    t_pt, c_pt, (pt_qrels, pt_runs) = best_of(pytrec_ingest, repeats)

    plain_dir = Path(tempfile.mkdtemp())
    plain = []
    for p in run_paths:
        out = plain_dir / Path(p).name.replace(".gz", "")
        out.write_bytes(gzip.decompress(Path(p).read_bytes()))
        plain.append(out)
    t_rx, c_rx, (rx_qrels, rx_runs) = best_of(
        lambda: (
            ranx.Qrels.from_file(str(qrels_path), kind="trec"),
            [ranx.Run.from_file(str(p), kind="trec") for p in plain],
        ),
        repeats,
    )
    rows["ingest"] = (wall, cpu, t_pt, c_pt, t_rx, c_rx)

    # ---------------------------------------------------------------- one-shot
    def one_shot():
        tensor = metaeval.EvalTensor.build(runs, qrels)
        scores = metaeval.score_matrices(tensor, MEASURES)
        return tensor, scores, metaeval.scores_frame(scores, tensor.runs, tensor.topics)

    wall, cpu, (tensor, scores, _) = best_of(one_shot, repeats)

    def pytrec_all(q=pt_qrels):
        ev = pytrec_eval.RelevanceEvaluator(q, PYTREC_MEASURES)
        return [ev.evaluate(r) for r in pt_runs]

    t_pt_eval, c_pt_eval, pt_results = best_of(pytrec_all, repeats)
    diff_full = check_against_pytrec(scores, tensor, pt_results)
    ranx.evaluate(rx_qrels, rx_runs[0], RANX_MEASURES)  # numba compilation, not counted
    t_rx_eval, c_rx_eval, _ = best_of(
        lambda: [ranx.evaluate(rx_qrels, r, RANX_MEASURES) for r in rx_runs], repeats
    )
    rows["one-shot"] = (wall, cpu, t_pt_eval, c_pt_eval, t_rx_eval, c_rx_eval)
    t_build, _, _ = best_of(lambda: metaeval.EvalTensor.build(runs, qrels), repeats)
    t_measures, _, _ = best_of(lambda: metaeval.score_matrices(tensor, MEASURES), repeats)
    # the build's lookup of every retrieved id among the judged ids, in one batch (one thread)
    docs = pa.chunked_array([r.docs for r in runs])
    join = _Join(qrels)
    t_hash, _, _ = best_of(lambda: join.lookup(docs), repeats)
    t_frame, _, _ = best_of(
        lambda: metaeval.scores_frame(scores, tensor.runs, tensor.topics), repeats
    )
    rows["  of which: tensor"] = (t_build, None, None, None, None, None)
    rows[f"    (runs not interned: hash lookup of the {len(docs):,} retrieved ids)"] = (t_hash,) + (
        None,
    ) * 5
    rows["  of which: 5 measures"] = (t_measures, None, None, None, None, None)
    rows["  of which: tidy frame"] = (t_frame, None, None, None, None, None)

    # ---------------------------------------------------------------- 20 judgment sets
    sets = judgment_sets(tensor)
    pt_sets = [j.to_qrels().to_dict() for j in sets]
    keeps = [(j.keep, j.dropped) for j in sets]

    def rejudged():
        t = metaeval.EvalTensor.build(runs, qrels)
        return [metaeval.score_matrices(t.with_judgments(k, dropped=d), MEASURES) for k, d in keeps]

    wall, cpu, set_scores = best_of(rejudged, repeats)
    t_pt_sets, c_pt_sets, pt_set_results = best_of(
        lambda: [pytrec_all(q) for q in pt_sets], max(1, repeats // 2)
    )
    diff_set = check_against_pytrec(set_scores[-1], tensor, pt_set_results[-1])
    ranx.evaluate(ranx.Qrels(pt_sets[0]), rx_runs[0], RANX_MEASURES)
    t_rx_sets, c_rx_sets, _ = best_of(
        lambda: [
            [ranx.evaluate(q, r, RANX_MEASURES) for r in rx_runs]
            for q in (ranx.Qrels(d) for d in pt_sets)
        ],
        max(1, repeats // 2),
    )
    rows[f"re-judged: {len(sets)} judgment sets, tensor included"] = (
        wall,
        cpu,
        t_pt_sets,
        c_pt_sets,
        t_rx_sets,
        c_rx_sets,
    )
    t_set, _, _ = best_of(
        lambda: metaeval.score_matrices(
            tensor.with_judgments(keeps[-1][0], dropped=keeps[-1][1]), MEASURES
        ),
        repeats,
    )
    rows["  of which: one set (with_judgments + 5 measures)"] = (
        t_set,
        None,
        None,
        None,
        None,
        None,
    )

    # ---------------------------------------------------------------- files to scores
    def files_to_scores():
        r, q = metaeval.read_runs(run_paths), metaeval.read_qrels(qrels_path)
        t = metaeval.EvalTensor.build(r, q)
        s = metaeval.score_matrices(t, MEASURES)
        return metaeval.scores_frame(s, t.runs, t.topics)

    wall, cpu, _ = best_of(files_to_scores, repeats)

    def pytrec_files():
        q, r = pytrec_ingest()
        ev = pytrec_eval.RelevanceEvaluator(q, PYTREC_MEASURES)
        return [ev.evaluate(x) for x in r]

    t_pt_files, c_pt_files, _ = best_of(pytrec_files, max(1, repeats // 2))

    def ranx_files():
        q = ranx.Qrels.from_file(str(qrels_path), kind="trec")
        return [
            ranx.evaluate(q, ranx.Run.from_file(str(p), kind="trec"), RANX_MEASURES) for p in plain
        ]

    t_rx_files, c_rx_files, _ = best_of(ranx_files, max(1, repeats // 2))
    rows["files: read + one-shot"] = (wall, cpu, t_pt_files, c_pt_files, t_rx_files, c_rx_files)

    # ---------------------------------------------------------------- cold start
    if with_cold:
        run0, q = str(run_paths[0]), str(qrels_path)
        me = cold_start(
            f"import metaeval; print(metaeval.evaluate({run0!r}, {q!r}, 'AP', "
            "per_topic=False)['value'].iloc[0])",
            max(repeats, 5),
        )
        pt = cold_start(
            "import gzip, pytrec_eval\n"
            f"q = pytrec_eval.parse_qrel(open({q!r}))\n"
            f"r = pytrec_eval.parse_run(gzip.open({run0!r}, 'rt'))\n"
            "v = pytrec_eval.RelevanceEvaluator(q, {'map'}).evaluate(r)\n"
            "print(sum(x['map'] for x in v.values()) / len(v))",
            max(repeats, 5),
        )
        rx = cold_start(
            "import ranx\n"
            f"q = ranx.Qrels.from_file({q!r}, kind='trec')\n"
            f"r = ranx.Run.from_file({str(plain[0])!r}, kind='trec')\n"
            "print(ranx.evaluate(q, r, 'map'))",
            1,
        )
        rows["cold start to first result"] = (me[0], me[1], pt[0], pt[1], rx[0], rx[1])
    for p in plain:
        p.unlink()
    plain_dir.rmdir()
    facts = {
        "shape": tensor.shape,
        "entries": tensor.n_entries,
        "sparse": tensor.sparse,
        "diff_full": diff_full,
        "diff_set": diff_set,
        "n_sets": len(sets),
    }
    return name, len(runs), facts, rows


def fmt(v):
    return "-" if v is None else f"{v:.3f}"


def ratio(a, b):
    return "-" if a is None or b is None else f"{b / a:.1f}x"


def report(results, args, load_start, load_end) -> str:
    lines = [
        "# Evaluation against pytrec_eval and ranx",
        "",
        "Command (repository root): `python -W ignore benchmarks/bench_evaluate.py "
        f"--repeats {args.repeats}{' --skip-synthetic' if args.skip_synthetic else ''}`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, numpy {np.__version__}, pyarrow {pa.__version__}. "
        f"1-minute load average {load_start:.1f} at the start, {load_end:.1f} at the end "
        "(the machine is shared with other jobs). Wall times are the best of "
        f"{args.repeats} calls or more, as many as fill {MIN_SECONDS:g} s, for every tool "
        f"(pytrec_eval and ranx re-judged and files rows: best of {max(1, args.repeats // 2)}); "
        "CPU times (all threads of the process; for the cold "
        "start, user + system time of the child process) are those of the best repetition, "
        "and say less about how busy the machine was.",
        "",
    ]
    for name, _n_runs, _facts, rows in results[:1]:
        lines += ["Targets (ratios to pytrec_eval, " + name + "):", ""]
        for step, (me, cpu, pt, pt_cpu, _, _) in rows.items():
            key = step.split(":")[0]
            if key in TARGETS:
                got = pt / me
                verdict = "met" if got >= TARGETS[key] else f"missed by {TARGETS[key] / got:.2f}x"
                lines.append(
                    f"- {step}: {got:.1f}x, target >= {TARGETS[key]}x: {verdict} "
                    f"(CPU time: {pt_cpu / cpu:.1f}x)"
                )
        lines.append("")
    for name, n_runs, facts, rows in results:
        s, t, d = facts["shape"]
        share = facts["entries"] / (s * t * d)
        lines += [
            f"### {name} ({n_runs} runs, tensor {s} x {t} x {d}, {facts['entries']:,} judged "
            f"entries = {share:.0%}, {'sparse' if facts['sparse'] else 'dense'} path)",
            "",
            "| workload | metaeval (s) | pytrec_eval (s) | ranx (s) | vs pytrec_eval | vs ranx "
            "| CPU time: metaeval, pytrec_eval, ranx (s) | CPU vs pytrec_eval |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for step, (me, cpu, pt, pt_cpu, rx, rx_cpu) in rows.items():
            cpus = "-" if cpu is None else f"{fmt(cpu)}, {fmt(pt_cpu)}, {fmt(rx_cpu)}"
            if step.startswith("cold"):
                lines.append(f"| {step} | {fmt(me)} | {fmt(pt)} | {fmt(rx)} | - | - | {cpus} | - |")
            else:
                lines.append(
                    f"| {step} | {fmt(me)} | {fmt(pt)} | {fmt(rx)} | {ratio(me, pt)} | "
                    f"{ratio(me, rx)} | {cpus} | {ratio(cpu, pt_cpu)} |"
                )
        lines += [
            "",
            f"Largest difference from pytrec_eval's per-topic scores: {facts['diff_full']:.1e} "
            f"(full judgments), {facts['diff_set']:.1e} (the last of the {facts['n_sets']} "
            "judgment sets).",
            "",
        ]
    lines += [
        "Notes:",
        "",
        "- pytrec_eval's one-shot time includes building its RelevanceEvaluator from the "
        "qrels dict; metaeval's includes building the tensor and the tidy frame.",
        "- ranx reads plain text only, so its ingest reads decompressed copies (no gunzip); "
        "its first `evaluate` call (numba compilation) is made before timing. ranx's measures "
        "follow its own definitions; only pytrec_eval's are checked against metaeval's.",
        "- Cold start: a fresh `python -c` process that imports the tool, reads one DL run and "
        "the qrels, and prints MAP.",
        "- On DL 2020 the differences from pytrec_eval of the order of 1e-6 come from one "
        "topic of one run (terrier-InL2, topic 1109707): two of its scores are equal in single "
        "precision, where pytrec_eval sees a tie and orders the two documents by id, but not in "
        "double precision, by which metaeval ranks them.",
        "- read_runs interns the runs' document ids (one vocabulary for all), so the tensor "
        "row matches each distinct id once and each retrieved one by an integer gather. The "
        "hash lookup row times what the build does instead for runs that are not interned "
        "(built from DataFrames, dicts or simulators): its lookup of every retrieved document "
        "id among "
        "the distinct judged ids, in one batch on one thread (Arrow's hash join when a sample "
        "says few ids are judged, as on DL 2020; its index_in when most are, as on the "
        "synthetic collection); the tensor build splits the runs into batches "
        "(one per core from 2 million rows on, at most about 8 million rows each) and joins "
        "them on parallel threads, so its own time can be below this row's.",
    ]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-synthetic", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "evaluate.md")
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    results = []
    dl = DATA / "trec-dl-2020"
    if dl.exists():
        runs = sorted((dl / "runs").glob("*.gz"))
        results.append(bench("TREC DL 2020", dl / "qrels.txt", runs, args.repeats))
    else:
        print(f"skipping DL 2020: {dl} not found", file=sys.stderr)
    if not args.skip_synthetic:
        with tempfile.TemporaryDirectory() as tmp:
            qrels_path, paths = synthetic(Path(tmp))
            results.append(
                bench("synthetic 100 x 50 x 1000", qrels_path, paths, args.repeats, False)
            )
    text = report(results, args, load_start, os.getloadavg()[0])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
