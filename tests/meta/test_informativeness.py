"""Tests of metaeval.meta.informativeness and the ``metaeval informativeness`` command."""

import numpy as np
import pandas as pd
import pytest

from metaeval.engine import EvalTensor
from metaeval.evaluation import as_qrels, as_runset
from metaeval.meta.informativeness import (
    informativeness,
    informativeness_tensor,
    measure_expectation,
)
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


MEASURES = [
    "AP",
    "P@10",
    "Rprec",
    "RR",
    "nDCG",
    "nDCG@10",
    "nDCG(gain=exp)@5",
    "GAP",
    "GAP(g=(0.2,0.3,0.5))",
]


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
    # the topic rule (select="topics"); the list rule is tested below
    res = informativeness(
        runs, qrels, ["AP", "P@10", "GAP"], rel=2, min_relevant=2, select="topics"
    )
    lists = res.lists
    for col in (
        "run",
        "topic",
        "measure",
        "threshold",
        "value",
        "rms",
        "rms_recall_points",
        "rms_interpolated",
        "converged",
        "inferred_P@10",
        "actual_P@10",
    ):
        assert col in lists
    # the topic without grade 3 is left out; 3 runs x 3 topics per measure and threshold
    assert set(lists["topic"]) == {"q0", "q1", "q2"}
    assert (lists.groupby(["measure", "threshold"]).size() == 9).all()
    assert set(lists.loc[lists["measure"] == "AP", "threshold"]) == {2}
    assert set(lists.loc[lists["measure"] == "GAP", "threshold"]) == {1, 2, 3}
    assert lists["converged"].all()
    assert (res.summary["n_lists"] == 9).all()
    ap = res.summary[res.summary["measure"] == "AP"].iloc[0]
    assert ap["rms"] == pytest.approx(
        lists.loc[lists["measure"] == "AP", "rms_recall_points"].mean()
    )
    # AP determines its own expectation exactly; P@10 inferred from AP has an error
    assert ap["rmse_AP"] < 1e-8 and ap["rmse_P@10"] > 1e-3
    # a stricter selection keeps no topic
    assert informativeness(runs, qrels, ["AP"], min_relevant=1000, select="topics").lists.empty
    assert informativeness(runs, qrels, ["AP"], min_relevant=1000).lists.empty


def test_ap_more_informative_than_precision_and_better_runs_are_easier():
    qrels, runs = world(seed=1, n_topics=6)
    res = informativeness(runs, qrels, ["AP", "P@10"], rel=1, min_relevant=2)
    s = res.summary.set_index("measure")["rms"]
    assert s["AP"] < s["P@10"]


def test_perfect_list_has_zero_error():
    qrels, _ = world(n_topics=2)
    ideal = {
        t: {d: float(10 * g + 1 / (1 + i)) for i, (d, g) in enumerate(docs.items())}
        for t, docs in qrels.items()
    }
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
    assert not np.allclose(
        ret.lists["rms_interpolated"], rel.lists["rms_interpolated"], equal_nan=True
    )
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


def test_cli_prints_the_summary(cli, tmp_path):
    qrels, runs = world()
    qfile = tmp_path / "qrels.txt"
    qfile.write_text(
        "".join(f"{t} 0 {d} {g}\n" for t, docs in qrels.items() for d, g in docs.items())
    )
    rfiles = []
    for name, run in runs.items():
        f = tmp_path / f"{name}.run"
        f.write_text(
            "".join(
                f"{t} Q0 {d} {k} {s} {name}\n"
                for t, docs in run.items()
                for k, (d, s) in enumerate(docs.items())
            )
        )
        rfiles.append(str(f))
    out = cli(
        [
            "informativeness",
            str(qfile),
            *rfiles,
            "-m",
            "AP",
            "-m",
            "GAP",
            "--min-relevant",
            "2",
            "--plot",
            str(tmp_path / "fig"),
        ],
    )
    assert out.exit_code == 0, out.output
    assert "AP" in out.output and "GAP" in out.output and "rms" in out.output
    assert (tmp_path / "fig" / "rms_by_measure.png").exists()
    assert (tmp_path / "fig" / "pr_curves.png").exists()
    bad = cli(["informativeness", str(qfile), *rfiles, "-m", "bpref"])
    assert bad.exit_code == 2


