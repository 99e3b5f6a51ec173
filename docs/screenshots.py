"""Take the README's screenshots: ``python docs/screenshots.py`` (``web`` or ``tui``: only
those). The web page's (needs Debian's
chromium and the test extra's playwright): ``agentos serve`` on a scratch database with the
offline scripted model, once with a transcript agent (the page, a cancelled call's details,
a running call's details, the same 420 px wide, the list of sessions) and once with a board
agent, once on the Messages API stand-in, its answer held mid-stream, and once with a tool
that asks the person (``question``: only that one); and ``agentos chat``'s, as Textual's SVG
of an 80x24 screen."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from playwright.async_api import Browser
from playwright.async_api import Page
from playwright.async_api import async_playwright
from textual.widgets import Input

from agentos import Host
from agentos import Runtime
from agentos.demo import tools as demo_tools
from agentos.testing import MessagesStandIn
from agentos.testing import Reply
from agentos.testing import message_body
from agentos.tui import ChatApp
from tests.support.browser import CHROMIUM
from tests.support.browser import CHROMIUM_ARGS

DOCS = Path(__file__).resolve().parent


@contextlib.contextmanager
def serving(folder: Path, *extra: str, model: dict[str, str] | None = None) -> Iterator[str]:
    """``agentos serve`` on a scratch database in ``folder``: its address, until it is
    stopped with Ctrl-C on leaving."""
    env = {**os.environ, "AGENTOS_DB": str(folder / "agentos.db")}
    env.pop("ANTHROPIC_API_KEY", None)
    env.update(model or {})
    command = [sys.executable, "-m", "agentos.cli", "serve", "--port", "0", *extra]
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    try:
        for line in process.stderr:
            found = re.search(r"serving (http://\S+)", line)
            if found:
                yield found.group(1)
                return
        raise RuntimeError("agentos serve printed no address")
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)


async def new_session(page: Page, url: str) -> None:
    """Open the page at ``url`` and start a session on it."""
    await page.goto(url)
    await page.click("#new-session")
    await page.wait_for_url("**/sessions/*")


async def say(page: Page, words: str) -> None:
    await page.fill("#message", words)
    await page.click("#composer button")


async def talk(page: Page, url: str) -> None:
    await new_session(page, url)
    for words, pause in [
        ("When can Jane, Jack and Joe meet? calendar 8s", 2.5),
        ("While they run: what's the weather in Oslo?", 3.0),
    ]:
        await say(page, words)
        await asyncio.sleep(pause)
    await page.locator(".call[data-status=running] .cancel").last.click()
    await page.locator(".confirm-cancel").click()  # Cancel asks once, in the call's row
    await asyncio.sleep(1.0)


async def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        board = Path(scratch) / "board.toml"
        board.write_text('name = "board"\ncontext_view = "board"\n')
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=CHROMIUM, args=list(CHROMIUM_ARGS)
            )
            for name, extra in [("transcript", ()), ("board", ("--agent", str(board)))]:
                folder = Path(scratch) / name
                folder.mkdir()
                with serving(folder, *extra) as url:
                    page = await browser.new_page(viewport={"width": 1280, "height": 760})
                    await talk(page, url)
                    await page.screenshot(path=str(DOCS / f"web-{name}.png"))
                    if name == "transcript":
                        await cancelled(page)
                        await running(browser, url)
            folder = Path(scratch) / "streaming"
            folder.mkdir()
            await streaming(browser, folder)
            await asking(browser, Path(scratch))
            await browser.close()


BOOKING_TOOL = """
from pydantic import BaseModel

from agentos import AnswerAction, ToolContext, tool

FORM = {
    "type": "object",
    "properties": {
        "day": {"type": "string", "title": "Day", "format": "date"},
        "time": {"type": "string", "title": "Time", "enum": ["19:00", "19:30", "20:00"]},
        "guests": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 12, "default": 2},
        "name": {"type": "string", "title": "Name", "description": "Whom the table is booked for"},
        "terrace": {"type": "boolean", "title": "On the terrace"},
    },
    "required": ["day", "time", "guests", "name"],
}


class Nothing(BaseModel):
    pass


@tool
async def book_table(args: Nothing, ctx: ToolContext) -> str:
    \"\"\"Book a table at Chez Paul, asking the person for the details.\"\"\"
    ctx.log("found a table at Chez Paul")
    answer = await ctx.ask("Chez Paul has tables on Friday. Which time, and for whom?", form=FORM)
    if answer.action is not AnswerAction.ACCEPT:
        return f"not booked ({answer.action.value})"
    return f"booked: {answer.content}"
