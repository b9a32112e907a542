"""One rule for duplicate names in every registry (measures, degraders, criteria, report
sections, claim checks, analytic tests): a second owner is refused with both files named; the
same file imported again after an edit replaces its own entries."""

from __future__ import annotations

import pytest

from metaeval._registry import Registry, RegistryError
from metaeval.measures import load_plugin

DEGRADER = '''
from dataclasses import dataclass
from typing import ClassVar
import numpy as np
from simulators.degraders import Degrader, register_degrader

@register_degrader
@dataclass(frozen=True, kw_only=True)
class KeepAll(Degrader):
    """Keeps every judgment ({tag})."""
    rates: tuple = (50,)
    name: ClassVar[str] = "keep_all"
    level_field: ClassVar[str] = "rates"
    random: ClassVar[bool] = False
    def levels(self):
        return list(self.rates)
    def _trial(self, qrels, tensor, rng):
        return {{r: np.ones(len(qrels), bool) for r in self.rates}}
'''

CRITERION = '''
from dataclasses import dataclass
from typing import ClassVar
from metaeval.study import Criterion, register_criterion

@register_criterion
@dataclass(frozen=True, kw_only=True)
class Nothing(Criterion):
    """Computes nothing ({tag})."""
    kind: ClassVar[str] = "nothing"
    def compute(self, ctx, measures):
        return {{}}
'''

MEASURE = '''
from dataclasses import dataclass
import numpy as np
from metaeval.measures import Measure, register

@register
@dataclass(frozen=True, kw_only=True)
class Zero(Measure):
    """Always 0 ({tag})."""
    name = "ZeroDup"
    def compute(self, tensor):
        return np.zeros((tensor.n_runs, tensor.n_topics))
'''


@pytest.fixture
def registries(registry):
    """Every registry as it is, restored after the test (measures by ``registry``)."""
    from metaeval.study.criteria import base as criteria
    from simulators import degraders

    kept = [(r, r.snapshot()) for r in (degraders._REGISTRY, criteria._REGISTRY)]
    yield
    for r, state in kept:
        r.restore(state)


@pytest.mark.parametrize(
    "source, what, name", [(DEGRADER, "degrader", "keep_all"), (CRITERION, "criterion", "nothing"),
                           (MEASURE, "measure", "ZeroDup")]
)  # fmt: skip
def test_two_plugin_files_with_the_same_name_are_refused_naming_both(
    tmp_path, registries, source, what, name
):
    first, second = tmp_path / "first.py", tmp_path / "second.py"
    first.write_text(source.format(tag="first"))
    second.write_text(source.format(tag="second"))  # the same class name, another file
    load_plugin(first)
    with pytest.raises(RegistryError) as err:
        load_plugin(second)
    message = str(err.value)
    assert f"a {what} named {name!r} is already registered by" in message
    assert str(first) in message and str(second) in message and "\n" not in message
    # the first file edited and imported again replaces its own entry: no error
    first.write_text(source.format(tag="first, edited"))
    assert load_plugin(first) is True


def test_registry_rule_and_aliases():
    reg = Registry("thing")

    def a():
        pass

    def b():
        pass

    reg.add("x", a, aliases=("ex",))
    assert reg["ex"] is a and "ex" in reg and reg.alias_of("ex") == "x"
    reg.add("x", a)  # the same object again
    with pytest.raises(RegistryError, match="a thing named 'ex' is already registered by"):
        reg.add("y", b, aliases=("ex",))
    assert list(reg) == ["x"] and reg.as_dict() == {"x": a}
