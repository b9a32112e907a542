"""Oracle: cwl_eval itself (Azzopardi, Thomas & Moffat, SIGIR 2019; PyPI ``cwl-eval``) against
metaeval's C/W/L measures, every output (EU, ETU, EC, ETC, ED and their residuals) per topic.

cwl_eval is run through its Python API (``TrecQrelHandler``, ``RankingMaker`` and the metric
classes, with residuals on: what its command line does per topic) on

* trec_eval's fixtures (binary, and graded -1..4 with unjudged rows),
* three TREC DL 2019 runs against the track's qrels (a strong run, a baseline and a run 20 deep),
* random collections made here: grades up to 1..4, unjudged (-1) and unpooled documents, lists
  of 1 document up, topics with nothing relevant, tied scores,

and through its command line (default measures, ``-r``) on a fixture. cwl_eval reads gains
from the qrels: it is given a qrels file whose values are metaeval's gains (grade / highest
grade by default; the grades themselves with ``gain=grade`` and ``--max_gain``), without the
unjudged (-1) rows, which it would refuse and which both tools treat as absent. cwl_eval takes a
run file's line order as the ranking: it is given metaeval's ranking order, and, for the random
collections, the run files' own order (equal scores in a random order), which metaeval reads
with ``ties="input"``.

Tolerance 1e-6 (the largest difference is 2e-12, from the order of summation), and 5e-5 on the
command line, which prints 4 decimals.
"""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from metaeval import EvalTensor, Qrels, RunSet, read_qrels, read_run, read_runs
from metaeval.measures import parse_measure
from metaeval.measures.cwl import DEFAULT_DEPTH, OUTPUTS
from tests.conftest import FIXTURES, need_data

pytest.importorskip(
    "cwl.ruler.cwl_ruler",
    reason="cwl-eval is not installed (pip install cwl-eval, in the test extra): the C/W/L "
    "oracle runs it",
)
from cwl.ruler.measures.cwl_ap import APCWLMetric
from cwl.ruler.measures.cwl_bpm import BPMCWLMetric, BPMDCWLMetric
from cwl.ruler.measures.cwl_dcg import NDCGCWLMetric
from cwl.ruler.measures.cwl_ift import (
    IFTGoalCWLMetric,
    IFTGoalRateCWLMetric,
    IFTRateCWLMetric,
)
from cwl.ruler.measures.cwl_insq import INSQCWLMetric
from cwl.ruler.measures.cwl_inst import INSTCWLMetric
from cwl.ruler.measures.cwl_nerr import (
    NERReq8CWLMetric,
    NERReq9CWLMetric,
    NERReq10CWLMetric,
    NERReq11CWLMetric,
)
from cwl.ruler.measures.cwl_npv import NPVCWLMetric
from cwl.ruler.measures.cwl_precision import PrecisionCWLMetric
from cwl.ruler.measures.cwl_rbp import RBPCWLMetric
from cwl.ruler.measures.cwl_rr import RRCWLMetric
from cwl.ruler.measures.cwl_set import SETCWLMetric
from cwl.ruler.measures.cwl_tbg import TBGCWLMetric
from cwl.ruler.measures.cwl_umeasure import UMeasureCWLMetric
from cwl.ruler.ranking import RankingMaker
from cwl.seeker.trec_qrel_handler import TrecQrelHandler

TOL = 1e-6

