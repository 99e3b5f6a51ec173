"""What ``agentos status``, ``cancel`` and ``calls`` know of a call: its history, and the mirror.

The stored history says how calls ended once the model heard; the live
mirror (written by the process holding the session, ``_host/mirror.py``) says
what they are doing now. A mirrored row counts as live only while its writer
still holds the session's lease; otherwise the call is running nowhere, and
the history (or, failing that, ``orphaned``) says what became of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import anyio

from agentos import AgentOSError, child_session_id
from agentos._ui.stored.calls import StoredCall, brief, stored_calls, timestamp
from agentos.stores import (
    DEFERRED,
    RAN_NOWHERE,
    CallView,
    CancelRequest,
    MirroredCall,
    SessionStore,
    StoredSession,
    StoredToken,
    named_by,
    resolve_session_id,
    short_id,
    shown_call_status,
)
from components import CallStatus, JsonObject

NOWHERE = RAN_NOWHERE
CANCEL_POLL_SECONDS = 0.1


class CallLookupError(AgentOSError):
    """The id names no call, or calls of several sessions (``--session`` chooses)."""


@dataclass(frozen=True, slots=True)
class LiveCall:
    """One call as the command line shows it: what the history says, merged with the mirror."""

    session_id: str
    call: StoredCall
    row: MirroredCall | None
    holder: str | None
    """Who holds the session now (a live lease); None: no process does."""

    @property
    def live(self) -> bool:
        """Whether the row is the live word of the process holding the session."""
        return self.row is not None and self.holder is not None and self.row.holder == self.holder

    @property
    def request_id(self) -> str:
        return self.call.call_id or self.call.provider_call_id

    @property
    def view(self) -> CallView | None:
        """What a person sees of it, as its holder last mirrored it (None: never mirrored),
        with the status decided here."""
        return None if self.row is None else CallView.mirrored(self.row, status=self.call.status)

    def to_json(self) -> JsonObject:
        row, view = self.row, self.view
        data = self.call.to_json()
        data.update(
            session_id=self.session_id,
            holder=self.holder,
            live=self.live,
            progress=None if view is None else view.progress,
            percent=None if view is None else view.percent,
            log=None if view is None else view.log,
            disposition=None if view is None else view.disposition,
            progress_count=None if row is None else row.progress_count,
            error=None if row is None or row.error_message is None else row.error_message,
            created_at=_when(None if row is None else row.created_at),
            started_at=_when(None if row is None else row.started_at),
            ended_at=_when(None if row is None else row.ended_at),
            updated_at=_when(None if row is None else row.updated_at),
        )
        return data

    def describe(self) -> list[str]:
        """``agentos status``: one line per fact."""
        call, row, view = self.call, self.row, self.view
        lines = [
            f"call      {call.call_id or '?'}  ({call.provider_call_id})",
            f"session   {self.session_id}, held by {self.holder or 'no live process'}",
            f"tool      {call.tool_name} {brief(call.tool_input, 120)}",
            f"status    {call.status}" + ("" if call.note is None else f" ({call.note})"),
        ]
        if view is not None and view.disposition is not None:
            lines.append(f"runs      {view.disposition}")
        if view is not None and view.progress is not None:
            percent = "" if view.percent is None else f"{view.percent:.0f}%  "
            lines.append(f"progress  {percent}{brief(view.progress, 120)}")
        if view is not None and view.log is not None:
            lines.append(f"log       {brief(view.log, 120)}")
        if call.cancel_reason is not None:
            lines.append(f"reason    {call.cancel_reason}")
        elif row is not None and row.error_message is not None:
            lines.append(f"error     {row.error_kind}: {row.error_message}")
        if call.result is not None and call.status != "cancelled":
            lines.append(f"result    {brief(call.result, 120)}")
        if call.continuation_token is not None:
            lines.append(f"token     {call.continuation_token}")
        if row is not None:
            for name, at in (
                ("submitted", row.created_at),
                ("started", row.started_at),
                ("ended", row.ended_at),
                ("mirrored", row.updated_at),
            ):
                if at is not None:
                    lines.append(f"{name:<9} {timestamp(at)}")
        return lines


def merge(stored: StoredCall | None, row: MirroredCall | None, holder: str | None) -> StoredCall:
    """The call's status: a final mirrored state, a live one, else what the history says."""
    if row is None:
        assert stored is not None
        return stored
    base = stored or StoredCall(
        row.provider_call_id or row.call_id, row.tool_name, row.tool_input, row.status
    )
    base = replace(base, call_id=row.call_id, deferred=base.deferred or row.deferred)
    status = CallStatus(row.status)
    if status.is_final:
        result = row.result if status is CallStatus.COMPLETED else base.result
        reason = row.cancel_reason or base.cancel_reason
        said = base.note if base.expired else row.error_message
        note = shown_call_status(status.value, live=False, result=said).note
        return replace(base, status=status.value, result=result, cancel_reason=reason, note=note)
    if holder is not None and row.holder == holder and not row.deferred:
        return replace(base, status=status.value, note=None)
    if row.deferred and stored is not None:
        return stored
    if row.deferred:
        return replace(base, status=CallStatus.PENDING.value, note=DEFERRED)
    if holder is not None and stored is not None:
        return stored
    return _nowhere(base)


