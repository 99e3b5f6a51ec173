"""Issue 49: a running call asks the person a question, in ``agentos chat``. The list says the
call needs an answer (it still runs), its details give the question and who asks, ``a`` opens
the answer screen (a line per field of the form, or the page to open), and the answer, typed
per the form's schema, reaches the call: accepted, declined or cancelled. A wrong value is
said on the screen and nothing is sent; a question no longer asked is said so."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from pydantic import BaseModel
from textual.pilot import Pilot
from textual.widgets import Button
from textual.widgets import DataTable
from textual.widgets import Input
from textual.widgets import Static

from agentos import Answer
from agentos import Asked
from agentos import JsonObject
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import ToolContext
from agentos import tool
from agentos.testing import last_user_text
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.tui import CallsPane
from agentos.tui import ChatApp
from agentos.tui import Details
from tests.support.backends import running
from tests.support.backends import running_agent
from tests.support.mcp_stdio import TOOLS_SERVER
from tests.support.tui import CONFIG
from tests.support.tui import cell
from tests.support.tui import say
from tests.support.tui import until

pytestmark = pytest.mark.anyio

FORM: JsonObject = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "title": "City", "description": "where to look"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "metric": {"type": "boolean", "default": True},
        "sky": {"type": "string", "enum": ["clear", "cloudy"], "enumNames": ["Clear", "Cloudy"]},
    },
    "required": ["city"],
}
PAGE = "https://example.com/sign-in?state=1"
ODD_FORM: JsonObject = {"type": "object", "properties": {"spot": {"type": "object"}}}
EVERY_KIND: JsonObject = {
    "type": "object",
    "properties": {
        "budget": {"type": "number", "minimum": 0.5},
        "mail": {"type": "string", "format": "email"},
        "home": {"type": "string", "format": "uri"},
        "when": {"type": "string", "format": "date"},
        "code": {"type": "string", "minLength": 2, "maxLength": 3},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l"}]},
        "extras": {"type": "array", "items": {"enum": ["tea", "milk"]}},
    },
}


class Ask(BaseModel):
    kind: str = "form"


@tool
async def asker(args: Ask, ctx: ToolContext) -> str:
    """Asks the person (with a form, or a page to open), then says what came back."""
    if args.kind == "page":
        answer = await ctx.ask("Sign in to the weather service", url=PAGE, source="weather app")
    elif args.kind == "odd":
        answer = await ctx.ask("Where exactly?", form=ODD_FORM)
    elif args.kind == "every":
        answer = await ctx.ask("Tell me everything", form=EVERY_KIND)
    else:
        answer = await ctx.ask("Which city?", form=FORM, source="the forecast service")
    return f"{answer.action.value}: {json.dumps(answer.content)}"


def model() -> ScriptedProvider:
    return ScriptedProvider(
        (lambda r: last_user_text(r) == "ask", lambda r: tool_calls(("asker", {}))),
        (
            lambda r: last_user_text(r) == "ask for a page",
            lambda r: tool_calls(("asker", {"kind": "page"})),
        ),
        (
            lambda r: last_user_text(r) == "ask everything",
            lambda r: tool_calls(("asker", {"kind": "every"})),
        ),
        (
            lambda r: last_user_text(r) == "ask oddly",
            lambda r: tool_calls(("asker", {"kind": "odd"})),
        ),
        (lambda r: True, lambda r: text("ok")),
    )


async def held(asked: Asked) -> Answer | None:
    """The host's hook in ``agentos chat``: the question waits for the person's answer."""
    return None


@asynccontextmanager
async def asking(words: str = "ask") -> AsyncIterator[tuple[ChatApp, Pilot[None], Runtime, str]]:
    """A chat whose one call asks a question (once ``words`` are said): the call's id."""
    async with running(model(), asker, ask_person=held) as (runtime, host):
        app = ChatApp(await host.create_session(CONFIG), runtime, host=host)
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await say(pilot, words)
            pane = app.query_one(CallsPane)
            await until(pilot, runtime, lambda: pane.row_count == 1)
            call_id = pane.calls[0].call_id
            await until(pilot, runtime, lambda: runtime.status(call_id).question is not None)
            yield app, pilot, runtime, call_id


def shown_keys(app: ChatApp) -> set[str]:
    return {key for key, active in app.active_bindings.items() if active.binding.show}


def screen_text(app: ChatApp) -> str:
    """What the screen on top shows in its Static parts (hidden ones left out)."""
    return "\n".join(
        str(part.render())
        for part in app.screen.query(Static)
        if part.display and not isinstance(part, Button) and part.parent is not None
    )


def notes(app: ChatApp) -> str:
    return " ".join(str(toast.render()) for toast in app.screen.query("Toast"))


