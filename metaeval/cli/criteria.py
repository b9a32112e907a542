"""``metaeval robustness``, ``metaeval stability`` and ``metaeval correlate`` on TREC files."""

from __future__ import annotations

from typing import Annotated

import typer

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
    load_collection,
    load_plugins,
    option_error,
    print_frame,
    resolve_seed,
)


def _ints(text: str, option: str, example: str = "90,70,50") -> tuple[int | float, ...]:
    try:
        values = tuple(float(v) for v in text.replace(" ", "").split(",") if v)
    except ValueError:
        fail(f"{option} {text!r}: expected numbers separated by commas, e.g. {example}")
    if not values:
        fail(f"{option} {text!r} is empty: give numbers separated by commas, e.g. {example}")
    return tuple(int(v) if v.is_integer() else v for v in values)


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
    B: Annotated[int, typer.Option("-B", min=1, help="Bootstrap samples.")] = 1000,
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
    from metaeval.meta.robustness import robustness as run
    from simulators import make_degrader, registered_degraders
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
        degrader = make_degrader(method, **{level_field(method): level_values})
    except (ValueError, TypeError) as err:
        option_error("--levels", levels, err)
    seed = resolve_seed(seed)
    tensor, measures = load_collection(qrels, runs, measure, topics=topics, run_names=run_names)
    _enough_runs(tensor, "robustness")
    try:
        sets = degrader.generate(tensor, trials=trials if degrader.random else 1, rng=seed)
    except (ValueError, TypeError) as err:
        option_error("--levels", levels, err)
    result = run(
        tensor,
        measures,
        sets,
        statistics=statistic,
        significance=significance,
        B=B,
        alpha=alpha,
        rng=seed,
    )
    frame = result.summary() if summary else result.to_frame()
    print_frame(frame, fmt)


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
    from metaeval.meta.stability import topic_subset_stability

    load_plugins(plugin)
    sizes_values = None if sizes is None else _ints(sizes, "--sizes", "5,10,20")
    if sizes_values is not None and len(set(sizes_values)) < len(sizes_values):
        fail(f"--sizes {sizes!r}: a size is given twice; give each size once")
    seed = resolve_seed(seed)
    tensor, measures = load_collection(qrels, runs, measure, topics=topics, run_names=run_names)
    _enough_runs(tensor, "stability")
    if tensor.n_topics < 2:
        fail(f"stability draws topic subsets: the qrels have {tensor.n_topics} topic, need 2+")
    for n in sizes_values or ():
        # checked here, against the topics read, so the error names the option
        if not (isinstance(n, int) and 1 <= n <= tensor.n_topics):
            fail(f"--sizes {sizes}: each size must be a whole number in 1..{tensor.n_topics}")
    scores = {str(m): m.compute(tensor) for m in measures}
    result = topic_subset_stability(scores, sizes_values, repeats, split_half=split_half, rng=seed)
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
    from metaeval.meta.stability import measure_agreement

    load_plugins(plugin)
    _statistics(statistic)
    tensor, measures = load_collection(qrels, runs, measure, topics=topics, run_names=run_names)
    if len(measures) < 2:
        fail(
            f"give at least two different measures (-m) to correlate, got "
            f"{', '.join(map(str, measures))}"
        )
    _enough_runs(tensor, "correlate")
    keep = None
    if max_relevant is not None:
        top = tensor.grade_counts.shape[1] - 1
        if grade > max(top, 1):
            warn(
                f"--grade {grade} is above the highest grade in the qrels ({top}): no document "
                f"counts, so --max-relevant {max_relevant} keeps every topic"
            )
        keep = tensor.grade_counts[:, grade:].sum(axis=1) <= max_relevant
        if keep.sum() < 2:
            fail(
                f"--max-relevant {max_relevant} keeps {int(keep.sum())} topic(s) (with at most "
                f"{max_relevant} documents of grade >= {grade}); correlate needs 2 or more"
            )
    result = measure_agreement(
        {str(m): m.compute(tensor) for m in measures}, statistics=statistic, topics=keep
    )
    if fmt is Format.table:
        for stat in statistic:
            typer.echo(f"{stat} ({result.n_topics} topics; rows: the reference ranking)")
            typer.echo(result.matrix(stat).to_string(float_format=lambda v: f"{v:.3f}"))
    else:
        print_frame(result.to_frame(), fmt)
