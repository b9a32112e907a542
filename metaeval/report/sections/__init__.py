"""The sections of a report: one per criterion kind, found through a registry.

Each built-in criterion kind has its module here, which registers its section with
:func:`~metaeval.report.sections.registry.register_section`; a plugin criterion registers
its own the same way (``metaeval.report.register_section``). A kind with no registered
section is shown by :func:`~metaeval.report.sections.generic.generic`. The sections every
report has whatever its criteria (provenance, claims, top-heaviness, reproduce) are in
:mod:`~metaeval.report.sections.study` and :mod:`~metaeval.report.sections.claims`.

The built-in sections are imported in the order of :data:`BUILT_IN`, the order a report shows
them: registration order is report order.
"""

from importlib import import_module

from metaeval.report.sections.registry import (
    Section,
    register_section,
    registered_sections,
    section_for,
)

#: The built-in sections' kinds (and modules), in the order a report shows them.
BUILT_IN = (
    "robustness",
    "discriminative_power",
    "significance_changes",
    "stability",
    "agreement",
    "informativeness",
    "swap",
    "collection",
    "reliability",
    "topic_set_size",
    "error_rates",
)
for _kind in BUILT_IN:
    import_module(f"{__name__}.{_kind}")
del _kind

__all__ = ["register_section", "registered_sections", "section_for", "Section"]
