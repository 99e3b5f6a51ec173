"""``agentos chat``'s terminal UI driven headless with Textual's Pilot (issue 14).

A scripted model starts ``Puppet`` calls the test moves; the tests type, press keys and read
the widgets: the calls appear and progress, a second question is answered while they run, a
call is cancelled with ``c`` and a confirmation, ``enter`` opens a call's details, ``b`` shows
what the model reads next, a message sent while the model is busy shows queued, the keys
follow the focus, and a session quit with calls running reopens from the store.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from textual.widgets import DataTable
from textual.widgets import Input
from textual.widgets import Static

from agentos import AgentConfig
from agentos import ManualClock
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import ScriptedProvider
from agentos import Session
from agentos.testing import FailingProvider
from agentos.testing import FullDiskStore
from agentos.testing import HeldProvider
from agentos.testing import Puppet
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.tui import CallsPane
from agentos.tui import ChatApp
from agentos.tui import Confirm
from agentos.tui import Details
from agentos.tui import terminal_theme
from tests.support.backends import hosted
from tests.support.backends import running
from tests.support.backends import running_agent
from tests.support.mcp_stdio import TOOLS_SERVER
from tests.support.researcher import lead_and_researcher
from tests.support.streaming import streaming_a_call
from tests.support.tui import CONFIG
from tests.support.tui import both_checked
from tests.support.tui import call_on_go
from tests.support.tui import cell
from tests.support.tui import chat_text
from tests.support.tui import chatting
from tests.support.tui import check_both
from tests.support.tui import model
from tests.support.tui import say
from tests.support.tui import until

pytestmark = pytest.mark.anyio


def model_view(app: ChatApp) -> str:
    """What the ``b`` pane shows: what the model reads next."""
    return str(app.query_one("#context-text", Static).render())


def notes(app: ChatApp) -> str:
    """The notifications on screen."""
    return " ".join(str(toast.render()) for toast in app.screen.query("Toast"))


def details(app: ChatApp) -> str:
    """What the open details pane shows, its sections in order (hidden ones left out)."""
    box = app.screen.query_one("#details-box")
    return "\n".join(
        str(part.render())
        for part in box.query("Static, Bar")
        if part.display and part.parent is not None and part.parent.display
    )


def shown_keys(app: ChatApp) -> set[str]:
    """The keys the footer shows now."""
    return {key for key, active in app.active_bindings.items() if active.binding.show}


async def test_calls_appear_progress_and_a_question_is_answered_meanwhile(puppet: Puppet) -> None:
    async with both_checked(puppet) as (app, pilot, runtime):
        await until(pilot, runtime, lambda: len(puppet.calls) == 2)
        jane, joe = puppet.calls
        puppet.progress(jane, {"percent": 40})
        await until(pilot, runtime, lambda: "40%" in cell(app, jane, 2))
        assert cell(app, joe, 4) == "running"
        await say(pilot, "meanwhile, 2+2?")
        await until(pilot, runtime, lambda: "agent: 4" in chat_text(app))
        assert cell(app, jane, 4) == "running", "the calls run on"
        puppet.complete(jane, "free 10-11")
        await until(pilot, runtime, lambda: cell(app, jane, 4) == "completed")


async def test_a_log_line_sits_beside_the_percent_and_never_replaces_it(puppet: Puppet) -> None:
    """Issue 45: a tool reports 40 %, then logs a line: the bar keeps 40 %, the line shows
    beside it (in the outcome, while the call runs)."""
    async with both_checked(puppet) as (app, pilot, runtime):
        await until(pilot, runtime, lambda: len(puppet.calls) == 2)
        jane, _ = puppet.calls
        puppet.progress(jane, {"percent": 40, "page": 4})
        puppet.log(jane, "fetched page 4")
        await until(pilot, runtime, lambda: "· fetched" in cell(app, jane, 4))
        assert cell(app, jane, 2) == "██░░░ 40%"
        assert cell(app, jane, 4) == "running · fetched …", "cut to its 19 columns"


async def test_c_cancels_the_selected_call_after_a_yes_and_enter_shows_details(
    puppet: Puppet,
) -> None:
    async with both_checked(puppet) as (app, pilot, runtime):
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
        assert "puppet  cancelled  call " in details(app)
        assert "Cancelled\ncancelled in agentos chat" in details(app)
        await pilot.press("escape")
        await pilot.press("b")
        await until(pilot, runtime, lambda: "check both" in model_view(app))


async def test_a_row_that_scrolls_into_view_shows_what_its_call_did_meanwhile() -> None:
    """Only the rows in view are redrawn; one that comes into view is drawn at once."""
    puppet = Puppet()
    async with chatting(puppet) as (app, pilot, runtime):
        await say(pilot, "check twelve")
        await until(pilot, runtime, lambda: app.query_one(DataTable).row_count == 12)
        *_, last = puppet.calls
        for call_id in puppet.calls:
            puppet.complete(call_id, "done")
        await until(pilot, runtime, lambda: app.session.idle and not runtime.pending_work())
        app.redraw()  # the last row is out of view: not drawn
        await pilot.press("tab", *["down"] * 11)
        assert cell(app, last, 4) == "completed"


async def test_the_header_gives_the_sessions_title_and_follows_a_rename() -> None:
    async with chatting(Puppet()) as (app, pilot, runtime):
        assert app.sub_title == ""
        await say(pilot, "what is\x1b]0;PWNED\x07 2+2?")
        await until(pilot, runtime, lambda: app.sub_title.startswith("what is"))
        assert "\x1b" not in app.sub_title and "\x07" not in app.sub_title
        assert app.sub_title.endswith(" 2+2?")
        await app.session.rename("Sums")
        await until(pilot, runtime, lambda: app.sub_title == "Sums")


async def test_a_message_sent_while_the_model_is_busy_shows_queued_until_it_is_read() -> None:
    slow = HeldProvider(model(), lambda r: "slow" in last_user_text(r))
    async with chatting(Puppet(), slow) as (app, pilot, runtime):
        await say(pilot, "a slow one")
        await until(pilot, runtime, lambda: "user: a slow one" in chat_text(app))
        await say(pilot, "and 2+2?")
        await until(pilot, runtime, lambda: "user (queued): and 2+2?" in chat_text(app))
        assert app.query_one("#message", Input).value == "", "the line is free again"
        slow.go.set()
        await until(pilot, runtime, lambda: "agent: 4" in chat_text(app))
        assert "queued" not in chat_text(app)
        assert chat_text(app).index("user: and 2+2?") > chat_text(app).index("agent: ok")


async def test_keys_follow_the_focus_and_q_quits_only_from_the_calls() -> None:
    async with chatting(Puppet()) as (app, pilot, runtime):
        assert {"tab", "ctrl+c"} <= shown_keys(app), "typing: tab to the calls, ctrl+c quits"
        assert not {"c", "q", "b"} & shown_keys(app), "those letters are typed"
        await pilot.press(*"quick cab")
        assert app.query_one("#message", Input).value == "quick cab"
        await pilot.press("tab")
        assert {"enter", "c", "b", "q", "tab"} <= shown_keys(app)
        await pilot.press("q")
        await until(pilot, runtime, lambda: not app.is_running)


async def test_quit_with_calls_running_and_reopen_the_session_from_the_store(
    tmp_path: Path,
) -> None:
    """As with ``run`` and ``resume``: calls running when the process ends read as
    orphaned when the session is opened again, and the chat is all there."""
    path = tmp_path / "agentos.db"
    puppet = Puppet()
    async with hosted(path, model(), puppet.tool) as (_, runtime, host):
        app = ChatApp(await host.create_session(CONFIG, session_id="s"), runtime)
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await check_both(app, pilot, runtime)
            jane, joe = puppet.calls
            puppet.complete(jane, "free 10-11")
            await until(pilot, runtime, lambda: cell(app, jane, 4) == "completed")
            await pilot.press("ctrl+c")
            await until(pilot, runtime, lambda: isinstance(app.screen, Confirm))
            await pilot.press("y")  # a call still runs: it asked once
            await until(pilot, runtime, lambda: not app.is_running)
        assert runtime.status(joe).status == "running", "quitting the UI cancels nothing"
    puppet = Puppet()
    async with hosted(path, model(), puppet.tool) as (_, runtime, host):
        app = ChatApp(await host.resume("s"), runtime)
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await pilot.pause()
            assert "user: check both" in chat_text(app)
            table = app.query_one("#calls", DataTable)
            outcomes = [str(table.get_row_at(row)[4]) for row in range(table.row_count)]
            assert outcomes == ["completed", "orphaned"]
            await pilot.press("tab", "down", "enter")  # the runtime never held this one
            await until(pilot, runtime, lambda: isinstance(app.screen, Details))
            assert "puppet  orphaned" in details(app)
            assert "not known: no process is running this call" in details(app)
            await pilot.press("escape", "c")
            await until(pilot, runtime, lambda: "nothing to cancel" in notes(app))
            assert "puppet is orphaned: nothing to cancel" in notes(app)
            assert not isinstance(app.screen, Details), "no question asked"


def test_the_theme_follows_what_the_terminal_says_of_its_background() -> None:
    assert terminal_theme({"COLORFGBG": "0;15"}) == "light"
    assert terminal_theme({"COLORFGBG": "15;default;0"}) == "dark"
    assert terminal_theme({}) == "dark"


async def test_a_theme_that_is_neither_dark_nor_light_is_refused() -> None:
    async with running(model()) as (runtime, host):
        session = await host.create_session(CONFIG)
        with pytest.raises(ValueError, match="theme is 'dark' or 'light', got 'solarized'"):
            ChatApp(session, runtime, theme="solarized")


async def test_markup_in_what_a_tool_reports_is_shown_as_written(puppet: Puppet) -> None:
    async with both_checked(puppet) as (app, pilot, runtime):
        jane, joe = puppet.calls
        puppet.progress(jane, "step [/] done")
        puppet.progress(joe, "[red]alarm[/red]")
        await until(pilot, runtime, lambda: cell(app, joe, 2).startswith("[red]"))
        assert cell(app, jane, 2).startswith("step [/]")


async def test_a_call_the_runtime_forgets_keeps_its_row() -> None:
    """Past its retention the runtime forgets a finished call, and a transcript names it
    by its ``toolu_`` id again: the row stays, with what the chat knows."""
    clock, puppet = ManualClock(), Puppet()
    async with both_checked(puppet, clock=clock, retention_seconds=5) as (app, pilot, runtime):
        jane, _ = puppet.calls
        puppet.complete(jane, "free 10-11")
        await until(pilot, runtime, lambda: cell(app, jane, 4) == "completed")
        clock.advance(100)
        await until(
            pilot, runtime, lambda: jane not in [c.call_id for c in app.query_one(CallsPane).calls]
        )
        app.redraw()
        table = app.query_one(DataTable)
        assert table.row_count == 2
        assert [str(table.get_row_at(row)[4]) for row in range(2)] == ["completed", "running"]


async def test_a_message_to_an_ended_session_is_refused_and_kept_in_the_line() -> None:
    async with chatting(Puppet()) as (app, pilot, runtime):
        app.session.stop()
        await settle(runtime)
        await say(pilot, "still there?")
        await until(pilot, runtime, lambda: "is stopped" in notes(app))
        assert app.query_one("#message", Input).value == "still there?"


async def test_the_chat_follows_its_end_unless_the_reader_scrolled_back() -> None:
    async with chatting(Puppet()) as (app, pilot, runtime):
        chat = app.query_one("#chat")
        for n in range(1, 13):
            await say(pilot, f"question {n}")
            await until(pilot, runtime, lambda: chat_text(app).count("agent: ok") == n)  # noqa: B023 - called before n moves on
        # The view follows the end once the new lines are laid out: a frame after the text.
        await until(pilot, runtime, lambda: chat.is_vertical_scroll_end)
        await pilot.press("pageup")
        back = chat.scroll_y
        await say(pilot, "one more")
        await until(pilot, runtime, lambda: chat_text(app).count("agent: ok") == 13)
        assert chat.scroll_y == back < chat.max_scroll_y, "the reader stays where they were"


async def test_a_board_session_shows_the_boards_chat_and_b_shows_the_board() -> None:
    started: list[bool] = []

    def start(request: ModelRequest) -> ModelResponse:
        started.append(True)
        return tool_calls(("puppet", {"label": "Jane"}), say="Looking.")

    board_model = ScriptedProvider(
        (lambda r: not started and "check Jane" in last_user_text(r), start),
        (lambda r: True, lambda r: text("ok")),
    )
    puppet = Puppet()
    async with running(board_model, puppet.tool) as (runtime, host):
        session = await host.create_session(AgentConfig(context_view="board"))
        app = ChatApp(session, runtime)
        async with app.run_test(size=(80, 24)) as pilot:
            await say(pilot, "check Jane")
            await until(pilot, runtime, lambda: app.query_one(DataTable).row_count == 1)
            (jane,) = puppet.calls
            assert "user: check Jane" in chat_text(app) and "agent: Looking." in chat_text(app)
            puppet.complete(jane, "free 10-11")
            await until(pilot, runtime, lambda: cell(app, jane, 4) == "completed")
            await pilot.press("tab", "b")
            await until(pilot, runtime, lambda: "#1 user 'check Jane'" in model_view(app))


async def test_escape_sequences_from_a_tool_or_the_model_cannot_drive_the_terminal() -> None:
    """ESC passes through Rich and Textual to the terminal: shown escaped, it retitles and
    clears nothing; a bidirectional override reverses nothing."""
    title, clear, reverse = "\x1b]0;PWNED\x1b\\", "\x1b[2J", "\u202e"
    evil = ScriptedProvider(
        (
            lambda r: last_user_text(r) == "check both",
            lambda r: tool_calls(("puppet", {"label": "x"}), say=f"on it{title}{reverse}"),
        ),
        (lambda r: True, lambda r: text("ok")),
    )
    puppet = Puppet()
    async with chatting(puppet, evil) as (app, pilot, runtime):
        await say(pilot, "check both")
        await until(pilot, runtime, lambda: app.query_one(DataTable).row_count == 1)
        (call_id,) = puppet.calls
        puppet.progress(call_id, f"{clear}1")
        await until(pilot, runtime, lambda: cell(app, call_id, 2).startswith("\\x1b[2J"))
        assert r"agent: on it\x1b]0;PWNED\x1b\\u202e" in chat_text(app)
        await pilot.press("tab", "b")
        await until(pilot, runtime, lambda: "on it" in model_view(app))
        shown = [chat_text(app), model_view(app), *(cell(app, call_id, n) for n in range(5))]
        assert not any(mark in part for part in shown for mark in ("\x1b", reverse))


async def test_a_failed_requests_error_is_shown_escaped_too() -> None:
    failing = FailingProvider("overloaded", "busy\x1b[2J")
    async with chatting(Puppet(), failing) as (app, pilot, runtime):
        await say(pilot, "hello?")
        await until(pilot, runtime, lambda: "busy" in notes(app))
        assert "busy\\x1b[2J" in notes(app) and "\x1b" not in notes(app)


async def test_a_failed_model_request_is_told_not_silent() -> None:
    async with chatting(Puppet(), FailingProvider("overloaded", "the API is overloaded (529)")) as (
        app,
        pilot,
        runtime,
    ):
        await say(pilot, "hello?")
        await until(pilot, runtime, lambda: "overloaded (529)" in notes(app))
        assert "user: hello?" in chat_text(app), "the message is kept"


async def test_a_store_failing_every_commit_is_told_once_not_per_commit(tmp_path: Path) -> None:
    puppet = Puppet()
    async with (
        await FullDiskStore.open(tmp_path / "agentos.db") as store,
        running(model(), puppet.tool, store=store) as (runtime, host),
    ):
        app = ChatApp(await host.create_session(CONFIG), runtime)
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await say(pilot, "check both")
            await until(pilot, runtime, lambda: len(app.session.errors) >= 2)
            puppet.complete(next(iter(puppet.calls)), "free")
            await until(pilot, runtime, lambda: len(app.session.errors) >= 3)
            app.redraw()
            await pilot.pause()
            assert notes(app).count("store: the disk is full") == 1


async def test_an_mcp_servers_call_shows_its_progress_and_c_cancels_it_in_the_server() -> None:
    config = CONFIG.model_copy(update={"mcp_servers": {"files": TOOLS_SERVER}})
    provider = ScriptedProvider(
        (lambda r: last_user_text(r) == "read", lambda r: tool_calls(("slow", {"steps": 2}))),
        (lambda r: True, lambda r: text("ok")),
    )
    async with running_agent(config, provider) as (runtime, host):
        app = ChatApp(await host.create_session(config), runtime)
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await say(pilot, "read")
            table = app.query_one("#calls", DataTable)
            await until(pilot, runtime, lambda: table.row_count == 1)
            (call,) = app.query_one(CallsPane).calls
            await until(pilot, runtime, lambda: "100%" in cell(app, call.call_id, 2))
            assert cell(app, call.call_id, 4) == "running"
            table.focus()
            await pilot.press("c", "y")
            await until(pilot, runtime, lambda: cell(app, call.call_id, 4).startswith("cancelled"))
        seen = await runtime.wait(runtime.submit("cancels_seen", {"at_least": 1}), 20)
        assert seen.result == {"result": 1}, "the cancel reached the server's tool"


async def test_enter_on_a_sub_agents_call_shows_the_childs_chat() -> None:
    puppet = Puppet()
    config, provider = lead_and_researcher(CONFIG)
    async with running(provider, puppet.tool) as (runtime, host):
        app = ChatApp(await host.create_session(config), runtime, host=host)
        async with app.run_test(size=(100, 30), notifications=True) as pilot:
            await say(pilot, "research")
            await until(pilot, runtime, lambda: len(puppet.calls) == 1)
            table = app.query_one("#calls", DataTable)
            await until(pilot, runtime, lambda: table.row_count == 1)
            table.focus()
            await pilot.press("enter")
            await until(pilot, runtime, lambda: isinstance(app.screen, Details))
            shown = details(app)
            assert "researcher's chat" in shown
            assert "user: find flights" in shown and "agent: looking up flights" in shown
            assert "  puppet: running" in shown


async def test_a_streaming_reply_grows_in_the_chat_and_its_call_shows_once_whole() -> None:
    """Issue 28: the real SDK streams from the stand-in; the chat shows the reply as it forms
    and the call it asks for as soon as its ``tool_use`` block is whole."""
    puppet = Puppet()
    async with (
        streaming_a_call() as (api, provider),
        chatting(puppet, provider) as (app, pilot, runtime),
    ):
        await say(pilot, "look")
        await until(pilot, runtime, lambda: "asks for" in chat_text(app))
        assert 'agent: Let me look.\n  asks for puppet({"label": "p"})' in chat_text(app)
        assert puppet.calls == {}, "the call starts once the reply is whole"
        app.session.stop()
        assert await anyio.to_thread.run_sync(api.client_closed.wait, 10)
        await until(pilot, runtime, lambda: "asks for" not in chat_text(app))


async def test_escape_closes_the_models_view_and_the_keys_stay_on_the_calls(puppet: Puppet) -> None:
    """Issue 30: escape closes what is open and leaves the focus where it was, so a ``q``
    after it quits rather than being typed to the model; a second escape goes to writing."""
    async with both_checked(puppet) as (app, pilot, runtime):
        await pilot.press("tab", "b")
        await until(pilot, runtime, lambda: "check both" in model_view(app))
        await pilot.press("escape")
        assert not app.query_one("#context").has_class("shown"), "the view closed"
        assert isinstance(app.focused, CallsPane), "the focus stayed on the calls"
        await pilot.press("enter")
        await until(pilot, runtime, lambda: isinstance(app.screen, Details))
        await pilot.press("escape")
        await until(pilot, runtime, lambda: not isinstance(app.screen, Details))
        assert isinstance(app.focused, CallsPane), "back where it was"
        await pilot.press("escape")
        assert isinstance(app.focused, Input), "escape again: back to writing"
        assert app.query_one("#message", Input).value == ""


async def test_quitting_while_calls_run_asks_once_naming_them(puppet: Puppet) -> None:
    """Issue 30: the calls end with the process, so quitting asks first; ``y`` quits, any
    other key stays; the cancel prompt names the call by its arguments."""
    async with both_checked(puppet) as (app, pilot, runtime):
        await pilot.press("tab", "c")
        await until(pilot, runtime, lambda: isinstance(app.screen, Confirm))
        assert isinstance(app.screen, Confirm)
        assert app.screen.question.startswith("Cancel puppet(Jane) (call ")
        await pilot.press("x")  # anything but y: no
        await until(pilot, runtime, lambda: not isinstance(app.screen, Confirm))
        await pilot.press("q")
        await until(pilot, runtime, lambda: isinstance(app.screen, Confirm))
        assert isinstance(app.screen, Confirm)
        assert (
            app.screen.question
            == "2 running (puppet(Jane), puppet(Joe)) end with this process. Quit?"
        )
        await pilot.press("x")
        await until(pilot, runtime, lambda: not isinstance(app.screen, Confirm))
        assert app.is_running and all(puppet.started(c) for c in puppet.calls)
        await pilot.press("ctrl+c", "ctrl+c")  # asked, then quit all the same
        await until(pilot, runtime, lambda: not app.is_running)


async def test_the_calls_pane_uses_the_terminals_width() -> None:
    """Issue 30: at 120 columns a call's arguments are not cut at 80 columns' width."""
    label = "a-rather-long-label-for-this-call"
    model = ScriptedProvider(
        (lambda r: last_user_text(r) == "go", lambda r: tool_calls(("puppet", {"label": label}))),
        (lambda r: True, lambda r: text("ok")),
    )
    puppet = Puppet()
    async with running(model, puppet.tool) as (runtime, host):
        app = ChatApp(await host.create_session(CONFIG), runtime)
        async with app.run_test(size=(120, 24)) as pilot:
            call_id = await call_on_go(app, pilot, runtime, puppet)
            await until(pilot, runtime, lambda: label in cell(app, call_id, 1))
            assert cell(app, call_id, 1) == f'puppet(label="{label}")'
            await pilot.resize_terminal(80, 24)
            await until(pilot, runtime, lambda: cell(app, call_id, 1).endswith("…"))


EPOCH = 1_796_461_313.0
"""Where the tests' clock starts: none of its digits may show."""