#: Our measure -> cwl_eval's metric: every measure its command line runs by default, its
#: README's list (with the README's parameters) and the two its source holds besides (NPV,
#: SET). A factory: a metric object keeps the last ranking's values.
MEASURES = {
    "CWL_P@1": lambda: PrecisionCWLMetric(1),
    "CWL_P@2": lambda: PrecisionCWLMetric(2),
    "CWL_P@5": lambda: PrecisionCWLMetric(5),
    "CWL_P": lambda: PrecisionCWLMetric(),
    "CWL_P@20": lambda: PrecisionCWLMetric(20),
    "CWL_RBP(theta=0.2)": lambda: RBPCWLMetric(0.2),
    "CWL_RBP(theta=0.8)": lambda: RBPCWLMetric(0.8),
    "CWL_RBP": lambda: RBPCWLMetric(),
    "CWL_RBP(theta=0.995)": lambda: RBPCWLMetric(0.995),  # 1 - theta^n far from 1
    "NPV": lambda: NPVCWLMetric(),
    "SDCG@5": lambda: NDCGCWLMetric(5),
    "SDCG@10": lambda: NDCGCWLMetric(10),
    "CWL_RR": lambda: RRCWLMetric(),
    "CWL_AP": lambda: APCWLMetric(),
    "INST": lambda: INSTCWLMetric(1.0),
    "INST(T=2)": lambda: INSTCWLMetric(2.0),
    "INST(T=3)": lambda: INSTCWLMetric(3.0),
    "INSQ": lambda: INSQCWLMetric(1.0),
    "INSQ(T=2)": lambda: INSQCWLMetric(2.0),
    "BPM": lambda: BPMCWLMetric(),
    "BPM(T=1,K=1000)": lambda: BPMCWLMetric(1.0, 1000),
    "BPM(T=1000,K=10)": lambda: BPMCWLMetric(1000, 10),
    "BPM(T=1.2,K=10)": lambda: BPMCWLMetric(1.2, 10),
    "BPM_dynamic": lambda: BPMDCWLMetric(),
    "BPM_dynamic(T=1.2,K=10)": lambda: BPMDCWLMetric(1.2, 10, 1.0, 1.0),
    # the cost budget binds first: cwl_eval keeps K fixed (see BPM_dynamic)
    "BPM_dynamic(T=1000,K=10)": lambda: BPMDCWLMetric(1000, 10, 1.0, 1.0),
    "BPM_dynamic(T=2,K=30,hb=0.7,gain_med=0.3)": lambda: BPMDCWLMetric(2.0, 30, 0.7, 1.0, 0.3),
    "Umeasure": lambda: UMeasureCWLMetric(),
    "Umeasure(L=50)": lambda: UMeasureCWLMetric(50),
    "Umeasure(L=10)": lambda: UMeasureCWLMetric(10),
    "TBG": lambda: TBGCWLMetric(),
    "TBG(halflife=22)": lambda: TBGCWLMetric(22),
    "IFT_goal(T=2,b1=0.9,R1=1)": lambda: IFTGoalCWLMetric(2.0, 0.9, 1),
    "IFT_goal(T=2,b1=0.9,R1=10)": lambda: IFTGoalCWLMetric(2.0, 0.9, 10),
    "IFT_goal(T=2,b1=0.9,R1=100)": lambda: IFTGoalCWLMetric(2.0, 0.9, 100),
    "IFT_rate(A=0.2,b2=0.9,R2=1)": lambda: IFTRateCWLMetric(0.2, 0.9, 1),
    "IFT_rate(A=0.2,b2=0.9,R2=10)": lambda: IFTRateCWLMetric(0.2, 0.9, 10),
    "IFT_rate(A=0.2,b2=0.9,R2=100)": lambda: IFTRateCWLMetric(0.2, 0.9, 100),
    "IFT_goal_rate(T=2,b1=0.9,R1=10,A=2,b2=0.9,R2=10)": lambda: IFTGoalRateCWLMetric(
        2.0, 0.9, 10, 2.0, 0.9, 10
    ),
    "IFT_goal_rate(T=2,b1=0.9,R1=100,A=2,b2=0.9,R2=100)": lambda: IFTGoalRateCWLMetric(
        2.0, 0.9, 100, 2.0, 0.9, 100
    ),
    "NERR_eq8@10": lambda: NERReq8CWLMetric(10),
    "NERR_eq9@10": lambda: NERReq9CWLMetric(10),
    "NERR_eq10": lambda: NERReq10CWLMetric(),
    "NERR_eq10(phi=0.8)": lambda: NERReq10CWLMetric(0.8),
    "NERR_eq11": lambda: NERReq11CWLMetric(),
    "NERR_eq11(T=2)": lambda: NERReq11CWLMetric(2.0),
    "SET": lambda: SETCWLMetric(),
    "SET(beta=0.2)@5": lambda: SETCWLMetric(0.2, 5),
}

