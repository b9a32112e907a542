"""Synthetic test collections with known truth, pools, and judgment degraders; score-level
worlds (fitted margins and copulas) for criteria that need only per-topic scores.

>>> import numpy as np, simulators
>>> world = simulators.make_world("trec_like", n_topics=20, n_systems=10,
...                               rng=np.random.default_rng(7))           # doctest: +SKIP
>>> sets = simulators.StratifiedSampling(rates=[50, 10]).generate(
...     world.qrels, rng=np.random.default_rng(7))                        # doctest: +SKIP
"""

from simulators.calibrate import CollectionStats, calibrate, collection_stats
from simulators.degraders import (
    AssessorNoise,
    Degrader,
    FewerTeams,
    Judgments,
    LeaveOneGroupOut,
    PoolDepth,
    StratifiedSampling,
    UniformSampling,
    make_degrader,
    register_degrader,
    registered_degraders,
)
from simulators.margins import Margin, fit_margin, fit_margins, transform_mean
from simulators.pooling import pool_mask, pool_qrels, pool_size
from simulators.scores import ScoreCollection, ScoreWorld, simulate_pairs
from simulators.worlds import PRESETS, World, WorldParams, make_world, preset

__all__ = [
    "make_world",
    "World",
    "WorldParams",
    "PRESETS",
    "preset",
    "calibrate",
    "collection_stats",
    "CollectionStats",
    "pool_mask",
    "pool_qrels",
    "pool_size",
    "Degrader",
    "Judgments",
    "register_degrader",
    "registered_degraders",
    "make_degrader",
    "StratifiedSampling",
    "UniformSampling",
    "PoolDepth",
    "LeaveOneGroupOut",
    "FewerTeams",
    "AssessorNoise",
    "Margin",
    "fit_margin",
    "fit_margins",
    "transform_mean",
    "ScoreWorld",
    "ScoreCollection",
    "simulate_pairs",
]
