"""Evaluation measures: one module per family, a registry, and the measure-name parser."""

from metaeval.measures import binary, counts, graded  # noqa: F401  (registers the built-ins)
from metaeval.measures._common import RankedHits, log2_discount, ranked_hits, ranks
from metaeval.measures.base import (
    Measure,
    MeasureDict,
    canonical_name,
    measure_doc,
    parse_measure,
    register,
    registered,
    split_call,
)
from metaeval.measures.binary import AP, RR, Bpref, Bpref_N, Bpref_R, P, R, Rprec, Success, infAP
from metaeval.measures.counts import Judged, NumRel, NumRelRet, NumRet
from metaeval.measures.graded import ERR, GAP, RBP, Q, RBP_resid, eGAP, nCG, nDCG, nERR, xGAP
from metaeval.measures.plugins import load_plugin

__all__ = [
    "Measure",
    "register",
    "registered",
    "parse_measure",
    "measure_doc",
    "load_plugin",
    "canonical_name",
    "MeasureDict",
    "split_call",
    "AP",
    "P",
    "Rprec",
    "RR",
    "R",
    "Success",
    "Bpref",
    "Bpref_R",
    "Bpref_N",
    "infAP",
    "nDCG",
    "nCG",
    "Q",
    "RBP",
    "RBP_resid",
    "ERR",
    "nERR",
    "GAP",
    "xGAP",
    "eGAP",
    "NumRet",
    "NumRel",
    "NumRelRet",
    "Judged",
    "ranks",
    "log2_discount",
    "RankedHits",
    "ranked_hits",
]
