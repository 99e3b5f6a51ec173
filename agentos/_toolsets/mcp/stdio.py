"""An MCP server over stdio, started and owned by agentos: newline-delimited JSON-RPC on
its stdin and stdout, its stderr kept (the last lines) to say why it failed.

The SDK's ``stdio_client`` hides the process; this transport keeps it, for the exit
code a call that dies with its server reports, and to stop the server's whole
process group: stdin closed, then SIGTERM, then SIGKILL, each after a grace.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
from collections import deque
from collections.abc import AsyncIterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from dataclasses import field

import anyio
import mcp_types
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream
from anyio.streams.memory import MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from agentos._toolsets.mcp.lines import LineSplitter
from agentos._toolsets.mcp.lines import TooLong

STOP_GRACE = 2.0
"""Seconds a server has to exit after its stdin closes, and again after SIGTERM."""
STDERR_LINES = 20
"""The last lines of a server's stderr kept to explain its failure."""
STDERR_LINE_BYTES = 4096
"""A line of stderr longer than this is kept as its first bytes."""
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


@dataclass
class ServerProcess:
    """A started server: its process, and the tail of what it wrote to stderr."""

    process: Process
    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_LINES))

    @property
    def exit_code(self) -> int | None:
        return self.process.returncode

    async def exited(self, within: float) -> int | None:
        """The exit code once the process has ended, waiting at most ``within`` seconds."""
        with anyio.move_on_after(within):
            await self.process.wait()
        return self.process.returncode

    def last_words(self) -> str:
        """The last line the server wrote to stderr, for an error message ("" if none)."""
        lines = [line for line in self.stderr if line.strip()]
        return lines[-1].strip() if lines else ""

    async def stop(self) -> None:
        """Close stdin; then SIGTERM and SIGKILL the process group, each after a grace."""
        process = self.process
        if process.stdin is not None:
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await process.stdin.aclose()
        for signum in (None, signal.SIGTERM, signal.SIGKILL):
            if signum is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signum)
            if await self.exited(STOP_GRACE) is not None:
                break
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # what it started, if it left any
        await process.aclose()


Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]
]


@asynccontextmanager
async def stdio_server(
    argv: Sequence[str], env: Mapping[str, str], cwd: str | None, max_line_bytes: int | None
) -> AsyncIterator[tuple[Streams, ServerProcess]]:
    """Start the server (``OSError`` if it cannot be) and yield the session's streams; on
    the way out, stop it. The read stream ends when the server closes its stdout; a line
    of it over ``max_line_bytes`` fails the request it answers."""
    with anyio.CancelScope(shield=True):  # a cancel between the spawn and here would leak it
        process = await anyio.open_process(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )
    server = ServerProcess(process)
    incoming, read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write, outgoing = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_read_stdout, server, incoming, max_line_bytes)
            group.start_soon(_write_stdin, server, outgoing, incoming)
            group.start_soon(_keep_stderr, server)
            try:
                yield (read, write), server
            finally:
                group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await server.stop()
            for stream in (read, write, incoming, outgoing):
                await stream.aclose()


async def _read_stdout(
    server: ServerProcess,
    incoming: MemoryObjectSendStream[SessionMessage | Exception],
    max_line_bytes: int | None,
) -> None:
    """Each stdout line as a message (a line that is not JSON-RPC as its error; one over
    ``max_line_bytes`` as an error answer to the request it answers)."""
    assert server.process.stdout is not None
    lines = LineSplitter(max_line_bytes)
    async with incoming:
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            async for chunk in server.process.stdout:
                for line in lines.feed(chunk):
                    if isinstance(line, TooLong):
                        await incoming.send(_refused(line))
                    elif line.strip():
                        await incoming.send(_parse(line))


def _refused(line: TooLong) -> SessionMessage | Exception:
    """An error answer to the request a too-long line answers (its ``id`` is in the first
    bytes), so that one call fails at once and the server's others go on."""
    words = (
        f"the server's answer is over {line.limit:,} bytes, more than agentos reads; it was skipped"
    )
    found = _ID.search(line.head)
    if found is None:
        return ValueError(f"a message {words.removeprefix('the server')}")
    request = json.loads(found[1])
    error = mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=words)
    return SessionMessage(mcp_types.JSONRPCError(jsonrpc="2.0", id=request, error=error))


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as error:
        return error


async def _write_stdin(
    server: ServerProcess,
    outgoing: MemoryObjectReceiveStream[SessionMessage],
    incoming: MemoryObjectSendStream[SessionMessage | Exception],
) -> None:
    assert server.process.stdin is not None
    try:
        async with outgoing:
            async for message in outgoing:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await server.process.stdin.send(data.encode() + b"\n")
    except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await incoming.aclose()  # the server stopped reading: end the session's reads too


async def _keep_stderr(server: ServerProcess) -> None:
    assert server.process.stderr is not None
    lines = LineSplitter(STDERR_LINE_BYTES)
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        async for chunk in server.process.stderr:
            for line in lines.feed(chunk):
                text = line.head + b"..." if isinstance(line, TooLong) else line
                server.stderr.append(text.decode(errors="replace"))
    if rest := lines.rest():
        server.stderr.append(rest.decode(errors="replace"))
