"""Reading, writing and converting runs and qrels; every malformed input gives a clear error."""

from __future__ import annotations

import gzip
import warnings

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval import TrecFormatError

RUN = """\
q1 Q0 d1 1 3.0 sysA
q1 Q0 d2 2 2.0 sysA
q1 Q0 d3 3 2.0 sysA
q2 Q0 d1 1 1.5 sysA
"""
QRELS = """\
q1 0 d1 1
q1 0 d3 2
q2 0 d1 0
q2 0 d9 1
"""


def write(tmp_path, name, text, *, compress=False):
    path = tmp_path / name
    if compress:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def bad(tmp_path, text, kind="run", **kwargs):
    path = write(tmp_path, f"bad.{kind}", text)
    reader = metaeval.read_run if kind == "run" else metaeval.read_qrels
    with pytest.raises(TrecFormatError) as info:
        reader(path, **kwargs)
    assert str(path) in str(info.value)
    return info.value


# ------------------------------------------------------------------ reading
def test_read_run_orders_by_score_then_docno_descending(tmp_path):
    run = metaeval.read_run(write(tmp_path, "a.run", RUN))
    assert run.name == "sysA"
    frame = run.to_df()
    # d2 and d3 tie at 2.0: trec_eval puts the larger docno first.
    assert frame.loc[frame.topic == "q1", "doc"].tolist() == ["d1", "d3", "d2"]
    assert frame["rank"].tolist() == [1, 2, 3, 1]


def test_ties_input_keeps_file_order(tmp_path):
    run = metaeval.read_run(write(tmp_path, "a.run", RUN), ties="input")
    assert run.to_df().loc[lambda f: f.topic == "q1", "doc"].tolist() == ["d1", "d2", "d3"]


def test_rank_column_is_ignored(tmp_path):
    text = "q1 Q0 a 3 0.1 s\nq1 Q0 b 1 0.9 s\nq1 Q0 c 2 0.5 s\n"
    assert metaeval.read_run(write(tmp_path, "r", text)).to_df()["doc"].tolist() == ["b", "c", "a"]


def test_gzip_and_mixed_whitespace_and_comments(tmp_path):
    text = "# a comment\nq1\tQ0  d1 1   3.0\tsysA\n\n  # indented comment\nq1 Q0 d2 2 2.0 sysA\r\n"
    for compress in (False, True):
        run = metaeval.read_run(
            write(tmp_path, f"r{compress}.gz" if compress else "r", text, compress=compress)
        )
        assert run.to_df()["doc"].tolist() == ["d1", "d2"]


def test_docids_may_contain_hash(tmp_path):
    text = "q1 Q0 doc#1 1 3.0 s\nq1 Q0 doc#2 2 2.0 s\n"
    assert metaeval.read_run(write(tmp_path, "r", text)).to_df()["doc"].tolist() == [
        "doc#1",
        "doc#2",
    ]


def test_read_qrels(tmp_path):
    qrels = metaeval.read_qrels(write(tmp_path, "q", QRELS + "q2 0 d5 -1\n"))
    assert list(qrels.topics) == ["q1", "q2"]
    assert qrels.to_dict() == {"q1": {"d1": 1, "d3": 2}, "q2": {"d1": 0, "d5": -1, "d9": 1}}


def test_negative_grades_become_pooled_unjudged(tmp_path):
    qrels = metaeval.read_qrels(write(tmp_path, "q", "q1 0 a -3\nq1 0 b 1\n"))
    assert qrels.to_dict() == {"q1": {"a": -1, "b": 1}}


def test_exact_duplicate_judgment_is_merged_with_warning(tmp_path):
    with pytest.warns(UserWarning, match="duplicate"):
        qrels = metaeval.read_qrels(write(tmp_path, "q", QRELS + "q1 0 d1 1\n"))
    assert len(qrels) == 4


# ------------------------------------------------------------------ bad input
def test_empty_file(tmp_path):
    assert "empty" in bad(tmp_path, "").problem
    assert "empty" in bad(tmp_path, "\n  \n", kind="qrels").problem


def test_only_comments(tmp_path):
    assert "no run lines" in bad(tmp_path, "# nothing\n").problem


