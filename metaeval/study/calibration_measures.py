"""Measures made to have a known relation, for calibrating verdicts (a plugin file).

:mod:`metaeval.study.calibration` loads this file with ``plugins = [...]`` in the studies it
writes. Its collections give every topic two ids, ``<t>a`` and ``<t>b``, with the same
judgments and runs (twins):

* ``Twin(first=..., second=..., side=a)`` is ``first`` on the topics whose id ends in ``a`` and
  ``second`` on those ending in ``b``; ``side=b`` the other way round. Relabelling the twins
  maps the collection onto itself and ``Twin(side=a)`` onto ``Twin(side=b)``, so on a random
  set of topics the two have exactly the same expected value of any statistic: a null by
  construction, however different ``first`` and ``second`` are.
* ``Blend(first=..., second=..., share=q)`` is ``first`` on a share q of the topics (chosen by a
  hash of the topic's base id, the same for both twins) and ``second`` on the others: its
  expected statistics move from ``second``'s to ``first``'s as q grows, which makes true
  differences of graded sizes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from metaeval.engine import EvalTensor
from metaeval.measures import parse_measure, register
from metaeval.measures.base import Measure


def _base(topic: str) -> str:
    return topic[:-1] if topic[-1:] in ("a", "b") else topic


def _unit(topic: str) -> float:
    """A uniform number in [0, 1) from a topic's base id (the same in every process)."""
    h = hashlib.blake2b(_base(topic).encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") / 2**64


def _mixed(tensor: EvalTensor, first: str, second: str, use_first: np.ndarray) -> np.ndarray:
    a = parse_measure(first).compute(tensor)
    b = parse_measure(second).compute(tensor)
    return np.where(use_first[None, :], a, b)


@register
@dataclass(frozen=True, kw_only=True)
class Twin(Measure):
    """``first`` on topics whose id ends in ``side``, ``second`` on the others."""

    first: str = "AP"
    second: str = "P@10"
    side: str = "a"
    name = "Twin"
    formula = "first on the topics <t>side, second on their twins"
    reference = "metaeval verdict calibration"

    def _validate(self):
        if self.side not in ("a", "b"):
            raise ValueError(f"side must be a or b, got {self.side!r}")

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        ends = np.array([str(t)[-1:] == self.side for t in tensor.topics])
        return _mixed(tensor, self.first, self.second, ends)


@register
@dataclass(frozen=True, kw_only=True)
class Blend(Measure):
    """``first`` on a share ``share`` of the topics (by a hash of their base id), ``second``
    on the others."""

    first: str = "AP"
    second: str = "P@10"
    share: float = 0.5
    name = "Blend"
    formula = "first on a share of the topics, second on the others"
    reference = "metaeval verdict calibration"

    def _validate(self):
        if not 0.0 <= self.share <= 1.0:
            raise ValueError(f"share must be in [0, 1], got {self.share!r}")

    def _compute(self, tensor: EvalTensor) -> np.ndarray:
        chosen = np.array([_unit(str(t)) < self.share for t in tensor.topics])
        return _mixed(tensor, self.first, self.second, chosen)
