"""The architecture as import rules: components <- systems <- agentos, and inside agentos
one private package per layer, each importing only the layers below it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agentos
from tests.support import ROOT

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


LAYERS = (
    (
        "leaves",
        ("agentos._errors", "agentos._log", "agentos._gc", "agentos._public", "agentos._version"),
    ),
    ("kernel", ("agentos._kernel",)),
    ("runners", ("agentos._runners",)),
    ("model", ("agentos._model",)),
    ("store", ("agentos._store",)),
    ("turns", ("agentos._turns",)),
    ("toolsets", ("agentos._toolsets",)),
    ("board", ("agentos._board",)),
    ("sessions", ("agentos._sessions",)),
    ("host", ("agentos._host",)),
    (
        "library faces",
        (
            "agentos",
            "agentos.testing",
            "agentos.turns",
            "agentos.board",
            "agentos.stores",
            "agentos.pytest_plugin",
        ),
    ),
    ("demo", ("agentos.demo",)),
    ("front ends", ("agentos._ui",)),
    ("front-end faces", ("agentos.cli", "agentos.web", "agentos.tui", "agentos.a2a")),
)
"""Bottom first. A module may import its own layer and those above it in this list."""

FRONT_ENDS = ("agentos._ui", "agentos.cli", "agentos.web", "agentos.tui", "agentos.a2a")


def module_name(path: Path) -> str:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__")


def in_package(module: str, package: str) -> bool:
    return module == package or (package != "agentos" and module.startswith(package + "."))


def layer_of(module: str) -> int:
    """The index in ``LAYERS`` of the layer ``module`` belongs to (the longest match wins)."""
    matches = [
        (len(package), index)
        for index, (_, packages) in enumerate(LAYERS)
        for package in packages
        if in_package(module, package)
    ]
    assert matches, f"{module} belongs to no layer: give it one in LAYERS"
    return max(matches)[1]


def agentos_imports(path: Path) -> list[tuple[str, list[str]]]:
    """Every ``from agentos... import names`` in ``path`` (in functions and type checks too)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "agentos":
                found.append((node.module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names if a.name.split(".")[0] == "agentos"]
    return found


def imported_modules(module: str, names: list[str]) -> list[str]:
    """``from agentos import _x`` imports the module ``agentos._x``; other names their module."""
    if module == "agentos":
        return [f"agentos.{name}" if name.startswith("_") else "agentos" for name in names]
    return [module]


MODULES = sorted((ROOT / "agentos").rglob("*.py"))


@pytest.mark.parametrize(("layer", "packages"), LAYERS, ids=[name for name, _ in LAYERS])
def test_a_layer_imports_only_the_layers_below_it(layer: str, packages: tuple[str, ...]) -> None:
    index = LAYERS.index((layer, packages))
    offenders = {}
    for path in MODULES:
        if layer_of(module_name(path)) != index:
            continue
        above = [
            imported
            for module, names in agentos_imports(path)
            for imported in imported_modules(module, names)
            if layer_of(imported) > index
        ]
        if above:
            offenders[module_name(path)] = above
    assert offenders == {}


def test_the_layer_check_catches_an_import_from_above() -> None:
    assert layer_of("agentos._kernel.runtime") < layer_of("agentos._sessions.session")
    assert layer_of("agentos._ui.web.app") > layer_of("agentos")
    assert layer_of("agentos.cli") > layer_of("agentos._ui.cli.main")
    assert imported_modules("agentos", ["_errors", "Runtime"]) == ["agentos._errors", "agentos"]


def reached_from(module: str) -> set[str]:
    """The modules of ours ``module`` imports, directly or through others of ours."""
    by_name = {module_name(path): path for path in MODULES}
    seen: set[str] = set()
    todo = [module]
    while todo:
        for imported, names in agentos_imports(by_name[todo.pop()]):
            for found in imported_modules(imported, names):
                if found in by_name and found not in seen:
                    seen.add(found)
                    todo.append(found)
    return seen


def test_an_agent_config_is_data_and_does_not_import_the_runtime() -> None:
    reached = reached_from("agentos._turns.agent_config")
    assert "agentos._turns.capabilities" in reached
    assert reached.isdisjoint(
        {"agentos._kernel.runtime", "agentos._sessions.toolbox", "agentos._sessions.session"}
    )


def private_reach(path: Path) -> list[str]:
    """What a front-end module imports of agentos that is not public (nor its own)."""
    found = []
    for module, names in agentos_imports(path):
        if in_package(module, "agentos._ui"):
            continue
        if module == "agentos":
            found += [f"agentos.{name}" for name in names if name not in agentos.__all__]
        elif any(part.startswith("_") for part in module.split(".")) or module == "agentos.testing":
            found.append(module)
    return found


def test_the_front_ends_use_only_public_names() -> None:
    """The CLI, the page and the terminal UI are built as a user's program would be."""
    offenders = {}
    for path in MODULES:
        name = module_name(path)
        if any(in_package(name, package) for package in FRONT_ENDS):
            reach = private_reach(path)
            if reach:
                offenders[name] = reach
    assert offenders == {}


def test_the_public_names_check_catches_a_reach_in(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text(
        "from agentos import Host, _errors\nfrom agentos._kernel.runtime import Runtime\n"
        "from agentos.testing import Puppet\nfrom agentos._ui.cli.common import CliError\n"
    )
    assert private_reach(module) == [
        "agentos._errors",
        "agentos._kernel.runtime",
        "agentos.testing",
    ]


def test_the_session_shell_drives_one_machine_interface() -> None:
    """Only ``machines.py`` names the two machines, to build one; the rest sees a ``Machine``."""
    naming = {}
    for path in sorted((ROOT / "agentos" / "_sessions").glob("*.py")):
        named = {
            name
            for _, names in agentos_imports(path)
            for name in names
            if name in {"TurnMachine", "BoardMachine"}
        }
        if named:
            naming[path.name] = sorted(named)
        assert "isinstance(self._turn" not in path.read_text(), path.name
    assert naming == {"machines.py": ["BoardMachine", "TurnMachine"]}


MODULE_LINES = 458
"""A module holds one idea; past this many lines it holds two."""


def test_no_module_outgrows_one_idea() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for package in ("agentos", "systems", "components")
        for path in (ROOT / package).rglob("*.py")
        if (lines := len(path.read_text().splitlines())) > MODULE_LINES
    }
    assert long == {}, "split these modules"