def _nowhere(call: StoredCall) -> StoredCall:
    """A call not final that no live process runs: ``orphaned``, as ``shown_call_status``
    says of one the history has no outcome for."""
    shown = shown_call_status(None, live=False)
    return replace(call, status=shown.status, note=shown.note)


def live_calls(
    stored: StoredSession,
    tokens: Sequence[StoredToken],
    rows: Sequence[MirroredCall],
    holder: str | None,
) -> list[LiveCall]:
    """The session's calls, in the order the history made them, then those only mirrored."""
    by_id: dict[str, MirroredCall] = {}
    for row in rows:  # oldest first: the newest call under a provider id wins
        by_id[row.provider_call_id or row.call_id] = row
    calls = []
    seen = set()
    for call in stored_calls(stored, tokens, live=holder is not None):
        matched = by_id.get(call.provider_call_id)
        seen.add(call.provider_call_id)
        calls.append(LiveCall(stored.session_id, merge(call, matched, holder), matched, holder))
    for key, row in by_id.items():
        if key not in seen:
            calls.append(LiveCall(stored.session_id, merge(None, row, holder), row, holder))
    return calls


async def session_calls(store: SessionStore, session_id: str) -> list[LiveCall] | None:
    """Every call of the session (None: no such session)."""
    stored = await store.load_session(session_id)
    if stored is None:
        return None
    tokens = await store.tokens_of(session_id)
    rows = await store.mirrored_calls(session_id=session_id)
    holder = (await store.live_leases()).get(session_id)
    return live_calls(stored, tokens, rows, holder)


async def call_tree(store: SessionStore, session_id: str) -> list[tuple[int, LiveCall]] | None:
    """The session's calls, each sub-agent call followed by its child session's calls (and
    theirs), with their depth below the session (None: no such session)."""
    calls = await session_calls(store, session_id)
    if calls is None:
        return None
    tree: list[tuple[int, LiveCall]] = []
    for call in calls:
        tree.append((0, call))
        internal = call.call.call_id
        if internal is None:
            continue
        below = await call_tree(store, child_session_id(call.call.tool_name, internal))
        tree += [(depth + 1, child) for depth, child in below or ()]
    return tree


async def find_call(store: SessionStore, call_id: str, session_id: str | None) -> LiveCall:
    """The call ``call_id`` names (the runtime's id or the provider's, whole or the start of
    one: ``named_by``), in ``session_id`` (or the session it starts) if given.

    ``CallLookupError`` when there is none, or when a provider id names calls
    of several sessions and no ``session_id`` says which; ``AmbiguousIdError``
    (naming them) when it is the start of several calls' ids.
    """
    if session_id is not None:
        session_id = await resolve_session_id(store, session_id)
    rows = await store.mirrored_calls(call_id=call_id, session_id=session_id)
    exact = {row.session_id for row in rows if row.call_id == call_id}
    if session_id is not None:
        candidates = [session_id]
    elif exact:
        candidates = sorted(exact)
    else:
        candidates = await store.sessions_mentioning(call_id)
    everywhere = [call for c in candidates for call in await session_calls(store, c) or ()]
    found: list[LiveCall] = []
    for call in named_by(call_id, everywhere, _ids, describe=_described, what="calls"):
        if call.session_id not in {seen.session_id for seen in found}:
            found.append(call)  # a model's id can repeat in a session: its first call
    if not found:
        where = "" if session_id is None else f" in session {session_id!r}"
        raise CallLookupError(
            f"no tool call with id {call_id!r}{where} (see 'agentos calls SESSION')"
        )
    if len(found) > 1:
        names = ", ".join(call.session_id for call in found)
        raise CallLookupError(
            f"{call_id!r} names calls in several sessions ({names}); "
            "say which with --session SESSION"
        )
    return found[0]