def one_call(arguments: dict[str, Any]) -> ScriptedProvider:
    """A model that asks for one puppet call with ``arguments`` when told ``go``."""
    return ScriptedProvider(
        (lambda r: last_user_text(r) == "go", lambda r: tool_calls(("puppet", arguments))),
        (lambda r: True, lambda r: text("ok")),
    )


async def test_the_details_show_input_progress_times_and_result_readably_and_live() -> None:
    """Issue 47: enter on a call shows its input pretty-printed, a bar with its percent and
    newest log line, its times in human units, then (without reopening) its progress as it
    moves and its result, a long one cut with a note of how much was left out."""
    clock, puppet = ManualClock(start=EPOCH), Puppet()
    provider = one_call({"label": "pages", "expected_seconds": 120})
    async with chatting(puppet, provider, clock=clock) as (app, pilot, runtime):
        call_id = await call_on_go(app, pilot, runtime, puppet)
        await until(pilot, runtime, lambda: puppet.started(call_id))
        clock.advance(12)
        puppet.progress(call_id, {"percent": 40})
        puppet.log(call_id, "fetched page 4")
        await until(pilot, runtime, lambda: "40%" in cell(app, call_id, 2))
        assert cell(app, call_id, 3) == "12 s"
        await pilot.press("tab", "enter")
        await until(pilot, runtime, lambda: isinstance(app.screen, Details))
        shown = details(app)
        assert "puppet  running  call " in shown
        assert 'Input\n{"label": "pages"}' in shown
        bar = next(line for line in shown.splitlines() if line.endswith(" 40%"))
        assert set(bar[:-4]) == {"█", "░"} and len(bar) > 60, "a bar across the pane"
        assert bar.count("█") * 10 // (len(bar) - 5) == 4
        assert "12 s  fetched page 4" in shown
        assert "running for 12 s · expected 2 min · about 20 s left at this pace" in shown
        clock.advance(88)
        puppet.progress(call_id, {"percent": 80})
        await until(pilot, runtime, lambda: " 80%" in details(app))
        assert cell(app, call_id, 3) == "1 min 40 s", "the table says times as the details do"
        assert "running for 1 min 40 s · expected 2 min · about 25 s left at this pace" in details(
            app
        )
        puppet.complete(call_id, {"slots": ["10-11", "14-15"], "notes": "n" * 5000})
        await until(pilot, runtime, lambda: "puppet  completed" in details(app))
        shown = details(app)
        assert "ran for 1 min 40 s · expected 2 min" in shown and "left" not in shown
        assert 'Result\n{\n  "slots": ["10-11", "14-15"],\n  "notes": "nnn' in shown
        assert "\n… 1,048 more characters (1 more line) not shown; r shows the raw JSON" in shown
        assert "%" not in shown, "no bar once it ended"
        assert str(EPOCH)[:6] not in shown


