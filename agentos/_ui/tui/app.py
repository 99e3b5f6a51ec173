"""``agentos chat``'s terminal UI (Textual): talk to a session while its calls run.

The chat (``Session.chat``, then what is posted and not read yet), an input that
stays usable while calls run, and a pane with a row per call. Updates come from
``Session.on_change`` and the runtime's call events, coalesced to a redraw every
``REDRAW_SECONDS`` at most (the first change after a quiet spell is drawn at once, so
a streaming reply's first words show without delay); nothing polls (a timer turns the
spinners while calls run). Each call's widget and peek are ``_ui/call_json.py``'s and the
context ``_ui/context_text.py``'s, as the web page draws them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import App
from textual.app import ComposeResult
from textual.binding import Binding
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets import Footer
from textual.widgets import Header
from textual.widgets import Input
from textual.widgets import Static

from agentos import AgentOSError
from agentos import Answer
from agentos import CallEvent
from agentos import CallSnapshot
from agentos import Host
from agentos import Runtime
from agentos import Session
from agentos import UnknownCallError
from agentos import UnknownSessionError
from agentos import child_session_id
from agentos._ui.call_json import call_widget
from agentos._ui.context_text import context_text
from agentos._ui.terminal_text import one_line
from agentos._ui.terminal_text import short_call
from agentos._ui.terminal_text import tally
from agentos._ui.terminal_text import visible
from agentos._ui.tui.answering import Answering
from agentos._ui.tui.calls import SPINS_PER_SECOND
from agentos._ui.tui.calls import CallsPane
from agentos._ui.tui.details import Looked
from agentos._ui.tui.details import child_chat
from agentos._ui.tui.follow import Followed
from agentos._ui.tui.screens import Confirm
from agentos._ui.tui.screens import Details
from agentos._ui.tui.theme import THEMES
from agentos._ui.tui.theme import terminal_theme
from agentos._ui.tui.waiting import WaitingCalls
from agentos._ui.tui.waiting import send_answer
from agentos.board import ChatCall
from agentos.board import ChatEntry
from agentos.stores import short_id
from components import JsonObject

REDRAW_SECONDS = 0.2
"""At most this often, the screen follows what changed."""
ERROR_SECONDS = 15
"""How long an error's notification stays up."""
QUESTION_SECONDS = 10
"""How long the notification of a new question stays up."""


