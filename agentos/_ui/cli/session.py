"""The async half of ``agentos run`` and ``agentos resume``: one store-backed session, one turn.

``start_session`` and ``resume_session`` open the store and run one turn over it
(``_turn``): a runtime with the agent's tools and a host (``hosted``), the session
begun or brought back, something said (or nothing) and waited for as asked, while
``progress`` shows what the session's calls are doing: a rich live display when
stderr is a terminal, JSON lines of call events otherwise.
On a terminal, ``Words`` prints the model's messages as they arrive, a streaming
reply's words as they come.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TextIO

import anyio
from anyio.abc import ObjectReceiveStream
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

from agentos import AgentConfig, Host, Runtime, Session, UnknownCallError, UnknownSessionError
from agentos._ui.cli.agent import DEMO, Agent, agent_of, choose_model, refuse_unrunnable
from agentos._ui.cli.common import CliError, no_database
from agentos._ui.cli.database import Database
from agentos._ui.durations import human_seconds
from agentos._ui.terminal_text import short_call, visible
from agentos.stores import CallView, SessionStore, resolve_session_id, short_id
from components import CallEvent, CallEventKind, Json, JsonObject

RESUME_NUDGE = "(resumed)"
"""Posted on ``resume`` without ``--message`` when the model has news to hear
(see ``resume_session``)."""


@dataclass(slots=True)
class Outcome:
    """What one ``run`` or ``resume`` came to: the model's messages, and what is left."""

    session_id: str
    messages: list[str]
    """Every message the model wrote during this command, in order."""
    pending: list[JsonObject] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def answer(self) -> str:
        """The model's last message ('' if it wrote none)."""
        return self.messages[-1] if self.messages else ""

    def next_steps(self) -> list[str]:
        """What happens to each pending call, and how to wait for it or end it."""
        running = [call for call in self.pending if call["continuation_token"] is None]
        steps = []
        if running:
            names = ", ".join(str(call["tool_name"]) for call in running)
            one = len(running) == 1
            steps.append(
                f"{len(running)} call{'' if one else 's'} still running ({names}) "
                f"end{'s' if one else ''} with this process: 'agentos resume {self.session_id}' "
                f"tells the model {'it was' if one else 'they were'} lost; run with "
                f"--wait-for-async to wait for {'it' if one else 'them'} instead"
            )
        for call in self.pending:
            if call["continuation_token"] is not None:
                steps.append(
                    f"{call['tool_name']} waits for a person: 'agentos complete "
                    f"{call['continuation_token']} --result JSON', then 'agentos resume "
                    f"{self.session_id}' tells the model"
                )
        return steps

    def to_json(self) -> JsonObject:
        messages: list[Json] = [*self.messages]
        report: JsonObject = {
            "session_id": self.session_id,
            "status": "pending" if self.pending else "done",
            "answer": self.answer,
            "messages": messages,
        }
        if self.pending:
            pending_calls: list[Json] = [*self.pending]
            next_steps: list[Json] = [*self.next_steps()]
            report["pending_calls"] = pending_calls
            report["next_steps"] = next_steps
        return report


async def stored_agent(store: SessionStore, session_id: str) -> Agent:
    """The agent a stored session was started with (``UnknownSessionError`` if none)."""
    stored = await store.load_session(session_id)
    if stored is None:
        raise UnknownSessionError(session_id)
    config = AgentConfig.model_validate(stored.config)
    return agent_of(config, f"the agent of session {session_id}")


@dataclass(slots=True)
class TurnSettings:
    """How one command's turn runs and shows: ``say`` (one line on stderr, such as which
    model answers), the live display or JSON lines (``live``), what to wait for, whether
    to print the model's messages on stdout as they arrive (``words``), how long new
    continuation tokens stay valid. ``opened`` is told the session's id once it is ours
    (an interruption names it)."""

    say: Callable[[str], None]
    live: bool
    wait_for_async: bool
    words: bool = False
    token_ttl: float | None = None
    opened: list[str] = field(default_factory=list)


async def start_session(
    db: Database,
    settings: TurnSettings,
    *,
    prompt: str,
    agent: Agent = DEMO,
    session_id: str | None = None,
) -> Outcome:
    """``agentos run``: a new session (``session_id``, else a fresh id) of ``agent``
    answers ``prompt``."""
    refuse_unrunnable(agent)  # before the store is opened (or made)
    async with await db.open() as store:
        if session_id is not None and await store.load_session(session_id):
            raise CliError(
                f"a session with id {session_id!r} already exists in {db}; "
                f"continue it with 'agentos resume {session_id}'"
            )

        async def begin(host: Host) -> Session:
            return await host.create_session(agent.config, session_id=session_id)

        async def speak(host: Host, session: Session) -> None:
            session.post(prompt)

        return await _turn(store, agent, settings, begin, speak)