# ---------------------------------------------------------------------------------------
# one map from measure to expectation; names; list selection; errors; results
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "nDCG(gains={1:1,2:3,3:7})",
        "nDCG(gain=exp)@5",
        "nDCG(gains={2:0})",
        "GAP(g=(0.2,0.3,0.5))",
        "AP(rel=2)",
        "P@10",
    ],
)
def test_measure_expectation_is_expectation_for(name):
    from metaeval.meta.maxent import expectation_for

    qrels, runs = world()
    tensor = EvalTensor.build(as_runset(runs), as_qrels(qrels))
    exp, threshold, m = measure_expectation(name, tensor.n_grades)
    assert exp == expectation_for(m, n_grades=tensor.n_grades)
    assert exp == expectation_for(name, n_grades=tensor.n_grades)
    assert threshold == (None if exp.graded else exp.threshold)
    # the expectation of the actual list is the measure's own score
    scores = m.compute(tensor)
    grades = np.maximum(tensor.codes, 0)
    for s in range(tensor.n_runs):
        for t in range(tensor.n_topics):
            if exp.graded:
                value = exp.value(np.eye(tensor.n_grades)[grades[s, t]], tensor.grade_counts[t, 1:])
            else:
                x = (grades[s, t] >= threshold).astype(float)
                value = exp.value(x, tensor.n_relevant(threshold)[t])
            assert value == pytest.approx(scores[s, t], abs=1e-12), (name, s, t)


def selection_world():
    """Grades 0..2. Topic A has 4 documents of each grade; topic B has 5 of grade 1 and none
    of grade 2. Run "full" retrieves everything relevant; run "few" one relevant document."""
    qrels = {
        "A": {
            **{f"a1_{i}": 1 for i in range(4)},
            **{f"a2_{i}": 2 for i in range(4)},
            **{f"a0_{i}": 0 for i in range(10)},
        },
        "B": {**{f"b1_{i}": 1 for i in range(5)}, **{f"b0_{i}": 0 for i in range(10)}},
    }

    def ranked(docs):
        return {d: float(len(docs) - k) for k, d in enumerate(docs)}

    runs = {
        "full": {
            "A": ranked(
                [
                    "a2_0",
                    "a0_0",
                    "a1_0",
                    "a2_1",
                    "a1_1",
                    "a0_1",
                    "a2_2",
                    "a1_2",
                    "a2_3",
                    "a1_3",
                    "a0_2",
                ]
            ),
            "B": ranked(["b1_0", "b0_0", "b1_1", "b1_2", "b0_1", "b1_3", "b1_4", "b0_2"]),
        },
        "few": {
            "A": ranked(["a0_0", "a2_0", "a0_1", "a0_2", "a0_3"]),
            "B": ranked(["b0_0", "b1_0", "b0_1", "b0_2"]),
        },
    }
    return qrels, runs


def test_lists_are_selected_per_threshold_by_what_they_retrieved():
    qrels, runs = selection_world()
    res = informativeness(runs, qrels, ["AP", "AP(rel=2)", "GAP"], min_relevant=2)
    assert res.select == "lists"
    got = {
        (r.measure, r.threshold): sorted(zip(r_.run, r_.topic))
        for r, r_ in (
            (r, res.lists[(res.lists.measure == r.measure) & (res.lists.threshold == r.threshold)])
            for r in res.summary.itertuples()
        )
    }
    # "few" retrieved one relevant document per topic: never selected; topic B has no
    # grade-2 document, so its "full" list counts at threshold 1 only
    assert got == {
        ("AP", 1): [("full", "A"), ("full", "B")],
        ("AP(rel=2)", 2): [("full", "A")],
        ("GAP", 1): [("full", "A"), ("full", "B")],
        ("GAP", 2): [("full", "A")],
    }
    assert (res.lists["n_retrieved_relevant"] >= 2).all()
    # the topic rule keeps whole topics with 2 judged documents at every threshold: topic A
    # with both its lists, whatever they retrieved
    old = informativeness(runs, qrels, ["AP", "AP(rel=2)", "GAP"], min_relevant=2, select="topics")
    assert old.select == "topics"
    assert set(old.lists["topic"]) == {"A"}
    assert (
        old.lists.groupby(["measure", "threshold"])["run"].apply(sorted).map(tuple)
        == ("few", "full")
    ).all()
    assert set(zip(old.lists.measure, old.lists.threshold)) == {
        ("AP", 1),
        ("AP(rel=2)", 2),
        ("GAP", 1),
        ("GAP", 2),
    }
    with pytest.raises(ValueError, match="select must be one of"):
        informativeness(runs, qrels, ["AP"], select="runs")
    # a selected list whose GAP is undefined (g weighs only grade 2, which topic B lacks) is
    # flagged infeasible, with no inferred curve, rather than failing the whole batch
    gap = informativeness(runs, qrels, ["GAP(g=(0,1))"], min_relevant=2)
    b = gap.lists[gap.lists["topic"] == "B"]
    assert len(b) == 1 and not b["feasible"].any() and not b["converged"].any()
    assert b[["rms_recall_points", "rms_interpolated", "inferred_AP"]].isna().all().all()
    assert gap.summary.set_index("threshold")["infeasible"].to_dict() == {1: 1, 2: 0}


