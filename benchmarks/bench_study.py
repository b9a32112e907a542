"""Studies end to end: the quickstart and the Sakai & Kando (2008) study on TREC DL 2020.

For each study and executor (joblib/loky with 1 and 2 workers, a Dask LocalCluster with 2
workers) it runs the study from scratch into a temporary folder and reports the wall time, the
units of result per second, the time the workers spent in tasks, and the *overhead*: what the
run cost beyond the tasks themselves (planning, hashing the data files, writing parquet files,
scheduling), i.e. ``wall - task time / workers``.

Run from the repository root (TREC DL 2020 is read from ../shared/data):

    python benchmarks/bench_study.py [--out benchmarks/results/study.md] [--skip-dask]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_once(spec, jobs: int, scheduler=None) -> dict:
    from metaeval.study import run_study
    from metaeval.study.worlds import clear_cache

    clear_cache()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        summary = run_study(spec, Path(tmp) / "out", jobs=jobs, scheduler=scheduler, quiet=True)
        wall = time.perf_counter() - t0
    workers = 2 if scheduler is not None else jobs
    overhead = max(wall - summary.task_seconds / workers, 0.0)
    return {
        "wall": wall,
        "units": summary.planned,
        "tasks": summary.tasks,
        "task_seconds": summary.task_seconds,
        "criteria_seconds": summary.criteria_seconds,
        "overhead": overhead,
        "failed": summary.failed,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="also write the markdown report to this file")
    ap.add_argument("--skip-dask", action="store_true")
    args = ap.parse_args()
    from metaeval.study import load_spec

    quick = load_spec(ROOT / "studies" / "quickstart.toml")
    sk = load_spec(ROOT / "studies" / "sakai-kando-2008.toml")
    sk = dataclasses.replace(sk, worlds=tuple(w for w in sk.worlds if w.id == "dl2020"))
    rows = []
    for name, spec in (("quickstart", quick), ("sakai-kando-2008, DL 2020", sk)):
        for jobs in (1, 2):
            rows.append((name, f"loky x{jobs}", run_once(spec, jobs)))
            print(rows[-1], flush=True)
        if not args.skip_dask:
            from dask.distributed import Client, LocalCluster

            with (
                LocalCluster(
                    n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
                ) as cluster,
                Client(cluster) as client,
            ):
                rows.append((name, "dask x2 (LocalCluster)", run_once(spec, 2, client)))
            print(rows[-1], flush=True)
    lines = [
        "# Studies end to end",
        "",
        f"Machine: {platform.platform()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}. Command: `python benchmarks/bench_study.py`.",
        "Each row runs the study from scratch. *Units/s*: units of result (one world instance "
        "x level x trial x criterion x measure) per second of wall time. *Overhead*: wall time "
        "minus the workers' task time divided by the number of workers (planning, hashing the "
        "data files, writing results, scheduling).",
        "",
        "| study | executor | tasks | units | wall (s) | units/s | task time (s) | in criteria "
        "(s) | overhead (s) | overhead share |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, executor, r in rows:
        lines.append(
            f"| {name} | {executor} | {r['tasks']} | {r['units']} | {r['wall']:.1f} | "
            f"{r['units'] / r['wall']:.1f} | {r['task_seconds']:.1f} | "
            f"{r['criteria_seconds']:.1f} | {r['overhead']:.1f} | "
            f"{r['overhead'] / r['wall']:.0%} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
