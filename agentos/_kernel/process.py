"""Subprocesses that die with their call: a new process group, killed whole on cancel.

Stdout lines can be handed to a callback as they arrive (a tool's progress
log shows them while the process runs); the result still holds all of it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

import anyio
from anyio.abc import ByteReceiveStream
from anyio.abc import Process

LINE_BYTES = 4096
"""A longer stdout line is handed on in pieces of this size, so no report is huge."""


@dataclass(frozen=True, slots=True)
class ProcessResult:
    returncode: int
    stdout: bytes
    stderr: bytes


async def run_process(
    argv: Sequence[str],
    *,
    input: bytes | None = None,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    on_line: Callable[[bytes], None] | None = None,
) -> ProcessResult:
    """Run ``argv`` to completion and collect its output.

    ``on_line`` gets each stdout line (without its line ending) as soon as it
    is complete, and the unfinished last one at the end.

    The process leads a new session (so a new process group). If the caller
    is cancelled, or anything else goes wrong, the whole group gets SIGKILL
    and is reaped before the exception travels on.
    """
    # Shielded: a cancel landing between the spawn and the handle would leak the process.
    with anyio.CancelScope(shield=True):
        process = await anyio.open_process(
            list(argv),
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    stdout = bytearray()
    stderr = bytearray()
    try:
        async with anyio.create_task_group() as group:
            assert process.stdout is not None
            assert process.stderr is not None
            if on_line is None:
                group.start_soon(_drain, process.stdout, stdout)
            else:
                group.start_soon(_drain_lines, process.stdout, stdout, on_line)
            group.start_soon(_drain, process.stderr, stderr)
            if input is not None and process.stdin is not None:
                await process.stdin.send(input)
                await process.stdin.aclose()
            await process.wait()
    except BaseException:
        await _kill_group(process)
        raise
    assert process.returncode is not None
    return ProcessResult(process.returncode, bytes(stdout), bytes(stderr))


async def _drain(stream: ByteReceiveStream, sink: bytearray) -> None:
    async for chunk in stream:
        sink.extend(chunk)


async def _drain_lines(
    stream: ByteReceiveStream, sink: bytearray, on_line: Callable[[bytes], None]
) -> None:
    start = 0  # where the unfinished line begins in ``sink``
    async for chunk in stream:
        sink.extend(chunk)
        while (end := sink.find(b"\n", start)) >= 0:
            _hand_on(sink, start, end, on_line)
            start = end + 1
        while len(sink) - start >= LINE_BYTES:  # no newline in sight: bound the wait
            on_line(bytes(sink[start : start + LINE_BYTES]))
            start += LINE_BYTES
    if start < len(sink):
        _hand_on(sink, start, len(sink), on_line)


def _hand_on(sink: bytearray, start: int, end: int, on_line: Callable[[bytes], None]) -> None:
    """One line, ``\r\n`` or ``\n`` ended, in pieces of at most ``LINE_BYTES``."""
    if end > start and sink[end - 1] == 0x0D:
        end -= 1
    while end - start > LINE_BYTES:
        on_line(bytes(sink[start : start + LINE_BYTES]))
        start += LINE_BYTES
    on_line(bytes(sink[start:end]))


async def _kill_group(process: Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with anyio.CancelScope(shield=True):
        await process.wait()
        await process.aclose()
