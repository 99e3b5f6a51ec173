"""Every page of the docs works as shown (issue 47): README.md and each docs/*.md.

- Every ```python block runs: a program that exits 0 (and prints exactly the ```text
  block right after it, when there is one), or a test module, first line ``# test_x.py``,
  that passes under pytest with the examples' cassettes, offline.
- A block whose info string says ``title="PATH"`` shows that file of the repository, as
  it is (it is not run here: the example's own tests run it).
- A ```sh block whose first line is ``cd examples/DIR`` is typed as a user would, in a
  copy of ``examples/``: every ``agentos`` line exits 0 (``SESSION`` is the session the
  last ``run`` started). Every ``agentos`` command and option any block shows is one
  the CLI has.
- Every relative link or image points at a file that exists (and an anchor at a heading).
- No page cites the design documents the project grew from by number: the docs say
  their ideas in their own words.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.programs import run_offline
from tests.support.programs import run_offline_tests
from tests.support.ray_tools import RAY_TESTS

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([\w-]*)([^\n]*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)
TITLE = re.compile(r'title="([^"]+)"')
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: its language, its file (``title=``), its text."""

    page: Path
    line: int
    language: str
    title: str | None
    code: str
    shown: str | None
    """A program's output: the ```text block right after it, nothing between."""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    markdown = page.read_text()
    fenced = list(FENCE.finditer(markdown))
    found = []
    for index, match in enumerate(fenced):
        following = fenced[index + 1] if index + 1 < len(fenced) else None
        shown = None
        if (
            following is not None
            and following[1] == "text"
            and not markdown[match.end() : following.start()].strip()
        ):
            shown = following[3]
        title = TITLE.search(match[2])
        line = markdown.count("\n", 0, match.start()) + 1
        found.append(Block(page, line, match[1], title[1] if title else None, match[3], shown))
    return found


ALL = [block for page in PAGES for block in blocks(page)]
PROGRAMS = [block for block in ALL if block.language == "python" and block.title is None]
FILES = [block for block in ALL if block.title is not None]
WALKTHROUGHS = [
    block for block in ALL if block.language == "sh" and block.code.startswith("cd examples/")
]


def test_the_docs_have_programs_walkthroughs_and_shown_files() -> None:
    pages = {block.page.name for block in PROGRAMS}
    assert {"README.md", "tools.md", "sessions-and-hosts.md", "testing.md"} <= pages
    assert WALKTHROUGHS and FILES


def grouped(block: Block) -> object:
    """A block that starts Ray runs on the Ray tests' pytest-xdist worker: a Ray test that
    looks for a cluster (``RAY_ADDRESS=auto``) finds any running one, this block's too."""
    return pytest.param(block, marks=RAY_TESTS) if "RayRunner" in block.code else block


@pytest.mark.parametrize(
    "block", [grouped(block) for block in PROGRAMS], ids=lambda block: block.where
)
def test_each_python_block_runs_offline(block: Block, tmp_path: Path) -> None:
    """A program that exits 0, or (first line ``# test_x.py``) a test module that passes
    under pytest, offline, its cassette from ``examples/cassettes``."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")  # what a program may name
    named = re.match(r"# (test_\w+\.py)\n", block.code)
    if named is None:
        program = tmp_path / "docs_block.py"
        program.write_text(block.code)
        done = run_offline(program, tmp_path)
    else:
        (tmp_path / named[1]).write_text(block.code)
        shutil.copytree(tmp_path / "examples" / "cassettes", tmp_path / "cassettes")
        done = run_offline_tests(tmp_path / named[1], tmp_path)
        assert "1 passed" in done.stdout, done.stdout
    assert done.returncode == 0, done.stdout + done.stderr
    if block.shown is not None:
        assert done.stdout == block.shown


@pytest.mark.parametrize("block", FILES, ids=lambda block: block.where)
def test_a_block_that_names_a_file_shows_it_as_it_is(block: Block) -> None:
    assert block.title is not None
    path = ROOT / block.title
    assert path.is_file(), f"{block.where}: no file {block.title}"
    assert block.code.rstrip("\n") == path.read_text().rstrip("\n"), block.where


@pytest.mark.parametrize("block", WALKTHROUGHS, ids=lambda block: block.where)
def test_each_walkthrough_runs_as_typed(block: Block, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    first, *lines = block.code.splitlines()
    here = tmp_path / first.removeprefix("cd ").strip()
    assert here.is_dir(), first
    env = {name: value for name, value in os.environ.items() if name != "ANTHROPIC_API_KEY"}
    env["AGENTOS_DB"] = str(tmp_path / "agentos.db")
    names: dict[str, str] = {}
    for line in lines:
        words = shlex.split(line, comments=True)
        assert words[0] == "agentos", line
        command = [sys.executable, "-m", "agentos.cli", *(names.get(w, w) for w in words[1:])]
        done = subprocess.run(
            command, cwd=here, env=env, capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, (line, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, done.stderr
        if words[1] == "run":
            names["SESSION"] = json.loads(done.stdout)["session_id"]


def agentos_lines() -> list[tuple[str, list[str]]]:
    """Each line of a shell block that runs ``agentos``, split as a shell would."""
    found = []
    for block in ALL:
        if block.language != "sh":
            continue
        for line in block.code.splitlines():
            if line.startswith("agentos "):
                found.append((block.where, shlex.split(line, comments=True)))
    return found


def cli_help(*words: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "agentos.cli", *words, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_the_docs_name_no_command_or_option_the_cli_lacks() -> None:
    lines = agentos_lines()
    assert len(lines) >= 20
    top = cli_help()
    helps: dict[str, str] = {}
    for where, words in lines:
        command = words[1]
        assert f"  {command} " in top, (where, words)
        if command not in helps:
            helps[command] = cli_help(command)
        for option in (word.split("=")[0] for word in words[2:] if word.startswith("--")):
            assert option in helps[command], (where, option)


def prose(page: Path) -> str:
    """A page without its fenced blocks and inline code: where links are."""
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", page.read_text()))


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings."""
    headings = re.findall(r"^#+ (.*)$", FENCE.sub("", page.read_text()), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_points_at_what_exists(page: Path) -> None:
    for target in LINK.findall(prose(page)):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: {target} is not there"
        if anchor:
            assert anchor in anchors(linked), f"{page.name}: {target}: no such heading"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_no_page_cites_the_design_documents_by_number(page: Path) -> None:
    """'seed 004', 'the seed spec': words a reader of the repository cannot follow."""
    cited = re.findall(r"[^\n]*\bseeds?\b[^\n]*", page.read_text(), re.IGNORECASE)
    assert cited == [], f"{page.name} cites a design document: {cited}"