#: A cost per document (cwl_eval: a cost file giving Q0 that cost, and max_cost = min_cost =
#: it), the grades as gains (``--max_gain``), a gain per grade (a gain file) and other depths
#: (``--max_depth``; a cutoff k above the depth, which cwl_eval's SDCG and NERR allow).
VARIANTS = {
    "CWL_P(cost=2.5)@10": lambda: PrecisionCWLMetric(10),
    "BPM(T=1.2,K=10,cost=2.5)": lambda: BPMCWLMetric(1.2, 10),
    "BPM_dynamic(T=2,K=30,cost=0.1)": lambda: BPMDCWLMetric(2.0, 30),
    "TBG(halflife=22,cost=2.5)": lambda: TBGCWLMetric(22),
    "Umeasure(L=50,cost=2.5)": lambda: UMeasureCWLMetric(50),
    "IFT_rate(A=0.2,b2=0.9,R2=10,cost=2.5)": lambda: IFTRateCWLMetric(0.2, 0.9, 10),
    "IFT_goal_rate(T=2,b1=0.9,R1=10,A=2,b2=0.9,R2=10,cost=0.5)": lambda: IFTGoalRateCWLMetric(
        2.0, 0.9, 10, 2.0, 0.9, 10
    ),
    "INST(T=2,cost=2.5)": lambda: INSTCWLMetric(2.0),
    "CWL_RBP(gain=grade,max_gain=4)": lambda: RBPCWLMetric(),
    "CWL_AP(gain=grade,max_gain=4)": lambda: APCWLMetric(),
    "CWL_RR(gain=grade,max_gain=4)": lambda: RRCWLMetric(),
    "BPM(gain=grade,max_gain=4,T=3)": lambda: BPMCWLMetric(3.0, 10),
    "SDCG(gain=grade,max_gain=5)@10": lambda: NDCGCWLMetric(10),
    "IFT_goal(T=2,b1=0.9,R1=10,gain=grade,max_gain=4)": lambda: IFTGoalCWLMetric(2.0, 0.9, 10),
    "INST(gains={1:0.1,2:0.6,3:0.7,4:0.8})": lambda: INSTCWLMetric(1.0),
    "NERR_eq10(gains={1:0.3,2:0.5,3:0.6,4:0.7},max_gain=0.7)": lambda: NERReq10CWLMetric(),
    "CWL_AP(max_depth=7)": lambda: APCWLMetric(),
    "CWL_RBP(max_depth=3)": lambda: RBPCWLMetric(),
    "INST(T=2,max_depth=12)": lambda: INSTCWLMetric(2.0),
    "SDCG(max_depth=4)@10": lambda: NDCGCWLMetric(10),
    "NERR_eq9(max_depth=3)@5": lambda: NERReq9CWLMetric(5),
    "Umeasure(L=5,max_depth=2)": lambda: UMeasureCWLMetric(5),
    "TBG(halflife=3,max_depth=9)": lambda: TBGCWLMetric(3),
    "BPM_dynamic(max_depth=1)": lambda: BPMDCWLMetric(),
}

#: cwl_eval's attribute for each output.
ATTRIBUTES = {
    "EU": "expected_utility",
    "ETU": "expected_total_utility",
    "EC": "expected_cost",
    "ETC": "expected_total_cost",
    "ED": "expected_items",
}


def test_every_cwl_measure_is_compared():
    from metaeval.measures import registered

    ours = {c.name for c in registered().values() if c.__module__ == "metaeval.measures.cwl"}
    compared = {parse_measure(text).name for text in MEASURES}
    assert ours == compared
    assert len(ours) == 20


# ------------------------------------------------------------------------------- cwl_eval
def gain_file(folder: Path, qrels: Qrels, table: np.ndarray) -> Path:
    """A qrels file whose values are the gains of ``table`` (what cwl_eval reads as gains);
    unjudged (negative) rows left out: cwl_eval refuses negative gains, and both tools treat
    a document absent from the qrels as unjudged."""
    key = "-".join(repr(float(g)) for g in table)
    path = folder / f"gains-{hashlib.sha1(key.encode()).hexdigest()[:12]}.txt"
    if not path.exists():
        judged = qrels.grades >= 0
        topics = qrels.topics[qrels.topic_index[judged]]
        docs = np.asarray(qrels.docs.to_pylist(), dtype=object)[judged]
        gains = table[qrels.grades[judged]]
        path.write_text(
            "".join(f"{t} 0 {d} {float(g)!r}\n" for t, d, g in zip(topics, docs, gains))
        )
    return path


