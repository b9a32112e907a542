"""Evaluation: runs + qrels + measures -> a tidy table of scores (``metaeval.evaluate``)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from metaeval._validation import check_int, counted, shown_ids
from metaeval._warnings import warn
from metaeval.aggregate import Aggregate, parse_aggregate
from metaeval.data import Qrels, Run, RunSet, parse_ids, read_qrels, read_run, read_runs
from metaeval.data.run import check_ties
from metaeval.engine import EvalTensor
from metaeval.engine.tensor import TOPIC_POLICIES
from metaeval.measures import Measure, MeasureDict, parse_measure
from metaeval.measures.base import expand_measure_names, geometric_of

RunsLike = (
    RunSet
    | Run
    | Sequence[Run]
    | str
    | os.PathLike
    | Sequence[str | os.PathLike]
    | pd.DataFrame
    | Mapping
)
QrelsLike = Qrels | str | os.PathLike | pd.DataFrame | Mapping


def as_qrels(qrels: QrelsLike) -> Qrels:
    """Qrels from a Qrels, a file path, a DataFrame or a ``{topic: {doc: grade}}`` dict."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        return read_qrels(qrels)
    if isinstance(qrels, pd.DataFrame):
        return Qrels.from_df(qrels)
    if isinstance(qrels, Mapping):
        return Qrels.from_dict(qrels)
    raise TypeError(
        f"qrels must be a Qrels, a path, a DataFrame or a dict, got {type(qrels).__name__}"
    )


def as_runset(runs: RunsLike, *, ties: str = "trec_eval") -> RunSet:
    """A RunSet from a RunSet, Run(s), file path(s), a DataFrame with a ``run`` column, or a
    ``{run: {topic: {doc: score}}}`` dict."""
    if isinstance(runs, RunSet):
        return runs
    if isinstance(runs, Run):
        return RunSet([runs])
    if isinstance(runs, (str, os.PathLike)):
        return RunSet([read_run(runs, ties=ties)])
    if isinstance(runs, pd.DataFrame):
        return RunSet.from_df(runs, ties=ties)
    if isinstance(runs, Mapping):
        return RunSet.from_dict(runs, ties=ties)
    if isinstance(runs, Iterable):
        items = list(runs)
        if items and all(isinstance(r, Run) for r in items):
            return RunSet(items)
        if items and all(isinstance(r, (str, os.PathLike)) for r in items):
            return read_runs(items, ties=ties)
    raise TypeError(
        f"runs must be a RunSet, Run(s), path(s), a DataFrame or a dict, got {type(runs).__name__}"
    )


def check_distinct_inputs(qrels, runs) -> None:
    """A pipe given both as the qrels and as a run (``/dev/stdin`` twice) is an error: the
    second read would find nothing left. (A plain file given twice is read twice, and the
    reader of the wrong kind says what the file looks like.)"""
    if not isinstance(qrels, (str, os.PathLike)):
        return
    paths = [runs] if isinstance(runs, (str, os.PathLike)) else runs
    if not isinstance(paths, (list, tuple)):
        return
    try:
        q = os.stat(qrels)
    except OSError:
        return
    if stat.S_ISREG(q.st_mode):
        return
    for p in paths:
        try:
            st = os.stat(p) if isinstance(p, (str, os.PathLike)) else None
        except OSError:
            continue
        if st is not None and (st.st_dev, st.st_ino) == (q.st_dev, q.st_ino):
            also = "" if str(p) == str(qrels) else f" (as {p})"
            raise ValueError(
                f"{qrels} is given both as the qrels and as a run file{also}: give each once"
            )


def as_list_of_measures(measures) -> list:
    """``measures`` as a list (one name or Measure is a list of one); TypeError otherwise."""
    if isinstance(measures, (str, Measure)):
        return [measures]
    if isinstance(measures, (bytes, Mapping)) or not isinstance(measures, Iterable):
        raise TypeError(
            "measures must be a measure name, a Measure or a list of them, got "
            f"{type(measures).__name__}"
        )
    return list(measures)


