"""Fit the world model to a real test collection, and the statistics that compare the two.

:func:`collection_stats` summarises a collection (real, or a simulated :class:`World`) by what
matters to meta-evaluation: relevant documents per topic, grade proportions, judged documents per
topic, per-system MAP and nDCG, best-worst spread, agreement of system rankings between topic
halves (Kendall tau-b, :func:`metaeval.meta.kendall_tau`), per-topic score correlation between
systems, the fraction of retrieved documents judged at depth 10 and 100, overlap between
runs, and how alike runs holding the same documents order them above and below rank 100.

:func:`calibrate` fits :class:`~simulators.worlds.WorldParams` in three stages.

1. **Read off the data.** Grade proportions among relevant documents (stage 2 moves them
   on), their spread over topics (a Dirichlet concentration by the method of moments, after
   removing multinomial noise), the log-normal of R per topic, run depth and shallow runs,
   score ties, teams (from run-name prefixes unless ``groups`` is given), the pool (the depth k
   to which the runs' documents are judged, rank by rank, and the judged documents beyond the
   depth-k pool: when they are a tenth of the judgments or more, judging beyond a shallow
   pool), the
   shapes of the system effects and of the topic difficulties (standardised quantiles of the
   systems' and of the topics' mean nDCG), and, when
   at least 5% of the run pairs hold the same documents (90% of their lists: runs re-ranking
   shared first-stage lists), the number K of
   first-stage lists (K independent lists of ``depth`` among C candidates hold
   C (1 - (1 - depth / C)^K) distinct documents); the runs' own scores then order the top 100
   of their lists (``rerank_depth``, not fitted) and the first stage's order persists below.
2. **Simulated moments** (method of simulated moments with common random numbers). A world of
   the collection's size is simulated; parameters are moved, each towards the statistic it
   mainly controls, by damped steps ``theta <- theta (target / simulated)^g`` (shares on the
   logit scale); after the last step the last third of the iterates is averaged (Polyak), as
   the coupled, discrete statistics make the steps oscillate:

   =====================================  ==================================================
   parameter                              target statistic
   =====================================  ==================================================
   ``effect_mean``                        mean nDCG over systems and topics
   ``system_sd``                          sd of the system means of nDCG
   ``topic_sd``                           sd of the topic means of nDCG
   ``interaction_sd``                     residual sd of the two-way (system + topic) fit
   ``rel_median``                         median judged-relevant documents per topic
   ``pool_extra`` (beyond a shallow pool) mean judged documents per topic
   ``first_stage_share``                  median distinct documents per topic in the runs
   ``doc_share`` (``team_share`` kept     with a plain pool, mean judged documents per topic
   below half of what it leaves)          (the distinct documents of the runs' top k);
                                          beyond a shallow pool, median distinct documents
                                          per topic in the top 10
   ``doc_strength_share``                 agreement of the systems on which relevant
                                          documents they rank high (:func:`top_agreement`)
   ``tail_noise_sd`` (with first stages)  agreement on the order below rank 100 of runs
                                          holding the same documents
                                          (:func:`list_agreement`)
   ``grade_quality`` q(g), 0 < g < G      share of grade g among the relevant documents in
                                          the runs' top 10 (how strongly systems prefer the
                                          higher grades where measures weigh most)
   ``grade_probs`` (the relevant grades'  share of judged documents with grade g
   proportions)
   =====================================  ==================================================

   A plain pool's depth is not iterated: it is what stage 1 reads off the judgments (moving
   it to match the judged documents would make up for runs that overlap too little, and hide
   that misfit). Each step's statistics are the mean over ``MOMENT_WORLDS`` worlds, drawn
   with the same seeds at every step, so the steps follow the parameters, not noise: one
   world's statistics are a draw (the sd of the topic means of nDCG ranged 0.09-0.17 over 13
   worlds of one fit to DL 2019's depth-10 pool), and a fit to one world matched its draw.
   ``n_candidates`` is not iterated: it is set to 1.05 x the median number of distinct
   documents per topic in the runs (the union of the runs bounds the candidates).
3. **Simulated meta-evaluation** (``meta_evaluations > 0``,
   :func:`simulators.realism.fit_meta`): ``system_sd``, ``interaction_sd``,
   ``doc_strength_sd`` and ``doc_strength_share`` are moved by Nelder-Mead so that worlds
   drawn from the parameters give the collection's discriminative power and robustness to
   10% stratified judgments for the measures of Sakai & Kando (2008), while keeping the main
   moments of stage 2.

:func:`simulators.realism.check_calibration` says how far the result stands in for the
collection; the realism report (``reports/simulator-realism/``) shows it for TREC DL.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metaeval._validation import (
    ParamError,
    as_generator,
    check_int,
    check_real,
    counted,
    shown_ids,
)
from metaeval.data import Qrels, RunSet
from metaeval.engine import EvalTensor
from metaeval.evaluation import score_matrices
from simulators.worlds import PRESETS, World, WorldParams, _simulate, official_mask

__all__ = [
    "CollectionStats",
    "collection_stats",
    "calibrate",
    "list_agreement",
    "teams_from_names",
    "top_agreement",
]


@dataclass(frozen=True, eq=False)
class CollectionStats:
    """Summary statistics of a test collection (see :func:`collection_stats`).

    Arrays are per topic (T,), per system (S,) or per system pair; ``ap`` and ``ndcg`` are the
    (S, T) per-topic scores.
    """

    n_topics: int
    n_systems: int
    rel_per_topic: np.ndarray
    judged_per_topic: np.ndarray
    grade_props: np.ndarray
    ap: np.ndarray = field(repr=False)
    ndcg: np.ndarray = field(repr=False)
    half_tau: np.ndarray = field(repr=False)
    pair_corr: np.ndarray = field(repr=False)
    judged_at: dict = field(default_factory=dict)
    distinct_at: dict = field(default_factory=dict)
    run_lengths: np.ndarray = field(default=None, repr=False)
    tie_fraction: np.ndarray = field(default=None, repr=False)
    rel: int = 1
    top_agreement: float = float("nan")
    list_agreement: dict = field(default_factory=dict)

    @property
    def map(self) -> np.ndarray:
        return self.ap.mean(axis=1)

    @property
    def mean_ndcg(self) -> np.ndarray:
        return self.ndcg.mean(axis=1)

    def anova(self, scores: np.ndarray | None = None) -> dict[str, float]:
        """sd of system means, sd of topic means and residual sd of the additive fit."""
        x = self.ndcg if scores is None else scores
        sys_m, top_m, grand = x.mean(axis=1), x.mean(axis=0), x.mean()
        resid = x - sys_m[:, None] - top_m[None, :] + grand
        return {
            "mean": float(grand),
            "system_sd": float(sys_m.std(ddof=1)),
            "topic_sd": float(top_m.std(ddof=1)),
            "residual_sd": float(resid.std(ddof=1)),
        }

    def summary(self) -> dict[str, float]:
        """One number per statistic (used by the report table and the tests)."""
        out = {
            "topics": self.n_topics,
            "systems": self.n_systems,
            f"R median (grade >= {self.rel})": float(np.median(self.rel_per_topic)),
            f"R mean (grade >= {self.rel})": float(self.rel_per_topic.mean()),
            "judged per topic": float(self.judged_per_topic.mean()),
        }
        for g, v in enumerate(self.grade_props):
            out[f"grade {g} share"] = float(v)
        for name, m in (("MAP", self.map), ("nDCG", self.mean_ndcg)):
            out[f"{name} mean"] = float(m.mean())
            out[f"{name} sd over systems"] = float(m.std(ddof=1)) if len(m) > 1 else 0.0
            out[f"{name} best-worst"] = float(m.max() - m.min())
        a = self.anova()
        out["nDCG topic sd"] = a["topic_sd"]
        out["nDCG residual sd"] = a["residual_sd"]
        out["half-split tau (nDCG)"] = float(np.nanmean(self.half_tau))
        out["system pair corr (nDCG)"] = float(np.nanmedian(self.pair_corr))
        out["top agreement on relevant documents"] = float(self.top_agreement)
        for part, value in self.list_agreement.items():
            out[f"same-list order agreement, {part}"] = float(value)
        for k, v in self.judged_at.items():
            out[f"judged@{k}"] = float(v)
        for k, v in self.distinct_at.items():
            out[f"distinct@{k}"] = float(v)
        return out


def _stats_from_tensor(
    tensor: EvalTensor,
    *,
    rel: int,
    rng: np.random.Generator,
    n_splits: int,
    distinct_at: dict,
    run_lengths: np.ndarray,
    tie_fraction: np.ndarray | None,
    ranked: np.ndarray,
) -> CollectionStats:
    counts = tensor.grade_counts
    S, T = tensor.n_runs, tensor.n_topics
    mats = score_matrices(tensor, [f"AP(rel={rel})" if rel != 1 else "AP", "nDCG"])
    ap, ndcg = mats[next(iter(mats))], mats["nDCG"]
    # Topic halves: random disjoint halves, systems ranked by mean nDCG on each (tau-b).
    halves = np.array([rng.permutation(T) for _ in range(n_splits)])
    h = T // 2
    a = np.stack([ndcg[:, p[:h]].mean(axis=1) for p in halves])
    b = np.stack([ndcg[:, p[h : 2 * h]].mean(axis=1) for p in halves])
    if S > 1 and h > 0:
        # imported here: metaeval.meta imports scipy.stats, half a second at start-up that
        # generating a world does not need
        from metaeval.meta.rankcorr import kendall_tau

        tau = kendall_tau(a, b)
    else:
        tau = np.array([np.nan])
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.corrcoef(ndcg) if S > 1 else np.ones((1, 1))
    iu = np.triu_indices(S, 1)
    valid = tensor.valid()
    judged = tensor.codes >= 0
    judged_at = {}
    for k in (10, 100):
        v = valid[:, :, :k]
        judged_at[k] = float(judged[:, :, :k][v].mean()) if v.any() else float("nan")
    return CollectionStats(
        n_topics=T,
        n_systems=S,
        rel_per_topic=tensor.n_relevant(rel),  # grade >= rel, by value
        judged_per_topic=counts.sum(axis=1),
        grade_props=counts.sum(axis=0) / max(counts.sum(), 1),
        ap=ap,
        ndcg=ndcg,
        half_tau=tau,
        pair_corr=corr[iu],
        judged_at=judged_at,
        distinct_at=distinct_at,
        run_lengths=run_lengths,
        tie_fraction=tie_fraction,
        rel=rel,
        top_agreement=top_agreement(tensor, rel),
        list_agreement=_list_agreement_named(ranked),
    )


def _run_entries(runs: RunSet, topics: np.ndarray):
    """Every retrieved document as (run position, topic position or -1, document code, rank)."""
    srun, tpos, dcodes, ranks = [], [], [], []
    for i, run in enumerate(runs):
        srun.append(np.full(len(run), i, dtype=np.int64))
        sizes = np.diff(run.offsets)
        pos = np.searchsorted(topics, run.topics)
        pos = np.minimum(pos, len(topics) - 1)
        known = topics[pos] == run.topics
        tpos.append(np.repeat(np.where(known, pos, -1), sizes))
        ranks.append(np.arange(len(run)) - np.repeat(run.offsets[:-1], sizes))
        dcodes.append(run.docs)
    docs = pa.chunked_array(dcodes).combine_chunks()
    code = pc.dictionary_encode(docs).indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return np.concatenate(srun), np.concatenate(tpos), code, np.concatenate(ranks)


def _distinct_from_runs(runs: RunSet, topics: np.ndarray, ks=(10, 100, 1000)) -> dict:
    """Median over topics of the number of distinct documents in the runs' top k."""
    _, tpos, code, ranks = _run_entries(runs, topics)
    return _distinct_counts(tpos, code, ranks, len(topics), int(code.max()) + 1, ks)


