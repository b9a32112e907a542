"""Figures of a study: pure functions from tidy frames to matplotlib Figures.

Every function takes the rows a study saved (:func:`metaeval.study.load_results`, or a frame
of the same columns) and returns a :class:`matplotlib.figure.Figure` drawn with seaborn. None
touches pyplot's global state, so they work under any backend and in parallel; save with
``fig.savefig(path)``.

Conventions shared by the figures:

* one colour and one marker per *base* measure; a condensed-list variant (``AP'``) takes its
  base measure's colour and marker (``AP``) and a dashed line, so the pair reads as one family;
* measures are drawn, listed and coloured in the order they first appear in the frame (a
  study's results come in the order of its study file);
* bands and bars show the interval of the expected value of a statistic: the ``low`` and
  ``high`` of a study's summary (:func:`metaeval.report.summary.summarise`, a paired
  bootstrap over topics, trials and replicates). Given raw rows (one value per trial and
  replicate), a figure draws their mean alone: a spread of trials is not an interval. The one
  exception is labelled so: the band of topic-subset stability is a spread over random topic
  subsets, describing how variable a ranking on n topics is;
* levels are drawn on a numeric axis when they are percentages of the judgments kept (the full
  judgments at 100), as categories otherwise (the full judgments first);
* sizes are chosen so that a figure is shown at its own size on a page 1100 pixels wide:
  labels stay readable, and the legend sits under the panels.

The figures live in one module per family: :mod:`~metaeval.report.figures.levels` (against
the level of damage), :mod:`~metaeval.report.figures.properties` (stability, informativeness,
agreement, top-heaviness), :mod:`~metaeval.report.figures.dots` (one value per measure or
world with its interval), over the shared look of :mod:`~metaeval.report.figures.layout`.
"""

from metaeval.report.figures.dots import card_dots, collection_panels, measure_dots
from metaeval.report.figures.layout import (
    FULL,
    MARKERS,
    MAX_WIDTH,
    base_measure,
    is_condensed,
    level_axis,
    measure_markers,
    measure_palette,
)
from metaeval.report.figures.levels import (
    asl_curves,
    drift_curves,
    power_curves,
    robustness_curves,
    significance_bars,
)
from metaeval.report.figures.properties import (
    agreement_heatmap,
    informativeness_bars,
    pr_curves,
    stability_curves,
    top_heaviness_curves,
)

__all__ = [
    "FULL",
    "MARKERS",
    "MAX_WIDTH",
    "base_measure",
    "is_condensed",
    "measure_palette",
    "measure_markers",
    "level_axis",
    "robustness_curves",
    "power_curves",
    "drift_curves",
    "measure_dots",
    "asl_curves",
    "significance_bars",
    "stability_curves",
    "informativeness_bars",
    "pr_curves",
    "agreement_heatmap",
    "top_heaviness_curves",
    "collection_panels",
    "card_dots",
]