async def open_answer_screen(app: ChatApp, pilot: Pilot[None], runtime: Runtime) -> None:
    app.query_one(CallsPane).focus()
    await pilot.press("a")
    await until(pilot, runtime, lambda: bool(app.screen.query("#answer-box")))


def fill(app: ChatApp, *values: str) -> None:
    for n, value in enumerate(values):
        app.screen.query_one(f"#answer-field-{n}", Input).value = value


async def result_in_details(app: ChatApp, pilot: Pilot[None], runtime: Runtime, call: str) -> str:
    await until(pilot, runtime, lambda: cell(app, call, 4) == "completed")
    app.query_one(CallsPane).focus()
    await pilot.press("enter")
    await until(pilot, runtime, lambda: isinstance(app.screen, Details))
    return screen_text(app)


async def test_the_list_says_needs_your_answer_and_an_accepted_answer_reaches_the_call() -> None:
    async with asking() as (app, pilot, runtime, call):
        await until(pilot, runtime, lambda: cell(app, call, 4) == "needs your answer")
        assert runtime.status(call).status == "running", "it asks while it runs"
        assert "asker needs your answer" in notes(app) and "Which city?" in notes(app)
        assert "a" not in shown_keys(app), "the message line has the keys"
        await open_answer_screen(app, pilot, runtime)
        shown = screen_text(app)
        assert "Which city?\nasked by the forecast service" in shown
        assert "City *\nwhere to look" in shown and "* required" in shown
        assert app.screen.query_one("#answer-field-2", Input).value == "yes", "its default"
        assert app.screen.query_one("#answer-field-1", Input).placeholder == (
            "a whole number, 1 to 14"
        )
        fill(app, "Oslo", "3", "no", "cloudy")
        await pilot.click("#accept")
        result = await result_in_details(app, pilot, runtime, call)
        assert 'accept: {"city": "Oslo", "days": 3, "metric": false, "sky": "cloudy"}' in result
        assert "asker: accept sent" in notes(app)


async def test_a_is_offered_only_while_a_question_waits_and_the_details_give_it() -> None:
    async with asking() as (app, pilot, runtime, _):
        app.query_one(CallsPane).focus()
        await until(pilot, runtime, lambda: "a" in shown_keys(app))
        await pilot.press("enter")
        await until(pilot, runtime, lambda: isinstance(app.screen, Details))
        shown = screen_text(app)
        assert "asker  running  call " in shown
        assert "Needs your answer\nWhich city?\nasked by the forecast service, " in shown
        assert "fields: City (required): text · days: a whole number, 1 to 14" in shown
        assert "a answers it" in shown and "a" in shown_keys(app)
        await pilot.press("a")  # from the details too
        await until(pilot, runtime, lambda: bool(app.screen.query("#answer-box")))
        await pilot.click("#decline")
        await until(pilot, runtime, lambda: isinstance(app.screen, Details))
        await until(pilot, runtime, lambda: "asker  completed" in screen_text(app))
        assert "decline: null" in screen_text(app) and "Needs your answer" not in screen_text(app)
        assert "a" not in shown_keys(app), "nothing asks now"
        await pilot.press("escape")
        assert "a" not in shown_keys(app)


async def test_a_wrong_value_is_said_on_the_screen_and_nothing_is_sent() -> None:
    async with asking() as (app, pilot, runtime, call):
        await open_answer_screen(app, pilot, runtime)
        fill(app, "", "x")
        await pilot.click("#accept")
        shown = screen_text(app)
        assert "required: write a value" in shown
        assert "'x' is not a whole number" in shown
        assert "Not sent: 2 fields to put right." in shown
        assert app.screen.query_one("#answer-field-0", Input).has_focus, "the first to fix"
        fill(app, "Oslo", "40")
        await pilot.click("#accept")
        assert "40 is above the most allowed, 14" in screen_text(app)
        assert "write a value" not in screen_text(app), "what was put right is said no more"
        assert runtime.status(call).question is not None, "nothing was sent"
        fill(app, "Oslo", "")
        app.screen.query_one("#answer-field-3", Input).value = "sunny"
        await pilot.click("#accept")
        assert "'sunny' is not one of: Clear, Cloudy" in screen_text(app)
        app.screen.query_one("#answer-field-3", Input).value = ""
        app.screen.query_one("#answer-field-3", Input).focus()
        await pilot.press("enter")  # enter on the last field accepts
        result = await result_in_details(app, pilot, runtime, call)
        assert 'accept: {"city": "Oslo", "metric": true}' in result, "an empty field left out"


async def test_escape_answers_later_and_cancel_sends_a_cancel() -> None:
    async with asking() as (app, pilot, runtime, call):
        await open_answer_screen(app, pilot, runtime)
        await pilot.press("escape")
        await until(pilot, runtime, lambda: not app.screen.query("#answer-box"))
        assert cell(app, call, 4) == "needs your answer", "still asked"
        await pilot.press("a")
        await until(pilot, runtime, lambda: bool(app.screen.query("#answer-box")))
        await pilot.click("#cancel")
        assert "cancel: null" in await result_in_details(app, pilot, runtime, call)


