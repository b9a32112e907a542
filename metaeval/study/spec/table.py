"""Reading a study file's TOML tables: every key is taken once and checked, and an error
names the file and the key path (``study.toml: degraders[0].levels[2]: ...``)."""

from __future__ import annotations

import difflib
import math
import re
from pathlib import Path
from typing import Any

_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")


class SpecError(ValueError):
    """A study file that cannot be run: the message names the file and the key path."""


# ------------------------------------------------------------------------------- reading
class _Table:
    """One TOML table being read: every key must be taken, and errors carry the key path."""

    def __init__(self, data: Any, path: str, file: str):
        if not isinstance(data, dict):
            raise SpecError(f"{file}: {path or 'the file'}: must be a table, got {toml_kind(data)}")
        self.data, self.path, self.file = dict(data), path, file

    def where(self, key: str | None = None) -> str:
        if key is None:
            return self.path
        return f"{self.path}.{key}" if self.path else key

    def error(self, key: str | None, message: str) -> SpecError:
        return SpecError(f"{self.file}: {self.where(key)}: {message}")

    def take(self, key: str, kind: type | tuple, default: Any = ..., *, check=None) -> Any:
        if key not in self.data:
            if default is ...:
                raise self.error(key, "is required")
            return default
        value = self.data.pop(key)
        kinds = kind if isinstance(kind, tuple) else (kind,)
        ok = any(
            isinstance(value, k) and not (k in (int, float) and isinstance(value, bool))
            for k in kinds
        )
        if not ok:
            names = " or ".join(_type_name(k) for k in kinds)
            raise self.error(key, f"must be {names}, got {toml_kind(value)} {value!r}")
        if check is not None:
            try:
                value = check(value)
            except SpecError:
                raise
            except (TypeError, ValueError) as err:
                raise self.error(key, str(err)) from None
        return value

    def table(self, key: str, default: Any = ...) -> _Table | None:
        if key not in self.data and default is not ...:
            return default
        return _Table(self.take(key, dict), self.where(key), self.file)

    def tables(self, key: str) -> list[_Table]:
        items = self.take(key, list, [])
        return [_Table(item, f"{self.where(key)}[{i}]", self.file) for i, item in enumerate(items)]

    def rest(self) -> dict:
        """The keys not taken yet (parameters passed on to a constructor), and empty the table."""
        rest, self.data = self.data, {}
        return rest

    def finish(self, allowed: str = "") -> None:
        if self.data:
            self.refuse_unknown(allowed)

    def refuse_unknown(self, allowed: str) -> None:
        """An error naming the first key not in ``allowed`` (a comma-separated list), with the
        allowed key it is most likely a typo of."""
        names = [a.strip() for a in allowed.split(",") if a.strip()]
        unknown = sorted(k for k in self.data if k not in names)
        if not unknown:
            return
        key = unknown[0]
        close = difflib.get_close_matches(key, names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        listed = f" (allowed keys: {allowed})" if allowed else ""
        raise self.error(key, f"unknown key{hint}{listed}")


def toml_kind(value: Any) -> str:
    """A TOML value's type in words, as messages say it (``a table``, ``an array``)."""
    return {
        dict: "a table",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
    }.get(type(value), type(value).__name__)


def _type_name(k: type) -> str:
    return {
        dict: "a table",
        list: "an array",
        str: "a string",
        bool: "true or false",
        int: "an integer",
        float: "a number",
    }.get(k, k.__name__)


def _identifier(what: str):
    def check(value: str) -> str:
        if not _ID_RE.fullmatch(value):
            raise ValueError(
                f"{what} must use letters, digits, '.', '_' and '-' only, got {value!r}"
            )
        return value

    return check


def _positive(value: int) -> int:
    if value < 1:
        raise ValueError(f"must be a positive integer, got {value}")
    return value


def _at_least_two_systems(value: int) -> int:
    if value < 2:
        raise ValueError(f"must be at least 2 (every criterion compares systems), got {value}")
    return value


def _finite(value: float) -> float:
    """A number TOML can also spell ``nan`` or ``inf``: checked when the file is read, not
    when a task first uses it."""
    if not math.isfinite(value):
        raise ValueError(f"must be a finite number, got {value}")
    return float(value)


def _non_negative(value: int) -> int:
    if value < 0:
        raise ValueError(f"must be a non-negative integer, got {value}")
    return value


def _confidence(value: float) -> float:
    if not 0.5 <= value < 1:
        raise ValueError(f"must be a confidence in [0.5, 1), such as 0.95, got {value}")
    return float(value)


def _freeze(value: Any) -> Any:
    """TOML values as hashable, canonical Python values (tables -> sorted tuples of pairs)."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    """Undo :func:`_freeze` for passing parameters on (pairs -> dict, tuples -> lists kept)."""
    if (
        isinstance(value, tuple)
        and value
        and all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in value)
    ):
        return {k: _thaw(v) for k, v in value}
    if isinstance(value, tuple):
        return tuple(_thaw(v) for v in value)
    return value


def _unique(ids: list[str], table: _Table, key: str, what: str = "id") -> None:
    seen = set()
    for i, x in enumerate(ids):
        if x in seen:
            if what == "id":
                raise table.error(
                    f"{key}[{i}]", f"id {x!r} is used twice; give each entry its own id"
                )
            raise table.error(
                f"{key}[{i}]",
                f"{what} {x!r} is listed twice; list it once (or give each a different label)",
            )
        seen.add(x)


def _resolve(
    base: Path,
    value: Any,
    table: _Table,
    key: str,
    index: int | None = None,
    must_exist: bool = True,
) -> Path:
    where = key if index is None else f"{key}[{index}]"
    if not isinstance(value, str):
        raise table.error(where, f"must be a path (a string), got {toml_kind(value)}")
    p = _absolute(base, value)
    if must_exist and not p.exists():
        raise table.error(where, f"{value!r}: no such file ({p})")
    if must_exist and p.is_dir():
        raise table.error(where, f"{value!r}: is a directory, not a file ({p})")
    return p


def _absolute(base: Path, value: str) -> Path:
    """A path of the study file (``~`` expanded), relative ones from the file's folder."""
    p = Path(value).expanduser()
    return p if p.is_absolute() else base / p


def _one_of(choices):
    def check(value):
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    return check


def _param_error(t: _Table, err: Exception, keys: list[str]) -> SpecError:
    """A constructor's error, pointed at the key of the parameter it carries
    (:class:`~metaeval._validation.ParamError`): a degrader's level field (``rates[2]``) is
    the study's ``levels[2]``, another parameter its own key. An error that carries no
    parameter, or one the table does not set (a default at odds with a value given), is the
    table's, with its whole message."""
    from metaeval._validation import ParamError
    from simulators.degraders import Degrader

    if not isinstance(err, ParamError):
        return t.error(None, str(err))
    at = "" if err.index is None else f"[{err.index}]"
    owner = err.owner
    if isinstance(owner, type) and issubclass(owner, Degrader) and err.param == owner.level_field:
        return t.error("levels" + at, err.problem)
    if err.param in keys:
        return t.error(err.param + at, err.problem)
    return t.error(None, str(err))
