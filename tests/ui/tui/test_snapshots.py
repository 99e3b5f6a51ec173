"""Snapshots of ``agentos chat``'s screens (pytest-textual-snapshot's SVG, compared by
syrupy): calls running with a progress bar and with a payload, completed, failed and
cancelled, in the dark and the light theme; and the details of a running call.
Deterministic: a ``ManualClock`` drives the elapsed times and the spinner's frame, and the
session's id is fixed.

After a deliberate change to the screen: ``pytest tests/ui/tui/test_snapshots.py
--snapshot-update``, then look at the new SVGs before committing them.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from pytest_textual_snapshot import SVGImageExtension
from syrupy.assertion import SnapshotAssertion
from textual.pilot import Pilot
from textual.widgets import DataTable
from textual.widgets import Input

from agentos import AgentConfig
from agentos import ManualClock
from agentos import ScriptedProvider
from agentos import YieldOnTimeout
from agentos.stores import short_id
from agentos.testing import Puppet
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.tui import ChatApp
from agentos.tui import Details
from tests.support.backends import running

pytestmark = pytest.mark.anyio
CITIES = ("Oslo", "Lima", "Pune", "Baku", "Kobe")


def model() -> ScriptedProvider:
    return ScriptedProvider(
        (
            lambda r: "weather" in last_user_text(r) and not last_tool_results(r),
            lambda r: tool_calls(
                *(("forecast", {"city": city, "expected_seconds": 60}) for city in CITIES)
            ),
        ),
        (lambda r: bool(last_tool_results(r)), lambda r: text("Five forecasts under way.")),
        (lambda r: True, lambda r: text("Noted.")),
    )


@asynccontextmanager
async def screen(theme: str) -> AsyncIterator[tuple[ChatApp, Pilot[None], Puppet]]:
    """Five forecasts 12 s in: two running (a bar, a payload), one completed, one failed,
    one cancelled; the model told of each."""
    clock = ManualClock()
    forecast = Puppet(name="forecast")
    config = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=50))
    async with running(model(), forecast.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config, session_id="demo")
        app = ChatApp(session, runtime, theme=theme)
        async with app.run_test(size=(80, 24)) as pilot:
            app.query_one(Input).cursor_blink = False  # a blink would make the shot timing's
            session.post("What's the weather in five cities?")
            with anyio.fail_after(10):
                while len(forecast.calls) < len(CITIES):
                    await settle(runtime)
            oslo, lima, pune, baku, kobe = forecast.calls
            clock.advance(0.05)
            forecast.progress(oslo, {"percent": 40})
            forecast.progress(lima, "radar 3 of 9")
            forecast.complete(pune, "sunny, 31 C")
            forecast.fail(baku, "station offline")
            runtime.cancel(kobe, "cancelled in agentos chat")
            clock.advance(12)
            with anyio.fail_after(10):
                while not session.idle or len(session.chat) < 3:
                    await settle(runtime)
                    await pilot.pause()
            app.redraw()
            await pilot.pause()
            yield app, pilot, forecast


class SVG(SVGImageExtension):
    """Files named ``.svg`` under syrupy 7 (which reads ``file_extension``)."""

    file_extension = "svg"


@pytest.fixture
def svg(snapshot: SnapshotAssertion, monkeypatch: pytest.MonkeyPatch) -> SnapshotAssertion:
    monkeypatch.delenv("NO_COLOR", raising=False)  # Textual draws without colour under it
    return snapshot.use_extension(SVG)


async def test_the_main_screen_in_a_dark_terminal(svg: SnapshotAssertion) -> None:
    async with screen("dark") as (app, _, _):
        assert app.export_screenshot() == svg


async def test_the_main_screen_in_a_light_terminal_with_the_calls_focused(
    svg: SnapshotAssertion,
) -> None:
    async with screen("light") as (app, pilot, _):
        await pilot.press("tab", "down")
        assert app.query_one(DataTable).cursor_row == 1
        assert app.export_screenshot() == svg


async def test_the_details_of_a_running_call(svg: SnapshotAssertion) -> None:
    """Oslo's call 12 s in at 40 %, with three log lines: its status, times, a bar across the
    pane, the lines and its input. Its short id is random: it is written as 0a1b2c3d, and
    the SVG's own id (a hash of what it shows) as 0."""
    async with screen("dark") as (app, pilot, forecast):
        oslo = next(iter(forecast.calls))
        for page in (1, 2, 3):
            forecast.log(oslo, f"radar page {page} of 9")
        await settle(app.runtime)
        await pilot.press("tab", "enter")
        assert isinstance(app.screen, Details)
        await pilot.pause()
        shot = app.export_screenshot().replace(short_id(oslo), "0a1b2c3d")
        assert re.sub(r"\bterminal-\d+", "terminal-0", shot) == svg
