"""What a session's chat history says about tool calls: the source of ``orphaned``.

The runtime forgets calls (retention, a restart); the history does not. A call
the history mentions that the runtime no longer holds is reported
``orphaned``, unless the history itself holds the call's final result. The
session layer provides a ``HistoryLookup``; ``MessageHistory`` reads
Anthropic Messages-format histories.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any
from typing import Protocol

from agentos._model.messages import content_value
from agentos._turns.transcript import LOST_RESULT
from agentos._turns.transcript import read_outcome
from agentos._turns.transcript import read_placeholder
from components import STATUS_TEXT
from components import CallStatus
from components import Json
from components import Packed
from components import Sealed
from components import opened
from components import pack
from components import quick_init
from components import seal
from components import unpack


@quick_init
@dataclass(frozen=True, slots=True)
class HistoryCall:
    """A tool call as the history records it.

    ``status`` is ``completed`` or ``failed`` when the history holds the
    call's final result (``result``), and None when it does not.
    """

    call_id: str
    tool_name: str
    internal_id: str | None = None
    status: CallStatus | None = None
    result: Json = None

    @property
    def has_result(self) -> bool:
        return self.status is not None


class HistoryLookup(Protocol):
    def find_call(self, session_id: str, call_id: str) -> HistoryCall | None:
        """The call the session's history knows by ``call_id`` (either id), or None."""
        ...


class NoHistory:
    """A lookup for hosts that keep no history: nothing is ever orphaned."""

    def find_call(self, session_id: str, call_id: str) -> HistoryCall | None:
        return None


class MessageHistory:
    """Per-session indexes over Anthropic Messages-format histories.

    ``load`` (re)reads a session's messages: each ``tool_use`` block is a
    call; a ``tool_result`` for it is its final result unless it is an agentos
    placeholder. ``record`` adds or updates one call directly. Each call is kept as a
    flat tuple (``_Kept``) the collector does not track, and built again when asked for.
    With ``seal``, a call whose end is recorded is kept apart from those still going, and
    every ``SEALED`` of them are compressed together (a session's index a tenth of the
    size): a look-up that misses the calls still going opens them, newest first.
    """

    def __init__(self, *, seal: bool = False) -> None:
        self._sessions: dict[str, _Index] = {}
        self._seal = seal

    def load(self, session_id: str, messages: Iterable[Mapping[str, Any]]) -> None:
        calls: dict[str, HistoryCall] = {}
        for message in messages:
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if not isinstance(block, Mapping):
                    continue
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    calls[block["id"]] = HistoryCall(block["id"], str(block.get("name", "")))
                elif block.get("type") == "tool_result":
                    self._apply_result(calls, block)
                elif block.get("type") == "text":
                    self._apply_outcome(calls, str(block.get("text", "")))
        self._sessions.pop(session_id, None)
        for call in calls.values():
            self.record(session_id, call)

    def record(self, session_id: str, call: HistoryCall) -> None:
        index = self._sessions.get(session_id)
        if index is None:
            index = self._sessions[session_id] = _Index()
        kept = _keep(call)
        if self._seal and call.status is not None:
            index.end(kept)
            return
        by_id = index.by_id
        by_id[call.call_id] = kept
        if call.internal_id is not None:
            by_id[call.internal_id] = kept

    def find_call(self, session_id: str, call_id: str) -> HistoryCall | None:
        index = self._sessions.get(session_id)
        kept = None if index is None else index.find(call_id)
        return None if kept is None else _built(kept)

    def calls(self, session_id: str) -> list[HistoryCall]:
        """Every call of the session once, in the order the history made them (sealed: those
        whose end is recorded first, in the order they ended)."""
        index = self._sessions.get(session_id)
        if index is None:
            return []
        unique = {kept[0]: kept for kept in index.every()}
        return [_built(kept) for kept in unique.values()]

    @staticmethod
    def _apply_result(calls: dict[str, HistoryCall], block: Mapping[str, Any]) -> None:
        call = calls.get(str(block.get("tool_use_id")))
        if call is None:
            return
        held = read_placeholder(block.get("content"))
        if held is not None:
            internal = held.get("internal_id", held.get("tool_call_id"))
            calls[call.call_id] = HistoryCall(
                call.call_id, call.tool_name, internal if isinstance(internal, str) else None
            )
            return
        value = content_value(block.get("content"))
        status = CallStatus.COMPLETED
        if block.get("is_error") and value == LOST_RESULT:  # it did not outlive a restart
            status = CallStatus.ORPHANED
        elif block.get("is_error"):
            cancelled = isinstance(value, str) and value.startswith(CallStatus.CANCELLED.value)
            status = CallStatus.CANCELLED if cancelled else CallStatus.FAILED
        calls[call.call_id] = HistoryCall(
            call.call_id, call.tool_name, call.internal_id, status, value
        )
        if isinstance(value, dict) and not block.get("is_error"):
            _apply_capability(calls, call.tool_name, value)

    @staticmethod
    def _apply_outcome(calls: dict[str, HistoryCall], text: str) -> None:
        """A late outcome the session delivered as text (see ``outcome_text``)."""
        found = read_outcome(text)
        if found is None or found.tool_use_id not in calls:
            return
        call = calls[found.tool_use_id]
        calls[call.call_id] = HistoryCall(
            call.call_id, call.tool_name, call.internal_id, found.status, found.value
        )


