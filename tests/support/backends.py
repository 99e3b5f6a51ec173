"""Stores and hosts on either backend, for the tests that run once per backend."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Sequence
from contextlib import AsyncExitStack
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import asyncpg

from agentos import AgentConfig
from agentos import Host
from agentos import ManualClock
from agentos import PostgresStore
from agentos import Provider
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import Session
from agentos import SqliteStore
from agentos import Tool
from agentos import Toolset
from agentos import agent_tools
from agentos.testing import last_user_text
from agentos.testing import text

Store = SqliteStore | PostgresStore


@dataclass
class Backend:
    """Where one test's store lives, and a way to reach it behind the store's back."""

    name: str
    address: str
    direct: str = ""
    """The database itself, when ``address`` is a pooler in front of it."""

    @property
    def hears_others(self) -> bool:
        """Whether a store here hears other processes' news (LISTEN needs a session)."""
        return self.name == "postgres"

    async def open(self, clock: Callable[[], float] = time.time) -> Store:
        if self.name == "sqlite":
            return await SqliteStore.open(self.address, clock=clock)
        return await PostgresStore.open(self.address, clock=clock)

    async def raw(self, sql: str) -> None:
        """Run ``sql`` on the database directly (no agentos in between)."""
        if self.name == "sqlite":
            with sqlite3.connect(self.address) as db:
                db.executescript(sql)
            db.close()
            return
        connection = await asyncpg.connect(self.direct or self.address)
        try:
            await connection.execute(sql)
        finally:
            await connection.close()


def echo() -> ScriptedProvider:
    return ScriptedProvider((lambda r: True, lambda r: text(f"heard {last_user_text(r)}")))


@asynccontextmanager
async def host_on(
    backend: Backend, clock: ManualClock | None = None, *, lease_period: float = 5.0
) -> AsyncIterator[Host]:
    """A host with its own runtime and its own connection to the backend's database."""
    clock = clock or ManualClock()
    async with AsyncExitStack() as stack:
        store = await backend.open(clock=clock.wall)
        stack.push_async_callback(store.close)
        runtime = await stack.enter_async_context(Runtime([], clock=clock))
        host = Host(runtime, echo(), store=store, lease_period=lease_period)
        yield await stack.enter_async_context(host)


@asynccontextmanager
async def running(
    model: Provider,
    *tools: Tool[Any],
    clock: ManualClock | None = None,
    toolsets: Sequence[Toolset] = (),
    **host_options: Any,
) -> AsyncIterator[tuple[Runtime, Host]]:
    """A runtime with ``tools`` (and ``toolsets``) and a host (given ``host_options``)
    answering with ``model``: the set-up most session tests start from, in memory unless
    ``host_options`` name a store."""
    async with (
        Runtime(list(tools), clock=clock, toolsets=toolsets) as runtime,
        Host(runtime, model, **host_options) as host,
    ):
        yield runtime, host


@asynccontextmanager
async def running_agent(
    config: AgentConfig, model: Provider, **host_options: Any
) -> AsyncIterator[tuple[Runtime, Host]]:
    """``running`` for an agent: the runtime has the tools, MCP servers and A2A agents that
    ``config`` names (``agent_tools``)."""
    found = agent_tools(config)
    async with running(model, *found.tools, toolsets=found.toolsets, **host_options) as both:
        yield both


@asynccontextmanager
async def hosted(
    path: Path,
    model: Provider,
    *tools: Tool[Any],
    clock: ManualClock | None = None,
    **host_options: Any,
) -> AsyncIterator[tuple[SqliteStore, Runtime, Host]]:
    """One process's store, runtime and host (given ``host_options``), on the SQLite database
    at ``path``: a restart is the next one on the same path."""
    async with (
        await SqliteStore.open(path) as store,
        running(model, *tools, clock=clock, store=store, **host_options) as (runtime, host),
    ):
        yield store, runtime, host


async def say(session: Session, words: str) -> None:
    session.post(words)
    with anyio.fail_after(10):
        await session.wait_idle()


async def stored_texts(backend: Backend, session_id: str) -> list[str]:
    async with await backend.open() as store:
        stored = await store.load_session(session_id)
    assert stored is not None
    return [
        block["text"]
        for message in stored.history
        for block in message["content"]
        if block.get("type") == "text"
    ]
