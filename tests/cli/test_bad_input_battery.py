"""The bad-input battery: several hundred bad or unusual inputs to every command and to the public
Python API, each with what it must do.

A command must either give the right answer (checked against an independent oracle: a TREC
reader written here and pytrec_eval, scipy for the tests) or stop with exactly one
``error: ...`` line that names the file (and line) or the option at fault, and a non-zero exit
status; a warning must be a ``warning: ...`` line. Each case is classified as the acceptance
battery classifies it (OK, TRACEBACK, SILENT-WRONG, UNCLEAR) and must be OK.

The commands run in this process through :func:`metaeval.cli.run` (what the console script
calls); only input from a pipe needs a subprocess.
"""

from __future__ import annotations

import bz2
import gzip
import importlib
import io
import json
import lzma
import math
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval.cli import run

pytrec_eval = pytest.importorskip("pytrec_eval")

ROOT = Path(__file__).resolve().parents[2]
BOM = b"\xef\xbb\xbf"


# ---------------------------------------------------------------------------------- the data
def _qrels() -> bytes:
    judged = {
        "1": {"d1": 3, "d2": 0, "d3": 1, "d4": 2, "d5": 0, "d6": 1},
        "2": {"d1": 0, "d7": 1, "d8": 2, "d9": 0},
        "3": {"d2": 1, "d3": -1, "d10": 0, "d11": 1},  # -1: pooled, not judged
        "10": {"d1": 0, "d12": 0},  # nothing relevant; "10" sorts before "2" as text
        "11": {"d13": 2, "d14": 1, "d15": 0},
    }
    return "".join(
        f"{t} 0 {d} {g}\n" for t, docs in judged.items() for d, g in docs.items()
    ).encode()


def _run(tag: str, topics: list[str], step: int) -> bytes:
    lines = []
    for n, t in enumerate(topics):
        for rank in range(1, 9):
            doc = f"d{(rank * step + n * 5) % 19 + 1}"
            lines.append(f"{t} Q0 {doc} {rank} {10 - 0.75 * rank + 0.01 * n:.3f} {tag}")
    return ("\n".join(lines) + "\n").encode()


QRELS = _qrels()
RUN_A = _run("A", ["1", "2", "3", "10", "11"], 3)
RUN_B = _run("B", ["1", "2", "3", "10", "99"], 7)  # misses 11, answers 99 (not judged)
RUN_C = _run("C", ["1", "2", "3", "10", "11"], 11)


# -------------------------------------------------------------------------------- the oracle
def ref_text(raw: bytes) -> str:
    """The reference reader: decompress, drop a BOM, universal newlines."""
    for magic, decompress in (
        (b"\x1f\x8b", gzip.decompress),
        (b"BZh", bz2.decompress),
        (b"\xfd7zXZ\x00", lzma.decompress),
    ):
        if raw.startswith(magic):
            raw = decompress(raw)
    text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.lstrip(" \t").removeprefix("\ufeff") for line in text.split("\n"))


def ref_lines(raw: bytes):
    for line in ref_text(raw).split("\n"):
        parts = [p.decode() for p in line.encode().split()]  # ASCII whitespace, as trec_eval
        if parts and not parts[0].startswith("#"):
            yield parts


def ref_qrels(raw: bytes) -> dict:
    out: dict = {}
    for t, _, d, g in ref_lines(raw):
        out.setdefault(t, {})[d] = max(int(float(g)), -1)
    return out


def ref_run(raw: bytes) -> tuple[str, dict]:
    out: dict = {}
    tag = None
    for t, _, d, _, s, tg in ref_lines(raw):
        tag = tag or tg
        out.setdefault(t, {})[d] = float(s)
    return tag, out


PTE = {  # metaeval name -> (pytrec_eval measure, result key)
    "AP": ("map", "map"),
    "AP@5": ("map_cut.5", "map_cut_5"),
    "P@1": ("P.1", "P_1"),
    "P@5": ("P.5", "P_5"),
    "P@10": ("P.10", "P_10"),
    "nDCG": ("ndcg", "ndcg"),
    "nDCG@5": ("ndcg_cut.5", "ndcg_cut_5"),
    "nDCG@10": ("ndcg_cut.10", "ndcg_cut_10"),
    "RR": ("recip_rank", "recip_rank"),
    "Rprec": ("Rprec", "Rprec"),
    "Bpref": ("bpref", "bpref"),
    "R@10": ("recall.10", "recall_10"),
    "Success@10": ("success.10", "success_10"),
    "NumRelRet": ("num_rel_ret", "num_rel_ret"),
}


def oracle(qrels_raw, runs_raw, measures, *, missing="zero", depth=None, topics=None):
    """Per-topic values over the qrels topics (a topic a run did not answer: 0 or left out)."""
    import re

    qrels = ref_qrels(qrels_raw)
    if topics is not None:
        qrels = {t: v for t, v in qrels.items() if t in topics}
    runs = [ref_run(r) for r in runs_raw]
    if depth is not None:
        runs = [
            (
                tag,
                {
                    t: dict(
                        sorted(d.items(), key=lambda kv: (-kv[1], [-b for b in kv[0].encode()]))[
                            :depth
                        ]
                    )
                    for t, d in r.items()
                },
            )
            for tag, r in runs
        ]
    rows = []
    for m in measures:
        parts = re.fullmatch(r"(\w+)(')?(?:\(rel=(\d+)\))?(@\d+)?", m)
        measure, key = PTE[parts[1] + (parts[4] or "")]
        evaluator = pytrec_eval.RelevanceEvaluator(
            qrels,
            {measure},
            relevance_level=int(parts[3] or 1),
            judged_docs_only_flag=bool(parts[2]),
        )
        for tag, r in runs:
            res = evaluator.evaluate(r)
            for t in sorted(qrels):
                if t in res:
                    rows.append((tag, t, m, float(res[t][key])))
                elif missing == "zero":
                    rows.append((tag, t, m, 0.0))
    return pd.DataFrame(rows, columns=["run", "topic", "measure", "value"])


def parse_csv(out: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(out), dtype={"topic": str, "run": str})


#: The counts of documents, summed over the topics on the CLI's "all" row as in trec_eval.
COUNTS = ("NumRet", "NumRel", "NumRelRet", "NumNonrelJudgedRet")


def compare_frames(got, want, per_topic=True, agg="mean", all_row=False):
    """None when equal to 1e-6, else the first difference. ``all_row``: the per-topic output
    ends with trec_eval's "all" row, the aggregate over topics (the CLI's, not the API's)."""
    keys = ["run", "topic", "measure"] if per_topic else ["run", "measure"]
    groups = want.groupby(["run", "measure"], sort=False)["value"]
    if agg == "gmean":
        overall = groups.apply(lambda v: math.exp(np.mean(np.log(np.maximum(v, 1e-5)))))
    else:
        overall = groups.mean()
        if all_row:  # trec_eval's summary line of a count of documents is its sum
            counts = overall.index.get_level_values("measure").isin(COUNTS)
            overall[counts] = groups.sum()[counts]
    overall = overall.reset_index()
    if not per_topic:
        want = overall
    elif all_row:
        want = pd.concat([want, overall.assign(topic="all")])
    g = got.set_index(keys)["value"].sort_index()
    w = want.set_index(keys)["value"].sort_index()
    if set(g.index) != set(w.index):
        return f"rows differ: unexpected {sorted(set(g.index) - set(w.index))[:3]}, missing {sorted(set(w.index) - set(g.index))[:3]}"
    w = w.reindex(g.index)
    if not np.allclose(g, w, atol=1e-6, rtol=0, equal_nan=True):
        k = (g - w).abs().idxmax()
        return f"value at {k}: {g[k]}, pytrec_eval says {w[k]}"
    return None


# ------------------------------------------------------------------------------- the checks
def evaluates(qrels, runs, measures, *, per_topic=True, agg="mean", **kw):
    def check(out, err, d):
        want = oracle(qrels, runs, measures, **kw)
        return compare_frames(parse_csv(out), want, per_topic, agg, all_row=True)

    return check


def base_eval(measures=("AP", "nDCG@10", "P@10"), runs=(RUN_A,), **kw):
    return evaluates(QRELS, list(runs), list(measures), **kw)


def has_rows(n: int):
    return lambda out, err, d: (
        None if len(out.strip().splitlines()) > n else f"too few rows: {out!r}"
    )


def file_exists(name: str, test: Callable | None = None):
    def check(out, err, d):
        p = Path(d) / name
        if not p.exists():
            return f"{name} was not written"
        return test(p) if test else None

    return check


def ttest_check(out, err, d):
    from scipy import stats

    per = oracle(QRELS, [RUN_A, RUN_C], ["AP"]).pivot(index="topic", columns="run", values="value")
    p = stats.ttest_rel(per["A"], per["C"]).pvalue
    got = float(parse_csv(out)["p_value"].iloc[0])
    return None if abs(got - p) <= 1e-5 * p else f"p {got}, scipy says {p}"


RUN_E = RUN_B.replace(b" B\n", b" E\n").replace(b"99 Q0", b"11 Q0")


def tau_check(out, err, d):
    from scipy import stats

    per = oracle(QRELS, [RUN_A, RUN_C, RUN_E], ["AP", "nDCG@10"])
    means = per.groupby(["measure", "run"])["value"].mean()
    tau = stats.kendalltau(means["AP"].sort_index(), means["nDCG@10"].sort_index()).statistic
    frame = parse_csv(out)
    got = float(frame[(frame.measure == "AP") & (frame.other == "nDCG@10")]["value"].iloc[0])
    return None if math.isclose(got, tau, abs_tol=1e-9) else f"tau {got}, scipy says {tau}"


def degraded_subset(rate):
    def check(out, err, d):
        before, after = ref_qrels(QRELS), ref_qrels((Path(d) / "out.qrels").read_bytes())
        for t, docs in after.items():
            for doc, g in docs.items():
                if before.get(t, {}).get(doc) != g:
                    return f"{t}/{doc} grade {g} is not the input's"
        n0 = sum(map(len, before.values()))
        n1 = sum(map(len, after.values()))
        ok = n1 <= n0 and abs(n1 - n0 * rate / 100) <= 2 * len(before) + 1
        return None if ok else f"kept {n1} of {n0} at rate {rate}"

    return check


def _kept(d) -> dict:
    """The judgments (grade >= 0) of the degraded qrels, by (topic, document)."""
    after = ref_qrels((Path(d) / "out.qrels").read_bytes())
    return {(t, doc): g for t, docs in after.items() for doc, g in docs.items() if g >= 0}


def judged_subset(at_most: int):
    """Some judgments are kept, at most ``at_most``, each with the input's grade."""

    def check(out, err, d):
        before, kept = ref_qrels(QRELS), _kept(d)
        wrong = [k for k, g in kept.items() if before.get(k[0], {}).get(k[1]) != g]
        if wrong or not 0 < len(kept) <= at_most:
            return f"kept {len(kept)} judgments; not the input's: {wrong[:3]}"
        return None

    return check


def pooled(depth: int, runs: tuple[bytes, ...]):
    """The judgments kept are the input's, of documents in the top ``depth`` of a run."""

    def check(out, err, d):
        before, kept = ref_qrels(QRELS), _kept(d)
        pool = set()
        for raw in runs:
            for t, docs in ref_run(raw)[1].items():
                pool |= {(t, doc) for doc in sorted(docs, key=docs.get, reverse=True)[:depth]}
        wrong = [k for k, g in kept.items() if k not in pool or before[k[0]].get(k[1]) != g]
        return f"kept {wrong[:3]}, not pooled judgments" if wrong or not kept else None

    return check


def normalised(path: Path, name: str, given: list[float]):
    """A world parameter of world.json is ``given`` scaled to sum to 1."""
    got = json.loads(path.read_text())["params"][name]
    want = [g / sum(given) for g in given]
    return None if np.allclose(got, want) else f"{name} {got}, expected {want}"


# -------------------------------------------------------------------------------- the cases
@dataclass
class Case:
    id: str
    cat: str
    argv: list | None = None
    expect: str = "error"  # ok | warn | error
    must: tuple = ()
    files: dict = field(default_factory=dict)
    check: Callable | None = None
    stdin: bytes | None = None
    shell: str | None = None  # a bash command line: pipes, process substitution
    steps: list = field(default_factory=list)  # commands that must succeed first
    api: Callable | None = None


CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def variants(text: bytes) -> dict[str, bytes]:
    return {
        "tabs": text.replace(b" ", b"\t"),
        "multi_space": text.replace(b" ", b"   "),
        "lead_trail_ws": b"\n".join(b"  " + x + b" \t" for x in text.split(b"\n") if x) + b"\n",
        "crlf": text.replace(b"\n", b"\r\n"),
        "cr_only": text.replace(b"\n", b"\r"),
        "no_final_newline": text.rstrip(b"\n"),
        "blank_lines": text.replace(b"\n", b"\n\n"),
        "comments": b"# header\n" + text.replace(b"\n", b"\n   # note\n", 2),
        "bom": BOM + text,
        "bom_tab": BOM + text.replace(b" ", b"\t"),
        "bom_comment": BOM + b"# c\n" + text,
        "bom_crlf": BOM + text.replace(b"\n", b"\r\n"),
        "bom_cr_only": BOM + text.replace(b"\n", b"\r"),
        "bom_leading_space": BOM + b" " + text,
        "bom_blank_first": BOM + b"\n" + text,
        "mixed_crlf_and_cr": text.replace(b"\n", b"\r\n", 3).replace(b"\n", b"\r", 2),
        "concatenated_with_boms": BOM
        + b"".join(text.splitlines(keepends=True)[:3])
        + BOM
        + b"".join(text.splitlines(keepends=True)[3:]),
        "gzip": gzip.compress(text),
        "bz2": bz2.compress(text),
        "xz": lzma.compress(text),
        "gzip_bom_crlf": gzip.compress(BOM + text.replace(b"\n", b"\r\n")),
        "bz2_bom_tab": bz2.compress(BOM + text.replace(b" ", b"\t")),
    }


# ---- 1. valid variants of the files: the same numbers as the plain files
for name, data in variants(QRELS).items():
    case(
        f"qrels-variant-{name}",
        "file formats",
        [
            "evaluate",
            "{d}/v.qrels",
            "{A}",
            "{B}",
            "--per-topic",
            "--format",
            "csv",
            "-m",
            "AP",
            "-m",
            "nDCG@10",
            "-m",
            "P@5",
        ],
        "warn",
        ("99",),  # run B answers topic 99, which has no judgments
        files={"v.qrels": data},
        check=evaluates(QRELS, [RUN_A, RUN_B], ["AP", "nDCG@10", "P@5"]),
    )
for name, data in variants(RUN_A).items():
    case(
        f"run-variant-{name}",
        "file formats",
        [
            "evaluate",
            "{Q}",
            "{d}/v.run",
            "--per-topic",
            "--format",
            "csv",
            "-m",
            "AP",
            "-m",
            "RR",
            "-m",
            "Rprec",
        ],
        "ok",
        files={"v.run": data},
        check=base_eval(["AP", "RR", "Rprec"]),
    )

# ---- 2. malformed qrels: one line naming the file, the line and the problem
for name, data, must in [
    ("three-fields", b"1 0 d1 1\n1 0 d2\n", ("bad.qrels", "line 2", "4 fields")),
    ("five-fields", b"1 0 d1 1\n1 0 d2 0 x\n", ("bad.qrels", "line 2", "4 fields")),
    ("run-given-as-qrels", RUN_A, ("bad.qrels", "line 1", "run file")),
    ("grade-word", b"1 0 d1 1\n1 0 d2 high\n", ("bad.qrels", "line 2", "high")),
    # a real grade (0.5) is read; more distinct real grades than int8 codes hold are not
    (
        "grade-too-many-levels",
        b"".join(b"1 0 d%d 0.%03d\n" % (i, i) for i in range(1, 200)),
        ("bad.qrels", "199 distinct grades", "round"),
    ),
    ("grade-nan", b"1 0 d1 nan\n", ("bad.qrels", "line 1", "'nan'")),
    ("grade-inf", b"1 0 d1 inf\n", ("bad.qrels", "line 1", "inf")),
    ("grade-huge", b"1 0 d1 1\n1 0 d2 100000\n", ("bad.qrels", "line 2", "127")),
    ("grade-1e30", b"1 0 d1 1e30\n", ("bad.qrels", "line 1", "1e30", "127")),
    ("grade-beyond-int64", b"1 0 d1 99999999999999999999999\n", ("bad.qrels", "line 1", "127")),
    ("conflicting-duplicate", b"1 0 d1 1\n1 0 d2 0\n1 0 d1 2\n", ("bad.qrels", "line 3", "twice")),
    ("empty", b"", ("bad.qrels", "empty")),
    ("only-comments", b"# a\n# b\n", ("bad.qrels", "comment")),
    ("only-whitespace", b" \n\t\n\n", ("bad.qrels", "empty")),
    ("only-bom", BOM, ("bad.qrels", "empty")),
    ("latin1", b"1 0 d\xe9 1\n", ("bad.qrels", "line 1", "UTF-8")),
    ("utf16", "1 0 d1 1\n".encode("utf-16"), ("bad.qrels", "UTF-16")),
    ("nul-bytes", b"1 0 d1 1\n\x00\x00\x00\n", ("bad.qrels", "line 2", "NUL")),
    ("nul-in-an-id", b"1 0 d1 1\n1 0 d\x002 0\n", ("bad.qrels", "line 2", "NUL")),
    ("corrupt-gzip", gzip.compress(QRELS)[:30], ("bad.qrels", "gzip")),
    ("corrupt-bz2", bz2.compress(QRELS)[:30], ("bad.qrels", "bz2")),
    ("corrupt-xz", lzma.compress(QRELS)[:30], ("bad.qrels", "xz")),
    ("gzip-of-gzip", gzip.compress(gzip.compress(QRELS)), ("bad.qrels", "compressed twice")),
    ("zip-archive", b"PK\x03\x04\x14\x00\x00\x00" + b"\x00" * 30, ("bad.qrels", "zip")),
    ("zstd", b"\x28\xb5\x2f\xfd" + b"\x00" * 20, ("bad.qrels", "zstd")),
    ("no-break-spaces-as-separators", "1\u00a00\u00a0d1\u00a01\n".encode(), ("line 1", "U+00A0")),
]:
    case(
        f"qrels-{name}",
        "malformed qrels",
        ["evaluate", "{d}/bad.qrels", "{A}"],
        "error",
        must,
        files={"bad.qrels": data},
    )
case(
    "qrels-exact-duplicate",
    "malformed qrels",
    ["evaluate", "{d}/dup.qrels", "{A}", "-m", "AP", "--per-topic", "--format", "csv"],
    "warn",
    ("dup.qrels", "duplicate"),
    files={"dup.qrels": QRELS + b"1 0 d1 3\n"},
    check=base_eval(["AP"]),
)
NEG = QRELS.replace(b"1 0 d2 0", b"1 0 d2 -2")
case(
    "qrels-negative-grades",
    "malformed qrels",
    [
        "evaluate",
        "{d}/neg.qrels",
        "{A}",
        "-m",
        "AP",
        "-m",
        "Bpref",
        "--per-topic",
        "--format",
        "csv",
    ],
    "ok",
    files={"neg.qrels": NEG},
    check=evaluates(NEG, [RUN_A], ["AP", "Bpref"]),
)
case(
    "qrels-grade-spellings",
    "malformed qrels",
    ["evaluate", "{d}/g.qrels", "{A}", "-m", "AP", "--per-topic", "--format", "csv"],
    "ok",
    files={"g.qrels": QRELS.replace(b"1 0 d1 3", b"1 0 d1 +3").replace(b"2 0 d8 2", b"2 0 d8 2.0")},
    check=base_eval(["AP"]),
)
ODD_Q = ("t\u00e9:1 0 " + "x" * 5000 + " 1\nt\u00e9:1 0 d,\"2 0\nt-3/x 0 d'1 2\n").encode()
ODD_R = (
    "t\u00e9:1 Q0 " + "x" * 5000 + ' 1 2.0 r\u00fcn\nt\u00e9:1 Q0 d,"2 2 1.0 r\u00fcn\n'
    "t-3/x Q0 d'1 1 1.0 r\u00fcn\n"
).encode()
case(
    "long-and-odd-ids",
    "malformed qrels",
    [
        "evaluate",
        "{d}/o.qrels",
        "{d}/o.run",
        "-m",
        "AP",
        "-m",
        "P@5",
        "--per-topic",
        "--format",
        "csv",
    ],
    "ok",
    files={"o.qrels": ODD_Q, "o.run": ODD_R},
    check=evaluates(ODD_Q, [ODD_R], ["AP", "P@5"]),
)

# ---- 3. malformed runs
for name, data, must in [
    ("five-fields", b"1 Q0 d1 1 2.0\n", ("bad.run", "line 1", "6 fields")),
    ("seven-fields", b"1 Q0 d1 1 2.0 A extra\n", ("bad.run", "line 1", "6 fields")),
    ("qrels-given-as-run", QRELS, ("bad.run", "line 1", "qrels file")),
    ("score-word", b"1 Q0 d1 1 2.0 A\n1 Q0 d2 2 high A\n", ("bad.run", "line 2", "high")),
    ("score-nan", b"1 Q0 d1 1 2.0 A\n1 Q0 d2 2 nan A\n", ("bad.run", "line 2", "'nan'")),
    ("score-inf", b"1 Q0 d1 1 -inf A\n", ("bad.run", "line 1", "'-inf'")),
    ("score-overflow", b"1 Q0 d1 1 1e400 A\n", ("bad.run", "line 1", "1e400")),
    (
        "duplicate-doc",
        b"1 Q0 d1 1 2 A\n1 Q0 d2 2 1.5 A\n1 Q0 d1 3 1 A\n",
        ("bad.run", "line 3", "twice"),
    ),
    ("empty", b"", ("bad.run", "empty")),
    ("only-comments", b"# nothing\n", ("bad.run", "comment")),
    ("latin1", b"1 Q0 d\xe9 1 2.0 A\n", ("bad.run", "line 1", "UTF-8")),
    ("nul-in-an-id", b"1 Q0 d1 1 2.0 A\n1 Q0 d\x002 2 1.0 A\n", ("bad.run", "line 2", "NUL")),
    ("corrupt-gzip", gzip.compress(RUN_A)[:40], ("bad.run", "gzip")),
    ("truncated-gzip-trailer", gzip.compress(RUN_A)[:-4], ("bad.run", "gzip")),
    ("binary-garbage", bytes(range(256)) * 4, ("bad.run",)),
]:
    case(
        f"run-{name}",
        "malformed runs",
        ["evaluate", "{Q}", "{d}/bad.run"],
        "error",
        must,
        files={"bad.run": data},
    )
NBSP_IDS = "# ids with a no-break space\n1 Q0 d\u00a01 1 2.0 N\n1 Q0 d4 2 1.0 N\n".encode()
case(
    "run-no-break-space-inside-ids",
    "malformed runs",
    ["evaluate", "{Q}", "{d}/n.run", "-m", "AP", "--per-topic", "--format", "csv"],
    "ok",
    files={"n.run": NBSP_IDS},
    check=evaluates(QRELS, [NBSP_IDS], ["AP"]),
)
case(
    "run-nonnumeric-rank-is-ignored",
    "malformed runs",
    ["evaluate", "{Q}", "{d}/r.run", "-m", "AP", "--per-topic", "--format", "csv"],
    "ok",
    files={"r.run": RUN_A.replace(b" 1 ", b" x ", 1)},
    check=base_eval(["AP"]),
)
TWO_TAGS = RUN_A.replace(b" A\n", b" Z\n", 3)
case(
    "run-two-tags-in-one-file",
    "malformed runs",
    ["evaluate", "{Q}", "{d}/r.run", "-m", "AP", "--per-topic", "--format", "csv"],
    "warn",
    ("r.run", "tag"),
    files={"r.run": TWO_TAGS},
    check=evaluates(QRELS, [TWO_TAGS], ["AP"]),
)
case(
    "run-same-tag-two-files",
    "malformed runs",
    ["evaluate", "{Q}", "{A}", "{d}/a2.run", "-m", "AP", "--format", "csv"],
    "warn",
    ("A",),
    files={"a2.run": RUN_C.replace(b" C\n", b" A\n")},
    check=lambda out, err, d: None if out.count("A (") == 2 else f"runs not kept apart: {out!r}",
)
TIES = b"1 Q0 d2 1 1.0 T\n1 Q0 d1 2 1.0 T\n1 Q0 d4 3 1.0 T\n2 Q0 d7 1 5 T\n"
case(
    "run-ties-in-trec-eval-order",
    "malformed runs",
    ["evaluate", "{Q}", "{d}/t.run", "-m", "AP", "-m", "P@1", "--per-topic", "--format", "csv"],
    "ok",
    files={"t.run": TIES},
    check=evaluates(QRELS, [TIES], ["AP", "P@1"]),
)
EXP = b"1 Q0 d1 1 -1e-3 S\n1 Q0 d4 2 -2.5E+1 S\n1 Q0 d3 3 1E2 S\n"
case(
    "run-negative-and-exponent-scores",
    "malformed runs",
    ["evaluate", "{Q}", "{d}/s.run", "-m", "AP", "--per-topic", "--format", "csv"],
    "ok",
    files={"s.run": EXP},
    check=evaluates(QRELS, [EXP], ["AP"]),
)