_Kept = tuple[str, str, str | None, str | None, Packed]
"""A ``HistoryCall`` as kept: its ids, its tool, its status's value, its result packed."""

SEALED = 32
"""Calls whose end is recorded, compressed together once there are this many."""


class _Index:
    """One session's calls: by either id, and (sealed) those that ended, newest last."""

    __slots__ = ("by_id", "ended", "sealed")

    def __init__(self) -> None:
        self.by_id: dict[str, _Kept] = {}
        self.ended: list[_Kept] = []
        self.sealed: list[Sealed] = []

    def end(self, kept: _Kept) -> None:
        """A call whose end is recorded: no longer found among those still going."""
        call_id, _, internal_id, _, _ = kept
        self.by_id.pop(call_id, None)
        if internal_id is not None:
            self.by_id.pop(internal_id, None)
        ended = self.ended
        ended.append(kept)
        if len(ended) == SEALED:
            self.sealed.append(seal(tuple(ended)))
            self.ended = []

    def find(self, call_id: str) -> _Kept | None:
        kept = self.by_id.get(call_id)
        if kept is not None or not (self.ended or self.sealed):
            return kept
        ended: Sequence[_Kept]
        for ended in chain((self.ended,), map(opened, reversed(self.sealed))):
            for each in reversed(ended):
                if call_id == each[0] or call_id == each[2]:
                    return each
        return None

    def every(self) -> Iterator[_Kept]:
        """Every call as kept, those that ended first (a call still going was recorded after
        any end of its own: it comes later, and wins)."""
        for sealed in self.sealed:
            yield from opened(sealed)
        yield from self.ended
        yield from self.by_id.values()


def _keep(call: HistoryCall) -> _Kept:
    status = None if call.status is None else STATUS_TEXT[call.status]
    return (call.call_id, call.tool_name, call.internal_id, status, pack(call.result))


def _built(kept: _Kept) -> HistoryCall:
    call_id, tool_name, internal_id, status, result = kept
    called = None if status is None else CallStatus(status)
    return HistoryCall(call_id, tool_name, internal_id, called, unpack(result))


def _apply_capability(
    calls: dict[str, HistoryCall], capability: str, answer: dict[str, Json]
) -> None:
    """What the model learned through a capability about another call: its end."""
    if capability == "cancel_tool_call" and answer.get("cancelled") is True:
        status, value = CallStatus.CANCELLED, None
    elif capability == "get_tool_call_status" and answer.get("is_final") is True:
        status = CallStatus(str(answer.get("status")))
        value = answer.get("result")
    else:
        return
    named = answer.get("tool_call_id")
    for key, call in list(calls.items()):
        if named in (call.call_id, call.internal_id) and call.status is None:
            if status is CallStatus.ORPHANED:
                return
            calls[key] = HistoryCall(call.call_id, call.tool_name, call.internal_id, status, value)


def waiting_calls(history: list[Any]) -> list[tuple[str, str]]:
    """Calls answered by a placeholder whose end the history never told the model."""
    index = MessageHistory()
    index.load("", history)
    return [(call.call_id, call.tool_name) for call in index.calls("") if not call.has_result]