def _shared_list_share(runs: RunSet, topics: np.ndarray, depth: int) -> float:
    """Median over topics of the share of run pairs whose top ``depth`` documents are mostly
    (90%) the same set, as runs re-ranking one first-stage list are."""
    srun, tpos, code, ranks = _run_entries(runs, topics)
    S = len(runs)
    if S < 2:
        return 0.0
    keep = (tpos >= 0) & (ranks < depth)
    srun, tpos, code = srun[keep], tpos[keep], code[keep]
    iu = np.triu_indices(S, 1)
    shares = []
    for t in np.unique(tpos):
        m = tpos == t
        _, column = np.unique(code[m], return_inverse=True)
        member = np.zeros((S, int(column.max()) + 1), dtype=bool)
        member[srun[m], column] = True
        shares.append(_same_lists(member)[iu].mean())
    return float(np.median(shares)) if shares else 0.0


def _same_lists(member: np.ndarray) -> np.ndarray:
    """(S, S) bool: which runs' lists mostly hold the same documents, 90% of the longer list,
    as runs re-ranking one first-stage list do. ``member`` is (S, n) bool: run s holds
    document j. A float32 product counts the common documents exactly (counts < 2^24)."""
    m = member.astype(np.float32)
    common = m @ m.T
    size = np.diag(common)
    return common / np.maximum(np.maximum(size[:, None], size[None, :]), 1) >= 0.9


