"""The ``agentos`` command line, run as a real program: commands, output and exit codes.

Every test runs ``python -m agentos.cli`` in subprocesses, offline (no
``ANTHROPIC_API_KEY``: the scripted model), on a database in ``tmp_path``.
Commands that do not depend on each other run side by side to keep it quick.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
QUICK_AGENT = """
name = "quick"
async_yield_strategy = { kind = "yield_on_timeout", milliseconds = 50 }

[policy.rules]
approve = "defer"
"""
"""Like the default agent, but a turn waits only 50 ms for its calls."""


@dataclass(frozen=True)
class Result:
    args: tuple[str, ...]
    code: int
    out: str
    err: str

    @property
    def json(self) -> Any:
        return json.loads(self.out)

    @property
    def lines(self) -> list[Any]:
        return [json.loads(line) for line in self.out.splitlines()]

    @property
    def events(self) -> list[Any]:
        """The JSON lines on stderr (call events), without the 'model: ...' line."""
        return [json.loads(line) for line in self.err.splitlines() if line.startswith("{")]

    def one_line_error(self, code: int, *words: str) -> None:
        assert self.code == code, self
        assert "Traceback" not in self.err, self.err
        (line,) = self.err.splitlines()
        assert line.startswith("error: "), line
        for word in words:
            assert word in line, (word, line)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in {"ANTHROPIC_API_KEY", "AGENTOS_DEBUG", "AGENTOS_DB"}
    }
    environment["AGENTOS_DB"] = str(tmp_path / "agentos.db")
    return environment


@pytest.fixture
def quick_agent(tmp_path: Path) -> str:
    path = tmp_path / "quick.toml"
    path.write_text(QUICK_AGENT)
    return str(path)


def agentos(env: dict[str, str], *args: str) -> Result:
    (result,) = side_by_side(env, args)
    return result


def start(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """``agentos ARGS`` started, its output piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentos.cli", *args],
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def side_by_side(env: dict[str, str], *commands: tuple[str, ...]) -> list[Result]:
    """Run several ``agentos`` commands at once; their results, in order."""
    processes = [(args, start(env, *args)) for args in commands]
    results = []
    for args, process in processes:
        out, err = process.communicate(timeout=30)
        results.append(Result(args, process.returncode, out, err))
    return results


def test_help_on_every_command(env: dict[str, str]) -> None:
    commands = ["run", "resume", "complete", "sessions", "show", "calls", "status", "cancel"]
    top, *each = side_by_side(env, ("--help",), *((name, "--help") for name in commands))
    assert top.code == 0 and "Usage: agentos [OPTIONS] COMMAND" in top.out
    for code in ("0  done", "1  error", "2  usage", "3  calls still pending", "4  ", "5  "):
        assert f"  {code}" in top.out, code
    assert "--db PATH" in top.out and "AGENTOS_DB" in top.out
    for name in commands:
        assert f"  {name} " in top.out
    for name, result in zip(commands, each, strict=True):
        assert result.code == 0, result
        assert f"Usage: agentos {name}" in result.out
    run, resume, complete = each[:3]
    for result in (run, resume):
        assert "3  calls still pending" in result.out and "--wait-for-async" in result.out
    assert "4  unknown" in complete.out and "--result JSON" in complete.out
    cancel = each[-1]
    assert "3  queued" in cancel.out and "--reason TEXT" in cancel.out