async def test_a_page_to_open_is_shown_never_opened_and_accept_sends_no_content() -> None:
    async with asking("ask for a page") as (app, pilot, runtime, call):
        await open_answer_screen(app, pilot, runtime)
        shown = screen_text(app)
        assert "Sign in to the weather service\nasked by weather app" in shown
        assert f"Open this page yourself (agentos does not open it):\n{PAGE}" in shown
        assert not app.screen.query(Input), "no form: nothing to fill in"
        await pilot.click("#accept")
        assert "accept: null" in await result_in_details(app, pilot, runtime, call)


async def test_a_question_withdrawn_while_the_screen_is_open_is_said_so() -> None:
    async with asking() as (app, pilot, runtime, call):
        await open_answer_screen(app, pilot, runtime)
        runtime.cancel(call, "not needed")
        await until(pilot, runtime, lambda: "No longer asked" in screen_text(app))
        assert app.screen.query_one("#accept", Button).disabled
        await pilot.press("escape")
        await until(pilot, runtime, lambda: cell(app, call, 4).startswith("cancelled"))
        app.query_one(DataTable).focus()
        assert "a" not in shown_keys(app)


async def test_a_form_that_cannot_be_filled_in_here_can_still_be_declined() -> None:
    async with asking("ask oddly") as (app, pilot, runtime, call):
        await open_answer_screen(app, pilot, runtime)
        shown = screen_text(app)
        assert "Where exactly?\nasked by the tool asker" in shown
        assert (
            "This form cannot be filled in here: field 'spot' is of type 'object', which "
            "cannot be typed here. Decline or cancel."
        ) in shown
        assert app.screen.query_one("#accept", Button).disabled
        await pilot.click("#decline")
        assert "decline: null" in await result_in_details(app, pilot, runtime, call)


async def test_an_mcp_servers_elicitation_is_answered_on_the_screen() -> None:
    config = CONFIG.model_copy(update={"mcp_servers": {"files": TOOLS_SERVER}})
    provider = ScriptedProvider(
        (lambda r: last_user_text(r) == "where?", lambda r: tool_calls(("ask_city", {}))),
        (lambda r: True, lambda r: text("ok")),
    )
    async with running_agent(config, provider, ask_person=held) as (runtime, host):
        app = ChatApp(await host.create_session(config), runtime, host=host)
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await say(pilot, "where?")
            pane = app.query_one(CallsPane)
            await until(pilot, runtime, lambda: pane.row_count == 1)
            call = pane.calls[0].call_id
            await until(pilot, runtime, lambda: cell(app, call, 4) == "needs your answer")
            await open_answer_screen(app, pilot, runtime)
            assert "Which city?\nasked by MCP server files" in screen_text(app)
            fill(app, "Lima")
            await pilot.click("#accept")
            assert "accept Lima" in await result_in_details(app, pilot, runtime, call)


async def test_each_kind_of_field_is_read_per_its_schema() -> None:
    async with asking("ask everything") as (app, pilot, runtime, call):
        await open_answer_screen(app, pilot, runtime)
        placeholders = [field.placeholder for field in app.screen.query(Input)]
        assert placeholders == [
            "a number, at least 0.5",
            "email",
            "uri",
            "date",
            "text, 2 to 3 characters",
            "one of: Small, l",
            "any of (commas): tea, milk",
        ]
        fill(app, "0.1", "nobody", "example.com", "06/12/2026", "abcd", "medium", "tea, sugar")
        await pilot.click("#accept")  # the fields fit in 80x24 with the buttons below
        shown = screen_text(app)
        for problem in (
            "0.1 is below the least allowed, 0.5",
            "'nobody' is not an email address",
            "'example.com' is not a URL (https://...)",
            "'06/12/2026' is not a date (ISO 8601: 2026-12-06)",
            "too long: at most 3 characters",
            "'medium' is not one of: Small, l",
            "'sugar' is not one of: tea, milk",
            "Not sent: 7 fields to put right.",
        ):
            assert problem in shown
        fill(app, "2.5", "a@example.com", "https://example.com", "2026-12-06", "ab", "small")
        app.screen.query_one("#answer-field-6", Input).value = "milk, tea, milk"
        app.screen.query_one("#answer-field-6", Input).focus()
        await pilot.press("enter")  # on the last field: accept
        result = (await result_in_details(app, pilot, runtime, call)).split("accept: ")[1]
        sent = json.loads(result.splitlines()[0])
        assert sent == {
            "budget": 2.5,
            "mail": "a@example.com",
            "home": "https://example.com",
            "when": "2026-12-06",
            "code": "ab",
            "size": "s",
            "extras": ["milk", "tea"],
        }