def test_too_few_fields_names_the_line(tmp_path):
    err = bad(tmp_path, "q1 Q0 d1 1 3.0 s\n\nq1 Q0 d2 2 2.0\n")
    assert err.line == 3 and "expected 6 fields" in err.problem and "found 5" in err.problem


def test_too_many_fields(tmp_path):
    err = bad(tmp_path, "q1 Q0 d1 1 3.0 s\nq1 Q0 d2 2 2.0 s junk\n")
    assert err.line == 2 and "found 7" in err.problem and "extra_fields" in err.problem
    run = metaeval.read_run(tmp_path / "bad.run", extra_fields="ignore")
    assert run.name == "s" and len(run) == 2


def test_qrels_given_as_run(tmp_path):
    err = bad(tmp_path, QRELS)
    assert err.line == 1 and "looks like a qrels file" in err.problem


def test_run_given_as_qrels(tmp_path):
    err = bad(tmp_path, RUN, kind="qrels")
    assert err.line == 1 and "looks like a run file" in err.problem


@pytest.mark.parametrize("score", ["abc", "nan", "inf", "-inf", "NaN"])
def test_bad_score(tmp_path, score):
    err = bad(tmp_path, f"q1 Q0 d1 1 3.0 s\nq1 Q0 d2 2 {score} s\n")
    assert err.line == 2 and "score" in err.problem
    assert ("not a number" in err.problem) or ("not finite" in err.problem)


@pytest.mark.parametrize(
    "grade, problem",
    [("x", "not a number"), ("high", "not a number"), ("nan", "not a finite number")],
)
def test_bad_grade(tmp_path, grade, problem):
    # a real grade (1.5) is read: tests/measures/test_real_grades.py
    err = bad(tmp_path, f"q1 0 d1 1\nq1 0 d2 {grade}\n", kind="qrels")
    assert err.line == 2 and problem in err.problem and repr(grade) in err.problem


def test_grade_out_of_range(tmp_path):
    err = bad(tmp_path, "q1 0 d1 1\nq1 0 d2 300\n", kind="qrels")
    assert err.line == 2 and "127" in err.problem


def test_same_document_twice_in_a_topic(tmp_path):
    err = bad(tmp_path, "q1 Q0 d1 1 3.0 s\nq2 Q0 d1 1 3.0 s\nq1 Q0 d1 2 1.0 s\n")
    assert err.line == 3 and "ranked twice" in err.problem and "line 1" in err.problem


def test_conflicting_grades(tmp_path):
    err = bad(tmp_path, "q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 2\n", kind="qrels")
    assert err.line == 3 and "different grades" in err.problem and "line 1" in err.problem


def test_invalid_utf8(tmp_path):
    path = tmp_path / "bin.run"
    path.write_bytes(b"q1 Q0 d1 1 3.0 s\nq1 Q0 \xff\xfe 2 2.0 s\n")
    with pytest.raises(TrecFormatError) as info:
        metaeval.read_run(path)
    assert info.value.line == 2


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        metaeval.read_run(tmp_path / "nope.run")


def test_several_tags_in_one_file_warns(tmp_path):
    with pytest.warns(UserWarning, match="several run tags"):
        run = metaeval.read_run(write(tmp_path, "r", "q1 Q0 a 1 1 s1\nq1 Q0 b 2 0.5 s2\n"))
    assert run.name == "s1"


