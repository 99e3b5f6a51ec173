"""Where the MCP tests find fastmcp, a second framework whose server they run: ``make test``
installs it in a venv of its own, ``.venv/fastmcp`` (it pins its own ``mcp``), and
fastmcp-tasks (the ``io.modelcontextprotocol/tasks`` extension, which pins its own fastmcp)
in another, ``.venv/fastmcp-tasks``.

Without them a test that needs one skips, saying how to get it; under ``CI=true`` it fails.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support import ROOT
from tests.support.mcp_servers import SERVERS
from tests.support.skips import cannot_run

FASTMCP_PYTHON = ROOT / ".venv" / "fastmcp" / "bin" / "python"
"""The Python of ``make test``'s fastmcp venv."""
FASTMCP_TASKS_PYTHON = ROOT / ".venv" / "fastmcp-tasks" / "bin" / "python"
"""The Python of ``make test``'s fastmcp-tasks venv."""


def fastmcp_python() -> str:
    """The Python that runs a fastmcp server; skips (fails under CI) when it is absent."""
    return venv_python(FASTMCP_PYTHON, "`make test` installs fastmcp 4.1.6 into .venv/fastmcp")


def fastmcp_tasks_python() -> str:
    """The Python that runs a fastmcp-tasks server; skips (fails under CI) when absent."""
    how = "`make test` installs fastmcp-tasks 4.1.4 into .venv/fastmcp-tasks"
    return venv_python(FASTMCP_TASKS_PYTHON, how)


@contextmanager
def tasks_server() -> Iterator[str]:
    """``fastmcp_tasks_server.py`` running over HTTP: its URL. It gets the socket, already
    listening, so it is reachable at once; it is stopped when the context ends."""
    python = fastmcp_tasks_python()
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        fd = listening.fileno()
        server = subprocess.Popen(
            [python, str(SERVERS / "fastmcp_tasks_server.py"), str(fd)],
            pass_fds=[fd],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(timeout=30)


def venv_python(python: Path, reason: str) -> str:
    """``python`` when it is there; else the test skips (fails under CI) saying ``reason``."""
    if not python.exists():
        cannot_run("the tests that need it", reason)
    return str(python)
