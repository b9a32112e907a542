"""User-defined measures: plugin files and the ``metaeval.measures`` entry point group."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from pathlib import Path

ENTRY_POINT_GROUP = "metaeval.measures"
_loaded_entry_points = False


def load_plugin(path: str | Path) -> None:
    """Import a Python file so that the measures it registers become known.

    The file declares its measures with :func:`metaeval.measures.register`; from then on they
    parse, list, condense and evaluate like the built-ins.
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"plugin file {path} is a directory, not a Python file")
    if not path.is_file():
        raise FileNotFoundError(f"plugin file {path} does not exist")
    # The same file gets the same module name in every process (hash() is salted per
    # process), so worker processes that load it agree on its classes.
    digest = hashlib.blake2b(str(path.resolve()).encode(), digest_size=6).hexdigest()
    name = f"metaeval_plugin_{re.sub(r'[^0-9A-Za-z_]', '_', path.stem)}_{digest}"
    if name in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import plugin file {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SystemExit as err:  # a script that exits when imported must not end the caller
        del sys.modules[name]
        raise ImportError(
            f"plugin file {path} exited while loading (sys.exit({err.code!r}))"
        ) from None
    except Exception:
        del sys.modules[name]
        raise


def entry_points(*, group: str):
    """:func:`importlib.metadata.entry_points`, imported on first use: importing it costs more
    than a command that evaluates built-in measures spends on everything else it imports."""
    from importlib.metadata import entry_points as installed

    return installed(group=group)


def load_entry_points() -> None:
    """Import every module registered under the ``metaeval.measures`` entry point group, once."""
    global _loaded_entry_points
    if _loaded_entry_points:
        return
    _loaded_entry_points = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        ep.load()
