"""Subprocesses that die with their call: a new process group, killed whole on cancel."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

import anyio
from anyio.abc import ByteReceiveStream, Process


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
) -> ProcessResult:
    """Run ``argv`` to completion and collect its output.

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
            group.start_soon(_drain, process.stdout, stdout)
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


async def _kill_group(process: Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with anyio.CancelScope(shield=True):
        await process.wait()
        await process.aclose()
