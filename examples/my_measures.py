"""A user-defined measure, as a plugin file: precision at rank ceil(R/2).

Use it from the command line with ``--plugin``::

    metaeval evaluate QRELS RUN -m RprecHalf --plugin examples/my_measures.py
    metaeval evaluate QRELS RUN -m "RprecHalf(rel=2)" -m "RprecHalf'" \
        --plugin examples/my_measures.py
    metaeval measures --plugin examples/my_measures.py

or from Python::

    import metaeval
    metaeval.load_plugin("examples/my_measures.py")
    metaeval.evaluate("run.txt", "qrels.txt", ["RprecHalf", "RprecHalf'"])

To see how it compares with the usual measures on every criterion (robustness to sampled
judgments and shallow pools, discriminative power, topic-subset stability, informativeness when
the measure has a maximum-entropy expectation, the reliability of its ranking, agreement with
each baseline), ask for its report card: one command, a one-page report ranking it among the
baselines, every value with its interval::

    metaeval card -m RprecHalf --plugin examples/my_measures.py \
        --against "AP,nDCG@10,P@10,Bpref,RBP(p=0.8)"

(``--world dl_like`` for a DL-like simulated collection, ``--world STUDY.toml:WORLD_ID`` for a
world of a study file, e.g. a TREC collection).

A measure is a frozen, keyword-only dataclass: its fields are its parameters (here ``rel``,
inherited from :class:`~metaeval.measures.binary.BinaryMeasure`, which also validates it), and
``_compute`` maps an :class:`~metaeval.engine.EvalTensor` to an (S runs x T topics) array. Once
registered it is parsed (``RprecHalf(rel=2)``), listed (``metaeval measures``), and has a
condensed-list variant (``RprecHalf'``) without any further code. A package can register the
same module through the ``metaeval.measures`` entry point group instead of ``--plugin``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaeval.engine import EvalTensor
from metaeval.measures import register
from metaeval.measures.binary import BinaryMeasure


@register
@dataclass(frozen=True, kw_only=True)
class RprecHalf(BinaryMeasure):
    """Precision at rank ceil(R/2): how clean the first half of an ideal-length list is.

    RprecHalf = C(h) / h with h = ceil(R/2), C(h) the relevant documents (grade >= rel) in ranks
    1..h; 0 when R = 0. A perfect ranking scores 1, so it is recall-normalised like R-prec.
    """

    name = "RprecHalf"
    recall_normalised = True
    formula = "RprecHalf = C(h)/h, h = ceil(R/2)"
    reference = "metaeval example plugin (examples/my_measures.py)"

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        # tensor.codes is (runs, topics, ranks) of grades; negative codes are unjudged or past
        # the end of the list, so ">= rel" is exactly "judged relevant".
        half = (tensor.n_relevant(self.rel) + 1) // 2  # ceil(R/2) per topic, (T,)
        hits = np.cumsum(tensor.codes >= self.rel, axis=2)  # C(r) at every rank
        # C(h) per run and topic: one gather at rank h (index h - 1); h may exceed the depth.
        at = np.clip(half - 1, 0, tensor.depth - 1)
        index = np.broadcast_to(at[None, :, None], (tensor.n_runs, tensor.n_topics, 1))
        c_h = np.take_along_axis(hits, index, axis=2)[:, :, 0]
        # A topic with nothing relevant (h = 0) scores 0, like every recall-based measure.
        return np.divide(c_h, half[None, :], out=np.zeros(c_h.shape), where=half[None, :] > 0)
