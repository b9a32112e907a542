"""The one registry: measures, degraders, criteria, claim checks, analytic tests and report
sections are each kept in a :class:`Registry`, with one rule for duplicates.

A name belongs to the object that registered it first. The same object registered again (a
plugin file imported a second time after an edit: its classes are new objects with the same
module and qualified name) replaces it; another object under a taken name is an error that
names both, with the file each comes from, so that two plugin files defining a degrader of the
same name never silently replace each other.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class RegistryError(ValueError):
    """A name registered twice by different objects; the message names both and their files."""


def origin(obj: Any) -> str:
    """What an object *is*, whatever copy of its module was imported: module and qualified
    name (a plugin file's module name is derived from its path, so it is stable too)."""
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


def where(obj: Any) -> str:
    """An object as a user knows it: its name and its file for code from a plugin file (whose
    module name is made up), its dotted path for a module of a package."""
    module = sys.modules.get(getattr(obj, "__module__", ""))
    file = getattr(module, "__file__", None)
    if getattr(obj, "__module__", "").startswith("metaeval_plugin_") and file:
        return f"{obj.__qualname__} in {file}"
    return origin(obj)


class Registry(Generic[T]):
    """Named objects of one kind.

    Parameters
    ----------
    what : str
        What the objects are, for messages ("measure", "degrader", "criterion"...).
    """

    def __init__(self, what: str):
        self.what = what
        self._items: dict[str, T] = {}
        self._aliases: dict[str, str] = {}

    def add(self, name: str, obj: T, aliases: tuple[str, ...] = ()) -> T:
        """Register ``obj`` under ``name`` (and ``aliases``); returns ``obj``.

        Raises
        ------
        RegistryError
            When a name is taken by another object.
        """
        for key in (name, *aliases):
            owner = self.get(key)
            if owner is not None and origin(owner) != origin(obj):
                raise RegistryError(
                    f"a {self.what} named {key!r} is already registered by {where(owner)}; "
                    f"choose another name for {where(obj)}"
                )
        self._items[name] = obj
        for alias in aliases:
            self._aliases[alias] = name
        return obj

    def get(self, name: str, default: T | None = None) -> T | None:
        """The object registered under ``name`` or an alias of it."""
        if name in self._items:
            return self._items[name]
        return self._items.get(self._aliases.get(name, ""), default)

    def alias_of(self, name: str) -> str | None:
        """The name an alias stands for (None if ``name`` is not an alias)."""
        return self._aliases.get(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __getitem__(self, name: str) -> T:
        obj = self.get(name)
        if obj is None:
            raise KeyError(name)
        return obj

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def items(self, *, key=None) -> list[tuple[str, T]]:
        """``(name, object)`` pairs, sorted by name (or by ``key`` of the name)."""
        return sorted(self._items.items(), key=lambda kv: key(kv[0]) if key else kv[0])

    def as_dict(self, *, key=None) -> dict[str, T]:
        """The registered objects by name, sorted (a copy)."""
        return dict(self.items(key=key))

    def aliases(self) -> dict[str, str]:
        """Every alias and the name it stands for (a copy)."""
        return dict(self._aliases)

    def construct(self, name: str, params: dict) -> Any:
        """An instance of the class registered as ``name``, built from ``params``.

        Raises
        ------
        ValueError
            When no class is registered as ``name`` (the message lists those that are).
        ParamError
            When a key of ``params`` is not a field of the class (carrying that key; the
            message lists the fields).
        """
        from metaeval._validation import ParamError

        cls = self.get(name)
        if cls is None:
            raise ValueError(f"unknown {self.what} {name!r}; registered: {sorted(self)}")
        known = sorted(f.name for f in dataclasses.fields(cls))
        unknown = sorted(set(params) - set(known))
        if unknown:
            listed = f"parameters: {', '.join(known) or 'none'}"
            raise ParamError(
                unknown[0],
                f"not a parameter of {name}; {listed}",
                owner=cls,
                message=f"{name}: {unknown[0]} is not a parameter; {listed}",
            )
        return cls(**params)

    def add_class(
        self,
        klass: type,
        base: type,
        key: str,
        decorator: str,
        aliases: tuple[str, ...] = (),
        check=None,
    ) -> type:
        """Register a plugin class under its ``key`` attribute (a measure's ``name``, a
        criterion's ``kind``), after the checks every class registry makes (a subclass of
        ``base``, an identifier as its key, dots allowed, a dataclass of its own), then the
        registry's own ``check(klass)``."""
        if not (inspect.isclass(klass) and issubclass(klass, base)):
            raise TypeError(f"{decorator}() takes a {base.__name__} subclass, got {klass!r}")
        name = getattr(klass, key)
        if not name or not re.fullmatch(r"[A-Za-z_][\w.]*", name):
            raise ValueError(f"{klass.__name__}.{key} must be an identifier, got {name!r}")
        if "__dataclass_fields__" not in klass.__dict__:
            raise TypeError(
                f"{klass.__name__} must be decorated with @dataclass(frozen=True, kw_only=True)"
            )
        if check is not None:
            check(klass)
        return self.add(name, klass, aliases)

    def remove(self, name: str) -> None:
        """Forget ``name`` and its aliases (tests)."""
        self._items.pop(name, None)
        for alias in [a for a, n in self._aliases.items() if n == name]:
            del self._aliases[alias]

    def snapshot(self) -> tuple[dict, dict]:
        """The registry's state, to :meth:`restore` (tests that register throw-away objects)."""
        return dict(self._items), dict(self._aliases)

    def restore(self, state: tuple[dict, dict]) -> None:
        self._items, self._aliases = dict(state[0]), dict(state[1])


__all__ = ["Registry", "RegistryError", "origin", "where"]
