"""Tests of metaeval.meta.informativeness and the ``metaeval informativeness`` command."""

import numpy as np
import pandas as pd
import pytest

from metaeval.engine import EvalTensor
from metaeval.evaluate import as_qrels, as_runset
from metaeval.meta.informativeness import informativeness, informativeness_tensor, measure_expectation
from metaeval.meta.maxent import MaxEntConvergenceWarning


def world(seed=0, n_topics=4, n_docs=60, depth=40):
    """Graded qrels (grades 0..3) and three runs of different quality."""
    rng = np.random.default_rng(seed)
    qrels, runs = {}, {"good": {}, "mid": {}, "random": {}}
    for t in range(n_topics):
        grades = rng.choice(4, size=n_docs, p=[0.55, 0.2, 0.15, 0.1])
        grades[:6] = [1, 1, 2, 2, 3, 3]  # at least 2 per grade: >= 6 at threshold 1, >= 4 at 2
        if t == n_topics - 1:
            grades[grades == 3] = 0  # the last topic has no grade-3 document: never selected
        docs = [f"d{t}_{i}" for i in range(n_docs)]
        qrels[f"q{t}"] = dict(zip(docs, map(int, grades)))
        for name, noise in (("good", 0.5), ("mid", 2.0), ("random", 50.0)):
            score = grades + rng.normal(0, noise, n_docs)
            top = np.argsort(-score)[:depth]
            runs[name][f"q{t}"] = {docs[i]: float(depth - k) for k, i in enumerate(top)}
    return qrels, runs


MEASURES = ["AP", "P@10", "Rprec", "RR", "nDCG", "nDCG@10", "nDCG(gain=exp)@5", "GAP",
            "GAP(g=(0.2,0.3,0.5))"]


def test_expectations_agree_with_the_measures_on_actual_lists():
    qrels, runs = world()
    tensor = EvalTensor.build(as_runset(runs), as_qrels(qrels))
    grades = np.maximum(tensor.codes, 0)
    G = tensor.n_grades - 1
    for name in MEASURES:
        exp, threshold, m = measure_expectation(name, tensor.n_grades, rel=2)
        scores = m.compute(tensor)
        for s in range(tensor.n_runs):
            for t in range(tensor.n_topics):
                if exp.graded:
                    P = np.eye(G + 1)[grades[s, t]]
                    value = exp.value(P, tensor.grade_counts[t, 1:])
                else:
                    x = (grades[s, t] >= threshold).astype(float)
                    value = exp.value(x, tensor.n_relevant(threshold)[t])
                assert value == pytest.approx(scores[s, t], abs=1e-12), (name, s, t)


def test_schema_selection_and_summary():
    qrels, runs = world()
    res = informativeness(runs, qrels, ["AP", "P@10", "GAP"], rel=2, min_relevant=2)
    lists = res.lists
    for col in ("run", "topic", "measure", "threshold", "value", "rms", "rms_recall_points",
                "rms_interpolated", "converged", "inferred_P@10", "actual_P@10"):
        assert col in lists
    # the topic without grade 3 is left out; 3 runs x 3 topics per measure and threshold
    assert set(lists["topic"]) == {"q0", "q1", "q2"}
    assert (lists.groupby(["measure", "threshold"]).size() == 9).all()
    assert set(lists.loc[lists["measure"] == "AP", "threshold"]) == {2}
    assert set(lists.loc[lists["measure"] == "GAP", "threshold"]) == {1, 2, 3}
    assert lists["converged"].all()
    assert (res.summary["n_lists"] == 9).all()
    ap = res.summary[res.summary["measure"] == "AP"].iloc[0]
    assert ap["rms"] == pytest.approx(lists.loc[lists["measure"] == "AP", "rms_recall_points"].mean())
    # AP determines its own expectation exactly; P@10 inferred from AP has an error
    assert ap["rmse_AP"] < 1e-8 and ap["rmse_P@10"] > 1e-3
    # a stricter selection keeps no topic
    assert informativeness(runs, qrels, ["AP"], min_relevant=1000).lists.empty


def test_ap_more_informative_than_precision_and_better_runs_are_easier():
    qrels, runs = world(seed=1, n_topics=6)
    res = informativeness(runs, qrels, ["AP", "P@10"], rel=1, min_relevant=2)
    s = res.summary.set_index("measure")["rms"]
    assert s["AP"] < s["P@10"]