def _distinct_counts(tpos, code, ranks, n_topics, n_codes, ks) -> dict:
    # A (topic x document) bitmap is cheaper than sorting millions of keys.
    out = {}
    for k in ks:
        m = (tpos >= 0) & (ranks < k)
        seen = np.zeros(n_topics * n_codes, dtype=bool)
        seen[tpos[m] * n_codes + code[m]] = True
        out[k] = float(np.median(seen.reshape(n_topics, n_codes).sum(axis=1)))
    return out


def _distinct_from_ranked(ranked: np.ndarray, n_codes: int, ks) -> dict:
    """:func:`_distinct_counts` of a world's (S, T, D) candidate codes (-1: no document)."""
    S, T, D = ranked.shape
    tpos = np.broadcast_to(np.arange(T)[None, :, None], (S, T, D)).reshape(-1)
    ranks = np.broadcast_to(np.arange(D)[None, None, :], (S, T, D)).reshape(-1)
    code = ranked.reshape(-1).astype(np.int64)
    tpos = np.where(code >= 0, tpos, -1)
    return _distinct_counts(tpos, np.maximum(code, 0), ranks, T, n_codes, ks)


def _ties_from_runs(runs: RunSet) -> np.ndarray:
    """Per run, the mean over topics of 1 - (distinct scores / list length)."""
    out = []
    for run in runs:
        s = run.scores
        off = run.offsets
        topic = np.repeat(np.arange(len(off) - 1), np.diff(off))
        same = np.zeros(len(s), dtype=bool)
        same[1:] = (s[1:] == s[:-1]) & (topic[1:] == topic[:-1])
        per = np.bincount(topic, weights=same, minlength=len(off) - 1) / np.diff(off)
        out.append(per.mean())
    return np.asarray(out)


def collection_stats(
    qrels: Qrels | World,
    runs: RunSet | None = None,
    *,
    rel: int = 1,
    rng=None,
    n_splits: int = 200,
    distinct_ks=(10, 100, 1000),
) -> CollectionStats:
    """Statistics of a collection: ``collection_stats(qrels, runs)`` or ``collection_stats(world)``.

    A world is summarised through its official (pooled) qrels and runs, exactly as a real
    collection is, so the two are comparable. ``rel`` is the relevance threshold of AP and R
    (TREC DL uses 2; any number > 0 on real-valued grades). ``rng`` (None, an int, a
    SeedSequence or a Generator) draws the topic halves of the split-half statistic; give a
    seed to make it reproducible.
    """
    check_real("rel", rel, min=0.0, min_open=True)  # a level: real-valued grades too
    rng = as_generator(rng)
    if isinstance(qrels, World):
        # The world's own arrays give the same tensor and counts without string matching
        # (tests/simulators/test_worlds.py checks truth_tensor against EvalTensor.build).
        world = qrels
        tensor = world.pool_tensor()
        return _stats_from_tensor(
            tensor,
            rel=rel,
            rng=rng,
            n_splits=n_splits,
            distinct_at=_distinct_from_ranked(world.ranked, world.params.n_candidates, distinct_ks),
            run_lengths=np.median(tensor.lengths, axis=1),
            tie_fraction=_ties_from_runs(world.runs),
            ranked=world.ranked,
        )
    if not isinstance(qrels, Qrels) or not isinstance(runs, RunSet):
        raise TypeError("collection_stats takes (Qrels, RunSet) or a World")
    tensor = EvalTensor.build(runs, qrels, warn_extra_topics=False)
    return _stats_from_tensor(
        tensor,
        rel=rel,
        rng=rng,
        n_splits=n_splits,
        distinct_at=_distinct_from_runs(runs, qrels.topics, distinct_ks),
        run_lengths=np.median(tensor.lengths, axis=1),
        tie_fraction=_ties_from_runs(runs),
        ranked=_runs_as_ranked(runs, qrels.topics),
    )


