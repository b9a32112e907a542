"""Oracle: trec_eval 10.0 itself, built from its source, for the measures it added or changed.

``iprec_at_recall`` and ``11pt_avg`` (10.0 rounds the recall cut with lround), ``yaap``,
``rbp``, ``rbp_resid`` and ``unj_5/10/20`` are compared per topic and on the ``all`` line
within 1e-6, under ``-c`` and with ``-l``, ``-J`` and ``-M``, on trec_eval's own test inputs,
on TREC DL 2019 runs and on random collections with score ties, unjudged documents, topics
without relevant documents and graded judgments. Every measure is looked up by the name
trec_eval prints, so the trec_eval names are tested too.

The build is a private copy of ``../shared/tools/trec_eval-10.0`` (made once per session
under pytest's temporary directory) with two changes (``../shared/tools/README.md``): values
printed with ``%.17g`` instead of ``%6.4f``, and the two variables ``m_rbp.c`` reads before
setting them set to 0, which gives the values of ``-m rbp`` asked alone. The patched build
is checked to print what trec_eval's own expected outputs print at 4 decimals.

trec_eval 9's rule (``IPrec(rounding=trec9)``) is checked against pytrec_eval, which is
trec_eval 9.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import metaeval
from metaeval.measures import parse_measure
from tests.conftest import DATA, FIXTURES, float32_scores, need_data

SOURCE = DATA.parent / "tools" / "trec_eval-10.0"
#: The measures compared, asked together (rbp is asked alone, see below).
MEASURES = ("iprec_at_recall", "11pt_avg", "yaap", "unj", "rbp_resid")
#: Values per topic: 11 iprec_at_recall, 11pt_avg, yaap, 3 unj, rbp_resid and rbp.
PER_TOPIC = 18
TOLERANCE = 1e-6


# ---------------------------------------------------------------------------- the oracle
@pytest.fixture(scope="session")
def trec_eval10(tmp_path_factory) -> Path:
    """Path of the patched trec_eval 10.0 binary, built once per session."""
    if not SOURCE.exists():
        pytest.skip(f"trec_eval 10.0 source not found at {SOURCE} (../shared/tools)")
    for tool in ("gcc", "make"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not found: cannot build trec_eval 10.0 from {SOURCE}")
    work = tmp_path_factory.mktemp("trec_eval10") / "trec_eval"
    shutil.copytree(SOURCE, work)
    for name in ("meas_print_single.c", "meas_print_final.c"):
        path = work / name
        text = path.read_text()
        assert "%6.4f" in text, f"{name}: print format not found, the patch needs updating"
        path.write_text(text.replace("%6.4f", "%.17g"))
    rbp = work / "m_rbp.c"
    text = rbp.read_text()
    assert "double sum, min, max;" in text, "m_rbp.c changed: the patch needs updating"
    rbp.write_text(text.replace("double sum, min, max;", "double sum, min = 0, max = 0;"))
    build = subprocess.run(["make", "-C", str(work)], capture_output=True, text=True)
    if build.returncode != 0:
        pytest.fail(f"building trec_eval 10.0 failed:\n{build.stderr[-2000:]}")
    return work / "trec_eval"


def run_trec_eval(binary: Path, qrels: Path, run: Path, measures, flags=()) -> dict:
    """trec_eval's ``-q`` output as {(measure name, topic): value} (NaN kept)."""
    args = [str(binary), "-q", *flags]
    for m in measures:
        args += ["-m", m]
    out = subprocess.run([*args, str(qrels), str(run)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    values = {}
    for line in out.stdout.splitlines():
        name, topic, value = (x.strip() for x in line.split("\t"))
        if name not in ("runid", "relstring"):  # text values
            values[name, topic] = float(value)  # "-nan" and "nan" parse as NaN
    return values


def oracle(binary: Path, qrels: Path, run: Path, flags=()) -> dict:
    values = run_trec_eval(binary, qrels, run, MEASURES, flags)
    values.update(run_trec_eval(binary, qrels, run, ["rbp"], flags))  # rbp asked alone
    return values


def options(flags) -> tuple[int, bool, int | None]:
    """Relevance level, judged-only and depth from trec_eval flags (-l2, -J, -M7)."""
    rel, judged, depth = 1, False, None
    for f in flags:
        if f.startswith("-l"):
            rel = int(f[2:])
        elif f == "-J":
            judged = True
        elif f.startswith("-M"):
            depth = int(f[2:])
    return rel, judged, depth


def ours(name: str, rel: int, judged: bool) -> str:
    """Our measure for a trec_eval output name under -l and -J."""
    m = parse_measure(name)  # the trec_eval name itself
    if rel != 1 and hasattr(m, "rel"):
        m = dataclasses.replace(m, rel=rel)
    return str(m.condensed() if judged else m)


def compare(binary, qrels_path: Path, run_path: Path, flags=()) -> tuple[int, float, int]:
    """Compare every per-topic and ``all`` value; return (values compared, max abs diff,
    NaN values of trec_eval's that metaeval scores 0)."""
    flags = ("-c", *flags)
    expected = oracle(binary, qrels_path, run_path, flags)
    rel, judged, depth = options(flags)
    run = metaeval.read_run(run_path, extra_fields="ignore")
    qrels = metaeval.read_qrels(qrels_path)
    tensor = metaeval.EvalTensor.build(run, qrels, depth=depth, warn_extra_topics=False)
    names = sorted({name for name, _ in expected})
    measures = {name: ours(name, rel, judged) for name in names}
    scores = metaeval.score_matrices(tensor, list(dict.fromkeys(measures.values())))
    topics = {str(t): i for i, t in enumerate(tensor.topics)}
    compared, worst, nans = 0, 0.0, 0
    for name in names:
        got = scores[measures[name]][0]
        per_topic = {t: v for (n, t), v in expected.items() if n == name and t != "all"}
        assert set(per_topic) == set(topics), (name, sorted(per_topic), sorted(topics))
        trec_values = []
        for topic, value in per_topic.items():
            mine = got[topics[topic]]
            if math.isnan(value):
                # trec_eval 10 divides 0 by 0 for an empty list under -J (iprec_at_recall
                # at levels cut to 0 docs, 11pt_avg): metaeval scores 0 there.
                assert judged and name.startswith(("iprec", "11pt")), (name, topic)
                assert mine == 0.0, (name, topic, mine)
                nans += 1
                value = 0.0
            else:
                diff = abs(mine - value)
                assert diff <= TOLERANCE, (str(run_path), flags, name, topic, mine, value)
                worst = max(worst, diff)
            trec_values.append(value)
            compared += 1
        total = expected[name, "all"]
        if math.isnan(total):  # a NaN topic made the mean NaN: compare with its zeros
            total = float(np.mean(trec_values))
        diff = abs(float(np.mean(got)) - total)
        assert diff <= TOLERANCE, (str(run_path), flags, name, "all", np.mean(got), total)
        worst = max(worst, diff)
        compared += 1
    return compared, worst, nans


# ---------------------------------------------------------------------------- inputs
def random_collection(seed: int, folder: Path) -> tuple[Path, Path]:
    """Qrels and a run with score ties, unjudged and pooled-unjudged documents, graded and
    binary topics, topics without relevant documents, a topic the run does not answer and a
    run topic without judgments."""
    rng = np.random.default_rng(seed)
    qrels_lines, run_lines = [], []
    n_topics = 12
    for t in range(n_topics):
        topic = f"{seed}{t:02d}"
        n_docs = int(rng.integers(4, 45))
        docs = [f"D{t}-{i}" for i in rng.permutation(n_docs * 3)[:n_docs]]
        top = (3, 1, 2, 0)[t % 4]  # the topic's highest grade; 0 = nothing relevant
        grades = rng.integers(0, top + 1, size=n_docs)
        judged = rng.random(n_docs) < 0.6
        judged[0] = True
        grades[0] = top
        for doc, grade, is_judged in zip(docs, grades, judged):
            if is_judged:
                qrels_lines.append(f"{topic} 0 {doc} {grade}")
            elif rng.random() < 0.3:
                qrels_lines.append(f"{topic} 0 {doc} -1")  # pooled but unjudged
        if t == n_topics - 1:
            continue  # a topic the run does not answer (trec_eval -c scores it)
        pool = docs + [f"U{t}-{i}" for i in range(int(rng.integers(0, 10)))]  # unpooled
        retrieved = rng.permutation(pool)[: int(rng.integers(1, len(pool) + 1))]
        scores = rng.integers(0, 6, size=len(retrieved)) / 2  # many ties
        for rank, (doc, score) in enumerate(zip(retrieved, scores), 1):
            run_lines.append(f"{topic} Q0 {doc} {rank} {score} rnd{seed}")
    run_lines.append(f"{seed}99 Q0 X 1 1.0 rnd{seed}")  # no judgments: not evaluated
    qrels_path, run_path = folder / f"qrels.{seed}", folder / f"run.{seed}"
    qrels_path.write_text("\n".join(qrels_lines) + "\n")
    run_path.write_text("\n".join(run_lines) + "\n")
    return qrels_path, run_path


@pytest.fixture(scope="module")
def random_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("random_collections")
    return [random_collection(seed, folder) for seed in (11, 12, 13)]


@pytest.fixture(scope="module")
def dl_files(tmp_path_factory):
    folder = need_data("trec-dl-2019")
    out = tmp_path_factory.mktemp("dl19")
    runs = []
    for path in sorted((folder / "runs").glob("*.gz"))[:3]:
        plain = out / path.name.removesuffix(".gz")
        plain.write_bytes(gzip.decompress(path.read_bytes()))  # trec_eval reads plain text
        runs.append(plain)
    return folder / "qrels.txt", runs


# ---------------------------------------------------------------------------- tests
def test_patched_build_prints_trec_eval_expected_outputs(trec_eval10):
    """At 4 decimals the patched build prints trec_eval's own expected outputs (out.test.*)
    for the measures compared here."""
    need_data("trec_eval-fixtures")
    cases = {
        "out.test.aq": ("qrels.test", "results.test", []),
        "out.test.aqc": ("qrels.test", "results.trunc", ["-c"]),
        "out.test.aqcM": ("qrels.test", "results.trunc", ["-c", "-M100"]),
        "out.test.aql": ("qrels.rel_level", "results.test", ["-l2"]),
    }
    checked = 0
    for out_file, (qrels, run, flags) in cases.items():
        got = run_trec_eval(trec_eval10, FIXTURES / qrels, FIXTURES / run, ["all_trec"], flags)
        for line in (FIXTURES / out_file).read_text().splitlines():
            name, topic, value = (x.strip() for x in line.split("\t"))
            if name.startswith(("iprec_at_recall", "11pt_avg", "rbp", "unj")):
                assert f"{got[name, topic]:.4f}" == value, (out_file, name, topic)
                checked += 1
    assert checked >= 4 * 3 * 16


FIXTURE_CASES = [
    ("qrels.test", "results.test", ()),
    ("qrels.test", "results.trunc", ()),  # topic 302 missing: -c scores it
    ("qrels.test", "results.trunc", ("-M100",)),
    ("qrels.rel_level", "results.test", ()),  # grades 0-4 and -1 (pooled, unjudged)
    ("qrels.rel_level", "results.test", ("-l2",)),
    ("qrels.rel_level", "results.test", ("-J",)),
    ("qrels.test", "results.trunc", ("-J",)),  # -c -J: trec_eval gives NaN for 302
    ("qrels.comment.test", "results.comment.test", ()),
]


@pytest.mark.parametrize(("qrels", "run", "flags"), FIXTURE_CASES)
def test_trec_eval_fixtures(trec_eval10, qrels, run, flags):
    need_data("trec_eval-fixtures")
    compared, worst, _ = compare(trec_eval10, FIXTURES / qrels, FIXTURES / run, flags)
    assert compared >= 3 * PER_TOPIC and worst <= TOLERANCE


@pytest.mark.parametrize("flags", [(), ("-l2",)])
def test_trec_dl_2019_runs(trec_eval10, dl_files, flags):
    qrels, runs = dl_files
    for run in runs:
        compared, worst, _ = compare(trec_eval10, qrels, run, flags)
        assert compared == PER_TOPIC * 44 and worst <= TOLERANCE  # 43 topics and all


@pytest.mark.parametrize("flags", [(), ("-l2",), ("-J",), ("-M7",), ("-l3", "-J")])
def test_random_collections(trec_eval10, random_files, flags):
    for qrels, run in random_files:
        compared, worst, nans = compare(trec_eval10, qrels, run, flags)
        assert compared == PER_TOPIC * 13 and worst <= TOLERANCE
        if "-J" not in flags:
            assert nans == 0


def test_rounding_of_trec_eval_10_and_9(trec_eval10, random_files):
    """Where lround (10.0) and trunc(x R + 0.9) (9) give different cuts, IPrec follows
    trec_eval 10.0 by default and pytrec_eval (trec_eval 9) with rounding=trec9."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    differ = 0
    for qrels_path, run_path in random_files:
        expected = oracle(trec_eval10, qrels_path, run_path, ("-c",))
        qrels = metaeval.read_qrels(qrels_path)
        # pytrec_eval compares scores as float32: halves are exact there, so no change here.
        run = float32_scores(metaeval.RunSet([metaeval.read_run(run_path)]))[0]
        nine = pytrec_eval.RelevanceEvaluator(qrels.to_dict(), {"iprec_at_recall", "11pt_avg"})
        nine = nine.evaluate(run.to_dict())
        tensor = metaeval.EvalTensor.build(run, qrels, warn_extra_topics=False)
        topics = {str(t): i for i, t in enumerate(tensor.topics)}
        names = [f"iprec_at_recall_{x:.2f}" for x in np.linspace(0, 1, 11)] + ["11pt_avg"]
        for name in names:
            m = parse_measure(name)
            m9 = dataclasses.replace(m, rounding="trec9")
            ten, old = m.compute(tensor)[0], m9.compute(tensor)[0]
            for topic, values in nine.items():  # pytrec_eval: the topics the run answered
                i = topics[topic]
                assert abs(old[i] - values[name]) <= 1e-12, (name, topic, old[i], values[name])
                assert abs(ten[i] - expected[name, topic]) <= TOLERANCE, (name, topic)
                differ += abs(values[name] - expected[name, topic]) > 1e-9
    assert differ >= 5  # the two rules really differ on these collections


def test_trec_eval_names_round_trip():
    for name in ("rbp", "rbp_resid", "yaap", "11pt_avg", "unj_5", "iprec_at_recall_0.30"):
        assert metaeval.measures.base.trec_eval_name(parse_measure(name)) == name


# ------------------------------------------------------- every measure of -m all_trec, as users run it
#: trec_eval's flags and metaeval evaluate's options for them.
def _cli_options(flags) -> list[str]:
    options = ["-c"] if "-c" in flags else ["--missing", "skip"]
    options += ["--extra-fields", "ignore"]
    for f in flags:
        if f.startswith(("-l", "-M")):
            options += [f[:2], f[2:]]
        elif f == "-J":
            options.append("-J")
    return options


def compare_all_trec(cli, binary, qrels: Path, run: Path, flags=()) -> tuple[int, float]:
    """``metaeval evaluate -m all_trec -m yaap -q`` against trec_eval 10.0's output: the same
    lines (but ``runid`` and ``relstring``, text), every value within 1e-6. Returns (values
    compared, worst difference)."""
    expected = run_trec_eval(binary, qrels, run, ["all_trec", "yaap"], flags)
    argv = ["evaluate", qrels, run, "-m", "all_trec", "-m", "yaap", "-q", "--format", "json"]
    code, out, err = cli([*argv, *_cli_options(flags)])
    assert code == 0, err
    got = {
        (metaeval.measures.base.trec_eval_name(row["measure"]), row["topic"]): row["value"]
        for row in json.loads(out)
    }
    assert set(got) == set(expected), (
        sorted(set(expected) - set(got))[:10],
        sorted(set(got) - set(expected))[:10],
    )
    worst = 0.0
    for key, value in expected.items():
        mine = got[key]
        if math.isnan(value):
            # trec_eval 10 divides 0 by 0 for an empty list under -J (iprec_at_recall at
            # levels cut to 0 docs, 11pt_avg): metaeval scores 0 there.
            assert "-J" in flags and key[0].startswith(("iprec", "11pt")), (key, mine)
            continue
        assert mine is not None and abs(mine - value) <= TOLERANCE, (
            str(run),
            flags,
            key,
            mine,
            value,
        )
        worst = max(worst, abs(mine - value))
    return len(expected), worst


ALL_TREC_FIXTURES = [
    ("qrels.test", "results.test", ()),
    ("qrels.test", "results.trunc", ("-c",)),
    ("qrels.test", "results.trunc", ("-c", "-M100")),
    ("qrels.test", "results.trunc", ("-c", "-J")),
    ("qrels.rel_level", "results.test", ()),
    ("qrels.rel_level", "results.test", ("-l2",)),
    ("qrels.rel_level", "results.test", ("-J",)),
    ("qrels.comment.test", "results.comment.test", ()),
]


@pytest.mark.parametrize(("qrels", "run", "flags"), ALL_TREC_FIXTURES)
def test_all_trec_on_trec_eval_fixtures(cli, trec_eval10, qrels, run, flags):
    need_data("trec_eval-fixtures")
    compared, worst = compare_all_trec(cli, trec_eval10, FIXTURES / qrels, FIXTURES / run, flags)
    assert compared > 3 * 100 and worst <= TOLERANCE


@pytest.mark.parametrize("flags", [("-c",), ("-c", "-l2"), ("-c", "-J"), ("-c", "-M7")])
def test_all_trec_on_random_collections(cli, trec_eval10, random_files, flags):
    for qrels, run in random_files:
        compared, worst = compare_all_trec(cli, trec_eval10, qrels, run, flags)
        assert compared > 10 * 100 and worst <= TOLERANCE


@pytest.mark.parametrize("flags", [("-c",), ("-c", "-l2")])
def test_all_trec_on_trec_dl_2019_runs(cli, trec_eval10, dl_files, flags):
    qrels, runs = dl_files
    for run in runs:
        compared, worst = compare_all_trec(cli, trec_eval10, qrels, run, flags)
        assert compared > 44 * 90 and worst <= TOLERANCE
