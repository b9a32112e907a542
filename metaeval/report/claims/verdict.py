"""The verdict rule: a claim's parts, each a claimed quantity with its interval, and the
verdict they give.

Each part of a claim is a claimed quantity theta (a difference between two measures, a value
against a bound, a change between two levels), formed value by value and given its interval
at the study's confidence c (95% by default) by the paired two-stage bootstrap of
:mod:`metaeval.report.inference` (topics, trials, replicates). A part **holds** when its
interval lies on the claimed side of the tolerance (for "within +-d" claims, wholly inside
+-d), **does not hold** when it lies on the other side (wholly outside +-d), and is
**inconclusive** otherwise. Each side of a one-sided claim is so wrong at most (1 - c)/2 of
the time.

A claim with several parts (every pair of two groups, every level, every measure) **holds**
when every part holds: an intersection-union test, which needs no correction for the number
of parts (Berger 1982). It **does not hold** when at least one part is firmly reversed after
Holm's correction over the parts (Holm 1979): the part with the strongest evidence against
the claim is judged at (1 - c)/(2m) for m parts, the next at (1 - c)/(2(m - 1)), and so on,
so that one reversal among twenty pairs is not declared by chance. Otherwise it is
**inconclusive**.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaeval.report.inference import Interval, Sources

HOLDS, FAILS, UNSURE = "holds", "does not hold", "inconclusive"


# ------------------------------------------------------------------------------ parts
@dataclass
class Part:
    """One claimed quantity of a claim on one world, with its interval.

    ``kind`` is ``"above"`` (the claim is theta > ``tol``) or ``"within"`` (|theta| <= ``tol``).
    ``text`` shows the numbers in the claim's words; ``verdict`` is set by :func:`judge`.
    """

    label: str
    kind: str
    tol: float
    interval: Interval
    text: str
    verdict: str = UNSURE

    @property
    def holds(self) -> bool:
        iv = self.interval
        if not iv.defined:
            return False
        if self.kind == "above":
            return iv.low > self.tol
        return -self.tol <= iv.low and iv.high <= self.tol

    def fails_at(self, a: float) -> bool:
        """Firmly reversed at one-sided level ``a``: the bound of the interval at confidence
        1 - 2a lies on the other side."""
        iv = self.interval
        if not iv.defined:
            return False
        if self.kind == "above":
            return iv.quantile(1 - a) < self.tol
        return iv.quantile(a) > self.tol or iv.quantile(1 - a) < -self.tol

    def evidence_against(self) -> float:
        """The one-sided bootstrap p-value of "the part is firmly reversed" (the smaller, the
        stronger the evidence against the claim); orders Holm's steps."""
        iv = self.interval
        if not iv.defined:
            return np.inf
        if self.kind == "above":
            return iv.share_at_least(self.tol)
        return min(iv.share_at_most(self.tol), iv.share_at_least(-self.tol))

    @property
    def margin(self) -> float:
        """How far the interval is inside the claimed side (negative: outside)."""
        iv = self.interval
        if not iv.defined:
            return -np.inf
        if self.kind == "above":
            return iv.low - self.tol
        return self.tol - max(abs(iv.low), abs(iv.high))


def judge(parts: list[Part], confidence: float) -> str:
    """The claim's verdict from its parts (the rule of the module docstring); sets each part's
    own verdict: holds, does not hold (after Holm's correction) or inconclusive."""
    a = (1 - confidence) / 2
    for p in parts:
        p.verdict = HOLDS if p.holds else UNSURE
    m = len(parts)
    for k, p in enumerate(sorted(parts, key=lambda p: p.evidence_against())):
        if not p.fails_at(a / (m - k)):
            break
        p.verdict = FAILS
    if not parts:
        return UNSURE
    if any(p.verdict == FAILS for p in parts):
        return FAILS
    return HOLDS if all(p.verdict == HOLDS for p in parts) else UNSURE


# ------------------------------------------------------------------------------ numbers
def _num(v: float, signed: bool = False) -> str:
    if v is None or not np.isfinite(v):
        return "nan"
    return f"{v:+.3f}" if signed else f"{v:.3f}"


def _shown(iv: Interval, signed: bool = True, sign: float = 1.0) -> str:
    """``+0.178 [+0.067, +0.276]`` (``sign = -1`` shows the negated quantity)."""
    est = sign * iv.estimate
    if not iv.defined:
        return (
            f"{_num(est, signed)} (no interval: {', '.join(iv.sources.caveats()) or 'no values'})"
        )
    lo, hi = sorted((sign * iv.low, sign * iv.high))
    return f"{_num(est, signed)} [{_num(lo, signed)}, {_num(hi, signed)}]"


def basis(sources: Sources, confidence: float) -> str:
    """What a verdict's intervals rest on: ``95% intervals over 54 topics (200 paired
    resamples), 10 trials``, and what makes them rough."""
    text = f"{confidence:.0%} intervals over {sources.text()}"
    caveats = sources.caveats()
    return text + (f" ({'; '.join(caveats)}: rough)" if caveats else "")


def _say(parts: list[Part], what: str, direction: str | None = None) -> str:
    """One part as is; several: how many hold, the firmly reversed and the inconclusive ones
    (worst first), or the closest when all hold."""
    if len(parts) == 1:
        return parts[0].text
    held = sum(p.verdict == HOLDS for p in parts)
    out = [f"{held} of {len(parts)} {what} hold"]
    for verdict, label in (
        (FAILS, f"Does not hold (Holm over {len(parts)}) for"),
        (UNSURE, "Inconclusive for"),
    ):
        these = sorted((p for p in parts if p.verdict == verdict), key=lambda p: p.margin)
        if these:
            shown = "; ".join(p.text for p in these[:3])
            more = f"; and {len(these) - 3} more" if len(these) > 3 else ""
            out.append(f"{label}: {shown}{more}")
    if held == len(parts):
        out.append(f"Closest: {min(parts, key=lambda p: p.margin).text}")
    return ". ".join(out)
