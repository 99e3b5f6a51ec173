"""What the store knows of a call, for any process: its history, and the live mirror.

The stored history says how calls ended once the model heard; the live mirror
(written by the process holding the session, ``_host/mirror.py``) says what they are
doing now. A mirrored row counts as live only while its writer still holds the
session's lease; otherwise the call is running nowhere, and the history (or, failing
that, ``orphaned``) says what became of it. ``find_call``, ``session_calls`` and
``call_tree`` read calls so (each a ``CallView``), ``cancel_call`` asks the holder to
cancel one: ``agentos status``, ``calls`` and ``cancel``, the page, the terminal UI and
any program read and cancel the calls of sessions they do not run through them.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import Literal

import anyio

from agentos._errors import AgentOSError
from agentos._host.call_view import CallView
from agentos._host.children import child_session_id
from agentos._host.ids import named_by
from agentos._host.ids import resolve_session_id
from agentos._host.ids import short_id
from agentos._host.shown import DEFERRED
from agentos._host.shown import RAN_NOWHERE
from agentos._host.shown import ShownStatus
from agentos._host.shown import shown_call_status
from agentos._host.stored_calls import session_status
from agentos._host.stored_calls import stored_calls
from agentos._store.protocol import CancelRequest
from agentos._store.protocol import MirroredCall
from agentos._store.protocol import SessionStore
from agentos._store.protocol import StoredSession
from agentos._store.protocol import StoredToken
from components import CallStatus
from components import JsonObject

NOWHERE = RAN_NOWHERE
CANCEL_POLL_SECONDS = 0.1
CANCEL_WAIT_SECONDS = 5.0
"""How long ``cancel_call`` waits for the holder's answer by default (then: ``queued``)."""


LookupFailure = Literal["unknown", "ambiguous", "deferred", "nowhere"]
"""Why a call cannot be looked up, or cancelled (``CallLookupError.reason``)."""


class CallLookupError(AgentOSError):
    """The id names no call, or calls of several sessions (a ``session_id`` chooses); or
    the call cannot be cancelled: deferred (its token ends it), or run by no process.

    ``what`` is what is so and ``advice`` what a program can do about it (the message is
    both); ``reason`` says which case (``unknown``, ``ambiguous``, ``deferred``,
    ``nowhere``), for a front end to advise in its own words (the command line names its
    commands); ``call`` is the call, when one was found.
    """

    def __init__(
        self,
        what: str,
        reason: LookupFailure,
        call: CallView | None = None,
        *,
        advice: str = "",
    ) -> None:
        super().__init__(f"{what}; {advice}" if advice else what)
        self.what = what
        self.reason = reason
        self.call = call


def merge(stored: CallView | None, row: MirroredCall | None, holder: str | None) -> CallView:
    """The call's status: a final mirrored state, a live one, else what the history says
    (the live state it was mirrored with is ``CallView.stored``'s to add)."""
    if row is None:
        assert stored is not None
        return stored
    base = stored or CallView(
        call_id=None,
        session_id=row.session_id,
        provider_call_id=row.provider_call_id or row.call_id,
        tool_name=row.tool_name,
        tool_input=row.tool_input,
        status=CallStatus(row.status),
    )
    base = replace(base, call_id=row.call_id, deferred=base.deferred or row.deferred)
    status = CallStatus(row.status)
    if status.is_final:
        result = row.result if status is CallStatus.COMPLETED else base.result
        reason = row.cancel_reason or base.cancel_reason
        said = base.note if base.expired else row.error_message
        note = shown_call_status(status.value, live=False, result=said).note
        return replace(base, status=status, result=result, cancel_reason=reason, note=note)
    if holder is not None and row.holder == holder and not row.deferred:
        return replace(base, status=status, note=None)
    if row.deferred and stored is not None:
        return stored
    if row.deferred:
        return replace(base, status=CallStatus.PENDING, note=DEFERRED)
    if holder is not None and stored is not None:
        return stored
    return _nowhere(base)


def _nowhere(call: CallView) -> CallView:
    """A call not final that no live process runs: ``orphaned``, as ``shown_call_status``
    says of one the history has no outcome for."""
    shown = shown_call_status(None, live=False)
    return replace(call, status=CallStatus(shown.status), note=shown.note)


def live_calls(
    stored: StoredSession,
    tokens: Sequence[StoredToken],
    rows: Sequence[MirroredCall],
    holder: str | None,
) -> list[CallView]:
    """The session's calls, in the order the history made them, then those only mirrored."""
    by_id: dict[str, MirroredCall] = {}
    for row in rows:  # oldest first: the newest call under a provider id wins
        by_id[row.provider_call_id or row.call_id] = row
    calls = []
    seen = set()
    for call in stored_calls(stored, tokens, live=holder is not None):
        matched = by_id.get(call.provider_call_id or "")
        seen.add(call.provider_call_id)
        calls.append(CallView.stored(merge(call, matched, holder), matched, holder))
    for key, row in by_id.items():
        if key not in seen:
            calls.append(CallView.stored(merge(None, row, holder), row, holder))
    return calls


@dataclass(frozen=True, slots=True)
class SessionCalls:
    """A session the store holds, as a process that does not run it sees it: its ``status``
    (``shown_session_status``), who ``holder``s it now (None: nobody), and its ``calls``,
    each its history's word merged with the live mirror's."""

    session: StoredSession
    status: ShownStatus
    holder: str | None
    calls: tuple[CallView, ...]


