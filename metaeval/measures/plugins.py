"""User-defined measures: plugin files and the ``metaeval.measures`` entry point group."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from pathlib import Path

ENTRY_POINT_GROUP = "metaeval.measures"
_loaded_entry_points = False


#: The content (SHA-256) of every plugin file this process imported, by module name.
_CONTENT: dict[str, str] = {}


class PluginFileError(Exception):
    """A plugin file that cannot be imported for a reason :func:`load_plugin` states itself
    (missing, a directory, not importable, exited while loading); errors raised by the file's
    own code pass through unchanged."""


class PluginFileMissing(PluginFileError, FileNotFoundError):
    pass


class PluginFileIsADirectory(PluginFileError, IsADirectoryError):
    pass


class PluginFileNotImportable(PluginFileError, ImportError):
    pass


def load_plugin(path: str | Path) -> bool:
    """Import a Python file so that the measures (degraders, criteria) it registers become
    known; returns True when it was imported now, False when this process already runs its
    current content.

    The file declares its measures with :func:`metaeval.measures.register`; from then on they
    parse, list, condense and evaluate like the built-ins. A file whose content changed since
    this process imported it is imported again (its classes register again under the same
    names), so that a process never runs an old version of a plugin.
    """
    path = Path(path)
    if path.is_dir():
        raise PluginFileIsADirectory(f"plugin file {path} is a directory, not a Python file")
    if not path.is_file():
        raise PluginFileMissing(f"plugin file {path} does not exist")
    # The same file gets the same module name in every process (hash() is salted per
    # process), so worker processes that load it agree on its classes.
    where = hashlib.blake2b(str(path.resolve()).encode(), digest_size=6).hexdigest()
    name = f"metaeval_plugin_{re.sub(r'[^0-9A-Za-z_]', '_', path.stem)}_{where}"
    content = hashlib.sha256(path.read_bytes()).hexdigest()
    if name in sys.modules and _CONTENT.get(name) == content:
        return False
    sys.modules.pop(name, None)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginFileNotImportable(f"cannot import plugin file {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SystemExit as err:  # a script that exits when imported must not end the caller
        del sys.modules[name]
        raise PluginFileNotImportable(
            f"plugin file {path} exited while loading (sys.exit({err.code!r}))"
        ) from None
    except Exception:
        del sys.modules[name]
        raise
    _CONTENT[name] = content
    return True


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