def as_measures(measures: str | Measure | Iterable[str | Measure]) -> list[Measure]:
    """Parse one or several measure names (``P.5,10``: one per cutoff, as trec_eval's ``-m``);
    duplicates are kept once."""
    out: list[Measure] = []
    for m in expand_measure_names(as_list_of_measures(measures)):
        parsed = parse_measure(m)
        if parsed not in out:
            out.append(parsed)
    if not out:
        raise ValueError("measures is empty: give at least one measure, e.g. ['AP', 'nDCG@10']")
    return out


def score_matrices(
    tensor: EvalTensor, measures: Iterable[str | Measure], *, missing: str = "zero"
) -> MeasureDict:
    """Per-topic scores of every measure as (S runs x T topics) arrays, keyed by measure name.

    The fast path for studies: no table is built. ``missing="skip"`` puts NaN where a run did
    not answer a topic (so aggregates leave it out); ``"zero"`` scores it 0 (trec_eval ``-c``).
    The result is a :class:`~metaeval.measures.MeasureDict`: any spelling of a measure's name
    finds its scores.
    """
    if missing not in TOPIC_POLICIES:
        raise ValueError(f"missing must be one of {TOPIC_POLICIES}, got {missing!r}")
    out = MeasureDict()
    for m in as_measures(measures):
        values = m.compute(tensor)
        if missing == "skip":
            values = np.where(tensor.answered, values, np.nan)
        out[str(m)] = values
    return out


def select(
    runs: RunSet, qrels: Qrels, *, topics=None, run_names=None, missing: str = "zero"
) -> tuple[RunSet, Qrels, list[str]]:
    """Apply a topic and a run selection (anything :func:`~metaeval.data.parse_ids` reads).

    Returns the runs, the qrels and the topics excluded on purpose (so that no warning names
    them).

    Runs and qrels that share no topic are an error (every score would be 0, or missing): the
    usual cause is topic ids written differently (``01`` and ``1`` are different ids, as in
    trec_eval). A run that shares none while others do is warned about, as it scores 0 on
    every topic (``missing="zero"``) or has no score (``"skip"``).
    """
    excluded: list[str] = []
    if topics is not None:
        chosen = parse_ids(topics, available=list(qrels.topics), what="topic")
        excluded = sorted(set(map(str, qrels.topics)) - set(chosen))
        qrels = qrels.subset(chosen)
    if run_names is not None:
        runs = runs.subset(parse_ids(run_names, available=runs.names, what="run"))
    _check_overlap(runs, qrels, excluded, missing)
    return runs, qrels, excluded


def _number_like(topic: str) -> str:
    """'01', '1.0' and '1' as one key ('1'); '' for ids that are not numbers."""
    head, dot, tail = topic.partition(".")
    if head.isdigit() and (not dot or tail.strip("0") == ""):
        return head.lstrip("0") or "0"
    return ""


def _check_overlap(runs: RunSet, qrels: Qrels, excluded, missing: str) -> None:
    judged = set(map(str, qrels.topics))
    silent = [r for r in runs if judged.isdisjoint(map(str, r.topics))]
    if not silent:
        return
    answered = sorted({str(t) for r in silent for t in r.topics} - set(excluded))
    hint = ""
    canon = {_number_like(t): t for t in judged if _number_like(t)}
    close = [(t, canon.get(_number_like(t))) for t in answered if _number_like(t)]
    close = [(a, b) for a, b in close if b is not None and a != b]
    if close:
        hint = (
            f"; topic ids are compared as text, and {close[0][0]!r} in the runs is not "
            f"{close[0][1]!r} in the qrels"
        )
    if len(silent) == len(runs):
        run = runs[0]
        source = f" ({run.source})" if getattr(run, "source", None) else ""
        who = f"run {run.name!r}{source} answers no" if len(runs) == 1 else "no run answers a"
        if not answered:  # everything it answered was left out by the topic selection
            raise ValueError(
                f"{who} topic of the selection: it answers only topics left out of it; the "
                f"selected topics are {shown_ids(sorted(judged))}"
            )
        raise ValueError(
            f"{who} topic of the qrels{' (after the topic selection)' if excluded else ''}: "
            f"the run topics are {shown_ids(answered)}, the qrels topics "
            f"{shown_ids(sorted(judged))}{hint}"
        )
    one = len(silent) == 1
    if missing == "skip":
        outcome = "has no score" if one else "have no score"
    else:
        outcome = "scores 0 on every topic" if one else "score 0 on every topic"
    named = (f"{r.name} ({r.source})" if getattr(r, "source", None) else r.name for r in silent)
    warn(
        f"{counted(len(silent), 'run')} answered no topic of the qrels and {outcome}: "
        f"{shown_ids(named)}{hint}"
    )


