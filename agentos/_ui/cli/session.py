"""The async half of ``agentos run`` and ``agentos resume``: one store-backed session, one turn.

``start_session`` and ``resume_session`` open the store and run one turn over it
(``_turn``): a runtime with the agent's tools and a host (``hosted``), the session
begun or brought back, something said (or nothing) and waited for as asked, while
``progress`` shows what the session's calls are doing and ``Words`` the model's
messages (``turn_display``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from dataclasses import field

import anyio

from agentos import AgentConfig
from agentos import Answer
from agentos import Asked
from agentos import Host
from agentos import Session
from agentos import UnknownSessionError
from agentos._ui.cli.agent import DEMO
from agentos._ui.cli.agent import Agent
from agentos._ui.cli.agent import agent_of
from agentos._ui.cli.agent import choose_model
from agentos._ui.cli.agent import refuse_unrunnable
from agentos._ui.cli.asking import TerminalAsker
from agentos._ui.cli.asking import nobody_here
from agentos._ui.cli.common import CliError
from agentos._ui.cli.common import no_database
from agentos._ui.cli.database import Database
from agentos._ui.cli.turn_display import Words
from agentos._ui.cli.turn_display import progress
from agentos._ui.cli.turn_display import said_since
from agentos._ui.terminal_text import tally
from agentos.stores import SessionStore
from agentos.stores import resolve_session_id
from components import Json
from components import JsonObject

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
            names = tally(str(call["tool_name"]) for call in running)
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
    asks: bool = False
    """Whether a call's question is asked on the terminal (stdin and stdout are one); else
    it is declined, saying nobody can be asked."""


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


AskPerson = Callable[[Asked], Awaitable[Answer | None]]
"""Who answers the questions calls ask a person (``Host(ask_person=...)``)."""


@asynccontextmanager
async def hosted(
    store: SessionStore,
    agent: Agent,
    which: Callable[[str], None],
    token_ttl: float | None = None,
    ask_person: AskPerson | None = None,
) -> AsyncIterator[Host]:
    """A host on ``store`` running ``agent``'s tools, with the model its file names
    (``which`` is told which) and ``ask_person`` answering the calls' questions; the model
    is closed once the host is."""
    provider = choose_model(agent.config, which, source=agent.source)
    try:
        async with (
            agent.runtime() as runtime,
            Host(
                runtime, provider, store=store, token_ttl=token_ttl, ask_person=ask_person
            ) as host,
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
    asker = TerminalAsker() if settings.asks else None
    held = None if asker is None else asker.held
    hosting = hosted(store, agent, which.append, settings.token_ttl, asker or nobody_here)
    async with hosting as host:
        session = await begin(host)
        settings.opened.append(session.session_id)
        for line in which:
            settings.say(line)
        errors_before, replies_before = len(session.errors), len(session.replies)
        live = settings.live
        async with progress(host.runtime, session.session_id, live=live, held=held) as shown:
            if settings.words:
                Words(session, replies_before, shown, held).follow()
            await speak(host, session)
            if settings.wait_for_async:
                await session.wait_settled()
            else:
                await session.wait_idle()
            if asker is not None:
                await _hear_of_answered(session, asker)
        return _outcome(host, session, errors_before, replies_before)


async def _hear_of_answered(session: Session, asker: TerminalAsker) -> None:
    """On while a question is asked on the terminal, and until the model has heard how each
    call that asked the person here ended: they answered it so that it goes on, and the
    process ending would end it."""
    while True:
        changed = anyio.Event()
        stops = [session.on_change(changed.set), asker.on_answered(changed.set)]
        try:  # listening before looking: no change goes unseen
            await session.wait_idle()
            waiting = [call for call in session.outstanding() if call.call_id in asker.asked]
            answering = asker.open or (waiting and not session.external_only)
            if session.ended or not answering:
                return
            await changed.wait()
        finally:
            for stop in stops:
                stop()


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
        said_since(session, replies_before),
        pending,
        [str(error) for error in session.errors[errors_before:]],
    )
