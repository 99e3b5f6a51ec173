"""The live web page in a real browser (Debian's chromium through Playwright), used as a person
would: start a session, ask, watch three spinners with progress, ask again while they run,
cancel the stuck one, see the late answers land, reload, two tabs on two sessions, open a
stored session with its Open button.

Needs ``/usr/bin/chromium`` (``apt-get install chromium``; ``.ci/run`` installs it). Elsewhere
these tests skip saying so; under ``CI=true`` they fail instead, so CI cannot pass without them.
The calls are ``Puppet`` calls the test moves, so nothing waits on a timer.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from collections.abc import Iterator
from contextlib import asynccontextmanager
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
import uvicorn
from pydantic import BaseModel

from agentos import AgentConfig
from agentos import Answer
from agentos import AnthropicProvider
from agentos import Asked
from agentos import CallStatus
from agentos import Host
from agentos import JsonObject
from agentos import ManualClock
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import SqliteStore
from agentos import ToolContext
from agentos import tool
from agentos.testing import MessagesStandIn
from agentos.testing import Puppet
from agentos.testing import Reply
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import message_body
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.web import make_app
from tests.support import ROOT
from tests.support.backends import hosted
from tests.support.backends import running
from tests.support.backends import running_agent
from tests.support.browser import CHROMIUM
from tests.support.browser import CHROMIUM_ARGS
from tests.support.mcp_stdio import TOOLS_SERVER
from tests.support.researcher import lead_and_researcher
from tests.support.skips import cannot_run
from tests.support.web import held_elsewhere

WAIT_MS = 15_000
PEOPLE = ("Jane", "Jack", "Joe")

pytestmark = pytest.mark.anyio

if not os.path.exists(CHROMIUM):
    reason = f"browser tests need Debian's chromium at {CHROMIUM}: apt-get install chromium"
    cannot_run("the browser tests", reason, module=True)

from playwright.async_api import Browser  # noqa: E402
from playwright.async_api import ConsoleMessage  # noqa: E402
from playwright.async_api import Page  # noqa: E402
from playwright.async_api import Request  # noqa: E402
from playwright.async_api import Response  # noqa: E402
from playwright.async_api import Route  # noqa: E402
from playwright.async_api import async_playwright  # noqa: E402
from playwright.async_api import expect  # noqa: E402

expect.set_options(timeout=WAIT_MS)  # a bound, not a measure: a loaded CI machine is slow


def model() -> ScriptedProvider:
    """Calendars for a meeting question, three jobs (one expected to take an hour),
    "4" for a sum, a summary of results."""

    def meet(request: Any) -> Any:
        return tool_calls(*[("puppet", {"label": p}) for p in PEOPLE], say="Checking all three.")

    def jobs(request: Any) -> Any:
        long = ("puppet", {"label": "Long", "expected_seconds": 3600})
        return tool_calls(long, ("puppet", {"label": "Data"}), ("puppet", {"label": "Picture"}))

    return ScriptedProvider(
        (lambda r: "meet" in last_user_text(r), meet),
        (lambda r: "jobs" in last_user_text(r), jobs),
        (lambda r: "2+2" in last_user_text(r), lambda r: text("4")),
        (lambda r: bool(last_tool_results(r)), lambda r: text("Still working on it.")),
        (lambda r: True, lambda r: text("Noted.")),
    )


@dataclass
class Served:
    url: str
    puppet: Puppet
    runtime: Runtime
    host: Host
    browser: Browser

    def calls_of(self, label: str) -> list[str]:
        return [
            call_id
            for call_id in self.puppet.calls
            if self.runtime.status(call_id).tool_input.get("label") == label
        ]


@asynccontextmanager
async def serving(
    host: Host, runtime: Runtime, config: AgentConfig
) -> AsyncIterator[tuple[str, Browser]]:
    """The web page over ``host`` on a loopback port, and a browser: the page's URL."""
    listening = socket.create_server(("127.0.0.1", 0))
    async with async_playwright() as playwright:
        app = make_app(host, runtime, config=config)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=list(CHROMIUM_ARGS)
        )
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: server.serve(sockets=[listening]))
            try:
                yield f"http://127.0.0.1:{listening.getsockname()[1]}", browser
            finally:
                await browser.close()
                server.should_exit = True
        app.state.pages.close()


@asynccontextmanager
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    puppet = Puppet()
    async with (
        await SqliteStore.open(tmp_path / "agentos.db") as store,
        running(model(), puppet.tool, store=store) as (runtime, host),
        serving(host, runtime, AgentConfig()) as (url, browser),
    ):
        yield Served(url, puppet, runtime, host, browser)


async def new_session(page: Page, url: str) -> None:
    await page.goto(url)
    await page.click("#new-session")
    await page.wait_for_url("**/sessions/*")
    await expect(page.locator("#connection")).to_have_text("live", timeout=WAIT_MS)


async def say(page: Page, words: str) -> None:
    await page.fill("#message", words)
    await page.click("#composer button")


def row(page: Page, label: str) -> Any:
    return page.locator(".call", has_text=f'label="{label}"')


async def cancel(call: Any) -> None:
    """Cancel asks once, in the call's own row: Cancel, then Yes."""
    await call.locator(".cancel").first.click()
    await call.locator(".confirm-cancel").first.click()


async def shows(page: Page, label: str, status: str) -> None:
    """The call labelled ``label`` shows ``status`` (within the wait)."""
    await expect(row(page, label)).to_have_attribute("data-status", status, timeout=WAIT_MS)


async def held_back(page: Page, pattern: str) -> anyio.Event:
    """Hold the page's requests to ``pattern`` back until the event returned is set (the
    data has arrived): what the page shows while it waits for them."""
    arrived = anyio.Event()

    async def held(route: Route) -> None:
        await arrived.wait()
        await route.continue_()

    await page.route(pattern, held)
    return arrived


async def test_a_person_watches_asks_cancels_and_reloads(tmp_path: Path) -> None:
    async with served(tmp_path) as s:
        page = await s.browser.new_page()
        await new_session(page, s.url)
        await say(page, "When can Jane, Jack and Joe meet?")
        for person in PEOPLE:
            await shows(page, person, "running")
        for percent, person in zip((30, 60, 10), PEOPLE, strict=True):
            (call_id,) = s.calls_of(person)
            s.puppet.progress(call_id, {"percent": percent})
        await expect(row(page, "Jack").locator("progress")).to_have_attribute(
            "value", "60", timeout=WAIT_MS
        )
        await say(page, "Meanwhile, what is 2+2?")
        await expect(page.locator(".entry.agent .text", has_text="4")).to_be_visible(
            timeout=WAIT_MS
        )
        assert await row(page, "Joe").get_attribute("data-status") == "running", "still out"
        await cancel(row(page, "Joe"))
        await shows(page, "Joe", "cancelled")
        await expect(row(page, "Joe").locator(".mark")).to_have_css(
            "background-color", "rgb(207, 34, 46)"
        )
        for person in ("Jane", "Jack"):
            (call_id,) = s.calls_of(person)
            s.puppet.complete(call_id, f"{person} is free 10-11")
        for person in ("Jane", "Jack"):
            await shows(page, person, "completed")
        await expect(row(page, "Jane").locator(".mark")).to_have_css(
            "background-color", "rgb(26, 127, 55)"
        )
        await row(page, "Jane").locator(".details-toggle").click()
        await expect(row(page, "Jane").locator(".details")).to_contain_text(
            "Jane is free 10-11", timeout=WAIT_MS
        )
        await row(page, "Jane").locator(".details-toggle").click()  # folded again
        chat_before = await page.locator("#chat").inner_text()
        await page.reload()
        await expect(page.locator("#connection")).to_have_text("live", timeout=WAIT_MS)
        await shows(page, "Joe", "cancelled")
        assert await page.locator("#chat").inner_text() == chat_before, "the same after a reload"