@pytest.mark.parametrize(
    "text, changed_at",
    [
        ("q1 Q0 a 1 1 s\nq1 Q0 b 2 0.5 s\n", None),
        ("q1 Q0 a 1 1 s\nq1 Q0 b 2 0.5 s", None),  # no newline at the end
        ("\n\nq1 Q0 a 1 1 s\n\nq1 Q0 b 2 0.5 s\n\n", None),  # blank lines
        ("q1\tQ0\ta\t1\t1\ts\nq1\tQ0\tb\t2\t0.5\ts\n", None),  # tabs
        ("q1 Q0 a 1 1 s\nq1 Q0 b 2 0.5 xs\n", 2),  # a tag that ends with the first one
        ("q1 Q0 a 1 1 s\nq1 Q0 b 2 0.5 s\nq1 Q0 c 3 0.2 s2", 3),  # the last line differs
        ("q1 Q0 a 1 1 s\n\nq1 Q0 b 2 0.5 t\n", 3),
    ],
)
def test_the_tag_of_every_line_is_checked(tmp_path, text, changed_at, recwarn):
    """Any tag other than the first line's, wherever it is, is found and its line named."""
    run = metaeval.read_run(write(tmp_path, "r", text))
    assert run.name == "s" and len(run) == len([x for x in text.splitlines() if x.strip()])
    warned = [str(w.message) for w in recwarn if "several run tags" in str(w.message)]
    if changed_at is None:
        assert not warned
    else:
        assert len(warned) == 1 and f"at line {changed_at}" in warned[0]


def test_two_files_with_the_same_tag_stay_apart(tmp_path):
    a = write(tmp_path, "a.run", RUN)
    b = write(tmp_path, "b.run", RUN.replace("3.0", "0.1"))
    with pytest.warns(UserWarning, match="same|run tag"):
        runs = metaeval.read_runs([a, b])
    assert runs.names == ["sysA (a.run)", "sysA (b.run)"]
    assert not np.array_equal(runs[0].scores, runs[1].scores)


def test_bad_arguments(tmp_path):
    path = write(tmp_path, "a.run", RUN)
    with pytest.raises(ValueError, match="ties"):
        metaeval.read_run(path, ties="random")
    with pytest.raises(ValueError, match="extra_fields"):
        metaeval.read_run(path, extra_fields="maybe")
    with pytest.raises(ValueError, match="paths"):
        metaeval.read_runs([])


# ------------------------------------------------------------------ conversion and writing
def test_round_trip_files(tmp_path):
    run = metaeval.read_run(write(tmp_path, "a.run", RUN))
    qrels = metaeval.read_qrels(write(tmp_path, "q", QRELS))
    metaeval.write_run(run, tmp_path / "out.run.gz")
    metaeval.write_qrels(qrels, tmp_path / "out.qrels")
    again = metaeval.read_run(tmp_path / "out.run.gz")
    assert again.to_dict() == run.to_dict() and again.name == run.name
    assert metaeval.read_qrels(tmp_path / "out.qrels") == qrels


def test_written_scores_keep_every_bit(tmp_path):
    scores = np.array([0.1 + 0.2, 1 / 3, 1e-300, 12345.678901234567])
    run = metaeval.Run("s", ["q"] * 4, ["a", "b", "c", "d"], scores)
    metaeval.write_run(run, tmp_path / "r")
    assert np.array_equal(np.sort(metaeval.read_run(tmp_path / "r").scores), np.sort(scores))


def test_dict_and_dataframe_conversions():
    qrels = metaeval.Qrels.from_dict({"1": {"a": 1, "b": 0}, "2": {"c": 2}})
    assert metaeval.Qrels.from_df(qrels.to_df()) == qrels
    frame = pd.DataFrame({"query_id": [1, 1], "doc_id": ["a", "b"], "relevance": [1, 0]})
    assert metaeval.Qrels.from_df(frame).to_dict() == {"1": {"a": 1, "b": 0}}
    runs = metaeval.RunSet.from_dict({"x": {"1": {"a": 2.0, "b": 1.0}}, "y": {"1": {"a": 0.5}}})
    assert runs.names == ["x", "y"]
    assert metaeval.RunSet.from_df(runs.to_df()).to_dict() == runs.to_dict()


def test_dataframe_errors():
    with pytest.raises(ValueError, match="grade"):
        metaeval.Qrels.from_df(pd.DataFrame({"topic": ["1"], "doc": ["a"], "grade": ["x"]}))
    with pytest.raises(ValueError, match="topic"):
        metaeval.Qrels.from_df(pd.DataFrame({"x": ["1"], "doc": ["a"], "grade": [1]}))
    with pytest.raises(ValueError, match="name is required"):
        metaeval.Run.from_df(pd.DataFrame({"topic": ["1"], "doc": ["a"], "score": [1.0]}))
    with pytest.raises(ValueError, match="score"):
        metaeval.Run.from_df(pd.DataFrame({"topic": ["1"], "doc": ["a"], "score": ["x"]}), "s")
    with pytest.raises(ValueError, match="unique"):
        run = metaeval.Run.from_dict({"1": {"a": 1.0}}, "s")
        metaeval.RunSet([run, run])
    with pytest.raises(TypeError):
        metaeval.Qrels.from_dict([("1", "a", 1)])


