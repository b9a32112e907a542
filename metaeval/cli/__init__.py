"""The ``metaeval`` command line (typer). Each command calls one library function.

The commands live in the modules of this package, one module per area, and are registered in
:mod:`metaeval.cli.commands`. :func:`main` is the console script: it turns every error into one
line on stderr and an exit status (2: bad input, 130: interrupted, 1: anything else), prints
warnings as ``warning: ...`` lines, and refuses an option given twice that takes one value.
Nothing heavy is imported before the guard is in place, so even Ctrl-C while the libraries
load ends in one line.
"""

from __future__ import annotations

import os
import sys


def __getattr__(name: str):
    if name == "app":
        from metaeval.cli.commands import app

        return app
    raise AttributeError(name)


_shown_warnings: set[str] = set()


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as one ``warning: ...`` line, each text once per command (a check repeated
    for every measure warns once)."""
    text = str(message)
    if text in _shown_warnings:
        return
    _shown_warnings.add(text)
    print(f"warning: {text}", file=sys.stderr)


def _repeated_option(command, argv: list[str]) -> str | None:
    """The first option that takes one value but is given more than once, if any.

    Works on the command objects by their attributes (typer ships its own copy of click).
    """
    tokens = list(argv)
    while hasattr(command, "commands"):
        names = [t for t in tokens if not t.startswith("-")]
        sub = command.commands.get(names[0]) if names else None
        if sub is None:
            return None
        tokens = tokens[tokens.index(names[0]) + 1 :]
        command = sub
    if "--" in tokens:
        tokens = tokens[: tokens.index("--")]
    for param in command.params:
        if getattr(param, "param_type_name", "") != "option" or param.multiple:
            continue
        opts = [*param.opts, *param.secondary_opts]
        long = [o for o in opts if o.startswith("--")]
        short = [o for o in opts if len(o) == 2 and o[0] == "-" and o[1] != "-"]
        seen = [
            t
            for t in tokens
            if t in opts
            or any(t.startswith(o + "=") for o in long)
            or any(t.startswith(o) and len(t) > 2 for o in short)  # -j2, -B500
        ]
        if len(seen) > 1:
            return max(param.opts, key=len)
    return None


def _usage_hint(err, argv: list[str]) -> str:
    """A hint for extra arguments after a repeatable option given once for several values
    (``--runs a.run b.run`` instead of ``--runs a.run --runs b.run``)."""
    if "unexpected extra argument" not in str(err.format_message()):
        return ""
    ctx = getattr(err, "ctx", None)
    command = getattr(ctx, "command", None)
    for param in getattr(command, "params", []):
        if getattr(param, "param_type_name", "") == "option" and param.multiple:
            opts = [o for o in param.opts if o in argv]
            if opts:
                name = max(param.opts, key=len)
                return f"; give {name} once per value: {name} X {name} Y"
    return ""


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real stdout (a test's capture)
        pass


def _interrupted(message: str = "interrupted") -> int:
    """Say that the command was stopped (by Ctrl-C or SIGTERM); the exit status 130."""
    print(message, file=sys.stderr)
    return 130


def run(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    import warnings

    argv = sys.argv[1:] if argv is None else list(argv)
    debug = bool(os.environ.get("METAEVAL_DEBUG"))
    try:
        import typer.main

        from metaeval.cli.commands import app

        command = typer.main.get_command(app)
        repeated = _repeated_option(command, argv)
        if repeated:
            print(f"error: {repeated} is given twice; it takes one value", file=sys.stderr)
            return 2
        _shown_warnings.clear()
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            try:
                result = command.main(args=argv, prog_name="metaeval", standalone_mode=False)
            except SystemExit:
                # click's answer to a reader that went away (| head): exit 1 and wrap stdout
                if type(sys.stdout).__name__ == "PacifyFlushWrapper":
                    raise BrokenPipeError from None
                raise
        if result == 130:  # typer turns Ctrl-C inside a command into exit status 130
            return _interrupted()
        return result if isinstance(result, int) else 0
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:  # the reader went away (| head): stop quietly, as cat does
        _quiet_stdout()
        return 141
    except Exception as err:
        if type(err).__name__ == "Interrupted":  # a command that saved its work first
            return _interrupted(str(err))
        # typer ships its own copy of click: recognise its exceptions by what they do
        if type(err).__name__ == "Abort":
            return _interrupted()
        if type(err).__name__ == "NoArgsIsHelpError":  # the help is shown; say what is missing
            ctx = getattr(err, "ctx", None)
            names = sorted(getattr(getattr(ctx, "command", None), "commands", {}) or [])
            where = " ".join(ctx.command_path.split()[1:]) if ctx is not None else ""
            print(
                f"error: give a command{' after ' + where if where else ''}: {', '.join(names)}",
                file=sys.stderr,
            )
            return 2
        if hasattr(err, "format_message") and hasattr(err, "exit_code"):  # a usage error
            from metaeval.cli._common import one_line

            text = err.format_message() + _usage_hint(err, argv)
            print(f"error: {one_line(text)}", file=sys.stderr)
            return err.exit_code
        if debug:
            raise
        from metaeval.cli._common import describe, one_line

        if isinstance(err, MemoryError):
            print(
                f"error: out of memory ({one_line(err) or 'MemoryError'}): the input is too "
                "large for this machine; use fewer topics, runs or systems",
                file=sys.stderr,
            )
            return 1
        if isinstance(err, (ValueError, TypeError, OSError, ImportError)):
            text = (
                f"{err.filename}: {err.strerror}"
                if isinstance(err, OSError) and err.filename and err.strerror
                else describe(err)
            )
            print(f"error: {one_line(text)}", file=sys.stderr)
            return 2
        print(
            f"error: {type(err).__name__}: {one_line(err)} (set METAEVAL_DEBUG=1 to see the "
            "traceback)",
            file=sys.stderr,
        )
        return 1


def main() -> None:
    """The ``metaeval`` console script."""
    sys.exit(run())


__all__ = ["main", "run", "app"]
