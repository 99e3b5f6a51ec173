"""Issue 45: progress shows progress. A tool reports 40 %, then logs "fetched page 4":
``agentos status --json`` gives both (``progress`` and ``log``) and how the call runs, and
the spinner of ``agentos run`` on a terminal keeps the percent after the log line and after
the call is overdue, the line beside it."""

from __future__ import annotations

import os
import pty
import threading
import time
from pathlib import Path

from tests.support.cli import agentos
from tests.support.cli import read_all
from tests.support.cli import start
from tests.ui.cli.conftest import running
from tests.ui.cli.conftest import until
from tests.ui.cli.conftest import until_event

CRAWLER = """
name = "crawler"
model = "test"
tools = ["tests.support.progress_tools"]
call_overdue_after = 0.3

[policy.rules]
crawl = { decorate = [{ label = "pages" }], then = "run_async" }
"""


def agent_file(tmp_path: Path) -> str:
    path = tmp_path / "crawler.toml"
    path.write_text(CRAWLER)
    return str(path)


def test_status_gives_the_newest_percent_and_log_line_apart_and_the_disposition(
    env: dict[str, str],
    tmp_path: Path,
) -> None:
    agent = agent_file(tmp_path)
    with running(env, "run", "--agent", agent, "--session-id", "S", "--wait-for-async",
                 "crawl it") as holder:  # fmt: skip
        started = until_event(holder, "started")
        assert (started["tool_name"], started["disposition"]) == ("crawl", "decorated:run_async")
        call_id = started["call_id"]
        seen = until(
            lambda: agentos(env, "status", call_id, "--json"),
            lambda result: result.code == 0 and result.json["log"] is not None,
        ).json
        assert (seen["progress"], seen["percent"], seen["log"]) == (
            {"percent": 40, "page": 4, "of": 10},
            40,
            "fetched page 4",
        )
        assert (seen["status"], seen["disposition"]) == ("running", "decorated:run_async")
        (listed,) = agentos(env, "calls", "S").lines
        assert (listed["progress"]["percent"], listed["log"]) == (40, "fetched page 4")
        cancelled = agentos(env, "cancel", call_id)
        assert cancelled.code == 0, cancelled
        out, err = holder.communicate(timeout=30)
    assert holder.returncode == 0, (out, err)


def test_the_spinner_keeps_the_percent_after_a_log_line_and_when_overdue(
    env: dict[str, str],
    tmp_path: Path,
) -> None:
    agent = agent_file(tmp_path)
    controller, terminal = pty.openpty()
    terminal_env = {**env, "TERM": "xterm", "COLUMNS": "100"}
    args = ("run", "--agent", agent, "--session-id", "S", "--wait-for-async", "crawl it")
    process = start(terminal_env, *args, stderr=terminal)
    os.close(terminal)
    shown = bytearray()
    reader = threading.Thread(target=read_all, args=(controller, shown), daemon=True)
    reader.start()
    try:
        screen = shown_until(shown, "· overdue")
        (call,) = agentos(env, "calls", "S").lines
        assert agentos(env, "cancel", call["call_id"]).code == 0
        process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        reader.join(timeout=10)
        os.close(controller)
    assert process.returncode == 0
    assert "40% · fetched page 4 · overdue" in screen, screen
    after = screen[screen.index("40%") :]
    assert "  running" not in after, "the line never went back to the bare status"
    assert "fetched page 4" in after.split("· overdue")[0], "the log line beside, before it"


def shown_until(shown: bytearray, text: str, seconds: float = 30) -> str:
    """What the terminal showed once it shows ``text`` (the reader fills ``shown``)."""
    deadline = time.monotonic() + seconds
    while text not in (screen := shown.decode(errors="replace")):
        assert time.monotonic() < deadline, f"never showed {text!r}: {screen!r}"
        threading.Event().wait(0.05)  # the reader thread appends as the terminal shows it
    return screen
