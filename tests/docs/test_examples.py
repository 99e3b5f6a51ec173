"""Every program in ``examples/`` runs offline, exits 0 and says what it shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.cli import agentos
from tests.support.programs import run_offline

FOLDER = ROOT / "examples"
EXAMPLES = sorted([*FOLDER.glob("*.py"), FOLDER / "scripted_model" / "conversation.py"])
"""The programs: each at the top of ``examples/``, and those of a folder of their own."""

EXPECTED = {
    "two_sessions.py": [
        "alice < The crunch is running in the background; I will tell you when it ends.",
        "alice < 4.",
        'program: alice\'s crunch is running, latest progress {"percent": 50, "stage": "indexing"}',
        "alice < The crunch is running: 50%, indexing.",
        "  bob < Cancelled it (it was running).",
        "alice < The q3 crunch is done: 1200 rows, total 48213.5.",
        "program: alice's crunch of 'q3' is completed",
        "program: bob's crunch of 'all' is cancelled (cancelled by the model)",
    ],
    "scripted_model/conversation.py": [
        "  you > Please download the 2024 archive.",
        "agent < Starting the download of the 2024 archive.",
        "agent < It is downloading in the background; ask me anything meanwhile.",
        "program: the download of 2024 is running",
        "  you > While that runs: how many days has a leap year?",
        "agent < 366. (The download is still running.)",
        "  you > Actually, cancel the download.",
        "agent < Cancelled the download (it was running).",
        "program: the download of 2024 is cancelled (cancelled by the model)",
    ],
}
"""Lines each example prints, in this order (others may come between)."""
SHOWN_IN_README = {"two_sessions.py"}
"""Examples whose whole output README.md shows, as a ```text block."""


def name(path: Path) -> str:
    return path.relative_to(FOLDER).as_posix()


def test_every_example_has_its_expected_lines() -> None:
    assert EXAMPLES, "examples/ holds no program"
    assert sorted(EXPECTED) == [name(path) for path in EXAMPLES]


def test_examples_use_the_public_api_only() -> None:
    """``agentos`` and ``agentos.testing``: no private module, nor the inner packages."""
    private = re.compile(
        r"\b(?:agentos|components|systems)\._[a-z]|^\s*(?:from|import) (?:components|systems)\b",
        re.MULTILINE,
    )
    modules = {*EXAMPLES, *(FOLDER / "scripted_model").glob("*.py")}
    offenders = [name(path) for path in sorted(modules) if private.search(path.read_text())]
    assert offenders == []


@pytest.mark.parametrize("path", EXAMPLES, ids=name)
def test_the_example_runs_and_prints_what_it_shows(path: Path) -> None:
    done = run_offline(path, ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    positions = [lines.index(line) if line in lines else -1 for line in EXPECTED[name(path)]]
    assert -1 not in positions, done.stdout
    assert positions == sorted(positions), done.stdout
    if name(path) in SHOWN_IN_README:
        assert f"```text\n{done.stdout}```\n" in (ROOT / "README.md").read_text()


def test_the_scripted_agent_file_runs_from_the_command_line(env: dict[str, str]) -> None:
    """What the example's docstring says: its agent file runs offline from the command line
    too (``agentos chat --agent ...`` talks to it; ``run`` here, which a test can read)."""
    agent = FOLDER / "scripted_model" / "agent.toml"
    done = agentos(env, "run", "--agent", str(agent), "hello")
    assert done.code == 0, done
    assert done.json["answer"] == "I fetch yearly archives: say which year, and I download it."