class CwlEval:
    """cwl_eval's ten values (EU ... ResED) of ranked lists, as its command line computes them
    with ``-r``: one qrels handler per gain file and one ranking per list and setting, shared
    by the measures (cwl_eval's metrics never change a ranking)."""

    def __init__(self, lists: dict):
        self.lists = lists  # (s, t) -> (topic id, documents in ranking order)
        self._handlers: dict = {}
        self._rankings: dict = {}

    def rankings(self, path: Path, max_gain: float, cost: float, depth: int) -> dict:
        key = (path, max_gain, cost, depth)
        if key not in self._rankings:
            if path not in self._handlers:
                self._handlers[path] = TrecQrelHandler(str(path))
            handler = self._handlers[path]
            handler.validate_gains(min_gain=0.0, max_gain=max_gain)  # as its command line does
            costs = None if cost == 1.0 else {"Q0": cost}  # a cost file
            out = {}
            for pos, (topic, docs) in self.lists.items():
                maker = RankingMaker(
                    topic,
                    handler,
                    costs,
                    max_gain=max_gain,
                    max_cost=cost,
                    min_cost=cost,
                    max_n=depth,
                )
                for doc in docs:
                    maker.add(doc, "Q0")
                out[pos] = maker.get_ranking()
            self._rankings[key] = out
        return self._rankings[key]

    def values(self, make, path: Path, *, max_gain: float, cost: float, depth: int) -> dict:
        metric = make()
        metric.residuals = True
        out = {}
        for pos, ranking in self.rankings(path, max_gain, cost, depth).items():
            metric.measure(ranking)
            values = [getattr(metric, a) for a in ATTRIBUTES.values()]
            values += [getattr(metric, "residual_" + a) for a in ATTRIBUTES.values()]
            out[pos] = values
        return out


def ranked_lists(runs: RunSet, tensor: EvalTensor) -> dict:
    """(run, topic) position -> (topic id, documents in metaeval's ranking order), for every
    judged topic each run answered (cwl_eval evaluates the topics of the run file)."""
    position = {t: i for i, t in enumerate(tensor.topics)}
    out = {}
    for s, run in enumerate(runs):
        docs = run.docs.to_pylist()
        for i, topic in enumerate(run.topics):
            if topic in position:
                out[(s, position[topic])] = (topic, docs[run.offsets[i] : run.offsets[i + 1]])
    return out


def differences(
    folder: Path, qrels: Qrels, runs: RunSet, measures: dict, *, lists=None, depth=None
) -> dict:
    """Max abs difference from cwl_eval per measure, over every output, run and topic, with the
    worst case (output, run, topic, ours, cwl_eval's) for the message. ``depth`` replaces the
    default depth (1000) of the measures that keep it."""
    tensor = EvalTensor.build(runs, qrels)
    oracle = CwlEval(ranked_lists(runs, tensor) if lists is None else lists)
    worst = {}
    for text, make in measures.items():
        measure = parse_measure(text)
        if depth is not None and measure.max_depth == DEFAULT_DEPTH:
            measure = dataclasses.replace(measure, max_depth=depth)
        expected = oracle.values(
            make,
            gain_file(folder, qrels, measure.gain_values(tensor.n_grades)),
            max_gain=measure.max_gain,
            cost=measure.cost,
            depth=measure.max_depth,
        )
        largest, where = 0.0, None
        for o, output in enumerate(OUTPUTS):
            ours = dataclasses.replace(measure, output=output).compute(tensor)
            for (s, t), values in expected.items():
                diff = abs(ours[s, t] - values[o])
                if not diff <= largest:  # NaN from either side is the largest
                    largest = diff
                    where = (output, runs.names[s], tensor.topics[t], ours[s, t], values[o])
        worst[str(measure)] = (largest, where)
    return worst


def assert_close(worst: dict, tol: float = TOL):
    bad = {k: v for k, v in worst.items() if not v[0] <= tol}
    assert not bad, bad


# ------------------------------------------------------------------------------- fixtures
FIXTURE_CASES = [
    ("qrels.test", "results.test"),  # binary, 3 topics x 500
    ("qrels.rel_level", "results.test"),  # grades 0..4 and unjudged (-1) rows
    ("qrels-302.test", "results-302.test"),
]


@pytest.mark.parametrize("qrels_file, run_file", FIXTURE_CASES)
def test_trec_eval_fixtures(tmp_path, qrels_file, run_file):
    need_data("trec_eval-fixtures")
    qrels = read_qrels(FIXTURES / qrels_file)
    runs = RunSet([read_run(FIXTURES / run_file)])
    assert_close(differences(tmp_path, qrels, runs, MEASURES | VARIANTS))


