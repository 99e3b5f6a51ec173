"""Running ``python -m agentos.cli`` as a real program in tests: results, fixtures, a pty.

Offline (no ``ANTHROPIC_API_KEY``: the scripted model), on a database in
``tmp_path``; commands that do not depend on each other run side by side.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import ROOT

PATIENT = ("--wait", "30")
"""For ``agentos cancel`` of a call a live process holds: wait up to 30 s for its answer (it
answers within half a second, but a loaded CI machine may hold it past the default 5 s)."""
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
def any_env(env: dict[str, str], backend: Any) -> dict[str, str]:
    """``env`` on each backend: ``AGENTOS_DB`` an SQLite file, then a PostgreSQL database."""
    return {**env, "AGENTOS_DB": backend.address}


@pytest.fixture
def quick_agent(tmp_path: Path) -> str:
    path = tmp_path / "quick.toml"
    path.write_text(QUICK_AGENT)
    return str(path)


def agentos(env: dict[str, str], *args: str) -> Result:
    (result,) = side_by_side(env, args)
    return result


def start(env: dict[str, str], *args: str, **streams: Any) -> subprocess.Popen[str]:
    """``python -m agentos.cli ARGS``, started; stdout and stderr are pipes unless given."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentos.cli", *args],
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        text=True,
        **{"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **streams},
    )


def side_by_side(env: dict[str, str], *commands: tuple[str, ...]) -> list[Result]:
    """Run several ``agentos`` commands at once; their results, in order."""
    processes = [(args, start(env, *args)) for args in commands]
    results = []
    for args, process in processes:
        out, err = process.communicate(timeout=30)
        results.append(Result(args, process.returncode, out, err))
    return results


def on_a_terminal(
    env: dict[str, str], *args: str, stream: str, columns: int = 100
) -> tuple[int, str, str]:
    """Run with ``stream`` ("stdout" or "stderr") on a pseudo-terminal ``columns`` wide; the
    exit code, the other stream's text, and what the terminal showed."""
    controller, terminal = pty.openpty()
    screen = {"TERM": "xterm", "COLUMNS": str(columns)}
    process = start({**env, **screen}, *args, **{stream: terminal})
    os.close(terminal)
    shown = bytearray()
    reader = threading.Thread(target=read_all, args=(controller, shown))
    reader.start()
    out, err = process.communicate(timeout=30)
    reader.join(timeout=10)
    os.close(controller)
    return process.returncode, err if stream == "stdout" else out, shown.decode(errors="replace")


def read_all(descriptor: int, into: bytearray) -> None:
    while True:
        try:
            chunk = os.read(descriptor, 4096)
        except OSError:  # the other side closed
            return
        if not chunk:
            return
        into.extend(chunk)


ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[a-zA-Z]")


@dataclass
class ChatTerminal:
    """``agentos chat`` in a real pseudo-terminal: what it drew so far, read on demand."""

    process: subprocess.Popen[bytes]
    controller: int
    shown: bytearray

    def _read(self) -> bool:
        ready, _, _ = select.select([self.controller], [], [], 0.2)
        if ready:
            try:
                self.shown.extend(os.read(self.controller, 65536))
            except OSError:  # the terminal closed
                return False
        return True

    def until(self, pattern: bytes) -> bool:
        """Whether ``pattern`` shows (escapes left out) within 20 s."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            still_open = self._read()
            if re.search(pattern, ESCAPES.sub(b"", bytes(self.shown))):
                return True
            if not still_open:
                return False
        return False

    def write(self, keys: bytes) -> None:
        os.write(self.controller, keys)

    def exit_code(self) -> int | None:
        """The exit code, reading what it draws meanwhile: a terminal nobody reads fills up,
        and a program drawing to it blocks before it can exit."""
        deadline = time.monotonic() + 20
        while self.process.poll() is None and time.monotonic() < deadline:
            if not self._read():
                break
        try:
            return self.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return None

    @property
    def tail(self) -> bytes:
        return bytes(self.shown)[-2000:]


@contextmanager
def chat_in_a_terminal(
    env: dict[str, str], *args: str, columns: int = 80
) -> Iterator[ChatTerminal]:
    """``agentos chat ARGS`` on a pseudo-terminal of ``columns`` x 24, killed if still running."""
    with in_a_terminal(env, "chat", *args, columns=columns) as chat:
        yield chat


@contextmanager
def in_a_terminal(env: dict[str, str], *args: str, columns: int = 80) -> Iterator[ChatTerminal]:
    """``agentos ARGS`` with stdin, stdout and stderr a pseudo-terminal of ``columns`` x 24,
    killed if still running."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    with subprocess.Popen(
        [sys.executable, "-m", "agentos.cli", *args],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env={**env, "TERM": "xterm-256color"},
        cwd=ROOT,
        start_new_session=True,
    ) as process:
        os.close(terminal)
        try:
            yield ChatTerminal(process, controller, bytearray())
        finally:
            if process.poll() is None:
                process.kill()
            os.close(controller)