# ---- 4. paths: missing, directories, twice, pipes
case(
    "qrels-missing-file",
    "paths",
    ["evaluate", "{d}/nope.qrels", "{A}"],
    "error",
    ("nope.qrels", "not exist"),
)
case(
    "run-missing-file",
    "paths",
    ["evaluate", "{Q}", "{d}/nope.run"],
    "error",
    ("nope.run", "not exist"),
)
case("qrels-is-directory", "paths", ["evaluate", "{d}", "{A}"], "error", ("directory",))
case("run-is-directory", "paths", ["evaluate", "{Q}", "{d}"], "error", ("directory",))
case("run-file-twice", "paths", ["evaluate", "{Q}", "{A}", "{A}"], "error", ("a.run", "twice"))
case(
    "run-file-twice-other-spelling",
    "paths",
    ["evaluate", "{Q}", "{A}", "{d}/./a.run"],
    "error",
    ("a.run", "twice"),
)
case("qrels-also-given-as-run", "paths", ["evaluate", "{Q}", "{Q}"], "error", ("q.qrels", "qrels"))
case(
    "plugin-missing-file",
    "paths",
    ["evaluate", "{Q}", "{A}", "--plugin", "{d}/nope.py"],
    "error",
    ("nope.py", "not exist"),
)
case(
    "broken-symlink-run",
    "paths",
    ["evaluate", "{Q}", "{d}/link.run"],
    "error",
    ("link.run",),
    files={"link.run": "-> nowhere"},
)
case(
    "stdin-run",
    "paths",
    ["evaluate", "{Q}", "/dev/stdin", "-m", "AP", "--per-topic", "--format", "csv"],
    "ok",
    stdin=RUN_A,
    check=base_eval(["AP"]),
)
case(
    "process-substitution",
    "paths",
    None,
    "ok",
    shell="evaluate <(cat {Q}) <(gzip -c {A}) <(bzip2 -c {B}) -m AP --per-topic --format csv",
    check=base_eval(["AP"], runs=(RUN_A, RUN_B)),
)
case(
    "stdin-twice",
    "paths",
    ["evaluate", "{Q}", "/dev/stdin", "/dev/stdin"],
    "error",
    ("/dev/stdin", "twice"),
    stdin=RUN_A,
)

# ---- 5. topics shared by runs and qrels
top = "run/qrels topics"
case(
    "no-topic-overlap",
    top,
    ["evaluate", "{Q}", "{d}/x.run"],
    "error",
    ("X", "no topic"),
    files={"x.run": b"501 Q0 d1 1 1.0 X\n502 Q0 d2 1 1.0 X\n"},
)
case(
    "zero-padded-topic-ids",
    top,
    ["evaluate", "{Q}", "{d}/x.run"],
    "error",
    ("'01'", "'1'"),
    files={"x.run": b"01 Q0 d1 1 1.0 X\n02 Q0 d7 1 1.0 X\n"},
)
case(
    "one-run-no-overlap",
    top,
    ["evaluate", "{Q}", "{A}", "{d}/x.run", "-m", "AP", "--format", "csv"],
    "warn",
    ("X", "no topic"),
    files={"x.run": b"501 Q0 d1 1 1.0 X\n"},
    check=lambda out, err, d: None if "X,AP,0" in out else out,
)
case(
    "no-overlap-missing-skip",
    top,
    ["evaluate", "{Q}", "{d}/x.run", "--missing", "skip"],
    "error",
    ("no topic",),
    files={"x.run": b"501 Q0 d1 1 1.0 X\n"},
)
case(
    "skip-run-without-topics-shows-nan",
    top,
    ["evaluate", "{Q}", "{A}", "{d}/x.run", "-m", "AP", "--missing", "skip"],
    "warn",
    ("X", "no score"),
    files={"x.run": b"501 Q0 d1 1 1.0 X\n"},
    check=lambda out, err, d: None if "X" in out and "NaN" in out else out,
)
case(
    "topics-selection-leaves-a-run-nothing",
    top,
    ["evaluate", "{Q}", "{A}", "{d}/x.run", "-m", "AP", "--topics", "2,3", "--format", "csv"],
    "warn",
    ("X", "no topic"),
    files={"x.run": b"1 Q0 d1 1 1.0 X\n"},
    check=lambda out, err, d: None if "X,AP,0" in out else out,
)
case(
    "topics-selection-leaves-no-run-anything",
    top,
    ["evaluate", "{Q}", "{d}/x.run", "--topics", "2,3"],
    "error",
    ("no topic",),
    files={"x.run": b"1 Q0 d1 1 1.0 X\n"},
)
case(
    "partial-overlap",
    top,
    ["evaluate", "{Q}", "{B}", "-m", "AP", "-m", "P@10", "--per-topic", "--format", "csv"],
    "warn",
    ("99",),
    check=base_eval(["AP", "P@10"], runs=(RUN_B,)),
)
case(
    "partial-overlap-skip",
    top,
    ["evaluate", "{Q}", "{B}", "-m", "AP", "--missing", "skip", "--format", "csv"],
    "warn",
    ("99",),
    check=base_eval(["AP"], runs=(RUN_B,), per_topic=False, missing="skip"),
)
case(
    "partial-overlap-zero-mean",
    top,
    ["evaluate", "{Q}", "{B}", "-m", "AP", "-m", "nDCG", "--format", "csv"],
    "warn",
    ("99",),
    check=base_eval(["AP", "nDCG"], runs=(RUN_B,), per_topic=False),
)
case(
    "gmean",
    top,
    ["evaluate", "{Q}", "{A}", "{C}", "-m", "AP", "--agg", "gmean", "--format", "csv"],
    "ok",
    check=base_eval(["AP"], runs=(RUN_A, RUN_C), per_topic=False, agg="gmean"),
)
case(
    "depth-cut",
    top,
    [
        "evaluate",
        "{Q}",
        "{A}",
        "-m",
        "AP",
        "-m",
        "nDCG",
        "--depth",
        "3",
        "--per-topic",
        "--format",
        "csv",
    ],
    "ok",
    check=base_eval(["AP", "nDCG"], depth=3),
)
case(
    "depth-beyond-any-list",
    top,
    ["evaluate", "{Q}", "{A}", "-m", "AP", "--depth", "9" * 30, "--per-topic", "--format", "csv"],
    "ok",
    check=base_eval(["AP"]),
)
case(
    "rel-2",
    top,
    [
        "evaluate",
        "{Q}",
        "{A}",
        "{C}",
        "-m",
        "AP(rel=2)",
        "-m",
        "P(rel=2)@5",
        "--per-topic",
        "--format",
        "csv",
    ],
    "ok",
    check=evaluates(QRELS, [RUN_A, RUN_C], ["AP(rel=2)", "P(rel=2)@5"]),
)
case(
    "condensed",
    top,
    ["evaluate", "{Q}", "{A}", "-m", "AP'", "-m", "Bpref", "--per-topic", "--format", "csv"],
    "ok",
    check=base_eval(["AP'", "Bpref"]),
)
case(
    "more-measures",
    top,
    [
        "evaluate",
        "{Q}",
        "{A}",
        "{B}",
        "{C}",
        "-m",
        "R@10",
        "-m",
        "AP@5",
        "-m",
        "Success@10",
        "-m",
        "NumRelRet",
        "-m",
        "nDCG@5",
        "--per-topic",
        "--format",
        "csv",
    ],
    "warn",
    ("99",),
    check=base_eval(
        ["R@10", "AP@5", "Success@10", "NumRelRet", "nDCG@5"], runs=(RUN_A, RUN_B, RUN_C)
    ),
)

# ---- 6. --topics and --runs
sel = "selections"
case(
    "topics-list",
    sel,
    ["evaluate", "{Q}", "{A}", "-m", "AP", "--per-topic", "--format", "csv", "--topics", "1,3,11"],
    "ok",
    check=base_eval(["AP"], topics=["1", "3", "11"]),
)
case(
    "topics-range",
    sel,
    ["evaluate", "{Q}", "{A}", "-m", "AP", "--format", "csv", "--topics", "1-3"],
    "ok",
    check=base_eval(["AP"], topics=["1", "2", "3"], per_topic=False),
)
case(
    "topics-file",
    sel,
    [
        "evaluate",
        "{Q}",
        "{A}",
        "-m",
        "AP",
        "--per-topic",
        "--format",
        "csv",
        "--topics",
        "{d}/t.txt",
    ],
    "ok",
    files={"t.txt": b"# mine\n2\n10 11\n"},
    check=base_eval(["AP"], topics=["2", "10", "11"]),
)
case(
    "topics-file-bom-crlf",
    sel,
    [
        "evaluate",
        "{Q}",
        "{A}",
        "-m",
        "AP",
        "--per-topic",
        "--format",
        "csv",
        "--topics",
        "{d}/t.txt",
    ],
    "ok",
    files={"t.txt": BOM + b"2\r\n10\r\n"},
    check=base_eval(["AP"], topics=["2", "10"]),
)
for name, value, must in [
    ("unknown", "1,77", ("--topics", "77")),
    ("reversed-range", "3-1", ("--topics", "3-1", "backwards")),
    ("empty", "", ("--topics",)),
    ("only-commas", ",,", ("--topics",)),
    ("huge-range", "1-99999999999", ("--topics", "1-99999999999")),
    ("zero-padded", "01-03", ("--topics", "01")),
    ("missing-file", "{d}/nope.txt", ("--topics", "nope.txt", "no such file")),
    ("empty-file", "{d}/t.txt", ("--topics", "t.txt")),
    ("latin1-file", "{d}/l.txt", ("--topics", "l.txt", "UTF-8")),
    ("directory", "{d}", ("--topics", "directory")),
]:
    case(
        f"topics-{name}",
        sel,
        ["evaluate", "{Q}", "{A}", "--topics", value],
        "error",
        must,
        files={"t.txt": b"# nothing\n", "l.txt": b"1\n\xe9\n"},
    )
case(
    "topics-given-twice",
    sel,
    ["evaluate", "{Q}", "{A}", "--topics", "1", "--topics", "2"],
    "error",
    ("--topics", "twice"),
)
case(
    "runs-unknown",
    sel,
    ["evaluate", "{Q}", "{A}", "{B}", "--runs", "A,Z"],
    "error",
    ("--runs", "Z"),
)
case("runs-empty", sel, ["evaluate", "{Q}", "{A}", "--runs", ""], "error", ("--runs",))
case(
    "runs-select",
    sel,
    [
        "evaluate",
        "{Q}",
        "{A}",
        "{B}",
        "{C}",
        "-m",
        "AP",
        "--runs",
        "C,A",
        "--per-topic",
        "--format",
        "csv",
    ],
    "ok",
    check=evaluates(QRELS, [RUN_A, RUN_C], ["AP"]),
)

