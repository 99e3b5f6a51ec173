"""What ``agentos run``, ``resume`` and ``say`` show while a turn runs: ``progress``, the
session's calls as a rich live display when stderr is a terminal, JSON lines of call
events otherwise; and ``Words``, the model's messages on stdout as they arrive, a
streaming reply's words as they come."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TextIO

import anyio
from anyio.abc import ObjectReceiveStream
from rich.console import Console
from rich.console import Group
from rich.console import RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

from agentos import Runtime
from agentos import Session
from agentos import UnknownCallError
from agentos._ui.cli.asking import Held
from agentos._ui.cli.call_text import asking_text
from agentos._ui.durations import human_seconds
from agentos._ui.terminal_text import short_call
from agentos._ui.terminal_text import visible
from agentos.stores import CallView
from agentos.stores import short_id
from components import CallEvent
from components import CallEventKind
from components import JsonObject


def said_since(session: Session, replies_before: int) -> list[str]:
    """The model's messages since the command began, as the chat shows them to a person
    (looks and the turns a timer prompted are the model's business)."""
    board = session.board
    if board is None:
        numbers = [n for n, m in enumerate(session.history, 1) if m["role"] == "assistant"]
        since = set(numbers[replies_before:])
    else:
        agent_nodes = [n for n in board.nodes.values() if n.author == "agent"]
        since = {n.display_id for n in agent_nodes[replies_before:]}
    return [e.text for e in session.chat if e.role == "agent" and e.text and e.node_id in since]


class Words:
    """The model's messages on stdout as they arrive: a streaming reply's words as they come
    (in the live display while it forms, when there is one), each message once."""

    def __init__(
        self, session: Session, replies_before: int, shown: _Display, held: Held | None = None
    ) -> None:
        """``held``: a question's prompt holds the words back while it is answered."""
        self._session = session
        self._held = held
        self._replies_before = replies_before
        self._printed = 0
        """How many of the messages said since the command began are on screen."""
        self._partial = ""
        """What of the forming reply is on screen (written without the live display)."""
        self._live = shown if isinstance(shown, _LiveDisplay) else None

    def follow(self) -> None:
        self._session.on_change(self._changed)

    def _changed(self) -> None:
        said = said_since(self._session, self._replies_before)
        for message in said[self._printed :]:
            if self._partial and message.startswith(self._partial):
                self._write(message[len(self._partial) :] + "\n")
            else:
                self._write("\n" if self._partial else "")
                self._begin()
                self._write(message + "\n")
            self._partial = ""
            self._printed += 1
        forming = self._session.streaming
        # A board's turns that the chat does not show (looks, timers) stream too: its
        # messages are printed once whole.
        text = "" if forming is None or self._session.board is not None else forming.text
        if self._live is not None:
            self._live.forming(text)
            return
        if not text:
            return
        if self._partial and text.startswith(self._partial):
            self._write(text[len(self._partial) :])
        elif self._partial:  # the reply started over (its stream broke and was asked again)
            self._write(f"\n{text}")
        else:
            self._begin()
            self._write(text)
        self._partial = text

    def _begin(self) -> None:
        """A blank line between two messages."""
        if self._printed:
            self._write("\n")

    def _write(self, text: str) -> None:
        if not text:
            return

        def write() -> None:  # escaped (visible, character by character): it drives nothing
            sys.stdout.write(visible(text))  # looked up now: a live display redirects it
            sys.stdout.flush()

        if self._held is None:
            write()
        else:
            self._held.show(write)


@asynccontextmanager
async def progress(
    runtime: Runtime, session_id: str, *, live: bool, held: Held | None = None
) -> AsyncIterator[_Display]:
    """Show the session's call events while the body runs (the live display paused, and
    what it prints held back, while ``held`` holds: a question is asked on the terminal)."""
    show: _Display = _LiveDisplay(runtime, held=held) if live else _JsonLines(runtime, sys.stderr)
    async with runtime.subscribe(session_id) as events:
        with show:
            async with anyio.create_task_group() as group:
                group.start_soon(_pump, events, show)
                try:
                    yield show
                finally:
                    group.cancel_scope.cancel()
            while True:  # what arrived after the last look
                try:
                    show.event(events.receive_nowait())
                except (anyio.WouldBlock, anyio.EndOfStream):
                    break


async def _pump(events: ObjectReceiveStream[CallEvent], show: _Display) -> None:
    async for event in events:
        show.event(event)


class _Display:
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._names: dict[str, str] = {}

    def tool(self, call_id: str) -> str:
        if call_id not in self._names:
            try:
                self._names[call_id] = self._runtime.status(call_id).tool_name
            except UnknownCallError:
                return "?"
        return self._names[call_id]

    def event(self, event: CallEvent) -> None:
        raise NotImplementedError

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc_info: object) -> None:
        return None