async def test_two_tabs_on_two_sessions_and_markup_stays_text(tmp_path: Path) -> None:
    evil = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'
    async with served(tmp_path) as s:
        first, second = await s.browser.new_page(), await s.browser.new_page()
        await new_session(first, s.url)
        await new_session(second, s.url)
        assert first.url != second.url
        await say(first, evil)
        await expect(first.locator(".entry.user .text")).to_have_text(evil, timeout=WAIT_MS)
        await say(second, "Meanwhile, what is 2+2?")
        await expect(second.locator(".entry.agent .text")).to_have_text("4", timeout=WAIT_MS)
        await expect(first.locator(".entry.agent .text")).to_have_text("Noted.", timeout=WAIT_MS)
        assert await first.locator("#chat img, #chat script").count() == 0
        assert await first.evaluate("window.pwned === undefined")
        assert "2+2" not in await first.locator("#chat").inner_text(), "each tab its session"
        await first.goto(s.url)
        await expect(first.locator("#sessions tbody tr")).to_have_count(2, timeout=WAIT_MS)
        await settle(s.runtime)


async def test_a_stored_session_shows_nobody_runs_it_until_written_to(tmp_path: Path) -> None:
    """A session nobody runs reads from the store; writing to it (or Open) runs it here."""
    async with served(tmp_path) as s:
        page = await s.browser.new_page()
        await new_session(page, s.url)
        await say(page, "Meanwhile, what is 2+2?")
        await expect(page.locator(".entry.agent .text")).to_have_text("4", timeout=WAIT_MS)
        session_id = page.url.rsplit("/", 1)[1]
        await s.host.unload(session_id)
        await expect(page.locator("#read-only")).to_be_visible(timeout=WAIT_MS)
        await page.reload()  # a stored session's page: read from the store, nothing resumed
        await expect(page.locator("#read-only")).to_contain_text(
            "No process runs this session: writing to it, or Open, runs it here.",
            timeout=WAIT_MS,
        )
        await expect(page.locator(".entry.agent .text")).to_have_text("4", timeout=WAIT_MS)
        await expect(page.locator("#context")).to_contain_text("[assistant] 4")
        assert s.host.list() == []
        await expect(page.locator("#message")).to_be_enabled()
        await say(page, "Thanks")
        await expect(page.locator("#read-only")).to_be_hidden(timeout=WAIT_MS)
        await expect(page.locator(".entry.agent .text").last).to_have_text(
            "Noted.", timeout=WAIT_MS
        )
        assert [summary.session_id for summary in s.host.list()] == [session_id]


@asynccontextmanager
async def page_on(host: Host, runtime: Runtime, config: AgentConfig) -> AsyncIterator[Page]:
    """The web page over ``host`` served on loopback, a browser on a new session's page."""
    async with serving(host, runtime, config) as (url, browser):
        page = await browser.new_page()
        await new_session(page, url)
        yield page


async def test_an_mcp_servers_call_shows_its_progress_and_its_cancel_reaches_the_server(
    tmp_path: Path,
) -> None:
    config = AgentConfig(mcp_servers={"files": TOOLS_SERVER})
    provider = ScriptedProvider(
        (lambda r: last_user_text(r) == "read", lambda r: tool_calls(("slow", {"steps": 4}))),
        (lambda r: True, lambda r: text("Reading.")),
    )
    async with (
        running_agent(config, provider) as (runtime, host),
        page_on(host, runtime, config) as page,
    ):
        await say(page, "read")
        call = page.locator(".call", has_text="slow")
        await expect(call).to_have_attribute("data-status", "running", timeout=WAIT_MS)
        await expect(call.locator("progress")).to_have_attribute("value", "100", timeout=WAIT_MS)
        await cancel(call)
        await expect(call).to_have_attribute("data-status", "cancelled", timeout=WAIT_MS)
        seen = await runtime.wait(runtime.submit("cancels_seen", {"at_least": 1}), 20)
        assert seen.result == {"result": 1}, "the cancel reached the server's tool"


async def test_a_sub_agents_call_opens_on_the_childs_chat_and_its_cancel_goes_down() -> None:
    puppet = Puppet()
    config, provider = lead_and_researcher()
    async with (
        running(provider, puppet.tool) as (runtime, host),
        page_on(host, runtime, config) as page,
    ):
        await say(page, "research")
        call = page.locator(".call", has_text="researcher(")
        await expect(call).to_have_attribute("data-status", "running", timeout=WAIT_MS)
        await call.locator("details.child summary").click()
        chat = call.locator(".child-chat")
        await expect(chat).to_contain_text("find flights", timeout=WAIT_MS)
        await expect(chat).to_contain_text("looking up flights", timeout=WAIT_MS)
        # the task came from this page's agent, the answer from the researcher: no "user"
        await expect(chat.locator(".who").first).to_have_text("agent")
        await expect(chat.locator(".who").last).to_have_text("researcher")
        await expect(chat).to_contain_text("puppet", timeout=WAIT_MS)
        await cancel(call)
        await expect(call).to_have_attribute("data-status", "cancelled", timeout=WAIT_MS)
        with anyio.fail_after(20):
            while not all(c.cleaned_up for c in puppet.calls.values()):
                await settle(runtime)
        (work,) = puppet.calls.values()
        assert work.cancelled, "the cancel reached the child's own call"


async def test_a_streaming_answer_grows_on_the_page_then_stays_as_the_chat(tmp_path: Path) -> None:
    """Issue 28: the real SDK streams from the stand-in, held after its first words and the
    call it asks for: the page shows both while the reply forms; once it is whole, the
    forming entry gives way to the chat's, with the call running in it."""
    asked = {"type": "tool_use", "id": "toolu_p", "name": "puppet", "input": {"label": "Jane"}}
    reply = message_body([{"type": "text", "text": "Looking at Jane's calendar."}, asked])
    with MessagesStandIn() as api:
        held = Reply(
            200, {**reply, "stop_reason": "tool_use"}, chunk=4, stop_after=18, then="pause"
        )
        api.script(held)  # held once the call's block is whole
        api.always = Reply(200, message_body([{"type": "text", "text": "Noted."}]))
        provider = AnthropicProvider(api_key="sk-test", base_url=api.url, max_retries=0)
        puppet = Puppet()
        async with (
            running(provider, puppet.tool) as (runtime, host),
            serving(host, runtime, AgentConfig()) as (url, browser),
        ):
            page = await browser.new_page()
            await new_session(page, url)
            await say(page, "Is Jane free?")
            forming = page.locator("#streaming")
            await expect(forming.locator(".text")).to_have_text(
                "Looking at Jane's calendar.", timeout=WAIT_MS
            )
            await expect(forming.locator(".call.forming .signature")).to_have_text(
                'puppet(label="Jane")', timeout=WAIT_MS
            )
            assert puppet.calls == {}, "the call starts once the reply is whole"
            api.resume.set()
            await expect(forming).to_have_count(0, timeout=WAIT_MS)
            await shows(page, "Jane", "running")
            await expect(page.locator(".entry.agent .text").first).to_have_text(
                "Looking at Jane's calendar.", timeout=WAIT_MS
            )
        await provider.aclose()


