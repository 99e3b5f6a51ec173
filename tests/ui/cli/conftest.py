"""What the command-line tests share: a running ``agentos`` process, reading its events, and
asking again until an answer is ready."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from tests.support.cli import Result
from tests.support.cli import start


@contextmanager
def serving(env: dict[str, str], agent: str) -> Iterator[tuple[str, list[str]]]:
    """``agentos serve --agent AGENT``: its address, and what it said on stderr until then."""
    process = start(env, "serve", "--agent", agent, "--port", "0")
    assert process.stderr is not None
    said = [process.stderr.readline()]
    try:
        while "serving" not in said[-1]:
            said.append(process.stderr.readline())
            assert said[-1], said  # the server printed its address before it ended
        yield said[-1].split("serving ")[1].split()[0], said
    finally:
        process.terminate()
        process.communicate(timeout=20)


def asked_on_the_page(
    env: dict[str, str], agent: str, words: str, awaited: str
) -> tuple[dict[str, Any], list[str]]:
    """Serve ``agent``, post ``words`` to a new session through the page's API and read its
    events until one has ``awaited``: the session's state then, and what the server said."""
    with serving(env, agent) as (url, said), httpx.Client(base_url=url, timeout=10) as client:
        session = client.post("/api/sessions", json={}).json()["session_id"]
        with client.stream("GET", f"/api/sessions/{session}/events") as events:
            posted = client.post(f"/api/sessions/{session}/messages", json={"text": words})
            assert posted.status_code == 202, posted.text
            lines = events.iter_lines()
            while awaited not in next(lines):
                pass
        state: dict[str, Any] = client.get(f"/api/sessions/{session}").json()["state"]
    return state, said


@contextmanager
def running(env: dict[str, str], *args: str) -> Iterator[subprocess.Popen[str]]:
    with start(env, *args) as process:  # closes its pipes, whatever the test says
        try:
            yield process
        finally:
            process.kill()
            process.wait()


def until_event(process: subprocess.Popen[str], kind: str) -> dict[str, Any]:
    """Read the process's stderr until a call event of ``kind``; that event."""
    assert process.stderr is not None
    while line := process.stderr.readline():
        if line.startswith("{") and json.loads(line)["event"] == kind:
            return dict(json.loads(line))
    raise AssertionError(f"the process ended before a {kind!r} event")


def until(ask: Callable[[], Result], ready: Callable[[Result], bool]) -> Result:
    """Ask again until the answer is ``ready`` (the holder mirrors twice a second)."""
    for _ in range(100):
        answer = ask()
        if ready(answer):
            return answer
    raise AssertionError(f"never ready: {answer}")