"""


async def asking(browser: Browser, scratch: Path) -> None:
    """docs/web-question.png: a call that asks the person, its form half filled in (and the
    same page 420 px wide, docs/web-question-narrow.png); then answered."""
    folder = scratch / "question"
    folder.mkdir()
    (folder / "booking.py").write_text(BOOKING_TOOL)
    agent = folder / "booking.toml"
    agent.write_text('name = "booking"\nmodel = "test"\ntools = ["booking"]\n')
    with serving(folder, "--agent", str(agent)) as url:
        page = await browser.new_page(viewport={"width": 1280, "height": 680})
        await new_session(page, url)
        await say(page, "Book us a table for Friday evening")
        box = page.locator(".call .question")
        await box.wait_for()
        await box.get_by_label("Time").select_option("19:30")
        await box.get_by_label("Name").fill("Ann")
        await page.screenshot(path=str(DOCS / "web-question.png"))
        narrow = await browser.new_page(viewport={"width": 420, "height": 900})
        await narrow.goto(page.url)
        await narrow.locator(".call .question").wait_for()
        await narrow.screenshot(path=str(DOCS / "web-question-narrow.png"))
        await box.get_by_label("Day").fill("2026-12-11")
        await box.locator(".accept").click()
        await page.locator(".call[data-status=completed]").wait_for()


async def question_only() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=CHROMIUM, args=list(CHROMIUM_ARGS)
            )
            await asking(browser, Path(scratch))
            await browser.close()


async def cancelled(page: Page) -> None:
    """docs/web-cancelled.png: the cancelled lookup's details, open under its row."""
    call = page.locator(".call[data-status=cancelled]").first
    await call.locator(".details-toggle").click()
    await call.locator(".details [data-fact=cancelled]").wait_for()
    await page.locator(".entry", has=call).screenshot(path=str(DOCS / "web-cancelled.png"))
    await call.locator(".details-toggle").click()


async def running(browser: Browser, url: str) -> None:
    """docs/web-call.png: a lookup running, its details open (input, time, progress, the
    newest reports); docs/web-list.png: the list of sessions meanwhile; docs/web-narrow.png:
    the same page 420 px wide."""
    page = await browser.new_page(viewport={"width": 1280, "height": 760})
    await new_session(page, url)
    await say(page, "When can Ann and Bob meet? calendar 40s")
    call = page.locator(".call[data-status=running]").first
    await call.locator(".details-toggle").click()
    await call.locator(".details progress").wait_for(timeout=30_000)
    await asyncio.sleep(9)  # a second report, so the details show reports over time
    await page.screenshot(path=str(DOCS / "web-call.png"))
    narrow = await browser.new_page(viewport={"width": 420, "height": 900})
    await narrow.goto(page.url)
    narrow_call = narrow.locator(".call[data-status=running]").first
    await narrow_call.locator(".details-toggle").click()
    await narrow_call.locator(".details .lines").wait_for()
    await asyncio.sleep(1.0)
    await narrow.screenshot(path=str(DOCS / "web-narrow.png"))
    listing = await browser.new_page(viewport={"width": 1280, "height": 360})
    await listing.goto(url)
    await listing.locator("#sessions tbody tr").nth(1).wait_for()
    await listing.screenshot(path=str(DOCS / "web-list.png"))


async def streaming(browser: Browser, folder: Path) -> None:
    """docs/web-streaming.png: an answer held mid-stream, its first call whole."""
    person = {"person": "Jane"}
    asked = {"type": "tool_use", "id": "toolu_1", "name": "fetch_calendar", "input": person}
    words = "I will look at Jane's calendar first, then Jack's and Joe's, and find an hour "
    words += "that suits all three."
    reply = message_body([{"type": "text", "text": words}, asked], "tool_use")
    deltas = math.ceil(len(words) / 6) + math.ceil(len(json.dumps(person)) / 6)
    with MessagesStandIn() as api:  # held before the reply's end: both blocks are whole
        api.script(Reply(200, reply, chunk=6, stop_after=6 + deltas, then="pause"))
        model = {"ANTHROPIC_API_KEY": "sk-stand-in", "ANTHROPIC_BASE_URL": api.url}
        with serving(folder, model=model) as url:
            try:
                page = await browser.new_page(viewport={"width": 1280, "height": 520})
                await new_session(page, url)
                await say(page, "When can Jane, Jack and Joe meet?")
                await page.wait_for_selector("#streaming .text")
                await asyncio.sleep(0.5)
                await page.screenshot(path=str(DOCS / "web-streaming.png"))
            finally:
                api.resume.set()


async def terminal() -> None:
    """docs/tui.svg: three lookups with progress, one cancelled, the weather answered, and the
    details of a lookup still running."""
    async with (
        Runtime(demo_tools.TOOLS) as runtime,
        Host(runtime, demo_tools.scripted_model()) as host,
    ):
        session = await host.create_session(demo_tools.DEFAULT_AGENT, session_id="demo")
        app = ChatApp(session, runtime, theme="dark")
        async with app.run_test(size=(80, 24)) as pilot:
            for words, pause in [
                ("When can Jane, Jack and Joe meet? calendar 20s", 2.0),
                ("What's the weather in Oslo?", 1.5),
            ]:
                app.query_one("#message", Input).value = words
                app.query_one("#message", Input).focus()
                await pilot.press("enter")
                await asyncio.sleep(pause)
            app.query_one("#calls").focus()
            await pilot.press("down", "down", "c", "y")
            await asyncio.sleep(1.2)
            await pilot.press("up", "up", "enter")  # Jane's lookup, still running
            await asyncio.sleep(1.0)
            app.save_screenshot(str(DOCS / "tui.svg"))


if __name__ == "__main__":
    taking = set(sys.argv[1:]) or {"web", "tui"}  # python docs/screenshots.py web: the page's
    if "web" in taking:
        asyncio.run(main())
    elif "question" in taking:
        asyncio.run(question_only())
    if "tui" in taking:
        asyncio.run(terminal())
