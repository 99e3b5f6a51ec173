"""Issue 45: waiting for a slow call costs few model requests, each nudge carries the evidence
(how long the call ran, its progress and log), and the person's chat never shows a nudge,
nor anything a turn the runtime prompted said, as anybody's words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agentos import AgentConfig
from agentos import CallEvent
from agentos import CallEventKind
from agentos import CallOptions
from agentos import CallStatus
from agentos import ManualClock
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import SqliteStore
from agentos import Tool
from agentos import ToolContext
from agentos import tool
from agentos.stores import StoredSession
from agentos.testing import Puppet
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.tui import CallsPane
from tests.support.cli import side_by_side
from tests.support.overdue import a_slow_call_under_a_patient_model
from tests.support.tui import cell
from tests.support.tui import chat_text
from tests.support.tui import chatting
from tests.support.tui import say
from tests.support.tui import until
from tests.support.web import web

pytestmark = pytest.mark.anyio


def slow_tool(release: anyio.Event) -> Tool[Any]:
    @tool
    async def crawl(pages: int, *, ctx: ToolContext) -> str:
        """Crawl some pages: reports a percent, then a log line."""
        ctx.progress({"percent": 40, "page": 4})
        ctx.log("fetched page 4")
        await release.wait()
        return f"{pages} pages"

    return crawl


async def overdue_times(
    clock: ManualClock, options: CallOptions, seconds: int
) -> list[tuple[int, CallEvent]]:
    """Submit one call that never ends, step the clock a second at a time, and return each
    overdue event with the second it came at."""
    release = anyio.Event()
    events: list[CallEvent] = []
    async with Runtime([slow_tool(release)], clock=clock) as runtime:
        runtime.on_call_events("s", events.append)
        call = runtime.submit("crawl", {"pages": 9}, session_id="s", options=options)
        await settle(runtime)
        assert runtime.status(call).status is CallStatus.RUNNING
        came: list[tuple[int, CallEvent]] = []
        for second in range(1, seconds + 1):
            clock.advance(1)
            await settle(runtime)
            came += [(second, e) for e in events if e.kind is CallEventKind.OVERDUE]
            events.clear()
        release.set()
        await runtime.wait(call, timeout=None)
    return came


async def test_the_overdue_interval_doubles_up_to_its_cap(clock: ManualClock) -> None:
    came = await overdue_times(clock, CallOptions(overdue_after=1, overdue_max=8), 40)
    assert [second for second, _ in came] == [1, 3, 7, 15, 23, 31, 39]
    news = [event.overdue for _, event in came]
    assert all(n is not None for n in news)
    assert [n.next_seconds for n in news if n is not None] == [2, 4, 8, 8, 8, 8, 8]
    assert [n.ran_seconds for n in news if n is not None] == [1, 3, 7, 15, 23, 31, 39]
    first = news[0]
    assert first is not None
    assert (first.progress, first.log) == ({"percent": 40, "page": 4}, "fetched page 4")


async def test_without_a_cap_the_interval_stays_as_it_was(clock: ManualClock) -> None:
    came = await overdue_times(clock, CallOptions(overdue_after=2), 8)
    assert [second for second, _ in came] == [2, 4, 6, 8]


def test_the_cap_is_checked() -> None:
    with pytest.raises(ValueError, match="overdue_max"):
        CallOptions(overdue_after=1, overdue_max=-1).check()


@pytest.mark.parametrize("view", ["transcript", "board"])
async def test_a_12_second_call_costs_a_few_requests(clock: ManualClock, view: str) -> None:
    """Estimated at 1 s, it runs 12: overdue at 1, 3 and 7 s, then its result. Five requests
    (thirteen when the interval stayed 1 s)."""
    provider, nudges, _, _ = await a_slow_call_under_a_patient_model(
        clock, 12, AgentConfig(context_view=view)
    )
    assert len(provider.requests) == 5, [last_user_text(r) for r in provider.requests]
    assert len(nudges) == 3
    assert "has run 1 s" in nudges[0] and "has run 7 s" in nudges[2]
    assert '"percent": 40' in nudges[0], "the nudge carries the progress"
    assert "asked again in 2 s" in nudges[0] and "asked again in 8 s" in nudges[2]


async def test_the_chat_shows_no_nudge_and_no_word_a_timer_prompted(clock: ManualClock) -> None:
    _, _, chat, history = await a_slow_call_under_a_patient_model(clock, 12, AgentConfig())
    said = [(entry.role, entry.text) for entry in chat if entry.text]
    assert said == [
        ("user", "crawl the site"),
        ("agent", "Crawling now."),
        ("agent", "The crawl is done: 12 pages."),
    ]
    (call,) = [call for entry in chat for call in entry.calls]
    assert call.status is CallStatus.COMPLETED
    assert call.note == "overdue at 0:07", "the hidden turns leave a quiet mark on the call"
    asked = [str(m["content"]) for m in history if m["role"] == "user"]
    assert sum("is overdue" in content for content in asked) == 3, "the model still read them"


def test_show_prints_the_chat_and_show_history_what_the_model_read(
    env: dict[str, str], clock: ManualClock
) -> None:
    """The stored conversation of a 12-second call: ``agentos show`` has no nudge and no word
    a timer prompted, the call with its mark; ``--history`` has every nudge."""

    async def store_it() -> None:
        _, _, _, history = await a_slow_call_under_a_patient_model(clock, 12, AgentConfig())
        async with await SqliteStore.open(env["AGENTOS_DB"]) as store:
            config = AgentConfig().model_dump(mode="json")
            stored = StoredSession("crawl", config, "idle", 1.0, 1.0, history=tuple(history))
            await store.create_session(stored)

    anyio.run(store_it)
    chat, history = side_by_side(env, ("show", "crawl"), ("show", "crawl", "--history"))
    assert chat.code == history.code == 0, (chat, history)
    said = [line for line in chat.out.splitlines() if line.startswith(("user:", "agent:"))]
    assert said == [
        "user: crawl the site",
        "agent: Crawling now.",
        "agent: The crawl is done: 12 pages.",
    ]
    assert "(overdue at 0:07)" in chat.out and "is overdue" not in chat.out
    assert history.out.count("is overdue") == 3 and "waiting for: crawl" in history.out


async def test_the_page_shows_the_chat_without_nudges(tmp_path: Path, clock: ManualClock) -> None:
    """The page of the same stored conversation: the person's words and the agent's answers,
    the call with its quiet mark, no nudge."""
    _, _, _, history = await a_slow_call_under_a_patient_model(clock, 12, AgentConfig())
    async with await SqliteStore.open(tmp_path / "agentos.db") as store:
        config = AgentConfig().model_dump(mode="json")
        await store.create_session(
            StoredSession("crawl", config, "idle", 1.0, 1.0, history=tuple(history))
        )
    async with web(tmp_path) as page:
        shown = await page.client.get("/api/sessions/crawl")
    assert shown.status_code == 200, shown.text
    state = shown.json()["state"]
    said = [(entry["role"], entry["text"]) for entry in state["chat"] if entry["text"]]
    assert said == [
        ("user", "crawl the site"),
        ("agent", "Crawling now."),
        ("agent", "The crawl is done: 12 pages."),
    ]
    (widget,) = state["calls"].values()
    assert (widget["status"], widget["note"]) == ("completed", "overdue at 0:07")


async def test_the_terminal_ui_shows_no_nudge_and_marks_the_call(clock: ManualClock) -> None:
    puppet = Puppet()
    provider = ScriptedProvider(
        (lambda r: "has run" in last_user_text(r), lambda r: text("waiting for: crawl")),
        (
            lambda r: not puppet.calls,
            lambda r: tool_calls(
                ("puppet", {"label": "crawl", "expected_seconds": 1}), say="Crawling now."
            ),
        ),
        (lambda r: True, lambda r: text("done")),
    )
    async with chatting(puppet, provider, clock=clock) as (app, pilot, runtime):
        await say(pilot, "crawl the site")
        await until(pilot, runtime, lambda: len(puppet.calls) == 1)
        (call_id,) = puppet.calls
        await until(pilot, runtime, lambda: bool(app.query_one(CallsPane).calls))
        asked = len(provider.requests)
        clock.advance(1)
        await until(pilot, runtime, lambda: len(provider.requests) > asked)
        await until(pilot, runtime, lambda: "overdue" in cell(app, call_id, 4))
        shown = chat_text(app)
        assert "Crawling now." in shown and "crawl the site" in shown
        assert "overdue" not in shown and "waiting for" not in shown, shown
        assert cell(app, call_id, 4).startswith("running · overdue")
        puppet.complete(call_id, "12 pages")
        await until(pilot, runtime, lambda: "agent: done" in chat_text(app))
