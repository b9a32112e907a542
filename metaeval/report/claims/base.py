"""What every claim check shares: the names of the study a check may use, the base classes
that read a ``check = {...}`` table and validate it, and the registry of check kinds.

A check is read twice in its life. When the study file is read
(:func:`metaeval.study.load_spec`), :func:`read_check` builds it from its TOML table and
validates it against the study (every name must exist; errors name the table and the key,
``s.toml: claims[0].check.level: ...``). When a report is drawn, the saved check
(``claims.json``, already validated) is rebuilt with :meth:`ClaimCheck.from_dict` and judged.

This module imports nothing from :mod:`metaeval.study.spec`: the spec reader imports the
claims when it reads a claim, and hands :func:`read_check` its table (anything with the
``take``, ``rest`` and ``error`` of the spec reader's tables) and a :class:`StudyNames`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from metaeval._registry import Registry
from metaeval.report.inference import FULL
from metaeval.study.spec.table import toml_kind

#: What every check judged from the saved results can narrow or transform (see the package's
#: docstring).
MODIFIERS = frozenset(
    {
        "against",
        "against_mode",
        "degrader",
        "x",
        "worlds",
        "per",
        "relative_to",
        "change_from",
        "absolute",
    }
)


class Table(Protocol):
    """A TOML table as the spec reader holds it: its keys are taken one by one, and its
    errors name the file, the table and the key."""

    def take(self, key: str, kind: type | tuple, default: Any = ..., *, check=None) -> Any: ...

    def rest(self) -> dict: ...

    def error(self, key: str | None, message: str) -> Exception: ...


@dataclass(frozen=True)
class StudyNames:
    """What a claim may name: the study's criteria, measures, worlds and levels.

    Attributes
    ----------
    criteria : tuple
        The study's criterion specs (each with ``id``, ``kind``, ``worlds``, ``make()`` and
        ``runs_on(world)``, as :class:`metaeval.study.spec.CriterionSpec`).
    measures : tuple of str
        The measures' labels.
    worlds : tuple of str
        The worlds' ids.
    levels : frozenset of str
        Every level of every degrader, as text, and ``"full"``.
    degraders : tuple
        The study's degrader specs (each with ``id`` and ``levels``, as
        :class:`metaeval.study.spec.DegraderSpec`).
    trec_worlds : frozenset of str
        The worlds that are real collections: they have no truth and no latent system effect.
    """

    criteria: tuple = ()
    measures: tuple[str, ...] = ()
    worlds: tuple[str, ...] = ()
    levels: frozenset = frozenset({FULL})
    degraders: tuple = ()
    trec_worlds: frozenset = frozenset()

    def criterion_ids(self) -> list[str]:
        """The criteria's ids, in study order."""
        return [x.id for x in self.criteria]

    def criterion(self, criterion_id: str):
        """The criterion spec of an id (one the check has named and was checked)."""
        return next(x for x in self.criteria if x.id == criterion_id)

    def measure(self, name: Any, table: Table, key: str) -> str:
        """A measure a claim names: a label of the study, in any spelling of its name."""
        if not isinstance(name, str):
            raise table.error(key, f"measures are named by strings, got {toml_kind(name)}")
        if name in self.measures:
            return name
        try:
            from metaeval.measures import canonical_name

            canonical = canonical_name(name)
        except (TypeError, ValueError):
            canonical = None
        if canonical in self.measures:
            return canonical
        raise table.error(
            key, f"{name!r} is not a measure of the study; measures: {', '.join(self.measures)}"
        )


class ClaimCheck:
    """One kind of claim check: read from its TOML table, saved as a dict, judged on a world.

    Subclasses set :attr:`kind` and implement :meth:`from_table`; they are registered with
    :func:`register_check`.

    Parameters
    ----------
    params : mapping
        The check's keys as validated (without ``kind``).
    """

    #: The ``kind`` of the check table.
    kind: ClassVar[str] = ""

    def __init__(self, params: Mapping):
        self.params = {k: v for k, v in dict(params).items() if k != "kind"}

    @classmethod
    def from_table(cls, table: Table, study: StudyNames) -> ClaimCheck:
        """The check read from its table (``kind`` already taken), validated against the
        study; raises the table's error (naming the table and key) when it is not valid."""
        raise NotImplementedError

    @classmethod
    def from_dict(cls, check: Mapping) -> ClaimCheck:
        """The check as saved (``claims.json``): validated when the study was read."""
        return cls(check)

    def to_dict(self) -> dict:
        """The check as saved: ``kind`` and its keys."""
        return {"kind": self.kind, **self.params}


