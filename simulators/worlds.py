"""Synthetic worlds: true graded judgments of every candidate document, and system runs.

The generative model
--------------------
For each topic ``t = 1..T`` there is a pool of ``C`` candidate documents (``n_candidates``), the
documents any system may retrieve. Everything else in the collection is never retrieved and so
plays no part in evaluation.

**Judgments.** The number of relevant documents (grade >= 1) of topic t is

    R_t = clip(round(exp(N(log rel_median, rel_sigma^2))), rel_min, C // 2)

(``rel_fixed`` replaces this by a constant, e.g. 1 for known-item topics). The grades of the R_t
relevant documents are drawn from per-topic proportions
``pi_t ~ Dirichlet(grade_concentration * grade_probs)`` over grades 1..G (``grade_probs`` fixed
for every topic when the concentration is ``inf``); ``min_top_grade`` forces at least that many
documents of the top grade G, so a topic can have few highly relevant documents but not none
(the case R(1) >= 10 R(G) of the ``few_highly_relevant`` preset). The remaining C - R_t
candidates have grade 0. Candidate positions are shuffled, so a document id carries no
information about its grade.

**Runs.** System s scores candidate d of topic t as

    x[s,t,d] = a[s,t] * q(g_d) + sqrt(doc_share) u[t,d] + sqrt(team_share) v[team(s),t,d]
               + sqrt(1 - doc_share - team_share) e[s,t,d]

with u, v, e independent standard normal: ``u`` is shared by every system (documents that every
system finds, or misses), ``v`` by the systems of one team (shared components), ``e`` is the
system's own noise, so the noise has unit variance and ``doc_share``/``team_share`` are the
correlations of two systems' noise on one document. ``q(g)`` is ``grade_quality`` (default g/G)
and the effectiveness

    a[s,t] = max(0, effect_mean + b_s + d_t + c[s,t]),
    b_s = system_sd (sqrt(team_effect_share) B_team(s) + sqrt(1 - team_effect_share) B_s),
    d_t ~ N(0, topic_sd^2)  (topic difficulty),   c[s,t] ~ N(0, interaction_sd^2)

is a two-way model with interaction, the model behind the ANOVA analyses of test collections
(e.g. Sakai 2008 on topic set sizes; Zobel SIGIR 1998 on pool bias). Each system returns its
top ``depth`` candidates by score (``shallow_depth`` for a random ``shallow_fraction`` of the
systems). A random ``tie_fraction`` of the systems round their scores to multiples of
``tie_resolution``, which makes score ties, broken as trec_eval breaks them (document id
descending). Systems are grouped into teams of about ``team_size`` members; the world's
``groups`` maps each run to its team (for leave-one-group-out and fewer-teams pools).

The official judgments are a depth-``pool_depth`` pool of all runs (Zobel 1998): the union of
every run's top documents, judged with their true grades; with ``pool_extra`` > 0, that many
more documents per topic are judged, the retrieved but unpooled ones ranked highest by a
separate ranker as good as the best systems (active learning, as TREC DL's pools were made).

What real collections need beyond this (all off by default; ``simulators.calibrate`` fits
them): ``system_quantiles`` shapes the system effects (the S systems take a quantile
function's values at (rank - 1/2) / S, in the order of the b_s: the long tail of poor runs),
``topic_quantiles`` the topic difficulties d_t in the same way;
``doc_strength_sd`` makes relevant documents of one grade unequal, the same for every system
(q(g) times a log-normal factor of mean 1), or partly each system's own
(``doc_strength_share``); ``first_stages`` = K makes each system re-rank the top ``depth`` of
one of K first-stage lists (scored like an average system, sharing ``first_stage_share`` of
their noise with u), as most runs of a track re-rank a few shared candidate lists, and
``rerank_depth`` = k makes them re-rank only its top k, keeping the first stage's order below
(moved by ``tail_noise_sd`` of their own noise).

Topic ids are ``q001, q002, ...``, document ids ``q001-d00042`` (zero-padded, so string order
equals candidate order and the truth qrels row of candidate j of topic t is ``t * C + j``),
runs ``sys001, ...``, teams ``team01, ...``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, fields
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import pyarrow as pa

from metaeval._constraints import Interval, Optional, Sequence, validate_params
from metaeval._validation import ParamError, as_generator, check_int
from metaeval.data import Qrels, Run, RunSet
from metaeval.engine import EvalTensor


@dataclass(frozen=True)
class WorldParams:
    """Parameters of the generative model (see the module docstring for the formulas).

    Attributes
    ----------
    n_candidates : int
        C, candidate documents per topic (every document any system can retrieve).
    rel_median, rel_sigma, rel_min : float, float, int
        R_t is log-normal with median ``rel_median`` and log-sd ``rel_sigma``, at least
        ``rel_min``.
    rel_fixed : int or None
        If set, every topic has exactly this many relevant documents (known-item: 1).
    grade_probs : tuple of float
        P(grade = g | relevant) for g = 1..G; G = len(grade_probs). Normalised.
    grade_concentration : float
        Dirichlet concentration of the per-topic grade proportions (``inf``: no variation).
    min_top_grade : int
        At least this many relevant documents of the top grade per topic.
    grade_quality : tuple of float or None
        q(g) for g = 0..G, how strongly a grade lifts a document's score; default g/G.
    effect_mean, system_sd, topic_sd, interaction_sd : float
        The effectiveness a[s,t]: mean, system spread, topic difficulty, system x topic.
    team_size : float
        Mean number of systems per team.
    team_effect_share : float
        Share of the system-effect variance common to a team's systems, in [0, 1].
    doc_share, team_share : float
        Share of the score noise common to all systems / to a team; sum < 1.
    depth : int
        Length of a run's list per topic (at most ``n_candidates``).
    shallow_fraction, shallow_depth : float, int
        This fraction of systems (rounded) return only ``shallow_depth`` documents.
    tie_fraction, tie_resolution : float, float
        This fraction of systems (rounded) round scores to multiples of ``tie_resolution``.
    pool_depth : int
        Depth of the official pool.
    doc_strength_sd : float
        sigma_h: relevant documents of one grade differ in how strongly they draw every
        system's score, q_d = q(g_d) exp(sigma_h h_d - sigma_h^2 / 2) with h_d ~ N(0, 1) shared
        by all systems (easy and hard relevant documents). 0: every document of a grade alike.
    doc_strength_share : float
        rho: the share of that log-variance common to every system; the rest is each system's
        own, q_{s,d} = q(g_d) exp(sigma_h (sqrt(rho) h_d + sqrt(1 - rho) h_{s,d}) -
        sigma_h^2 / 2): which relevant documents a system favours. Real systems disagree on
        them (TREC DL: about half of the variance of the reciprocal ranks of relevant
        documents is system x document), and with a few relevant documents left per topic that
        disagreement decides how far a ranking of the systems moves. 1: every system finds the
        same documents easy.
    pool_extra : int
        Documents judged per topic beyond the depth-``pool_depth`` pool, chosen as active
        learning chooses them (TREC DL's pools): the retrieved but unpooled candidates ranked
        highest by a separate ranker as good as the best systems (effectiveness
        ``effect_mean + 2 system_sd`` plus the topic's difficulty, the shared noise and its own
        noise). 0: the pool alone.
    first_stages : int
        K > 0: systems re-rank the candidates of one of K first-stage retrievers (each system's
        chosen at random), as most runs re-rank a few shared lists (BM25's top 1000 and a few
        dense retrievers): a run holds only its first stage's top ``depth`` candidates, in the
        system's own order. A first stage scores like an average system (effectiveness
        ``effect_mean`` plus the topic's difficulty) plus noise, of which the share
        ``first_stage_share`` is the shared noise u of the systems' scores. 0: every system
        ranks every candidate.
    rerank_depth : int
        k > 0 (with ``first_stages``): a system's own score picks and orders only the top k
        of its first stage's list; below, its list keeps the first stage's order, each
        candidate's first-stage score moved by ``tail_noise_sd`` times the system's own
        standard normal noise. Runs of one first
        stage are then alike at depth through that list, not through the shared noise of their
        own scores (in TREC DL, pairs of runs holding the same documents agree no more on their
        order at ranks 101-1000 than at ranks 1-100). 0: the system orders the whole list.
    tail_noise_sd : float
        How far a system's order below ``rerank_depth`` departs from its first stage's, in
        units of the first stage's noise sd. 0: the runs of one first stage share their tail.
    system_quantiles : tuple of float or None
        The shape of the system effects: quantiles (at equally spaced probabilities from 0 to
        1) of a standardised distribution, Q. The S systems take its values at the midpoints,
        b_s = system_sd Q((r_s - 1/2) / S) with r_s the rank of the normal b_s above: the
        collection's spread of systems in every world (not a sample from it), the team
        correlation in which systems get which effect, and real collections' long tail of poor
        runs. None: normal.
    topic_quantiles : tuple of float or None
        The shape of the topic difficulties, as ``system_quantiles`` for the systems: the T
        topics take d_t = topic_sd Q((r_t - 1/2) / T), r_t the rank of the normal d_t, so every
        world has the collection's spread of topics, not a sample of it. None: normal.
    """

    n_candidates: int = 2000
    rel_median: float = 50.0
    rel_sigma: float = 0.8
    rel_min: int = 1
    rel_fixed: int | None = None
    grade_probs: tuple[float, ...] = (0.55, 0.3, 0.15)
    grade_concentration: float = 20.0
    min_top_grade: int = 0
    grade_quality: tuple[float, ...] | None = None
    effect_mean: float = 2.0
    system_sd: float = 0.5
    topic_sd: float = 0.6
    interaction_sd: float = 0.4
    team_size: float = 3.0
    team_effect_share: float = 0.5
    doc_share: float = 0.3
    team_share: float = 0.2
    depth: int = 1000
    shallow_fraction: float = 0.0
    shallow_depth: int = 100
    tie_fraction: float = 0.0
    tie_resolution: float = 0.05
    pool_depth: int = 100
    doc_strength_sd: float = 0.0
    doc_strength_share: float = 1.0
    pool_extra: int = 0
    first_stages: int = 0
    first_stage_share: float = 0.5
    rerank_depth: int = 0
    tail_noise_sd: float = 0.0
    system_quantiles: tuple[float, ...] | None = None
    topic_quantiles: tuple[float, ...] | None = None

    #: What each parameter may be (:mod:`metaeval._constraints`), checked first; the
    #: relations between parameters are checked after, in :meth:`__post_init__`.
    _constraints: ClassVar[dict] = {
        **dict.fromkeys(
            ("n_candidates", "rel_min", "depth", "shallow_depth", "pool_depth"),
            Interval(Integral, 1),
        ),
        "rel_median": Interval(Real, 0, None, closed="neither"),
        "rel_fixed": Optional(Interval(Integral, 1)),
        **dict.fromkeys(
            (
                "rel_sigma",
                "system_sd",
                "topic_sd",
                "interaction_sd",
                "tie_resolution",
                "doc_strength_sd",
                "tail_noise_sd",
            ),
            Interval(Real, 0),
        ),
        # inf: every topic has the grade proportions grade_probs
        "grade_concentration": Interval(Real, 0, math.inf, closed="right"),
        "effect_mean": Interval(Real),
        "grade_probs": Sequence(Interval(Real, 0), unique=False),
        **dict.fromkeys(
            ("system_quantiles", "topic_quantiles"),
            Optional(Sequence(Interval(Real), unique=False, min_len=2, order="non-decreasing")),
        ),
        "grade_quality": Optional(Sequence(Interval(Real), unique=False)),
        **dict.fromkeys(
            ("pool_extra", "first_stages", "min_top_grade", "rerank_depth"), Interval(Integral, 0)
        ),
        "team_size": Interval(Real, 1),
        **dict.fromkeys(
            (
                "team_effect_share",
                "doc_share",
                "team_share",
                "shallow_fraction",
                "tie_fraction",
                "first_stage_share",
                "doc_strength_share",
            ),
            Interval(Real, 0, 1),
        ),
    }

    def __post_init__(self):
        validate_params(self, self._constraints)  # lists and arrays become tuples
        # What no constraint of one parameter can say: relations between parameters.
        if self.depth > self.n_candidates:
            raise ParamError(
                "depth", f"must be at most n_candidates ({self.n_candidates}), got {self.depth}"
            )
        if self.rel_fixed is not None and self.rel_fixed > self.n_candidates:
            raise ParamError(
                "rel_fixed",
                f"must be at most n_candidates ({self.n_candidates}), got {self.rel_fixed}",
            )
        probs = np.asarray(self.grade_probs, dtype=float)
        if not probs.sum() > 0:
            raise ParamError(
                "grade_probs", f"must have a positive weight, got {list(self.grade_probs)}"
            )
        object.__setattr__(self, "grade_probs", tuple(float(p) for p in probs / probs.sum()))
        for name in ("system_quantiles", "topic_quantiles"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, tuple(float(v) for v in getattr(self, name)))
        if self.grade_quality is not None:
            if len(self.grade_quality) != len(self.grade_probs) + 1:
                raise ParamError(
                    "grade_quality",
                    f"must be a sequence of {len(self.grade_probs) + 1} values (grades 0..G), "
                    f"got {list(self.grade_quality)}",
                )
            object.__setattr__(self, "grade_quality", tuple(float(q) for q in self.grade_quality))
        if self.rerank_depth and not self.first_stages:
            raise ParamError(
                "rerank_depth",
                f"needs first-stage lists to re-rank (first_stages > 0), got {self.rerank_depth}",
            )
        if self.doc_share + self.team_share >= 1:
            raise ParamError(
                "team_share",
                f"must be such that doc_share + team_share < 1 (doc_share={self.doc_share}), "
                f"got {self.team_share!r}",
            )

    @property
    def n_grades(self) -> int:
        """G + 1: grades 0..G."""
        return len(self.grade_probs) + 1

    def quality(self) -> np.ndarray:
        """q(g) for g = 0..G."""
        if self.grade_quality is not None:
            return np.asarray(self.grade_quality)
        return np.arange(self.n_grades) / (self.n_grades - 1)

    def to_dict(self) -> dict:
        """JSON-ready parameters (``inf`` written as the string ``"inf"``)."""
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, float) and math.isinf(v):
                v = "inf"
            out[f.name] = list(v) if isinstance(v, tuple) else v
        return out

    @classmethod
    def from_dict(cls, values: dict) -> WorldParams:
        known = {f.name for f in fields(cls)}
        _refuse_unknown(values, known)
        clean = {}
        for k, v in values.items():
            if v == "inf":
                v = math.inf
            clean[k] = tuple(v) if isinstance(v, list) else v
        return cls(**clean)


def _refuse_unknown(values, known: set) -> None:
    """A ParamError naming the first of ``values`` that is not a world parameter."""
    unknown = sorted(set(values) - known)
    if unknown:
        raise ParamError(
            unknown[0],
            f"is not a world parameter; known: {', '.join(sorted(known))}",
            message=f"unknown world parameter(s) {unknown}; known: {sorted(known)}",
        )


# ------------------------------------------------------------------------------- presets
#: Named parameter sets. ``dl_like`` holds the values fitted to TREC DL 2019 + 2020 by
#: :func:`simulators.calibrate` (see ``reports/simulator-realism/make_report.py``).
PRESETS: dict[str, WorldParams] = {
    # Ad hoc TREC (Robust/TREC-8 shape): ~50-100 relevant per topic, binary-ish grades,
    # depth-100 pools of 1000-deep runs, teams of 2-4 runs.
    "trec_like": WorldParams(
        n_candidates=3000,
        rel_median=60.0,
        rel_sigma=0.9,
        grade_probs=(0.75, 0.25),
        effect_mean=2.0,
        system_sd=0.5,
        topic_sd=0.7,
        interaction_sd=0.4,
        team_size=3.0,
        doc_share=0.35,
        team_share=0.25,
        depth=1000,
        shallow_fraction=0.05,
        shallow_depth=100,
        tie_fraction=0.1,
        tie_resolution=0.05,
        pool_depth=100,
    ),
    # TREC Deep Learning passage ranking: fitted to DL 2019 + 2020, see _DL_LIKE below.
    "dl_like": WorldParams(),
    # Graded topics with many marginally relevant and very few highly relevant documents:
    # E[R(1)] / E[R(3)] = 0.88 / 0.02 = 44 >= 10, and at least one grade-3 document per topic.
    "few_highly_relevant": WorldParams(
        n_candidates=2000,
        rel_median=40.0,
        rel_sigma=0.7,
        grade_probs=(0.88, 0.10, 0.02),
        grade_concentration=50.0,
        min_top_grade=1,
        effect_mean=2.0,
        system_sd=0.5,
        topic_sd=0.6,
        interaction_sd=0.4,
        doc_share=0.3,
        team_share=0.2,
        pool_depth=100,
    ),
    # Known-item search: exactly one relevant document per topic (evaluated with RR).
    "known_item": WorldParams(
        n_candidates=2000,
        rel_fixed=1,
        grade_probs=(1.0,),
        effect_mean=3.0,
        system_sd=0.6,
        topic_sd=0.8,
        interaction_sd=0.5,
        doc_share=0.3,
        team_share=0.2,
        pool_depth=100,
    ),
    # All systems identical in distribution: no system effect, no interaction, no team
    # structure in effectiveness, and each system its own team (so no pair of systems is more
    # alike than another). For calibrating significance tests: every null is true.
    "null": WorldParams(
        n_candidates=2000,
        rel_median=50.0,
        rel_sigma=0.8,
        grade_probs=(0.6, 0.3, 0.1),
        effect_mean=2.0,
        system_sd=0.0,
        topic_sd=0.6,
        interaction_sd=0.0,
        team_size=1.0,
        team_effect_share=0.0,
        doc_share=0.3,
        team_share=0.0,
        pool_depth=100,
    ),
}

# Fitted by simulators.calibrate(qrels, runs, iterations=15) on TREC DL 2019 and on
# DL 2020 passage ranking (official qrels, all official runs, ../shared/data), then averaged
# over the two years: arithmetic mean, geometric mean for rel_median; shallow_depth is 2019's
# (2020 has no shallow runs). The two fits are in reports/simulator-realism/fitted_params.json
# (written by reports/simulator-realism/make_report.py). Fit 2019 / 2020 for the record:
# effect_mean 1.72 / 2.60, system_sd 0.28 / 1.04, topic_sd 1.33 / 1.05, interaction_sd
# 0.55 / 0.38, rel_median 164 / 78, pool_depth 34 / 22, n_candidates 4586 / 7914.
_DL_LIKE = dict(
    n_candidates=6250,
    rel_median=113.0,
    rel_sigma=1.0,
    grade_probs=(0.465, 0.36, 0.175),
    grade_concentration=3.8,
    grade_quality=(0.0, 1.0, 0.95, 1.0),
    effect_mean=2.16,
    system_sd=0.66,
    topic_sd=1.19,
    interaction_sd=0.46,
    team_size=2.7,
    team_effect_share=0.5,
    doc_share=0.7,
    team_share=0.25,
    depth=1000,
    shallow_fraction=0.04,
    shallow_depth=20,
    tie_fraction=0.29,
    tie_resolution=0.0063,
    pool_depth=28,
)
PRESETS["dl_like"] = WorldParams(**_DL_LIKE)


def preset(name: str) -> WorldParams:
    """The parameters of a named preset."""
    if name not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {name!r}")
    return PRESETS[name]


_named_preset = preset  # make_world's argument is also called ``preset``


# ------------------------------------------------------------------------------- worlds
@dataclass(frozen=True, eq=False)
class World:
    """A simulated test collection with known truth.

    Attributes
    ----------
    params : WorldParams
    truth : Qrels
        The true grade of every candidate document of every topic.
    runs : RunSet
        One run per system, TREC-shaped (names ``sys001``...).
    qrels : Qrels
        The official judgments: a depth-``params.pool_depth`` pool of all runs.
    groups : dict
        Run name -> team name.
    ranked : ndarray of int32, shape (S, T, D)
        Candidate index of the document at each rank (-1 past the end of a list), in
        trec_eval ranking order.
    lengths : ndarray of int32, shape (S, T)
    effect : ndarray, shape (S, T)
        The true effectiveness a[s,t].
    system_effect : ndarray, shape (S,)
        b_s; in expectation a better system has a larger b_s.
    official : ndarray of bool, shape (len(truth),)
        Which truth rows are in the official judgments ``qrels``.
    """

    params: WorldParams
    truth: Qrels
    runs: RunSet
    qrels: Qrels
    groups: dict[str, str]
    ranked: np.ndarray = field(repr=False)
    lengths: np.ndarray = field(repr=False)
    effect: np.ndarray = field(repr=False)
    system_effect: np.ndarray = field(repr=False)
    official: np.ndarray = field(default=None, repr=False)

    @property
    def n_topics(self) -> int:
        return self.ranked.shape[1]

    @property
    def n_systems(self) -> int:
        return self.ranked.shape[0]

    def __repr__(self) -> str:
        return (
            f"World({self.n_systems} systems x {self.n_topics} topics, depth "
            f"{self.ranked.shape[2]}, {len(self.qrels)} pooled judgments of "
            f"{len(self.truth)} candidates)"
        )

    def truth_tensor(self) -> EvalTensor:
        """The runs against the truth, built from the stored ranks (no string matching)."""
        n_c = self.params.n_candidates
        rows = self.ranked + (np.arange(self.n_topics, dtype=np.int32) * n_c)[None, :, None]
        doc_index = np.where(self.ranked >= 0, rows, len(self.truth)).astype(np.int32)
        judgments = self.truth.grades.astype(np.int8)
        return EvalTensor.from_index(
            runs=self.runs.names,
            topics=self.truth.topics,
            lengths=self.lengths,
            answered=self.lengths > 0,
            doc_index=doc_index,
            judgments=judgments,
            judgment_topic=self.truth.topic_index,
            n_grades=self.params.n_grades,
            qrels=self.truth,
        )

    def pool_mask(self, depth: int | None = None, runs=None) -> np.ndarray:
        """Bool over the truth rows: in the top ``depth`` of any of ``runs`` (default all)."""
        from simulators.pooling import pool_mask

        return pool_mask(
            self.truth_tensor(), self.params.pool_depth if depth is None else depth, runs=runs
        )

    def pool_tensor(self) -> EvalTensor:
        """The runs against the official (pooled) judgments, as an EvalTensor over the truth
        rows (unpooled candidates read as unpooled)."""
        return self.truth_tensor().with_judgments(self.official)

    def to_json(self) -> dict:
        return {
            "params": self.params.to_dict(),
            "n_topics": self.n_topics,
            "n_systems": self.n_systems,
            "groups": self.groups,
        }


def make_world(
    preset: str | WorldParams = "trec_like", *, n_topics: int, n_systems: int, rng=None, **overrides
) -> World:
    """Generate a world: truth, runs and the official pooled qrels.

    Parameters
    ----------
    preset : str or WorldParams
        ``trec_like``, ``dl_like``, ``few_highly_relevant``, ``known_item``, ``null``, or a
        :class:`WorldParams`.
    n_topics, n_systems : int
    rng : None, int, SeedSequence or Generator
        The only source of randomness; the same seed gives the same world, bit for bit (None:
        fresh entropy, a different world every time).
    **overrides
        Any :class:`WorldParams` field, replacing the preset's value.

    Returns
    -------
    World
    """
    params = _named_preset(preset) if isinstance(preset, str) else preset
    if not isinstance(params, WorldParams):
        raise TypeError(f"preset must be a preset name or WorldParams, got {type(preset).__name__}")
    if overrides:
        names = {f.name for f in fields(WorldParams)}
        _refuse_unknown(overrides, names)
        params = dataclasses.replace(params, **overrides)
    check_int("n_topics", n_topics, min=1)
    check_int("n_systems", n_systems, min=1)
    rng = as_generator(rng)
    p = params
    S, T, C = int(n_systems), int(n_topics), p.n_candidates
    sim = _simulate(p, S, T, rng)
    grades, ranked, lengths, scores_out = sim.grades, sim.ranked, sim.lengths, sim.scores
    team, n_teams, depth = sim.team, sim.n_teams, sim.depth

    # ---- Qrels and runs (Arrow strings, built once)
    width_t, width_d = max(3, len(str(T))), max(5, len(str(C - 1)))
    topic_ids = np.array([f"q{t + 1:0{width_t}d}" for t in range(T)])
    doc_ids = pa.array([f"{tid}-d{j:0{width_d}d}" for tid in topic_ids for j in range(C)])
    truth = Qrels(pa.array(np.repeat(topic_ids, C)), doc_ids, grades.reshape(-1))
    width_s = max(3, len(str(S)))
    names = [f"sys{s + 1:0{width_s}d}" for s in range(S)]
    team_names = [f"team{g + 1:0{max(2, len(str(n_teams)))}d}" for g in team]
    runs = []
    for s in range(S):
        k = int(depth[s])
        flat = (np.arange(T)[:, None] * C + ranked[s, :, :k]).reshape(-1)
        runs.append(
            _sorted_run(
                names[s],
                topic_ids,
                k,
                doc_ids.take(pa.array(flat)),
                scores_out[s, :, :k].reshape(-1),
            )
        )
    runset = RunSet(runs)
    groups = dict(zip(names, team_names))
    world = World(
        params=p,
        truth=truth,
        runs=runset,
        qrels=truth,
        groups=groups,
        ranked=ranked,
        lengths=lengths,
        effect=sim.effect,
        system_effect=sim.system_effect,
    )
    # The official pool needs the world's tensor, hence the two steps; World is frozen, so the
    # pooled qrels replace the placeholder through dataclasses.replace.
    keep = official_mask(p, world.truth_tensor(), sim)
    return dataclasses.replace(
        world, qrels=truth.with_grades(truth.grades, keep=keep), official=keep
    )


@dataclass(frozen=True)
class _Arrays:
    grades: np.ndarray  # (T, C) int8 true grades
    ranked: np.ndarray  # (S, T, D) int32 candidate index per rank, -1 past the end
    scores: np.ndarray  # (S, T, D) float64
    lengths: np.ndarray  # (S, T) int32
    effect: np.ndarray  # (S, T) a[s,t]
    system_effect: np.ndarray  # (S,) b_s
    team: np.ndarray  # (S,) team index
    n_teams: int
    depth: np.ndarray  # (S,) list length
    learner: np.ndarray | None = None  # (T, C) the active learner's scores (pool_extra > 0)


def _simulate(p: WorldParams, S: int, T: int, rng: np.random.Generator) -> _Arrays:
    """The model's draws as arrays (no strings): shared by make_world and calibrate."""
    C = p.n_candidates

    # ---- judgments
    grades = _draw_grades(p, T, rng)  # (T, C) int8

    # ---- systems and teams
    n_teams = max(1, min(S, int(round(S / p.team_size))))
    # Every team gets one system, the rest are spread at random, so no team is empty.
    team = np.concatenate([np.arange(n_teams), rng.integers(0, n_teams, S - n_teams)])
    team = np.sort(team).astype(np.int64)  # sorted: sys001.. of a team are adjacent (readable)
    shared = rng.standard_normal(n_teams)
    own = rng.standard_normal(S)
    z = math.sqrt(p.team_effect_share) * shared[team] + math.sqrt(1 - p.team_effect_share) * own
    if p.system_quantiles is not None:
        # The collection's systems, not a sample of systems like them: the S effects are the
        # quantiles at (rank - 1/2) / S, dealt out in the order of the normal draws (so teams
        # keep their correlation). A sample would move the spread of the systems, and with it
        # every discriminative power, from one world to the next.
        z = _midpoint_quantiles(z, p.system_quantiles)
    b = p.system_sd * z
    d = rng.standard_normal(T)
    if p.topic_quantiles is not None:
        # The same for the topics: a sample's spread of topic difficulty would move the
        # statistics a calibration matches from one world to the next.
        d = _midpoint_quantiles(d, p.topic_quantiles)
    d = p.topic_sd * d
    c = p.interaction_sd * rng.standard_normal((S, T))
    effect = np.maximum(0.0, p.effect_mean + b[:, None] + d[None, :] + c)
    depth = np.full(S, p.depth, dtype=np.int64)
    n_shallow = int(round(p.shallow_fraction * S))
    if n_shallow:
        depth[rng.choice(S, n_shallow, replace=False)] = min(p.shallow_depth, p.depth)
    tied = np.zeros(S, dtype=bool)
    n_tied = int(round(p.tie_fraction * S))
    if n_tied:
        tied[rng.choice(S, n_tied, replace=False)] = True

    # ---- scores, topic by topic (S x C at a time keeps memory small at any T)
    q = p.quality()
    w_doc, w_team = math.sqrt(p.doc_share), math.sqrt(p.team_share)
    w_own = math.sqrt(1.0 - p.doc_share - p.team_share)
    D = int(p.depth)
    ranked = np.full((S, T, D), -1, dtype=np.int32)
    scores_out = np.zeros((S, T, D))
    tied_rows, untied_rows = np.flatnonzero(tied), np.flatnonzero(~tied)
    learner = np.zeros((T, C)) if p.pool_extra else None
    K = p.first_stages
    stage = rng.integers(0, K, S) if K else None
    stage_effect = np.maximum(0.0, p.effect_mean + d)
    learner_effect = np.maximum(0.0, p.effect_mean + 2 * p.system_sd + d)
    for t in range(T):
        x = rng.standard_normal((S, C))
        x *= w_own
        u = rng.standard_normal(C)
        x += w_doc * u[None, :]
        if w_team:
            x += w_team * rng.standard_normal((n_teams, C))[team]
        q_t = q[grades[t]]
        q_st = q_t[None, :]
        if p.doc_strength_sd:
            # Relevant documents differ in how easy they are to find: a log-normal factor with
            # mean 1 keeps q(g) as the grade's mean quality. The share doc_strength_share of
            # its log-variance is the same for every system (easy and hard documents), the
            # rest is each system's own (which relevant documents a system favours).
            s_h, rho = p.doc_strength_sd, p.doc_strength_share
            shared_h = s_h * math.sqrt(rho) * rng.standard_normal(C)
            q_t = q_t * np.exp(shared_h - s_h * s_h * rho / 2)
            q_st = q_t[None, :]
            if rho < 1:
                own_sd = s_h * math.sqrt(1 - rho)
                own_h = own_sd * rng.standard_normal((S, C))
                q_st = q_t[None, :] * np.exp(own_h - own_sd * own_sd / 2)
        x += effect[:, t, None] * q_st
        if learner is not None:
            own = math.sqrt(1.0 - p.doc_share) * rng.standard_normal(C)
            learner[t] = learner_effect[t] * q_t + w_doc * u + own
        if K:
            first = stage_effect[t] * q_t + math.sqrt(p.first_stage_share) * u
            own = math.sqrt(1.0 - p.first_stage_share) * rng.standard_normal((K, C))
            first = first + own
            if 0 < p.rerank_depth < D:
                x = _rerank_head(x, first, stage, D, p, rng)
            else:
                outside = np.ones((K, C), dtype=bool)
                top = np.argpartition(-first, D - 1, axis=1)[:, :D]
                np.put_along_axis(outside, top, False, axis=1)
                x[outside[stage]] = -np.inf
        if tied.any():
            x[tied] = np.round(x[tied] / p.tie_resolution) * p.tie_resolution
        for rows, exact in ((untied_rows, False), (tied_rows, True)):
            if len(rows):
                top, xs = _top_sorted(x[rows], D, exact)
                ranked[rows, t, :] = top
                scores_out[rows, t, :] = xs
    lengths = np.repeat(depth[:, None], T, axis=1).astype(np.int32)
    past = np.arange(D)[None, None, :] >= lengths[:, :, None]
    ranked[past] = -1
    return _Arrays(
        grades=grades,
        ranked=ranked,
        scores=scores_out,
        lengths=lengths,
        effect=effect,
        system_effect=b,
        team=team,
        n_teams=n_teams,
        depth=depth,
        learner=learner,
    )


def _midpoint_quantiles(z: np.ndarray, quantiles) -> np.ndarray:
    """The values of the quantile function (tabulated at equally spaced probabilities) at
    (rank - 1/2) / n, dealt out in the order of ``z``."""
    q = np.asarray(quantiles)
    rank = np.argsort(np.argsort(z, kind="stable"), kind="stable")
    return np.interp((rank + 0.5) / len(z), np.linspace(0, 1, len(q)), q)


def _rerank_head(
    x: np.ndarray, first: np.ndarray, stage: np.ndarray, D: int, p: WorldParams, rng
) -> np.ndarray:
    """Ranking keys (S, C) of systems whose own scores order only the head of their lists.

    A system's list is its first stage's top D candidates. Its own score ``x`` picks and
    orders the top ``rerank_depth`` of them; the rest follow the first stage's score plus
    ``tail_noise_sd`` times the system's own standard normal noise, shifted below the head (a
    monotone shift: only the order matters). Every other candidate is ``-inf``.
    """
    K, C = first.shape
    in_stage = np.zeros((K, C), dtype=bool)
    np.put_along_axis(in_stage, np.argpartition(-first, D - 1, axis=1)[:, :D], True, axis=1)
    listed = in_stage[stage]
    own = np.where(listed, x, -np.inf)
    head = np.zeros_like(listed)
    np.put_along_axis(
        head, np.argpartition(-own, p.rerank_depth - 1, axis=1)[:, : p.rerank_depth], True, axis=1
    )
    tail = listed & ~head
    tail_key = first[stage] + p.tail_noise_sd * rng.standard_normal(x.shape)
    head_min = np.where(head, x, np.inf).min(axis=1, keepdims=True)
    tail_max = np.where(tail, tail_key, -np.inf).max(axis=1, keepdims=True)
    return np.where(head, x, np.where(tail, tail_key - tail_max + head_min - 1.0, -np.inf))


def official_mask(p: WorldParams, tensor: EvalTensor, sim: _Arrays) -> np.ndarray:
    """The official judgments over the truth rows (topic-major, ``n_candidates`` a topic):
    the depth-``pool_depth`` pool, plus ``pool_extra`` documents per topic chosen by the
    learner among the retrieved, unpooled candidates."""
    from simulators.pooling import pool_mask

    keep = pool_mask(tensor, p.pool_depth)
    if not p.pool_extra:
        return keep
    T, C = sim.learner.shape
    retrieved = np.zeros(T * C, dtype=bool)
    r = sim.ranked
    rows = (r + (np.arange(T, dtype=np.int64) * C)[None, :, None])[r >= 0]
    retrieved[rows] = True
    score = np.where(retrieved & ~keep, sim.learner.reshape(-1), -np.inf).reshape(T, C)
    k = min(p.pool_extra, C)
    top = np.argpartition(-score, k - 1, axis=1)[:, :k] if k < C else np.tile(np.arange(C), (T, 1))
    picked = np.zeros((T, C), dtype=bool)
    np.put_along_axis(picked, top, True, axis=1)
    return keep | (picked & np.isfinite(score)).reshape(-1)


def _sorted_run(
    name: str, topic_ids: np.ndarray, k: int, docs: pa.Array, scores: np.ndarray
) -> Run:
    """A Run from lists that are already in trec_eval order with unique documents.

    ``Run.__init__`` would re-sort and re-check 50 000 rows per run, half the time of a
    100-system world; here the order holds by construction (tested against ``Run(...)`` in
    tests/simulators/test_worlds.py).
    """
    offsets = np.arange(len(topic_ids) + 1, dtype=np.int64) * k
    return Run.from_ranked(name, np.asarray(topic_ids, dtype=object), offsets, docs, scores)


def _top_sorted(x: np.ndarray, depth: int, exact_ties: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the indices and scores of the top ``depth`` in trec_eval order.

    trec_eval ranks by score descending, and among equal scores by docno descending; docnos
    are zero-padded candidate indices, so that is index descending. Continuous scores have no
    ties (probability 0) and need no tie-break; rounded scores (``exact_ties``) do, also at the
    cut, which ``argpartition`` ignores: there the cut is widened to every candidate tied with
    the depth-th score and a stable sort of the index-descending candidates decides.
    """
    n, C = x.shape
    if depth < C:
        part = np.argpartition(-x, depth - 1, axis=1)[:, :depth]
        if exact_ties:
            kth = np.take_along_axis(x, part, axis=1).min(axis=1)
            keep = x >= kth[:, None]
            width = int(keep.sum(axis=1).max())
            part = np.argsort(~keep, axis=1, kind="stable")[:, :width]
    else:
        part = np.broadcast_to(np.arange(C), (n, C))
    if exact_ties:
        part = -np.sort(-part, axis=1)  # index descending
    xs = np.take_along_axis(x, part, axis=1)
    order = np.argsort(-xs, axis=1, kind="stable" if exact_ties else "quicksort")[:, :depth]
    return np.take_along_axis(part, order, axis=1), np.take_along_axis(xs, order, axis=1)


def _draw_grades(p: WorldParams, T: int, rng: np.random.Generator) -> np.ndarray:
    C, G = p.n_candidates, len(p.grade_probs)
    if p.rel_fixed is not None:
        R = np.full(T, p.rel_fixed, dtype=np.int64)
    else:
        R = np.rint(np.exp(math.log(p.rel_median) + p.rel_sigma * rng.standard_normal(T)))
        R = np.clip(R, p.rel_min, max(p.rel_min, C // 2)).astype(np.int64)
    probs = np.asarray(p.grade_probs)
    if math.isinf(p.grade_concentration) or G == 1:
        pi = np.broadcast_to(probs, (T, G))
    else:
        alpha = np.maximum(p.grade_concentration * probs, 1e-3)
        pi = rng.dirichlet(alpha, size=T)
    grades = np.zeros((T, C), dtype=np.int8)
    for t in range(T):
        counts = rng.multinomial(R[t], pi[t])
        short = min(p.min_top_grade, R[t]) - counts[-1]
        if short > 0:  # move documents from the commonest lower grades to the top grade
            for _ in range(short):
                g = int(np.argmax(counts[:-1]))
                counts[g] -= 1
                counts[-1] += 1
        labels = np.repeat(np.arange(1, G + 1, dtype=np.int8), counts)
        row = np.zeros(C, dtype=np.int8)
        row[: len(labels)] = labels
        grades[t] = rng.permutation(row)
    return grades