# ------------------------------------------------------------------------------- calibration
_TEAM_RE = re.compile(r"[-_.]")


def teams_from_names(names) -> dict[str, str]:
    """A guess at each run's team: the run name up to its first ``-``, ``_`` or ``.``, without
    trailing digits (``TUW19-p1-f`` -> ``TUW``, ``runid3`` -> ``runid``). A heuristic: pass the
    real groups to :func:`calibrate` when they are known."""
    out = {}
    for n in names:
        head = _TEAM_RE.split(n, maxsplit=1)[0].rstrip("0123456789") or n
        out[n] = head.lower()
    return out


def _dirichlet_concentration(counts: np.ndarray) -> float:
    """Method-of-moments Dirichlet concentration of per-topic grade proportions.

    For proportions pi_t ~ Dirichlet(a p) observed through R_t multinomial draws, the observed
    share of grade g has (to first order) Var = p_g (1 - p_g) (1/(a + 1) + 1/R_t). Subtracting
    the multinomial part p_g (1 - p_g) mean(1/R_t), pooling over grades and solving for a gives
    the estimate, clipped to [0.5, 1000] (1000 when there is no excess variance).
    """
    R = counts.sum(axis=1)
    ok = R >= 2
    if ok.sum() < 3 or counts.shape[1] < 2:
        return math.inf
    props = counts[ok] / R[ok, None]
    p = counts[ok].sum(axis=0) / R[ok].sum()
    var = props.var(axis=0, ddof=1)
    base = p * (1 - p)
    excess = var - base * np.mean(1 / R[ok])
    good = base > 0
    ratio = np.sum(excess[good]) / np.sum(base[good])
    if ratio <= 0:
        return 1000.0
    return float(np.clip(1 / ratio - 1, 0.5, 1000.0))


#: Worlds whose statistics the second stage averages at every step.
MOMENT_WORLDS = 4


def _mean_stats(stats: list[dict[str, float]]) -> dict[str, float]:
    """The mean of each statistic over the worlds where it is defined (NaN where none)."""
    out = {}
    for key in stats[0]:
        values = np.array([d[key] for d in stats])
        finite = values[np.isfinite(values)]
        out[key] = float(finite.mean()) if len(finite) else math.nan
    return out


def _fast_stats(p: WorldParams, S: int, T: int, seed: int) -> dict[str, float]:
    """The calibration targets of a simulated world, from arrays (no strings)."""
    sim = _simulate(p, S, T, np.random.default_rng(seed))
    C = p.n_candidates
    rows = sim.ranked + (np.arange(T, dtype=np.int32) * C)[None, :, None]
    n_q = T * C
    doc_index = np.where(sim.ranked >= 0, rows, n_q).astype(np.int32)
    judgments = sim.grades.reshape(-1).astype(np.int8)
    tensor = EvalTensor.from_index(
        runs=[f"s{i}" for i in range(S)],
        topics=np.arange(T).astype(str),
        lengths=sim.lengths,
        answered=sim.lengths > 0,
        doc_index=doc_index,
        judgments=judgments,
        judgment_topic=np.repeat(np.arange(T), C),
        n_grades=p.n_grades,
        qrels=None,
    )
    tensor = tensor.with_judgments(official_mask(p, tensor, sim))
    d = _distinct_from_ranked(sim.ranked, C, (10, p.depth))
    return _targets(tensor, d[10], d[p.depth], sim.ranked)


def top_agreement(tensor: EvalTensor, rel: int = 1) -> float:
    """How much systems agree on which relevant documents they rank high, in [0, 1].

    Per topic with at least 3 relevant documents (grade >= ``rel``), the S x R matrix of the
    reciprocal rank at which each system retrieved each relevant document (0 when it did not)
    is split as in a two-way analysis of variance into a document effect (every system ranks
    this document high, or low) and a system x document interaction (this system favours it);
    the result is the variance of the document effect over the sum of the two, each summed
    over topics. Near 1: the systems rank the same relevant documents on top; lower: each finds
    its own. With a few relevant documents left per topic, as under sampled judgments, the
    interaction decides how far a measure's ranking of the systems moves.
    """
    lowest = tensor.code_at_least(rel)  # grade >= rel, as a code (real grades too)
    code = tensor.entry_codes
    hit = code >= lowest
    relevant_rows = np.flatnonzero(tensor.judgments >= lowest)
    topic_of = tensor.judgment_topic[relevant_rows]
    R = np.bincount(topic_of, minlength=tensor.n_topics)
    S = tensor.n_runs
    column = np.full(len(tensor.judgments), -1, dtype=np.int64)
    column[relevant_rows] = np.arange(len(relevant_rows))
    rr = np.zeros((S, len(relevant_rows)))
    run = tensor.entry_group[hit] // tensor.n_topics
    rr[run, column[tensor.entry_row[hit]]] = 1.0 / (tensor.entry_rank[hit] + 1.0)
    doc_var = inter_var = 0.0
    order = np.argsort(topic_of, kind="stable")
    for t in np.flatnonzero(R >= 3):
        x = rr[:, order[np.searchsorted(topic_of[order], t) :][: R[t]]]
        doc = x.mean(axis=0) - x.mean()
        resid = x - x.mean(axis=1, keepdims=True) - doc[None, :]
        doc_var += float((doc**2).sum() * S)
        inter_var += float((resid**2).sum())
    total = doc_var + inter_var
    return doc_var / total if total > 0 else float("nan")