def test_no_warning_on_clean_input(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        metaeval.read_run(write(tmp_path, "a.run", RUN))
        metaeval.read_qrels(write(tmp_path, "q", QRELS))


@pytest.mark.parametrize(
    "ids",
    [
        ["5", "12", "7", "100"],  # numbers written the one way: interned by their values
        ["5", "05", "+5", "12"],  # three different documents that read as the number 5
        ["5", "1e3", "12", "x"],
        ["9" * 19, "5", "12", "7"],  # beyond int64
        ["1" + "0" * 18, "5", "12", "7"],  # 19 digits: within int64, beyond the judged ids' 18
        ["0", "00", "12", "7"],  # "0" is written the one way, "00" is another document
    ],
)
def test_runs_read_together_keep_their_documents_apart(tmp_path, ids):
    # read_runs interns the ids of all its runs in one vocabulary; evaluating must match a
    # run built without it, and a document must never be taken for another
    lines_a = [f"q1 Q0 {d} {i + 1} {10 - i} a" for i, d in enumerate(ids)]
    lines_b = [f"q1 Q0 {d} {i + 1} {10 - i} b" for i, d in enumerate(reversed(ids))]
    paths = [
        write(tmp_path, "a.run", "\n".join(lines_a)),
        write(tmp_path, "b.run", "\n".join(lines_b)),
    ]
    qrels = metaeval.read_qrels(write(tmp_path, "q.txt", f"q1 0 {ids[1]} 1\nq1 0 {ids[3]} 2\n"))
    runs = metaeval.read_runs(paths)
    frame = pd.concat([r.to_df().assign(run=r.name) for r in runs])
    assert [list(r.to_df()["doc"]) for r in runs] == [ids, list(reversed(ids))]
    measures = ["AP", "nDCG", "RR", "P@2"]
    got = metaeval.evaluate(runs, qrels, measures)["value"].to_numpy()
    plain = metaeval.evaluate(metaeval.RunSet.from_df(frame), qrels, measures)["value"].to_numpy()
    np.testing.assert_array_equal(got, plain)
    # relevant at ranks 2 and 4 of run a: AP = (1/2 + 2/4) / 2
    assert metaeval.evaluate(runs[0], qrels, ["AP"])["value"].iloc[0] == pytest.approx(0.5)


def test_numbered_ids_are_interned_by_their_numbers():
    import pyarrow as pa

    from metaeval.data.io import _intern

    docs = [pa.chunked_array([["30", "7", "1000"]]), pa.chunked_array([["7", "5"]])]
    vocab, codes, numbers = _intern(docs)
    assert vocab.to_pylist() == ["5", "7", "30", "1000"]  # by number: the numbered path ran
    assert numbers.tolist() == [5, 7, 30, 1000]
    assert [c.tolist() for c in codes] == [[2, 1, 3], [1, 0]]
    vocab, codes, numbers = _intern([pa.chunked_array([["30", "07", "7"]])])
    assert vocab.to_pylist() == ["30", "07", "7"]  # "07" is not "7": first appearance
    assert numbers is None
    assert codes[0].tolist() == [0, 1, 2]


def test_numbered_runs_match_only_the_same_ids_in_the_judgments(tmp_path):
    runs = metaeval.read_runs([write(tmp_path, "a.run", "q1 Q0 12 1 2 a\nq1 Q0 7 2 1 a\n")])
    qrels = metaeval.read_qrels(write(tmp_path, "q.txt", "q1 0 012 1\nq1 0 7 1\nq1 0 x 1\n"))
    # "012" is another document than "12": only 7, at rank 2, is relevant
    assert metaeval.evaluate(runs, qrels, ["AP"])["value"].iloc[0] == pytest.approx(0.5 / 3)
