"""What the toolset tests share: how long real work (an MCP server's process) may take, a
call's final snapshot within it, and a host over an agent's tools and servers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from agentos import AgentConfig, CallSnapshot, Host, Provider, Runtime, agent_tools

WAIT = 20  # seconds: a bound on real work (starting a Python process on a busy machine)


async def outcome(runtime: Runtime, call_id: str) -> CallSnapshot:
    snapshot = await runtime.wait(call_id, WAIT)
    assert snapshot.status.is_final, snapshot
    return snapshot


@asynccontextmanager
async def hosting(config: AgentConfig, provider: Provider) -> AsyncIterator[Host]:
    """A host over ``config``'s tools and MCP servers, with ``provider`` as its model."""
    found = agent_tools(config)
    with anyio.fail_after(WAIT * 2):
        async with (
            Runtime(found.tools, toolsets=found.toolsets) as runtime,
            Host(runtime, provider) as host,
        ):
            yield host
