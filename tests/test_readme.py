"""The README's code runs as shown: every ```python block is a program that exits 0, or
a test module (its first line names its file) that passes.

A ```text block right after a program is what it prints. The README starts with
the two make commands.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests._programs import run_offline, run_offline_tests

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)


def programs(markdown: str) -> list[tuple[str, str | None, int]]:
    """Each python block, with the text block that follows it if nothing comes between."""
    found = []
    fenced = list(FENCE.finditer(markdown))
    for index, match in enumerate(fenced):
        if match[1] != "python":
            continue
        shown = None
        following = fenced[index + 1] if index + 1 < len(fenced) else None
        if (
            following is not None
            and following[1] == "text"
            and not markdown[match.end() : following.start()].strip()
        ):
            shown = following[2]
        found.append((match[2], shown, markdown.count("\n", 0, match.start()) + 1))
    return found


PROGRAMS = programs(README)


def test_the_readme_starts_with_the_two_make_commands() -> None:
    first = FENCE.search(README)
    assert first is not None and README.startswith(f"# agentos\n\n{first[0]}")
    assert first[1] == ""
    assert [line.split()[:2] for line in first[2].splitlines()] == [
        ["make", "run"],
        ["make", "test"],
    ]


def test_the_readme_has_programs() -> None:
    assert len(PROGRAMS) >= 2


@pytest.mark.parametrize(
    ("code", "shown"),
    [(code, shown) for code, shown, _ in PROGRAMS],
    ids=[f"line-{line}" for _, _, line in PROGRAMS],
)
def test_each_python_block_runs_offline(code: str, shown: str | None, tmp_path: Path) -> None:
    """A block is a program that exits 0, or (first line ``# test_x.py``) a test module
    that passes under pytest, offline, its cassette from ``examples/cassettes``."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")  # what a program may name
    named = re.match(r"# (test_\w+\.py)\n", code)
    if named is None:
        program = tmp_path / "readme_block.py"
        program.write_text(code)
        done = run_offline(program, tmp_path)
    else:
        (tmp_path / named[1]).write_text(code)
        shutil.copytree(tmp_path / "examples" / "cassettes", tmp_path / "cassettes")
        done = run_offline_tests(tmp_path / named[1], tmp_path)
        assert "1 passed" in done.stdout, done.stdout
    assert done.returncode == 0, done.stdout + done.stderr
    if shown is not None:
        assert done.stdout == shown
