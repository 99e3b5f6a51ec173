"""The terminal UI's two dialogs: a yes/no question and a call's details."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static


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


class Details(ModalScreen[None]):
    """A call's progress log and its result or error (escape closes)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "close", "Close")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text(self.text), id="details")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)
