"""The ``metaeval`` typer app: every command, registered explicitly."""

from __future__ import annotations

import typer

from metaeval.cli import (
    criteria,
    discriminate,
    evaluate,
    informativeness,
    report,
    simulate,
    stats,
    study,
)

app = typer.Typer(
    name="metaeval",
    help="A laboratory for IR evaluation measures: exact measures, judgment simulators, "
    "meta-evaluation and studies.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.command("evaluate")(evaluate.evaluate)
app.command("measures")(evaluate.measures)
app.command("quickstart")(report.quickstart)
app.command("discriminate")(discriminate.discriminate)
app.command("compare")(discriminate.compare)
app.command("informativeness")(informativeness.informativeness)
app.command("robustness")(criteria.robustness)
app.command("stability")(criteria.stability)
app.command("correlate")(criteria.correlate)
app.command("anova")(stats.anova)
app.command("topics-needed")(stats.topics_needed)
app.command("reliability")(stats.reliability)
app.command("simulate")(simulate.simulate)
app.command("calibrate")(simulate.calibrate)
app.command("degrade")(simulate.degrade)
app.add_typer(study.app, name="study")
app.command("report")(report.report)
app.command("audit")(report.audit)
app.command("card")(report.card)

__all__ = ["app"]