def _ids(call: LiveCall) -> tuple[str, ...]:
    """The ids a call answers to: the runtime's, and the model's."""
    return tuple(i for i in (call.call.call_id, call.call.provider_call_id) if i)


def _described(call: LiveCall) -> str:
    """What names a call among others its id starts like: ``crawl, running, session S``."""
    return f"({call.call.tool_name}, {call.call.status}, session {short_id(call.session_id)})"


async def request_cancel(
    store: SessionStore, call: LiveCall, reason: str, wait: float
) -> CancelRequest:
    """Leave a cancel request for the session's holder; its answer, if it came within ``wait``."""
    asked = await store.request_cancel(call.request_id, call.session_id, reason)
    with anyio.move_on_after(wait):
        while True:
            request = await store.cancel_request(call.request_id)
            if request is not None and request.requested_at != asked.requested_at:
                return request  # someone asked again since: theirs is the one answered
            if request is not None and request.answered_at is not None:
                return request
            await anyio.sleep(CANCEL_POLL_SECONDS)
    return asked


def _when(at: float | None) -> str | None:
    return None if at is None else timestamp(at)


@dataclass(frozen=True, slots=True)
class CancelReport:
    """What ``agentos cancel`` did: ``outcome`` is cancelled, already_final or queued."""

    call: LiveCall
    outcome: str
    cancelled: bool = False
    previous_status: str | None = None
    status: str | None = None

    def to_json(self) -> JsonObject:
        return {
            "call_id": self.call.call.call_id,
            "provider_call_id": self.call.call.provider_call_id,
            "session_id": self.call.session_id,
            "outcome": self.outcome,
            "cancelled": self.cancelled,
            "previous_status": self.previous_status,
            "status": self.status,
        }

    def describe(self) -> str:
        if self.outcome == "cancelled":
            return f"cancelled (was {self.previous_status})"
        if self.outcome == "queued":
            return (
                f"queued: {self.call.holder} holds session {self.call.session_id} but did not "
                "answer in time; the request stays queued and it applies it when it next looks "
                f"('agentos status {self.call.request_id}' shows whether it did)"
            )
        note = "" if self.call.call.note is None else f" ({self.call.call.note})"
        call = short_id(self.call.request_id)
        return f"not cancelled: call {call} had already ended, {self.status}{note}"


_ENDED = frozenset({"completed", "failed", "cancelled"})


async def cancel_call(
    store: SessionStore, call: LiveCall, reason: str, wait: float
) -> CancelReport:
    """Cancel the call through the process holding its session, or say why that cannot be.

    ``CallLookupError`` for a deferred call (its token ends it) and for a call
    no process runs; a call that already ended is left as it is.
    """
    status, session_id = call.call.status, call.session_id
    if status in _ENDED:
        return CancelReport(call, "already_final", previous_status=status, status=status)
    if call.call.waits_for_token:
        token = call.call.continuation_token or "TOKEN"
        raise CallLookupError(
            f"call {call.request_id} is deferred: it waits for its continuation token, and "
            f"only that ends it; 'agentos complete {token} --error TEXT' fails it"
        )
    nowhere = f"call {call.request_id} is not running anywhere: {NOWHERE}"
    if call.holder is None:
        raise CallLookupError(
            f"{nowhere} (no live process holds session {session_id}; "
            f"'agentos resume {session_id}' tells the model it was lost)"
        )
    request = await request_cancel(store, call, reason, wait)
    answer = request.answer
    if request.answered_at is None or not isinstance(answer, dict):
        return CancelReport(call, "queued", previous_status=status, status=status)
    if answer.get("found") is not True:
        raise CallLookupError(
            f"{nowhere} ({call.holder} holds session {session_id} but not the call: "
            "it ran in an earlier process)"
        )
    before, after = str(answer.get("previous_status")), str(answer.get("status"))
    if answer.get("cancelled") is True:
        return CancelReport(call, "cancelled", True, before, after)
    return CancelReport(call, "already_final", False, before, after)
