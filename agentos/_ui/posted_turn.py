"""A message posted to a session, and the turn it starts: its call events heard from before
the post on, and which calls are the turn's (those it started), so a client that gives up on
the turn (``agentos mcp``'s cancelled request, ``agentos a2a``'s cancelled task) stops them
and no other."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from agentos import CallEvent
from agentos import CallEventKind
from agentos import Host
from agentos import Session
from agentos import UnknownCallError

EVENTS_BUFFERED = 1000
"""Call events a turn holds for its follower before it drops the newest."""
SHOWN_CHARS = 500
"""The longest progress payload or error a line about a call quotes."""


@dataclass(slots=True)
class PostedTurn:
    """A posted message's turn."""

    host: Host
    session: Session
    events: MemoryObjectReceiveStream[CallEvent]
    stop: Callable[[], None]
    """Stop hearing the session's call events (``events`` is closed)."""
    asked_before: int
    """The model requests the session had made before the post: the calls of later ones
    are this turn's (not another turn's of the same session, nor one a person started)."""
    names: dict[str, str] = field(default_factory=dict)
    """Each call's tool name, once told."""

    @classmethod
    def posted(cls, host: Host, session: Session, message: str) -> PostedTurn:
        """Post ``message``; an ended session or an empty message raises as ``post`` does
        (``AgentOSError``, ``ValueError``)."""
        send, receive = anyio.create_memory_object_stream[CallEvent](EVENTS_BUFFERED)

        def heard(event: CallEvent) -> None:
            with contextlib.suppress(anyio.WouldBlock):  # a flood: the newest are dropped
                send.send_nowait(event)

        unhear = host.runtime.on_call_events(session.session_id, heard)

        def stop() -> None:
            unhear()
            send.close()
            receive.close()  # what was heard and not read is let go

        asked_before = session.requests
        try:
            session.post(message)
        except BaseException:
            stop()
            raise
        return cls(host, session, receive, stop, asked_before)

    def cancel_calls(self, reason: str) -> None:
        """Cancel the calls this turn started that still run."""
        for call in self.session.calls_after(self.asked_before):
            if call.is_final:
                continue
            try:
                self.host.runtime.cancel(call.call_id, reason)
            except UnknownCallError:
                continue

    def said(self, event: CallEvent) -> str:
        """What ``event`` tells of its call, as a line: ``tool (id) kind: detail``."""
        name = self.names.get(event.call_id)
        if name is None:
            try:
                name = self.names[event.call_id] = self.host.runtime.status(event.call_id).tool_name
            except UnknownCallError:
                name = "a call"
        said = f"{name} ({event.call_id}) {event.kind.value}"
        if event.kind is CallEventKind.PROGRESSED and event.progress is not None:
            shown = json.dumps(event.progress.payload, ensure_ascii=False)
            said += f": {shown[:SHOWN_CHARS]}"
        elif event.error is not None:
            said += f": {event.error.message[:SHOWN_CHARS]}"
        return said
