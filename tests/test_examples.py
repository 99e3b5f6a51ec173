"""Every program in ``examples/`` runs offline, exits 0 and says what it shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests._programs import run_offline

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))

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
}
"""Lines each example prints, in this order (others may come between)."""
SHOWN_IN_README = {"two_sessions.py"}
"""Examples whose whole output README.md shows, as a ```text block."""


def test_every_example_has_its_expected_lines() -> None:
    assert EXAMPLES, "examples/ holds no program"
    assert sorted(EXPECTED) == [path.name for path in EXAMPLES]


def test_examples_use_the_public_api_only() -> None:
    """``agentos`` and ``agentos.testing``: no private module, nor the inner packages."""
    private = re.compile(
        r"\b(?:agentos|components|systems)\._[a-z]|^\s*(?:from|import) (?:components|systems)\b",
        re.MULTILINE,
    )
    offenders = [path.name for path in EXAMPLES if private.search(path.read_text())]
    assert offenders == []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.name)
def test_the_example_runs_and_prints_what_it_shows(path: Path) -> None:
    done = run_offline(path, ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    positions = [lines.index(line) if line in lines else -1 for line in EXPECTED[path.name]]
    assert -1 not in positions, done.stdout
    assert positions == sorted(positions), done.stdout
    if path.name in SHOWN_IN_README:
        assert f"```text\n{done.stdout}```\n" in (ROOT / "README.md").read_text()
