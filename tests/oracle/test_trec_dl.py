"""Oracle: trec_eval (through pytrec_eval) on every official run of TREC DL 2019 and 2020, and
NIST's published per-run means (`official-summaries.json`)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import metaeval
from tests.conftest import float32_scores, need_data

pytrec_eval = pytest.importorskip("pytrec_eval")


# pytrec_eval measure -> metaeval measure, for a relevance level.
def measure_map(rel: int) -> dict[str, str]:
    b = f"(rel={rel})" if rel != 1 else ""
    return {
        "map": f"AP{b}",
        "map_cut_10": f"AP{b}@10",
        "P_10": f"P{b}@10",
        "P_100": f"P{b}@100",
        "Rprec": f"Rprec{b}",
        "recip_rank": f"RR{b}",
        "recall_100": f"R{b}@100",
        "recall_1000": f"R{b}@1000",
        "ndcg": "nDCG",
        "ndcg_cut_10": "nDCG@10",
        "bpref": f"Bpref{b}",
        "infAP": f"infAP{b}",
        "success_1": f"Success{b}@1",
        "success_10": f"Success{b}@10",
        "num_ret": "NumRet",
        "num_rel": f"NumRel{b}",
        "num_rel_ret": f"NumRelRet{b}",
    }


@pytest.mark.parametrize("rel", [1, 2])
def test_per_topic_equal_to_pytrec_eval(dl_collection, rel):
    year, qrels, runs = dl_collection
    runs = float32_scores(runs)
    names = measure_map(rel)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels.to_dict(), set(names), relevance_level=rel)
    ours = metaeval.evaluate(runs, qrels, list(names.values()), missing="skip")
    ours = ours.set_index(["run", "topic", "measure"])["value"].to_dict()
    # each measure's canonical name, parsed once (not once per run, topic and measure)
    canonical = {name: str(metaeval.parse_measure(m)) for name, m in names.items()}
    compared = 0
    for run in runs:
        for topic, values in evaluator.evaluate(run.to_dict()).items():
            for name, value in values.items():
                got = ours[(run.name, topic, canonical[name])]
                assert abs(got - value) < 1e-9, (year, run.name, topic, name, got, value)
                compared += 1
    assert compared == len(runs) * len(qrels.topics) * len(names)


def test_gm_map_equal_to_pytrec_eval(dl_collection):
    year, qrels, runs = dl_collection
    runs = float32_scores(runs)
    ap = metaeval.evaluate(runs, qrels, "AP(rel=2)", missing="skip")
    for run in list(runs)[:5]:
        values = pytrec_eval.RelevanceEvaluator(
            qrels.to_dict(), {"map"}, relevance_level=2
        ).evaluate(run.to_dict())
        expected = np.exp(np.mean([np.log(max(v["map"], 1e-5)) for v in values.values()]))
        got = metaeval.Aggregate("gmean")(ap.loc[ap.run == run.name, "value"].to_numpy())
        assert got == pytest.approx(expected, abs=1e-12)


def _official(year: str) -> dict:
    return json.loads((need_data(f"trec-dl-{year}") / "official-summaries.json").read_text())


# trec_eval summary name -> metaeval measure (binary measures take rel).
_SUMMARY = {
    "map": "AP",
    "recip_rank": "RR",
    "bpref": "Bpref",
    "P_10": "P@10",
    "P_100": "P@100",
    "P_1000": "P@1000",
    "recall_10": "R@10",
    "recall_100": "R@100",
    "recall_1000": "R@1000",
    "ndcg": "nDCG",
    "ndcg_cut_10": "nDCG@10",
    "ndcg_cut_100": "nDCG@100",
    "ndcg_cut_1000": "nDCG@1000",
}


def _with_rel(measure: str, rel: int) -> str:
    if measure.startswith("nDCG") or rel == 1:
        return measure
    name, _, cut = measure.partition("@")
    return f"{name}(rel={rel})" + (f"@{cut}" if cut else "")


def _block_means(qrels, runs, rel: int) -> dict[tuple[str, str], float]:
    measures = {k: _with_rel(v, rel) for k, v in _SUMMARY.items()}
    frame = metaeval.evaluate(runs, qrels, list(measures.values()), per_topic=False)
    by_name = frame.set_index(["run", "measure"])["value"]
    return {
        (run, k): by_name[(run, str(metaeval.parse_measure(m)))]
        for run in runs.names
        for k, m in measures.items()
    }


def test_official_summaries(dl_collection):
    """NIST's published means, to 4 decimals, every run and measure in the file.

    Block ``passages-eval``: relevance level 2 for binary measures, nDCG on the grades.
    Block ``trec_eval``: for DL 2020, grade 1 mapped to 0 and relevance level 1; for DL 2019,
    trec_eval's plain defaults (data README).

    The summaries were computed through pytrec_eval, which compares scores as float32, so the
    runs are rounded to float32 here too: in doubles (trec_eval 10, metaeval's default) a few
    runs with near-tied scores differ in the 4th decimal, e.g. DL 2019 TUA1-1 MAP 0.472356 in
    doubles against 0.472349 (published 0.4723) with float32 ties.
    """
    year, qrels, runs = dl_collection
    runs = float32_scores(runs)
    official = _official(year)
    level2 = _block_means(qrels, runs, rel=2)
    if year == "2020":
        shifted = qrels.to_df()
        shifted.loc[shifted.grade == 1, "grade"] = 0
        trec_eval_block = _block_means(metaeval.Qrels.from_df(shifted), runs, rel=1)
    else:
        trec_eval_block = _block_means(qrels, runs, rel=1)
    checked = 0
    for run in runs.names:
        assert run in official, f"run {run!r} has no official summary"
        for block, ours in (("passages-eval", level2), ("trec_eval", trec_eval_block)):
            for name, value in official[run].get(block, {}).items():
                assert ours[(run, name)] == pytest.approx(value, abs=5e-5 + 1e-12), (
                    year,
                    run,
                    block,
                    name,
                )
                checked += 1
    assert checked >= len(runs) * 16


def test_trec_eval_names_parse_to_the_measures_that_match_them():
    """Every trec_eval name of the oracle above, as trec_eval's output writes it (P_10) and as
    its -m option does (P.10), is the measure the oracle found equal to it."""
    for name, ours in measure_map(1).items():
        base, _, k = name.rpartition("_")
        for spelling in [name, f"{base}.{k}"] if k.isdigit() else [name]:
            assert metaeval.parse_measure(spelling) == metaeval.parse_measure(ours), spelling
    with pytest.raises(ValueError, match=r"did you mean 'ndcg_cut\.10'"):
        metaeval.parse_measure("ndcg_cutt.10")