def test_relevance_level_above_the_top_grade_is_a_clear_error():
    qrels, runs = world()  # grades 0..3
    with pytest.raises(ValueError, match=r"rel=5 is above the highest grade in the qrels \(3\)"):
        informativeness(runs, qrels, ["AP"], rel=5)
    with pytest.raises(ValueError, match=r"AP\(rel=5\): rel=5 is above the highest grade"):
        informativeness(runs, qrels, ["AP(rel=5)"])
    with pytest.raises(ValueError, match=r"P\(rel=4\)@10: rel=4 is above"):
        informativeness(runs, qrels, ["GAP", "P(rel=4)@10"])


def test_names_are_the_parsed_measures_names_everywhere():
    qrels, runs = world()
    with pytest.warns(MaxEntConvergenceWarning) as record:
        res = informativeness(
            runs,
            qrels,
            ["map(rel=2)", "ndcg(gain=exp)@5", "gap(g=(0.2,0.3,0.5))"],
            infer=["P@10", "map"],
            min_relevant=2,
            count="relevant",
        )
    assert set(res.lists["measure"]) == {"AP(rel=2)", "nDCG(gain=exp)@5", "GAP(g=(0.2,0.3,0.5))"}
    assert {"inferred_P@10", "actual_AP"} <= set(res.lists)
    assert {"rmse_P@10", "rmse_AP"} <= set(res.summary)
    messages = [str(w.message) for w in record]
    assert any(m.startswith("informativeness(AP(rel=2))") for m in messages), messages
    assert any(m.startswith("informativeness(GAP(g=(0.2,0.3,0.5)))") for m in messages), messages
    assert all(w.filename == __file__ for w in record)


def test_summary_counts_infeasible_lists():
    qrels, runs = world()
    with pytest.warns(MaxEntConvergenceWarning, match="infeasible"):
        res = informativeness(runs, qrels, ["AP", "GAP"], min_relevant=2, count="relevant")
    assert "feasible" in res.lists and "infeasible" in res.summary
    per = (
        (~res.lists["feasible"])
        .groupby([res.lists["measure"], res.lists["threshold"]], sort=False)
        .sum()
    )
    np.testing.assert_array_equal(res.summary["infeasible"], per.to_numpy())
    assert res.summary["infeasible"].sum() > 0
    assert (res.summary["infeasible"] <= res.summary["not_converged"]).all()
    ok = informativeness(runs, qrels, ["AP"], min_relevant=2)
    assert (ok.summary["infeasible"] == 0).all()


