"""Unusual but legitimate inputs, and bad ones: each read right or refused in one clear line."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import threading
import warnings

import numpy as np
import pytest

import metaeval
from metaeval.data import TrecFormatError, read_qrels, read_run, read_runs

BOM = b"\xef\xbb\xbf"
QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\nq2 0 d4 0\n"
RUN = b"q1 Q0 d2 1 3.0 r\nq1 Q0 d1 2 2.0 r\nq1 Q0 d3 3 1.0 r\nq2 Q0 d4 1 2.0 r\nq2 Q0 d1 2 1.0 r\n"


def _mean_ap(qrels_path, run_path) -> float:
    frame = metaeval.evaluate([str(run_path)], str(qrels_path), "AP", per_topic=False)
    return float(frame["value"].iloc[0])


def _variants(text: bytes) -> dict[str, bytes]:
    tabbed = text.replace(b" ", b"\t")
    return {
        "space": text,
        "tab": tabbed,
        "comment": b"# a comment\n" + text,
        "crlf": text.replace(b"\n", b"\r\n"),
        "mixed": text.replace(b" ", b"  \t", 1),
    }


@pytest.mark.parametrize("variant", ["space", "tab", "comment", "crlf", "mixed"])
@pytest.mark.parametrize("compress", [None, "gz"])
def test_byte_order_mark_is_removed_everywhere(tmp_path, variant, compress):
    expected = _mean_ap(_write(tmp_path, "plain.qrels", QRELS), _write(tmp_path, "plain.run", RUN))
    q = BOM + _variants(QRELS)[variant]
    r = BOM + _variants(RUN)[variant]
    if compress:
        q, r = gzip.compress(q), gzip.compress(r)
    qp, rp = _write(tmp_path, "bom.qrels", q), _write(tmp_path, "bom.run", r)
    assert list(read_qrels(qp).topics) == ["q1", "q2"]
    assert list(read_run(rp).topics) == ["q1", "q2"]
    assert _mean_ap(qp, rp) == pytest.approx(expected)


def _write(folder, name, data: bytes):
    path = folder / name
    path.write_bytes(data)
    return path


def test_bom_on_a_malformed_first_line_is_not_glued_to_the_topic(tmp_path):
    path = _write(tmp_path, "bad.qrels", BOM + b"q1 0 d1\n" + QRELS)
    with pytest.raises(TrecFormatError, match="line 1: expected 4 fields"):
        read_qrels(path)


@pytest.mark.parametrize("opener", [bz2.compress, lzma.compress])
def test_bz2_and_xz_files_are_read(tmp_path, opener):
    qp = _write(tmp_path, "q.bin", opener(QRELS))
    rp = _write(tmp_path, "r.bin", opener(RUN))
    assert len(read_qrels(qp)) == 5 and len(read_run(rp)) == 5


def test_cr_only_line_endings_are_read(tmp_path):
    qp = _write(tmp_path, "q.txt", QRELS.replace(b"\n", b"\r"))
    rp = _write(tmp_path, "r.txt", RUN.replace(b"\n", b"\r"))
    assert len(read_qrels(qp)) == 5 and len(read_run(rp)) == 5


def test_directory_given_as_a_file(tmp_path):
    with pytest.raises(TrecFormatError, match="is a directory, not a file"):
        read_qrels(tmp_path)
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_qrels(tmp_path / "absent.txt")


def test_same_file_twice_is_named(tmp_path):
    rp = _write(tmp_path, "r.run", RUN)
    with pytest.raises(ValueError, match=r"r\.run is given twice"):
        read_runs([rp, tmp_path / "." / "r.run"])


def _feed(path, data: bytes):
    def writer():
        with open(path, "wb") as fh:
            fh.write(data)

    t = threading.Thread(target=writer)
    t.start()
    return t


@pytest.mark.parametrize("compress", [False, True])
def test_named_pipes_are_read(tmp_path, compress):
    q_fifo, r_fifo = tmp_path / "q.fifo", tmp_path / "r.fifo"
    os.mkfifo(q_fifo)
    os.mkfifo(r_fifo)
    q = gzip.compress(QRELS) if compress else QRELS
    r = gzip.compress(RUN) if compress else RUN
    threads = [_feed(q_fifo, q), _feed(r_fifo, r)]
    qrels = read_qrels(q_fifo)
    runs = read_runs([r_fifo])
    for t in threads:
        t.join()
    assert len(qrels) == 5 and len(runs) == 1 and len(runs[0]) == 5


def test_a_pipe_file_descriptor_is_read(tmp_path):
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "wb") as fh:
        fh.write(QRELS)
    try:
        qrels = read_qrels(f"/dev/fd/{read_end}")
    finally:
        os.close(read_end)
    assert len(qrels) == 5


def test_skip_reports_a_run_with_no_answered_topic(tmp_path):
    qp = _write(tmp_path, "q.txt", QRELS)
    other = _write(tmp_path, "o.run", b"q9 Q0 d1 1 1.0 other\n")
    rp = _write(tmp_path, "r.run", RUN)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = metaeval.evaluate(
            [str(rp), str(other)], str(qp), "AP", per_topic=False, missing="skip"
        )
    assert any("other" in str(w.message) and "answered no topic" in str(w.message) for w in caught)
    row = frame[frame["run"] == "other"]
    assert len(row) == 1 and np.isnan(row["value"].iloc[0])