def list_agreement(ranked: np.ndarray, k: int = 100, *, max_pairs: int = 50) -> dict[str, float]:
    """How alike runs that re-rank the same list order it, above and below rank ``k``.

    ``ranked`` is (S, T, D): per run and topic the document codes in rank order (any integers
    unique within a topic; -1 past the end of a list). Per topic, the pairs of runs whose lists
    hold mostly (90% of the longer list) the same documents, as runs re-ranking one
    first-stage list do, are taken in order, at most ``max_pairs`` of them evenly spaced. For
    each pair, the Spearman correlation of the ranks at which the two runs put the documents
    that both rank above ``k`` (``"head"``), and of those that both rank at ``k`` + 1 or deeper
    (``"tail"``), over at least 10 such documents. Each is the mean over pairs and topics (NaN
    when no pair qualifies). In TREC DL the runs agree as much, or less, on the order of their
    tails as on their heads: what makes two runs alike is how they rank the relevant
    documents, not a shared order of the rest.
    """
    S, T, D = ranked.shape
    out = {"head": [], "tail": []}
    iu = np.triu_indices(S, 1)
    rank = np.arange(D)
    for t in range(T):
        r = ranked[:, t, :]
        held = r >= 0
        if not held.any():
            continue
        # Each run's documents as columns 0..n-1 (n: past the end of a list), and the rank at
        # which each run holds each column (D: not held).
        _, column = np.unique(r[held], return_inverse=True)
        n = int(column.max()) + 1
        docs = np.full((S, D), n, dtype=np.int64)
        docs[held] = column
        where = np.full((S, n + 1), D, dtype=np.min_scalar_type(D))
        where[np.nonzero(held)[0], column] = np.nonzero(held)[1]
        same = np.flatnonzero(_same_lists(where[:, :n] < D)[iu])
        if len(same) > max_pairs:
            same = same[np.linspace(0, len(same) - 1, max_pairs).round().astype(np.int64)]
        if not len(same):
            continue
        a, b = iu[0][same], iu[1][same]
        # In a's order: the rank at which b holds each document, and the same in b's order.
        in_b = where[b[:, None], docs[a]].astype(np.int64)
        in_a = where[a[:, None], docs[b]].astype(np.int64)
        for part, side in (("head", rank < k), ("tail", rank >= k)):
            # the documents both rank on this side of k, ranked within that set by each run
            kept_a = side & (in_b < D) & (side[np.minimum(in_b, D - 1)])
            kept_b = side & (in_a < D) & (side[np.minimum(in_a, D - 1)])
            x = np.cumsum(kept_a, axis=1) - 1
            y = np.take_along_axis(np.cumsum(kept_b, axis=1) - 1, np.minimum(in_b, D - 1), axis=1)
            m = kept_a.sum(axis=1)
            d2 = np.where(kept_a, (x - y) ** 2, 0).sum(axis=1)
            enough = m >= 10
            # Spearman's rho of two rankings without ties
            m = m[enough].astype(np.float64)
            out[part].extend(1.0 - 6.0 * d2[enough] / (m * (m * m - 1.0)))
    return {part: float(np.mean(v)) if v else float("nan") for part, v in out.items()}


#: The rank that splits a list's head from its tail in :func:`list_agreement`.
LIST_HEAD = 100


def _list_agreement_named(ranked: np.ndarray) -> dict[str, float]:
    a = list_agreement(ranked, LIST_HEAD)
    return {f"ranks 1-{LIST_HEAD}": a["head"], f"ranks {LIST_HEAD + 1}+": a["tail"]}


def _runs_as_ranked(runs: RunSet, topics: np.ndarray) -> np.ndarray:
    """The runs' document codes as an (S, T, D) array for :func:`list_agreement`."""
    srun, tpos, code, ranks = _run_entries(runs, topics)
    keep = tpos >= 0
    D = int(ranks[keep].max(initial=0)) + 1
    ranked = np.full((len(runs), len(topics), D), -1, dtype=np.int32)
    ranked[srun[keep], tpos[keep], ranks[keep]] = code[keep]
    return ranked


def _top_grade_shares(tensor: EvalTensor, k: int = 10) -> list[float]:
    """The share of each grade 1..G among the relevant documents in the runs' top ``k``: how
    strongly systems prefer the higher grades where it matters most."""
    G = tensor.grade_counts.shape[1] - 1
    top = (tensor.entry_rank < k) & (tensor.entry_codes >= 1)
    hits = np.bincount(tensor.entry_codes[top].astype(np.int64), minlength=G + 1)[1 : G + 1]
    return [float(h) / max(hits.sum(), 1) for h in hits]


def _targets(
    tensor: EvalTensor, distinct10: float, distinct_deep: float, ranked: np.ndarray | None
) -> dict[str, float]:
    """The statistics the second stage matches; ``ranked`` None leaves out the list
    agreement below rank 100 (NaN), which only the second stage reads."""
    scores = score_matrices(tensor, ["nDCG", "AP"])
    ndcg = scores["nDCG"]
    sys_m, top_m, grand = ndcg.mean(axis=1), ndcg.mean(axis=0), ndcg.mean()
    resid = ndcg - sys_m[:, None] - top_m[None, :] + grand
    counts = tensor.grade_counts
    shares = counts.sum(axis=0) / max(counts.sum(), 1)
    return {
        **{f"share{g}": float(v) for g, v in enumerate(shares)},
        **{f"top{g}": v for g, v in enumerate(_top_grade_shares(tensor), start=1)},
        "mean": float(grand),
        "system_sd": float(sys_m.std(ddof=1)),
        "topic_sd": float(top_m.std(ddof=1)),
        "residual_sd": float(resid.std(ddof=1)),
        "map_sd": float(scores["AP"].mean(axis=1).std(ddof=1)),
        "rel": float(np.median(counts[:, 1:].sum(axis=1))),
        "judged": float(counts.sum(axis=1).mean()),
        "distinct_deep": distinct_deep,
        "distinct10": distinct10,
        "top_agreement": top_agreement(tensor),
        "tail_agreement": math.nan if ranked is None else list_agreement(ranked, LIST_HEAD)["tail"],
    }


