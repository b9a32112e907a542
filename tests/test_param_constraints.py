"""Bad parameter values, generated from the declared constraints (no case written by hand).

For every registered degrader, criterion kind and world parameter that declares a constraint
(``_constraints``), every value the constraint says it refuses (``invalid_examples()``) must

* make the constructor raise a :class:`ParamError` carrying the parameter (and the index of
  the faulty item of a list), with a one-line message naming it;
* and, put in a small study file, give a :class:`SpecError` naming the key path of that
  parameter (``degraders[0].levels[1]``, ``criteria[0].B``, ``worlds[0].params.depth``).

For every built-in measure (its declarations and its bases', ``param_constraints()``), every
refused value must make the constructor raise a :class:`MeasureValueError` or
:class:`MeasureTypeError` carrying the parameter, its message after the measure's name, and
so must the measure's name with that value written in it (``nDCG(base=1)``, ``P@0``), after
the text as written; every value a constraint accepts (``valid_examples()``) must make a
measure whose name parses back to it.

And no code of the package tells errors apart by their message text.
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import re
from pathlib import Path

import pytest

from metaeval._constraints import Constraint
from metaeval._validation import ParamError, ParamTypeError
from metaeval.measures import Measure, parse_measure, register, registered
from metaeval.measures.base import MeasureError, MeasureTypeError, MeasureValueError
from metaeval.study import SpecError, load_spec
from metaeval.study.criteria import registered_criteria
from simulators.degraders import registered_degraders
from simulators.worlds import WorldParams

ROOT = Path(__file__).resolve().parents[1]


def _built_in(classes: dict) -> list[type]:
    # plugins registered by other tests (in this process) are not the package's declarations
    return [c for c in classes.values() if c.__module__.startswith(("metaeval.", "simulators."))]


def _cases(owners: list[tuple[str, type]]):
    out = []
    for label, cls in owners:
        for name, constraint in cls._constraints.items():
            for i, bad in enumerate(constraint.invalid_examples()):
                out.append(pytest.param(cls, name, bad, id=f"{label}-{name}-{i}"))
    return out


DEGRADERS = [(c.name, c) for c in _built_in(registered_degraders())]
CRITERIA = [(c.kind, c) for c in _built_in(registered_criteria())]
WORLD = [("world", WorldParams)]
DEGRADER_CASES = _cases(DEGRADERS)
CRITERION_CASES = _cases(CRITERIA)
WORLD_CASES = _cases(WORLD)


def test_every_kind_declares_its_parameters():
    # a built-in with parameters and no declaration would have no generated case
    for label, cls in DEGRADERS + CRITERIA + WORLD:
        fields = {f.name for f in dataclasses.fields(cls)}
        undeclared = fields - set(cls._constraints) - {"groups", "confusion"}
        assert not undeclared, f"{label}: no constraint for {sorted(undeclared)}"
    assert len(DEGRADER_CASES) + len(CRITERION_CASES) + len(WORLD_CASES) > 300


@pytest.mark.parametrize("label, cls", DEGRADERS + CRITERIA + WORLD)
def test_defaults_satisfy_the_constraints_and_describe_them(label, cls):
    defaults = cls() if cls is not WorldParams else WorldParams()
    for name, constraint in cls._constraints.items():
        assert isinstance(constraint, Constraint)
        constraint.check(name, getattr(defaults, name))
        assert constraint.describe() and "\n" not in constraint.describe()
        assert constraint.valid_examples()


def _raises_naming(make, name, bad) -> ParamError:
    with pytest.raises(ParamError) as info:
        make()
    err = info.value
    assert err.param == name, str(err)
    assert err.index == bad.index, str(err)
    message = str(err)
    assert "\n" not in message and message.startswith(err.where + " "), message
    assert isinstance(err, ValueError)
    if isinstance(err, ParamTypeError):
        assert isinstance(err, TypeError)
    return err


# ----------------------------------------------------------------------- in a study file
def toml(value) -> str:
    """A TOML value (arrays may mix types in TOML 1.0)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def study(*, params: str = "", degrader: str = "", criterion: str = "", world: str = "") -> str:
    """A small study file: a simulated world (with ``params`` and any further ``world``
    lines), one degrader, AP, one criterion."""
    degrader = degrader or 'method = "stratified"\nlevels = [50]'
    criterion = criterion or 'kind = "swap"'
    return f"""schema = 1
[study]
name = "constraints"
seed = 1

[[worlds]]
id = "sim"
kind = "simulator"
preset = "trec_like"
n_topics = 5
n_systems = 4
params = {{ {params} }}
{world}

[[degraders]]
{degrader}

[measures]
names = ["AP"]

[[criteria]]
{criterion}
"""