def test_command_line_default_measures(tmp_path):
    """cwl_eval's command line, reading the files itself, with its default measures and
    residuals (``-r``): its printed values (4 decimals) are ours."""
    need_data("trec_eval-fixtures")
    qrels = read_qrels(FIXTURES / "qrels.rel_level")
    run = read_run(FIXTURES / "results.test")
    # cwl_eval ranks in file order: the run in metaeval's order, its gains grade / 4
    lines = []
    docs = run.docs.to_pylist()
    for i, topic in enumerate(run.topics):
        for r, d in enumerate(docs[run.offsets[i] : run.offsets[i + 1]]):
            lines.append(f"{topic} Q0 {d} {r + 1} {1000 - r} tag\n")
    (tmp_path / "run.txt").write_text("".join(lines))
    gains = gain_file(tmp_path, qrels, np.arange(5) / 4.0)
    done = subprocess.run(
        [sys.executable, "-m", "cwl.cwl_eval", str(gains), "run.txt", "-r"],
        cwd=tmp_path,  # it writes cwl.log where it runs
        capture_output=True,
        text=True,
        check=True,
    )
    names = {
        **{f"P@{k}": f"CWL_P@{k}" for k in (1, 2, 3, 4, 5, 10)},
        **{f"RBP@{p}": f"CWL_RBP(theta={p})" for p in (0.2, 0.4, 0.8)},
        "NDCG-k@5": "SDCG@5",
        "NDCG-k@10": "SDCG@10",
        "RR": "CWL_RR",
        "AP": "CWL_AP",
        **{f"INST-T={t}.0": f"INST(T={t})" for t in (1, 2, 3)},
    }
    tensor = EvalTensor.build(RunSet([run]), qrels)
    position = {t: i for i, t in enumerate(tensor.topics)}
    seen = set()
    for line in done.stdout.splitlines():
        topic, metric, *values = line.split("\t")
        measure = parse_measure(names[metric])
        for output, printed in zip(OUTPUTS, values):
            ours = dataclasses.replace(measure, output=output).compute(tensor)
            got = ours[0, position[topic]]
            assert abs(got - float(printed)) <= 5e-5 + 1e-12, (topic, metric, output, got)
        seen.add((topic, metric))
    assert seen == {(t, m) for t in tensor.topics for m in names}


# ------------------------------------------------------------------------------- TREC DL
#: A BERT re-ranker and BM25, 1000 deep, and a run 20 deep (padded to the depth).
DL_RUNS = ("idst_bert_p1", "bm25base_p", "ICT-BERT2")
#: One of every measure with cwl_eval's parameters (its AP is quadratic in the depth, in
#: Python: 0.7 s a list), and the grades 0..3 as gains (``--max_gain 3``).
DL_MEASURES = {
    text: MEASURES[text]
    for text in (
        "CWL_P",
        "CWL_P@1",
        "CWL_RBP",
        "CWL_RBP(theta=0.995)",
        "NPV",
        "SDCG@10",
        "CWL_RR",
        "CWL_AP",
        "INST",
        "INST(T=3)",
        "INSQ",
        "BPM",
        "BPM(T=1.2,K=10)",
        "BPM_dynamic(T=2,K=30,hb=0.7,gain_med=0.3)",
        "BPM_dynamic(T=1000,K=10)",
        "Umeasure(L=50)",
        "TBG",
        "IFT_goal(T=2,b1=0.9,R1=10)",
        "IFT_rate(A=0.2,b2=0.9,R2=10)",
        "IFT_goal_rate(T=2,b1=0.9,R1=10,A=2,b2=0.9,R2=10)",
        "NERR_eq8@10",
        "NERR_eq9@10",
        "NERR_eq10",
        "NERR_eq11(T=2)",
        "SET",
    )
} | {
    "CWL_RBP(gain=grade,max_gain=3)": lambda: RBPCWLMetric(),
    "CWL_RR(gain=grade,max_gain=3)": lambda: RRCWLMetric(),
    "BPM_dynamic(gain=grade,max_gain=3,T=2,gain_med=1)": lambda: BPMDCWLMetric(
        2.0, 10, 1.0, 1.0, 1
    ),
    "IFT_goal_rate(T=2,b1=0.9,R1=10,A=2,b2=0.9,R2=10,gain=grade,max_gain=3)": (
        lambda: IFTGoalRateCWLMetric(2.0, 0.9, 10, 2.0, 0.9, 10)
    ),
    "TBG(halflife=22,cost=4.4)": lambda: TBGCWLMetric(22),
}


