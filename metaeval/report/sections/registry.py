"""The registry of report sections: which function draws the section of a criterion kind.

A section is a function ``(report, rows) -> list of blocks``: ``report`` is the study's
:class:`~metaeval.report.model.Report`, ``rows`` the saved results of the criterion's kind.
The built-in criteria register theirs in :mod:`metaeval.report.sections`; a plugin that
registers a criterion can register its section the same way::

    from metaeval.report import document as doc
    from metaeval.report import register_section

    @register_section("my_criterion")
    def my_section(report, rows):
        return [doc.heading("My criterion"), doc.table(...)]

A kind without a registered section gets :func:`~metaeval.report.sections.generic.generic`
(every statistic as a table).
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from metaeval._registry import Registry
from metaeval.report import document as doc

#: A section: the report and the rows of its criterion kind -> the blocks it adds.
Section = Callable[[object, pd.DataFrame], list[doc.Block]]

# kind -> section; its order (registration order) is the order of the sections in a report
_SECTIONS: Registry[Section] = Registry("report section")


def register_section(kind: str, section: Section | None = None):
    """Register the section drawn for a criterion kind (usable as a decorator).

    Parameters
    ----------
    kind : str
        The criterion kind (``Criterion.kind``), an identifier.
    section : callable, optional
        ``section(report, rows) -> list of Block``; without it, a decorator.

    Returns
    -------
    callable
        The section (so that the decorated function stays usable), or the decorator.

    Raises
    ------
    ValueError
        ``kind`` is not an identifier.
    metaeval._registry.RegistryError
        Another function already draws the kind's section (the error names both and their
        files; the same function registered again, as a reloaded plugin does, is no error).
    TypeError
        ``section`` is not callable.
    """
    if not isinstance(kind, str) or not kind.isidentifier():
        raise ValueError(f"a section's kind must be an identifier, got {kind!r}")

    def wrap(fn: Section) -> Section:
        if not callable(fn):
            raise TypeError(f"register_section({kind!r}) takes a function, got {fn!r}")
        return _SECTIONS.add(kind, fn)

    return wrap if section is None else wrap(section)


def registered_sections() -> dict[str, Section]:
    """Every registered section by kind, in the order a report shows them."""
    return {kind: _SECTIONS[kind] for kind in _SECTIONS}


def section_for(kind: str) -> Section:
    """The section of a kind: its registered one, or the generic table of its statistics."""
    from metaeval.report.sections.generic import generic

    return _SECTIONS.get(kind, generic)


__all__ = ["register_section", "registered_sections", "section_for", "Section"]
