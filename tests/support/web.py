"""The live page over a host, for tests that drive it over HTTP (``web``), on a scripted model
whose ``start N`` starts N puppet calls; ``applied`` replays an event as the page's script."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from collections.abc import Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import uvicorn
from httpx_sse import ServerSentEvent

from agentos import AgentConfig
from agentos import Host
from agentos import ManualClock
from agentos import Provider
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import Session
from agentos import SqliteStore
from agentos import open_store
from agentos.testing import Puppet
from agentos.testing import board_turn
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.web import STALL_SECONDS
from agentos.web import StreamStatistics
from agentos.web import listen
from agentos.web import make_app
from tests.support.backends import hosted

START = re.compile(r"^start (\d)")


def asked_to_start(request: Any) -> re.Match[str] | None:
    """``start N`` as the user's message (a transcript) or the node a board turn is for."""
    turn = board_turn(request)
    if turn is not None:
        return START.search(turn.text) if turn.author == "user" else None
    return START.search(last_user_text(request))


def model() -> ScriptedProvider:
    """``start N`` starts N puppet calls; anything else gets "ok"."""

    def start(request: Any) -> Any:
        match = asked_to_start(request)
        assert match is not None
        calls = [("puppet", {"label": f"p{n}"}) for n in range(int(match[1]))]
        return tool_calls(*calls, say="Started.")

    return ScriptedProvider(
        (lambda r: asked_to_start(r) is not None, start),
        (lambda r: True, lambda r: text("ok")),
    )


@dataclass
class Web:
    runtime: Runtime
    host: Host
    puppet: Puppet
    client: httpx.AsyncClient
    url: str
    app: Any

    async def streams_until(self, done: Callable[[StreamStatistics], bool]) -> StreamStatistics:
        """The app's stream counts, once ``done`` holds for them."""
        streams = self.app.state.streams
        counts: StreamStatistics = streams.statistics()
        with anyio.fail_after(30):
            while not done(counts):
                counts = await streams.next_change()
        return counts

    def session(self, session_id: str) -> Session:
        return self.host.get(session_id)

    async def new_session(self) -> str:
        made = await self.client.post("/api/sessions", json={})
        assert made.status_code == 201, made.text
        return str(made.json()["session_id"])

    async def post(self, session_id: str, words: str) -> None:
        posted = await self.client.post(
            f"/api/sessions/{session_id}/messages", json={"text": words}
        )
        assert posted.status_code == 202, posted.text

    async def started(self, count: int) -> list[str]:
        """Until ``count`` puppet calls run (the turn may still wait for them)."""
        with anyio.fail_after(5):
            while sum(call.started for call in self.puppet.calls.values()) < count:
                await settle(self.runtime)
                await anyio.lowlevel.checkpoint()
        return list(self.puppet.calls)

    async def idle(self, session_id: str) -> None:
        with anyio.fail_after(5):
            await settle(self.runtime)
            await self.session(session_id).wait_idle()


@asynccontextmanager
async def held_elsewhere(
    path: Path, model: Provider, puppet: Puppet, session_id: str, words: str, calls: int = 1
) -> AsyncIterator[tuple[Runtime, Host]]:
    """Another process's host on the page's database in ``path``, mirroring its calls every
    50 ms: its session ``session_id`` was told ``words`` and runs ``calls`` puppet calls."""
    async with hosted(path / "agentos.db", model, puppet.tool, call_mirror_period=0.05) as (
        _,
        runtime,
        other,
    ):
        session = await other.create_session(AgentConfig(), session_id=session_id)
        session.post(words)
        with anyio.fail_after(10):
            while len(puppet.calls) < calls:
                await settle(runtime)
                await anyio.lowlevel.checkpoint()
        yield runtime, other


@asynccontextmanager
async def web(
    tmp_path: Path,
    *,
    token: str | None = None,
    config: AgentConfig | None = None,
    provider: Provider | None = None,
    store: type[SqliteStore] = SqliteStore,
    allowed_hosts: tuple[str, ...] = (),
    lease_period: float = 5.0,
    stall_seconds: float | None = STALL_SECONDS,
    address: str | None = None,
    clock: ManualClock | None = None,
) -> AsyncIterator[Web]:
    """The page over a host on ``store`` in ``tmp_path`` (or the store at ``address``);
    ``clock``: the runtime's."""
    puppet = Puppet()
    listening = listen("127.0.0.1", 0, stall_seconds=stall_seconds)
    opening = store.open(tmp_path / "agentos.db") if address is None else open_store(address)
    async with (
        await opening as opened,
        Runtime([puppet.tool], clock=clock) as runtime,
        Host(runtime, provider or model(), store=opened, lease_period=lease_period) as host,
    ):
        app = make_app(
            host,
            runtime,
            config=config,
            token=token,
            allowed_hosts=allowed_hosts,
            stall_seconds=stall_seconds,
        )
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        url = f"http://127.0.0.1:{listening.getsockname()[1]}"
        transport = httpx.ASGITransport(app=app)
        async with (
            anyio.create_task_group() as group,
            httpx.AsyncClient(transport=transport, base_url=url) as client,
        ):
            group.start_soon(lambda: server.serve(sockets=[listening]))
            try:
                yield Web(runtime, host, puppet, client, url, app)
            finally:
                server.should_exit = True
        app.state.pages.close()


def applied(state: dict[str, Any], event: ServerSentEvent) -> None:
    """``event`` applied to a page's ``state`` as the page's script applies it."""
    data = json.loads(event.data)
    if event.event == "snapshot":
        state.clear()
        state.update(data)
    elif event.event == "chat":
        state["chat"] = state["chat"][: data["chat_from"]] + data["chat"]
    elif event.event == "context":
        kept = state["context"].split("\n")[: data["context_from"]]
        state["context"] = "\n".join(kept + data["context_tail"])
    elif event.event == "call":
        state["calls"][data["call"]["call_id"]] = data["call"]
    else:
        state[event.event] = data[event.event]
