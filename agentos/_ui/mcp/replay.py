"""What lets a streamable HTTP client pick up a dropped stream: the newest events each
stream sent, kept in memory, so a ``GET`` with ``Last-Event-ID`` replays what came after.

The SDK's transport does the rest (the priming event, the ``retry`` field, the replay
request); it asks only for a store. Ids carry a prefix drawn per process, so an id from
before a restart names nothing rather than another stream's event.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict

from mcp.server.streamable_http import EventCallback
from mcp.server.streamable_http import EventMessage
from mcp.server.streamable_http import EventStore
from mcp_types import JSONRPCMessage

EVENTS_KEPT = 2000
"""The events remembered, over every stream: the oldest are forgotten first."""


class RecentEvents(EventStore):
    """An ``EventStore`` holding the newest ``EVENTS_KEPT`` events of all streams."""

    def __init__(self, kept: int = EVENTS_KEPT) -> None:
        if kept < 1:
            raise ValueError(f"kept must be at least 1, not {kept}")
        self._kept = kept
        self._prefix = secrets.token_hex(4)
        self._count = 0
        self._events: OrderedDict[str, tuple[str, JSONRPCMessage | None]] = OrderedDict()

    async def store_event(self, stream_id: str, message: JSONRPCMessage | None) -> str:
        self._count += 1
        event_id = f"{self._prefix}-{self._count}"
        self._events[event_id] = (stream_id, message)
        if len(self._events) > self._kept:
            self._events.popitem(last=False)
        return event_id

    async def replay_events_after(
        self, last_event_id: str, send_callback: EventCallback
    ) -> str | None:
        """Sends the events of ``last_event_id``'s stream that came after it (the priming
        events, which carry no message, are not sent again); None if it is not known."""
        found = self._events.get(last_event_id)
        if found is None:
            return None
        stream_id = found[0]
        after = False
        for event_id, (stream, message) in list(self._events.items()):
            if event_id == last_event_id:
                after = True
            elif after and stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id