async def test_the_list_and_a_session_page_feel_finished(tmp_path: Path) -> None:
    """Issue 30: the list's empty state, titles and what each session does; a progress
    bar's percent; Cancel asking once, in place; a call's details that stay live; what the model
    reads next as messages by role, the raw text behind a toggle."""
    async with served(tmp_path) as s:
        page = await s.browser.new_page()
        await page.goto(s.url)
        await expect(page.locator("#empty")).to_contain_text("No sessions yet", timeout=WAIT_MS)
        assert await page.locator("#loading").count() == 0
        await page.click("#new-session")
        await page.wait_for_url("**/sessions/*")
        await expect(page.locator("#chat-empty")).to_contain_text("write the first message")
        await say(page, "When can Jane, Jack and Joe meet?")
        for person in PEOPLE:
            await shows(page, person, "running")
        (jane,), (jack,) = s.calls_of("Jane"), s.calls_of("Jack")
        s.puppet.progress(jack, {"percent": 60})
        await expect(row(page, "Jack").locator(".percent")).to_have_text("60%", timeout=WAIT_MS)

        await row(page, "Jane").locator(".details-toggle").click()
        details = row(page, "Jane").locator(".details")
        await expect(details.locator(".timing")).to_contain_text("running for", timeout=WAIT_MS)
        s.puppet.complete(jane, "Jane is free 9-10")
        await expect(details).to_contain_text("Jane is free 9-10", timeout=WAIT_MS)
        await expect(details.locator(".timing")).to_contain_text("ran for")

        joe = row(page, "Joe")
        await joe.locator(".cancel").click()
        await expect(joe.locator(".confirm")).to_have_text("Cancel this call?")
        await joe.locator(".keep").click()
        await expect(joe.locator(".confirm")).to_have_count(0)
        assert await joe.get_attribute("data-status") == "running", "keeping it cancels nothing"
        await cancel(joe)
        await shows(page, "Joe", "cancelled")

        reading = page.locator("#reading")
        await expect(reading.locator(".message.user .said").first).to_have_text(
            "When can Jane, Jack and Joe meet?", timeout=WAIT_MS
        )
        await expect(reading.locator(".message.assistant details.tool_use")).to_have_count(3)
        assert await reading.locator("details[open]").count() == 0, "tool uses come folded"
        await expect(page.locator("#context")).to_be_hidden()
        await page.click("#raw")
        await expect(page.locator("#context")).to_be_visible()
        await expect(page.locator("#context")).to_contain_text("[assistant] tool_use puppet")
        await expect(reading).to_be_hidden()

        await page.goto(s.url)
        first = page.locator("#sessions tbody tr").first
        await expect(first.locator(".session-title")).to_have_text(
            "When can Jane, Jack and Joe meet?", timeout=WAIT_MS
        )
        await expect(first.locator(".doing")).to_have_text("1 call running")
        s.puppet.complete(jack, "Jack is free 9-10")
        with anyio.fail_after(20):
            while s.runtime.status(jack).status is not CallStatus.COMPLETED:
                await settle(s.runtime)
        await page.reload()
        await expect(first.locator(".doing")).to_have_text("waiting for you", timeout=WAIT_MS)


async def test_a_session_is_renamed_from_its_title(tmp_path: Path) -> None:
    """Issue 30: the header's title is the first message until the session is named: a
    click on it (or on rename) makes it an input; Escape cancels, Enter saves, and so does
    leaving it; the list shows the name."""
    async with served(tmp_path) as s:
        page = await s.browser.new_page()
        await new_session(page, s.url)
        session_id = page.url.rsplit("/", 1)[1]
        title, field = page.locator("#title"), page.locator("#title-input")
        await expect(title).to_have_text(session_id)
        await say(page, "Meanwhile, what is 2+2?")
        await expect(title).to_have_text("Meanwhile, what is 2+2?", timeout=WAIT_MS)

        await title.click()
        await expect(field).to_have_value("Meanwhile, what is 2+2?")
        await expect(field).to_be_focused()
        await field.fill("Not this")
        await field.press("Escape")
        await expect(field).to_have_count(0)
        await expect(title).to_have_text("Meanwhile, what is 2+2?")
        assert s.host.get(session_id).title == "Meanwhile, what is 2+2?", "Escape saves nothing"

        await page.click("#rename")
        await field.fill("  Sums  and   more ")
        await field.press("Enter")
        await expect(title).to_have_text("Sums and more", timeout=WAIT_MS)
        await expect(page).to_have_title("agentos Sums and more")
        assert s.host.get(session_id).title == "Sums and more"

        await title.click()
        await field.fill("Arithmetic")
        await page.locator("#message").focus()  # leaving the input saves it
        await expect(title).to_have_text("Arithmetic", timeout=WAIT_MS)
        await expect(page.locator("#rename")).to_be_visible()
        await s.host.rename(session_id, "Renamed elsewhere")  # the page hears of it too
        await expect(title).to_have_text("Renamed elsewhere", timeout=WAIT_MS)

        await page.goto(s.url)
        first = page.locator("#sessions tbody tr").first
        await expect(first.locator(".session-title")).to_have_text(
            "Renamed elsewhere", timeout=WAIT_MS
        )
        assert s.host.store is not None
        stored = await s.host.store.load_session(session_id)
        assert stored is not None and stored.title == "Renamed elsewhere"


async def test_a_board_sessions_page_replies_under_a_node(tmp_path: Path) -> None:
    puppet = Puppet()
    config = AgentConfig(context_view="board")
    async with (
        running(model(), puppet.tool) as (runtime, host),
        page_on(host, runtime, config) as page,
    ):
        await say(page, "Hello there")
        await expect(page.locator(".entry.agent .text")).to_have_text("Noted.", timeout=WAIT_MS)
        first = page.locator(".entry.user").first
        node = int(str(await first.get_attribute("data-node")))
        await expect(page.locator("#reading .board")).to_contain_text("Hello there")
        await first.locator(".reply").click()
        await expect(page.locator("#replying")).to_have_text(
            "Replying under your “Hello there” New thread instead"
        )
        await say(page, "And one more thing")
        await expect(page.locator("#replying")).to_be_hidden(timeout=WAIT_MS)
        session = host.get(page.url.rsplit("/", 1)[1])
        with anyio.fail_after(20):
            while True:
                board = session.board
                assert board is not None
                said = [n for n in board.nodes.values() if n.text == "And one more thing"]
                if said:
                    break
                await settle(runtime)
        assert said[0].parent == node, "the reply went under the node it answers"


async def test_the_pages_load_with_no_console_error_and_no_failed_request(tmp_path: Path) -> None:
    """The list and a session's page: nothing the browser asks for is missing (the icon
    was a 404, two console errors on every load) and no script complains."""
    async with served(tmp_path) as s:
        page = await s.browser.new_page()
        complaints: list[str] = []

        def console(message: ConsoleMessage) -> None:
            if message.type == "error":
                complaints.append(message.text)

        def failed(request: Request) -> None:
            if request.failure != "net::ERR_ABORTED":  # a stream the page leaves is aborted
                complaints.append(f"failed: {request.url}")

        def answered(response: Response) -> None:
            if response.status >= 400:
                complaints.append(f"{response.status} {response.url}")

        page.on("console", console)
        page.on("pageerror", lambda error: complaints.append(str(error)))
        page.on("requestfailed", failed)
        page.on("response", answered)
        await new_session(page, s.url)
        await say(page, "Meanwhile, what is 2+2?")
        await expect(page.locator(".entry.agent .text")).to_have_text("4", timeout=WAIT_MS)
        await page.goto(s.url)
        await expect(page.locator("#sessions tbody tr")).to_have_count(1, timeout=WAIT_MS)
        assert complaints == []
        icon = await page.evaluate(
            "fetch(document.querySelector('link[rel=icon]').href).then(r => r.status)"
        )
        assert icon == 200
        await settle(s.runtime)


PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwAD"
    + "hgGAWjR9awAAAABJRU5ErkJggg=="
)
"""A 1x1 PNG, as a tool's result may carry an image."""


async def test_a_calls_details_open_beside_it_in_words_and_stay_live(tmp_path: Path) -> None:
    """Issue 47: a call's details open under its own row (not at the bottom of the other
    column): its input, its time in human units with what is left of the expected time,
    progress and the newest log lines as they come, its result readable (text as text,
    JSON as a tree that folds, an image drawn) or why it was cancelled; the raw JSON, with
    its epoch timestamps, only behind a toggle."""
    async with served(tmp_path) as s:
        page = await s.browser.new_page()
        await new_session(page, s.url)
        assert await page.evaluate("[agentos.duration(12), agentos.duration(100)]") == [
            "12 s",
            "1 min 40 s",
        ]
        assert await page.evaluate("[agentos.about(6.6), agentos.about(118)]") == [
            "about 7 s",
            "about 2 min",
        ]
        await say(page, "Start the jobs")
        for label in ("Long", "Data", "Picture"):
            await shows(page, label, "running")
        long = row(page, "Long")
        await long.locator(".details-toggle").click()
        details = long.locator(".details")
        await expect(details).to_be_visible()
        await expect(details.locator(".facts")).to_contain_text('label: "Long"', timeout=WAIT_MS)
        await expect(details.locator(".timing")).to_contain_text("expected 1 h · about 1 h left")
        await expect(details.locator(".timing")).to_contain_text("running for")
        signature = await long.locator(".signature").bounding_box()
        box = await details.bounding_box()
        assert signature is not None and box is not None
        assert 0 < box["y"] - signature["y"] < 120, "the details sit right under the call"

        (call_id,) = s.calls_of("Long")
        s.puppet.progress(call_id, {"percent": 40})
        s.puppet.log(call_id, "fetched page 4")
        await expect(details.locator("progress")).to_have_attribute("value", "40", timeout=WAIT_MS)
        await expect(details.locator(".lines")).to_contain_text("fetched page 4", timeout=WAIT_MS)
        await expect(details.locator(".timing")).to_contain_text("left at this pace")
        assert '"at"' not in await details.inner_text(), "no epoch timestamps in plain view"
        await expect(details.locator("pre.raw")).to_have_count(0)
        await details.locator(".raw-toggle").click()
        await expect(details.locator("pre.raw")).to_contain_text('"at"')
        await details.locator(".raw-toggle").click()
        await expect(details.locator("pre.raw")).to_have_count(0)

        (data,) = s.calls_of("Data")
        cities = [{"name": city, "degrees": 7} for city in ("Oslo", "Bergen", "Tromsø")]
        s.puppet.complete(data, {"rows": cities, "total": 3})
        await shows(page, "Data", "completed")
        await row(page, "Data").locator(".details-toggle").click()
        result = row(page, "Data").locator(".details [data-fact=result]")
        await expect(result).to_contain_text("total: 3", timeout=WAIT_MS)
        rows = result.locator("details.json-tree").first
        await expect(rows.locator("summary").first).to_have_text("[ 3 items ]")
        await expect(rows).to_contain_text('{"name":"Oslo","degrees":7}')
        await rows.locator("summary").first.click()  # it folds
        await expect(rows.locator("ul").first).to_be_hidden()

        (picture,) = s.calls_of("Picture")
        image = {"type": "image", "source": {"type": "base64", "media_type": "image/png"}}
        image["source"]["data"] = PIXEL  # type: ignore[index]
        said = {"type": "text", "text": "a red dot"}
        s.puppet.complete(picture, {"type": "tool_content", "content": [said, image]})
        await shows(page, "Picture", "completed")
        await row(page, "Picture").locator(".details-toggle").click()
        drawn = row(page, "Picture").locator("img.result-image")
        await expect(drawn).to_be_visible(timeout=WAIT_MS)
        assert await drawn.evaluate("image => image.complete && image.naturalWidth") == 1
        shown = row(page, "Picture").locator(".details [data-fact=result]")
        await expect(shown.locator(".text-result")).to_have_text("a red dot")

        await cancel(long)
        await shows(page, "Long", "cancelled")
        cancelled = details.locator("[data-fact=cancelled]")
        await expect(cancelled).to_have_text("cancelled from the web page", timeout=WAIT_MS)
        await expect(details.locator("[data-fact=error]")).to_have_count(0)  # said once
        await expect(details.locator(".timing")).to_contain_text("ran for")
        await long.locator(".details-toggle").click()
        await expect(long.locator(".details")).to_have_count(0)
        await settle(s.runtime)


async def test_the_details_of_an_orphaned_call_say_it_was_lost(tmp_path: Path) -> None:
    """Issue 47: an orphaned call (running when its process stopped) never ended, yet its
    details said 'This call ended a while ago' and its time 'never started'. Read from the
    store and once opened here, they say no process runs it: it was lost, its time is not
    known."""
    path = tmp_path / "agentos.db"
    puppet = Puppet()
    async with hosted(path, model(), puppet.tool) as (_, runtime, host):
        session = await host.create_session(AgentConfig(), session_id="s")
        session.post("Start the jobs")
        with anyio.fail_after(10):
            while len(puppet.calls) < 3:
                await settle(runtime)
        await session.commit()  # the process stops with its three calls running
    async with served(tmp_path) as s:
        page = await s.browser.new_page()
        await page.goto(f"{s.url}/sessions/s")
        await expect(page.locator("#read-only")).to_contain_text("No process runs this session")
        for opening in (False, True):
            if opening:
                await page.click("#open")
                await expect(page.locator("#read-only")).to_be_hidden(timeout=WAIT_MS)
            await shows(page, "Data", "orphaned")
            await row(page, "Data").locator(".details-toggle").click()
            details = row(page, "Data").locator(".details")
            await expect(details.locator("[data-fact=outcome]")).to_contain_text(
                "no process runs this call any more", timeout=WAIT_MS
            )
            await expect(details.locator(".timing")).to_have_text(
                "not known: the call was lost when the process running it stopped"
            )
            assert "ended a while ago" not in await details.inner_text()
            await expect(details.locator("[data-fact=kept]")).to_have_count(0)
            await expect(row(page, "Data").locator(".elapsed")).to_have_count(0)
            await row(page, "Data").locator(".details-toggle").click()
        await expect(page.locator("#error")).to_be_hidden()
        await settle(s.runtime)


def seconds_in(words: str) -> float:
    """The seconds a time in words says: "0.4 s", "40 s", "1 min 40 s"."""
    units = {"s": 1, "min": 60, "h": 3600, "d": 86400}
    parts = words.split()
    return sum(float(n) * units[unit] for n, unit in zip(parts[::2], parts[1::2], strict=True))


