"""metaeval: a laboratory for information-retrieval evaluation measures.

Exact, vectorised measures (trec_eval parity), judgment simulators and meta-evaluation.

>>> import metaeval
>>> qrels = metaeval.read_qrels("qrels.txt")                       # doctest: +SKIP
>>> runs = metaeval.read_runs(["run1.gz", "run2.gz"])              # doctest: +SKIP
>>> metaeval.evaluate(runs, qrels, ["AP", "nDCG@10"], per_topic=False)  # doctest: +SKIP
"""

from metaeval.aggregate import Aggregate, parse_aggregate
from metaeval.data import (Qrels, Run, RunSet, TrecFormatError, read_qrels, read_run, read_runs,
                           write_qrels, write_run, write_runs)
from metaeval.engine import EvalTensor
from metaeval.evaluate import evaluate, score_matrices, scores_frame
from metaeval.measures import Measure, load_plugin, parse_measure, register, registered

__version__ = "0.1.0"

__all__ = ["Qrels", "Run", "RunSet", "TrecFormatError", "read_qrels", "read_run", "read_runs",
           "write_qrels", "write_run", "write_runs", "EvalTensor", "evaluate", "score_matrices",
           "scores_frame", "Measure", "register", "registered", "parse_measure", "load_plugin",
           "Aggregate", "parse_aggregate", "__version__"]