class ResultsCheck(ClaimCheck):
    """A check judged on every world from the saved results of one criterion.

    Subclasses set the keys they require and allow (:data:`MODIFIERS` are allowed to all),
    add their own rules in :meth:`validate_own`, and judge themselves in :meth:`parts` and
    :meth:`numbers`.
    """

    required: ClassVar[frozenset] = frozenset({"criterion", "statistic"})
    optional: ClassVar[frozenset] = frozenset()

    @classmethod
    def keys(cls) -> frozenset:
        """Every key a check of this kind may have."""
        return cls.required | cls.optional | MODIFIERS

    @classmethod
    def validate_own(cls, check: dict, table: Table) -> None:
        """The kind's own rules, checked once the keys are known (none by default)."""

    @classmethod
    def from_table(cls, table: Table, study: StudyNames) -> ResultsCheck:
        c = table
        check = c.rest()
        allowed = cls.keys()
        for key in check:
            if key not in allowed:
                raise c.error(
                    key, f"unknown key for a {cls.kind} check; keys: {', '.join(sorted(allowed))}"
                )
        for key in sorted(cls.required - set(check)):
            raise c.error(key, "is required")
        cls.validate_own(check, c)
        _validate_names(check, c, study)
        return cls(check)

    def parts(self, values) -> list:
        """The claim's parts on one world (:class:`~metaeval.report.claims.verdict.Part`),
        from its values there (:class:`~metaeval.report.claims.values.ClaimValues`)."""
        raise NotImplementedError

    def numbers(self, parts: list) -> str:
        """The numbers behind the verdict, in the claim's words."""
        if not parts:
            return "no saved values"
        return self.say(parts)

    def say(self, parts: list) -> str:
        """:meth:`numbers` of a check with parts."""
        raise NotImplementedError


def finite_number(check: dict, table: Table, key: str, bound: str = "") -> None:
    """``check[key]``, when the check has it, is a finite number (TOML reads ``nan`` and
    ``inf`` as numbers), ``bound`` (``">= 0"`` or ``"> 0"``) when given."""
    if key not in check:
        return
    value = check[key]
    ok = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and (bound != ">= 0" or value >= 0)
        and (bound != "> 0" or value > 0)
    )
    if not ok:
        wanted = f"a finite number {bound}" if bound else "a finite number"
        raise table.error(key, f"must be {wanted}, got {value!r}")


def _validate_names(check: dict, c: Table, study: StudyNames) -> None:
    """Every name a check uses exists in the study, and takes its one spelling: criteria,
    measures, references, statistics, worlds, degrader, levels (in this order: the first
    problem is the one reported)."""
    ids = study.criterion_ids()
    for key in ("criterion", "change_from"):
        if key in check and check[key] not in ids:
            raise c.error(
                key,
                f"{check[key]!r} is not a criterion of the study; criteria: {', '.join(ids)}",
            )
    for key in ("greater", "less", "like", "than", "measures"):
        if key in check:
            names = [check[key]] if isinstance(check[key], str) else check[key]
            if isinstance(names, list) and not names:
                raise c.error(key, "must name at least one measure")
            check[key] = [study.measure(n, c, key) for n in names]
    side = next((k for k in ("greater", "less", "like") if k in check), None)
    if side is not None and "than" in check and set(check[side]) == set(check["than"]):
        # every pair would compare a measure with itself (or each with the other both ways)
        raise c.error(
            "than",
            f"names the same measures as {side} ({', '.join(check['than'])}): a claim compares "
            "different measures",
        )
    if "against" in check:
        refs = check["against"] if isinstance(check["against"], list) else [check["against"]]
        # what the criterion's rows name as their other side when it is not a measure
        named = study.criterion(check["criterion"]).make().others()
        refs = [
            r if r in ("full", "truth", "effect") or r in named else study.measure(r, c, "against")
            for r in refs
        ]
        check["against"] = refs if isinstance(check["against"], list) else refs[0]
    if "levels" in check:
        if "level" in check or not isinstance(check["levels"], list) or not check["levels"]:
            raise c.error("levels", "must be a non-empty array of levels, and replaces level")
        check["levels"] = [str(lv) for lv in check["levels"]]
    criterion = study.criterion(check["criterion"])
    produced = criterion.make().produces()
    for key in ("statistic", "per"):
        if produced is not None and key in check and check[key] not in produced:
            raise c.error(
                key,
                f"{criterion.id} ({criterion.kind}) gives no statistic {check[key]!r}; it "
                f"gives: {', '.join(produced)}",
            )
    named = check.get("worlds", [])
    for w in [named] if isinstance(named, str) else named:
        if w not in set(study.worlds):
            raise c.error("worlds", f"{w!r} is not a world of the study")
        if not criterion.runs_on(w):
            raise c.error("worlds", f"criterion {criterion.id!r} does not run on world {w!r}")
    if criterion.worlds and "worlds" not in check:
        check["worlds"] = list(criterion.worlds)  # judged where the criterion runs
    refs = check.get("against", [])
    latent = [r for r in ([refs] if isinstance(refs, str) else refs) if r in ("truth", "effect")]
    if latent:
        judged = check.get("worlds") or [w for w in study.worlds if criterion.runs_on(w)]
        judged = [judged] if isinstance(judged, str) else judged
        if judged and all(w in study.trec_worlds for w in judged):
            raise c.error(
                "against",
                f"{latent[0]!r} is known on simulated worlds only, and this claim is judged on "
                f"real collections only ({', '.join(judged)})",
            )
    levels, of = study.levels, "the study"
    if "degrader" in check:
        degrader_ids = [d.id for d in study.degraders]
        degrader = next((d for d in study.degraders if d.id == check["degrader"]), None)
        if degrader is None:
            raise c.error(
                "degrader",
                f"{check['degrader']!r} is not a degrader of the study; degraders: "
                f"{', '.join(degrader_ids) or 'none'}",
            )
        # the rows of another degrader's level would never be found
        levels = frozenset(str(lv) for lv in degrader.levels) | {FULL}
        of = f"degrader {degrader.id!r}"
    for key in ("level", "from", "to", "relative_to", "levels"):
        for i, lv in enumerate(check.get(key, []) if key == "levels" else [check.get(key)]):
            if lv is None:
                continue
            if key != "levels":
                check[key] = lv = str(lv)
            if lv not in levels:
                raise c.error(
                    key if key != "levels" else f"levels[{i}]",
                    f"{lv!r} is not a level of {of}; levels: {', '.join(sorted(levels))}",
                )
    if "per" in check and not isinstance(check["per"], str):
        raise c.error("per", f"must name a statistic (a string), got {toml_kind(check['per'])}")
    if check.get("against_mode", "each") not in ("each", "mean"):
        raise c.error("against_mode", f"must be each or mean, got {check['against_mode']!r}")