# ---- 7. measure names
ms = "measure names"
for name, m, must in [
    ("unknown", "Nope", ("Nope", "unknown measure")),
    ("case-typo", "Ndcg@10", ("Ndcg", "nDCG")),
    ("cutoff-zero", "P@0", ("P@0", "cutoff")),
    ("cutoff-negative", "P@-3", ("P@-3", "cutoff")),
    ("cutoff-float", "P@2.5", ("2.5",)),
    ("cutoff-word", "P@ten", ("ten",)),
    ("cutoff-not-ascii", "P@\u0665", ("P@",)),
    ("cutoff-overflow", "nDCG@" + "9" * 30, ("nDCG@", "cutoff")),
    ("cutoff-missing", "Success", ("Success", "cutoff")),
    ("cutoff-not-taken", "Rprec@5", ("Rprec", "cutoff")),
    ("unknown-param", "AP(foo=1)", ("foo",)),
    ("rel-zero", "AP(rel=0)", ("rel",)),
    ("rel-negative", "AP(rel=-0.5)", ("rel",)),
    ("rel-string", "AP(rel=x)", ("rel",)),
    ("rel-bool", "AP(rel=True)", ("rel",)),
    ("rel-overflow", "AP(rel=1e400)", ("rel",)),
    ("param-twice", "AP(rel=1,rel=2)", ("rel", "twice")),
    ("param-no-value", "AP(rel=)", ("rel",)),
    ("trailing-garbage", "AP(rel=2)junk", ("junk",)),
    ("unbalanced", "AP(rel=2", ("AP(rel=2",)),
    ("double-at", "P@5@10", ("P@5@10",)),
    ("unicode-name", "\u00c4P", ("\u00c4P",)),
    ("empty", "", ("measure",)),
    ("rbp-p-one", "RBP(p=1)", ("p",)),
    ("rbp-p-nan", "RBP(p=nan)", ("p",)),
    ("q-beta-overflow", "Q(beta=1e308)", ("beta",)),
    ("q-beta-negative", "Q(beta=-1)", ("beta",)),
    ("gains-negative", "nDCG(gains={1:-1})", ("gains",)),
    ("gains-overflow", "nDCG(gains={1:1e308,2:1e308})", ("gains",)),
    ("gap-not-summing", "GAP(g=(0.5,0.1))", ("g",)),
    ("gap-negative", "GAP(g=(1.5,-0.5))", ("g",)),
    ("ndcg-unknown-gain", "nDCG(gain=cubic)", ("gain",)),
    ("condensed-twice", "AP''", ("AP''",)),
    ("python-expression", "AP(rel=__import__('os').getpid())", ("rel",)),
    ("huge-literal", "AP(rel=" + "9" * 5000 + ")", ("rel",)),
    ("deep-nesting", "GAP(g=" + "(" * 200 + "1" + ")" * 200 + ")", ("g",)),
]:
    case(f"measure-{name}", ms, ["evaluate", "{Q}", "{A}", "-m", m], "error", must)
case(
    "measure-cutoff-huge",
    ms,
    ["evaluate", "{Q}", "{A}", "-m", "P@1000000000", "--per-topic", "--format", "csv"],
    "ok",
    check=lambda out, err, d: None if (parse_csv(out)["value"] <= 1e-8).all() else out,
)
case(
    "measure-cutoff-largest",
    ms,
    ["evaluate", "{Q}", "{A}", "-m", "nDCG@2147483647", "-m", "nDCG", "--format", "csv"],
    "ok",
    check=lambda out, err, d: None if parse_csv(out)["value"].nunique() == 1 else out,
)
case(
    "measure-spaces",
    ms,
    ["evaluate", "{Q}", "{A}", "-m", " P @ 5 ", "--per-topic", "--format", "csv"],
    "ok",
    check=lambda out, err, d: compare_frames(
        parse_csv(out).assign(measure="P@5"), oracle(QRELS, [RUN_A], ["P@5"]), all_row=True
    ),
)
case(
    "measure-rel-above-grades",
    ms,
    ["evaluate", "{Q}", "{A}", "-m", "AP(rel=7)"],
    "warn",
    ("rel=7", "highest grade"),
)
case(
    "measure-duplicate-spellings",
    ms,
    ["evaluate", "{Q}", "{A}", "-m", "AP", "-m", "AP(rel=1)", "--format", "csv"],
    "ok",
    check=lambda out, err, d: None if len(parse_csv(out)) == 1 else out,
)
case("measure-option-without-value", ms, ["evaluate", "{Q}", "{A}", "-m"], "error", ("-m",))

# ---- 8. evaluate's options
ev = "evaluate options"
for name, argv, must in [
    ("agg-unknown", ["--agg", "harmonic"], ("--agg", "harmonic")),
    ("agg-bad-param", ["--agg", "gmean(mode=foo)"], ("--agg", "mode")),
    ("agg-eps-overflow", ["--agg", "gmean(eps=1e400)"], ("--agg", "eps")),
    ("agg-eps-nan", ["--agg", "gmean(eps=nan)"], ("--agg", "eps")),
    ("agg-eps-zero", ["--agg", "logit(eps=0)"], ("--agg", "eps")),
    ("missing-unknown", ["--missing", "drop"], ("--missing", "drop")),
    ("ties-unknown", ["--ties", "random"], ("--ties", "random")),
    ("depth-zero", ["--depth", "0"], ("--depth",)),
    ("depth-negative", ["--depth", "-5"], ("--depth",)),
    ("depth-word", ["--depth", "ten"], ("--depth",)),
    ("format-unknown", ["--format", "xml"], ("--format", "xml")),
    ("format-twice", ["--format", "csv", "--format", "json"], ("--format", "twice")),
    ("depth-twice", ["--depth", "5", "--depth=6"], ("--depth", "twice")),
    ("unknown-option", ["--bogus"], ("--bogus",)),
    ("flag-with-value", ["--per-topic=yes"], ("--per-topic",)),
]:
    case(f"evaluate-{name}", ev, ["evaluate", "{Q}", "{A}", *argv], "error", must)
case("evaluate-no-arguments", ev, ["evaluate"], "error", ("qrels",))
case("evaluate-no-runs", ev, ["evaluate", "{Q}"], "error", ("runs",))
case(
    "evaluate-json",
    ev,
    ["evaluate", "{Q}", "{A}", "-m", "AP", "--format", "json"],
    "ok",
    check=lambda out, err, d: (
        None
        if abs(json.loads(out)[0]["value"] - oracle(QRELS, [RUN_A], ["AP"])["value"].mean()) < 1e-9
        else out
    ),
)
case("unknown-command", ev, ["evaluat", "{Q}"], "error", ("evaluat",))
case("measures-bad-format", ev, ["measures", "--format", "yaml"], "error", ("--format", "yaml"))
case(
    "measures-json",
    ev,
    ["measures", "--format", "json"],
    "ok",
    check=lambda out, err, d: None if any(x["name"] == "AP" for x in json.loads(out)) else out,
)

# ---- 9. plugins
PLUGIN = b"""
from dataclasses import dataclass
from metaeval.measures import Measure, register
import numpy as np

@register
@dataclass(frozen=True, kw_only=True)
class Half(Measure):
    name = "HalfBattery"
    def _compute(self, tensor):
        return np.full((tensor.n_runs, tensor.n_topics), 0.5)
"""
RAISES = PLUGIN.replace(b"return np.full", b"return 1/0 or np.full")
NAN = PLUGIN.replace(b"0.5)", b"np.nan)")
for name, src, must in [
    ("syntax-error", b"def (:\n", ("p.py", "SyntaxError")),
    ("raises-at-import", b"raise RuntimeError('no config')\n", ("p.py", "no config")),
    ("exits-at-import", b"import sys\nsys.exit(3)\n", ("p.py", "exit")),
    ("clash-with-builtin", PLUGIN.replace(b'"HalfBattery"', b'"AP"'), ("AP", "already registered")),
    ("raises-in-compute", RAISES, ("HalfBattery", "ZeroDivisionError")),
    (
        "wrong-shape",
        PLUGIN.replace(b"(tensor.n_runs, tensor.n_topics)", b"(3,)"),
        ("HalfBattery", "shape"),
    ),
    ("nan-values", NAN, ("HalfBattery", "nan")),
    (
        "text-values",
        PLUGIN.replace(b"np.full((tensor.n_runs, tensor.n_topics), 0.5)", b"'x'"),
        ("HalfBattery",),
    ),
    (
        "returns-none",
        PLUGIN.replace(b"return np.full((tensor.n_runs, tensor.n_topics), 0.5)", b"pass"),
        ("HalfBattery",),
    ),
    (
        "not-a-dataclass",
        PLUGIN.replace(b"@dataclass(frozen=True, kw_only=True)\n", b""),
        ("p.py", "dataclass"),
    ),
    ("bad-name", PLUGIN.replace(b'"HalfBattery"', b'"Half Battery"'), ("p.py", "name")),
    ("binary-file", b"\x00\x01binary", ("p.py",)),
]:
    case(
        f"plugin-{name}",
        "plugins",
        ["evaluate", "{Q}", "{A}", "-m", "HalfBattery", "--plugin", "{d}/p.py"],
        "error",
        must,
        files={"p.py": src},
    )
case(
    "plugin-ok",
    "plugins",
    [
        "evaluate",
        "{Q}",
        "{A}",
        "-m",
        "HalfBattery",
        "-m",
        "HalfBattery'",
        "--plugin",
        "{d}/p.py",
        "--format",
        "csv",
    ],
    "ok",
    files={"p.py": PLUGIN},
    check=lambda out, err, d: None if set(parse_csv(out)["value"]) == {0.5} else out,
)
case(
    "plugin-clash-between-two-files",
    "plugins",
    ["evaluate", "{Q}", "{A}", "-m", "HalfBattery", "--plugin", "{d}/p.py", "--plugin", "{d}/q.py"],
    "error",
    ("HalfBattery", "already registered"),
    files={"p.py": PLUGIN, "q.py": PLUGIN.replace(b"0.5)", b"0.25)")},
)
case(
    "plugin-same-file-twice",
    "plugins",
    [
        "evaluate",
        "{Q}",
        "{A}",
        "-m",
        "HalfBattery",
        "--plugin",
        "{d}/p.py",
        "--plugin",
        "{d}/p.py",
        "--format",
        "csv",
    ],
    "ok",
    files={"p.py": PLUGIN},
    check=lambda out, err, d: None if set(parse_csv(out)["value"]) == {0.5} else out,
)
case(
    "plugin-directory",
    "plugins",
    ["evaluate", "{Q}", "{A}", "--plugin", "{d}"],
    "error",
    ("directory",),
)
case(
    "plugin-nan-in-discriminate",
    "plugins",
    [
        "discriminate",
        "{Q}",
        "{A}",
        "{C}",
        "-m",
        "HalfBattery",
        "--plugin",
        "{d}/p.py",
        "--seed",
        "1",
        "-B",
        "50",
    ],
    "error",
    ("HalfBattery", "nan"),
    files={"p.py": NAN},
)
case(
    "plugin-nan-under-skip",
    "plugins",
    ["evaluate", "{Q}", "{A}", "-m", "HalfBattery", "--plugin", "{d}/p.py", "--missing", "skip"],
    "error",
    ("HalfBattery", "nan"),
    files={"p.py": NAN},
)
for command, extra in [
    ("robustness", ["--seed", "1", "--levels", "50", "--trials", "1", "-B", "20"]),
    ("stability", ["--seed", "1"]),
    ("correlate", ["-m", "AP"]),
]:
    case(
        f"plugin-raises-in-{command}",
        "plugins",
        [command, "{Q}", "{A}", "{C}", "-m", "HalfBattery", "--plugin", "{d}/p.py", *extra],
        "error",
        ("HalfBattery", "ZeroDivisionError"),
        files={"p.py": RAISES},
    )

# ---- 10. discriminate and compare
dc = "discriminate/compare"
case(
    "discriminate-ok",
    dc,
    [
        "discriminate",
        "{Q}",
        "{A}",
        "{B}",
        "{C}",
        "-m",
        "AP",
        "--seed",
        "1",
        "-B",
        "200",
        "--format",
        "csv",
    ],
    "warn",
    ("99",),
    check=lambda out, err, d: None if int(parse_csv(out)["pairs"].iloc[0]) == 3 else out,
)
for name, argv, must in [
    ("one-run", ["{Q}", "{A}"], ("two",)),
    ("alpha-zero", ["{Q}", "{A}", "{C}", "--alpha", "0"], ("--alpha",)),
    ("alpha-one", ["{Q}", "{A}", "{C}", "--alpha", "1"], ("--alpha",)),
    ("alpha-nan", ["{Q}", "{A}", "{C}", "--alpha", "nan"], ("--alpha",)),
    ("alpha-word", ["{Q}", "{A}", "{C}", "--alpha", "five"], ("--alpha",)),
    ("B-zero", ["{Q}", "{A}", "{C}", "-B", "0"], ("-B",)),
    ("seed-negative", ["{Q}", "{A}", "{C}", "--seed", "-1"], ("--seed",)),
    ("seed-word", ["{Q}", "{A}", "{C}", "--seed", "x"], ("--seed",)),
    ("seed-twice", ["{Q}", "{A}", "{C}", "--seed", "1", "--seed", "2"], ("--seed", "twice")),
    ("method-unknown", ["{Q}", "{A}", "{C}", "--method", "perm"], ("--method", "perm")),
    (
        "plot-unwritable",
        ["{Q}", "{A}", "{C}", "-B", "50", "--seed", "1", "--plot", "{d}/blocker/x.png"],
        ("--plot",),
    ),
    (
        "plot-bad-extension",
        ["{Q}", "{A}", "{C}", "-B", "50", "--seed", "1", "--plot", "{d}/x.xyz"],
        ("--plot", "xyz"),
    ),
    (
        "plot-is-directory",
        ["{Q}", "{A}", "{C}", "-B", "50", "--seed", "1", "--plot", "{d}"],
        ("--plot",),
    ),
    (
        "one-topic",
        ["{Q}", "{A}", "{C}", "--topics", "1", "-B", "50", "--seed", "1"],
        ("--topics", "topic"),
    ),
    ("runs-selection-leaves-one", ["{Q}", "{A}", "{C}", "--runs", "A", "--seed", "1"], ("--runs",)),
]:
    case(f"discriminate-{name}", dc, ["discriminate", *argv], "error", must, files={"blocker": b""})