def test_perfect_list_has_zero_error():
    qrels, _ = world(n_topics=2)
    ideal = {t: {d: float(10 * g + 1 / (1 + i)) for i, (d, g) in enumerate(docs.items())}
             for t, docs in qrels.items()}
    res = informativeness({"ideal": ideal}, qrels, ["AP", "GAP"], min_relevant=1)
    ap = res.lists[res.lists["measure"] == "AP"]
    assert np.allclose(ap["value"], 1.0) and ap["boundary"].all()
    assert (ap["rms_recall_points"] < 1e-12).all() and (ap["rms_interpolated"] < 1e-12).all()
    gap = res.lists[res.lists["measure"] == "GAP"]
    assert np.allclose(gap["value"], 1.0) and gap["boundary"].all() and (gap["rms"] < 1e-12).all()


def test_interpolated_error_and_determinism():
    qrels, runs = world()
    a = informativeness(runs, qrels, ["AP"], error="interpolated", min_relevant=2)
    b = informativeness(runs, qrels, ["AP"], error="interpolated", min_relevant=2)
    pd.testing.assert_frame_equal(a.lists, b.lists)
    np.testing.assert_array_equal(a.lists["rms"], a.lists["rms_interpolated"])


def test_sum_constraint_can_be_the_number_of_relevant_documents():
    qrels, runs = world()
    ret = informativeness(runs, qrels, ["AP", "GAP"], min_relevant=2)
    # some lists cannot hold R relevant documents with their value: flagged, with a warning
    with pytest.warns(MaxEntConvergenceWarning, match="infeasible"):
        rel = informativeness(runs, qrels, ["AP", "GAP"], min_relevant=2, count="relevant")
    assert not rel.lists["converged"].all()
    assert rel.lists.loc[~rel.lists["converged"], "rms_interpolated"].isna().all()
    # same lists, different reconstructions: the errors differ, the actual values do not
    np.testing.assert_array_equal(ret.lists["actual_AP"], rel.lists["actual_AP"])
    assert not np.allclose(ret.lists["rms_interpolated"], rel.lists["rms_interpolated"], equal_nan=True)
    # with sum p = R the expected number of relevant documents in the list is R
    ok = rel.lists["converged"] & (rel.lists["measure"] == "AP")
    assert ok.any()
    sub = rel.lists[ok]
    # inferred AP equals the actual value whenever the solve converged
    np.testing.assert_allclose(sub["inferred_AP"], sub["value"], atol=1e-8)


def test_input_validation():
    qrels, runs = world()
    with pytest.raises(ValueError, match="error must be one of"):
        informativeness(runs, qrels, ["AP"], error="rmse")
    with pytest.raises(ValueError, match="count must be one of"):
        informativeness(runs, qrels, ["AP"], count="R")
    with pytest.raises(ValueError, match="no maximum-entropy expectation"):
        informativeness(runs, qrels, ["bpref"])
    with pytest.raises(ValueError, match="min_relevant"):
        informativeness(runs, qrels, ["AP"], min_relevant=-1)
    with pytest.raises(ValueError, match="graded"):
        informativeness(runs, qrels, ["AP"], infer=["GAP"])
    tensor = EvalTensor.build(as_runset(runs), as_qrels(qrels))
    with pytest.raises(ValueError, match="condensed"):
        informativeness_tensor(tensor, ["AP'"])


def test_cli_prints_the_summary(tmp_path):
    from typer.testing import CliRunner

    from metaeval.cli import app

    qrels, runs = world()
    qfile = tmp_path / "qrels.txt"
    qfile.write_text("".join(f"{t} 0 {d} {g}\n" for t, docs in qrels.items() for d, g in docs.items()))
    rfiles = []
    for name, run in runs.items():
        f = tmp_path / f"{name}.run"
        f.write_text("".join(f"{t} Q0 {d} {k} {s} {name}\n" for t, docs in run.items()
                             for k, (d, s) in enumerate(docs.items())))
        rfiles.append(str(f))
    out = CliRunner().invoke(app, ["informativeness", str(qfile), *rfiles, "-m", "AP", "-m", "GAP",
                                   "--min-relevant", "2", "--plot", str(tmp_path / "fig")])
    assert out.exit_code == 0, out.output
    assert "AP" in out.output and "GAP" in out.output and "rms" in out.output
    assert (tmp_path / "fig" / "rms_by_measure.png").exists()
    assert (tmp_path / "fig" / "pr_curves.png").exists()
    bad = CliRunner().invoke(app, ["informativeness", str(qfile), *rfiles, "-m", "bpref"])
    assert bad.exit_code == 2
