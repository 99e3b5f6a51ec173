"""The system toolbox: capabilities that let an agent inspect and cancel its calls.

``get_tool_call_status``, ``list_running_tool_calls`` and ``cancel_tool_call``
are ordinary tools to the model (JSON schemas from pydantic models) and plain
methods to a host. They answer at once from the world and never queue behind
the calls they ask about; only ``wait_for_completion`` makes the caller wait.
Every answer is scoped to the caller: an id outside its scope gets exactly the
answer a nonexistent id gets. An answer names a call as the model knows it:
``tool_call_id`` is its ``tool_use`` id (the internal id when it has none, or
when it is another session's call), ``internal_id`` the runtime's id, as a
placeholder does.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from collections.abc import Coroutine
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import Protocol

import pydantic_core
from pydantic import ValidationError

from agentos._errors import AgentOSError
from agentos._errors import ToolboxError
from agentos._errors import UnknownCallError
from agentos._kernel.runtime import Runtime
from agentos._kernel.tools import describe_validation_error
from agentos._sessions.scope import Caller
from agentos._sessions.scope import Scope
from agentos._sessions.scope import SessionLineage
from agentos._turns.capabilities import CAPABILITIES
from agentos._turns.capabilities import MAX_WAIT_SECONDS
from agentos._turns.capabilities import CancelToolCallInput
from agentos._turns.capabilities import GetToolCallStatusInput
from agentos._turns.capabilities import ListRunningToolCallsInput
from agentos._turns.capabilities import MessageAgentInput
from agentos._turns.capabilities import definitions
from agentos._turns.history import HistoryCall
from agentos._turns.history import HistoryLookup
from agentos._turns.history import NoHistory
from components import CallId
from components import CallSnapshot
from components import CallStatus
from components import Json
from components import JsonObject
from components import ToolCallProgress
from components import same_conversation

_ID_PATTERN = re.compile(r"[A-Za-z0-9_\-]{1,128}")


@dataclass(frozen=True, slots=True)
class CapabilityResult:
    """What a capability answered: JSON content, and whether it is an error."""

    content: JsonObject
    is_error: bool = False

    def to_json(self) -> str:
        """Compact JSON, non-ASCII text as is (pydantic-core's encoder: 4x the stdlib's speed)."""
        return pydantic_core.to_json(self.content, inf_nan_mode="null").decode()


class ChildSessions(Protocol):
    """Who runs the sub-agents' sessions (a host): what ``message_agent`` posts through."""

    def post_to_child(self, call_id: str, text: str) -> str | None:
        """Post ``text`` to the session the call runs; its id, or None for no such call."""


class _NoChildren:
    def post_to_child(self, call_id: str, text: str) -> str | None:
        return None