class MessageInput(Input):
    """The message line: typing goes here; ``tab`` moves to the calls."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "app.focus('calls')", "Calls"),
    ]


class ChatApp(App[None]):
    """One session: its chat, an input, its calls; keys to look at and cancel them.

    ``theme`` is ``dark`` or ``light`` (default: what the terminal says, see
    ``terminal_theme``). Times come from the runtime's clock.
    """

    CSS = """
    #chat { height: 1fr; }
    #calls { height: auto; max-height: 9; border-top: solid $accent; overflow-x: hidden; }
    #context { height: 1fr; border-top: solid $accent; display: none; }
    #context.shown { display: block; }
    """
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "quit", "Quit", priority=True),
        Binding("pageup", "scroll_chat(-1)", "Scroll chat", show=False),
        Binding("pagedown", "scroll_chat(1)", "Scroll chat", show=False),
    ]

    def __init__(
        self,
        session: Session,
        runtime: Runtime,
        *,
        theme: str | None = None,
        host: Host | None = None,
    ) -> None:
        """``host``: the session's, so ``enter`` on a sub-agent's call shows its child's chat."""
        super().__init__()
        self.host = host
        chosen = terminal_theme() if theme is None else theme
        if chosen not in THEMES:
            raise ValueError(f"theme is 'dark' or 'light', got {chosen!r}")
        self.session = session
        self.runtime = runtime
        self.theme = THEMES[chosen]
        self._chat_shown: Text | None = None
        self._errors_told = len(session.errors)
        self._last_error, self._last_error_at = "", float("-inf")
        self._redraw_due = False
        self._drawn_at = float("-inf")
        self._forming = False
        self._waiting = WaitingCalls()
        self._stops: list[Callable[[], None]] = []
        self._chat = VerticalScroll(id="chat", can_focus=False)
        self._chat_text = Static(id="chat-text")
        self._model_view = VerticalScroll(id="context", can_focus=False)
        self._model_view_text = Static(id="context-text")
        self._calls = CallsPane()

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with self._chat:
            yield self._chat_text
        with self._model_view:
            yield self._model_view_text
        yield self._calls
        yield MessageInput(placeholder="Write a message (calls keep running)", id="message")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"agentos chat {one_line(short_id(self.session.session_id))}"
        self._stops = [
            self.session.on_change(self._changed),
            self.runtime.on_call_events(self.session.session_id, self._call_moved),
        ]
        running = self.runtime.list_calls(self.session.session_id, include_final=False)
        self._waiting.moved.update(call.call_id for call in running)  # one may ask already
        self.query_one("#message", Input).focus()
        self._spinner = self._calls.set_interval(1 / SPINS_PER_SECOND, self._spin, pause=True)
        self.redraw()

    def on_unmount(self) -> None:
        for stop in self._stops:
            stop()

    # ------------------------------------------------------------ drawing

    class Changed(Message):
        """The session or one of its calls moved (posted from the runtime's tasks)."""

    def _call_moved(self, event: CallEvent) -> None:
        self._waiting.moved.add(event.call_id)
        self._changed()

    def _changed(self) -> None:
        forming = self.session.streaming is not None and bool(self.session.streaming.text)
        starts, self._forming = forming and not self._forming, forming
        if starts:
            self._drawn_at = float("-inf")  # a reply's first words are drawn at once
        if starts or not self._redraw_due:
            self._redraw_due = True
            self.post_message(self.Changed())

    def on_chat_app_changed(self, message: Changed) -> None:
        wait = self._drawn_at + REDRAW_SECONDS - time.monotonic()
        if wait <= 0:
            self.redraw()
        else:
            self._calls.set_timer(wait, self.redraw)

    def _spin(self) -> None:
        """Spinners turn and clocks run while calls do (the timer runs only then)."""
        self._draw_calls(self.session.chat)
        self._refresh_details()

    def on_calls_pane_scrolled(self, message: CallsPane.Scrolled) -> None:
        self._draw_calls(self.session.chat)

    def redraw(self) -> None:
        """Draw the chat, the calls and (when shown) what the model reads next, as they are."""
        self._redraw_due = False
        self._drawn_at = time.monotonic()
        self.sub_title = visible(self.session.title)  # the header: "agentos chat ID — title"
        chat = self.session.chat
        lines = Text()
        for entry in chat:
            style = f"bold {self.current_theme.accent}" if entry.role == "user" else "bold"
            lines.append(f"{entry.role}: ", style=style)
            lines.append(visible(entry.text))
            if entry.calls:
                called = f"(called {one_line(tally(call.tool_name for call in entry.calls))})"
                lines.append(f"{' ' if entry.text else ''}{called}", "dim")
            lines.append("\n")
        for words in self.session.queued_posts:
            lines.append("user (queued): ", style="dim")
            lines.append(f"{visible(words)}\n", style="dim")
        forming = self.session.streaming
        if forming is not None:  # the model's reply as it arrives
            lines.append("agent: ", style="bold")
            lines.append(visible(forming.text))
            for use in forming.tool_uses:
                asked = f"{use.get('name')}({json.dumps(use.get('input'))})"
                lines.append(f"\n  asks for {one_line(asked)}", "dim")
            lines.append(" ▍\n", "dim")
        if lines != self._chat_shown:
            self._chat_shown = lines
            following = self._chat.is_vertical_scroll_end  # else the reader scrolled back
            self._chat_text.update(lines)
            if following:
                self._chat.scroll_end(animate=False)
        self._draw_calls(chat)
        self._refresh_details()
        self._tell_errors()
        if self._model_view.has_class("shown"):
            text = context_text(self.session.next_messages())
            self._model_view_text.update(Text(visible(text)))

    def _tell_errors(self) -> None:
        """Notify each new entry of ``Session.errors`` (a failed model request, say), but not
        one that repeats the last while its notification is still up (a store that refuses
        every commit fails each the same way)."""
        now = time.monotonic()
        for error in self.session.errors[self._errors_told :]:
            if error != self._last_error or now - self._last_error_at > ERROR_SECONDS:
                self.notify(
                    visible(error),
                    title="error",
                    severity="error",
                    timeout=ERROR_SECONDS,
                    markup=False,
                )
                self._last_error, self._last_error_at = error, now
        self._errors_told = len(self.session.errors)

    def _draw_calls(self, chat: Sequence[ChatEntry]) -> None:
        now = self.runtime.clock.wall()
        calls = [call for entry in chat for call in entry.calls]

        def widget_of(call: ChatCall) -> JsonObject:
            return call_widget(call, self._held(call.call_id), now)

        self._calls.draw(calls, widget_of, now, self.current_theme)
        self._follow_questions()
        if any(not call.status.is_final for call in calls):
            self._spinner.resume()
        else:
            self._spinner.pause()

    def _follow_questions(self) -> None:
        """Look again at the calls that moved: tell of each new question (the person may be
        typing a message), and offer ``a`` while any waits."""
        new, changed = self._waiting.look_again(self._held)
        for snapshot in new:
            question = snapshot.question
            assert question is not None
            self.notify(
                f"{one_line(question.message)}\n(tab to the calls; a answers)",
                title=f"{one_line(snapshot.tool_name)} needs your answer",
                severity="warning",
                timeout=QUESTION_SECONDS,
                markup=False,
            )
        if changed:
            self.refresh_bindings()

    def _held(self, call_id: str) -> CallSnapshot | None:
        """The runtime's snapshot of a call (None: forgotten, or lost in a restart)."""
        try:
            return self.runtime.status(call_id)
        except UnknownCallError:
            return None

    # ------------------------------------------------------------ actions

    def on_input_submitted(self, event: Input.Submitted) -> None:
        words = event.value.strip()
        if not words:
            return
        try:
            self.session.post(words)
        except (AgentOSError, ValueError) as error:  # an ended session, say: shown, not raised
            self.notify(visible(str(error)), severity="error", markup=False)
            return
        event.input.value = ""
        self.redraw()

    def action_cancel_call(self) -> None:
        call = self._calls.selected
        if call is None:
            return
        snapshot = self._held(call.call_id)
        if snapshot is None or snapshot.status.is_final:
            status = call.status if snapshot is None else snapshot.status
            said = f"{one_line(call.tool_name)} is {status.value}: nothing to cancel"
            self.notify(said, severity="warning", markup=False)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                try:
                    self.runtime.cancel(snapshot.call_id, "cancelled in agentos chat")
                except UnknownCallError:  # ended and forgotten while the question was up
                    gone = f"{one_line(call.tool_name)} is gone"
                    self.notify(gone, severity="warning", markup=False)

        shown = one_line(short_call(snapshot.tool_name, snapshot.tool_input))
        asked = f"Cancel {shown} (call {short_id(snapshot.call_id)})?"
        self.push_screen(Confirm(asked), answered)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer_call":
            return bool(self._waiting.asking)  # offered only while a question waits
        return True

    def action_answer_call(self) -> None:
        """``a``: answer the selected call's question, else that of the call that asked first."""
        selected = self._calls.selected
        snapshot = None if selected is None else self._held(selected.call_id)
        if snapshot is None or snapshot.call_id not in self._waiting.asking:
            snapshot = next(iter(self._waiting.asking.values()), None)
        if snapshot is not None:
            self._answer(snapshot)

    def answer_call(self, call: ChatCall) -> None:
        """Open the answer screen on ``call``'s question and send what the person answers."""
        snapshot = self._held(call.call_id)
        if snapshot is None or snapshot.call_id not in self._waiting.asking:
            said = f"{one_line(call.tool_name)} asks nothing now"
            self.notify(said, severity="warning", markup=False)
            return
        self._answer(self._waiting.asking[snapshot.call_id])

    def _answer(self, asking: CallSnapshot) -> None:
        question = asking.question
        assert question is not None  # kept in _asking only while it asks

        def still_asked() -> bool:
            return self._waiting.still_asks(asking.call_id, question)

        def answered(answer: Answer | None) -> None:
            if answer is not None:
                self._send(asking, answer)

        self.push_screen(Answering(question, asking.tool_name, still_asked), answered)

    def _send(self, call: CallSnapshot, answer: Answer) -> None:
        """Send the answer, and say whether it went."""
        sent = send_answer(self.host or self.runtime, self.session.session_id, call, answer)
        tool = one_line(call.tool_name)
        if sent:
            self.notify(f"{tool}: {answer.action.value} sent", markup=False)
        else:
            said = f"not sent: {tool} asks nothing now (answered elsewhere, or it ended)"
            self.notify(said, severity="warning", markup=False)
        self.redraw()

    async def action_quit(self) -> None:
        """Quit; while calls run (they end with this process) ask once first. A second
        quit while asking quits."""
        running = [
            call
            for call in self.runtime.list_calls(self.session.session_id, include_final=False)
            if not call.deferred  # a deferred call waits for its token in the store
        ]
        if not running or isinstance(self.screen, Confirm):
            self.exit()
            return
        names = ", ".join(one_line(short_call(c.tool_name, c.tool_input)) for c in running[:3])
        more = f" and {len(running) - 3} more" if len(running) > 3 else ""
        asked = f"{len(running)} running ({names}{more}) end with this process. Quit?"
        self.push_screen(Confirm(asked), lambda yes: self.exit() if yes else None)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """``enter`` on a call: its details, kept live (of a call the runtime no longer
        holds, what the chat knows)."""
        call = self._calls.selected
        if call is None:
            return
        followed = Followed.of(call, self._held(call.call_id))
        self.push_screen(Details(lambda: self._look_at(followed), self.answer_call))

    def _look_at(self, followed: Followed) -> Looked:
        """The call a details pane follows, as it is now: found in the calls pane by its
        ids (the rows may have moved), else as last shown, marked no longer in the chat."""
        found = followed.find(self._calls.calls, self._held)
        if found is None:
            call = followed.last
            snapshot = None if followed.runtime_id is None else self._held(followed.runtime_id)
        else:
            call, snapshot = found
        child = self._child_of(call, snapshot)
        now = self.runtime.clock.wall()
        return Looked(
            call=call,
            widget=call_widget(call, snapshot, now),
            snapshot=snapshot,
            child_chat=None if child is None else child_chat(child),
            now=now,
            in_chat=found is not None,
        )

    def _refresh_details(self) -> None:
        if isinstance(self.screen, Details):
            self.screen.refresh_details()
        elif isinstance(self.screen, Answering):
            self.screen.refresh_question()

    def _child_of(self, call: ChatCall, snapshot: CallSnapshot | None) -> Session | None:
        """The child session a sub-agent's call ran (None: another call, or not here)."""
        if (
            self.host is None
            or snapshot is None
            or call.tool_name not in self.session.config.agents
        ):
            return None
        try:
            return self.host.get(child_session_id(call.tool_name, snapshot.call_id))
        except UnknownSessionError:
            return None

    def action_toggle_context(self) -> None:
        self._model_view.toggle_class("shown")
        self.redraw()

    def action_leave_calls(self) -> None:
        """Escape on the calls: close the model's view if it is open (the focus stays on
        the calls, so the next keys are not typed to the model), else go back to writing."""
        if self._model_view.has_class("shown"):
            self.action_toggle_context()
        else:
            self.query_one("#message", Input).focus()

    def action_scroll_chat(self, pages: int) -> None:
        scroll = self._chat.scroll_page_down if pages > 0 else self._chat.scroll_page_up
        scroll(animate=False)