def calibrate(
    qrels: Qrels,
    runs: RunSet,
    *,
    groups: Mapping[str, str] | None = None,
    iterations: int = 15,
    rng=None,
    damping: float = 0.5,
    start: WorldParams | None = None,
    meta_evaluations: int = 0,
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
) -> WorldParams:
    """Fit the world model to a real collection (moments, then simulated moments).

    Parameters
    ----------
    qrels : Qrels
        The official judgments.
    runs : RunSet
        The runs that were evaluated (ideally those that were pooled).
    groups : mapping run -> team, optional
        Teams, one for every run; default :func:`teams_from_names`.
    iterations : int
        Simulated-moment iterations (0: stage 1 only).
    rng : None, int, SeedSequence or Generator
        Seeds the simulated worlds: stage 2's seeds are drawn from it and reused at every step
        (common random numbers), so the fit is reproducible given an int.
    damping : float
        Exponent g of the multiplicative steps, in (0, 1].
    start : WorldParams, optional
        Starting values for what stage 1 does not read off (default ``trec_like``).
    meta_evaluations : int
        Stage 3 (:func:`simulators.realism.fit_meta`): at most this many Nelder-Mead
        evaluations of the simulated meta-evaluation (discriminative power and robustness of
        the Sakai & Kando measures), each drawing four worlds. 0 (default): stages 1 and 2
        only. About 6 s per evaluation at the size of TREC DL (3 s with ``jobs=2``).
    jobs : int
        Worker processes for the worlds of stages 2 and 3 (the same fit for any number).
    progress : callable, optional
        Called with a line of text after every step of stages 2 and 3 (the command line
        prints them: a fit to a large collection takes minutes).

    Returns
    -------
    WorldParams
    """
    if not isinstance(qrels, Qrels):
        raise TypeError(f"qrels must be a Qrels, got {type(qrels).__name__}")
    if not isinstance(runs, RunSet):
        raise TypeError(f"runs must be a RunSet, got {type(runs).__name__}")
    check_int("iterations", iterations, min=0)
    gen = as_generator(rng)
    seeds = [int(s) for s in gen.integers(0, 2**32, size=MOMENT_WORLDS)]  # for every step
    check_int("meta_evaluations", meta_evaluations, min=0)
    check_int("jobs", jobs, min=1)
    if not 0 < damping <= 1:
        raise ValueError(f"damping must be in (0, 1], got {damping!r}")
    missing = [r for r in runs.names if groups and r not in groups]
    if missing:  # checked before the fit's first step, as degrade checks its teams
        raise ParamError("groups", f"has no team for run(s) {shown_ids(missing)}")
    tensor = EvalTensor.build(runs, qrels, warn_extra_topics=False)
    S, T = tensor.n_runs, tensor.n_topics
    counts = tensor.grade_counts  # (T, G+1)
    G = counts.shape[1] - 1
    if G < 1:
        raise ValueError("qrels have no relevant grade (all grades 0): nothing to fit")
    if S < 2 or T < 2:
        raise ValueError(
            f"calibrate needs at least 2 runs and 2 judged topics, got {counted(S, 'run')} and "
            f"{counted(T, 'topic')}: the spread of the systems and of the topics cannot be "
            "fitted from one"
        )
    if not tensor.lengths.any():
        raise ValueError("no run retrieves a document for a judged topic: nothing to fit")
    if progress:
        progress("stage 1: reading values off the collection")
    rel_counts = counts[:, 1:]
    R = rel_counts.sum(axis=1)
    logR = np.log(np.maximum(R, 1))
    grade_probs = tuple(float(v) for v in rel_counts.sum(axis=0) / max(rel_counts.sum(), 1))
    lengths = np.median(tensor.lengths, axis=1)
    depth = int(np.median(lengths))
    shallow = lengths < depth / 2
    ties = _ties_from_runs(runs)
    tied = ties > 0.05
    distinct = _distinct_from_runs(runs, qrels.topics, (10, depth))
    teams = groups or teams_from_names(runs.names)
    n_teams = len(set(teams[n] for n in runs.names))
    base = start or PRESETS["trec_like"]
    # Run names that all guess to one team (sys001, sys002...) say nothing about teams: a
    # single team would make the team effect one draw shared by every system.
    team_size = S / n_teams if n_teams > 1 or groups else base.team_size
    # Ties: a tied run with tie fraction f keeps about (1 - f) depth distinct values over a
    # score range of roughly 4 noise sd, hence the resolution.
    f_tie = float(np.median(ties[tied])) if tied.any() else 0.0
    p = dataclasses.replace(
        base,
        grade_probs=grade_probs,
        grade_concentration=_dirichlet_concentration(rel_counts),
        rel_median=float(np.exp(logR.mean())),
        rel_sigma=float(logR.std(ddof=1)),
        rel_min=1,
        rel_fixed=None,
        min_top_grade=0,
        grade_quality=None,
        depth=depth,
        # The union of the runs' lists bounds the candidates; a world with C candidates shows
        # a little fewer distinct documents than C, hence the 5% margin.
        n_candidates=max(int(round(1.05 * distinct[depth])), depth + 1),
        shallow_fraction=float(shallow.mean()),
        shallow_depth=max(1, int(np.median(lengths[shallow])))
        if shallow.any()
        else base.shallow_depth,
        tie_fraction=float(tied.mean()),
        tie_resolution=4.0 / max((1 - f_tie) * depth, 1.0) if tied.any() else base.tie_resolution,
        team_size=float(team_size),
        **_pool_start(tensor, depth),
    )
    target = _targets(tensor, distinct[10], distinct[depth], _runs_as_ranked(runs, qrels.topics))
    # The shapes of the system effects and of the topic difficulties: the standardised
    # quantiles of the systems' and of the topics' mean nDCG (a concave function of the
    # effect, so the tails are if anything underestimated).
    ndcg = score_matrices(tensor, ["nDCG"])["nDCG"]
    shared_lists = _shared_list_share(runs, qrels.topics, depth) >= SHARED_LISTS
    p = dataclasses.replace(
        p,
        system_quantiles=_shape(ndcg.mean(axis=1)),
        topic_quantiles=_shape(ndcg.mean(axis=0)),
        # Relevant documents are unequal in real collections (a start with none is moved
        # to 1; stage 3 fits it).
        doc_strength_sd=p.doc_strength_sd or 1.0,
        effect_mean=max(p.effect_mean, 0.1),
        # Re-ranked first-stage lists show as run pairs holding the same documents; K lists of
        # ``depth`` among C candidates hold C (1 - (1 - depth/C)^K) distinct documents if
        # independent, and stage 2 makes them share as much as the runs do.
        first_stages=_first_stages_start(distinct[depth], depth, S) if shared_lists else 0,
        # Not fitted: the runs' own scores order the head of their lists, where the measures
        # weigh, and the first stage's order persists below (stage 2 fits how far).
        rerank_depth=LIST_HEAD if shared_lists and depth > LIST_HEAD else 0,
        tail_noise_sd=p.tail_noise_sd or 0.5,
    )
    p = _fit_moments(p, target, S, T, seeds, iterations, damping, jobs=jobs, progress=progress)
    if meta_evaluations:
        from simulators.realism import fit_meta

        # Last: what it matches is what a study on the world is asked to reproduce, and its
        # loss keeps the second stage's main moments too.
        p = fit_meta(
            qrels, runs, p, evaluations=meta_evaluations, rng=gen, jobs=jobs, progress=progress
        )
    return p


