"""The terminal UI's two dialogs: a yes/no question and a call's details (the answer screen
is ``answering.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.binding import BindingType
from textual.containers import Vertical
from textual.containers import VerticalScroll
from textual.css.query import NoMatches
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets import Static

from agentos._ui.tui.calls import bar
from agentos._ui.tui.details import Looked
from agentos._ui.tui.details import head
from agentos._ui.tui.details import input_text
from agentos._ui.tui.details import outcome
from agentos._ui.tui.details import progress_text
from agentos._ui.tui.details import question_text
from agentos._ui.tui.details import raw
from agentos._ui.tui.details import times
from agentos.board import ChatCall


class Confirm(ModalScreen[bool]):
    """A yes/no question: y is yes, any other key is no."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n", "answer(False)", "No"),
        Binding("escape", "answer(False)", "No", show=False),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        yield Static(Text(f"{self.question}  [y/n]"), id="question")
        yield Footer()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    def on_key(self, event: events.Key) -> None:
        if event.key not in ("y", "n", "escape"):  # those have their bindings
            event.stop()
            self.dismiss(False)


class Bar(Widget):
    """A progress bar with its percent, as wide as the pane: ``█████░░░░░░░  40%``."""

    DEFAULT_CSS = "Bar { height: 1; }"
    percent: reactive[float] = reactive(0.0)

    def render(self) -> Text:
        return Text(bar(self.percent, self.size.width))


class Details(ModalScreen[None]):
    """A call as a person reads it, kept live: its tool and status, the question it waits to
    have answered, input, progress (a bar as wide as the pane, the newest log lines), times
    and outcome; ``r`` shows the raw JSON instead, and back; ``a`` answers the question
    (``answer``, while it asks). ``look`` says what the call is now: the app calls
    ``refresh_details`` when something moved."""

    DEFAULT_CSS = """
    Details { background: $background 60%; align: center bottom; }
    #details-box {
        height: auto; max-height: 1fr; border: round $accent; padding: 0 1; background: $surface;
    }
    #details-box .heading { text-style: bold; color: $accent; margin-top: 1; }
    #details-readable { height: auto; }
    #details-raw { display: none; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("r", "show_raw(True)", "Raw JSON"),
        Binding("r", "show_raw(False)", "Readable"),
        Binding("a", "answer", "Answer"),
    ]

    def __init__(
        self, look: Callable[[], Looked], answer: Callable[[ChatCall], None] | None = None
    ) -> None:
        super().__init__()
        self.look = look
        self.answer = answer
        self.looked = look()
        self._drawn: tuple[object, ...] = ()
        """The ``_version`` last drawn (the input, the outcome and the raw JSON may be long:
        they are made again only when the call moved)."""
        self._raw_shown = False
        self._ready = False

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="details-box"):
            with Vertical(id="details-readable"):
                yield Static(id="details-head")
                yield Static(id="details-time")
                yield Static("Needs your answer", id="question-heading", classes="heading")
                yield Static(id="details-question")
                yield Static(id="outcome-heading", classes="heading")
                yield Static(id="details-outcome")
                yield Static("Progress", id="progress-heading", classes="heading")
                yield Bar(id="details-bar")
                yield Static(id="details-progress")
                yield Static("Input", classes="heading")
                yield Static(id="details-input")
                yield Static("Its agent's chat", id="child-heading", classes="heading")
                yield Static(id="details-child")
            yield Static(id="details-raw")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#details-box").border_title = "Call details"
        self._ready = True
        self.draw()

    def refresh_details(self) -> None:
        """Look at the call again and show what moved (once the pane is composed, and until
        it is taken down: the app's timer may tick before and while its parts go)."""
        if not self._ready:
            return
        self.looked = self.look()
        try:
            self.draw()
        except NoMatches:  # the app is closing: its parts are gone
            self._ready = False

    def draw(self) -> None:
        """Show ``looked``: its times always (they run), the rest when the call moved."""
        looked = self.looked
        self.query_one("#details-time", Static).update(Text(times(looked)))
        asked = question_text(looked)
        if asked is not None:  # its "asked 12 s ago" runs
            self.query_one("#details-question", Static).update(asked)
        if self._version() == self._drawn:
            return
        self._drawn = self._version()
        if self.raw_shown:
            self.query_one("#details-raw", Static).update(Text(raw(looked)))
            return
        self.query_one("#details-head", Static).update(head(looked, self.app.current_theme))
        self.query_one("#details-input", Static).update(input_text(looked))
        self._show("#question-heading", asked is not None)
        self._show("#details-question", asked is not None)
        self.refresh_bindings()  # "a" is offered while the call asks
        reported = progress_text(looked)
        percent = looked.percent
        self._show("#progress-heading", percent is not None or bool(reported))
        self._show("#details-bar", percent is not None)
        self.query_one(Bar).percent = 0.0 if percent is None else percent
        self._show("#details-progress", bool(reported))
        self.query_one("#details-progress", Static).update(reported)
        ended = outcome(looked)
        self._show("#outcome-heading", ended is not None)
        self._show("#details-outcome", ended is not None)
        if ended is not None:
            self.query_one("#outcome-heading", Static).update(ended[0])
            self.query_one("#details-outcome", Static).update(ended[1])
        child = looked.child_chat
        self._show("#child-heading", child is not None)
        self._show("#details-child", child is not None)
        if child is not None:
            self.query_one("#details-child", Static).update(Text(child))

    def _version(self) -> tuple[object, ...]:
        """What says the call moved: its id, status, note, snapshot version, child chat and
        whether the chat still shows it."""
        looked = self.looked
        version = None if looked.snapshot is None else looked.snapshot.version
        return (
            looked.call.call_id,
            looked.status,
            looked.widget.get("note"),
            version,
            looked.child_chat,
            looked.in_chat,
        )

    def _show(self, selector: str, shown: bool) -> None:
        self.query_one(selector).display = shown

    @property
    def raw_shown(self) -> bool:
        """Whether the raw JSON is shown (``r`` switches)."""
        return self._raw_shown

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "show_raw":
            return parameters[0] != self.raw_shown  # the footer offers the other view
        if action == "answer":
            return self.answer is not None and question_text(self.looked) is not None
        return True

    def action_answer(self) -> None:
        if self.answer is not None:
            self.answer(self.looked.call)

    def action_show_raw(self, shown: bool) -> None:
        self._raw_shown = shown
        self._show("#details-readable", not shown)
        self._show("#details-raw", shown)
        self._drawn = ()
        self.draw()
        box = self.query_one("#details-box")
        box.border_title = "Call details: raw JSON" if shown else "Call details"
        box.scroll_home(animate=False)
        self.refresh_bindings()

    def action_close(self) -> None:
        self.dismiss(None)
