"""The terminal UI's calls pane: a row per call of the session, and the keys that act on one.

A row reads: a spinner (a mark once final), the tool and its arguments, a progress bar
as wide as its column (which grows with the terminal) or the newest payload, how long
it ran (``6.5 s``, ``1 min 40 s``, ``1 h 2 min``: ``human_seconds``, as every front end
says it), and the status with its error (or, while it runs, its newest log line; while it waits for
the person's answer, ``needs your answer``). A
redraw writes only the rows in view (and new ones), and of those only the cells that
changed: 200 running calls cost what the eight rows on screen cost. A row that scrolls
into view is drawn then (``Scrolled``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.binding import BindingType
from textual.message import Message
from textual.theme import Theme
from textual.widgets import DataTable

from agentos._ui.durations import human_seconds
from agentos._ui.terminal_text import one_line
from agentos.board import ChatCall
from components import JsonObject

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPINS_PER_SECOND = 4
COLUMNS = (" ", 1), ("call", 25), ("progress", 10), ("time", 11), ("outcome", 19)
"""Label and width at 80 columns: with the cells' padding and a scrollbar, 78 of them.
The time fits the longest ``human_seconds`` says below a day (``59 min 59 s``). A wider
pane gives the call, the progress and the outcome the rest (``column_widths``)."""
WIDTHS = [width for _, width in COLUMNS]
NEEDS_ANSWER = "needs your answer"
"""The outcome of a running call that waits for the person's answer (``a`` gives it)."""


def column_widths(pane: int) -> list[int]:
    """The columns' widths in a pane ``pane`` columns wide: the call, the progress and the
    outcome share what is beyond 80, 3 parts to 1 to 1 (at 120 columns a 49-character call
    is whole and the bar is 13 blocks)."""
    extra = max(0, pane - 80)
    mark, call, progress, time, outcome = WIDTHS
    more_call, more_progress = extra * 3 // 5, extra // 5
    return [
        mark,
        call + more_call,
        progress + more_progress,
        time,
        outcome + extra - more_call - more_progress,
    ]


Cells = tuple[Text, Text, Text, Text, Text]


class CallsPane(DataTable[Any]):
    """The session's calls in the chat's order, row ``i`` showing ``calls[i]``.

    Rows go by position, not call id: a transcript names a call by its
    ``toolu_`` id until the runtime holds it, and again once it is forgotten.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Details"),
        Binding("c", "app.cancel_call", "Cancel call"),
        Binding("a", "app.answer_call", "Answer"),
        Binding("b", "app.toggle_context", "Model's view"),
        Binding("q", "app.quit", "Quit"),
        Binding("tab", "app.focus('message')", "Write"),
        Binding("escape", "app.leave_calls", "Back", show=False),
    ]

    class Scrolled(Message):
        """Other rows came into view: draw them."""

    def __init__(self) -> None:
        super().__init__(id="calls", cursor_type="row")
        self.calls: list[ChatCall] = []
        """What the rows show, as last drawn."""
        self._shown: list[Cells] = []
        self._widths = list(WIDTHS)
        self._cursor_after_resize: int | None = None

    def on_mount(self) -> None:
        for (label, _), width in zip(COLUMNS, self._widths, strict=True):
            self.add_column(label, width=width)

    def on_resize(self, event: events.Resize) -> None:
        """A wider (or narrower) pane: the columns again, and every row drawn anew."""
        widths = column_widths(event.size.width)
        if widths == self._widths:
            return
        self._widths = widths
        self._cursor_after_resize = self.cursor_row
        self.clear(columns=True)
        for (label, _), width in zip(COLUMNS, widths, strict=True):
            self.add_column(label, width=width)
        self._shown = []
        self.post_message(self.Scrolled())  # the app draws the rows

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if round(old_value) != round(new_value):
            self.post_message(self.Scrolled())

    def draw(
        self,
        calls: Sequence[ChatCall],
        widget_of: Callable[[ChatCall], JsonObject],
        now: float,
        theme: Theme,
    ) -> None:
        """Show ``calls``: rows for new ones, and the rows in view brought up to date (their
        ``widget_of``), spinners at ``now``'s frame."""
        self.calls = list(calls)
        frame = SPINNER[int(now * SPINS_PER_SECOND) % len(SPINNER)]
        top = round(self.scroll_y)
        in_view = range(top, min(top + self.size.height, len(self._shown), len(calls)))
        columns = [column.key for column in self.ordered_columns]
        for row in [*in_view, *range(len(self._shown), len(calls))]:
            cells = row_cells(widget_of(calls[row]), frame, theme, self._widths)
            if row == len(self._shown):
                self.add_row(*cells, key=str(row))
                self._shown.append(cells)
                continue
            for column, old, new in zip(columns, self._shown[row], cells, strict=True):
                if old != new:
                    self.update_cell(str(row), column, new)
            self._shown[row] = cells
        while len(self._shown) > len(calls):  # a shorter list (a turn replaced, say)
            self._shown.pop()
            self.remove_row(str(len(self._shown)))
        if self._cursor_after_resize is not None and self.row_count:
            self.move_cursor(row=min(self._cursor_after_resize, self.row_count - 1))
            self._cursor_after_resize = None

    @property
    def selected(self) -> ChatCall | None:
        """The call under the cursor (None: no calls yet)."""
        row = self.cursor_row
        return self.calls[row] if 0 <= row < min(self.row_count, len(self.calls)) else None


