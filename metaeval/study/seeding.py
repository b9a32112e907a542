"""Identity seeding: every random stream of a study is derived from what it *is*.

A stream's seed is ``SeedSequence(study_seed, spawn_key=(stream, *words))`` where ``words`` are
the 32-bit words of a BLAKE2b hash of the canonical JSON of the stream's identity. Nothing
depends on a position in the grid, the order tasks run in, the number of workers, or Python's
per-process salted ``hash()``; so a study gives the same numbers with one worker, eight, or a
Dask cluster.

What each stream leaves out of its identity is the design:

=========  ==========================================  ==========================================
stream     identity                                    left out, so that
=========  ==========================================  ==========================================
world      world spec, replicate                       every cell of a replicate sees one world
degrade    world instance, degrader spec without its   levels stay nested; every measure sees the
           levels, trial                               same reduced judgments
resample   world instance, criterion spec              every measure and level uses the same
                                                       bootstrap samples (common random numbers)
subsets    world instance, criterion spec, size,       the same topic subsets for every measure
           repeat                                      and level
topics     world instance, number of resamples         one set of topic resamples for everything
                                                       of a world instance (paired intervals)
verdict    what an interval is about (a claim and      the same trial and replicate draws for
           world, or a statistic)                      every part of it, whatever the report
=========  ==========================================  ==========================================
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from metaeval.study.spec import canonical_json

#: Stream codes: the first word of the spawn key.
STREAMS = {"world": 1, "degrade": 2, "resample": 3, "subsets": 4, "topics": 5, "verdict": 6}


def digest(identity: Any, size: int = 16) -> bytes:
    """BLAKE2b digest of an identity's canonical JSON."""
    return hashlib.blake2b(canonical_json(identity).encode(), digest_size=size).digest()


def short_id(identity: Any) -> str:
    """A 16-hex-digit name for an identity (task ids, cell ids, file names)."""
    return digest(identity, 8).hex()


def seed_sequence(study_seed: int, stream: str, identity: Any) -> np.random.SeedSequence:
    """The SeedSequence of one stream: ``SeedSequence(study_seed, spawn_key=(code, *words))``."""
    if stream not in STREAMS:
        raise ValueError(f"stream must be one of {sorted(STREAMS)}, got {stream!r}")
    words = np.frombuffer(digest(identity), dtype="<u4")
    return np.random.SeedSequence(int(study_seed), spawn_key=(STREAMS[stream], *map(int, words)))


def generator(study_seed: int, stream: str, identity: Any) -> np.random.Generator:
    """A fresh Generator on one stream."""
    return np.random.default_rng(seed_sequence(study_seed, stream, identity))


__all__ = ["STREAMS", "digest", "short_id", "seed_sequence", "generator"]
