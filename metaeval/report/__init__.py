"""Reports of studies, drawn only from what a study saved.

:func:`write_report` reads a study's output folder (its ``results/``, ``plan.parquet``,
``manifest.json``, ``claims.json`` and ``study.toml``) and writes ``report/index.md`` with PNG
figures, ``report/index.html`` (one self-contained file) and ``report/tables/*.csv``. It never
imports :mod:`simulators` and never computes a criterion: every number in a report can be found
in the saved results, and a report can be redrawn anywhere.

The package follows the report's flow:

- :mod:`~metaeval.report.reader` reads the folder into a
  :class:`~metaeval.report.reader.StudyOutput`;
- :mod:`~metaeval.report.model` holds :class:`~metaeval.report.model.Report`, the study's
  results in its order with their summary (:mod:`~metaeval.report.inference`: means and
  intervals), and the pivots and texts sections share;
- :mod:`~metaeval.report.sections` has one section per criterion kind, found through a
  registry (:func:`register_section`: a plugin criterion can bring its own), and the
  sections every report has;
- :mod:`~metaeval.report.claims` judges the claims, one typed check per kind;
- :mod:`~metaeval.report.figures` draws the figures, :mod:`~metaeval.report.document` lays
  out blocks as markdown and HTML, and :mod:`~metaeval.report.writer` assembles and writes;
- :mod:`~metaeval.report.card` is a measure's report card.
"""

from metaeval.report.model import intervals_text, with_interval
from metaeval.report.sections import register_section
from metaeval.report.summary import KEYS, summarise
from metaeval.report.writer import FORMATS, build, write_report

__all__ = [
    "write_report",
    "build",
    "summarise",
    "FORMATS",
    "KEYS",
    "with_interval",
    "intervals_text",
    "register_section",
]
