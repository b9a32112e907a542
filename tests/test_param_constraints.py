"""Bad parameter values, generated from the declared constraints (no case written by hand).

For every registered degrader, criterion kind and world parameter that declares a constraint
(``_constraints``), every value the constraint says it refuses (``invalid_examples()``) must

* make the constructor raise a :class:`ParamError` carrying the parameter (and the index of
  the faulty item of a list), with a one-line message naming it;
* and, put in a small study file, give a :class:`SpecError` naming the key path of that
  parameter (``degraders[0].levels[1]``, ``criteria[0].B``, ``worlds[0].params.depth``).

And no code of the package tells errors apart by their message text.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

import pytest

from metaeval._constraints import Constraint
from metaeval._validation import ParamError, ParamTypeError
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


def study(*, params: str = "", degrader: str = "", criterion: str = "") -> str:
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
