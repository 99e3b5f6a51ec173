"""Resuming a stored session: what its history waited for comes back, or is reported lost.

A turn that waited for deferred calls when the process ended gets them back
``pending`` under their old provider id, their tokens re-bound; a call only
the history mentions is ``orphaned``, and the model is told before its next
request; a call the runtime still holds (unloaded and resumed in the same
process) delivers its outcome as usual. A board session's calls come back the
same way: its machine's ``restore`` names the calls still running on the
stored board.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import anyio

from agentos._errors import UnknownCallError
from agentos._kernel.options import CallOptions
from agentos._kernel.runtime import Runtime
from agentos._model.messages import Block, Message, blocks_of
from agentos._sessions.session import Session
from agentos._sessions.tokens import ContinuationTokens
from agentos._store.protocol import StoredToken
from agentos._turns.transcript import placeholder
from components import CallId, CallStatus, JsonObject


def _deferred(token: StoredToken) -> CallOptions:
    """How a deferred call comes back under its old provider id: expiring when its token
    does (what the store's wall-clock expiry leaves of it; the default timeout without one)."""
    if token.expires_at is None or token.expired or token.completed_at is not None:
        return CallOptions(deferred=True)
    return CallOptions(deferred=True, timeout=max(token.expires_at - time.time(), 0.001))


@dataclass(frozen=True, slots=True)
class Restored:
    """What a restore found: deferred calls whose token was completed (or expired) while
    the process was down, to end once the session runs; calls lost in the restart."""

    completed_while_down: list[tuple[CallId, StoredToken]]
    lost: list[str]


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
) -> Restored:
    """Give ``session`` its stored history and calls (``asked``: stored mid-turn).

    ``reattach(tool_use_id, tool, input)``, asked of each call of a transcript that the
    history leaves unanswered: a new call that goes on with its work (a sub-agent whose
    child waits on deferred calls alone; its outcome is told as the lost call's), or None:
    the call is lost."""
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
    lost = []
    for tool_use_id, name in waiting.items():
        held = _still_held(runtime, session, tool_use_id)
        if held is None:
            session.lost(tool_use_id, name)
            lost.append(tool_use_id)
        else:  # unloaded and resumed in this runtime: the call is still here
            session.await_outcome(held, tool_use_id)
    return Restored(completed_while_down, lost)


async def nudge_if_news(
    session: Session, runtime: Runtime, restored: Restored | None, nudge: str
) -> bool:
    """Post ``nudge`` when the model has news from the restart (a lost call, an outcome
    that arrived meanwhile) and no turn starts by itself to tell it; whether it did."""
    restored = restored or Restored([], [])
    for call_id, _ in restored.completed_while_down:
        await runtime.wait(call_id, timeout=10)
    await anyio.wait_all_tasks_blocked()  # the session hears of those ends
    held = any(call.is_final for call in session.outstanding())
    # A board shows its lost calls orphaned on the board, for the turn the user grants next.
    lost = restored.lost if session.board is None else []
    if (lost or held) and session.requests == 0 and session.idle:
        session.post(nudge)
        return True
    return False


def _unanswered(history: list[Message]) -> list[Block]:
    """The ``tool_use`` blocks of the history that no ``tool_result`` answers."""
    uses = [b for m in history for b in blocks_of(m) if b.get("type") == "tool_use"]
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