def _spec_error_at(text: str, key: str, bad) -> None:
    where = key + ("" if bad.index is None else f"[{bad.index}]")
    with pytest.raises(SpecError) as info:
        load_spec("study.toml", text=text)
    message = str(info.value)
    assert message.startswith(f"study.toml: {where}: "), message
    assert "\n" not in message


# One test per case does both checks (a pytest item costs more than the checks).
@pytest.mark.parametrize("cls, name, bad", DEGRADER_CASES)
def test_degrader_error_names_the_parameter_and_the_study_key(cls, name, bad):
    err = _raises_naming(lambda: cls(**{name: bad.value}), name, bad)
    assert err.owner is cls
    levels = cls._constraints.get(cls.level_field)
    if name == cls.level_field:
        # the degrader's levels are the study's `levels`
        lines, key = [f"levels = {toml(bad.value)}"], "levels"
    else:
        lines = [f"levels = {toml(levels.valid_examples()[0])}", f"{name} = {toml(bad.value)}"]
        key = name
    text = study(degrader="\n".join([f'method = "{cls.name}"', *lines]))
    _spec_error_at(text, f"degraders[0].{key}", bad)


@pytest.mark.parametrize("cls, name, bad", CRITERION_CASES)
def test_criterion_error_names_the_parameter_and_the_study_key(cls, name, bad):
    err = _raises_naming(lambda: cls(**{name: bad.value}), name, bad)
    assert err.owner is cls
    text = study(criterion=f'kind = "{cls.kind}"\n{name} = {toml(bad.value)}')
    _spec_error_at(text, f"criteria[0].{name}", bad)


@pytest.mark.parametrize("cls, name, bad", WORLD_CASES)
def test_world_parameter_error_names_the_parameter_and_the_study_key(cls, name, bad):
    _raises_naming(lambda: cls(**{name: bad.value}), name, bad)
    text = study(params=f"{name} = {toml(bad.value)}")
    _spec_error_at(text, f"worlds[0].params.{name}", bad)


def test_a_relation_check_names_its_parameter():
    # what no single constraint can say is code, raising a ParamError all the same
    text = study(criterion='kind = "topic_set_size"\nalpha = 0.5\npower = 0.3')
    _spec_error_at(text, "criteria[0].power", type("Bad", (), {"index": None}))
    text = study(params="doc_share = 0.6, team_share = 0.5")
    _spec_error_at(text, "worlds[0].params.team_share", type("Bad", (), {"index": None}))


def test_a_plugin_that_declares_nothing_still_works():
    from simulators.degraders import Degrader

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Plain(Degrader):
        rates: tuple = (50,)

        def _validate(self):
            if not self.rates:
                raise ValueError("rates must not be empty")

    assert Plain(rates=(10,)).rates == (10,)
    with pytest.raises(ValueError, match="rates must not be empty"):
        Plain(rates=())


def test_param_errors_survive_pickling():
    import pickle

    err = ParamTypeError("rates", "must be a list, got 3", index=2)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is ParamTypeError
    assert (back.param, back.index, back.problem, str(back)) == (
        "rates",
        2,
        "must be a list, got 3",
        "rates[2] must be a list, got 3",
    )


# ----------------------------------------------------------------------------- measures
MEASURES = [(c.name, c) for c in _built_in(registered())]
MEASURE_CASES = [
    pytest.param(cls, name, bad, id=f"{label}-{name}-{i}")
    for label, cls in MEASURES
    for name, constraint in cls.param_constraints().items()
    for i, bad in enumerate(constraint.invalid_examples())
]
#: What other parameters must be for a good value to be allowed (relations kept as code):
#: nDCG's base is the log base of the jk discount only.
COMPANIONS = {("nDCG", "base"): {"discount": "jk"}}
#: Parameters normalised by code, not declared: a mapping grade -> gain.
UNDECLARED = {"gains"}