def row_cells(
    widget: JsonObject, frame: str, theme: Theme, widths: Sequence[int] = WIDTHS
) -> Cells:
    """One call's row: mark, call, progress, time, outcome, cut to ``widths``."""
    status = str(widget["status"])
    if not widget["final"]:
        mark = Text(frame, style=theme.primary)
    elif status == "completed":
        mark = Text("✓", style=f"bold {theme.success}")
    elif status == "orphaned":
        mark = Text("?", style="dim")
    else:
        mark = Text("✗", style=f"bold {theme.error}")
    args = widget["tool_input"]
    shown = ", ".join(
        f"{key}={json.dumps(value)}"
        for key, value in (args.items() if isinstance(args, dict) else ())
    )
    call = f"{widget['tool_name']}({shown})"
    elapsed = widget["elapsed"]
    seconds = human_seconds(max(0.0, elapsed)) if isinstance(elapsed, int | float) else ""
    outcome = status if widget["error"] is None else f"{status}: {widget['error']}"
    if not widget["final"] and widget.get("log") is not None:  # beside the bar, never for it
        outcome = f"{outcome} · {widget['log']}"
    if widget.get("note"):  # what the runtime's own turns did with it: overdue, looked at
        outcome = f"{outcome} · {widget['note']}"
    _, call_width, progress_width, _, outcome_width = widths
    asks = not widget["final"] and widget.get("question") is not None
    return (  # Text, never str: a str cell would be read as markup
        mark,
        Text(clip(call, call_width)),
        Text(clip(progress_cell(widget, progress_width), progress_width)),
        Text(seconds),
        Text(clip(NEEDS_ANSWER, outcome_width), style=f"bold {theme.warning}")
        if asks  # still running: the spinner says so
        else Text(clip(outcome, outcome_width)),
    )


def clip(text: str, width: int) -> str:
    """``text`` on one line of ``width`` columns (``one_line``), an ellipsis marking what
    was cut."""
    text = one_line(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def progress_cell(widget: JsonObject, width: int = WIDTHS[2]) -> str:
    """A bar and its percent in ``width`` columns while a call reports one, else its newest
    progress payload (a log line is not one: it shows beside, in the outcome)."""
    if widget["final"]:
        return ""
    percent = widget["percent"]
    if isinstance(percent, int | float):
        return bar(percent, width)
    latest = widget["latest"]
    return "" if latest is None else str(latest)


def bar(percent: float, width: int) -> str:
    """``██░░░ 40%`` in ``width`` columns: the blocks take all but the five ' 100%' needs."""
    blocks = max(1, width - 5)
    filled = max(0, min(blocks, int(percent * blocks / 100)))
    return f"{'█' * filled}{'░' * (blocks - filled)} {percent:.0f}%"
