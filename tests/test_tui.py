"""``agentos chat``'s terminal UI driven headless with Textual's Pilot (issue 14, first step).

A scripted model starts ``Puppet`` calls the test moves; the tests type, press keys and read
the widgets: the calls appear and progress, a second question is answered while they run, a
call is cancelled with ``c`` and a confirmation, ``enter`` opens a call's details, ``b`` shows
what the model reads next.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static

from agentos import AgentConfig, Host, Runtime, ScriptedProvider, YieldOnTimeout
from agentos.testing import Puppet, last_user_text, settle, text, tool_calls
from agentos.tui import ChatApp, Details

pytestmark = pytest.mark.anyio
CONFIG = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=50))


def model() -> ScriptedProvider:
    return ScriptedProvider(
        (
            lambda r: last_user_text(r) == "check both",
            lambda r: tool_calls(("puppet", {"label": "Jane"}), ("puppet", {"label": "Joe"})),
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


def cell(app: ChatApp, call_id: str, column: int) -> str:
    table = app.query_one("#calls", DataTable)
    return str(table.get_row(call_id)[column])


def chat_text(app: ChatApp) -> str:
    return str(app.query_one("#chat-text", Static).render())


@asynccontextmanager
async def chatting(puppet: Puppet) -> AsyncIterator[tuple[ChatApp, Pilot[None], Runtime]]:
    """A session on the scripted model, its app running headless in an 80x24 terminal."""
    async with Runtime([puppet.tool]) as runtime, Host(runtime, model()) as host:
        app = ChatApp(await host.create_session(CONFIG), runtime)
        async with app.run_test(size=(80, 24)) as pilot:
            yield app, pilot, runtime


async def test_calls_appear_progress_and_a_question_is_answered_meanwhile() -> None:
    puppet = Puppet()
    async with chatting(puppet) as (app, pilot, runtime):
        await say(pilot, "check both")
        await until(pilot, runtime, lambda: len(puppet.calls) == 2)
        jane, joe = puppet.calls
        await until(pilot, runtime, lambda: app.query_one("#calls", DataTable).row_count == 2)
        puppet.progress(jane, {"percent": 40})
        await until(pilot, runtime, lambda: "40%" in cell(app, jane, 2))
        assert cell(app, joe, 4) == "running"
        await say(pilot, "meanwhile, 2+2?")
        await until(pilot, runtime, lambda: "agent: 4" in chat_text(app))
        assert cell(app, jane, 4) == "running", "the calls run on"
        puppet.complete(jane, "free 10-11")
        await until(pilot, runtime, lambda: cell(app, jane, 4) == "completed")


async def test_c_cancels_the_selected_call_after_a_yes_and_enter_shows_details() -> None:
    puppet = Puppet()
    async with chatting(puppet) as (app, pilot, runtime):
        await say(pilot, "check both")
        await until(pilot, runtime, lambda: app.query_one("#calls", DataTable).row_count == 2)
        jane, joe = puppet.calls
        app.query_one("#calls", DataTable).focus()
        await pilot.press("down")  # Joe's row
        await pilot.press("c")
        await pilot.press("n")
        await settle(runtime)
        assert runtime.status(joe).status == "running", "no: nothing cancelled"
        await pilot.press("c", "y")
        await until(pilot, runtime, lambda: cell(app, joe, 4).startswith("cancelled"))
        assert puppet.calls[joe].cleaned_up, "the cancel reached the work"
        assert runtime.status(jane).status == "running"
        await pilot.press("enter")
        await until(pilot, runtime, lambda: isinstance(app.screen, Details))
        shown = str(app.screen.query_one("#details", Static).render())
        assert '"status": "cancelled"' in shown and "cancelled in agentos chat" in shown
        await pilot.press("escape")
        await pilot.press("b")
        await until(pilot, runtime, lambda: "check both" in _context(app))


def _context(app: Any) -> str:
    return str(app.query_one("#context-text", Static).render())
