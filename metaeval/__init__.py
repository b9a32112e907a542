"""metaeval: a laboratory for information-retrieval evaluation measures.

Exact, vectorised measures (trec_eval parity), judgment simulators, meta-evaluation and
studies.

>>> import metaeval
>>> qrels = metaeval.read_qrels("qrels.txt")                       # doctest: +SKIP
>>> runs = metaeval.read_runs(["run1.gz", "run2.gz"])              # doctest: +SKIP
>>> metaeval.evaluate(runs, qrels, ["AP", "nDCG@10"], per_topic=False)  # doctest: +SKIP

The names below are imported on first use, so that ``import metaeval`` (and the command line)
starts fast.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "metaeval.aggregate": ("Aggregate", "parse_aggregate"),
    "metaeval.data": (
        "Qrels",
        "Run",
        "RunSet",
        "TrecFormatError",
        "parse_ids",
        "read_qrels",
        "read_run",
        "read_runs",
        "write_qrels",
        "write_run",
        "write_runs",
    ),
    "metaeval.engine": ("EvalTensor",),
    "metaeval.evaluation": ("evaluate", "score_matrices", "scores_frame"),
    "metaeval.measures": (
        "Measure",
        "MeasureDict",
        "canonical_name",
        "load_plugin",
        "parse_measure",
        "register",
        "registered",
    ),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [*_WHERE, "__version__"]


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'metaeval' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
