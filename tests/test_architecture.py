"""The dependency direction components <- systems <- agentos is the architecture."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "components": {"systems", "agentos"},
    "systems": {"agentos"},
}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            names.add("<dynamic import>")
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_run_one_way(package: str) -> None:
    offenders = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        bad = imported_packages(path) & (FORBIDDEN[package] | {"<dynamic import>"})
        if bad:
            offenders[str(path.relative_to(ROOT))] = sorted(bad)
    assert offenders == {}


def test_the_check_catches_a_wrong_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("from agentos import Runtime\nimport systems.x\n")
    assert imported_packages(module) == {"agentos", "systems"}


def test_components_import_nothing_of_ours_but_components() -> None:
    for path in (ROOT / "components").rglob("*.py"):
        ours = imported_packages(path) & {"agentos", "systems", "tests", "benchmarks"}
        assert not ours, path


def agentos_imports(module: str) -> set[str]:
    """The ``agentos._x`` modules ``module`` imports, directly or through others of ours."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        path = ROOT / (name.replace(".", "/") + ".py")
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found = node.module
            elif isinstance(node, ast.Import):
                found = node.names[0].name
            else:
                continue
            if found.startswith("agentos.") and found not in seen:
                seen.add(found)
                todo.append(found)
    return seen


def test_an_agent_config_is_data_and_does_not_import_the_runtime() -> None:
    reached = agentos_imports("agentos._turns.agent_config")
    assert "agentos._turns.capabilities" in reached
    assert reached.isdisjoint(
        {"agentos._kernel.runtime", "agentos._sessions.toolbox", "agentos._sessions.session"}
    )
