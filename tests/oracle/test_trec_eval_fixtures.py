"""Oracle: trec_eval's own test suite (its inputs and expected outputs, `out.test*`).

Every value these files hold for a measure metaeval computes is compared to 4 decimals, per
topic and for the "all" line (a mean, or for num_* a sum, as trec_eval prints them).
"""

from __future__ import annotations

import contextlib
import re

import numpy as np
import pytest

import metaeval
from tests.conftest import FIXTURES, need_data

# trec_eval name -> metaeval measure (binary ones take the relevance level).
_PLAIN = {
    "map": "AP",
    "Rprec": "Rprec",
    "bpref": "Bpref",
    "recip_rank": "RR",
    "infAP": "infAP",
    "ndcg": "nDCG",
    "num_ret": "NumRet",
    "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
}
_CUT = {"P": "P", "recall": "R", "ndcg_cut": "nDCG", "success": "Success", "map_cut": "AP"}
_SUMMED = {"num_ret", "num_rel", "num_rel_ret"}
_GRADED = {"nDCG", "NumRet"}


def to_metaeval(name: str, rel: int) -> str | None:
    base, k = name, None
    m = re.fullmatch(r"(.+)_(\d+)", name)
    if m and m[1] in _CUT:
        base, k = _CUT[m[1]], int(m[2])
    elif name in _PLAIN:
        base = _PLAIN[name]
    else:
        return None
    text = base if base in _GRADED or rel == 1 else f"{base}(rel={rel})"
    return text + (f"@{k}" if k else "")


def expected(out_file: str) -> list[tuple[str, str, float]]:
    rows = []
    for line in (FIXTURES / out_file).read_text().splitlines():
        measure, topic, value = line.split()
        with contextlib.suppress(ValueError):  # runid and other text values
            rows.append((measure, topic, float(value)))
    return rows


CASES = {
    # out file: (qrels, run, relevance level, -c, -M, extra fields)
    "out.test": ("qrels.test", "results.test", 1, False, None),
    "out.test.a": ("qrels.test", "results.test", 1, False, None),
    "out.test.aq": ("qrels.test", "results.test", 1, False, None),
    "out.test.aqc": ("qrels.test", "results.trunc", 1, True, None),
    "out.test.aqcM": ("qrels.test", "results.trunc", 1, True, 100),
    "out.test.aql": ("qrels.rel_level", "results.test", 2, False, None),
    "out.comment.test": ("qrels.comment.test", "results.comment.test", 1, False, None),
}


@pytest.mark.parametrize("out_file", sorted(CASES))
def test_matches_trec_eval_output(out_file):
    need_data("trec_eval-fixtures")
    qrels_file, run_file, rel, complete, depth = CASES[out_file]
    rows = [(m, t, v) for m, t, v in expected(out_file) if to_metaeval(m, rel) or m == "gm_map"]
    measures = sorted(
        {to_metaeval(m, rel) for m, _, _ in rows if m != "gm_map"}
        | {"AP" if rel == 1 else f"AP(rel={rel})"}
    )
    run = metaeval.read_run(FIXTURES / run_file, extra_fields="ignore")
    qrels = metaeval.read_qrels(FIXTURES / qrels_file)
    # Topics without judgments are not evaluated (trec_eval too); the warning is tested elsewhere.
    tensor = metaeval.EvalTensor.build(run, qrels, depth=depth, warn_extra_topics=False)
    scores = metaeval.score_matrices(tensor, measures, missing="zero" if complete else "skip")
    topics = list(tensor.topics)
    checked = 0
    for measure, topic, value in rows:
        name = to_metaeval(measure, rel) if measure != "gm_map" else None
        if topic == "all":
            if measure == "gm_map":
                ap = scores["AP" if rel == 1 else f"AP(rel={rel})"][0]
                got = metaeval.Aggregate("gmean")(ap[~np.isnan(ap)])
            elif measure in _SUMMED:
                got = np.nansum(scores[name][0])
            else:
                got = np.nanmean(scores[name][0])
        else:
            got = scores[name][0, topics.index(topic)]
        assert got == pytest.approx(value, abs=5e-5 if value < 100 else 0.5), (measure, topic)
        checked += 1
    assert checked >= 15


def test_o2_graded_qrels_with_unjudged_documents():
    """docs/methods.md O2: qrels.rel_level (grades 0-4, -1 unjudged) with -l2."""
    need_data("trec_eval-fixtures")
    frame = metaeval.evaluate(
        FIXTURES / "results.test",
        FIXTURES / "qrels.rel_level",
        ["AP(rel=2)", "infAP(rel=2)", "nDCG", "Bpref(rel=2)"],
    )
    got = frame.set_index(["topic", "measure"])["value"]
    assert got["301", "AP(rel=2)"] == pytest.approx(0.0003, abs=5e-5)
    assert got["301", "infAP(rel=2)"] == pytest.approx(0.0003, abs=5e-5)
    assert got["301", "nDCG"] == pytest.approx(0.1396, abs=5e-5)
    assert got["303", "AP(rel=2)"] == pytest.approx(0.0823, abs=5e-5)
    assert got["303", "infAP(rel=2)"] == pytest.approx(0.1200, abs=5e-5)
    assert got["303", "nDCG"] == pytest.approx(0.3669, abs=5e-5)
    means = metaeval.evaluate(
        FIXTURES / "results.test",
        FIXTURES / "qrels.rel_level",
        ["AP(rel=2)", "Bpref(rel=2)", "infAP(rel=2)", "nDCG"],
        per_topic=False,
    ).set_index("measure")["value"]
    assert means["AP(rel=2)"] == pytest.approx(0.1667, abs=5e-5)
    assert means["Bpref(rel=2)"] == pytest.approx(0.1571, abs=5e-5)
    assert means["infAP(rel=2)"] == pytest.approx(0.1792, abs=5e-5)
    assert means["nDCG"] == pytest.approx(0.3894, abs=5e-5)
    gm = metaeval.evaluate(
        FIXTURES / "results.test",
        FIXTURES / "qrels.rel_level",
        "AP(rel=2)",
        per_topic=False,
        agg="gmean",
    )["value"].iloc[0]
    assert gm == pytest.approx(0.0210, abs=5e-5)


def test_o10_bpref_worked_example():
    """docs/methods.md O10 (trec_eval bpref_bug): 1 non-relevant then 4 relevant retrieved;
    3 non-relevant and 2 relevant unretrieved (R = 6, N = 4): bpref = 4 * 3/4 / 6 = 0.5."""
    qrels = {
        "q": {
            "n1": 0,
            "r1": 1,
            "r2": 1,
            "r3": 1,
            "r4": 1,
            "n2": 0,
            "n3": 0,
            "n4": 0,
            "r5": 1,
            "r6": 1,
        }
    }
    run = {"sys": {"q": {"n1": 5.0, "r1": 4.0, "r2": 3.0, "r3": 2.0, "r4": 1.0}}}
    value = metaeval.evaluate(run, qrels, "Bpref")["value"].iloc[0]
    assert value == pytest.approx(0.5)