@pytest.mark.parametrize("run", DL_RUNS)
def test_trec_dl_2019_runs(tmp_path, run):
    """Official runs against the track's qrels, grades 0..3 (gains grade / 3 by default), at
    cwl_eval's depth of 1000, every judged topic."""
    folder = need_data("trec-dl-2019")
    qrels = read_qrels(folder / "qrels.txt")
    runs = RunSet([read_run(folder / "runs" / f"dl-19-official-input.{run}.gz")])
    worst = differences(tmp_path, qrels, runs, DL_MEASURES)
    assert len(worst) == len(DL_MEASURES)
    assert_close(worst)


# ------------------------------------------------------------------------------- random
def random_collection(seed: int, folder: Path) -> tuple[Qrels, list[Path]]:
    """Qrels (highest grade 1..4, unjudged -1 rows, a topic with nothing relevant) and three
    run files (lists of 1 document up, unpooled documents, a list without a judged one, scores
    with many ties), each by score descending with equal scores in a random order."""
    rng = np.random.default_rng(seed)
    top = int(rng.integers(1, 5))
    qrels: dict[str, dict[str, int]] = {}
    for t in range(6):
        topic = f"q{t}"
        grades = rng.integers(0, top + 1, int(rng.integers(1, 25)))
        if t == 0:
            grades[:] = 0  # nothing relevant
        if t == 1:
            grades[0] = top  # the highest grade is in the qrels
        judged = {f"{topic}-d{i}": int(g) for i, g in enumerate(grades)}
        unjudged = {f"{topic}-u{i}": -1 for i in range(int(rng.integers(0, 4)))}
        qrels[topic] = judged | unjudged
    paths = []
    for r in range(3):
        lines = []
        for topic, docs in qrels.items():
            unpooled = [f"{topic}-x{i}" for i in range(int(rng.integers(1, 15)))]
            pool = unpooled if (r, topic) == (0, "q5") else list(docs) + unpooled
            chosen = rng.permutation(pool)[: int(rng.integers(1, len(pool) + 1))]
            scores = rng.integers(0, 4, len(chosen))  # ties
            for i in np.argsort(-scores, kind="stable"):
                lines.append(f"{topic} Q0 {chosen[i]} 0 {scores[i]} run{r}\n")
        paths.append(folder / f"run{r}.txt")
        paths[-1].write_text("".join(lines))
    return Qrels.from_dict(qrels), paths


def file_order(paths: list[Path], tensor: EvalTensor) -> dict:
    """The ranked lists as cwl_eval reads a run file: in file order (parsed here, not by
    metaeval)."""
    position = {t: i for i, t in enumerate(tensor.topics)}
    out: dict = {}
    for s, path in enumerate(paths):
        for line in path.read_text().splitlines():
            topic, _, doc, *_ = line.split()
            out.setdefault((s, position[topic]), (topic, []))[1].append(doc)
    return out


#: The depth of the random collections' measures that keep the default: their lists are at
#: most 40 long, so every list is still padded (depth 1000 is the fixtures' and DL's).
RANDOM_DEPTH = 60


@pytest.mark.parametrize("seed", range(6))
def test_random_collections(tmp_path, seed):
    qrels, paths = random_collection(seed, tmp_path)
    # equal scores in file order (ties="input"), as cwl_eval takes the file's order
    runs = read_runs(paths, ties="input")
    lists = file_order(paths, EvalTensor.build(runs, qrels))
    worst = differences(tmp_path, qrels, runs, MEASURES | VARIANTS, lists=lists, depth=RANDOM_DEPTH)
    assert_close(worst)


def test_condensed_lists(tmp_path):
    """A measure's condensed variant (``'``) is cwl_eval on the lists without their unjudged
    documents (cwl_eval has no such option: the lists are given to it so), a list left
    empty included."""
    qrels, paths = random_collection(7, tmp_path)
    runs = read_runs(paths, ties="input")
    judged = {
        (t, d)
        for t, d, g in zip(qrels.topics[qrels.topic_index], qrels.docs.to_pylist(), qrels.grades)
        if g >= 0
    }
    lists = {
        key: (topic, [d for d in docs if (topic, d) in judged])
        for key, (topic, docs) in file_order(paths, EvalTensor.build(runs, qrels)).items()
    }
    assert any(not docs for _, docs in lists.values())
    measures = {str(parse_measure(text).condensed()): make for text, make in MEASURES.items()}
    worst = differences(tmp_path, qrels, runs, measures, lists=lists, depth=RANDOM_DEPTH)
    assert all("'" in name for name in worst)
    assert_close(worst)
