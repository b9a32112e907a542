"""``metaeval robustness``, ``metaeval stability`` and ``metaeval correlate`` on TREC files.

Each runs its study criterion as a study of one TREC world (:mod:`metaeval.cli._study`):
``robustness`` the robustness criterion (and significance changes), ``stability`` topic-subset
stability, ``correlate`` the agreement between measures; so their numbers are those of a study
file with the same world, criterion and seed.
"""

from __future__ import annotations

from typing import Annotated

import pandas as pd
import typer

from metaeval._validation import counted, whole_as_int
from metaeval._warnings import warn
from metaeval.cli._common import (
    Format,
    FormatOption,
    MeasuresOption,
    PluginOption,
    QrelsArgument,
    RunNamesOption,
    RunsArgument,
    SeedOption,
    TopicsOption,
    check_alpha,
    fail,
    load_plugins,
    option_error,
    print_frame,
    resolve_seed,
)
from metaeval.cli._study import criterion, trec_study


def _ints(text: str, option: str, example: str = "90,70,50") -> tuple[int | float, ...]:
    try:
        values = tuple(float(v) for v in text.replace(" ", "").split(",") if v)
    except ValueError:
        fail(f"{option} {text!r}: expected numbers separated by commas, e.g. {example}")
    if not values:
        fail(f"{option} {text!r} is empty: give numbers separated by commas, e.g. {example}")
    return tuple(whole_as_int(v) for v in values)


def _statistics(values: list[str]) -> list[str]:
    from metaeval.meta.robustness import CORRELATIONS

    for v in values:
        if v not in CORRELATIONS:
            fail(f"--statistic {v!r}: must be one of {', '.join(CORRELATIONS)}")
    return values


def _enough_runs(tensor, what: str) -> None:
    if tensor.n_runs < 2:
        fail(f"{what} ranks runs: give at least two run files, got {tensor.n_runs}")


def robustness(
    qrels: QrelsArgument,
    runs: RunsArgument,
    measure: MeasuresOption = ["AP", "nDCG@10", "P@10"],
    method: Annotated[
        str,
        typer.Option(
            help="Degrader: stratified, uniform, pool_depth, fewer_teams, assessor_noise, ..."
        ),
    ] = "stratified",
    levels: Annotated[
        str, typer.Option(help="Levels, comma separated (rates in %, depths, ...).")
    ] = "90,70,50,30,10",
    trials: Annotated[int, typer.Option(min=1, help="Random trials per level.")] = 10,
    statistic: Annotated[
        list[str], typer.Option(help="Rank correlation: tau_b, tau_a, tau_ap (repeatable).")
    ] = ["tau_b", "tau_ap"],
    significance: Annotated[
        bool, typer.Option(help="Also discriminative power per level and significance changes.")
    ] = True,
    B: Annotated[int, typer.Option("-B", "--samples", min=1, help="Bootstrap samples.")] = 1000,
    alpha: Annotated[float, typer.Option(help="Significance level, in (0, 1).")] = 0.05,
    summary: Annotated[
        bool, typer.Option(help="Mean and 2.5/97.5 percentiles over trials instead of every trial.")
    ] = True,
    seed: SeedOption = None,
    topics: TopicsOption = None,
    run_names: RunNamesOption = None,
    fmt: FormatOption = Format.table,
    plugin: PluginOption = None,
) -> None:
    """Rank correlation of each measure's ranking under damaged judgments with its ranking
    under the full judgments, mean drift, and significance changes."""
    from metaeval.cli._study import degrader
    from metaeval.meta.robustness import RobustnessResult
    from simulators import registered_degraders
    from simulators.degraders import level_field

    load_plugins(plugin)
    if method not in registered_degraders():
        fail(f"--method must be one of {', '.join(registered_degraders())}, got {method!r}")
    check_alpha(alpha)
    _statistics(statistic)
    if level_field(method) == "teams":  # leave_one_group_out: its levels are team names
        level_values = tuple(v.strip() for v in levels.split(",") if v.strip())
        if not level_values:
            fail(f"--levels {levels!r} is empty: give team names separated by commas")
    else:
        level_values = _ints(levels, "--levels")
    try:
        damage = degrader(method, level_values, trials)
    except (ValueError, TypeError) as err:
        option_error("--levels", levels, err)
    seed = resolve_seed(seed)
    with trec_study(
        "robustness",
        qrels,
        runs,
        measure,
        seed=seed,
        topics=topics,
        run_names=run_names,
        plugins=plugin,
        degraders=[damage],
    ) as study:
        _enough_runs(study.tensor, "robustness")
        try:
            # What the levels ask of the runs (a team no run belongs to, more teams than the
            # runs have) is known once they are read: checked here, so the error names the
            # option rather than failing in a task. One trial is a few milliseconds.
            damage.make().trial(study.tensor, rng=seed)
        except (ValueError, TypeError) as err:
            option_error("--levels", levels, err)
        study.full_scores()
        wanted = [criterion("robustness", statistics=statistic)]
        if significance:
            wanted.append(criterion("significance_changes", B=B, alpha=alpha))
        results = study.run(*wanted)["results"]
    result = RobustnessResult(frame=_robustness_frame(results, damage, study.labels, statistic))
    print_frame(result.summary() if summary else result.to_frame(), fmt)


