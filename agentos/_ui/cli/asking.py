"""How ``agentos run`` (and ``resume``, ``say``) take a call's question to the person: on the
terminal when stdin and stdout are one (``TerminalAsker``), else nobody is asked and the
question is declined, saying why (``nobody_here``).

On the terminal it prints the question and who asks, then ``Answer? [y/N/c]``: ``y`` prompts
each field of the form (typed per its schema: ``_ui/tui/form.py``, as the terminal UI reads
it; a wrong value is said and asked again) and accepts, ``n`` or an empty line declines, ``c``
cancels. One question at a time; what the command shows meanwhile waits (``Held``), so the
spinners cannot garble the prompt. The lines typed are read without blocking the event loop,
so a call that stops asking ends its prompt.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager

import anyio

from agentos import Answer
from agentos import AnswerAction
from agentos import Asked
from agentos._ui.cli.call_text import asking_text
from agentos._ui.terminal_text import one_line
from agentos._ui.terminal_text import visible
from agentos._ui.tui.form import Field
from agentos._ui.tui.form import FieldProblem
from agentos._ui.tui.form import FormError
from agentos._ui.tui.form import asked_by
from agentos._ui.tui.form import form_fields
from agentos.stores import short_id
from components import Json

NOBODY_HERE = (
    "nobody to ask: agentos asks a person on a terminal, and this command's stdin or stdout "
    "is not one ('agentos chat' and 'agentos serve' can ask too)"
)
INPUT_ENDED = "the terminal's input ended"


async def nobody_here(asked: Asked) -> Answer:
    """The hook of a command with no terminal to ask on: declined, saying why."""
    return Answer(AnswerAction.DECLINE, reason=NOBODY_HERE)


class Held:
    """What a command shows on the terminal, held back while a person answers there: each
    ``show`` draws now, or once the answer is in; a live display pauses meanwhile."""

    def __init__(self) -> None:
        self._held: list[Callable[[], None]] | None = None
        self._pauses: list[tuple[Callable[[], None], Callable[[], None]]] = []

    def show(self, draw: Callable[[], None]) -> None:
        if self._held is None:
            draw()
        else:
            self._held.append(draw)

    def pausing(self, pause: Callable[[], None], resume: Callable[[], None]) -> None:
        """Pause a live display while a question is asked (``resume`` after)."""
        self._pauses.append((pause, resume))

    @property
    def holding(self) -> bool:
        return self._held is not None

    @contextmanager
    def held(self) -> Iterator[None]:
        self._held = []
        for pause, _ in self._pauses:
            pause()
        try:
            yield
        finally:
            held, self._held = self._held, None
            for draw in held:
                draw()
            for _, resume in self._pauses:
                resume()


class Lines:
    """The lines typed on a terminal (a file descriptor), read as they come without blocking
    the event loop; None once its input ends."""

    def __init__(self, descriptor: int) -> None:
        self._descriptor = descriptor
        self._buffer = b""
        self._ended = False

    async def line(self) -> str | None:
        while b"\n" not in self._buffer and not self._ended:
            await anyio.wait_readable(self._descriptor)
            chunk = os.read(self._descriptor, 4096)
            self._ended = not chunk
            self._buffer += chunk
        if b"\n" not in self._buffer:
            return None
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode(errors="replace").rstrip("\r")


class TerminalAsker:
    """The ``ask_person`` hook of a command run on a terminal: it asks there, one question at
    a time; ``asked`` are the calls that asked and ``open`` the questions not done with (the
    command waits for both)."""

    def __init__(self, lines: Lines | None = None) -> None:
        self.held = Held()
        self.asked: set[str] = set()
        self.open = 0
        """How many questions are being asked or wait their turn."""
        self._answered: list[Callable[[], object]] = []
        self._lines = lines or Lines(sys.stdin.fileno())
        self._one_at_a_time = anyio.Lock()

    def on_answered(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call ``callback`` once each question is done with; returns what stops it."""
        self._answered.append(callback)
        return lambda: self._answered.remove(callback)

    async def __call__(self, asked: Asked) -> Answer:
        self.asked.add(asked.call_id)
        self.open += 1
        try:
            async with self._one_at_a_time:
                with self.held.held():
                    try:
                        return await self._ask(asked)
                    except anyio.get_cancelled_exc_class():
                        _write("\n  (no longer asked: the call ended)\n")
                        raise
        finally:
            self.open -= 1
            for callback in list(self._answered):
                callback()

    async def _ask(self, asked: Asked) -> Answer:
        question = asked.question
        call = f"{one_line(asked.tool_name)} (call {short_id(asked.call_id)})"
        _write(
            f"\n{call} {asking_text(question)}\n  {asked_by(question.source, asked.tool_name)}\n"
        )
        if question.url is not None:
            _write(f"  open this page yourself (agentos does not open it): {question.url}\n")
        try:
            fields = form_fields(question.form)
        except FormError as error:
            _write(f"  its form cannot be filled in here: {error}\n")
            return await self._answer("Answer? [N/c] (n or enter: decline, c: cancel) ", "nc")
        doing = "fill in the form and send it" if fields else "accept"
        choice = await self._answer(
            f"Answer? [y/N/c] (y: {doing}, n or enter: decline, c: cancel) ", "ync"
        )
        if choice.action is not AnswerAction.ACCEPT:
            return choice
        content: dict[str, Json] = {}
        for field in fields:
            value = await self._fill(field)
            if isinstance(value, Answer):
                return value
            if value is not None:
                content[field.name] = value
        _write("  sent\n")
        return Answer(AnswerAction.ACCEPT, None if question.form is None else content)

    async def _fill(self, field: Field) -> Json | Answer:
        """One field's value (None: left out), asked again until it fits; a cancel once the
        input ends. An empty line takes the default."""
        required = " *" if field.required else ""
        default = f" [{field.default_text}]" if field.default_text else ""
        prompt = f"  {one_line(field.label)}{required} ({field.hint}){default}: "
        while True:
            typed = await self._line(prompt)
            if typed is None:
                return Answer(AnswerAction.CANCEL, reason=INPUT_ENDED)
            try:
                return field.read(typed or field.default_text)
            except FieldProblem as problem:
                _write(f"    {problem}\n")

    async def _answer(self, prompt: str, allowed: str) -> Answer:
        """Ask ``prompt`` until one of ``allowed`` (y, n, c) comes: accept (the fields come
        next), decline (also an empty line) or cancel."""
        while True:
            typed = await self._line(prompt)
            if typed is None:
                return Answer(AnswerAction.CANCEL, reason=INPUT_ENDED)
            said = typed.strip().lower() or "n"
            chosen = next((c for c in allowed if said in (c, CHOICES[c][0])), None)
            if chosen is not None:
                _, action, done = CHOICES[chosen]
                if done:
                    _write(f"  {done}\n")
                return Answer(action)
            _write(f"    answer {', '.join(allowed[:-1])} or {allowed[-1]}\n")

    async def _line(self, prompt: str) -> str | None:
        _write(prompt)
        return await self._lines.line()


CHOICES = {
    "y": ("yes", AnswerAction.ACCEPT, ""),
    "n": ("no", AnswerAction.DECLINE, "declined"),
    "c": ("cancel", AnswerAction.CANCEL, "cancelled"),
}
"""What ``Answer?`` takes: a letter or its word, the action it is, and what is said of it."""


def _write(text: str) -> None:
    """On the terminal (stdout, looked up now), what a tool or server wrote escaped."""
    sys.stdout.write(visible(text))
    sys.stdout.flush()