case(
    "discriminate-small-B-warns-once",
    dc,
    ["discriminate", "{Q}", "{A}", "{C}", "-B", "5", "--seed", "1", "-m", "AP", "-m", "P@5"],
    "warn",
    ("B=5", "alpha"),
    check=lambda out, err, d: None if err.count("B=5") == 1 else f"warned {err.count('B=5')} times",
)
case(
    "compare-t-test-vs-scipy",
    dc,
    ["compare", "{Q}", "{A}", "{C}", "-m", "AP", "--correction", "none", "--format", "csv"],
    "ok",
    check=ttest_check,
)
for name, argv, must in [
    ("baseline-unknown", ["--baseline", "Z"], ("--baseline", "Z")),
    ("alpha-negative", ["--alpha", "-0.1"], ("--alpha",)),
    ("test-unknown", ["--test", "perm"], ("--test", "perm")),
    ("correction-unknown", ["--correction", "bonf"], ("--correction", "bonf")),
    ("one-topic", ["--topics", "2"], ("topic",)),
]:
    case(f"compare-{name}", dc, ["compare", "{Q}", "{A}", "{C}", *argv], "error", must)
case("compare-one-run", dc, ["compare", "{Q}", "{A}"], "error", ("two",))
case(
    "compare-randomization-small-B",
    dc,
    ["compare", "{Q}", "{A}", "{C}", "--test", "randomization", "-B", "3", "--seed", "1"],
    "warn",
    ("B=3",),
)

# ---- 11. robustness, stability, correlate, informativeness
cr = "other criteria"
R3 = ["{Q}", "{A}", "{B}", "{C}"]
for name, argv, must in [
    ("levels-zero", ["--levels", "0"], ("--levels", "0")),
    ("levels-above-100", ["--levels", "150"], ("--levels", "150")),
    ("levels-word", ["--levels", "abc"], ("--levels", "abc")),
    ("levels-empty", ["--levels", ","], ("--levels",)),
    ("levels-repeated", ["--levels", "50,50"], ("--levels", "50")),
    ("levels-nan", ["--levels", "nan"], ("--levels",)),
    ("levels-inf", ["--levels", "inf"], ("--levels",)),
    ("method-unknown", ["--method", "foo"], ("--method", "foo")),
    ("statistic-unknown", ["--statistic", "rho"], ("--statistic", "rho")),
    ("alpha-zero", ["--alpha", "0"], ("--alpha",)),
    ("trials-zero", ["--trials", "0"], ("--trials",)),
    ("pool-depth-float", ["--method", "pool_depth", "--levels", "2.5"], ("--levels", "2.5")),
    ("pool-depth-zero", ["--method", "pool_depth", "--levels", "0"], ("--levels", "0")),
    ("noise-above-one", ["--method", "assessor_noise", "--levels", "5"], ("--levels", "5")),
    ("fewer-teams-too-many", ["--method", "fewer_teams", "--levels", "50"], ("--levels", "50")),
    ("team-unknown", ["--method", "leave_one_group_out", "--levels", "zz"], ("--levels", "zz")),
]:
    trials = [] if "--trials" in argv else ["--trials", "1"]
    case(
        f"robustness-{name}",
        cr,
        ["robustness", *R3, "-m", "AP", "--seed", "1", *trials, "-B", "20", *argv],
        "error",
        must,
    )
case(
    "robustness-ok",
    cr,
    [
        "robustness",
        *R3,
        "-m",
        "AP",
        "-m",
        "P@5",
        "--seed",
        "1",
        "--levels",
        "50",
        "--trials",
        "2",
        "-B",
        "50",
        "--format",
        "csv",
    ],
    "warn",
    ("99",),
    check=has_rows(4),
)
case(
    "robustness-small-B",
    cr,
    ["robustness", *R3, "-m", "AP", "--seed", "1", "--levels", "50", "--trials", "1", "-B", "5"],
    "warn",
    ("B=5",),
)
case(
    "robustness-leave-one-team-out",
    cr,
    [
        "robustness",
        "{Q}",
        "{A}",
        "{C}",
        "{d}/e.run",
        "-m",
        "AP",
        "--method",
        "leave_one_group_out",
        "--levels",
        "a",
        "-B",
        "20",
        "--format",
        "csv",
        "--seed",
        "1",
    ],
    "ok",
    files={"e.run": RUN_E},
    check=has_rows(3),
)
for name, argv, must in [
    ("sizes-zero", ["--sizes", "0"], ("--sizes", "0")),
    ("sizes-too-big", ["--sizes", "9"], ("--sizes", "9")),
    ("sizes-float", ["--sizes", "1.5"], ("--sizes", "1.5")),
    ("sizes-word", ["--sizes", "x"], ("--sizes", "x")),
    ("repeats-zero", ["--repeats", "0"], ("--repeats",)),
    ("one-topic", ["--topics", "1"], ("topic",)),
]:
    case(
        f"stability-{name}", cr, ["stability", *R3, "-m", "AP", "--seed", "1", *argv], "error", must
    )
case(
    "stability-one-run",
    cr,
    ["stability", "{Q}", "{A}", "-m", "AP", "--seed", "1"],
    "error",
    ("run",),
)
case(
    "stability-ok",
    cr,
    ["stability", *R3, "-m", "AP", "--seed", "1", "--repeats", "5", "--format", "csv"],
    "warn",
    ("99",),
    check=has_rows(1),
)
for name, argv, must in [
    ("one-measure", ["-m", "AP"], ("-m", "two")),
    ("same-measure-twice", ["-m", "AP", "-m", "AP(rel=1)"], ("-m", "two")),
    ("statistic-unknown", ["-m", "AP", "-m", "P@5", "--statistic", "rho"], ("--statistic", "rho")),
    (
        "max-relevant-negative",
        ["-m", "AP", "-m", "P@5", "--max-relevant", "-1"],
        ("--max-relevant",),
    ),
]:
    case(f"correlate-{name}", cr, ["correlate", *R3, *argv], "error", must)
case(
    "correlate-one-run", cr, ["correlate", "{Q}", "{A}", "-m", "AP", "-m", "P@5"], "error", ("run",)
)
case(
    "correlate-grade-above-highest",
    cr,
    ["correlate", *R3, "-m", "AP", "-m", "P@5", "--max-relevant", "0", "--grade", "9"],
    "warn",
    ("--grade", "9"),
)
case(
    "correlate-vs-scipy",
    cr,
    [
        "correlate",
        "{Q}",
        "{A}",
        "{C}",
        "{d}/e.run",
        "-m",
        "AP",
        "-m",
        "nDCG@10",
        "--statistic",
        "tau_b",
        "--format",
        "csv",
    ],
    "ok",
    files={"e.run": RUN_E},
    check=tau_check,
)
for name, argv, must in [
    ("rel-zero", ["--rel", "0"], ("--rel",)),
    ("rel-above-highest", ["--rel", "7", "--min-relevant", "1"], ("rel=7", "highest grade")),
    ("no-expectation", ["-m", "Bpref", "--min-relevant", "1"], ("Bpref",)),
    ("condensed", ["-m", "AP'", "--min-relevant", "1"], ("AP'",)),
    ("min-relevant-too-high", ["--min-relevant", "50"], ("--min-relevant",)),
    ("plot-unwritable", ["--min-relevant", "1", "--plot", "{d}/blocker/figs"], ("--plot",)),
]:
    case(
        f"informativeness-{name}",
        cr,
        ["informativeness", *R3, *argv],
        "error",
        must,
        files={"blocker": b""},
    )
case(
    "informativeness-ok",
    cr,
    ["informativeness", *R3, "--min-relevant", "1", "-m", "AP", "--format", "csv"],
    "ok",
    check=has_rows(1),
)
case(
    "informativeness-passes-warnings-on",
    cr,
    ["informativeness", "{Q}", "{A}", "{C}", "{d}/x.run", "--min-relevant", "1", "-m", "AP"],
    "warn",
    ("X", "no topic"),
    files={"x.run": b"501 Q0 d1 1 1.0 X\n"},
)

# ---- 12. simulate and degrade
sd = "simulate/degrade"
SIM = ["simulate", "--topics", "4", "--systems", "3", "--seed", "1"]
case(
    "simulate-ok",
    sd,
    [*SIM, "--out", "{d}/w"],
    "ok",
    check=file_exists(
        "w/qrels.txt", lambda p: None if len(ref_qrels(p.read_bytes())) == 4 else "topics"
    ),
)
for name, argv, must in [
    ("preset-unknown", ["--preset", "x"], ("--preset", "x")),
    ("param-unknown", ["--param", "foo=1"], ("--param", "foo")),
    ("param-without-equals", ["--param", "foo"], ("--param", "foo")),
    ("param-bad-value", ["--param", "pool_depth=-5"], ("--param", "pool_depth")),
    ("param-nan", ["--param", "rel_median=NaN"], ("--param", "rel_median")),
    ("param-negative-weights", ["--param", "grade_probs=[0.8,-0.9]"], ("--param", "grade_probs")),
    (
        "param-same-name-twice",
        ["--param", "pool_depth=5", "--param", "pool_depth=7"],
        ("--param", "pool_depth", "twice"),
    ),
    ("out-unwritable", ["--out", "{d}/blocker/w"], ("--out",)),
    ("out-is-file", ["--out", "{d}/blocker"], ("--out",)),
]:
    out = [] if "--out" in argv else ["--out", "{d}/w"]
    case(f"simulate-{name}", sd, [*SIM, *argv, *out], "error", must, files={"blocker": b""})
case(
    "simulate-topics-zero",
    sd,
    ["simulate", "--topics", "0", "--out", "{d}/w"],
    "error",
    ("--topics",),
)
case(
    "simulate-too-big",
    sd,
    ["simulate", "--topics", "100000000", "--systems", "100000", "--seed", "1", "--out", "{d}/w"],
    "error",
    ("--topics", "memory"),
)
case(
    "simulate-weights-are-normalised",
    sd,
    [*SIM, "--param", "grade_probs=[0.8,0.9]", "--out", "{d}/w"],
    "ok",
    check=file_exists("w/world.json", lambda p: normalised(p, "grade_probs", [0.8, 0.9])),
)
case(
    "simulate-replaces-an-earlier-world",
    sd,
    ["simulate", "--topics", "3", "--systems", "2", "--seed", "1", "--out", "{d}/w"],
    "ok",
    steps=[["simulate", "--topics", "3", "--systems", "4", "--seed", "1", "--out", "{d}/w"]],
    check=lambda out, err, d: (
        None if len(list(Path(d, "w", "runs").glob("*.run"))) == 2 else "stale runs left"
    ),
)
case(
    "simulate-foreign-run-files",
    sd,
    [*SIM, "--out", "{d}/w"],
    "error",
    ("--out", "runs"),
    files={"w/runs/mine.run": RUN_A},
)
DEG = ["degrade", "{Q}"]
for name, argv, must in [
    ("rate-zero", ["--rate", "0"], ("--rate", "0")),
    ("rate-above-100", ["--rate", "101"], ("--rate", "101")),
    ("rate-negative", ["--rate", "-5"], ("--rate",)),
    ("rate-nan", ["--rate", "nan"], ("--rate",)),
    ("rate-missing", [], ("--rate",)),
    ("rate-twice", ["--rate", "10", "--rate", "30"], ("--rate", "twice")),
    ("method-unknown", ["--method", "foo", "--rate", "10"], ("--method", "foo")),
    ("noise-above-one", ["--method", "assessor_noise", "--rate", "2"], ("--rate", "2")),
    ("depth-with-stratified", ["--rate", "50", "--depth", "5"], ("--depth", "stratified")),
    ("k-with-stratified", ["--rate", "50", "--k", "5"], ("--k", "stratified")),
    ("runs-with-stratified", ["--rate", "50", "--runs", "{A}"], ("--runs", "stratified")),
    ("pool-depth-without-runs", ["--method", "pool_depth", "--depth", "5"], ("--runs",)),
    ("pool-depth-zero", ["--method", "pool_depth", "--depth", "0", "--runs", "{A}"], ("--depth",)),
    (
        "runs-given-once-for-two-files",
        ["--method", "pool_depth", "--depth", "5", "--runs", "{A}", "{B}"],
        ("--runs",),
    ),
    (
        "fewer-teams-k-zero",
        ["--method", "fewer_teams", "--k", "0", "--runs", "{A}", "--runs", "{C}"],
        ("--k", "0"),
    ),
    (
        "fewer-teams-k-too-big",
        ["--method", "fewer_teams", "--k", "9", "--runs", "{A}", "--runs", "{C}"],
        ("--k", "9"),
    ),
    (
        "group-unknown",
        ["--method", "leave_one_group_out", "--group", "zz", "--runs", "{A}", "--runs", "{C}"],
        ("--group", "zz"),
    ),
    (
        "groups-file-malformed",
        [
            "--method",
            "leave_one_group_out",
            "--group",
            "t1",
            "--runs",
            "{A}",
            "--runs",
            "{C}",
            "--groups",
            "{d}/g.txt",
        ],
        ("g.txt", "line 1"),
    ),
    (
        "groups-json-malformed",
        [
            "--method",
            "leave_one_group_out",
            "--group",
            "t1",
            "--runs",
            "{A}",
            "--runs",
            "{C}",
            "--groups",
            "{d}/g.json",
        ],
        ("g.json",),
    ),
    (
        "groups-file-latin1",
        [
            "--method",
            "leave_one_group_out",
            "--group",
            "t1",
            "--runs",
            "{A}",
            "--runs",
            "{C}",
            "--groups",
            "{d}/g2.txt",
        ],
        ("g2.txt", "UTF-8"),
    ),
    ("out-unwritable", ["--rate", "50", "--out", "{d}/blocker/q.txt"], ("--out",)),
    ("out-is-directory", ["--rate", "50", "--out", "{d}"], ("--out",)),
    ("out-is-the-qrels", ["--rate", "50", "--out", "{Q}"], ("--out", "q.qrels", "input")),
    (
        "malformed-qrels",
        ["--rate", "50", "--out", "{d}/o.q", "{d}/bad.qrels"],
        ("bad.qrels", "line 1"),
    ),
]:
    out = [] if "--out" in argv else ["--out", "{d}/out.qrels"]
    argv = ["degrade", *argv[-1:]] + argv[:-1] if name == "malformed-qrels" else [*DEG, *argv]
    case(
        f"degrade-{name}",
        sd,
        [*argv, "--seed", "1", *out],
        "error",
        must,
        files={
            "g.txt": b"A t1 extra\n",
            "g.json": b"{not json",
            "blocker": b"",
            "g2.txt": b"A t\xe91\n",
            "bad.qrels": b"1 0 d1\n",
        },
    )