def evaluate(
    runs: RunsLike,
    qrels: QrelsLike,
    measures,
    *,
    per_topic: bool = True,
    agg: str | Aggregate = "mean",
    missing: str = "zero",
    ties: str = "trec_eval",
    depth: int | None = None,
    topics=None,
    run_names=None,
) -> pd.DataFrame:
    """Evaluate runs against relevance judgments.

    Parameters
    ----------
    runs : RunSet, Run, list of Run, path(s), DataFrame or dict
    qrels : Qrels, path, DataFrame or dict
    measures : str, Measure or list of them, e.g. ``["AP", "nDCG@10", "P(rel=2)@10"]``
        trec_eval's names and sets are understood (``map``, ``P.5,10``, ``P``,
        ``all_trec``; see :func:`~metaeval.measures.base.expand_measure_names`).
        ``gm_map`` and ``gm_bpref`` are the geometric mean of AP and bpref over the topics
        (scores floored at 1e-5, as trec_eval): aggregated rows only, whatever ``agg``
        (with ``per_topic=True`` they are left out, with a warning).
    per_topic : bool
        True: one row per run, topic and measure. False: one row per run and measure,
        aggregated over topics with ``agg``.
    agg : str or Aggregate
        ``mean`` (default), ``gmean`` (trec_eval gm_map), ``gmean(mode=shift)``, ``logit``,
        ``median``; see :mod:`metaeval.aggregate`.
    missing : {"zero", "skip"}
        Topics are those of the qrels. A topic a run did not answer is scored as an empty
        list (``"zero"``, as trec_eval ``-c``: 0 for most measures, but YAAP's is
        ln(1/(1 + R)) and the C/W/L measures' costs and depths those of a list of no gain)
        or is left out (``"skip"``: no per-topic row, not averaged). Topics a run answered
        that have no judgments cannot be evaluated and are left out with a warning, as
        trec_eval leaves them out.
    ties : {"trec_eval", "input", "expected"}
        How equal scores are ordered when runs are read here (see :class:`~metaeval.data.Run`):
        by document id descending as trec_eval orders them, in the order given, or every order
        at once: ``expected`` gives each measure's expected value over the orderings of each
        group of tied documents (McSherry & Najork, ECIR 2008), so that runs differing only in
        their document ids score the same. ``expected`` applies to runs given as objects too.
        INST, IFT, NERR and CWL_AP follow the tied items' gains state by state (the EU of
        the first three to 1e-10), BPM and BPM_dynamic where their sums are exact
        (else they score every distinct opening of the ranks their users may read); a measure
        without either (plugins) scores every ordering of a list's tied documents
        (docs/methods.md §6.6), and is refused where a list has more than 10,000 of them.
    depth : int, optional
        Evaluate only the first ``depth`` documents of each list (trec_eval ``-M``).
    topics : str, path or list, optional
        Only these topics of the qrels: ``"601-650"``, ``"601-610,612"``, a list of ids or a
        file of ids (see :func:`~metaeval.data.parse_ids`). Topics left out on purpose are
        not warned about.
    run_names : str, path or list, optional
        Only these runs (by name), in this order.

    Returns
    -------
    DataFrame
        Columns ``run, topic, measure, value`` (per topic) or ``run, measure, value``.
    """
    measures, geometric, order = _with_geometric(measures)
    aggregate = parse_aggregate(agg)
    check_distinct_inputs(qrels, runs)
    if missing not in TOPIC_POLICIES:
        raise ValueError(f"missing must be one of {TOPIC_POLICIES}, got {missing!r}")
    if depth is not None:
        # Longer than any list: no cut (and no integer overflow in the engine).
        depth = min(check_int("depth", depth, min=1), 2**31 - 1)
    check_ties(ties)
    runset = as_runset(runs, ties=ties)
    if ties == "expected":
        runset = RunSet(run.with_ties(ties) for run in runset)
    runset, judged, excluded = select(
        runset,
        as_qrels(qrels),
        topics=topics,
        run_names=run_names,
        missing=missing,
    )
    tensor = EvalTensor.build(runset, judged, depth=depth, excluded_topics=excluded)
    scores = score_matrices(tensor, [*measures, *geometric.values()], missing=missing)
    frame = scores_frame(
        {str(m): scores[str(m)] for m in measures},
        tensor.runs,
        tensor.topics,
        per_topic=per_topic,
        agg=aggregate,
    )
    if geometric and per_topic:
        warn(
            f"{', '.join(geometric)}: a mean over the topics, with no per-topic value: left out "
            "of the per-topic rows (per_topic=False gives it)"
        )
    if not geometric or per_topic:
        return frame
    means = scores_frame(
        {label: scores[str(m)] for label, m in geometric.items()},
        tensor.runs,
        tensor.topics,
        per_topic=False,
        agg="gmean",
    )
    frame = pd.concat([frame, means], ignore_index=True)
    frame["position"] = frame["measure"].map(order.index)
    frame = frame.sort_values(["run", "position"], kind="stable")
    return frame.drop(columns="position").reset_index(drop=True)


