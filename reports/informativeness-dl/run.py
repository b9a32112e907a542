"""Informativeness of AP, P@10, R-prec, nDCG and GAP on TREC DL 2019 and 2020.

Maximum-entropy reconstruction (Aslam, Yilmaz, Pavlu SIGIR 2005; Robertson, Kanoulas, Yilmaz
SIGIR 2010, seed 002 Fig. 2's analysis) with grades 0-3.  Two steps:

    python reports/informativeness-dl/run.py compute   # writes summary.csv, per_run.csv, curves.csv
    python reports/informativeness-dl/run.py figures   # draws the figures from the CSV files only

Binary measures use the TREC DL relevance level 2; graded measures are scored at every
threshold 1..3.  Topics: at least 5 judged documents at every threshold (seed 002).
"""

from __future__ import annotations

import itertools
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[2] / "shared" / "data"
if not DATA.exists():  # the repository's clone sits beside shared/
    DATA = Path("/work/shared/data")
YEARS = ("2019", "2020")
BINARY = ["AP", "P@10", "Rprec"]
STEP = 3  # g on the simplex in steps of 1/3: the 3 vertices, 6 edge points, the centre


def g_grid(step: int = STEP) -> list[tuple[float, ...]]:
    out = []
    for a, b in itertools.product(range(step + 1), repeat=2):
        c = step - a - b
        if c >= 0:
            out.append((a / step, b / step, c / step))
    return out


def gname(g) -> str:
    # 10 significant digits: thirds still sum to 1 within the measure's 1e-9 check
    return "GAP(g=(" + ",".join(f"{x:.10g}" for x in g) + "))"


