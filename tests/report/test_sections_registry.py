"""The registry of report sections and of claim check kinds: what a plugin reaches."""

import pandas as pd
import pytest

from metaeval.report import document as doc
from metaeval.report import register_section
from metaeval.report.model import Report
from metaeval.report.reader import StudyOutput
from metaeval.report.sections import registry
from metaeval.report.sections.generic import generic
from metaeval.study.spec import SimWorld, StudySpec, spec_as_dict


@pytest.fixture
def sections():
    """The registry as it is, restored after the test."""
    state = registry._SECTIONS.snapshot()
    yield registry
    registry._SECTIONS.restore(state)


def test_the_built_in_sections_are_registered_in_report_order():
    kinds = list(registry.registered_sections())
    assert kinds[:3] == ["robustness", "discriminative_power", "significance_changes"]
    assert kinds[-1] == "error_rates"
    assert registry.section_for("no_such_kind") is generic


def test_a_plugin_section_is_used_for_its_kind_and_a_second_owner_is_refused(sections):
    @register_section("my_kind")
    def mine(rep, rows):
        return [doc.heading("Mine"), doc.text(f"{len(rows)} rows")]

    assert sections.section_for("my_kind") is mine
    assert list(sections.registered_sections())[-1] == "my_kind"
    register_section("my_kind", mine)  # the same function again (a reloaded plugin): fine

    def other(rep, rows):
        return []

    with pytest.raises(ValueError, match="already registered"):
        register_section("my_kind", other)
    with pytest.raises(ValueError, match="identifier"):
        register_section("not a kind", other)


def test_a_plugin_kind_is_drawn_by_its_registered_section(sections):
    rows = pd.DataFrame(
        {
            "world": ["w", "w"],
            "degrader": ["", ""],
            "level": ["full", "full"],
            "kind": ["my_kind", "my_kind"],
            "criterion": ["c", "c"],
            "measure": ["AP", "P@5"],
            "other": ["", ""],
            "statistic": ["s", "s"],
            "x": [float("nan")] * 2,
            "value": [0.5, 0.6],
            "unit": ["u1", "u2"],
            "replicate": [0, 0],
            "trial": [0, 0],
        }
    )
    world = SimWorld("w", "trec_like", n_topics=2, n_systems=2)
    spec = spec_as_dict(
        StudySpec(name="s", seed=1, worlds=(world,), degraders=(), measures=(), criteria=())
    )
    rep = Report(StudyOutput(tables={"results": rows}, spec=spec))
    seen = []

    @register_section("my_kind")
    def mine(rep, rows):
        seen.append(len(rows))
        return [doc.heading("Mine")]

    kind_rows = rep.results[rep.results["kind"] == "my_kind"]
    blocks = registry.section_for("my_kind")(rep, kind_rows)
    assert seen == [2] and blocks[0].text == "Mine"


def test_claim_checks_are_typed_and_registered():
    from metaeval.report import claims

    assert set(claims.CHECKS) == {"order", "threshold", "trend"}
    assert claims.check_class("analytic") is claims.AnalyticCheck
    check = claims.from_dict({"kind": "order", "criterion": "c", "statistic": "s", "than": ["A"]})
    assert isinstance(check, claims.OrderCheck)
    assert check.to_dict()["kind"] == "order"
    assert claims.from_dict({"kind": "nope"}) is None


def test_a_check_refuses_values_it_cannot_judge(tmp_path):
    from metaeval.study import load_spec
    from metaeval.study.spec import SpecError
    from tests.study.conftest import SMALL

    base = SMALL.format(measures='["AP", "AP\'"]')
    for bad, where in (
        (
            'kind = "trend", measures = ["AP"], direction = "sideways", to = "20"',
            "direction: must be falls, rises or flat, got 'sideways'",
        ),
        ('kind = "order", greater = ["AP"], than = ["AP\'"], mode = "median"', "mode: must be"),
        (
            'kind = "order", greater = ["AP"], than = ["AP\'"], against_mode = "max"',
            "against_mode: must be",
        ),
    ):
        text = (
            base
            + f"""
[[claims]]
id = "bad"
text = "t"
check = {{ criterion = "robustness", statistic = "tau_b", {bad} }}
"""
        )
        (tmp_path / "bad.toml").write_text(text)
        with pytest.raises(SpecError, match=rf"claims\[0\]\.check\.{where}"):
            load_spec(tmp_path / "bad.toml")


SECTION_PLUGIN = '''
from dataclasses import dataclass
from typing import ClassVar
import numpy as np
from metaeval.report import document as doc, register_section
from metaeval.study import Criterion, register_criterion
from metaeval.study.criteria import rows

@register_criterion
@dataclass(frozen=True, kw_only=True)
class Spread(Criterion):
    """The spread of each measure's system means: a user's criterion, with its section."""
    kind: ClassVar[str] = "spread"
    default_levels: ClassVar[str] = "full"
    def compute(self, ctx, measures):
        return {"results": rows([(m, "", "spread", np.nan, float(np.ptp(ctx.means(ctx.scores(m), m))))
                                 for m in measures])}

@register_section("spread")
def spread_section(rep, rows):
    return [doc.heading("Spread of the system means"), doc.text(f"{len(rows)} values")]
'''


def test_metaeval_report_draws_a_plugin_criterion_with_its_own_section(tmp_path):
    """``metaeval report`` in a new process imports the study's plugin files, so a plugin
    criterion is drawn by the section the plugin registered, not as a plain table."""
    import subprocess
    import sys

    from metaeval.study import load_spec, run_study

    (tmp_path / "spread.py").write_text(SECTION_PLUGIN)
    (tmp_path / "s.toml").write_text(
        'schema = 1\n[study]\nname = "spread"\nseed = 1\nplugins = ["spread.py"]\n'
        'topic_resamples = 5\n[[worlds]]\nid = "sim"\nkind = "simulator"\nn_topics = 6\n'
        "n_systems = 4\nparams = { n_candidates = 100, rel_median = 8.0, depth = 40, "
        'pool_depth = 10 }\n[measures]\nnames = ["AP"]\n[[criteria]]\nkind = "spread"\n'
    )
    run_study(load_spec(tmp_path / "s.toml"), tmp_path / "out", quiet=True)
    done = subprocess.run(
        [sys.executable, "-m", "metaeval", "report", str(tmp_path / "out"), "--format", "md"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = (tmp_path / "out" / "report" / "index.md").read_text()
    assert "Spread of the system means" in report and "1 values" in report
