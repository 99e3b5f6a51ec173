"""What the toolset tests share: how long real work (an MCP server's process) may take, a
call's final snapshot within it, a runtime over MCP servers with its call events and who
answers their questions, and a host over an agent's tools and servers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from agentos import AgentConfig
from agentos import Answer
from agentos import Asked
from agentos import CallEvent
from agentos import CallSnapshot
from agentos import CallStatus
from agentos import Host
from agentos import JsonObject
from agentos import McpServer
from agentos import Provider
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import SqliteStore
from agentos import Toolset
from agentos.testing import text
from tests.support.backends import running_agent

WAIT = 20  # seconds: a bound on real work (starting a Python process on a busy machine)


async def outcome(runtime: Runtime, call_id: str) -> CallSnapshot:
    snapshot = await runtime.wait(call_id, WAIT)
    assert snapshot.status.is_final, snapshot
    return snapshot


AskPerson = Callable[[Asked], Awaitable[Answer | None]]


def answering(answer: Answer | None, kept: list[Asked] | None = None) -> AskPerson:
    """A person who gives every question ``answer`` (None: holds it for ``Runtime.answer``),
    each question kept in ``kept`` when given."""

    async def ask(asked: Asked) -> Answer | None:
        if kept is not None:
            kept.append(asked)
        return answer

    return ask


@asynccontextmanager
async def serving(
    *servers: Toolset, ask: AskPerson | None = None, within: float = WAIT * 2, **options: Any
) -> AsyncIterator[tuple[Runtime, MemoryObjectReceiveStream[CallEvent]]]:
    """A runtime with these servers (MCP servers, A2A agents; and the ``Runtime``
    ``options``), the default session's call events, and ``ask`` answering what a server
    asks the person (None: nobody), all within ``within`` seconds."""
    with anyio.fail_after(within):
        async with (
            Runtime(toolsets=servers, **options) as runtime,
            runtime.subscribe("default") as events,
        ):
            runtime.ask_person = ask
            yield runtime, events


@asynccontextmanager
async def hosting(config: AgentConfig, provider: Provider) -> AsyncIterator[Host]:
    """A host over ``config``'s tools and MCP servers, with ``provider`` as its model."""
    with anyio.fail_after(WAIT * 2):
        async with running_agent(config, provider) as (_, host):
            yield host


async def resumed_after_a_kill(
    path: Path, url: str, session_id: str, tool: str, release: JsonObject
) -> tuple[CallSnapshot, CallSnapshot, str]:
    """Resume ``session_id`` from ``path``'s store, its host killed while its call of
    ``tool`` ran as a task on the HTTP server at ``url``: the call, made again, goes on;
    then ``release`` (with ``release`` as its input) ends the task. The call's final
    snapshot, ``release``'s, and the session's history in words."""
    provider = ScriptedProvider((lambda r: True, lambda r: text("thanks")))
    with anyio.fail_after(WAIT * 2):
        async with (
            await SqliteStore.open(path) as store,
            Runtime(toolsets=[McpServer.http("tasks", url)]) as runtime,
            Host(runtime, provider, store=store) as host,
        ):
            session = await host.resume(session_id, steal=True)
            (again,) = runtime.list_calls(session_id)
            assert again.tool_name == tool and again.status is not CallStatus.FAILED
            released = await outcome(runtime, runtime.submit("release", release))
            done = await outcome(runtime, again.call_id)
            await session.wait_settled()
    assert "lost" not in str(session.history[-2:])
    return done, released, str(session.history)
