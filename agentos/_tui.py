"""``agentos chat``'s terminal UI (Textual): talk to a session while its calls run.

The chat (``Session.chat``), an input that stays usable while calls run, and a
pane with a row per call (spinner, tool and arguments, progress, elapsed time,
then a mark and the outcome). Updates come from ``Session.on_change`` and the
runtime's call events, coalesced to a redraw every ``REDRAW_SECONDS`` at most;
nothing polls. The page's view model (``_web_view``) draws the same data.
"""

from __future__ import annotations

import json
import time
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Header, Input, Static

from agentos._errors import UnknownCallError
from agentos._runtime import Runtime
from agentos._session import Session
from agentos._web_view import call_widgets, context_text, peek
from components import JsonObject

REDRAW_SECONDS = 0.2
"""At most this often, the screen follows what changed."""
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
MARKS = {"completed": ("●", "green"), "orphaned": ("●", "grey50")}
FAILED_MARK = ("●", "red")


class ChatApp(App[None]):
    """One session: its chat, an input, its calls; keys to look at and cancel them."""

    CSS = """
    #chat { height: 1fr; }
    #calls { height: auto; max-height: 9; border-top: solid $accent; }
    #context { height: 1fr; border-top: solid $accent; display: none; }
    #context.shown { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "cancel_call", "Cancel call"),
        Binding("b", "toggle_context", "Model's view"),
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(self, session: Session, runtime: Runtime) -> None:
        super().__init__()
        self.session = session
        self.runtime = runtime
        self.queued: list[str] = []
        """Posted while the model was busy and not in the chat yet."""
        self._redraw_due = False
        self._frame = 0
        self._stops = [
            session.on_change(self._changed),
            runtime.on_call_events(session.session_id, lambda event: self._changed()),
        ]

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with VerticalScroll(id="chat"):
            yield Static(id="chat-text")
        with VerticalScroll(id="context"):
            yield Static(id="context-text")
        yield DataTable(id="calls", cursor_type="row")
        yield Input(placeholder="Write a message (calls keep running)", id="message")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"agentos chat {self.session.session_id}"
        table = self.query_one("#calls", DataTable)
        table.add_column(" ", width=1)
        table.add_column("call", width=36)
        table.add_column("progress", width=10)
        table.add_column("time", width=5)
        table.add_column("outcome")
        self.query_one("#message", Input).focus()
        self.set_interval(1.0, self._tick)
        self.redraw()

    def on_unmount(self) -> None:
        for stop in self._stops:
            stop()

    # ------------------------------------------------------------ drawing

    class Changed(Message):
        """The session or one of its calls moved (posted from the runtime's tasks)."""

    def _changed(self) -> None:
        if not self._redraw_due:
            self._redraw_due = True
            self.post_message(self.Changed())

    def on_chat_app_changed(self, message: Changed) -> None:
        self.set_timer(REDRAW_SECONDS, self.redraw)

    def _tick(self) -> None:
        """Spinners turn and clocks run while calls do."""
        self._frame += 1
        if any(not widget["final"] for widget in self._widgets().values()):
            self.redraw()

    def _widgets(self) -> dict[str, JsonObject]:
        chat = self.session.chat
        return call_widgets(chat, self.runtime.list_calls(self.session.session_id), time.time())

    def redraw(self) -> None:
        """Draw the chat, the calls and (when shown) what the model reads next, as they are."""
        self._redraw_due = False
        chat = self.session.chat
        said = {entry.text for entry in chat if entry.role == "user"}
        self.queued = [words for words in self.queued if words not in said]
        lines = Text()
        for entry in chat:
            style = "bold cyan" if entry.role == "user" else "bold"
            lines.append(f"{entry.role}: ", style=style)
            lines.append(f"{entry.text}\n")
        for words in self.queued:
            lines.append("you (queued): ", style="dim")
            lines.append(f"{words}\n", style="dim")
        self.query_one("#chat-text", Static).update(lines)
        self._draw_calls(self._widgets())
        context = self.query_one("#context", VerticalScroll)
        if context.has_class("shown"):
            text = context_text(self.session.next_messages())
            self.query_one("#context-text", Static).update(Text(text))

    def _draw_calls(self, widgets: dict[str, JsonObject]) -> None:
        table = self.query_one("#calls", DataTable)
        for call_id, widget in widgets.items():
            cells = self._cells(widget)
            if call_id in table.rows:
                for column, value in zip(table.columns, cells, strict=True):
                    table.update_cell(call_id, column, value)
            else:
                table.add_row(*cells, key=call_id)

    def _cells(self, widget: JsonObject) -> tuple[Text, str, str, str, str]:
        status = str(widget["status"])
        if widget["final"]:
            mark, colour = MARKS.get(status, FAILED_MARK)
        else:
            mark, colour = SPINNER[self._frame % len(SPINNER)], "blue"
        args = widget["args"]
        shown = ", ".join(
            f"{k}={json.dumps(v)}" for k, v in (args.items() if isinstance(args, dict) else ())
        )
        percent = widget["percent"]
        if isinstance(percent, int | float) and not widget["final"]:
            filled = int(percent / 10)
            progress = f"{'█' * (filled // 2)}{'░' * (5 - filled // 2)} {percent:.0f}%"
        else:
            latest = widget["latest"]
            progress = "" if latest is None or widget["final"] else str(latest)[:40]
        elapsed = widget["elapsed"]
        seconds = f"{elapsed:.0f} s" if isinstance(elapsed, int | float) else ""
        outcome = status if widget["error"] is None else f"{status}: {widget['error']}"
        call = f"{widget['tool']}({shown})"
        call = call if len(call) <= 36 else call[:35] + "…"
        return Text(mark, style=colour), call, progress, seconds, outcome

    # ------------------------------------------------------------ actions

    def on_input_submitted(self, event: Input.Submitted) -> None:
        words = event.value.strip()
        if not words:
            return
        event.input.value = ""
        try:
            self.session.post(words)
        except Exception as error:  # a stopped session, say: shown, not raised
            self.notify(str(error), severity="error")
            return
        if not self.session.idle:
            self.queued.append(words)
        self.redraw()

    def _selected(self) -> str | None:
        table = self.query_one("#calls", DataTable)
        if table.row_count == 0:
            return None
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        return None if row_key.value is None else str(row_key.value)

    def action_cancel_call(self) -> None:
        call_id = self._selected()
        if call_id is None:
            return

        def answered(yes: bool | None) -> None:
            if yes:
                try:
                    self.runtime.cancel(call_id, "cancelled in agentos chat")
                except UnknownCallError:
                    self.notify("that call is gone", severity="warning")

        self.push_screen(Confirm(f"Cancel call {call_id}?"), answered)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """``enter`` on a call: its details."""
        if event.row_key.value is not None:
            self._details(str(event.row_key.value))

    def _details(self, call_id: str) -> None:
        try:
            snapshot = self.runtime.status(call_id)
        except UnknownCallError:
            self.notify("the runtime no longer holds that call", severity="warning")
            return
        self.push_screen(Details(json.dumps(peek(snapshot), indent=2, default=str)))

    def action_toggle_context(self) -> None:
        self.query_one("#context", VerticalScroll).toggle_class("shown")
        self.redraw()


class Confirm(ModalScreen[bool]):
    """A yes/no question: y or n (escape is no)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n", "answer(False)", "No"),
        Binding("escape", "answer(False)", "No", show=False),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        yield Static(f"{self.question}  [y/n]", id="question")
        yield Footer()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class Details(ModalScreen[None]):
    """A call's progress log and its result or error (escape closes)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text(self.text), id="details")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)
