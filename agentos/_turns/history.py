"""What a session's chat history says about tool calls: the source of ``orphaned``.

The runtime forgets calls (retention, a restart); the history does not. A call
the history mentions that the runtime no longer holds is reported
``orphaned``, unless the history itself holds the call's final result. The
session layer provides a ``HistoryLookup``; ``MessageHistory`` reads
Anthropic Messages-format histories.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import Protocol

from agentos._model.messages import content_value
from agentos._turns.transcript import LOST_RESULT
from agentos._turns.transcript import read_outcome
from agentos._turns.transcript import read_placeholder
from components import CallStatus
from components import Json
from components import Packed
from components import pack
from components import quick_init
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
    """

    def __init__(self) -> None:
        self._sessions: dict[str, dict[str, _Kept]] = {}

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
        self._sessions[session_id] = {}
        for call in calls.values():
            self.record(session_id, call)

    def record(self, session_id: str, call: HistoryCall) -> None:
        calls = self._sessions.setdefault(session_id, {})
        kept = _keep(call)
        calls[call.call_id] = kept
        if call.internal_id is not None:
            calls[call.internal_id] = kept

    def find_call(self, session_id: str, call_id: str) -> HistoryCall | None:
        kept = self._sessions.get(session_id, {}).get(call_id)
        return None if kept is None else _built(kept)

    def calls(self, session_id: str) -> list[HistoryCall]:
        """Every call of the session once, in the order the history made them."""
        unique = {kept[0]: kept for kept in self._sessions.get(session_id, {}).values()}
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


def _keep(call: HistoryCall) -> _Kept:
    status = None if call.status is None else call.status.value
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
