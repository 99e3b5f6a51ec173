"""Where the A2A tests find Google's ADK, a second framework whose A2A client they drive
``agentos a2a`` with: ``make test`` installs it in a venv of its own, ``.venv/google-adk``
(it pins its own a2a-sdk), and ``adk_client.py`` is the program that runs there.

Without it a test that needs it skips, saying how to get it; under ``CI=true`` it fails.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from tests.support import ROOT
from tests.support.fastmcp import venv_python

ADK_PYTHON = ROOT / ".venv" / "google-adk" / "bin" / "python"
"""The Python of ``make test``'s ADK venv."""
CLIENT = ROOT / "tests" / "support" / "adk_client.py"


class AdkClient:
    """``adk_client.py`` running: the ADK events it prints, read a line at a time."""

    def __init__(self, process: Process) -> None:
        assert process.stdout is not None
        self._process = process
        self._lines = BufferedByteReceiveStream(process.stdout)

    async def next(self) -> dict[str, Any] | None:
        """The next event (a dict of ``adk_client.py``'s JSON line), or None at the end."""
        try:
            line = await self._lines.receive_until(b"\n", 1 << 20)
        except anyio.IncompleteRead:
            return None
        event: dict[str, Any] = json.loads(line)
        return event

    async def rest(self) -> list[dict[str, Any]]:
        """Every event still to come; the program must then end well."""
        events = []
        while (event := await self.next()) is not None:
            events.append(event)
        assert await self._process.wait() == 0, "adk_client.py failed (its stderr is above)"
        return events


@asynccontextmanager
async def adk_client(url: str, token: str, *messages: str) -> AsyncIterator[AdkClient]:
    """ADK's ``RemoteA2aAgent`` sending ``messages`` in turn to the A2A agent at ``url``,
    showing ``token``; it is stopped when the block ends."""
    python = venv_python(ADK_PYTHON, "`make test` installs google-adk 2.13 into .venv/google-adk")
    program = [python, str(CLIENT), url, token, *messages]
    async with await anyio.open_process(program, stdin=subprocess.DEVNULL, stderr=None) as process:
        try:
            yield AdkClient(process)
        finally:
            if process.returncode is None:
                process.terminate()