def _needed(cls, name: str) -> dict:
    """The parameters a measure cannot be made without (a required cutoff, IPrec's recall),
    but ``name``."""
    out = dict(cls.example_params)
    if cls.cutoff_required:
        out[cls.cutoff_field] = 5
    out.pop(name, None)
    return out


def spelled(value) -> str:
    """A value as a measure's name writes it (``nan``, ``[0.5,2]``, ``'x'``)."""
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(spelled(v) for v in value) + "]"
    return repr(value)


def measure_text(cls, params: dict) -> str:
    """``NAME(key=value,...)@cutoff`` for ``params`` (the cutoff field written after @)."""
    params = dict(params)
    cutoff = params.pop(cls.cutoff_field, None) if cls.cutoff_field else None
    inner = ",".join(f"{k}={spelled(v)}" for k, v in params.items())
    text = cls.name + (f"({inner})" if inner else "")
    return text if cutoff is None else f"{text}@{spelled(cutoff)}"


def test_every_measure_declares_its_parameters():
    assert len(MEASURES) >= 28
    for label, cls in MEASURES:
        fields = {f.name for f in dataclasses.fields(cls)}
        undeclared = fields - set(cls.param_constraints()) - UNDECLARED
        assert not undeclared, f"{label}: no constraint for {sorted(undeclared)}"
    assert len(MEASURE_CASES) > 250


@pytest.mark.parametrize("label, cls", MEASURES)
def test_measure_good_values_make_measures_that_parse_back(label, cls):
    example = cls.example()
    for name, constraint in cls.param_constraints().items():
        constraint.check(name, getattr(example, name))  # the defaults are allowed
        assert constraint.describe() and "\n" not in constraint.describe()
        assert constraint.valid_examples()
        for good in constraint.valid_examples():
            params = {**_needed(cls, name), **COMPANIONS.get((label, name), {}), name: good}
            measure = cls(**params)
            assert parse_measure(str(measure)) == measure, str(measure)


# One test per case does both checks (a pytest item costs more than the checks).
@pytest.mark.parametrize("cls, name, bad", MEASURE_CASES)
def test_measure_error_names_the_measure_and_the_parameter(cls, name, bad):
    params = {**_needed(cls, name), name: bad.value}
    with pytest.raises(MeasureError) as info:
        cls(**params)
    err = info.value
    assert isinstance(err, (MeasureValueError, MeasureTypeError)), type(err)
    assert (err.param, err.index, err.owner) == (name, bad.index, cls), str(err)
    assert str(err) == f"{cls.name}: {err.where} {err.problem}"
    assert "\n" not in str(err) and isinstance(err, ValueError)
    assert isinstance(err, TypeError) == isinstance(err, MeasureTypeError)
    if name in ("judged_only", "bound"):
        return  # the name writes them as a ' or as _lo / _hi, which hold no bad value
    text = measure_text(cls, params)
    with pytest.raises(ParamError) as info:
        parse_measure(text)
    err = info.value
    assert (err.param, err.index) == (name, bad.index), str(err)
    message = str(err)
    assert message.startswith(f"{text!r}: ") and "\n" not in message, message
    if name != cls.cutoff_field:  # a cutoff that is not a number is the parser's to refuse
        assert isinstance(err, MeasureError) and err.owner is cls
        assert message == f"{text!r}: {cls.name}: {err.where} {err.problem}"


