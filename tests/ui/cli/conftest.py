"""What the command-line tests share: a running ``agentos`` process, reading its events, and
asking again until an answer is ready."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tests.support.cli import Result, start


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
