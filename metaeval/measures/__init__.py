"""Evaluation measures: one module per family, a registry, and the measure-name parser."""

from metaeval.measures import binary, counts, graded  # noqa: F401  (registers the built-ins)
from metaeval.measures.base import Measure, measure_doc, parse_measure, register, registered
from metaeval.measures.binary import AP, RR, Bpref, P, R, Rprec, Success, infAP
from metaeval.measures.counts import Judged, NumRel, NumRelRet, NumRet
from metaeval.measures.graded import nDCG
from metaeval.measures.plugins import load_plugin

__all__ = ["Measure", "register", "registered", "parse_measure", "measure_doc", "load_plugin",
           "AP", "P", "Rprec", "RR", "R", "Success", "Bpref", "infAP", "nDCG",
           "NumRet", "NumRel", "NumRelRet", "Judged"]