async def test_a_running_calls_clock_does_not_go_back_when_its_details_open(
    tmp_path: Path,
) -> None:
    """Issue 47: a running call's clock counted from the server's last event about it at
    every redraw, so opening its details 40 s after that event showed its time back at
    that event's. The page's clock is Playwright's: 40 s pass in the page in an instant,
    with no event about the call."""
    async with served(tmp_path) as s:
        page = await s.browser.new_page()
        await page.clock.install()
        await new_session(page, s.url)
        await say(page, "Start the jobs")
        for label in ("Long", "Data", "Picture"):
            await shows(page, label, "running")
        data = row(page, "Data")
        clock = data.locator(".elapsed")
        await page.clock.fast_forward("00:40")
        await expect(clock).to_have_text(re.compile(r"^[4-9]\d s$"), timeout=WAIT_MS)
        before = seconds_in(await clock.inner_text())
        await data.locator(".details-toggle").click()
        timing = data.locator(".details .timing")
        await expect(timing).to_contain_text("running for", timeout=WAIT_MS)
        assert seconds_in(await clock.inner_text()) >= before, "the row's clock went back"
        shown = re.match(r"running for ([^·]+)", await timing.inner_text())
        assert shown is not None and seconds_in(shown[1]) >= before, "the details' too"
        for call_id in s.puppet.calls:
            s.puppet.complete(call_id, "done")
        await settle(s.runtime)


async def test_what_the_model_reads_next_is_a_panel_closed_on_a_narrow_screen() -> None:
    """Issue 47: the model's context was a column as large as the chat, repeating it, and a
    board's long lines ran off its right edge. It is a panel: open beside the chat from
    1,000 px wide, closed below (the person opens it); the board's text wraps."""
    long_word = "supercalifragilistic" * 8
    puppet = Puppet()
    config = AgentConfig(context_view="board")
    async with (
        running(model(), puppet.tool) as (runtime, host),
        serving(host, runtime, config) as (url, browser),
    ):
        page = await browser.new_page(viewport={"width": 900, "height": 800})
        await new_session(page, url)
        await say(page, f"Hello there {long_word}")
        await expect(page.locator(".entry.agent .text")).to_have_text("Noted.", timeout=WAIT_MS)
        panel = page.locator("#reads")
        assert await panel.evaluate("panel => panel.open") is False, "closed below 1,000 px"
        await expect(page.locator("#reading")).to_be_hidden()
        await panel.locator("summary").click()
        board = page.locator("#reading .board")
        await expect(board).to_be_visible()
        await expect(board).to_contain_text("Hello there")
        assert await board.evaluate("board => board.scrollWidth <= board.clientWidth"), "it wraps"

        wide = await browser.new_page(viewport={"width": 1280, "height": 800})
        await wide.goto(page.url)
        await expect(wide.locator("#reading .board")).to_be_visible(timeout=WAIT_MS)
        assert await wide.locator("#reads").evaluate("panel => panel.open") is True
        chat = await wide.locator("#chat").bounding_box()
        reads = await wide.locator("#reads").bounding_box()
        assert chat is not None and reads is not None
        assert reads["x"] >= chat["x"] + chat["width"], "beside the chat"
        assert reads["width"] < chat["width"], "narrower than the chat"
        await settle(runtime)


async def fits(page: Page, width: int) -> None:
    """Nothing on the page reaches past its right edge: no sideways scroll, and every
    visible button of a call within the viewport."""
    sideways = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    assert await page.evaluate(sideways) <= 0, f"the page scrolls sideways at {width} px"
    for button in await page.locator(".call button:visible").all():
        box = await button.bounding_box()
        assert box is not None
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, await button.inner_text()


@pytest.mark.parametrize("width", [360, 420])
async def test_the_pages_work_on_a_phone_with_no_sideways_scroll(
    tmp_path: Path, width: int
) -> None:
    """Issue 47: at 420 px the page scrolled sideways and a call's buttons were off screen.
    From 360 px up, the list, a session with running calls (a call's details open, Cancel
    asking, the title being renamed) and a board session fit the screen's width."""
    viewport = {"width": width, "height": 740}
    async with served(tmp_path) as s:
        page = await s.browser.new_page(viewport=viewport)  # type: ignore[arg-type]
        await page.goto(s.url)
        await expect(page.locator("#empty")).to_be_visible(timeout=WAIT_MS)
        await fits(page, width)
        await page.click("#new-session")
        await page.wait_for_url("**/sessions/*")
        await expect(page.locator("#connection")).to_have_text("live", timeout=WAIT_MS)
        await fits(page, width)  # its title is the session's whole id until it is named
        await say(page, "When can Jane, Jack and Joe meet? " + "Soon, " * 30)
        for person in PEOPLE:
            await shows(page, person, "running")
        (jack,) = s.calls_of("Jack")
        s.puppet.progress(jack, {"percent": 60})
        s.puppet.log(jack, "read " + "an-unbroken-line-of-log-" * 6)
        await expect(row(page, "Jack").locator(".percent")).to_have_text("60%", timeout=WAIT_MS)
        await fits(page, width)
        await row(page, "Jack").locator(".details-toggle").click()
        await expect(row(page, "Jack").locator(".details .lines")).to_contain_text(
            "an-unbroken", timeout=WAIT_MS
        )
        await row(page, "Joe").locator(".cancel").click()
        await expect(row(page, "Joe").locator(".confirm-cancel")).to_be_visible()
        await fits(page, width)
        await row(page, "Joe").locator(".confirm-cancel").click()
        await shows(page, "Joe", "cancelled")
        await page.locator("#title").click()
        await expect(page.locator("#title-input")).to_be_visible()
        await fits(page, width)
        await page.locator("#title-input").press("Escape")
        await page.locator("#reads > summary").click()
        await expect(page.locator("#reading")).to_be_visible()
        await fits(page, width)
        await page.goto(s.url)
        await expect(page.locator("#sessions tbody tr")).to_have_count(1, timeout=WAIT_MS)
        await fits(page, width)
        await settle(s.runtime)

    puppet = Puppet()
    async with (
        running(model(), puppet.tool) as (runtime, host),
        serving(host, runtime, AgentConfig(context_view="board")) as (url, browser),
    ):
        page = await browser.new_page(viewport=viewport)  # type: ignore[arg-type]
        await new_session(page, url)
        await say(page, "Hello there, " + "a-word-too-long-for-a-phone-" * 5)
        await expect(page.locator(".entry.agent .text")).to_have_text("Noted.", timeout=WAIT_MS)
        await page.locator("#reads > summary").click()
        await expect(page.locator("#reading .board")).to_contain_text("Hello there")
        await page.locator(".entry.user .reply").first.click()
        await expect(page.locator("#replying")).to_be_visible()
        await fits(page, width)
        await settle(runtime)


@contextmanager
def another_process_holding(database: Path, model: str | None = None) -> Iterator[str]:
    """A process (tests/support/web_holder.py) that holds session ``held`` in ``database``, until
    the block ends: its holder name. ``model``: the ``model`` its agent names."""
    command = [sys.executable, "-m", "tests.support.web_holder", str(database)]
    command += [] if model is None else [model]
    pipe = subprocess.PIPE
    with subprocess.Popen(command, cwd=ROOT, stdin=pipe, stdout=pipe, text=True) as process:
        assert process.stdin is not None and process.stdout is not None
        try:
            ready = process.stdout.readline().split(maxsplit=1)
            assert ready[:1] == ["ready"], f"the holder did not start: {ready}"
            yield ready[1].strip()
        finally:
            process.stdin.close()
            process.wait(timeout=30)


