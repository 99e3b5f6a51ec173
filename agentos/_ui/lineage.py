"""Whose question a sub-agent's call asks: the session it runs in, then the session that
runs that one as a sub-agent, and so on up, to the first one someone follows (an MCP
client's post, an A2A task)."""

from __future__ import annotations

from collections.abc import Iterator

from agentos import Host
from agentos import UnknownCallError
from agentos import UnknownSessionError


def lineage(host: Host, session_id: str) -> Iterator[str]:
    """``session_id``, then the session that runs it as a sub-agent, and so on up."""
    seen: set[str] = set()
    while session_id not in seen:
        seen.add(session_id)
        yield session_id
        try:
            parent_call = host.get(session_id).parent_call
            if parent_call is None:
                return
            session_id = host.runtime.status(parent_call).session_id
        except (UnknownSessionError, UnknownCallError):
            return
