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
        self._parents: dict[str, str] = {}
        self._gone: set[str] = set()
        """Removed sessions kept as links because sessions they spawned remain."""

    def add(self, child: str, parent: str) -> None:
        """Record that ``parent`` spawned ``child``; a cycle is refused."""
        if child == parent or parent in self.descendants(child):
            raise ValueError(f"session {child!r} cannot descend from itself")
        self._children.setdefault(parent, set()).add(child)
        self._parents[child] = parent
        self._gone.discard(child)

    def remove(self, session: str) -> None:
        """Forget an unloaded session; it stays a link while sessions it spawned remain."""
        self._gone.add(session)
        while session in self._gone and not self._children.get(session):
            self._gone.discard(session)
            self._children.pop(session, None)
            parent = self._parents.pop(session, None)
            if parent is None:
                return
            siblings = self._children[parent]
            siblings.discard(session)
            if not siblings:
                del self._children[parent]
            session = parent

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