#: The order of the robustness rows of one measure, after its rank correlations.
_ROBUSTNESS_ROWS = ("mean_drift", "power", "n_significant", "false_alarms", "reversals", "misses")


def _robustness_frame(results: pd.DataFrame, damage, labels, statistics) -> pd.DataFrame:
    """The study's robustness and significance-change rows as the command prints them:
    ``method, level, trial, measure, against, statistic, value``, trial by trial, level by
    level, measure by measure.

    ``level`` is the level as given (a number or a team name, not the study's text), and
    ``power`` (discriminative power under the damaged judgments) is against nothing."""
    from metaeval.study.spec import FULL

    rows = results[results["level"] != FULL]
    positions = {
        "level": {str(lv): i for i, lv in enumerate(damage.levels)},
        "measure": {m: i for i, m in enumerate(labels)},
        "statistic": {s: i for i, s in enumerate([*dict.fromkeys(statistics), *_ROBUSTNESS_ROWS])},
    }
    order = pd.DataFrame(
        {
            "trial": rows["trial"].to_numpy(),
            **{key: rows[key].map(at).to_numpy() for key, at in positions.items()},
        }
    ).sort_values(["trial", "level", "measure", "statistic"], kind="stable")
    rows = rows.iloc[order.index]
    level_of = {str(lv): lv for lv in damage.levels}
    return pd.DataFrame(
        {
            "method": damage.method,
            "level": [level_of[lv] for lv in rows["level"]],
            "trial": rows["trial"].astype(int).to_numpy(),
            "measure": rows["measure"].astype(str).to_numpy(),
            "against": rows["other"].where(rows["statistic"] != "power", "").astype(str).to_numpy(),
            "statistic": rows["statistic"].astype(str).to_numpy(),
            "value": rows["value"].astype(float).to_numpy(),
        }
    )


def stability(
    qrels: QrelsArgument,
    runs: RunsArgument,
    measure: MeasuresOption = ["AP", "nDCG@10", "P@10"],
    sizes: Annotated[
        str | None,
        typer.Option(
            help="Topic-set sizes, comma separated (default 5, 10, ... up to half the topics)."
        ),
    ] = None,
    repeats: Annotated[int, typer.Option(min=1, help="Subsets drawn per size.")] = 50,
    split_half: Annotated[bool, typer.Option(help="Also tau between disjoint halves.")] = True,
    summary: Annotated[bool, typer.Option(help="Mean and percentiles over repeats.")] = True,
    seed: SeedOption = None,
    topics: TopicsOption = None,
    run_names: RunNamesOption = None,
    fmt: FormatOption = Format.table,
    plugin: PluginOption = None,
) -> None:
    """Topic-subset stability: tau_b between the ranking on random topic subsets and on all
    topics (and between disjoint halves), by topic-set size."""
    from metaeval.meta.stability import StabilityResult, default_sizes

    load_plugins(plugin)
    sizes_values = None if sizes is None else _ints(sizes, "--sizes", "5,10,20")
    if sizes_values is not None and len(set(sizes_values)) < len(sizes_values):
        fail(f"--sizes {sizes!r}: a size is given twice; give each size once")
    seed = resolve_seed(seed)
    with trec_study(
        "stability",
        qrels,
        runs,
        measure,
        seed=seed,
        topics=topics,
        run_names=run_names,
        plugins=plugin,
    ) as study:
        tensor = study.tensor
        _enough_runs(tensor, "stability")
        if tensor.n_topics < 2:
            fail(f"stability draws topic subsets: the qrels have {tensor.n_topics} topic, need 2+")
        for n in sizes_values or ():
            # checked here, against the topics read, so the error names the option
            if not (isinstance(n, int) and 1 <= n <= tensor.n_topics):
                fail(f"--sizes {sizes}: each size must be a whole number in 1..{tensor.n_topics}")
        study.full_scores()
        wanted = criterion("stability", sizes=sizes_values, repeats=repeats, split_half=split_half)
        detail = study.run(wanted, tables=("stability",))["stability"]
    # the rows in the order the command always printed them: measure, size, statistic, repeat
    positions = {
        "measure": {m: i for i, m in enumerate(study.labels)},
        "size": {n: i for i, n in enumerate(sizes_values or default_sizes(tensor.n_topics))},
        "statistic": {"tau_subset": 0, "tau_split": 1},
    }
    order = pd.DataFrame(
        {
            **{key: detail[key].map(at).to_numpy() for key, at in positions.items()},
            "repeat": detail["repeat"].to_numpy(),
        }
    ).sort_values(["measure", "size", "statistic", "repeat"], kind="stable")
    frame = detail.iloc[order.index][["measure", "size", "repeat", "statistic", "value"]]
    result = StabilityResult(frame=frame.reset_index(drop=True), n_topics=tensor.n_topics)
    print_frame(result.summary() if summary else result.to_frame(), fmt)