def _with_geometric(measures) -> tuple[list[Measure], dict[str, Measure], list[str]]:
    """The measures asked, apart from trec_eval's ``gm_map`` and ``gm_bpref`` (the geometric
    mean over topics of AP and bpref, scores floored at 1e-5: an ``all`` line only), which
    map their label to the measure they aggregate; and every label in the order asked."""
    names = expand_measure_names(as_list_of_measures(measures))
    geometric = {n: parse_measure(geometric_of(n)) for n in names if geometric_of(n)}
    plain = [n for n in names if n not in geometric]
    measures = as_measures(plain) if plain or not geometric else []
    order = [n if n in geometric else str(parse_measure(n)) for n in names]
    return measures, geometric, order


def scores_frame(
    scores: Mapping[str, np.ndarray],
    runs: Sequence[str],
    topics: Sequence[str],
    *,
    per_topic: bool = True,
    agg: str | Aggregate = "mean",
) -> pd.DataFrame:
    """Tidy table from (S x T) score arrays: per topic, or aggregated with ``agg``."""
    names = list(scores)
    S, T, M = len(runs), len(topics), len(names)
    if not names:
        columns = ["run", "topic", "measure", "value"] if per_topic else ["run", "measure", "value"]
        return pd.DataFrame(columns=columns)
    if per_topic:
        values = np.stack([scores[n] for n in names], axis=2).ravel()  # S, T, M
        frame = pd.DataFrame(
            {
                "run": _labels(runs, np.repeat(np.arange(S), T * M)),
                "topic": _labels(topics, np.tile(np.repeat(np.arange(T), M), S)),
                "measure": _labels(names, np.tile(np.arange(M), S * T)),
                "value": values,
            }
        )
        if np.isnan(values).any():  # missing="skip": no row where a run did not answer
            frame = frame.dropna(subset=["value"]).reset_index(drop=True)
        return frame
    aggregate = parse_aggregate(agg)
    values = np.stack([aggregate(scores[n], axis=1) for n in names], axis=1)  # S, M
    return pd.DataFrame(
        {
            "run": _labels(runs, np.repeat(np.arange(S), M)),
            "measure": _labels(names, np.tile(np.arange(M), S)),
            "value": values.ravel(),
        }
    )


def _labels(labels: Sequence, positions: np.ndarray):
    """``labels[positions]`` as a column, its dtype inferred by pandas from the distinct labels
    once rather than from every row (the inference is most of a tidy frame's cost)."""
    return pd.Series(np.asarray(labels, dtype=object)).array.take(positions)


__all__ = [
    "evaluate",
    "score_matrices",
    "scores_frame",
    "as_qrels",
    "as_runset",
    "as_measures",
    "check_distinct_inputs",
    "select",
]
