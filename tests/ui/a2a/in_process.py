"""``agentos.a2a.app`` served in the test's own process (uvicorn on a loopback socket, its
lifespan run), over a host the test holds: its runtime's clock, tools and sessions are the
test's to drive. The A2A SDK's client talks to it over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from a2a.client import Client

import agentos.a2a
from agentos import AgentConfig
from agentos import Clock
from agentos import Host
from agentos import Provider
from agentos import Runtime
from agentos import SqliteStore
from agentos import Tool
from agentos.web import listen
from tests.ui.a2a.running import connected


@dataclass(frozen=True, slots=True)
class Served:
    host: Host
    client: Client
    url: str


@asynccontextmanager
async def served(
    tmp_path: Path,
    model: Provider,
    tools: Sequence[Tool[Any]],
    *,
    clock: Clock | None = None,
    ask_timeout: float = agentos.a2a.ASK_TIMEOUT,
    streaming: bool = True,
    max_running: int = 16,
    config: AgentConfig | None = None,
    call_timeout: float | None = None,
    lifespan: bool = True,
) -> AsyncIterator[Served]:
    """The agent ``config`` (default: ``worker``, all of ``tools``) served with no token,
    its model ``model``, its runtime on ``clock``, running at most ``max_running`` calls a
    session, each for at most ``call_timeout`` seconds; ``lifespan``: whether the server runs
    the app's lifespan."""
    socket = listen("127.0.0.1", 0)
    port = socket.getsockname()[1]
    with socket:
        runtime = Runtime(
            tools, clock=clock, max_running_per_session=max_running, default_timeout=call_timeout
        )
        async with _hosted(tmp_path, model, runtime) as host:
            app = agentos.a2a.app(
                host,
                config or AgentConfig(name="worker"),
                token=None,
                port=port,
                ask_timeout=ask_timeout,
            )
            server = uvicorn.Server(
                uvicorn.Config(app, log_level="warning", lifespan="on" if lifespan else "off")
            )
            async with anyio.create_task_group() as group:
                group.start_soon(lambda: server.serve(sockets=[socket]))
                try:
                    url = agentos.a2a.endpoint("127.0.0.1", port)
                    async with connected(url, None, streaming=streaming) as client:
                        yield Served(host, client, url)
                finally:
                    server.should_exit = True


@asynccontextmanager
async def _hosted(
    tmp_path: Path,
    model: Provider,
    runtime: Runtime,
) -> AsyncIterator[Host]:
    async with (
        await SqliteStore.open(tmp_path / "agentos.db") as store,
        runtime,
        Host(runtime, model, store=store) as host,
    ):
        yield host