async def resume_session(
    db: Database,
    settings: TurnSettings,
    typed: str,
    *,
    message: str | None,
    steal: bool,
    agent: Agent | None,
) -> Outcome:
    """``agentos resume``: the stored session ``typed`` names (its id, or the start of one)
    goes on, with the agent it was started with unless ``agent`` is given.

    It posts ``message`` if given. Otherwise the model is told of calls lost in the
    restart, and of deferred calls completed while no process ran, on its next turn:
    when such news waits and no turn starts by itself, ``RESUME_NUDGE`` is posted to
    grant that turn. ``steal`` takes the session from a live process that holds it (that
    process stops writing it)."""
    if not db.exists():
        raise CliError(no_database(db))
    if agent is not None:
        refuse_unrunnable(agent)  # before the store is opened
    async with await db.open() as store:
        session_id = await resolve_session_id(store, typed)
        chosen = agent or await stored_agent(store, session_id)

        async def begin(host: Host) -> Session:
            return await host.resume(session_id, steal=steal, config=chosen.config)

        async def speak(host: Host, session: Session) -> None:
            if message is not None:
                session.post(message)
            else:
                await host.catch_up(session.session_id, RESUME_NUDGE)

        return await _turn(store, chosen, settings, begin, speak)


@asynccontextmanager
async def hosted(
    store: SessionStore, agent: Agent, which: Callable[[str], None], token_ttl: float | None = None
) -> AsyncIterator[Host]:
    """A host on ``store`` running ``agent``'s tools, with the model its file names
    (``which`` is told which); the model is closed once the host is."""
    provider = choose_model(agent.config, which, source=agent.source)
    try:
        async with (
            agent.runtime() as runtime,
            Host(runtime, provider, store=store, token_ttl=token_ttl) as host,
        ):
            yield host
    finally:
        await provider.aclose()


async def _turn(
    store: SessionStore,
    agent: Agent,
    settings: TurnSettings,
    begin: Callable[[Host], Awaitable[Session]],
    speak: Callable[[Host, Session], Awaitable[None]],
) -> Outcome:
    """One command's turn: ``begin`` gives the session, ``speak`` says what starts its turn;
    then wait as ``settings`` ask, showing the calls meanwhile."""
    which: list[str] = []  # said once the session is ours: a refusal is one line
    async with hosted(store, agent, which.append, settings.token_ttl) as host:
        session = await begin(host)
        settings.opened.append(session.session_id)
        for line in which:
            settings.say(line)
        errors_before, replies_before = len(session.errors), len(session.replies)
        async with progress(host.runtime, session.session_id, live=settings.live) as shown:
            if settings.words:
                Words(session, replies_before, shown).follow()
            await speak(host, session)
            if settings.wait_for_async:
                await session.wait_settled()
            else:
                await session.wait_idle()
        return _outcome(host, session, errors_before, replies_before)


def _outcome(host: Host, session: Session, errors_before: int, replies_before: int) -> Outcome:
    tokens = {record.call_id: record.token for record in host.tokens.pending(session.session_id)}
    pending: list[JsonObject] = [
        {
            "call_id": call.call_id,
            "provider_call_id": call.provider_call_id,
            "tool_name": call.tool_name,
            "status": call.status.value,
            "disposition": call.disposition,
            "continuation_token": tokens.get(call.call_id) if call.deferred else None,
        }
        for call in session.outstanding()
    ]
    return Outcome(
        session.session_id,
        _said_since(session, replies_before),
        pending,
        [str(error) for error in session.errors[errors_before:]],
    )


def _said_since(session: Session, replies_before: int) -> list[str]:
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


# ---------------------------------------------------------------------- progress


class Words:
    """The model's messages on stdout as they arrive: a streaming reply's words as they come
    (in the live display while it forms, when there is one), each message once."""

    def __init__(self, session: Session, replies_before: int, shown: _Display) -> None:
        self._session = session
        self._replies_before = replies_before
        self._printed = 0
        """How many of the messages said since the command began are on screen."""
        self._partial = ""
        """What of the forming reply is on screen (written without the live display)."""
        self._live = shown if isinstance(shown, _LiveDisplay) else None

    def follow(self) -> None:
        self._session.on_change(self._changed)

    def _changed(self) -> None:
        said = _said_since(self._session, self._replies_before)
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

    @staticmethod
    def _write(text: str) -> None:
        if text:  # escaped (visible, character by character): the model cannot drive it
            sys.stdout.write(visible(text))  # looked up now: a live display redirects it
            sys.stdout.flush()


@asynccontextmanager
async def progress(runtime: Runtime, session_id: str, *, live: bool) -> AsyncIterator[_Display]:
    """Show the session's call events while the body runs."""
    show: _Display = _LiveDisplay(runtime) if live else _JsonLines(runtime, sys.stderr)
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

    def __init__(self, runtime: Runtime, console: Console | None = None) -> None:
        super().__init__(runtime)
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
            self._live.console.print(_finished(event), highlight=False, markup=False)
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
        detail = visible(CallView.of(snapshot).progress_text()) or event.status.value
        return f"{detail} · overdue" if snapshot.overdue else detail

    def forming(self, text: str) -> None:
        """The model's reply as it forms, shown above the calls until it is whole."""
        if text != self._forming:
            self._forming = text
            self._live.refresh()

    def render(self) -> RenderableType:
        rows: list[RenderableType] = [Text(visible(self._forming))] if self._forming else []
        calls = list(self._rows.values())  # one step: the loop may change the rows meanwhile
        if not calls and not self._forming:
            return Spinner("dots", text="waiting for the model")
        return Group(*rows, *calls)

    def __enter__(self) -> None:
        self._live.start()

    def __exit__(self, *exc_info: object) -> None:
        self._live.stop()


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