async def test_a_session_another_process_holds_says_who_and_takes_over(tmp_path: Path) -> None:
    """Issue 47: the page told a person to call resume(..., steal=True). It says in words
    which process holds the session and when it last changed, and its Take over button
    (asking once) takes the session here: the other process stops writing it."""
    with another_process_holding(tmp_path / "agentos.db") as holder:
        async with served(tmp_path) as s:
            page = await s.browser.new_page()
            await page.goto(f"{s.url}/sessions/held")
            said = page.locator("#read-only")
            await expect(said).to_contain_text(
                f"Another process runs this session: {holder}.", timeout=WAIT_MS
            )
            await expect(said).to_contain_text("The session last changed")
            await expect(page.locator("#message")).to_be_disabled()
            await expect(page.locator("#open")).to_be_hidden()
            assert "steal" not in await page.locator("body").inner_text()
            await page.click("#take-over")
            await expect(page.locator("#taking-over")).to_contain_text(
                f"Take this session over from {holder}?"
            )
            await page.click("#take-over-no")
            await expect(page.locator("#take-over")).to_be_visible()
            assert (await s.host.holders())["held"] == holder, "keeping it takes nothing"
            await page.click("#take-over")
            await page.click("#take-over-yes")
            await expect(said).to_be_hidden(timeout=WAIT_MS)
            assert (await s.host.holders())["held"] == s.host.holder
            await say(page, "Thanks, mine now")
            await expect(page.locator(".entry.agent .text").last).to_have_text(
                "Noted.", timeout=WAIT_MS
            )
            texts = await page.locator(".entry .text").all_inner_texts()
            assert texts == ["hello", "ok", "Thanks, mine now", "Noted."]
            await settle(s.runtime)


async def test_a_take_over_this_server_cannot_run_says_why_and_takes_nothing(
    tmp_path: Path,
) -> None:
    """Issue 47: Take over of a session whose model function this server cannot import
    answered a bare 500 after taking the session from its holder, so nobody ran it. The
    page now says why it cannot, and the other process still holds the session."""
    with another_process_holding(tmp_path / "agentos.db", "agentos_not_here:reply") as holder:
        async with served(tmp_path) as s:
            page = await s.browser.new_page()
            await page.goto(f"{s.url}/sessions/held")
            said = page.locator("#read-only")
            await expect(said).to_contain_text(holder, timeout=WAIT_MS)
            await page.click("#take-over")
            await page.click("#take-over-yes")
            error = page.locator("#error")
            await expect(error).to_contain_text("cannot run session 'held'", timeout=WAIT_MS)
            await expect(error).to_contain_text("Nothing was taken over.")
            await expect(error).to_contain_text("agentos_not_here")
            assert (await s.host.holders())["held"] == holder, "the other process keeps it"
            await expect(said).to_contain_text(f"Another process runs this session: {holder}.")
            await expect(page.locator("#message")).to_be_disabled()


async def test_take_over_says_the_running_calls_it_loses(tmp_path: Path) -> None:
    """Issue 47: taking a session over reports the calls its holder still runs orphaned
    here, and the page's question did not say so. The read-only box and the question say
    how many (a host of its own on the same database holds it, its calls mirrored)."""
    puppet = Puppet()
    meet = "When can Jane, Jack and Joe meet?"
    async with held_elsewhere(tmp_path, model(), puppet, "held", meet, 3) as (runtime, other):
        jane = next(c for c in puppet.calls if runtime.status(c).tool_input["label"] == "Jane")
        puppet.complete(jane, "free 10-11")
        async with served(tmp_path) as s:
            page = await s.browser.new_page()
            await page.goto(f"{s.url}/sessions/held")
            await shows(page, "Jane", "completed")
            await expect(page.locator("#read-only")).to_contain_text(
                "and its 2 running calls are reported orphaned here", timeout=WAIT_MS
            )
            await page.click("#take-over")
            await expect(page.locator("#taking-over-question")).to_have_text(
                f"Take this session over from {other.holder}? Its 2 running calls will be "
                "reported orphaned here: their results are lost."
            )
            await page.click("#take-over-no")
            (jack,) = [c for c in puppet.calls if runtime.status(c).tool_input["label"] == "Jack"]
            puppet.complete(jack, "free 10-11")
            await shows(page, "Jack", "completed")
            await page.click("#take-over")
            await expect(page.locator("#taking-over-question")).to_have_text(
                f"Take this session over from {other.holder}? Its running call will be "
                "reported orphaned here: its result is lost."
            )
            assert (await s.host.holders())["held"] == other.holder, "asking takes nothing"
        (joe,) = [c for c in puppet.calls if runtime.status(c).tool_input["label"] == "Joe"]
        puppet.complete(joe, "free 10-11")
        await settle(runtime)


async def test_the_list_says_it_is_loading_then_how_to_start_a_session(tmp_path: Path) -> None:
    """Issue 47: before the list arrives it says it is loading; an empty list says how to
    start a session, here or in a terminal."""
    async with served(tmp_path) as s:
        page = await s.browser.new_page()
        arrived = await held_back(page, "**/api/sessions")
        await page.goto(s.url)
        await expect(page.locator("#loading")).to_have_text("Loading sessions…")
        arrived.set()
        empty = page.locator("#empty")
        await expect(empty).to_contain_text("No sessions yet.", timeout=WAIT_MS)
        await expect(empty.locator("code").first).to_have_text("agentos chat")
        await expect(page.locator("#loading")).to_have_count(0)


async def test_a_session_page_says_it_is_loading_and_takes_no_message_meanwhile(
    tmp_path: Path,
) -> None:
    """Issue 47: until the page's first data arrives it says so, and its composer waits
    (the session may turn out to be another process's, read only)."""
    async with served(tmp_path) as s:
        session = await s.host.create_session(AgentConfig())
        page = await s.browser.new_page()
        arrived = await held_back(page, "**/events")
        await page.goto(f"{s.url}/sessions/{session.session_id}")
        await expect(page.locator("#chat-loading")).to_have_text("Loading the conversation…")
        await expect(page.locator("#status")).to_have_text("loading…")
        await expect(page.locator("#message")).to_be_disabled()
        await expect(page.locator("#composer button")).to_be_disabled()
        await expect(page.locator("#reading")).to_contain_text("Loading…")
        arrived.set()
        await expect(page.locator("#connection")).to_have_text("live", timeout=WAIT_MS)
        await expect(page.locator("#status")).to_have_text("idle")
        await expect(page.locator("#message")).to_be_enabled()
        await expect(page.locator("#chat-empty")).to_contain_text("write the first message")


async def test_a_link_to_a_session_nobody_knows_says_so(tmp_path: Path) -> None:
    """Issue 47: a session this server does not know is said once, with the way back, not
    an endless 'reconnecting'."""
    async with served(tmp_path) as s:
        page = await s.browser.new_page()
        await page.goto(f"{s.url}/sessions/session-nope")
        missing = page.locator("#missing")
        await expect(missing).to_contain_text(
            "There is no session session-nope here.", timeout=WAIT_MS
        )
        await expect(page.locator("#composer")).to_be_hidden()
        await expect(page.locator("#lost")).to_be_hidden()
        await missing.locator("a").click()
        await page.wait_for_url(f"{s.url}/")


@dataclass
class Restartable:
    """The web page over one host, on one port, stopped and started again as a server
    restarts: what a page sees when its server goes away and comes back."""

    host: Host
    runtime: Runtime
    group: Any
    port: int = 0
    app: Any = None
    server: uvicorn.Server | None = None
    stopped: anyio.Event | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        listening = socket.create_server(("127.0.0.1", self.port))  # accepts from now on
        self.port = listening.getsockname()[1]
        self.app = make_app(self.host, self.runtime)
        server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning", lifespan="off"))
        stopped = anyio.Event()
        self.server, self.stopped = server, stopped

        async def serve() -> None:
            try:
                await server.serve(sockets=[listening])
            finally:
                stopped.set()

        self.group.start_soon(serve)

    async def stop(self) -> None:
        """As Ctrl-C stops agentos serve: the streams end, the server closes its port."""
        assert self.server is not None and self.stopped is not None
        self.app.state.pages.end_streams()
        self.server.should_exit = True
        await self.stopped.wait()
        self.app.state.pages.close()


