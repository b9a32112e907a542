"""The distribution ships every package and the study files."""

from __future__ import annotations

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_is_listed():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for top in ("metaeval", "simulators")
        for p in (ROOT / top).rglob("__init__.py")
    }
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    assert config["package-dir"]["metaeval.studies"] == "studies"


def test_the_quickstart_study_is_found():
    from metaeval.study.spec import study_file

    assert study_file("quickstart.toml").read_text().startswith("# The quickstart")
