"""The demo behind ``make run`` shows what it says: concurrency, a cancel, a restart."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

TIMED = re.compile(r"^\s*\d+\.\d+s  (\S+)\s+(.*)$")
BOARD_HEADING = "dana's board (what the model reads):"


def offline_env() -> dict[str, str]:
    return {
        name: value
        for name, value in os.environ.items()
        if name not in {"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"}
    }


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path]:
    """One run of the demo (offline, with its own TMPDIR): its lines and that TMPDIR."""
    tmp = tmp_path_factory.mktemp("tmpdir")
    done = subprocess.run(
        [sys.executable, "-m", "agentos.demo"],
        cwd=ROOT,
        env={**offline_env(), "TMPDIR": str(tmp)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines(), tmp


def said_by(lines: list[str], who: str) -> list[str]:
    """What one speaker's lines say, without the time and the name."""
    return [m.group(2) for m in map(TIMED.match, lines) if m and m.group(1) == who]


def board_lines(lines: list[str]) -> list[str]:
    """The lines of the printed board: the untimed lines after its heading."""
    start = next(i for i, line in enumerate(lines) if line.endswith(BOARD_HEADING)) + 1
    end = next((i for i in range(start, len(lines)) if TIMED.match(lines[i])), len(lines))
    return lines[start:end]


def test_the_demo_survives_its_own_crash(demo: tuple[list[str], Path]) -> None:
    lines, _ = demo
    said = "\n".join(lines)
    assert "model: the scripted model (offline" in said
    weather = next(i for i, line in enumerate(lines) if "carol  <" in line)
    first_result = next(i for i, line in enumerate(lines) if "alice  < Ja" in line)
    assert weather < first_result, "carol was answered while alice's calendars ran"
    assert "carol  < Oslo: clear, 20 °C." in said
    assert "alice  < 4." in said
    assert "alice  < Cancelled Joe's lookup (it was running)." in said
    assert "stopping the process now (SIGKILL)" in said
    after = said.split("a new process opens the same database")[1]
    assert "fetch_calendar(Joe, stall_at=40): cancelled" in after
    assert "fetch_calendar(Jane, seconds=1.5): completed" in after
    assert "write_report(pages=60): orphaned" in after
    assert "The report was lost in the restart" in after


def test_the_capabilities_the_model_used_are_shown(demo: tuple[list[str], Path]) -> None:
    capabilities = ("· get_tool_call_status(", "· cancel_tool_call(")
    alice = [line for line in said_by(demo[0], "alice") if line.startswith(capabilities)]
    assert len(alice) == 2, alice
    status, cancel = (re.sub(r"toolu_\w+", "ID", line) for line in alice)
    assert status == (
        "· get_tool_call_status(tool_call_id=ID) -> running, "
        'latest: "Joe\'s calendar server stopped answering"'
    )
    assert (
        cancel == '· cancel_tool_call(tool_call_id=ID, reason="stalled") -> cancelled (was running)'
    )
    assert "\x1b[" not in "".join(demo[0]), "no ANSI codes when stdout is not a terminal"


def test_each_call_shows_its_start_and_end(demo: tuple[list[str], Path]) -> None:
    alice = said_by(demo[0], "alice")
    calls = [line for line in alice if line.startswith("· fetch_calendar(")]
    started = [i for i, line in enumerate(calls) if line.endswith(" started")]
    ended = [i for i, line in enumerate(calls) if line.endswith((" completed", " cancelled"))]
    assert len(started) == len(ended) == 3
    assert max(started) < min(ended), "the three lookups run at once"
    assert "· fetch_calendar(Joe, stall_at=40) cancelled" in calls
    assert "· weather(Oslo) completed" in said_by(demo[0], "carol")
    assert "· write_report(pages=60) started" in said_by(demo[0], "bob")


def test_a_board_session_answers_while_its_calendars_run(demo: tuple[list[str], Path]) -> None:
    lines, _ = demo
    dana = said_by(lines, "dana")
    weather = dana.index("< Bergen: rain, 22 °C.")
    meeting = next(i for i, line in enumerate(dana) if line.startswith("< ") and "meet at" in line)
    ended = [
        i
        for i, line in enumerate(dana)
        if line.startswith("· fetch_calendar(") and line.endswith(" completed")
    ]
    assert len(ended) == 2, dana
    assert weather < min(ended), "answered while the lookups ran"
    assert max(ended) < meeting, "the meeting time once both lookups landed"
    assert len([line for line in dana if line.startswith("< ")]) == 3, dana
    assert sum(line.endswith(BOARD_HEADING) for line in lines) == 1, "the board is printed once"
    board = "\n".join(board_lines(lines))
    assert "tool_use" not in board and "tool_result" not in board
    assert ">>" not in board, "drawn as it stands, no turn's note"
    for call in ('fetch_calendar(person="Ann"', 'fetch_calendar(person="Ben"', "weather("):
        assert call in board, call
    assert "Ann and Ben can meet at 10:00-11:00" in board


def test_the_output_holds_no_python(demo: tuple[list[str], Path]) -> None:
    board = set(board_lines(demo[0]))  # the board shows the tools' JSON results, as the model reads
    said = "\n".join(line for line in demo[0] if line not in board)
    for raw in ("True", "False", "None", "{", "}", "write_report(write_report)"):
        assert raw not in said, raw


def test_the_demo_removes_its_temp_folder(demo: tuple[list[str], Path]) -> None:
    assert list(demo[1].iterdir()) == []


def test_the_demo_names_the_model_it_talks_to() -> None:
    code = (
        "import sys, agentos.demo as d; print(d.which_model()); print('anthropic' in sys.modules)"
    )

    def run(**extra: str) -> list[str]:
        env = {**offline_env(), **extra}
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    offline = run()
    assert offline[0].startswith("the scripted model (offline")
    url = "http://127.0.0.1:9"
    local = run(ANTHROPIC_API_KEY="x", ANTHROPIC_BASE_URL=url)
    assert local[0].startswith(f"Anthropic API at {url} (ANTHROPIC_BASE_URL)"), local
    assert "Claude" in run(ANTHROPIC_API_KEY="x")[0]
    assert offline[1] == local[1] == "False", "naming the model imports no SDK"


def test_capability_lines_are_dim_on_a_terminal_only() -> None:
    code = "import agentos.demo as d; d.say('alice', 'a capability', dim=True); d.say('bob', 'b')"
    controller, terminal = pty.openpty()
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=offline_env(), stdout=terminal, timeout=60
    )
    os.close(terminal)
    shown = os.read(controller, 4096).decode()
    os.close(controller)
    assert done.returncode == 0
    assert "alice  \x1b[2ma capability\x1b[0m" in shown
    assert "bob    b" in shown and shown.count("\x1b[") == 2


@pytest.mark.parametrize("part", ["board", "tools"])
def test_a_part_of_the_demo_run_alone_says_what_to_run(part: str) -> None:
    """``python -m agentos.demo.board`` used to print nothing and exit 0."""
    done = subprocess.run(
        [sys.executable, "-m", f"agentos.demo.{part}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert f"agentos.demo.{part} holds" in done.stderr
    assert "python -m agentos.demo" in done.stderr
    assert "Warning" not in done.stderr, done.stderr