async def test_the_page_says_when_the_server_is_gone_and_clears_once_it_is_back(
    tmp_path: Path,
) -> None:
    """Issue 47: with the server gone, the list and a session's page say so in a banner
    (not a silent, stale page); once it is back the banner goes, and the page is live."""
    puppet = Puppet()
    async with (
        await SqliteStore.open(tmp_path / "agentos.db") as store,
        running(model(), puppet.tool, store=store) as (runtime, host),
        async_playwright() as playwright,
        anyio.create_task_group() as group,
    ):
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=list(CHROMIUM_ARGS)
        )
        served = Restartable(host, runtime, group)
        served.start()
        try:
            page, listing = await browser.new_page(), await browser.new_page()
            await new_session(page, served.url)
            await listing.goto(served.url)
            await expect(listing.locator("#sessions tbody tr")).to_have_count(1, timeout=WAIT_MS)
            for shown in (page, listing):
                await expect(shown.locator("#lost")).to_be_hidden()
            await served.stop()
            for shown in (page, listing):
                await expect(shown.locator("#lost")).to_have_text(
                    "Lost contact with the server — retrying…", timeout=WAIT_MS
                )
            await say(page, "Meanwhile, what is 2+2?")  # refused at once, kept to send again
            await expect(page.locator("#message")).to_have_value("Meanwhile, what is 2+2?")
            served.start()
            for shown in (page, listing):
                await expect(shown.locator("#lost")).to_be_hidden(timeout=WAIT_MS)
            await expect(page.locator("#connection")).to_have_text("live", timeout=WAIT_MS)
            await page.click("#composer button")
            await expect(page.locator(".entry.agent .text")).to_have_text("4", timeout=WAIT_MS)
            await expect(listing.locator("#sessions .session-title")).to_have_text(
                "Meanwhile, what is 2+2?", timeout=WAIT_MS
            )
        finally:
            await browser.close()
            await served.stop()


async def test_a_message_whose_answer_is_lost_is_not_said_to_be_unsent(tmp_path: Path) -> None:
    """Issue 47: when a POST got no answer the page said 'nothing was changed', but the
    server may have handled it (only its answer lost), and sending again would say it
    twice. The page now says the message may or may not have been sent."""
    async with served(tmp_path) as s:
        page = await s.browser.new_page()
        await new_session(page, s.url)

        async def answer_lost(route: Route) -> None:
            await route.fetch()  # the server takes the message
            await route.abort()  # and its answer never comes back

        await page.route("**/messages", answer_lost)
        await say(page, "Meanwhile, what is 2+2?")
        await expect(page.locator("#error")).to_have_text(
            "The server did not answer: your message may or may not have been sent. "
            "Check the chat before sending it again.",
            timeout=WAIT_MS,
        )
        await expect(page.locator("#message")).to_have_value("Meanwhile, what is 2+2?")
        await expect(page.locator(".entry.agent .text")).to_have_text("4", timeout=WAIT_MS)
        await settle(s.runtime)


async def test_a_stream_refused_while_the_page_answers_is_retried_after_a_pause(
    tmp_path: Path,
) -> None:
    """Issue 47: when the event stream failed with an HTTP error while the session's page
    answered, the page connected again at once, in a tight loop. It waits its retry time
    (2 s) first. The page notes when it opens each stream (``performance.now()``)."""
    async with served(tmp_path) as s:
        session = await s.host.create_session(AgentConfig())
        page = await s.browser.new_page()
        await page.add_init_script(
            "window.opened = []; const Stream = window.EventSource;"
            "window.EventSource = class extends Stream {"
            " constructor(...args) { super(...args); window.opened.push(performance.now()); } };"
        )
        refused = 0

        async def refused_once(route: Route) -> None:
            nonlocal refused
            if refused:
                await route.continue_()
            else:
                refused += 1
                await route.fulfill(status=503, body="busy")

        await page.route("**/events", refused_once)
        await page.goto(f"{s.url}/sessions/{session.session_id}")
        await expect(page.locator("#connection")).to_have_text("live", timeout=WAIT_MS)
        opened = await page.evaluate("window.opened")
        assert len(opened) == 2, opened
        assert opened[1] - opened[0] >= 2000, f"connected again after {opened[1] - opened[0]} ms"


async def test_the_details_of_a_call_no_longer_kept_say_so(tmp_path: Path) -> None:
    """A finished call is forgotten by the runtime after its retention (ten minutes by
    default); its details then say so, with what the page still knows (its input, its
    time), instead of an error. The runtime's clock is a ``ManualClock``: the retention
    passes when the test says so."""
    puppet = Puppet()
    clock = ManualClock()
    async with (
        Runtime([puppet.tool], retention_seconds=1.0, clock=clock) as runtime,
        Host(runtime, model()) as host,
        serving(host, runtime, AgentConfig()) as (url, browser),
    ):
        page = await browser.new_page()
        await new_session(page, url)
        await say(page, "Start the jobs")
        for label in ("Long", "Data", "Picture"):
            await shows(page, label, "running")
        labels = {runtime.status(c).tool_input["label"]: c for c in puppet.calls}
        data = labels["Data"]
        took = await row(page, "Long").locator(".elapsed").inner_text()  # by the runtime's clock
        assert seconds_in(took.split(" of ")[0]) < 600, took
        puppet.complete(data, "done")
        await shows(page, "Data", "completed")
        session_id = page.url.rsplit("/", 1)[1]
        assert data in {call.call_id for call in runtime.list_calls(session_id)}
        clock.advance(2.0)  # past the retention
        await settle(runtime)
        assert data not in {call.call_id for call in runtime.list_calls(session_id)}
        await row(page, "Data").locator(".details-toggle").click()
        details = row(page, "Data").locator(".details")
        await expect(details.locator("[data-fact=kept]")).to_contain_text(
            "no longer kept", timeout=WAIT_MS
        )
        await expect(details.locator("[data-fact=input]")).to_contain_text('label: "Data"')
        await expect(details.locator(".timing")).to_have_text(
            "not known: the runtime no longer holds this call"
        )
        await expect(page.locator("#error")).to_be_hidden()
        for label in ("Long", "Picture"):
            puppet.complete(labels[label], "done")
        await settle(runtime)


# ------------------------------------------------------------ a call asks the person (issue 49)

BOOKING: JsonObject = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "title": "City", "description": "Where to eat"},
        "guests": {"type": "integer", "title": "Guests", "minimum": 1, "default": 2},
        "terrace": {"type": "boolean", "title": "On the terrace"},
        "time": {"type": "string", "title": "Time", "enum": ["19:00", "20:00"]},
    },
    "required": ["city"],
}
QUESTIONS: dict[str, tuple[str, JsonObject]] = {
    "book": ("Where shall I book? <b>not bold</b>", {"form": BOOKING}),
    "sign in": ("Sign in to book", {"url": "https://example.com/sign-in"}),
    "script": ("Open this", {"url": "javascript:window.pwned=1"}),
}


class Question(BaseModel):
    what: str