def compute() -> None:
    import metaeval
    from metaeval.engine import EvalTensor
    from metaeval.meta.informativeness import informativeness_tensor
    from metaeval.meta.maxent import maxent_distribution, inferred_pr_curve, actual_pr_curve
    from metaeval.measures import parse_measure

    summaries, per_run, curves = [], [], []
    done = set()
    partial = HERE / "summary.partial.csv"
    if partial.exists():  # resume: measures already computed are not recomputed
        prev = pd.read_csv(partial)
        summaries.append(prev)
        per_run.append(pd.read_csv(HERE / "per_run.partial.csv"))
        done = set(zip(prev["year"].astype(str), prev["measure"]))
    tensors = {}
    for year in YEARS:
        base = DATA / f"trec-dl-{year}"
        runs = metaeval.read_runs(sorted((base / "runs").glob("*.gz")))
        qrels = metaeval.read_qrels(base / "qrels.txt")
        tensors[year] = EvalTensor.build(runs, qrels)
    for year in YEARS:
        tensor = tensors[year]
        # one example list: the list with the median AP among lists of topics with at least
        # 5 documents at every threshold, inferred from its AP and from its P@10
        ap = parse_measure("AP(rel=2)").compute(tensor)
        ok = tensor.answered & (tensor.lengths > 0) & \
            (np.flip(np.cumsum(np.flip(tensor.grade_counts, 1), 1), 1)[:, 1:] >= 5).all(1)[None, :]
        ss, tt = np.nonzero(ok)
        k = np.argsort(ap[ss, tt])[len(ss) // 2]
        s_i, t_i = int(ss[k]), int(tt[k])
        ex = {"run": tensor.runs[s_i], "topic": tensor.topics[t_i]}
        L = int(tensor.lengths[s_i, t_i])
        rel = (tensor.codes[s_i, t_i, :L] >= 2).astype(float)
        R = int(tensor.n_relevant(2)[t_i])
        prec, rec = actual_pr_curve(rel, R)
        curves.append(pd.DataFrame(dict(year=year, source="actual", rank=np.arange(1, L + 1),
                                        precision=prec, recall=rec)))
        for name in ("AP", "P@10"):
            v = float(parse_measure(f"{name.split('@')[0]}(rel=2)" + (f"@{name.split('@')[1]}" if "@" in name else "")).compute(tensor)[s_i, t_i])
            r = maxent_distribution(name, v, length=L, n_relevant=R, n_retrieved_relevant=rel.sum())
            pi, ri = inferred_pr_curve(r.p, R)
            curves.append(pd.DataFrame(dict(year=year, source=f"inferred from {name}={v:.3f}",
                                            rank=np.arange(1, L + 1), precision=pi, recall=ri)))
        curves[-1]["example"] = f"{ex['run']} / topic {ex['topic']}"
    pd.concat(curves).to_csv(HERE / "curves.csv", index=False)
    # most informative comparisons first, both years per measure, so that a stopped run
    # still has complete pairs of years (results are saved after every measure)
    grid = sorted(g_grid(), key=lambda g: (max(g) != min(g), max(g) != 1.0))
    measures = BINARY + ["nDCG"] + [gname(g) for g in grid]
    for m in measures:
        for year in YEARS:
            tensor = tensors[year]
            if (year, str(parse_measure(m))) in done:  # names as the results print them
                continue
            t0 = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                res = informativeness_tensor(tensor, [m], rel=2, stationarity_tol=1e-6)
            dt = time.perf_counter() - t0
            for w in caught:
                print(f"  warning: {w.message}", flush=True)
            s = res.summary.assign(year=year, seconds=dt)
            summaries.append(s)
            per_run.append(res.lists.groupby(["run", "measure", "threshold"], as_index=False)[
                ["rms_recall_points", "rms_interpolated"]].mean().assign(year=year))
            pd.concat(summaries).to_csv(partial, index=False)
            pd.concat(per_run).to_csv(HERE / "per_run.partial.csv", index=False)
            print(f"{year} {m:28s} {len(res.lists):6d} rows {dt:6.1f} s  "
                  f"rms={res.summary['rms'].round(4).tolist()}", flush=True)
    pd.concat(summaries).to_csv(HERE / "summary.csv", index=False)
    partial.unlink()
    (HERE / "per_run.partial.csv").unlink()
    pd.concat(per_run).to_csv(HERE / "per_run.csv", index=False)


def figures() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="paper")
    done = HERE / "summary.csv"
    summary = pd.read_csv(done if done.exists() else HERE / "summary.partial.csv")
    summary["family"] = np.where(summary["measure"].str.startswith("GAP"), "GAP", summary["measure"])

    # 1. the headline measures at threshold 2 (the TREC DL relevance level)
    uni = gname((1 / 3, 1 / 3, 1 / 3))
    head = summary[(summary["threshold"] == 2) & summary["measure"].isin(BINARY + ["nDCG", uni])].copy()
    head["measure"] = head["measure"].replace({uni: "GAP (uniform g)"})
    for err in ("rms_recall_points", "rms_interpolated"):
        fig, ax = plt.subplots(figsize=(6, 3.2))
        sns.barplot(head, x="measure", y=err, hue="year", ax=ax)
        ax.set_ylabel("mean RMS error (" + ("recall points" if err == "rms_recall_points" else "11-pt interpolated") + ")")
        ax.set_xlabel("")
        ax.set_title("Informativeness at threshold grade >= 2 (lower is better)")
        fig.tight_layout()
        fig.savefig(HERE / f"rms_by_measure_{err}.png", dpi=150)
        plt.close(fig)

    # 2. GAP over the g grid, per threshold, with nDCG for reference
    gap = summary[summary["family"] == "GAP"].copy()
    gap["g"] = gap["measure"].str.extract(r"g=\((.*)\)\)")[0].map(
        lambda t: "(" + ", ".join(f"{float(x):.2f}" for x in t.split(",")) + ")")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, year in zip(axes, YEARS):
        sub = gap[gap["year"].astype(str) == year]
        order = sub.groupby("g")["rms"].mean().sort_values().index
        sns.pointplot(sub, y="g", x="rms", hue="threshold", order=order, ax=ax, linestyles="none",
                      palette="viridis")
        nd = summary[(summary["measure"] == "nDCG") & (summary["year"].astype(str) == year)]
        for _, row in nd.iterrows():
            ax.axvline(row["rms"], ls=":", color=plt.cm.viridis((row["threshold"] - 1) / 2), lw=1)
        ax.set_title(f"DL {year}: GAP by g (dotted: nDCG per threshold)")
        ax.set_xlabel("mean RMS error (recall points)")
    fig.tight_layout()
    fig.savefig(HERE / "gap_by_g.png", dpi=150)
    plt.close(fig)

    # tables (markdown) from the same saved results
    lines = ["# Tables (generated by `run.py figures` from summary.csv)", ""]
    for err in ("rms_recall_points", "rms_interpolated"):
        t2 = summary[summary["threshold"] == 2].pivot_table(index="measure", columns="year", values=err)
        t2.index = [i.replace("0.3333333333", "1/3").replace("0.6666666667", "2/3") for i in t2.index]
        lines += [f"## Mean {err} at threshold grade >= 2 (all measures)", "", t2.round(4).to_markdown(), ""]
    g_all = summary[summary["family"].isin(["GAP", "nDCG"])].pivot_table(
        index="measure", columns=["year", "threshold"], values="rms_recall_points")
    g_all[("mean", "1-3")] = g_all.mean(axis=1)
    g_all = g_all.sort_values(("mean", "1-3"))
    g_all.index = [i.replace("0.3333333333", "1/3").replace("0.6666666667", "2/3") for i in g_all.index]
    g_all.columns = [f"{a} >= {b}" if a != "mean" else "mean" for a, b in g_all.columns]
    lines += ["## GAP over g and nDCG: mean rms_recall_points per year and threshold", "",
              g_all.round(4).to_markdown(), ""]
    inf = summary[summary["threshold"] == 2].pivot_table(index="measure", columns="year",
                                                          values=["rmse_AP", "rmse_P@10", "rmse_Rprec"])
    inf.index = [i.replace("0.3333333333", "1/3").replace("0.6666666667", "2/3") for i in inf.index]
    inf.columns = [f"{a} {b}" for a, b in inf.columns]
    lines += ["## RMS error of measures inferred from each measure's max-ent distribution (threshold 2)",
              "", inf.round(4).to_markdown(), ""]
    # a graded measure has one summary row per threshold for the same solves: count once
    once = summary.drop_duplicates(["year", "measure"])
    lists = once.groupby(["year"])[["n_lists", "not_converged"]].agg({"n_lists": "max", "not_converged": "sum"})
    lists["solves"] = once.groupby("year")["n_lists"].sum()
    lines += ["## Lists per year, solves (lists x measures) and non-converged solves",
              "", lists.to_markdown(), ""]
    (HERE / "tables.md").write_text("\n".join(lines))

    # 3. example curves
    curves = pd.read_csv(HERE / "curves.csv")
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, year in zip(axes, YEARS):
        sub = curves[curves["year"].astype(str) == year]
        sns.lineplot(sub, x="recall", y="precision", hue="source", ax=ax, estimator=None, sort=False)
        ex = sub["example"].dropna()
        ax.set_title(f"DL {year}: {ex.iloc[0] if len(ex) else ''}", fontsize=8)
        ax.set_xlim(0, 1)
    fig.tight_layout()
    fig.savefig(HERE / "example_pr_curves.png", dpi=150)
    plt.close(fig)


if __name__ == "__main__":
    steps = sys.argv[1:] or ["compute", "figures"]
    for step in steps:
        {"compute": compute, "figures": figures}[step]()
