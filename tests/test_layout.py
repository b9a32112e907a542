"""The layout shows the architecture: no module of the study and report layers over ~600 lines,
and no import cycle among the package's modules (module-level imports)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("metaeval", "simulators")


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


@pytest.mark.parametrize("layer", ["metaeval/study", "metaeval/report"])
def test_no_module_of_the_study_and_report_layers_is_over_600_lines(layer):
    long = {
        str(p.relative_to(ROOT)): n
        for p in sorted((ROOT / layer).rglob("*.py"))
        if (n := len(p.read_text().splitlines())) > 620
    }
    assert not long, f"split these along their seams: {long}"


def test_no_import_cycle():
    """Module-level imports only (an import inside a function runs when it is called, after
    every module is loaded); importing ``a.b`` also runs the package ``a``."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.parse(path.read_text()).body:
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                    base = f"{base}.{node.module}" if node.module else base
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                # the module itself and every package on its way are imported
                parts = target.split(".")
                for i in range(1, len(parts) + 1):
                    dep = ".".join(parts[:i])
                    if dep in graph and dep != name and not name.startswith(dep + "."):
                        graph[name].add(dep)
    # Tarjan-free check: depth-first search for a back edge
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                return stack[stack.index(d) :] + [d]
            if d not in state and (cycle := visit(d)):
                return cycle
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (cycle := visit(m)):
            pytest.fail("import cycle: " + " -> ".join(cycle))
