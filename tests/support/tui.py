"""``agentos chat``'s app run headless on a scripted model (``chatting``; ``both_checked``:
with the two calls "check both" starts), and what the tests type (``say``, ``call_on_go``),
read (``chat_text``, ``cell``) and wait for (``until``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
from textual.pilot import Pilot
from textual.widgets import Input
from textual.widgets import Static

from agentos import AgentConfig
from agentos import Host
from agentos import Provider
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import YieldOnTimeout
from agentos.testing import Puppet
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.tui import CallsPane
from agentos.tui import ChatApp

CONFIG = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=50))


def model() -> ScriptedProvider:
    return ScriptedProvider(
        (
            lambda r: last_user_text(r) == "check both",
            lambda r: tool_calls(("puppet", {"label": "Jane"}), ("puppet", {"label": "Joe"})),
        ),
        (
            lambda r: last_user_text(r) == "check twelve",
            lambda r: tool_calls(*(("puppet", {"label": f"n{n}"}) for n in range(12))),
        ),
        (lambda r: "2+2" in last_user_text(r), lambda r: text("4")),
        (lambda r: True, lambda r: text("ok")),
    )


async def until(pilot: Pilot[None], runtime: Runtime, condition: Callable[[], bool]) -> None:
    """Let the app and the runtime run until ``condition`` holds."""
    with anyio.fail_after(10):
        while not condition():
            await settle(runtime)
            await pilot.pause(0.05)


async def say(pilot: Pilot[None], words: str) -> None:
    pilot.app.query_one("#message", Input).value = words
    pilot.app.query_one("#message", Input).focus()
    await pilot.press("enter")


async def check_both(app: ChatApp, pilot: Pilot[None], runtime: Runtime) -> None:
    """Say "check both" and wait until the calls pane shows the two calls it starts."""
    await say(pilot, "check both")
    await until(pilot, runtime, lambda: app.query_one(CallsPane).row_count == 2)


async def call_on_go(app: ChatApp, pilot: Pilot[None], runtime: Runtime, puppet: Puppet) -> str:
    """Say "go" and wait until the calls pane shows the one puppet call it starts: its id."""
    await say(pilot, "go")
    await until(pilot, runtime, lambda: app.query_one(CallsPane).row_count == 1)
    (call_id,) = puppet.calls
    return call_id


def cell(app: ChatApp, call_id: str, column: int) -> str:
    """What call ``call_id``'s row shows in ``column``."""
    pane = app.query_one(CallsPane)
    ids = [call.call_id for call in pane.calls]
    return str(pane.get_row_at(ids.index(call_id))[column])


def chat_text(app: ChatApp) -> str:
    return str(app.query_one("#chat-text", Static).render())


@asynccontextmanager
async def chatting(
    puppet: Puppet, provider: Provider | None = None, **runtime_options: Any
) -> AsyncIterator[tuple[ChatApp, Pilot[None], Runtime]]:
    """A session on the scripted model, its app running headless in an 80x24 terminal."""
    async with (
        Runtime([puppet.tool], **runtime_options) as runtime,
        Host(runtime, provider or model()) as host,
    ):
        app = ChatApp(await host.create_session(CONFIG), runtime)
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            yield app, pilot, runtime


@asynccontextmanager
async def both_checked(
    puppet: Puppet, **runtime_options: Any
) -> AsyncIterator[tuple[ChatApp, Pilot[None], Runtime]]:
    """``chatting``, told "check both" and on until the calls pane shows the two calls it
    starts (Jane's and Joe's)."""
    async with chatting(puppet, **runtime_options) as (app, pilot, runtime):
        await check_both(app, pilot, runtime)
        yield app, pilot, runtime