async def test_the_details_say_a_failed_calls_error_and_a_text_result_as_text(
    puppet: Puppet,
) -> None:
    async with both_checked(puppet) as (app, pilot, runtime):
        jane, joe = puppet.calls
        puppet.fail(jane, "calendar\nunreachable")
        puppet.complete(joe, 'free "10-11"\nbusy after')
        await until(pilot, runtime, lambda: cell(app, joe, 4) == "completed")
        await pilot.press("tab", "enter")
        await until(pilot, runtime, lambda: isinstance(app.screen, Details))
        assert "puppet  failed" in details(app)
        assert "Error\nRuntimeError: calendar\nunreachable" in details(app)
        await pilot.press("escape", "down", "enter")
        await until(pilot, runtime, lambda: isinstance(app.screen, Details))
        assert 'Result\nfree "10-11"\nbusy after' in details(app), "text as text, not JSON"


async def test_the_raw_json_shows_only_after_r_and_has_no_epoch_time() -> None:
    clock, puppet = ManualClock(start=EPOCH), Puppet()
    async with chatting(puppet, one_call({"label": "pages"}), clock=clock) as (
        app,
        pilot,
        runtime,
    ):
        call_id = await call_on_go(app, pilot, runtime, puppet)
        await until(pilot, runtime, lambda: puppet.started(call_id))
        clock.advance(3)
        puppet.progress(call_id, {"percent": 60})
        await until(pilot, runtime, lambda: "60%" in cell(app, call_id, 2))
        assert cell(app, call_id, 3) == "3.0 s", "tenths under ten seconds"
        await pilot.press("tab", "enter")
        await until(pilot, runtime, lambda: isinstance(app.screen, Details))
        assert '"kind"' not in details(app) and '"tool_input"' not in details(app)
        descriptions = {b.binding.description for b in app.active_bindings.values()}
        assert "Raw JSON" in descriptions and "Readable" not in descriptions
        await pilot.press("r")
        shown = details(app)
        assert f'"call_id": "{call_id}"' in shown and '"tool_input": {' in shown
        assert '"kind": "partial"' in shown and '"percent": 60' in shown
        assert '"after": 3.0' in shown and '"at"' not in shown
        entry = '"seq": 2,\n      "after": 3.0,\n      "kind": "partial",\n      "payload": {'
        assert entry in shown, "each entry as the page's peek gives it, less its epoch time"
        assert str(EPOCH)[:6] not in shown, "no epoch time"
        descriptions = {b.binding.description for b in app.active_bindings.values()}
        assert "Readable" in descriptions and "Raw JSON" not in descriptions
        await pilot.press("r")
        assert '"kind"' not in details(app)
        assert "running for 3.0 s · about 2 s left at this pace" in details(app)