for name, qrels, runs, must in [
    ("calibrate-one-run", "{Q}", ["{A}"], ("at least 2 runs",)),
    ("calibrate-nothing-relevant", "{d}/z.qrels", ["{A}", "{C}"], ("no relevant grade",)),
]:
    # refused before the fit announces itself: one line on its own
    case(
        name,
        sd,
        ["calibrate", qrels, *runs, "--iterations", "1", "--meta-evaluations", "0"]
        + ["--check", "0", "--seed", "1", "--out", "{d}/o"],
        "error",
        must,
        files={"z.qrels": b"1 0 d1 0\n1 0 d2 0\n2 0 d3 0\n"},
    )
case(
    "calibrate-groups-without-a-run",
    sd,
    [
        "calibrate",
        "{Q}",
        "{A}",
        "{C}",
        "--groups",
        "{d}/g.txt",
        "--iterations",
        "0",
        "--meta-evaluations",
        "0",
        "--check",
        "0",
        "--seed",
        "1",
        "--out",
        "{d}/cal",
    ],
    "error",
    ("--groups", "g.txt", "no team", "C"),
    files={"g.txt": b"A t1\n"},
)
case(
    "degrade-stratified-ok",
    sd,
    [*DEG, "--rate", "50", "--seed", "1", "--out", "{d}/out.qrels"],
    "ok",
    check=degraded_subset(50),
)
case(
    "degrade-uniform-tiny-rate",
    sd,
    [*DEG, "--method", "uniform", "--rate", "0.0001", "--seed", "1", "--out", "{d}/out.qrels"],
    "ok",
    check=judged_subset(at_most=len(ref_qrels(QRELS))),  # about one judgment per topic
)
case(
    "degrade-pool-depth-ok",
    sd,
    [
        *DEG,
        "--method",
        "pool_depth",
        "--depth",
        "2",
        "--runs",
        "{A}",
        "--runs",
        "{C}",
        "--out",
        "{d}/out.qrels",
    ],
    "ok",
    check=pooled(2, (RUN_A, RUN_C)),
)
case(
    "degrade-gzip-out",
    sd,
    [*DEG, "--rate", "50", "--seed", "1", "--out", "{d}/out.qrels.gz"],
    "ok",
    check=file_exists(
        "out.qrels.gz", lambda p: None if p.read_bytes()[:2] == b"\x1f\x8b" else "not gzip"
    ),
)

# ---- 13. study files, and the folders studies write
st = "studies"
STUDY = """schema = 1
[study]
name = "tiny"
seed = 1
[[worlds]]
id = "sim"
kind = "simulator"
preset = "trec_like"
n_topics = 6
n_systems = 4
[[degraders]]
id = "s"
method = "stratified"
levels = [50]
trials = 1
[measures]
names = ["AP", "P@10"]
[[criteria]]
kind = "robustness"
[[claims]]
id = "C1"
text = "AP beats P@10"
check = { kind = "order", criterion = "robustness", statistic = "tau_b", against = "full", level = "50", greater = ["AP"], than = ["P@10"] }
"""
SIM_WORLD = STUDY[STUDY.index("[[worlds]]") : STUDY.index("[[degraders]]")]
TREC_WORLD = '[[worlds]]\nid = "trec"\nkind = "trec"\nqrels = "w.qrels"\nruns = "runs/*.run"\n'


def edit(old: str, new: str) -> str:
    assert old in STUDY
    return STUDY.replace(old, new)


for name, text, must in [
    ("invalid-toml", "x = [", ("s.toml", "TOML")),
    ("empty", "", ("s.toml", "schema")),
    ("schema-2", edit("schema = 1", "schema = 2"), ("s.toml", "schema")),
    ("unknown-top-level-key", "bogus = 1\n" + STUDY, ("s.toml", "bogus")),
    ("unknown-study-key", edit("seed = 1", "seed = 1\nfoo = 2"), ("s.toml", "foo")),
    ("seed-negative", edit("seed = 1", "seed = -1"), ("s.toml", "seed")),
    ("seed-string", edit("seed = 1", 'seed = "1"'), ("s.toml", "seed")),
    ("name-with-space", edit('name = "tiny"', 'name = "a b"'), ("s.toml", "name")),
    ("no-worlds", edit(SIM_WORLD, ""), ("s.toml", "worlds")),
    ("world-kind-unknown", edit('kind = "simulator"', 'kind = "sim"'), ("s.toml", "kind")),
    ("n-topics-zero", edit("n_topics = 6", "n_topics = 0"), ("s.toml", "n_topics")),
    ("n-topics-float", edit("n_topics = 6", "n_topics = 6.5"), ("s.toml", "n_topics")),
    ("preset-unknown", edit('preset = "trec_like"', 'preset = "x"'), ("s.toml", "preset")),
    (
        "world-param-unknown",
        edit("n_systems = 4", "n_systems = 4\nparams = { foo = 1 }"),
        ("s.toml", "foo"),
    ),
    (
        "world-param-bad",
        edit("n_systems = 4", "n_systems = 4\nparams = { pool_depth = -1 }"),
        ("s.toml", "pool_depth"),
    ),
    ("level-out-of-range", edit("levels = [50]", "levels = [150]"), ("s.toml", "levels")),
    ("level-string", edit("levels = [50]", 'levels = ["x"]'), ("s.toml", "levels")),
    ("level-inf", edit("levels = [50]", "levels = [inf]"), ("s.toml", "levels")),
    ("levels-empty", edit("levels = [50]", "levels = []"), ("s.toml", "levels")),
    ("degrader-unknown", edit('method = "stratified"', 'method = "x"'), ("s.toml", "method")),
    ("degrader-param-unknown", edit("trials = 1", "trials = 1\nfoo = 3"), ("s.toml", "foo")),
    ("trials-zero", edit("trials = 1", "trials = 0"), ("s.toml", "trials")),
    ("measure-unknown", edit('"AP", "P@10"', '"AP", "Nope"'), ("s.toml", "Nope")),
    (
        "measure-overflowing-parameter",
        edit('"AP", "P@10"', '"AP", "Q(beta=1e308)"'),
        ("s.toml", "beta"),
    ),
    ("measure-twice", edit('"AP", "P@10"', '"AP", "AP(rel=1)"'), ("s.toml", "AP", "twice")),
    ("measures-empty", edit('"AP", "P@10"', ""), ("s.toml", "names")),
    (
        "aggregate-unknown",
        edit('names = ["AP", "P@10"]', 'names = ["AP", "P@10"]\naggregate = "x"'),
        ("s.toml", "aggregate"),
    ),
    (
        "missing-unknown",
        edit('names = ["AP", "P@10"]', 'names = ["AP", "P@10"]\nmissing = "x"'),
        ("s.toml", "missing"),
    ),
    ("criterion-unknown", edit('kind = "robustness"', 'kind = "x"'), ("s.toml", "kind")),
    (
        "criterion-param-unknown",
        edit('kind = "robustness"', 'kind = "robustness"\nB = 5'),
        ("s.toml", "B"),
    ),
    (
        "criterion-param-bad",
        edit('kind = "robustness"', 'kind = "robustness"\nstatistics = ["rho"]'),
        ("s.toml", "statistics"),
    ),
    (
        "criterion-level-unknown",
        edit('kind = "robustness"', 'kind = "robustness"\nlevels = ["77"]'),
        ("s.toml", "77"),
    ),
    (
        "topic-filter-incomplete",
        edit('kind = "robustness"', 'kind = "robustness"\ntopic_filter = { grade = 2 }'),
        ("s.toml", "topic_filter"),
    ),
    ("claim-unknown-measure", edit('greater = ["AP"]', 'greater = ["nDCG"]'), ("s.toml", "nDCG")),
    (
        "claim-unknown-criterion",
        edit('criterion = "robustness"', 'criterion = "swap"'),
        ("s.toml", "swap"),
    ),
    ("claim-unknown-level", edit('level = "50"', 'level = "30"'), ("s.toml", "30")),
    ("claim-unknown-kind", edit('kind = "order"', 'kind = "x"'), ("s.toml", "kind")),
    ("claim-unknown-against", edit('against = "full"', 'against = "P@5"'), ("s.toml", "P@5")),
    ("plugin-missing", edit("seed = 1", 'seed = 1\nplugins = ["nope.py"]'), ("s.toml", "nope.py")),
    ("plugin-raises", edit("seed = 1", 'seed = 1\nplugins = ["p.py"]'), ("p.py", "boom")),
    ("plugin-exits", edit("seed = 1", 'seed = 1\nplugins = ["x.py"]'), ("x.py", "exit")),
    (
        "trec-qrels-missing",
        edit(SIM_WORLD, TREC_WORLD.replace("w.qrels", "nope.qrels")),
        ("s.toml", "nope.qrels"),
    ),
    (
        "trec-glob-matches-nothing",
        edit(SIM_WORLD, TREC_WORLD.replace("runs/*.run", "none/*.run")),
        ("s.toml", "none/*.run"),
    ),
    (
        "trec-topics-unknown",
        edit(SIM_WORLD, TREC_WORLD + 'topics = "1,77"\n'),
        ("s.toml", "topics", "77"),
    ),
    (
        "trec-topics-backwards",
        edit(SIM_WORLD, TREC_WORLD + 'topics = "3-1"\n'),
        ("s.toml", "topics", "3-1"),
    ),
    (
        "trec-malformed-run",
        edit(SIM_WORLD, TREC_WORLD.replace("runs/*.run", "bad/*.run")),
        ("x.run", "line 1"),
    ),
    (
        "trec-one-run",
        edit(SIM_WORLD, TREC_WORLD.replace("runs/*.run", "runs/a.run")),
        ("s.toml", "worlds[0].runs", "at least 2 runs"),
    ),
    (
        "trec-qrels-is-a-directory",
        edit(SIM_WORLD, TREC_WORLD.replace('qrels = "w.qrels"', 'qrels = "runs"')),
        ("s.toml", "worlds[0].qrels", "is a directory, not a file"),
    ),
]:
    case(
        f"study-plan-{name}",
        st,
        ["study", "plan", "{d}/s.toml", "--out", "{d}/out"],
        "error",
        must,
        files={
            "s.toml": text.encode(),
            "p.py": b"raise RuntimeError('boom')\n",
            "x.py": b"import sys; sys.exit(4)\n",
            "w.qrels": QRELS,
            "runs/a.run": RUN_A,
            "runs/c.run": RUN_C,
            "bad/a.run": RUN_A,
            "bad/x.run": b"1 Q0 d1\n",
        },
    )
