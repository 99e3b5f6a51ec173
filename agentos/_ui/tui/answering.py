"""The terminal UI's answer screen: a running call's question, a line per field of its form
(or the page it asks the person to open, which it never opens), and Accept, Decline, Cancel.

What is typed is read per the form's schema (``form.py``); a field that is wrong is said under
it and nothing is sent. The screen gives back the ``Answer`` (None: answer later), and says so
when the call stops asking meanwhile (answered elsewhere, or ended).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button
from textual.widgets import Footer
from textual.widgets import Input
from textual.widgets import Static

from agentos import Answer
from agentos import AnswerAction
from agentos import Question
from agentos._ui.terminal_text import visible
from agentos._ui.tui.form import Field
from agentos._ui.tui.form import FormError
from agentos._ui.tui.form import asked_by
from agentos._ui.tui.form import form_fields
from agentos._ui.tui.form import read_answer

NO_LONGER_ASKED = "No longer asked (answered elsewhere, or the call ended): escape closes."


class Answering(ModalScreen[Answer | None]):
    """One question, to answer now (Accept with the form's values, Decline, Cancel) or later
    (escape). ``still_asked`` says whether the call still waits for this answer."""

    DEFAULT_CSS = """
    Answering { background: $background 60%; align: center bottom; }
    #answer-box {
        height: auto; max-height: 1fr; border: round $warning; padding: 0 1; background: $surface;
    }
    #answer-box .field { height: auto; }
    #answer-box #answer-question { margin-bottom: 1; }
    #answer-box .label { width: 20; text-style: bold; }
    #answer-box Input { width: 1fr; }
    #answer-box .about { color: $text-muted; padding-left: 20; }
    #answer-box .problem { color: $error; padding-left: 20; display: none; }
    #answer-box #answer-problem { padding-left: 0; margin-top: 1; }
    #answer-box .problem.shown { display: block; }
    #answer-buttons { height: auto; margin-top: 1; }
    #answer-buttons Button { margin-right: 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "later", "Answer later"),
    ]

    def __init__(self, question: Question, tool_name: str, still_asked: Callable[[], bool]) -> None:
        super().__init__()
        self.question = question
        self.tool_name = tool_name
        self.still_asked = still_asked
        try:
            self.fields: list[Field] = form_fields(question.form)
            self.unfillable: str | None = None
        except FormError as error:
            self.fields, self.unfillable = [], str(error)

    def compose(self) -> ComposeResult:
        question = self.question
        with VerticalScroll(id="answer-box"):
            said = Text(visible(question.message), "bold")
            said.append(f"\n{visible(asked_by(question.source, self.tool_name))}", "dim")
            yield Static(said, id="answer-question")
            if question.url is not None:
                page = Text("Open this page yourself (agentos does not open it):\n", "dim")
                page.append(visible(question.url))
                yield Static(page, id="answer-url")
            for n, each in enumerate(self.fields):
                with Horizontal(classes="field"):
                    label = f"{visible(each.label)}{' *' if each.required else ''}"
                    yield Static(Text(label), classes="label")
                    yield Input(each.default_text, each.hint, id=f"answer-field-{n}", compact=True)
                if each.description:
                    yield Static(Text(visible(each.description)), classes="about")
                yield Static(id=f"answer-problem-{n}", classes="problem")
            if any(each.required for each in self.fields):
                yield Static(Text("* required", "dim"))
            yield Static(id="answer-problem", classes="problem")
            with Horizontal(id="answer-buttons"):
                yield Button("Accept", id="accept", variant="primary", compact=True)
                yield Button("Decline", id="decline", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#answer-box").border_title = f"{visible(self.tool_name)} asks"
        if self.unfillable is not None:
            self._say(f"This form cannot be filled in here: {self.unfillable}. Decline or cancel.")
            self.query_one("#accept", Button).disabled = True
        target = self.query(Input).first() if self.fields else self.query_one("#decline")
        target.focus()

    def refresh_question(self) -> None:
        """Once the call stops asking, say so, and only closing is left."""
        if not self.still_asked() and not self.query_one("#accept", Button).disabled:
            self._say(NO_LONGER_ASKED)
            for button in self.query(Button):
                button.disabled = True

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter goes to the next field; on the last it accepts."""
        event.stop()
        inputs = list(self.query(Input))
        at = inputs.index(event.input)
        if at + 1 < len(inputs):
            inputs[at + 1].focus()
        else:
            self.accept()

    def on_input_changed(self, event: Input.Changed) -> None:
        """What was said wrong of a field goes once it is edited."""
        if event.input.id is not None:
            problem = event.input.id.replace("answer-field-", "#answer-problem-")
            self.query_one(problem, Static).remove_class("shown")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "accept":
            self.accept()
        elif event.button.id == "decline":
            self.dismiss(Answer(AnswerAction.DECLINE))
        else:
            self.dismiss(Answer(AnswerAction.CANCEL))

    def accept(self) -> None:
        """Send the form's values typed per its schema, or say under each wrong field what is
        wrong and send nothing."""
        if self.query_one("#accept", Button).disabled:
            return
        typed = {
            each.name: self.query_one(f"#answer-field-{n}", Input).value
            for n, each in enumerate(self.fields)
        }
        content, problems = read_answer(self.fields, typed)
        for n, each in enumerate(self.fields):
            shown = self.query_one(f"#answer-problem-{n}", Static)
            shown.update(Text(visible(problems.get(each.name, ""))))
            shown.set_class(each.name in problems, "shown")
        if problems:
            count = len(problems)
            self._say(f"Not sent: {count} field{'' if count == 1 else 's'} to put right.")
            first = next(n for n, each in enumerate(self.fields) if each.name in problems)
            self.query_one(f"#answer-field-{first}", Input).focus()
            return
        form = self.question.form
        self.dismiss(Answer(AnswerAction.ACCEPT, None if form is None else content))

    def action_later(self) -> None:
        self.dismiss(None)

    def _say(self, words: str) -> None:
        problem = self.query_one("#answer-problem", Static)
        problem.update(Text(words))
        problem.add_class("shown")