@tool
async def asker(args: Question, ctx: ToolContext) -> dict[str, object]:
    """Asks the person what ``QUESTIONS`` says for ``what``, then says what it was told."""
    message, how = QUESTIONS[args.what]
    form, url = how.get("form"), how.get("url")
    answer = await ctx.ask(
        message,
        form=form if isinstance(form, dict) else None,
        url=url if isinstance(url, str) else None,
        source="bookings",
    )
    return {"action": answer.action.value, "content": answer.content}


def asking_model() -> ScriptedProvider:
    """A message that names a question has ``asker`` ask it; anything else is noted."""
    return ScriptedProvider(
        (
            lambda r: last_user_text(r) in QUESTIONS,
            lambda r: tool_calls(("asker", {"what": last_user_text(r)})),
        ),
        (lambda r: True, lambda r: text("Noted.")),
    )


async def for_the_person(asked: Asked) -> Answer | None:
    return None  # as agentos serve's host does: the question waits for the page


def asking_row(page: Page) -> Any:
    return page.locator(".call[data-status=running]", has_text="asker(")


async def test_a_person_answers_a_calls_question_on_the_page() -> None:
    """The call runs on, "needs your answer" beside its status (and the session's), with who
    asks, the question (as text) and a form from its schema; the person fills it by
    keyboard while the conversation goes on (the redraws keep what is typed, and the
    focus), Enter accepts, and the tool gets the fields typed per the schema; a second
    question is declined."""
    async with (
        running(asking_model(), asker, ask_person=for_the_person) as (runtime, host),
        page_on(host, runtime, AgentConfig()) as page,
    ):
        await say(page, "book")
        call = asking_row(page)
        await expect(call.locator(".asks")).to_have_text("needs your answer", timeout=WAIT_MS)
        await expect(call.locator(".state")).to_have_text("running")
        box = call.locator(".question")
        await expect(box.locator(".asker")).to_have_text("bookings asks:")
        await expect(box.locator(".question-text")).to_have_text(
            "Where shall I book? <b>not bold</b>"
        )
        assert await box.locator("b").count() == 0, "the question is text, not markup"
        await expect(box.get_by_label("Guests")).to_have_value("2")
        city = box.get_by_label("City")
        await expect(city).to_have_attribute("required", "")
        asking = page.locator("#asking")  # beside the session's status: it leads to the form
        await expect(asking).to_have_text("a call needs your answer")
        await asking.click()
        await expect(city).to_be_focused()
        await page.keyboard.type("Ly")

        session_id = page.url.rsplit("/", 1)[1]
        host.get(session_id).post("meanwhile")  # the chat and the call's row are drawn anew
        await expect(page.locator(".entry.agent .text", has_text="Noted.")).to_be_visible(
            timeout=WAIT_MS
        )
        await expect(city).to_be_focused()
        await page.keyboard.type("on")
        await expect(city).to_have_value("Lyon")
        await page.keyboard.press("Tab")
        await page.keyboard.press("Tab")  # past Guests, to the terrace's checkbox
        await page.keyboard.press("Space")
        await box.get_by_label("Guests").fill("3")
        await box.get_by_label("Time").select_option("20:00")
        await city.press("Enter")

        done = page.locator(".call", has_text="asker(")
        await expect(done).to_have_attribute("data-status", "completed", timeout=WAIT_MS)
        await expect(done.locator(".question")).to_have_count(0)
        await expect(done.locator(".asks")).to_have_count(0)
        await expect(asking).to_be_hidden()
        (answered,) = runtime.list_calls(session_id)
        content = {"city": "Lyon", "guests": 3, "terrace": True, "time": "20:00"}
        assert answered.result == {"action": "accept", "content": content}
        await done.locator(".details-toggle").click()
        result = done.locator(".details [data-fact=result]")
        await expect(result).to_contain_text('"city":"Lyon","guests":3', timeout=WAIT_MS)

        await say(page, "book")
        await expect(asking_row(page).locator(".question")).to_be_visible(timeout=WAIT_MS)
        await asking_row(page).locator(".question .decline").click()
        await expect(page.locator(".call[data-status=completed]")).to_have_count(2, timeout=WAIT_MS)
        assert [c.result for c in runtime.list_calls(session_id)][-1] == {
            "action": "decline",
            "content": None,
        }
        await settle(runtime)


async def test_a_page_to_open_is_a_link_the_person_follows_never_the_page() -> None:
    """A question that gives a web address shows it as a link that opens apart from the
    page (noopener, noreferrer) and is never followed by itself; an address that is no web
    page (javascript:) is only text. 420 px wide, it all fits."""
    width = 420
    async with (
        running(asking_model(), asker, ask_person=for_the_person) as (runtime, host),
        serving(host, runtime, AgentConfig()) as (url, browser),
    ):
        page = await browser.new_page(viewport={"width": width, "height": 740})
        followed: list[str] = []

        async def refused(route: Route) -> None:
            followed.append(route.request.url)
            await route.abort()

        await page.route("https://example.com/**", refused)
        await new_session(page, url)
        here = page.url
        await say(page, "sign in")
        link = asking_row(page).locator(".question a")
        await expect(link).to_have_attribute("href", "https://example.com/sign-in", timeout=WAIT_MS)
        await expect(link).to_have_attribute("rel", "noopener noreferrer")
        await expect(link).to_have_attribute("target", "_blank")
        await fits(page, width)
        await asking_row(page).locator(".question .accept").click()
        await expect(page.locator(".call[data-status=completed]")).to_have_count(1, timeout=WAIT_MS)

        await say(page, "script")
        box = asking_row(page).locator(".question")
        await expect(box.locator("code")).to_have_text("javascript:window.pwned=1", timeout=WAIT_MS)
        assert await box.locator("a").count() == 0, "no link to a script"
        await box.locator(".dismiss").click()
        await expect(page.locator(".call[data-status=completed]")).to_have_count(2, timeout=WAIT_MS)
        session_id = here.rsplit("/", 1)[1]
        results = [c.result for c in runtime.list_calls(session_id)]
        assert results == [
            {"action": "accept", "content": None},
            {"action": "cancel", "content": None},
        ]
        assert page.url == here and followed == [], "nothing was opened by itself"
        assert await page.evaluate("window.pwned === undefined")
        await settle(runtime)


async def test_an_mcp_servers_elicitation_is_answered_on_the_page() -> None:
    """A server's elicitation/create reaches the person as the call's question, its form
    from the server's schema, and what the person typed reaches the server."""
    config = AgentConfig(mcp_servers={"files": TOOLS_SERVER})
    provider = ScriptedProvider(
        (lambda r: last_user_text(r) == "where?", lambda r: tool_calls(("ask_city", {}))),
        (lambda r: True, lambda r: text("Noted.")),
    )
    async with (
        running_agent(config, provider, ask_person=for_the_person) as (runtime, host),
        page_on(host, runtime, config) as page,
    ):
        await say(page, "where?")
        call = page.locator(".call[data-status=running]", has_text="ask_city(")
        box = call.locator(".question")
        await expect(box.locator(".asker")).to_have_text("MCP server files asks:", timeout=WAIT_MS)
        await expect(box.locator(".question-text")).to_have_text("Which city?")
        await box.get_by_label("City").fill("Lyon")
        await box.locator(".accept").click()
        done = page.locator(".call", has_text="ask_city(")
        await expect(done).to_have_attribute("data-status", "completed", timeout=WAIT_MS)
        await done.locator(".details-toggle").click()
        result = done.locator(".details [data-fact=result]")
        await expect(result).to_contain_text("accept Lyon", timeout=WAIT_MS)
