"""Which call a details pane shows: the same call however the calls list changes.

The pane follows a call by the ids it went by, not by its row: a transcript names a call
by its ``toolu_`` id until the runtime holds it and again once the runtime forgets it,
and the list may be reordered or shortened under an open pane.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from agentos import CallSnapshot
from agentos.board import ChatCall

Held = Callable[[str], CallSnapshot | None]
"""The runtime's snapshot of a call id (None: it does not hold that call)."""


@dataclass(slots=True)
class Followed:
    """A call known by every id it went by, and as the calls list last showed it."""

    last: ChatCall
    ids: set[str] = field(default_factory=set)
    runtime_id: str | None = None

    @classmethod
    def of(cls, call: ChatCall, snapshot: CallSnapshot | None) -> Followed:
        followed = cls(call, {call.call_id})
        followed._saw(call, snapshot)
        return followed

    def find(
        self, calls: Sequence[ChatCall], held: Held
    ) -> tuple[ChatCall, CallSnapshot | None] | None:
        """The call in ``calls`` and its snapshot; None when the list no longer shows it."""
        for call in calls:
            if call.call_id in self.ids:
                snapshot = held(call.call_id)
                self._saw(call, snapshot)
                return call, snapshot
        for call in calls:  # named by an id not seen yet: the runtime's snapshot tells
            snapshot = held(call.call_id)
            if snapshot is not None and {snapshot.call_id, snapshot.provider_call_id} & self.ids:
                self._saw(call, snapshot)
                return call, snapshot
        return None

    def _saw(self, call: ChatCall, snapshot: CallSnapshot | None) -> None:
        self.last = call
        self.ids.add(call.call_id)
        if snapshot is not None:
            self.runtime_id = snapshot.call_id
            self.ids.add(snapshot.call_id)
            if snapshot.provider_call_id is not None:
                self.ids.add(snapshot.provider_call_id)
