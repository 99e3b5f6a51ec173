"""An install that matches the job (issue 47): ``pip install agentos`` alone runs ``agentos
run`` and the demo offline, and ``make run`` installs only that, while ``make test`` (and
lint, bench) install every extra.

"Only the core dependencies" is checked without a second environment (which would need
the network): the command runs with every module that only an extra brings refused, as if
it were not installed (``tests/support/import_watch.py``). Those modules are found from the
installed metadata: the distributions the extras need, less those the core needs too,
and the modules only they hold.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import defaultdict
from collections.abc import Iterable
from functools import cache
from importlib.metadata import PackageNotFoundError
from importlib.metadata import distributions
from importlib.metadata import requires
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support import ROOT
from tests.support.import_watch import watched

EXTRAS = ("test", "ray", "postgres", "otel", "a2a")


def needed(name: str, extras: Iterable[str] = ()) -> set[str]:
    """The installed distributions ``name`` needs with ``extras``, itself included, as
    canonical names."""
    found: set[str] = set()
    todo = [(name, frozenset(extras))]
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        distribution, wanted = todo.pop()
        if (distribution, wanted) in seen:
            continue
        seen.add((distribution, wanted))
        try:
            requirements = requires(distribution) or []
        except PackageNotFoundError:  # its marker is false here, so pip left it out
            continue
        found.add(canonicalize_name(distribution))
        for line in requirements:
            requirement = Requirement(line)
            marker = requirement.marker
            if marker is None or any(marker.evaluate({"extra": e}) for e in {"", *wanted}):
                todo.append((requirement.name, frozenset(requirement.extras)))
    return found


@cache
def extras_only_modules() -> tuple[str, ...]:
    """The outermost packages and modules that only the extras' distributions hold: a
    namespace package shared with the core is not refused, its parts only the extras
    bring are (``opentelemetry.sdk``: the core's own dependencies bring the API)."""
    extras_only = needed("agentos", EXTRAS) - needed("agentos")
    holders: dict[str, set[str]] = defaultdict(set)
    for distribution in distributions():
        name = canonicalize_name(distribution.metadata["Name"])
        for file in distribution.files or ():
            parts = file.parts
            if parts[0] == ".." or parts[0].endswith((".dist-info", ".data")):
                continue  # scripts, metadata
            packages = [p for p in parts[:-1] if p != "__pycache__"]
            for depth in range(1, len(packages) + 1):
                holders[".".join(packages[:depth])].add(name)
            if len(parts) == 1 and file.suffix in {".py", ".so", ".pyd"}:
                holders[parts[0].split(".")[0]].add(name)
    refused = {module for module, held_by in holders.items() if held_by <= extras_only}
    outermost = (m for m in refused if not any(m.startswith(r + ".") for r in refused))
    return tuple(sorted(outermost))


def with_core_only(
    environment: dict[str, str], tmp_path: Path, module: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE ARGS`` with the extras' modules refused."""
    report = tmp_path / "imports.json"
    done, _ = watched(environment, extras_only_modules(), module, *args, report=report)
    return done


def test_the_extras_modules_are_the_ones_refused() -> None:
    """The check refuses what the extras bring, and nothing the core needs."""
    refused = set(extras_only_modules())
    extras = {"ray", "asyncpg", "playwright", "pytest", "hypothesis", "opentelemetry.sdk"}
    assert extras | {"opentelemetry.exporter", "opentelemetry.proto"} <= refused
    assert not {"anthropic", "mcp", "textual", "agentos", "opentelemetry"} & refused


def test_agentos_run_needs_no_extra(env: dict[str, str], tmp_path: Path) -> None:
    prompt = "What's the weather in Paris, and check Jane's calendar (1s)"
    done = with_core_only(env, tmp_path, "agentos.cli", "run", "--wait-for-async", prompt)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["status"] == "done"
    assert "Paris" in "\n".join(answer["messages"]), answer
    assert "Jane is free" in answer["answer"], answer


def test_agentos_a2a_without_its_extra_says_how_to_get_it(
    env: dict[str, str], tmp_path: Path
) -> None:
    done = with_core_only(env, tmp_path, "agentos.cli", "a2a")
    assert done.returncode == 1, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: agentos a2a needs the A2A SDK (")
    assert line.endswith("pip install 'agentos[a2a]'")


def test_the_demo_needs_no_extra(env: dict[str, str], tmp_path: Path) -> None:
    """What ``make run`` runs on the core install."""
    demo_env = {**env, "TMPDIR": str(tmp_path)}
    done = with_core_only(demo_env, tmp_path, "agentos.demo")
    assert done.returncode == 0, done.stderr
    assert "The report was lost in the restart" in done.stdout


def make_dry_run(folder: Path, target: str) -> list[str]:
    """The commands ``make TARGET`` would run in ``folder`` (``make -n``)."""
    done = subprocess.run(
        ["make", "-n", target], cwd=folder, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def installs(commands: list[str]) -> list[str]:
    return [c.split(" install ", 1)[1] for c in commands if " -m pip install " in c]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_installs_the_package_alone_and_make_test_every_extra(tmp_path: Path) -> None:
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    changed(tmp_path / "pyproject.toml", at=1)
    every_extra = f"--quiet -e '.[{','.join(EXTRAS)}]'"

    fresh = ["--quiet --upgrade pip", "--quiet --no-compile -e ."]
    assert installs(make_dry_run(tmp_path, "run")) == fresh
    tested = installs(make_dry_run(tmp_path, "test"))
    assert every_extra in tested  # and fastmcp(-tasks), in venvs of their own (servers tests run)
    assert tested[-1] == "--quiet fastmcp==4.1.6"
    assert tested[-2] == "--quiet fastmcp-tasks==4.1.4"
    assert tested[-3] == "--quiet 'google-adk[a2a]==2.13.0' a2a-sdk==1.3.0"  # ADK's A2A client
    assert installs(make_dry_run(tmp_path, "bench"))[-1] == every_extra

    venv = tmp_path / ".venv"
    (venv / "bin").mkdir(parents=True)
    changed(venv / "bin" / "python", at=2)
    changed(venv / ".installed-core", at=2)
    assert installs(make_dry_run(tmp_path, "run")) == []
    assert installs(make_dry_run(tmp_path, "lint")) == [every_extra]

    changed(venv / ".installed", at=2)  # make test filled it: make run installs no less
    assert installs(make_dry_run(tmp_path, "run")) == []
    changed(tmp_path / "pyproject.toml", at=3)
    assert installs(make_dry_run(tmp_path, "run")) == [every_extra]


def changed(path: Path, at: int) -> None:
    """``path`` (made if missing) last changed at ``at`` (on a coarse clock of its own)."""
    path.touch()
    os.utime(path, (1_000_000_000 + 100 * at,) * 2)