class SystemToolbox:
    """The capabilities over one runtime, a history lookup and a session lineage."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        history: HistoryLookup | None = None,
        lineage: SessionLineage | None = None,
        children: ChildSessions | None = None,
    ) -> None:
        self._runtime = runtime
        self._history: HistoryLookup = history or NoHistory()
        self._lineage = lineage or SessionLineage()
        self._children: ChildSessions = children or _NoChildren()
        self._history_looks: dict[str, set[str]] = {}
        """Per observing session: the history-only calls it has looked at."""
        self._handlers: dict[str, Callable[[Caller, Any], Coroutine[Any, Any, JsonObject]]] = {
            "get_tool_call_status": self._status_handler,
            "list_running_tool_calls": self._list_handler,
            "cancel_tool_call": self._cancel_handler,
            "message_agent": self._message_handler,
        }

    @staticmethod
    def definitions(names: list[str] | None = None) -> list[dict[str, Any]]:
        """Tool definitions for the model, for all capabilities or the ``names`` given."""
        return list(definitions(tuple(CAPABILITIES if names is None else names)))

    async def invoke(self, name: str, arguments: object, caller: Caller) -> CapabilityResult:
        """Run a capability on the model's raw arguments (a JSON text or a JSON value).

        Never raises for anything the model can send: every problem becomes an
        error result with a ``code`` and a message the model can act on.
        """
        try:
            handler = self._handlers.get(name) if isinstance(name, str) else None
            if handler is None:
                known = ", ".join(CAPABILITIES)
                raise ToolboxError(
                    "unknown_capability", f"no capability named {name!r} (known: {known})"
                )
            model = CAPABILITIES[name].input_model
            if isinstance(arguments, str | bytes):
                parsed = model.model_validate_json(arguments)
            else:
                parsed = model.model_validate(arguments)
            return CapabilityResult(await handler(caller, parsed))
        except ValidationError as error:
            return _error(
                "invalid_input", describe_validation_error(f"invalid arguments for {name}", error)
            )
        except ToolboxError as error:
            return _error(error.code, error.message)

    # ---------------------------------------------------------- the capabilities

    async def get_tool_call_status(
        self,
        caller: Caller,
        tool_call_id: str,
        *,
        include_progress: bool = True,
        wait_for_completion: bool = False,
        timeout_seconds: float = 5.0,
    ) -> JsonObject:
        """Status, progress and result of one call in the caller's scope."""
        _check_id(tool_call_id)
        if not math.isfinite(timeout_seconds) or timeout_seconds < 0:
            raise ToolboxError(
                "invalid_input",
                f"timeout_seconds must be between 0 and {MAX_WAIT_SECONDS:g}, "
                f"got {timeout_seconds!r}",
            )
        found = self._locate(caller, tool_call_id)
        if isinstance(found, HistoryCall):
            return self._history_status(caller, found)
        runtime = self._runtime
        if wait_for_completion and not runtime.status(found).is_final:
            await runtime.wait(found, min(timeout_seconds, MAX_WAIT_SECONDS))
        snapshot, changed = runtime.look(found, caller.session_id)
        return _status(snapshot, caller, changed, include_progress)

    async def list_running_tool_calls(self, caller: Caller) -> JsonObject:
        """The calls in the caller's scope that are not final, each with its session:
        under the ``children`` and ``all`` scopes a listing holds several sessions' calls."""
        runtime = self._runtime
        sessions: list[str]
        if caller.scope is Scope.ALL:
            sessions = list(runtime.sessions())
        elif caller.scope is Scope.CHILDREN:
            sessions = [caller.session_id, *sorted(self._lineage.descendants(caller.session_id))]
        else:
            sessions = [caller.session_id]
        calls: list[Json] = []
        for session in sessions:
            for snapshot in runtime.list_calls(session, include_final=False):
                latest = snapshot.progress[-1] if snapshot.progress else None
                calls.append(
                    {
                        **_ids(snapshot, caller),
                        "session_id": snapshot.session_id,
                        "tool_name": snapshot.tool_name,
                        "label": snapshot.label,
                        "status": snapshot.status.value,
                        "started_at": _time(snapshot.started_at),
                        "latest_progress": None if latest is None else _progress(latest),
                    }
                )
        return {"tool_calls": calls}

    async def cancel_tool_call(
        self, caller: Caller, tool_call_id: str, reason: str = "cancelled by the model"
    ) -> JsonObject:
        """Cancel a call in the caller's scope; ``cancelled`` is false when it was final."""
        _check_id(tool_call_id)
        found = self._locate(caller, tool_call_id)
        if isinstance(found, HistoryCall):
            previous = found.status or CallStatus.ORPHANED
            return {
                **_history_ids(found),
                "cancelled": False,
                "previous_status": previous.value,
            }
        outcome = self._runtime.cancel(found, reason)
        return {
            **_ids(self._runtime.status(found), caller),
            "cancelled": outcome.cancelled,
            "previous_status": outcome.previous_status.value,
        }

    async def message_agent(self, caller: Caller, tool_call_id: str, text: str) -> JsonObject:
        """Post ``text`` to the child session a running sub-agent call in scope runs."""
        _check_id(tool_call_id)
        found = self._locate(caller, tool_call_id)
        snapshot = None if isinstance(found, HistoryCall) else self._runtime.status(found)
        if snapshot is None or snapshot.is_final:
            status = found.status if isinstance(found, HistoryCall) else None
            shown = (status or CallStatus.ORPHANED) if snapshot is None else snapshot.status
            raise ToolboxError(
                "not_running",
                f"tool call {tool_call_id!r} is {shown.value}: only a running sub-agent "
                "reads messages",
            )
        try:
            child = self._children.post_to_child(snapshot.call_id, text)
        except (AgentOSError, ValueError) as error:  # it ended meanwhile, say
            raise ToolboxError("not_running", f"the sub-agent cannot read it: {error}") from None
        if child is None:
            raise ToolboxError(
                "not_an_agent",
                f"tool call {tool_call_id!r} is a call of {snapshot.tool_name!r}, not of a "
                "sub-agent: only an agent tool's call reads messages",
            )
        return {**_ids(snapshot, caller), "posted": True, "session_id": child}

    def forget(self, session_id: str) -> None:
        """Drop what the session looked at (it was unloaded from its host)."""
        self._history_looks.pop(session_id, None)

    # ------------------------------------------------------------------ helpers

    async def _status_handler(self, caller: Caller, args: GetToolCallStatusInput) -> JsonObject:
        return await self.get_tool_call_status(
            caller,
            args.tool_call_id,
            include_progress=args.include_progress,
            wait_for_completion=args.wait_for_completion,
            timeout_seconds=args.timeout_seconds,
        )

    async def _list_handler(self, caller: Caller, args: ListRunningToolCallsInput) -> JsonObject:
        return await self.list_running_tool_calls(caller)

    async def _cancel_handler(self, caller: Caller, args: CancelToolCallInput) -> JsonObject:
        return await self.cancel_tool_call(caller, args.tool_call_id, args.reason)

    async def _message_handler(self, caller: Caller, args: MessageAgentInput) -> JsonObject:
        return await self.message_agent(caller, args.tool_call_id, args.text)

    def _locate(self, caller: Caller, tool_call_id: str) -> CallId | HistoryCall:
        """The call in the world, else what the history says of it; unknown otherwise."""
        runtime = self._runtime
        try:
            call_id = runtime.resolve(
                tool_call_id, session_id=caller.session_id, conversation_id=caller.conversation_id
            )
        except UnknownCallError:
            pass
        else:
            if self._visible(caller, runtime.owner(call_id)):
                return call_id
        found = self._history.find_call(caller.session_id, tool_call_id)
        if found is not None:
            return found
        raise ToolboxError(
            "unknown_tool_call", f"no tool call with id {tool_call_id!r} in this session"
        )

    def _visible(self, caller: Caller, session_id: str) -> bool:
        if session_id == caller.session_id or caller.scope is Scope.ALL:
            return True
        return caller.scope is Scope.CHILDREN and session_id in self._lineage.descendants(
            caller.session_id
        )

    def _history_status(self, caller: Caller, call: HistoryCall) -> JsonObject:
        seen = self._history_looks.setdefault(caller.session_id, set())
        changed = call.call_id not in seen  # either id names the same look
        seen.add(call.call_id)
        return {
            **_history_ids(call),
            "status": (call.status or CallStatus.ORPHANED).value,
            "tool_name": call.tool_name,
            "disposition": None,  # the history does not say
            "started_at": None,
            "completed_at": None,
            "result": call.result,
            "error": None,
            "progress": [],
            "progress_dropped": 0,
            "is_final": True,
            "changed_since_last_look": changed,
        }


