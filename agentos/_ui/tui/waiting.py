"""The calls of a chat that wait for the person's answer: kept as their events arrive, each
new question told once, and ``a`` offered while any waits (``ChatApp`` holds one); and
sending the person's answer."""

from __future__ import annotations

from collections.abc import Callable

from agentos import Answer
from agentos import CallSnapshot
from agentos import Host
from agentos import Question
from agentos import Runtime
from agentos import UnknownCallError


class WaitingCalls:
    """Running calls that ask a question, by call id, in the order they asked."""

    def __init__(self) -> None:
        self.asking: dict[str, CallSnapshot] = {}
        self.moved: set[str] = set()
        """The calls an event told of since the last look: their questions are looked at."""
        self._told: set[tuple[str, float]] = set()

    def look_again(
        self, held: Callable[[str], CallSnapshot | None]
    ) -> tuple[list[CallSnapshot], bool]:
        """Look at the calls that moved (``held``: the runtime's snapshot, None when gone):
        the questions not told yet, and whether which calls ask changed."""
        before = set(self.asking)
        new: list[CallSnapshot] = []
        moved, self.moved = self.moved, set()
        for call_id in moved:
            snapshot = held(call_id)
            if snapshot is None or snapshot.question is None or snapshot.status.is_final:
                self.asking.pop(call_id, None)
                continue
            self.asking[call_id] = snapshot
            told = (call_id, snapshot.question.asked_at)
            if told not in self._told:
                self._told.add(told)
                new.append(snapshot)
        return new, set(self.asking) != before

    def still_asks(self, call_id: str, question: Question) -> bool:
        """Whether ``call_id`` still waits for an answer to ``question``."""
        now = self.asking.get(call_id)
        return now is not None and now.question == question


def send_answer(to: Host | Runtime, session_id: str, call: CallSnapshot, answer: Answer) -> bool:
    """``Host.answer`` (without a host, ``Runtime.answer``): whether the call took it."""
    try:
        if isinstance(to, Host):
            return to.answer(session_id, call.call_id, answer)
        return to.answer(call.call_id, answer, session_id=session_id)
    except UnknownCallError:
        return False