async def test_the_details_follow_their_call_when_the_calls_list_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The details of Joe's call stay Joe's when the chat's calls are reordered (say a turn
    is replaced), say so when Joe's call is no longer shown (not an IndexError in the
    spinner's timer), and follow it again once it is back."""
    puppet = Puppet()
    shown_chat = vars(Session)["chat"].fget
    change: list[Callable[[list[Any]], list[Any]]] = []

    def changed_chat(session: Session) -> list[Any]:
        chat = shown_chat(session)
        return change[-1](chat) if change else chat

    monkeypatch.setattr(Session, "chat", property(changed_chat))
    async with both_checked(puppet) as (app, pilot, runtime):
        jane, joe = puppet.calls
        await pilot.press("tab", "down", "enter")
        await until(pilot, runtime, lambda: isinstance(app.screen, Details))
        assert 'Input\n{"label": "Joe"}' in details(app)
        change.append(lambda chat: [dataclasses.replace(e, calls=e.calls[::-1]) for e in chat])
        puppet.progress(jane, {"percent": 40})
        await until(pilot, runtime, lambda: app.query_one(CallsPane).calls[0].call_id == joe)
        await until(pilot, runtime, lambda: "40%" in cell(app, jane, 2))
        assert 'Input\n{"label": "Joe"}' in details(app), "Joe's call, now in row 0"
        assert "40%" not in details(app), "not Jane's progress"
        change.append(
            lambda chat: [
                dataclasses.replace(e, calls=tuple(c for c in e.calls if c.call_id != joe))
                for e in chat
            ]
        )
        puppet.progress(joe, {"percent": 70})
        await until(pilot, runtime, lambda: len(app.query_one(CallsPane).calls) == 1)
        assert app.query_one(CallsPane).row_count == 1, "its row goes too"
        await until(pilot, runtime, lambda: "no longer shown in the chat" in details(app))
        assert 'Input\n{"label": "Joe"}' in details(app)
        assert " 70%" in details(app), "what the runtime holds of it still shows"
        change.clear()
        puppet.progress(joe, {"percent": 80})
        await until(pilot, runtime, lambda: " 80%" in details(app))
        assert "no longer shown" not in details(app)
        assert 'Input\n{"label": "Joe"}' in details(app)


async def test_the_progress_column_is_wider_on_a_wider_terminal() -> None:
    """Issue 47: the bar grows with the terminal instead of staying five blocks."""
    puppet = Puppet()
    async with chatting(puppet, one_call({"label": "x"})) as (app, pilot, runtime):
        call_id = await call_on_go(app, pilot, runtime, puppet)
        puppet.progress(call_id, {"percent": 40})
        await until(pilot, runtime, lambda: "40%" in cell(app, call_id, 2))
        assert cell(app, call_id, 2) == "██░░░ 40%"
        await pilot.resize_terminal(120, 24)
        await until(pilot, runtime, lambda: len(cell(app, call_id, 2)) > 9)
        assert cell(app, call_id, 2) == "█████░░░░░░░░ 40%"
        await pilot.resize_terminal(160, 24)
        await until(pilot, runtime, lambda: len(cell(app, call_id, 2)) > 17)
        assert cell(app, call_id, 2) == "████████░░░░░░░░░░░░░ 40%"