def _ids(snapshot: CallSnapshot, caller: Caller) -> JsonObject:
    """``tool_call_id``: the id the caller's model knows the call by; ``internal_id``: ours.

    The model knows its own calls by their ``tool_use`` id. A provider id only
    resolves in its own session (and conversation), so any other call is named
    by its internal id, which resolves from every session whose scope holds it.
    """
    provider_id = snapshot.provider_call_id
    known = (
        provider_id is not None
        and snapshot.session_id == caller.session_id
        and same_conversation(caller.conversation_id, snapshot.conversation_id)
    )
    return {
        "tool_call_id": provider_id if known else snapshot.call_id,
        "internal_id": snapshot.call_id,
    }


def _history_ids(call: HistoryCall) -> JsonObject:
    """The same two ids for a call only the history knows: its tool_use id, then ours."""
    return {"tool_call_id": call.call_id, "internal_id": call.internal_id}


def _status(
    snapshot: CallSnapshot, caller: Caller, changed: bool, include_progress: bool
) -> JsonObject:
    error = snapshot.error
    question = snapshot.question
    asking: JsonObject = {} if question is None else {"waiting_for_person": question.to_json()}
    return {
        **asking,  # a question the call waits to have answered by the person, first
        **_ids(snapshot, caller),
        "status": snapshot.status.value,
        "tool_name": snapshot.tool_name,
        "disposition": snapshot.disposition,
        "started_at": _time(snapshot.started_at),
        "completed_at": _time(snapshot.completed_at),
        "result": snapshot.result,
        "error": None if error is None else {"kind": error.kind.value, "message": error.message},
        "progress": [_progress(entry) for entry in snapshot.progress] if include_progress else None,
        "progress_dropped": snapshot.progress_dropped,
        "is_final": snapshot.is_final,
        "changed_since_last_look": changed,
        "from_cache": snapshot.from_cache,
    }


def _progress(entry: ToolCallProgress) -> Json:
    return {
        "seq": entry.seq,
        "at": _time(entry.at),
        "kind": entry.kind.value,
        "payload": entry.payload,
    }


def _time(value: float | None) -> str | None:
    """``datetime.fromtimestamp(value, UTC).isoformat()``, at a third of the cost."""
    if value is None:
        return None
    whole = math.floor(value)
    micros = round((value - whole) * 1e6)  # half to even, as datetime rounds
    if micros >= 1_000_000:
        whole, micros = whole + 1, micros - 1_000_000
    seconds = _utc_seconds(whole)
    return f"{seconds}.{micros:06d}+00:00" if micros else f"{seconds}+00:00"


@functools.lru_cache(maxsize=1024)
def _utc_seconds(whole: int) -> str:
    """The date and time of a whole second: the part that calls close together share."""
    return datetime.fromtimestamp(whole, UTC).isoformat().removesuffix("+00:00")


def _check_id(tool_call_id: str) -> None:
    if not _ID_PATTERN.fullmatch(tool_call_id):
        shown = tool_call_id if len(tool_call_id) <= 40 else tool_call_id[:40] + "..."
        raise ToolboxError(
            "malformed_id",
            f"{shown!r} is not a tool call id: ids are 1 to 128 letters, digits, '_' or '-' "
            "(the tool_use id, or the id a placeholder result gave)",
        )


def _error(code: str, message: str) -> CapabilityResult:
    return CapabilityResult({"error": {"code": code, "message": message}}, is_error=True)