def test_run_complete_resume_and_look(env: dict[str, str], quick_agent: str) -> None:
    left = "Check Jane's calendar (2s) and ask for approval of the trip"
    waited = "Check Jack's calendar (0.3s) and ask for approval of the budget"
    run, waiting, chat = side_by_side(
        env,
        ("run", "--agent", quick_agent, "--session-id", "trip", left),
        ("run", "--agent", quick_agent, "--wait-for-async", waited),
        ("run", "--session-id", "chat", "--json", "hello there"),
    )
    # Without --wait-for-async: the calendar is still running, the approval is deferred.
    assert run.code == 3, run
    assert run.err.splitlines()[0] == "model: scripted (offline; set ANTHROPIC_API_KEY for Claude)"
    report = run.json
    assert (report["session_id"], report["status"]) == ("trip", "pending")
    assert "still running" in report["answer"] and "waits for a human" in report["answer"]
    calls = {call["tool"]: call for call in report["pending_calls"]}
    assert (calls["fetch_calendar"]["status"], calls["approve"]["status"]) == ("running", "pending")
    assert calls["fetch_calendar"]["continuation_token"] is None
    token = calls["approve"]["continuation_token"]
    assert token and token in report["answer"]
    for call in calls.values():
        assert call["provider_call_id"].startswith("toolu_") and call["tool_call_id"]
    # With it: the calendar finishes (progress on stderr), the approval still cannot.
    assert waiting.code == 3, waiting
    assert "Jack is free 10:00-11:00, 15:00-16:00." in waiting.json["answer"]
    (deferred,) = waiting.json["pending_calls"]
    assert deferred["tool"] == "approve" and deferred["continuation_token"]
    progress = [e for e in waiting.events if e["event"] == "progressed"]
    assert {"percent": 100, "person": "Jack"} in [e["progress"] for e in progress]
    assert {e["tool"] for e in progress} == {"fetch_calendar"}
    # Nothing to wait for: done.
    assert chat.code == 0, chat
    assert chat.json == {"session_id": "chat", "status": "done", "answer": chat.json["answer"]}
    assert "hello there" in chat.json["answer"]

    applied, taken = side_by_side(
        env,
        ("complete", token, "--result", '{"approved": true}'),
        ("run", "--session-id", "chat", "hello again"),
    )
    assert (applied.code, applied.out) == (0, "applied\n"), applied
    taken.one_line_error(1, "'chat' already exists", "agentos resume chat")
    again, bogus = side_by_side(
        env,
        ("complete", token, "--result", '{"approved": false}'),
        ("complete", "no-such-token", "--error", "nobody home"),
    )
    assert (again.code, again.out) == (0, "already_completed\n"), again
    assert (bogus.code, bogus.out) == (4, "unknown\n"), bogus

    resumed = agentos(env, "resume", "trip")
    assert resumed.code == 0, resumed
    assert resumed.json == {
        "session_id": "trip",
        "status": "done",
        "answer": f"fetch_calendar ({calls['fetch_calendar']['provider_call_id']}) was lost "
        'in a restart. approve finished (completed): {"approved": true}',
    }

    show, stored, sessions = side_by_side(env, ("show", "trip"), ("calls", "trip"), ("sessions",))
    assert show.code == 0, show
    assert f"user: {left}" in show.out
    assert 'tool fetch_calendar {"person": "Jane", "seconds": 2.0}' in show.out
    assert "-> orphaned (lost in a restart)" in show.out
    assert f'-> completed: {{"approved": true}}  [deferred, token {token}]' in show.out
    assert "assistant: fetch_calendar (toolu_" in show.out
    calendar, approval = stored.lines
    assert (calendar["tool"], calendar["status"]) == ("fetch_calendar", "orphaned")
    assert calendar["tool_call_id"] == calls["fetch_calendar"]["tool_call_id"]
    assert calendar["input"] == {"person": "Jane", "seconds": 2.0}
    assert (approval["tool"], approval["status"]) == ("approve", "completed")
    assert approval["result"] == {"approved": True}
    assert (approval["continuation_token"], approval["token_completed"]) == (token, True)
    listed = {row["session_id"]: row for row in sessions.lines}
    assert set(listed) == {"trip", "chat", waiting.json["session_id"]}
    assert (listed["trip"]["agent"], listed["trip"]["status"]) == ("quick", "idle")
    assert listed["chat"]["agent"] == "demo"
    assert listed["trip"]["updated_at"] >= listed["trip"]["created_at"]


def test_errors_are_one_line_and_never_a_traceback(env: dict[str, str], tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"this is not an SQLite database, " * 64)
    bad_agent = tmp_path / "agent.json"
    bad_agent.write_text('{"policy": {"default": "sometimes"}}')
    results = side_by_side(
        env,
        ("show", "ghost"),
        ("resume", "ghost"),
        ("--db", str(corrupt), "run", "hello"),
        ("run", "--agent", str(bad_agent), "hello"),
        ("complete", "some-token"),
        ("complete", "some-token", "--result", "{approved"),
        ("complete", "some-token", "--result", "true", "--error", "no"),
    )
    show, resume, run, agent, no_result, malformed, both = results
    for result in (show, resume):
        result.one_line_error(1, "no session with id 'ghost'")
    run.one_line_error(1, str(corrupt), "corrupt")
    assert corrupt.read_bytes() == b"this is not an SQLite database, " * 64
    agent.one_line_error(2, "--agent", "policy.default")
    no_result.one_line_error(2, "--result JSON")
    malformed.one_line_error(2, "--result", "not JSON")
    both.one_line_error(2, "--result JSON or --error TEXT, not both")
    assert not (tmp_path / "agentos.db").exists(), "looking and failing create no database"


def test_on_a_terminal_progress_is_a_live_display(env: dict[str, str], quick_agent: str) -> None:
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "agentos.cli", "run", "--agent", quick_agent, "--wait-for-async",
         "Check Jane's calendar (0.5s)"],
        env={**env, "TERM": "xterm", "COLUMNS": "100"},
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=terminal,
        text=True,
    )  # fmt: skip
    os.close(terminal)
    shown = bytearray()
    reader = threading.Thread(target=_read_all, args=(controller, shown))
    reader.start()
    out, _ = process.communicate(timeout=30)
    reader.join(timeout=10)
    os.close(controller)
    assert process.returncode == 0, (out, shown)
    assert json.loads(out)["status"] == "done"
    screen = shown.decode(errors="replace")
    assert "model: scripted" in screen
    assert "fetch_calendar" in screen and '{"percent":' in screen
    assert '"event"' not in screen, "no JSON lines on a terminal"


def _read_all(descriptor: int, into: bytearray) -> None:
    while True:
        try:
            chunk = os.read(descriptor, 4096)
        except OSError:  # the other side closed
            return
        if not chunk:
            return
        into.extend(chunk)
