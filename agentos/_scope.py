"""Who is asking: the calling session, and how far beyond itself it may see."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Scope(StrEnum):
    """Which calls a caller may see and cancel."""

    OWN = "own"
    """Only the caller's session's calls (the default)."""
    CHILDREN = "children"
    """Also the calls of sessions the caller's session spawned, at any depth."""
    ALL = "all"
    """Every call in the runtime: an explicit opt-in, for operator tools."""


@dataclass(frozen=True, slots=True)
class Caller:
    """The session (and conversation) a capability is invoked from, and its scope."""

    session_id: str
    conversation_id: str | None = None
    scope: Scope = Scope.OWN


class SessionLineage:
    """Which session spawned which: what the ``children`` scope reads."""

    def __init__(self) -> None:
        self._children: dict[str, set[str]] = {}

    def add(self, child: str, parent: str) -> None:
        """Record that ``parent`` spawned ``child``; a cycle is refused."""
        if child == parent or parent in self.descendants(child):
            raise ValueError(f"session {child!r} cannot descend from itself")
        self._children.setdefault(parent, set()).add(child)

    def descendants(self, session: str) -> set[str]:
        """Every session spawned by ``session``, directly or not."""
        found: set[str] = set()
        frontier = [session]
        while frontier:
            for child in self._children.get(frontier.pop(), ()):
                if child not in found:
                    found.add(child)
                    frontier.append(child)
        return found