def test_result_is_frozen_and_exports_tidy_frames():
    import dataclasses

    qrels, runs = world()
    res = informativeness(runs, qrels, ["AP", "GAP"], min_relevant=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.error = "interpolated"
    pd.testing.assert_frame_equal(res.to_frame(), res.summary)
    pd.testing.assert_frame_equal(res.to_frame("lists"), res.lists)
    assert res.min_relevant == 2 and res.count == "retrieved"
    with pytest.raises(ValueError, match="what must be one of"):
        res.to_frame("topics")


def test_topic_and_run_selection():
    qrels, runs = world()
    res = informativeness(
        runs, qrels, ["AP", "GAP"], min_relevant=2, topics=["q0", "q2"], run_names="good,random"
    )
    assert set(res.lists["topic"]) == {"q0", "q2"}
    assert set(res.lists["run"]) == {"good", "random"}
    sub_q = {t: qrels[t] for t in ("q0", "q2")}
    sub_r = {n: runs[n] for n in ("good", "random")}
    with pytest.warns(UserWarning, match="no judgments"):  # the runs' other topics
        direct = informativeness(sub_r, sub_q, ["AP", "GAP"], min_relevant=2)
    pd.testing.assert_frame_equal(res.lists, direct.lists)
    with pytest.raises(ValueError, match="not in the qrels"):
        informativeness(runs, qrels, ["AP"], topics=["q9"])
    with pytest.raises(ValueError, match="not among the runs"):
        informativeness(runs, qrels, ["AP"], run_names=["best"])


def test_cli_relevance_level_above_the_top_grade_is_one_line(cli, tmp_path):
    qrels, runs = world(n_topics=2)
    qfile = tmp_path / "qrels.txt"
    qfile.write_text(
        "".join(f"{t} 0 {d} {g}\n" for t, docs in qrels.items() for d, g in docs.items())
    )
    rfile = tmp_path / "good.run"
    rfile.write_text(
        "".join(
            f"{t} Q0 {d} {k} {s} good\n"
            for t, docs in runs["good"].items()
            for k, (d, s) in enumerate(docs.items())
        )
    )
    for args, name in ((["--rel", "5"], "rel=5"), (["-m", "AP(rel=5)"], "AP(rel=5): rel=5")):
        out = cli(["informativeness", str(qfile), str(rfile), *args])
        assert out.exit_code == 2, out.output
        assert out.output == f"error: {name} is above the highest grade in the qrels (3)\n"


# ---------------------------------------------------------------------------------------
# the example curves of one list, against curves and expectations computed by hand
# ---------------------------------------------------------------------------------------


def example_world():
    """Grades 0..2. On topic "t2" (the second topic, so that its position matters) the run
    "r" retrieves 20 documents, two of them unjudged (u0, u1): 5 of the 7 documents of grade
    >= 1 (a4 and h2 are missed, a5 is at rank 18) and 1 of the 2 of grade 2."""
    t2 = {"a1": 1, "a2": 1, "a3": 1, "a4": 1, "a5": 1, "h1": 2, "h2": 2}
    t2 |= {f"n{i}": 0 for i in range(16)}
    order = ["a1", "h1", "n0", "a2", "u0", "n1", "a3", "n2", "u1", "n3"]
    order += ["n4", "n5", "n6", "n7", "n8", "n9", "n10", "a5", "n11", "n12"]
    qrels = {"t1": {"x": 2, "y": 1, "z": 0}, "t2": t2}
    runs = {
        "r": {"t1": {"x": 2.0, "z": 1.0}, "t2": {d: 100.0 - k for k, d in enumerate(order)}},
        "s": {"t1": {"y": 2.0, "x": 1.0}, "t2": {"h2": 2.0, "a4": 1.0}},
    }
    grades = [t2.get(d, 0) for d in order]  # unjudged documents count as non-relevant
    return qrels, runs, grades, t2


def _hand_curve(rel_vec, R):
    found = np.cumsum(rel_vec)
    return found / np.arange(1, len(rel_vec) + 1), found / R


def _hand_ap(rel_vec, R):
    prec, _ = _hand_curve(rel_vec, R)
    return float(sum(prec[i] for i in range(len(rel_vec)) if rel_vec[i])) / R


@pytest.mark.filterwarnings("ignore::metaeval.meta.maxent.MaxEntConvergenceWarning")
@pytest.mark.parametrize("count", ["retrieved", "relevant"])
@pytest.mark.parametrize("depth", [None, 12])
def test_example_pr_curves_are_the_rows_of_the_result(count, depth):
    # The curves must be those the result scored: the row's value, the list as evaluated
    # (depth), the sum constraint of `count`, and the R of each measure's own threshold.
    from metaeval.meta.informativeness import example_pr_curves

    qrels, runs, grades, t2 = example_world()
    grades = np.array(grades[:depth])
    measures = ["AP", "AP(rel=2)", "P@5", "Rprec", "GAP"]
    res = informativeness(runs, qrels, measures, min_relevant=1, count=count, depth=depth)
    curves = example_pr_curves(res, runs, qrels, rel=1, run="r", topic="t2")
    assert list(curves.columns) == [
        "curve",
        "actual",
        "recall",
        "precision",
        "run",
        "topic",
        "threshold",
    ]
    assert (curves["run"] == "r").all() and (curves["topic"] == "t2").all()
    assert set(curves.loc[curves["actual"], "curve"]) == {
        "actual (grade >= 1)",
        "actual (grade >= 2)",
    }
    R = {j: sum(g >= j for g in t2.values()) for j in (1, 2)}  # judged, whatever retrieved
    assert R == {1: 7, 2: 2}
    rel = {j: (grades >= j).astype(float) for j in (1, 2)}
    # the actual curve at both thresholds drawn, by hand
    for j in (1, 2):
        actual = curves[curves["curve"] == f"actual (grade >= {j})"]
        prec, rec = _hand_curve(rel[j], R[j])
        np.testing.assert_allclose(actual["precision"], prec, rtol=0, atol=1e-15)
        np.testing.assert_allclose(actual["recall"], rec, rtol=0, atol=1e-15)
        assert (actual["threshold"] == j).all()
    values = {
        "AP": (_hand_ap(rel[1], R[1]), 1),
        "AP(rel=2)": (_hand_ap(rel[2], R[2]), 2),
        "P@5": (rel[1][:5].sum() / 5, 1),
        "Rprec": (rel[1][: R[1]].sum() / R[1], 1),
    }
    inferred = {
        c: d for c, d in curves.groupby("curve", sort=False) if c.startswith("inferred from ")
    }
    assert [c.split(" = ")[0][len("inferred from ") :] for c in inferred] == measures
    for name, (value, j) in values.items():
        d = inferred[f"inferred from {name} = {value:.3f}"]
        assert (d["threshold"] == j).all() and len(d) == len(grades)
        prec, rec = d["precision"].to_numpy(), d["recall"].to_numpy()
        ranks = np.arange(1, len(grades) + 1)
        # recall is drawn with the R of the measure's own threshold
        np.testing.assert_allclose(rec * R[j], prec * ranks, rtol=1e-12)
        # the sum constraint of the result: what the list retrieved, or R
        m = rel[j].sum() if count == "retrieved" else R[j]
        assert rec[-1] == pytest.approx(m / R[j], abs=1e-7)
        # the distribution reproduces the value it was inferred from
        p = np.diff(prec * ranks, prepend=0.0)
        if name.startswith("AP"):
            expected_ap = (p * (1 + np.cumsum(p) - p) / ranks).sum() / R[j]
            assert expected_ap == pytest.approx(value, abs=1e-7)
        elif name == "P@5":
            assert prec[4] == pytest.approx(value, abs=1e-7)
        else:
            assert prec[R[j] - 1] == pytest.approx(value, abs=1e-7)
    gap = next(d for c, d in inferred.items() if c.startswith("inferred from GAP = "))
    assert (gap["threshold"] == 1).all()
    m = rel[1].sum() if count == "retrieved" else R[1]
    assert gap["recall"].iloc[-1] == pytest.approx(m / R[1], abs=1e-7)


def test_example_pr_curves_leave_out_lists_the_result_did_not_score():
    from metaeval.meta.informativeness import example_pr_curves

    qrels, runs, grades, t2 = example_world()
    # with 2 relevant documents needed at threshold 2, the list counts at threshold 1 only
    res = informativeness(runs, qrels, ["AP", "AP(rel=2)"], min_relevant=2)
    curves = example_pr_curves(res, runs, qrels, run="r", topic="t2")
    assert list(dict.fromkeys(curves["curve"])) == [
        f"inferred from AP = {_hand_ap((np.array(grades) >= 1).astype(float), 7):.3f}",
        "actual",
    ]
    with pytest.raises(ValueError, match="did not score the list of run 'r' on topic 't1'"):
        example_pr_curves(res, runs, qrels, run="r", topic="t1")
