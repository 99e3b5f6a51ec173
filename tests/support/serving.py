"""A server command (``agentos mcp --http``, ``agentos a2a``) running in a process of its own
for a test, until the test is done with it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager

from tests.support import ROOT


@contextmanager
def serving(
    args: Sequence[str], env: dict[str, str], starts: str, said_after: list[str] | None = None
) -> Iterator[list[str]]:
    """``python -m agentos.cli ARGS`` running: the words of its first stderr line that starts
    with ``starts``; what it wrote to stderr after that line goes into ``said_after`` once it
    has stopped (it is terminated when the block ends)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "agentos.cli", *args],
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        for line in process.stderr:
            if line.startswith(starts):
                yield line.split()
                break
        else:
            raise AssertionError(f"{args[0]} did not start (exit {process.wait()})")
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            if said_after is not None:
                said_after.extend(process.stderr.read().splitlines())
            process.stderr.close()
