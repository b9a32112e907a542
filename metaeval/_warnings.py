"""Warnings that point at the user's line, not at the package's internals.

``warnings.warn(..., stacklevel=n)`` needs the right ``n`` at every call site, and a function
called through several layers (the CLI, a study, a criterion) gets it wrong: the warning then
names a file inside metaeval, or ``sys:1``. :func:`warn` walks the stack instead and attributes
the warning to the first frame outside the ``metaeval`` and ``simulators`` packages.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

_INTERNAL = tuple(
    str(Path(__file__).resolve().parents[1] / name) for name in ("metaeval", "simulators")
)


def _is_internal(filename: str) -> bool:
    try:
        path = str(Path(filename).resolve())
    except (OSError, ValueError):
        return False
    return path.startswith(_INTERNAL)


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """Issue ``message`` as a warning attributed to the caller outside this package."""
    frame = sys._getframe(1)
    level = 2  # stacklevel 2 is warn()'s caller
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    if frame is None:  # called from inside the package only (e.g. the CLI entry point)
        level -= 1
    warnings.warn(message, category, stacklevel=level)


__all__ = ["warn"]