for name, data, must in [
    ("latin1", STUDY.replace("tiny", "t\xe9").encode("latin-1"), ("s.toml", "UTF-8")),
    ("gzip", gzip.compress(STUDY.encode()), ("s.toml", "UTF-8")),
]:
    case(
        f"study-plan-{name}",
        st,
        ["study", "plan", "{d}/s.toml"],
        "error",
        must,
        files={"s.toml": data},
    )
case("study-plan-directory", st, ["study", "plan", "{d}"], "error", ("directory",))
case("study-plan-missing", st, ["study", "plan", "{d}/nope.toml"], "error", ("nope.toml",))
case(
    "study-plan-bom-crlf",
    st,
    ["study", "plan", "{d}/s.toml", "--out", "{d}/out"],
    "ok",
    files={"s.toml": BOM + STUDY.replace("\n", "\r\n").encode()},
    check=lambda out, err, d: None if "4 units" in out else out,
)
case(
    "study-plan-claim-unknown-statistic",
    st,
    ["study", "plan", "{d}/s.toml", "--out", "{d}/out"],
    "error",
    ("s.toml", "claims[0].check.statistic", "foo", "tau_b"),
    files={"s.toml": edit('statistic = "tau_b"', 'statistic = "foo"').encode()},
)  # found when the study file is read, before anything runs
case(
    "audit-claim-unknown-statistic",
    st,
    ["audit", "{d}/s.toml", "--out", "{d}/out", "-q"],
    "error",
    ("s.toml", "foo", "tau_b"),
    files={"s.toml": edit('statistic = "tau_b"', 'statistic = "foo"').encode()},
)
case(
    "study-run-then-status-and-report",
    st,
    ["report", "{d}/out", "--format", "md"],
    "ok",
    steps=[
        ["study", "run", "{d}/s.toml", "--out", "{d}/out", "-q"],
        ["study", "status", "{d}/out"],
    ],
    files={"s.toml": STUDY.encode()},
    check=file_exists(
        "out/report/index.md",
        lambda p: (
            None
            if p.read_text().startswith("# Study tiny") and "C1" in p.read_text()
            else "the report lacks its title or its claim"
        ),
    ),
)
case(
    "report-out-unwritable",
    st,
    ["report", "{d}/out", "--out", "{d}/blocker/r"],
    "error",
    ("--out",),
    steps=[["study", "run", "{d}/s.toml", "--out", "{d}/out", "-q"]],
    files={"s.toml": STUDY.encode(), "blocker": b""},
)
case(
    "study-run-jobs-zero",
    st,
    ["study", "run", "{d}/s.toml", "-j", "0"],
    "error",
    ("--jobs",),
    files={"s.toml": STUDY.encode()},
)
case(
    "study-run-jobs-twice",
    st,
    ["study", "run", "{d}/s.toml", "--jobs", "1", "-j", "2"],
    "error",
    ("--jobs", "twice"),
    files={"s.toml": STUDY.encode()},
)
case(
    # the run files are read before any task runs, as the qrels are: one line, not a failure
    # in every task
    "study-run-trec-malformed-run",
    st,
    ["study", "run", "{d}/s.toml", "--out", "{d}/out", "-q"],
    "error",
    ("x.run", "line 1", "score"),
    files={
        "s.toml": edit(SIM_WORLD, TREC_WORLD.replace("runs/*.run", "runs/*.run*")).encode(),
        "w.qrels": QRELS,
        "runs/a.run": RUN_A,
        "runs/c.run": RUN_C,
        "runs/x.run2": b"1 Q0 d1 1 high X\n",
    },
)
case(
    "study-run-out-unwritable",
    st,
    ["study", "run", "{d}/s.toml", "--out", "{d}/blocker/o", "-q"],
    "error",
    ("--out", "blocker"),
    files={"s.toml": STUDY.encode(), "blocker": b""},
)
CORRUPT = {
    "o/manifest.json": b'{"study": "tiny", "seed": 1}',
    "o/plan.parquet": b"garbage",
    "o/results/units/t.0.parquet": b"garbage",
}
for command in (["study", "status"], ["report"]):
    what = command[-1]
    for name, files, must in [
        ("empty-folder", {"o/.keep": b""}, ("o", "manifest")),
        ("missing-folder", {}, ("nope",)),
        ("corrupt-manifest", {"o/manifest.json": b"{bad"}, ("manifest.json",)),
        ("empty-manifest", {"o/manifest.json": b"{}"}, ("manifest.json",)),
        ("manifest-is-a-list", {"o/manifest.json": b"[1, 2]"}, ("manifest.json",)),
        ("corrupt-parquet", CORRUPT, ("o", "parquet")),
    ]:
        folder = "{d}/nope" if name == "missing-folder" else "{d}/o"
        case(f"{what}-{name}", st, [*command, folder], "error", must, files=files)
case(
    "report-no-results-yet",
    st,
    ["report", "{d}/o"],
    "error",
    ("o", "no saved results"),
    files={"o/manifest.json": b'{"study": "tiny", "seed": 1}'},
)
case(
    "report-format-unknown",
    st,
    ["report", "{d}/o", "--format", "pdf"],
    "error",
    ("--format", "pdf"),
    files={"o/manifest.json": b"{}"},
)
case("report-on-a-file", st, ["report", "{Q}"], "error", ("q.qrels",))
case("audit-missing", st, ["audit", "{d}/nope.toml"], "error", ("nope.toml",))
case(
    "audit-invalid-toml",
    st,
    ["audit", "{d}/s.toml"],
    "error",
    ("s.toml", "TOML"),
    files={"s.toml": b"[study"},
)
case("card-unknown-measure", st, ["card", "-m", "Nope", "--out", "{d}/c", "-q"], "error", ("Nope",))
case(
    "card-unknown-world",
    st,
    ["card", "-m", "AP", "--world", "nowhere", "--out", "{d}/c", "-q"],
    "error",
    ("--world", "nowhere"),
)
case(
    "card-study-file-missing",
    st,
    ["card", "-m", "AP", "--world", "{d}/nope.toml:sim", "--out", "{d}/c", "-q"],
    "error",
    ("nope.toml: no such file",),
)
case(
    "card-study-world-missing",
    st,
    ["card", "-m", "AP", "--world", "{d}/s.toml:zz", "--out", "{d}/c", "-q"],
    "error",
    ("zz",),
    files={"s.toml": STUDY.encode()},
)
case(
    "card-bad-baseline",
    st,
    ["card", "-m", "AP", "--against", "P@0", "--out", "{d}/c", "-q"],
    "error",
    ("P@0",),
)
case(
    "card-plugin-missing",
    st,
    ["card", "-m", "AP", "--plugin", "{d}/nope.py"],
    "error",
    ("nope.py",),
)
case(
    "card-out-unwritable",
    st,
    ["card", "-m", "AP", "--out", "{d}/blocker/c", "-q"],
    "error",
    ("--out",),
    files={"blocker": b""},
)
case("quickstart-jobs-zero", st, ["quickstart", "-j", "0"], "error", ("--jobs",))
case(
    "quickstart-out-unwritable",
    st,
    ["quickstart", "--out", "{d}/blocker/q", "-q"],
    "error",
    ("--out", "blocker", "not a folder"),
    files={"blocker": b""},
)


# ---- 13b. added while fixing: pipes closed early, one file given twice, lists of measures
case(
    "stdin-as-qrels-and-run",
    "paths",
    ["evaluate", "/dev/stdin", "/dev/stdin"],
    "error",
    ("/dev/stdin", "both"),
    stdin=QRELS,
)
BIG_Q = "".join(f"t{t} 0 d1 1\n" for t in range(4000)).encode()
BIG_R = "".join(f"t{t} Q0 d1 1 1.0 big\n" for t in range(4000)).encode()
case(
    "output-pipe-closed-early",
    "paths",
    None,
    "ok",
    shell="set -o pipefail; {metaeval} evaluate big.qrels big.run --per-topic --format csv "
    "| head -c 10 >/dev/null; echo status=$?",
    files={"big.qrels": BIG_Q, "big.run": BIG_R},
    check=lambda out, err, d: None if out.strip() in ("status=0", "status=141") else out,
)
ONLY_UNJUDGED = QRELS + b"12 0 d1 -1\n12 0 d2 -1\n"
case(
    "topic-with-only-unjudged-documents",
    top,
    ["evaluate", "{d}/u.qrels", "{A}", "-m", "AP", "-m", "P@5", "--per-topic", "--format", "csv"],
    "ok",
    files={"u.qrels": ONLY_UNJUDGED},
    check=lambda out, err, d: compare_frames(
        parse_csv(out), oracle(ONLY_UNJUDGED, [RUN_A], ["AP", "P@5"]), all_row=True
    ),
)
case(
    "degrade-nothing-judged",
    sd,
    ["degrade", "{d}/u.qrels", "--rate", "50", "--seed", "1", "--out", "{d}/out.qrels"],
    "ok",
    files={"u.qrels": b"1 0 d1 -1\n1 0 d2 -1\n"},
    check=lambda out, err, d: f"judgments appeared: {_kept(d)}" if _kept(d) else None,
)


case(
    "study-plan-plugin-is-a-directory",
    st,
    ["study", "plan", "{d}/s.toml"],
    "error",
    ("s.toml", "plugins[0]", "directory"),
    files={"s.toml": edit("seed = 1", 'seed = 1\nplugins = ["pdir"]').encode(), "pdir/x": b""},
)
case(
    "study-plan-trec-runs-empty-list",
    st,
    ["study", "plan", "{d}/s.toml"],
    "error",
    ("s.toml", "runs"),
    files={
        "s.toml": edit(SIM_WORLD, TREC_WORLD.replace('"runs/*.run"', "[]")).encode(),
        "w.qrels": QRELS,
    },
)
case(
    "stability-size-twice",
    cr,
    ["stability", *R3, "-m", "AP", "--seed", "1", "--sizes", "1,1"],
    "error",
    ("--sizes", "twice"),
)
case(
    # --agg sets the "all" row that ends the per-topic output (trec_eval's -q)
    "evaluate-agg-with-per-topic",
    ev,
    ["evaluate", "{Q}", "{A}", "-m", "AP", "--per-topic", "--agg", "gmean", "--format", "csv"],
    "ok",
    check=base_eval(["AP"], agg="gmean"),
)


case(
    "short-option-twice-with-attached-value",
    dc,
    ["discriminate", "{Q}", "{A}", "{C}", "-B", "5", "-B50", "--seed", "1"],
    "error",
    ("--samples", "twice"),
)


case("no-command", ev, [], "error", ("command", "evaluate"))
case("study-without-its-command", st, ["study"], "error", ("command", "plan"))


case(
    "informativeness-figures-from-a-pipe",
    cr,
    [
        "informativeness",
        "{Q}",
        "/dev/stdin",
        "{C}",
        "--min-relevant",
        "1",
        "-m",
        "AP",
        "--plot",
        "{d}/figs",
    ],
    "ok",
    stdin=RUN_A,
    check=lambda out, err, d: next(
        (
            f"{name} is not a PNG image"
            for name in ("figs/pr_curves.png", "figs/rms_by_measure.png")
            if not (Path(d) / name).is_file()
            or (Path(d) / name).read_bytes()[:8] != b"\x89PNG\r\n\x1a\n"
        ),
        None,
    ),
)


# ---- 14. the Python API: ValueError/TypeError/OSError naming what is wrong, or the right result
def M(name: str):
    return importlib.import_module(name)


def _evaluate(d, runs="a.run", qrels="q.qrels", measures="AP", **kw):
    runs = f"{d}/{runs}" if isinstance(runs, str) else runs
    qrels = f"{d}/{qrels}" if isinstance(qrels, str) else qrels
    return M("metaeval").evaluate(runs, qrels, measures, **kw)


def _frame(rows):
    return pd.DataFrame(rows, columns=["topic", "doc", "grade"])


