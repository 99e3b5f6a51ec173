"""What the toolset tests share: how long real work (an MCP server's process) may take, and
a call's final snapshot within it."""

from __future__ import annotations

from agentos import (
    CallSnapshot,
    Runtime,
)

WAIT = 20  # seconds: a bound on real work (starting a Python process on a busy machine)


async def outcome(runtime: Runtime, call_id: str) -> CallSnapshot:
    snapshot = await runtime.wait(call_id, WAIT)
    assert snapshot.status.is_final, snapshot
    return snapshot
