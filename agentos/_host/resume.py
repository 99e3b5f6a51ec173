"""Resuming a stored session: what its history waited for comes back, or is reported lost.

A turn that waited for deferred calls when the process ended gets them back
``pending`` under their old provider id, their tokens re-bound; a call that
ended before the process did, its end mirrored to the store (``MirroredCall``),
is told with that outcome as any late outcome; a call only the history
mentions (it ran in the process that ended) is ``orphaned``, and the model is
told before its next request; a call the runtime still holds (unloaded and
resumed in the same process) delivers its outcome as usual. A board session's calls come back the
same way: its machine's ``restore`` names the calls still running on the
stored board.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

import anyio

from agentos._errors import UnknownCallError
from agentos._kernel.options import CallOptions
from agentos._kernel.runtime import Runtime
from agentos._model.messages import Block
from agentos._model.messages import Message
from agentos._model.messages import blocks_of
from agentos._sessions.session import Session
from agentos._sessions.tokens import ContinuationTokens
from agentos._store.protocol import MirroredCall
from agentos._store.protocol import StoredToken
from agentos._turns.transcript import placeholder
from components import CallError
from components import CallId
from components import CallSnapshot
from components import CallStatus
from components import ErrorKind
from components import JsonObject
from components import SessionId


def _deferred(token: StoredToken) -> CallOptions:
    """How a deferred call comes back under its old provider id: expiring when its token
    does (what the store's wall-clock expiry leaves of it; the default timeout without one)."""
    if token.expires_at is None or token.expired or token.completed_at is not None:
        return CallOptions(deferred=True)
    return CallOptions(deferred=True, timeout=max(token.expires_at - time.time(), 0.001))


@dataclass(frozen=True, slots=True)
class Restored:
    """What a restore found: deferred calls whose token was completed (or expired) while
    the process was down, to end once the session runs; calls lost in the restart; calls
    that ended before it, told from the store's record of their end."""

    completed_while_down: list[tuple[CallId, StoredToken]]
    lost: list[str]
    ended_before: list[str] = field(default_factory=list)


def restore(
    session: Session,
    history: list[Message],
    tokens: list[StoredToken],
    runtime: Runtime,
    registry: ContinuationTokens,
    board: JsonObject | None = None,
    *,
    asked: bool = False,
    reattach: Callable[[str, str, object], CallId | None] | None = None,
    mirrored: Sequence[MirroredCall] = (),
) -> Restored:
    """Give ``session`` its stored history and calls (``asked``: stored mid-turn).

    ``reattach(tool_use_id, tool, input)``, asked of each call of a transcript that the
    history leaves unanswered, and of each call waited for that would be lost: a new call
    that goes on with its work (a sub-agent whose child waits on deferred calls alone, a
    call that ran as an MCP task; its outcome is told as the lost call's), or None: the
    call is lost. ``mirrored``: the session's calls as the store kept them; a call
    waited for whose row is final ended before the process did, and its outcome is told
    from that row (a long result as the beginning the store keeps)."""
    session_id = session.session_id
    outlived = {  # a turn that waited for its deferred calls when the process ended
        t.provider_call_id: placeholder(t.provider_call_id, t.call_id, CallStatus.PENDING, t.token)
        for t in tokens
    }
    if reattach is not None and board is None:
        for use in _unanswered(history):
            if use["id"] not in outlived:
                again = reattach(use["id"], str(use.get("name")), use.get("input"))
                if again is not None:
                    outlived[use["id"]] = placeholder(use["id"], again, CallStatus.RUNNING)
    ends = _Ends(mirrored)
    if board is None:  # a call made before its placeholder was stored may have ended too
        for use in _unanswered(history):
            row = ends.of(None, use["id"])
            if use["id"] not in outlived and row is not None:
                outlived[use["id"]] = placeholder(use["id"], row.call_id, CallStatus.RUNNING)
    waiting = dict(session.restore(history, outlived, board=board, asked=asked))
    completed_while_down = []
    for token in tokens:
        if token.provider_call_id not in waiting:
            continue
        del waiting[token.provider_call_id]
        call_id = runtime.submit(
            token.tool_name,
            token.tool_input,
            session_id=session_id,
            provider_call_id=token.provider_call_id,
            options=_deferred(token),
        )
        registry.bind(token, call_id)
        session.await_outcome(call_id, token.provider_call_id)
        if token.completed_at is not None or token.expired:
            completed_while_down.append((call_id, token))
    lost, ended = [], []
    inputs = {use["id"]: use.get("input") for use in _uses(history)}
    for tool_use_id, name in waiting.items():
        held = _still_held(runtime, session, tool_use_id)
        row = ends.of(session.runtime_id_of(tool_use_id), tool_use_id)
        again = None
        if held is None and row is None and reattach is not None and tool_use_id in inputs:
            again = reattach(tool_use_id, name, inputs[tool_use_id])
        if held is not None:  # unloaded and resumed in this runtime: the call is still here
            session.await_outcome(held, tool_use_id)
        elif row is not None:  # it ended before the process did: the store has its end
            session.ended_before(_snapshot(row), tool_use_id)
            ended.append(tool_use_id)
        elif again is not None:  # its work goes on elsewhere (an MCP task): a new call follows it
            session.await_outcome(again, tool_use_id)
        else:  # it ran in the process that ended
            session.lost(tool_use_id, name)
            lost.append(tool_use_id)
    return Restored(completed_while_down, lost, ended)


async def nudge_if_news(
    session: Session, runtime: Runtime, restored: Restored | None, nudge: str
) -> bool:
    """Post ``nudge`` when the model has news from the restart (a lost call, an outcome
    that arrived meanwhile) and no turn starts by itself to tell it; whether it did."""
    restored = restored or Restored([], [])
    for call_id, _ in restored.completed_while_down:
        await runtime.wait(call_id, timeout=10)
    await anyio.wait_all_tasks_blocked()  # the session hears of those ends
    held = bool(restored.ended_before) or any(call.is_final for call in session.outstanding())
    # A board shows its lost calls orphaned on the board, for the turn the user grants next.
    lost = restored.lost if session.board is None else []
    if (lost or held) and session.requests == 0 and session.idle:
        session.post(nudge)
        return True
    return False


class _Ends:
    """The final rows of a session's mirrored calls, by the runtime's id and by the
    model's (the newest call of a provider id wins: provider ids repeat across turns)."""

    def __init__(self, mirrored: Sequence[MirroredCall]) -> None:
        final = [row for row in mirrored if _final(row.status)]
        self._by_id = {row.call_id: row for row in final}
        newest = {row.provider_call_id: row for row in mirrored if row.provider_call_id}
        self._by_use = {use: row for use, row in newest.items() if _final(row.status)}

    def of(self, call_id: str | None, tool_use_id: str) -> MirroredCall | None:
        """The final row of the call the history names by ``call_id`` (its placeholder's
        runtime id) or, when it names none, by the model's ``tool_use_id``."""
        if call_id is not None:
            return self._by_id.get(call_id)
        return self._by_use.get(tool_use_id)


def _final(status: str) -> bool:
    return status in _FINAL


_FINAL = frozenset(s.value for s in CallStatus if s.is_final and s is not CallStatus.ORPHANED)


def _snapshot(row: MirroredCall) -> CallSnapshot:
    """The call's end as the store kept it, in the shape a session hears a call's end in."""
    error = None
    if row.error_kind is not None or row.error_message is not None:
        try:
            kind = ErrorKind(row.error_kind or ErrorKind.TOOL_ERROR)
        except ValueError:  # written by another version: the message says what happened
            kind = ErrorKind.TOOL_ERROR
        error = CallError(kind, row.error_message or "")
    return CallSnapshot(
        call_id=CallId(row.call_id),
        session_id=SessionId(row.session_id),
        tool_name=row.tool_name,
        tool_input=row.tool_input,
        status=CallStatus(row.status),
        provider_call_id=row.provider_call_id,
        conversation_id=None,
        turn_id=None,
        parent_call_id=None,
        submitted_at=row.created_at,
        started_at=row.started_at,
        completed_at=row.ended_at,
        result=row.result,
        error=error,
        progress=(),
        progress_dropped=0,
        progress_seq=row.progress_count,
        version=row.progress_count + 1,
        cancel_reason=row.cancel_reason,
        overdue=False,
        deferred=row.deferred,
    )


def _uses(history: list[Message]) -> list[Block]:
    """The ``tool_use`` blocks of the history."""
    return [b for m in history for b in blocks_of(m) if b.get("type") == "tool_use"]


def _unanswered(history: list[Message]) -> list[Block]:
    """The ``tool_use`` blocks of the history that no ``tool_result`` answers."""
    uses = _uses(history)
    answered = {b.get("tool_use_id") for m in history for b in blocks_of(m)}
    return [use for use in uses if use.get("id") not in answered]


def _still_held(runtime: Runtime, session: Session, tool_use_id: str) -> CallId | None:
    """The runtime's call behind a placeholder in the history, if it still holds it."""
    call_id = session.runtime_id_of(tool_use_id)
    if call_id is None:
        return None
    try:
        return runtime.status(call_id, session_id=session.session_id).call_id
    except UnknownCallError:
        return None