for name, fn, must in [
    ("evaluate-measures-empty", lambda d: _evaluate(d, measures=[]), ("measures",)),
    ("evaluate-measures-int", lambda d: _evaluate(d, measures=5), ("measure",)),
    ("evaluate-missing-bad", lambda d: _evaluate(d, missing="x"), ("missing",)),
    ("evaluate-depth-float", lambda d: _evaluate(d, depth=2.5), ("depth",)),
    ("evaluate-depth-bool", lambda d: _evaluate(d, depth=True), ("depth",)),
    ("evaluate-depth-zero", lambda d: _evaluate(d, depth=0), ("depth",)),
    ("evaluate-qrels-int", lambda d: _evaluate(d, qrels=42), ("qrels",)),
    ("evaluate-runs-none", lambda d: _evaluate(d, runs=None), ("runs",)),
    ("evaluate-runs-empty-list", lambda d: _evaluate(d, runs=[]), ("runs",)),
    ("evaluate-topics-int", lambda d: _evaluate(d, topics=5), ("selection",)),
    (
        "evaluate-topics-huge-range",
        lambda d: _evaluate(d, topics="1-99999999999"),
        ("1-99999999999",),
    ),
    (
        "evaluate-no-overlap",
        lambda d: _evaluate(d, runs=M("metaeval").Run.from_dict({"9": {"d": 1.0}}, "r")),
        ("no topic",),
    ),
    ("evaluate-agg-int", lambda d: _evaluate(d, per_topic=False, agg=3), ("aggregate",)),
    (
        "qrels-frame-missing-column",
        lambda d: M("metaeval").Qrels.from_df(pd.DataFrame({"topic": ["1"], "doc": ["d"]})),
        ("grade",),
    ),
    (
        "qrels-frame-nan-grade",
        lambda d: M("metaeval").Qrels.from_df(_frame([("1", "d", float("nan"))])),
        ("grade",),
    ),
    ("qrels-frame-empty", lambda d: M("metaeval").Qrels.from_df(_frame([])), ("empty",)),
    (
        "qrels-frame-missing-topic",
        lambda d: M("metaeval").Qrels.from_df(_frame([(None, "d", 1)])),
        ("topic",),
    ),
    (
        "qrels-dict-bad-grade",
        lambda d: M("metaeval").Qrels.from_dict({"1": {"d": "x"}}),
        ("grade",),
    ),
    ("qrels-dict-not-nested", lambda d: M("metaeval").Qrels.from_dict({"1": 1}), ("'1'",)),
    (
        "run-dict-nan-score",
        lambda d: M("metaeval").Run.from_dict({"1": {"d": float("nan")}}, "r"),
        ("score", "nan"),
    ),
    (
        "run-dict-inf-score",
        lambda d: M("metaeval").Run.from_dict({"1": {"d": float("inf")}}, "r"),
        ("score", "inf"),
    ),
    ("run-dict-not-nested", lambda d: M("metaeval").Run.from_dict({"1": [1.0]}, "r"), ("'1'",)),
    ("run-dict-empty", lambda d: M("metaeval").Run.from_dict({}, "r"), ("'r'",)),
    (
        "run-frame-missing-doc",
        lambda d: M("metaeval").Run.from_df(
            pd.DataFrame({"topic": ["1"], "doc": [None], "score": [1.0]}), "r"
        ),
        ("document",),
    ),
    ("run-empty-name", lambda d: M("metaeval").Run.from_dict({"1": {"d": 1.0}}, ""), ("name",)),
    (
        "runset-duplicate-names",
        lambda d: M("metaeval").RunSet([M("metaeval").Run.from_dict({"1": {"d": 1.0}}, "r")] * 2),
        ("'r'",),
    ),
    ("read-qrels-missing", lambda d: M("metaeval").read_qrels(f"{d}/nope"), ("nope",)),
    ("read-run-bad-ties", lambda d: M("metaeval").read_run(f"{d}/a.run", ties="x"), ("ties",)),
    (
        "read-run-bad-extra-fields",
        lambda d: M("metaeval").read_run(f"{d}/a.run", extra_fields="x"),
        ("extra_fields",),
    ),
    ("parse-measure-none", lambda d: M("metaeval.measures").parse_measure(None), ("measure",)),
    (
        "measure-cutoff-float",
        lambda d: type(M("metaeval.measures").parse_measure("P@10"))(cutoff=2.5),
        ("cutoff",),
    ),
    ("parse-ids-none", lambda d: M("metaeval.data").parse_ids(None), ("selection",)),
    ("parse-ids-float", lambda d: M("metaeval.data").parse_ids([1.5]), ("1.5",)),
    (
        "parse-ids-huge-range",
        lambda d: M("metaeval.data").parse_ids("1-99999999999"),
        ("1-99999999999",),
    ),
    (
        "score-matrices-bad-missing",
        lambda d: M("metaeval.evaluation").score_matrices(None, ["AP"], missing="x"),
        ("missing",),
    ),
    (
        "load-spec-missing",
        lambda d: M("metaeval.study").load_spec(f"{d}/nope.toml"),
        ("nope.toml",),
    ),
    (
        "load-plugin-missing",
        lambda d: M("metaeval.measures").load_plugin(f"{d}/nope.py"),
        ("nope.py",),
    ),
    (
        "aggregate-eps-overflow",
        lambda d: M("metaeval.aggregate").parse_aggregate("gmean(eps=1e400)"),
        ("eps",),
    ),
    (
        "aggregate-eps-bool",
        lambda d: M("metaeval.aggregate").Aggregate("gmean", eps=True),
        ("eps",),
    ),
]:
    case(f"api-{name}", "python API", api=fn, must=must)


def _api_files(d):
    got = M("metaeval").evaluate([f"{d}/a.run", f"{d}/c.run"], f"{d}/q.qrels", ["AP", "P@10"])
    return compare_frames(got, oracle(QRELS, [RUN_A, RUN_C], ["AP", "P@10"]))


def _api_dicts(d):
    got = M("metaeval").evaluate({"A": ref_run(RUN_A)[1]}, ref_qrels(QRELS), ["AP", "nDCG@10"])
    return compare_frames(got, oracle(QRELS, [RUN_A], ["AP", "nDCG@10"]))


def _api_skip(d):
    with pytest.warns(UserWarning, match="have no judgments"):  # run B's topic 99
        got = M("metaeval").evaluate(
            {"B": ref_run(RUN_B)[1]}, ref_qrels(QRELS), ["AP"], missing="skip"
        )
    return compare_frames(got, oracle(QRELS, [RUN_B], ["AP"], missing="skip"))


def _api_one_path(d):
    runs = M("metaeval").read_runs(f"{d}/a.run")  # one path, not a list of its characters
    return None if runs.names == ["A"] else f"read {runs.names}"


def _float_topics(d):
    qrels = pd.DataFrame({"topic": [1.0, 2.0], "doc": ["d1", "d7"], "grade": [1, 1]})
    return M("metaeval").evaluate(f"{d}/a.run", qrels, "AP")


case("api-evaluate-files", "python API", api=_api_files, expect="ok")
case("api-read-runs-one-path", "python API", api=_api_one_path, expect="ok")
case("api-topics-read-as-floats", "python API", api=_float_topics, must=("'1.0'", "as text"))
case(
    "api-qrels-frame-grade-too-big",
    "python API",
    api=lambda d: M("metaeval").Qrels.from_df(_frame([("1", "d", 200)])),
    must=("grade 200 is above", "127"),
)
case("api-evaluate-dicts", "python API", api=_api_dicts, expect="ok")
case("api-evaluate-skip", "python API", api=_api_skip, expect="ok")


# ------------------------------------------------------------------------- the classification
def classify(c: Case, code: int, out: str, err: str, d: Path) -> tuple[str, str]:
    """OK, TRACEBACK, SILENT-WRONG or UNCLEAR, and why."""
    if "Traceback" in err or code not in (0, 1, 2, 130):
        return "TRACEBACK", f"exit {code}: {err[-300:]}"
    lines = [x for x in err.splitlines() if x.strip()]
    errors = [x for x in lines if x.startswith("error: ")]
    other = [x for x in lines if not x.startswith(("error: ", "warning: ", "seed: "))]
    if c.expect == "error":
        if code == 0:
            return "SILENT-WRONG", f"exit 0, expected an error naming {c.must}: {out[:200]!r}"
        if len(errors) != 1 or other:
            return "UNCLEAR", f"not one error line: {err[:300]!r}"
        lacking = [m for m in c.must if m.lower() not in errors[0].lower()]
        return ("UNCLEAR", f"{errors[0]!r} lacks {lacking}") if lacking else ("OK", errors[0])
    if code != 0:
        return "UNCLEAR", f"valid input refused (exit {code}): {err[:300]}"
    if any("Exception" in x or "Error" in x for x in other):  # e.g. "Exception ignored in..."
        return "UNCLEAR", f"stray stderr lines: {other}"
    if c.expect == "warn" and not any(
        x.startswith("warning: ") and all(m.lower() in x.lower() for m in c.must) for x in lines
    ):
        return "SILENT-WRONG", f"no warning naming {c.must}: {err[:300]!r}"
    problem = c.check(out, err, d) if c.check else None
    return ("SILENT-WRONG", str(problem)) if problem else ("OK", "")


def classify_api(c: Case, d: Path) -> tuple[str, str]:
    try:
        result = c.api(str(d))
    except (ValueError, TypeError, OSError) as e:
        if c.expect == "ok":
            return "UNCLEAR", f"a valid call raised {type(e).__name__}: {e}"
        lacking = [m for m in c.must if m.lower() not in str(e).lower()]
        return (
            ("UNCLEAR", f"{type(e).__name__}: {e} lacks {lacking}") if lacking else ("OK", str(e))
        )
    except Exception as e:
        return "TRACEBACK", f"internal error {type(e).__name__}: {e}"
    if c.expect == "ok":
        return ("SILENT-WRONG", str(result)) if result else ("OK", "")
    return "SILENT-WRONG", f"no error, returned {result!r:.200}"


def _fill(text: str, d: Path) -> str:
    for key, name in (("{Q}", "q.qrels"), ("{A}", "a.run"), ("{B}", "b.run"), ("{C}", "c.run")):
        text = text.replace(key, str(d / name))
    return text.replace("{d}", str(d))


def _prepare(c: Case, d: Path) -> None:
    for name, data in (("q.qrels", QRELS), ("a.run", RUN_A), ("b.run", RUN_B), ("c.run", RUN_C)):
        (d / name).write_bytes(data)
    for name, data in c.files.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):  # a symbolic link to a missing file
            os.symlink(d / "nowhere", d / name)
        else:
            (d / name).write_bytes(data)


def _subprocess(argv_or_shell, d: Path, stdin: bytes | None) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("METAEVAL_DEBUG", None)
    if isinstance(argv_or_shell, str):
        metaeval = f"{sys.executable} -m metaeval"
        if "{metaeval}" not in argv_or_shell:
            argv_or_shell = "{metaeval} " + argv_or_shell
        cmd = ["bash", "-c", argv_or_shell.replace("{metaeval}", metaeval)]
    else:
        cmd = [sys.executable, "-m", "metaeval", *argv_or_shell]
    proc = subprocess.run(cmd, cwd=d, input=stdin or b"", capture_output=True, env=env)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_bad_input(c, tmp_path, capsys, monkeypatch, registry):
    _prepare(c, tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("METAEVAL_DEBUG", raising=False)
    if c.api is not None:
        status, detail = classify_api(c, tmp_path)
        assert status == "OK", f"{status}: {detail}"
        return
    for step in c.steps:
        code = run([_fill(str(a), tmp_path) for a in step])
        assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    if c.shell is not None or c.stdin is not None:
        what = _fill(c.shell, tmp_path) if c.shell else [_fill(str(a), tmp_path) for a in c.argv]
        code, out, err = _subprocess(what, tmp_path, c.stdin)
    else:
        code = run([_fill(str(a), tmp_path) for a in c.argv])
        captured = capsys.readouterr()
        out, err = captured.out, captured.err
    status, detail = classify(c, code, out, err, tmp_path)
    assert status == "OK", f"{status}: {detail}"


def test_the_battery_is_large_and_covers_every_command():
    commands = {
        c.argv[0] if c.argv[0] != "study" else " ".join(c.argv[:2]) for c in CASES if c.argv
    }
    commands |= {s[0] if s[0] != "study" else " ".join(s[:2]) for c in CASES for s in c.steps}
    assert len(CASES) >= 150
    assert commands >= {
        "evaluate",
        "measures",
        "quickstart",
        "discriminate",
        "compare",
        "informativeness",
        "robustness",
        "stability",
        "correlate",
        "simulate",
        "degrade",
        "report",
        "audit",
        "card",
        "study plan",
        "study run",
        "study status",
    }