# ------------------------------------------------------------------------------ registry
# every check kind by name, with the one rule for duplicates of metaeval's registries
_KINDS: Registry[type[ClaimCheck]] = Registry("claim check")
#: The kinds judged from the saved results, in registration order (``analytic`` is not one:
#: it is computed while the study runs, see
#: :class:`~metaeval.report.claims.analytic.AnalyticCheck`).
CHECKS: dict[str, type[ResultsCheck]] = {}


def register_check(cls: type[ClaimCheck]) -> type[ClaimCheck]:
    """Class decorator: make a check kind usable in ``[[claims]]`` tables.

    Raises
    ------
    TypeError
        ``cls`` is not a :class:`ClaimCheck` subclass.
    ValueError
        Its ``kind`` is not an identifier.
    metaeval._registry.RegistryError
        Another class has its kind (the same class registered again, as a reloaded plugin
        does, is no error).
    """
    if not (isinstance(cls, type) and issubclass(cls, ClaimCheck)):
        raise TypeError(f"register_check() takes a ClaimCheck subclass, got {cls!r}")
    if not cls.kind or not cls.kind.isidentifier():
        raise ValueError(f"{cls.__name__}.kind must be an identifier, got {cls.kind!r}")
    _KINDS.add(cls.kind, cls)
    if issubclass(cls, ResultsCheck):
        CHECKS[cls.kind] = cls
    return cls


def check_class(kind: str) -> type[ClaimCheck] | None:
    """The class of a check kind, or None when no check has it."""
    return _KINDS.get(kind) if isinstance(kind, str) else None


def read_check(table: Table, study: StudyNames) -> ClaimCheck:
    """A claim's ``check = {...}`` table as a typed, validated check.

    Parameters
    ----------
    table : Table
        The check table as the spec reader holds it (``take``, ``rest``, ``error``).
    study : StudyNames
        What the check may name.

    Returns
    -------
    ClaimCheck

    Raises
    ------
    The table's error (:class:`metaeval.study.spec.SpecError`), naming the table and key.
    """
    kind = table.take("kind", str)
    cls = check_class(kind)
    if cls is None:
        # the kinds judged from the results first, as the messages always listed them
        kinds = [*CHECKS, *(k for k in _KINDS if k not in CHECKS)]
        choices = ", ".join(kinds[:-1]) + f" or {kinds[-1]}" if len(kinds) > 1 else kinds[0]
        raise table.error("kind", f"must be {choices}, got {kind!r}")
    return cls.from_table(table, study)


def from_dict(check: Mapping) -> ClaimCheck | None:
    """A saved check (``claims.json``) as its typed check; None for an unknown kind."""
    cls = check_class(check.get("kind"))
    return cls.from_dict(check) if cls is not None else None
