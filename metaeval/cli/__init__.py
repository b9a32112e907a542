"""The ``metaeval`` command line (typer). Each command calls one library function.

Command functions live in the modules of this package, one module per area; this file builds
the app and registers them.
"""

from __future__ import annotations

import typer

from metaeval.cli import evaluate as _evaluate

app = typer.Typer(
    name="metaeval",
    help="A laboratory for IR evaluation measures: exact measures, judgment simulators and "
         "meta-evaluation.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.command("evaluate")(_evaluate.evaluate)
app.command("measures")(_evaluate.measures)
app.command("quickstart")(_evaluate.quickstart)


def _register_optional() -> None:
    """Commands of areas that may not be installed yet register themselves if present."""
    import importlib

    for module, commands in (("metaeval.cli.discriminate", ("discriminate", "compare")),
                             ("metaeval.cli.simulate", ("simulate", "degrade")),
                             ("metaeval.cli.informativeness", ("informativeness",))):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as err:
            if err.name != module:
                raise
            continue
        for name in commands:
            if hasattr(mod, name):
                app.command(name)(getattr(mod, name))


_register_optional()


def main() -> None:
    app()


__all__ = ["app", "main"]
