"""The data model: relevance judgments (Qrels), system runs (Run, RunSet) and TREC file I/O."""

from metaeval.data.errors import TrecFormatError
from metaeval.data.io import read_qrels, read_run, read_runs, write_qrels, write_run, write_runs
from metaeval.data.qrels import Qrels
from metaeval.data.run import Run, RunSet
from metaeval.data.select import parse_ids

__all__ = [
    "Qrels",
    "Run",
    "RunSet",
    "TrecFormatError",
    "read_qrels",
    "read_run",
    "read_runs",
    "write_qrels",
    "write_run",
    "write_runs",
    "parse_ids",
]