def correlate(
    qrels: QrelsArgument,
    runs: RunsArgument,
    measure: MeasuresOption = ["AP", "nDCG@10", "P@10"],
    statistic: Annotated[list[str], typer.Option(help="tau_b, tau_a, tau_ap (repeatable).")] = [
        "tau_b",
        "tau_ap",
    ],
    max_relevant: Annotated[
        int | None,
        typer.Option(
            min=0, help="Only topics with at most this many documents of grade >= --grade."
        ),
    ] = None,
    grade: Annotated[int, typer.Option(min=0, help="Grade counted by --max-relevant.")] = 1,
    topics: TopicsOption = None,
    run_names: RunNamesOption = None,
    fmt: FormatOption = Format.table,
    plugin: PluginOption = None,
) -> None:
    """Rank correlation between the system rankings of every pair of measures."""
    from metaeval.data.qrels import format_grade
    from metaeval.meta.stability import AgreementResult

    load_plugins(plugin)
    _statistics(statistic)
    with trec_study(
        "correlate", qrels, runs, measure, topics=topics, run_names=run_names, plugins=plugin
    ) as study:
        if len(study.labels) < 2:
            fail(
                f"give at least two different measures (-m) to correlate, got "
                f"{', '.join(study.labels)}"
            )
        tensor = study.tensor
        _enough_runs(tensor, "correlate")
        n_topics, topic_filter = tensor.n_topics, None
        if max_relevant is not None:
            top = float(tensor.levels[-1])
            if grade > max(top, 1):
                warn(
                    f"--grade {grade} is above the highest grade in the qrels "
                    f"({format_grade(top)}): no document counts, so --max-relevant "
                    f"{max_relevant} keeps every topic"
                )
            # documents of grade >= --grade, by grade value (real-valued grades too)
            n_topics = int((tensor.n_relevant(grade) <= max_relevant).sum())
            if n_topics < 2:
                fail(
                    f"--max-relevant {max_relevant} keeps {counted(n_topics, 'topic')} (with at "
                    f"most {max_relevant} documents of grade >= {grade}); correlate needs 2 or "
                    "more"
                )
            # the study's topic filter keeps the same topics: at most N documents of grade >= g
            topic_filter = {"grade": grade, "at_most": max_relevant}
        study.full_scores()
        wanted = criterion("agreement", topic_filter=topic_filter, statistics=statistic)
        results = study.run(wanted)["results"]
    # every pair in the order of the measures, both ways, as measure_agreement gives them
    value = {(r.measure, r.other, r.statistic): r.value for r in results.itertuples(index=False)}
    labels = study.labels
    rows = [
        (x, y, stat, float(value[x, y, stat]))
        for i, a in enumerate(labels)
        for b in labels[i + 1 :]
        for stat in dict.fromkeys(statistic)
        for x, y in ((a, b), (b, a))
    ]
    result = AgreementResult(
        frame=pd.DataFrame(rows, columns=["measure", "other", "statistic", "value"]),
        n_topics=n_topics,
    )
    if fmt is Format.table:
        for stat in statistic:
            typer.echo(f"{stat} ({result.n_topics} topics; rows: the reference ranking)")
            typer.echo(result.matrix(stat).to_string(float_format=lambda v: f"{v:.3f}"))
    else:
        print_frame(result.to_frame(), fmt)