class _JsonLines(_Display):
    """One JSON object per call event, for programs reading stderr."""

    def __init__(self, runtime: Runtime, out: TextIO) -> None:
        super().__init__(runtime)
        self._out = out

    def event(self, event: CallEvent) -> None:
        line: JsonObject = {
            "event": event.kind.value,
            "call_id": event.call_id,
            "tool_name": self.tool(event.call_id),
            "status": event.status.value,
        }
        if event.disposition is not None:
            line["disposition"] = event.disposition
        if event.progress is not None:
            line["kind"] = event.progress.kind.value  # partial, log, output, question, ...
            line["progress"] = event.progress.payload
        if event.error is not None:
            line["error"] = event.error.message
        self._out.write(json.dumps(line) + "\n")
        self._out.flush()


class _LiveDisplay(_Display):
    """A spinner per running call with what its view says (``CallView.progress_text``: the
    newest percent and the newest log line apart, ``crawl 09a12183  40% · fetched page 4``);
    once it is final, one line that stays (``✓ fetch_calendar(Jane) 2.1 s``), printed above
    the spinners."""

    def __init__(
        self, runtime: Runtime, console: Console | None = None, held: Held | None = None
    ) -> None:
        super().__init__(runtime)
        self._held = held or Held()
        self._held.pausing(self._pause, self._resume)
        self._open = False
        """Between ``__enter__`` and ``__exit__``: a pause ends by starting it again."""
        self._rows: dict[str, Spinner | Text] = {}
        self._details: dict[str, str] = {}
        """Each running call's line as last read: kept should the runtime forget the call."""
        self._forming = ""
        self._live = Live(
            console=console or Console(stderr=True),
            get_renderable=self.render,
            transient=True,
            refresh_per_second=10,
        )

    def event(self, event: CallEvent) -> None:
        label = f"{self.tool(event.call_id)} {short_id(event.call_id)}"
        if event.status.is_final:
            self._rows.pop(event.call_id, None)
            self._details.pop(event.call_id, None)
            line = _finished(event)
            self._held.show(lambda: self._live.console.print(line, highlight=False, markup=False))
            return
        detail = self._details[event.call_id] = self._detail(event)
        row = self._rows.get(event.call_id)
        if isinstance(row, Spinner):
            row.update(text=_line(f"{label}  {detail}"))
        else:
            self._rows[event.call_id] = Spinner("dots", text=_line(f"{label}  {detail}"))

    def _detail(self, event: CallEvent) -> str:
        """The call's newest progress and log line as its view says (a log line, a heartbeat
        or an overdue event never blanks a percent), else its status; ``overdue`` once it
        ran past its expected time."""
        try:
            snapshot = self._runtime.status(event.call_id)
        except UnknownCallError:
            return self._details.get(event.call_id, event.status.value)
        view = CallView.of(snapshot)
        detail = visible(view.progress_text()) or event.status.value
        if view.question is not None:
            detail = asking_text(view.question)
        return f"{detail} · overdue" if snapshot.overdue else detail

    def forming(self, text: str) -> None:
        """The model's reply as it forms, shown above the calls until it is whole."""
        if text != self._forming:
            self._forming = text
            if not self._held.holding:  # a stopped display draws nothing
                self._live.refresh()

    def render(self) -> RenderableType:
        rows: list[RenderableType] = [Text(visible(self._forming))] if self._forming else []
        calls = list(self._rows.values())  # one step: the loop may change the rows meanwhile
        if not calls and not self._forming:
            return Spinner("dots", text="waiting for the model")
        return Group(*rows, *calls)

    def __enter__(self) -> None:
        self._open = True
        if not self._held.holding:
            self._live.start()

    def __exit__(self, *exc_info: object) -> None:
        self._open = False
        self._live.stop()

    def _pause(self) -> None:
        self._live.stop()  # transient: its spinners go, the prompt is written below

    def _resume(self) -> None:
        if self._open:
            self._live.start()


def _finished(event: CallEvent) -> Text:
    """``✓ tool(arguments) 2.1 s`` (``1 min 40 s``: ``human_seconds``, as every front end
    says it), or ``✗ tool(arguments) failed: why``."""
    snapshot = event.snapshot
    signature = (
        "call()"
        if snapshot is None
        else short_call(snapshot.tool_name, snapshot.tool_input, width=60)
    )
    took = ""
    if snapshot is not None and snapshot.started_at is not None and snapshot.completed_at:
        took = f" {human_seconds(max(0.0, snapshot.completed_at - snapshot.started_at))}"
    if event.kind is CallEventKind.COMPLETED:
        return _line(f"✓ {visible(signature)}{took}")
    why = f": {event.error.message}" if event.error is not None else ""
    return _line(f"✗ {visible(signature)} {event.status.value}{visible(why)}{took}")


def _line(text: str) -> Text:
    return Text(text, no_wrap=True, overflow="ellipsis")