@pytest.mark.parametrize(
    "text, param, message",
    [
        # what no declaration can say is code, raising an error that carries the parameter
        ("nDCG(base=3)", "base", "nDCG: base applies to discount=jk only; write "),
        ("IPrec", "recall", "IPrec needs a recall level, e.g. IPrec(recall=0.5)"),
        ("P", "cutoff", "P needs a cutoff, e.g. P@10"),
        ("nDCG(gains={1:-1})", "gains", "nDCG: gains values must be finite numbers"),
        ("ERR(gains=3)", "gains", "ERR: gains must map grades to gains"),
        ("Q(gains={1:1,'a':2})", "gains", "Q: gains keys must be grades, finite numbers >= 0"),
        # and the parser's own refusals
        ("AP(foo=1)", "foo", "AP has no parameter 'foo'"),
        ("AP(rel=1,rel=2)", "rel", "parameter 'rel' is given twice"),
        ("AP(rel=)", "rel", "parameter 'rel=' must be written name=value"),
        ("P@ten", "cutoff", "cutoff 'ten' is not an integer"),
    ],
)
def test_a_measure_check_in_code_names_its_parameter(text, param, message):
    with pytest.raises(ParamError) as info:
        parse_measure(text)
    assert info.value.param == param
    assert str(info.value).startswith(f"{text!r}: {message}"), str(info.value)


def test_a_plugin_measure_that_declares_nothing_still_works(registry):
    @register
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class PlainPlugin(Measure):
        k: int = 1
        cutoff: int | None = None
        name = "PlainPlugin"
        cutoff_field = "cutoff"

        def _validate(self):
            if not isinstance(self.k, int) or self.k < 1:
                raise ValueError(f"{self.name}: k must be a positive integer, got {self.k!r}")

        def _compute(self, tensor):
            return 0.0 * tensor.lengths

    assert parse_measure("PlainPlugin(k=2)@3") == PlainPlugin(k=2, cutoff=3)
    with pytest.raises(ValueError, match=r"^'PlainPlugin\(k=0\)': PlainPlugin: k must be a"):
        parse_measure("PlainPlugin(k=0)")
    # what every measure has is checked all the same: the cutoff, the condensed variant
    with pytest.raises(MeasureValueError) as info:
        parse_measure("PlainPlugin@0")
    assert info.value.param == "cutoff"
    with pytest.raises(MeasureTypeError) as info:
        PlainPlugin(judged_only="yes")
    assert str(info.value) == "PlainPlugin: judged_only must be true or false, got 'yes'"


def test_a_plugin_measure_may_declare_and_raise_param_errors(registry):
    from metaeval._constraints import Interval

    @register
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Declared(Measure):
        k: int = 1
        m: int = 2
        name = "DeclaredPlugin"
        _constraints = {"k": Interval(numbers.Integral, 1)}

        def _validate(self):
            if self.m < self.k:
                raise ParamError("m", f"must be >= k ({self.k}), got {self.m}")

        def _compute(self, tensor):
            return 0.0 * tensor.lengths

    assert "k" in Declared.param_constraints() and "judged_only" in Declared.param_constraints()
    with pytest.raises(MeasureValueError) as info:
        parse_measure("DeclaredPlugin(k=0)")
    assert (info.value.param, info.value.owner) == ("k", Declared)
    with pytest.raises(MeasureValueError) as info:
        parse_measure("DeclaredPlugin(k=3)")
    assert info.value.param == "m"
    assert str(info.value) == "'DeclaredPlugin(k=3)': DeclaredPlugin: m must be >= k (3), got 2"

    # a constraint for a parameter the class does not have is found when it is registered
    with pytest.raises(TypeError, match="names 'kk', which is not a field"):

        @register
        @dataclasses.dataclass(frozen=True, kw_only=True)
        class Typo(Measure):
            k: int = 1
            name = "TypoPlugin"
            _constraints = {"kk": Interval(numbers.Integral, 1)}


# ---------------------------------------------------------- no routing by message text
_ERR = r"(?:err|error|exc|exception|ex|e)"
ROUTING = re.compile(
    rf"str\({_ERR}\)\.startswith"
    rf"|re\.(?:match|search|fullmatch)\([^\n]*str\({_ERR}\)"
    rf"|\bin str\({_ERR}\)(?!\.)"
    r"|\.args\[0\]\.startswith"
)


def test_no_error_is_told_apart_by_its_message_text():
    assert ROUTING.search('if "k" in str(err):') and ROUTING.search("re.match(r'\\w+', str(err))")
    found = []
    for folder in ("metaeval", "simulators"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if ROUTING.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "errors routed by their message text:\n" + "\n".join(found)