async def session_calls(
    store: SessionStore, session_id: str, *, holders: Mapping[str, str] | None = None
) -> SessionCalls | None:
    """Every call of the session (None: no such session). ``holders``: who holds each
    session (``Host.holders``), read from the store's live leases if not given."""
    stored = await store.load_session(session_id)
    if stored is None:
        return None
    tokens = await store.tokens_of(session_id)
    rows = await store.mirrored_calls(session_id=session_id)
    holder = (await store.live_leases() if holders is None else holders).get(session_id)
    status = session_status(stored, tokens, holder is not None)
    return SessionCalls(stored, status, holder, tuple(live_calls(stored, tokens, rows, holder)))


async def call_tree(store: SessionStore, session_id: str) -> list[tuple[int, CallView]] | None:
    """The session's calls, each sub-agent call followed by its child session's calls (and
    theirs), with their depth below the session (None: no such session)."""
    found = await session_calls(store, session_id)
    if found is None:
        return None
    tree: list[tuple[int, CallView]] = []
    for call in found.calls:
        tree.append((0, call))
        internal = call.call_id
        if internal is None:
            continue
        below = await call_tree(store, child_session_id(call.tool_name, internal))
        tree += [(depth + 1, child) for depth, child in below or ()]
    return tree


async def find_call(store: SessionStore, call_id: str, session_id: str | None = None) -> CallView:
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
    everywhere = [call for c in candidates for call in await _calls(store, c)]
    found: list[CallView] = []
    for call in named_by(call_id, everywhere, _ids, describe=_described, what="calls"):
        if call.session_id not in {seen.session_id for seen in found}:
            found.append(call)  # a model's id can repeat in a session: its first call
    if not found:
        where = "" if session_id is None else f" in session {session_id!r}"
        raise CallLookupError(f"no tool call with id {call_id!r}{where}", "unknown")
    if len(found) > 1:
        names = ", ".join(call.session_id for call in found)
        raise CallLookupError(
            f"{call_id!r} names calls in several sessions ({names})",
            "ambiguous",
            advice="say which with session_id",
        )
    return found[0]


async def _calls(store: SessionStore, session_id: str) -> tuple[CallView, ...]:
    found = await session_calls(store, session_id)
    return () if found is None else found.calls


def _ids(call: CallView) -> tuple[str, ...]:
    """The ids a call answers to: the runtime's, and the model's."""
    return tuple(i for i in (call.call_id, call.provider_call_id) if i)


def _described(call: CallView) -> str:
    """What names a call among others its id starts like: ``crawl, running, session S``."""
    return f"({call.tool_name}, {call.status}, session {short_id(call.session_id)})"


async def request_cancel(
    store: SessionStore, call: CallView, reason: str, wait: float
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


@dataclass(frozen=True, slots=True)
class CancelReport:
    """What ``cancel_call`` did: ``outcome`` is ``cancelled``, ``already_final`` (the call
    had ended) or ``queued`` (its holder did not answer in time; it applies the request when
    it next looks)."""

    call: CallView
    outcome: str
    cancelled: bool = False
    previous_status: CallStatus | None = None
    status: CallStatus | None = None
    """The call's status before the request and after it (as its holder answered)."""

    def to_json(self) -> JsonObject:
        return {
            "call_id": self.call.call_id,
            "provider_call_id": self.call.provider_call_id,
            "session_id": self.call.session_id,
            "outcome": self.outcome,
            "cancelled": self.cancelled,
            "previous_status": None if self.previous_status is None else self.previous_status.value,
            "status": None if self.status is None else self.status.value,
        }


_ENDED = frozenset({CallStatus.COMPLETED, CallStatus.FAILED, CallStatus.CANCELLED})


async def cancel_call(
    store: SessionStore, call: CallView, reason: str, *, wait: float = CANCEL_WAIT_SECONDS
) -> CancelReport:
    """Cancel the call through the process holding its session, or say why that cannot be.

    ``CallLookupError`` for a deferred call (its token ends it) and for a call
    no process runs; a call that already ended is left as it is.
    """
    status, session_id = call.status, call.session_id
    if call.status in _ENDED:
        return CancelReport(call, "already_final", previous_status=status, status=status)
    if call.waits_for_token:
        raise CallLookupError(
            f"call {call.request_id} is deferred: it waits for its continuation token, and "
            "only that ends it",
            "deferred",
            call,
            advice="completing the token with an error fails it",
        )
    nowhere = f"call {call.request_id} is not running anywhere: {NOWHERE}"
    if call.holder is None:
        raise CallLookupError(
            f"{nowhere} (no live process holds session {session_id})",
            "nowhere",
            call,
            advice="resuming the session tells the model it was lost",
        )
    request = await request_cancel(store, call, reason, wait)
    answer = request.answer
    if request.answered_at is None or not isinstance(answer, dict):
        return CancelReport(call, "queued", previous_status=status, status=status)
    if answer.get("found") is not True:
        raise CallLookupError(
            f"{nowhere} ({call.holder} holds session {session_id} but not the call: "
            "it ran in an earlier process)",
            "nowhere",
            call,
        )
    before, after = _status(answer.get("previous_status")), _status(answer.get("status"))
    if answer.get("cancelled") is True:
        return CancelReport(call, "cancelled", True, before, after)
    return CancelReport(call, "already_final", False, before, after)


def _status(said: object) -> CallStatus | None:
    """A status as the holder's answer says it (None: it says none this agentos knows)."""
    try:
        return CallStatus(str(said))
    except ValueError:
        return None