def _shape(means: np.ndarray) -> tuple[float, ...] | None:
    """Standardised quantiles of ``means`` at up to 21 equally spaced probabilities; None
    (normal) for fewer than 5 values or no spread."""
    if len(means) < 5 or not means.std() > 0:
        return None
    z = (means - means.mean()) / means.std(ddof=1)
    return tuple(float(v) for v in np.quantile(z, np.linspace(0, 1, min(len(means), 21))))


def _fit_moments(
    p: WorldParams,
    target: dict,
    S: int,
    T: int,
    seeds: list[int],
    iterations: int,
    damping: float,
    *,
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
) -> WorldParams:
    """Stage 2: damped multiplicative steps towards the targets (the statistics averaged over
    a world of each seed), then Polyak averaging."""
    from simulators.realism import _map_worlds

    G = len(p.grade_probs)
    history = []
    for it in range(iterations):
        sim = _mean_stats(_map_worlds(_fast_stats, [(p, S, T, s) for s in seeds], jobs))
        if progress:
            progress(
                f"moments, step {it + 1} of {iterations}: mean nDCG {sim['mean']:.3f} "
                f"(collection {target['mean']:.3f}), judged per topic {sim['judged']:.0f} "
                f"({target['judged']:.0f})"
            )
        p = _step(p, sim, target, damping, G, S)
        history.append(p)
    if not history:
        return p
    # The steps oscillate around the fixed point (the statistics are discrete and coupled);
    # averaging the last third of the iterates (Polyak averaging) settles it.
    tail = history[-max(1, len(history) // 3) :]
    avg = {name: float(np.mean([getattr(h, name) for h in tail])) for name in _AVERAGED}
    for name in ("pool_depth", "pool_extra"):
        avg[name] = int(round(np.median([getattr(h, name) for h in tail])))
    avg["grade_quality"] = tuple(float(v) for v in np.mean([h.quality() for h in tail], axis=0))
    avg["grade_probs"] = tuple(np.mean([h.grade_probs for h in tail], axis=0))  # normalised
    return dataclasses.replace(p, **avg)


_AVERAGED = (
    "effect_mean",
    "system_sd",
    "topic_sd",
    "interaction_sd",
    "rel_median",
    "doc_share",
    "team_share",
    "first_stage_share",
    "doc_strength_share",
    "tail_noise_sd",
)


def _pool_start(tensor: EvalTensor, depth: int) -> dict:
    """The pool read off the judgments: k, the deepest rank down to which, at every rank, the
    documents of the best-judged quarter of the runs are judged (99% of the topics), and the
    judged documents per topic beyond the depth-k pool. When these are at least a tenth of
    the judged documents (active learning, as in TREC DL), the world judges them beyond a
    depth-k pool (``pool_extra``); otherwise the pool is a plain one."""
    from simulators.pooling import pool_mask

    valid, judged = tensor.valid(), tensor.codes >= 0
    # per run and rank, the judged share of its documents there; runs left out of the pool
    # (as many TREC runs were) are judged less, so the depth is read off the best-judged
    # quarter of the runs. Rank by rank, not the share of the top k: below a depth-k pool
    # most documents of a run are still judged (other runs pooled them), and the share of
    # the top k stayed above 99% for a while (114 on a world pooled to depth 100).
    share = judged.sum(axis=1) / np.maximum(valid.sum(axis=1), 1)
    short = np.flatnonzero(np.quantile(share, 0.75, axis=0) < 0.99)
    k = max(int(short[0]) if len(short) else share.shape[1], 1)
    n_judged = float(tensor.grade_counts.sum(axis=1).mean())
    extra = n_judged - pool_mask(tensor, k).sum() / tensor.n_topics
    if extra >= 0.1 * n_judged:
        return {"pool_depth": k, "pool_extra": int(round(extra))}
    return {"pool_depth": min(k, depth), "pool_extra": 0}


#: Share of run pairs holding the same top-``depth`` documents above which the runs are taken to
#: re-rank shared first-stage lists.
SHARED_LISTS = 0.05


def _first_stages_start(distinct: float, depth: int, S: int) -> int:
    C = 1.05 * distinct
    if depth >= C:
        return 1
    k = math.log(1 - distinct / C) / math.log(1 - depth / C)
    return int(np.clip(round(k), 1, S))


def _logit_step(value: float, log_ratio: float, lo: float, hi: float) -> float:
    z = math.log(value / (1 - value)) + log_ratio
    return float(np.clip(1 / (1 + math.exp(-z)), lo, hi))


def _step(p: WorldParams, sim: dict, target: dict, damping: float, G: int, S: int) -> WorldParams:
    """One damped multiplicative step of every fitted parameter towards its statistic."""

    def ratio(key: str, floor: float = 1e-6) -> float:
        return target[key] / max(sim.get(key, 0.0), floor)

    step = {}
    for name, key in (
        ("effect_mean", "mean"),
        ("system_sd", "system_sd"),
        ("topic_sd", "topic_sd"),
        ("interaction_sd", "residual_sd"),
        ("rel_median", "rel"),
    ):
        step[name] = max(getattr(p, name), 1e-3) * ratio(key) ** damping
    step["rel_median"] = float(min(step["rel_median"], p.n_candidates // 4))
    # Overlap between runs, by depth: what the first stages share sets how many distinct
    # documents the whole lists hold, the systems' shared noise how alike their top 10s are.
    deep = math.log(max(sim["distinct_deep"], 1.0) / max(target["distinct_deep"], 1.0))
    step["first_stage_share"] = _logit_step(p.first_stage_share, damping * deep, 0.01, 0.99)
    # Runs as alike at the top as TREC DL's need most of the noise shared; the team's share is
    # kept below half of what the shared noise leaves.
    if p.pool_extra:
        log10 = math.log(max(sim["distinct10"], 1.0) / max(target["distinct10"], 1.0))
    else:
        # A plain pool's depth k is read off the judgments (stage 1), so the judged documents
        # per topic are the distinct documents of the runs' top k: how alike the runs are
        # below their first relevant documents, where their order is mostly the shared noise.
        log10 = math.log(max(sim["judged"], 1.0) / max(target["judged"], 1.0))
    step["doc_share"] = _logit_step(p.doc_share, damping * log10, 0.02, 0.97)
    step["team_share"] = min(p.team_share, 0.5 * (1 - step["doc_share"]))
    # Which relevant documents each system ranks on top: the share of their strength common to
    # every system sets how much the systems agree on them.
    if (
        p.doc_strength_sd
        and np.isfinite(sim["top_agreement"])
        and np.isfinite(target["top_agreement"])
    ):
        agree = math.log(max(target["top_agreement"], 1e-3) / max(sim["top_agreement"], 1e-3))
        step["doc_strength_share"] = _logit_step(
            min(p.doc_strength_share, 0.98), damping * agree, 0.02, 0.98
        )
    # How alike runs of one first stage order their tails: the more of its own noise a system
    # adds to the first stage's order, the less alike (1 - agreement grows with the sd).
    if (
        p.rerank_depth
        and np.isfinite(sim["tail_agreement"])
        and np.isfinite(target["tail_agreement"])
    ):
        apart = (1 - target["tail_agreement"]) / max(1 - sim["tail_agreement"], 1e-3)
        step["tail_noise_sd"] = float(np.clip(max(p.tail_noise_sd, 1e-3) * apart**damping, 0, 10))
    # The judgments: the pool's depth is read off them (stage 1); documents judged beyond a
    # shallow pool (active learning) move towards the rest of the judged documents per topic.
    if p.pool_extra:
        extra = p.pool_extra + damping * (target["judged"] - sim["judged"])
        step["pool_extra"] = int(np.clip(round(extra), 1, p.n_candidates))
    # q(g) of the intermediate grades sets how strongly systems prefer the top grade: move each
    # towards the share of grade g among the relevant documents of the runs' top 10 (q(0) = 0,
    # q(G) = 1 fixed). The grades' proportions then set how many of each reach the judgments.
    q = p.quality().copy()
    for g in range(1, G):
        q[g] = float(np.clip(q[g] * ratio(f"top{g}", 1e-4) ** (0.5 * damping), 0.02, 1.0))
    step["grade_quality"] = tuple(float(v) for v in q)
    if G > 1:  # WorldParams normalises them
        step["grade_probs"] = tuple(
            prob * ratio(f"share{g}", 1e-4) ** damping
            for g, prob in enumerate(p.grade_probs, start=1)
        )
    return dataclasses.replace(p, **step)


def calibration_targets(qrels: Qrels, runs: RunSet) -> dict[str, float]:
    """The statistics :func:`calibrate` matches, for a real collection."""
    tensor = EvalTensor.build(runs, qrels, warn_extra_topics=False)
    depth = int(np.median(np.median(tensor.lengths, axis=1)))
    d = _distinct_from_runs(runs, qrels.topics, (10, depth))
    return _targets(tensor, d[10], d[depth], _runs_as_ranked(runs, qrels.topics))


def world_targets(world: World, *, lists: bool = True) -> dict[str, float]:
    """The same statistics for a world (through its official judgments); ``lists=False``
    leaves out the list agreement below rank 100 (NaN)."""
    depth = world.params.depth
    d = _distinct_from_ranked(world.ranked, world.params.n_candidates, (10, depth))
    return _targets(world.pool_tensor(), d[10], d[depth], world.ranked if lists else None)


def simulated_targets(
    params: WorldParams, n_systems: int, n_topics: int, *, rng=None
) -> dict[str, float]:
    """The same statistics for a world of the model (fast path, no strings)."""
    return _fast_stats(params, n_systems, n_topics, int(as_generator(rng).integers(0, 2**32)))
