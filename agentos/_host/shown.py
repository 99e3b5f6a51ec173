"""What a stored session and a stored call show: a word of the status vocabulary, and why.

One place decides, for every front end (``agentos sessions``, ``show``, ``calls``,
``status``, the page, the terminal UI, the MCP server). A session a live process holds
shows its own status: the holder writes it. One nobody holds that was stored mid-turn
(``waiting`` or ``requesting``) runs nowhere and never will until it is resumed: it is
``stopped``, with the calls that were running when it was stored counted. A call the
history has no outcome for (and no continuation token waits on) is ``running`` while its
session is held, else ``orphaned``: the history mentions it, the world does not. A deferred
call is ``pending`` while its token waits, and ``failed`` once it expired, the note saying so:
``deferred`` and ``expired`` are notes, never statuses.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agentos._board.board import Board
from agentos._model.messages import blocks_of
from agentos._store.protocol import SessionStore
from agentos._store.protocol import StoredSession
from agentos._store.protocol import StoredToken
from agentos._turns.events import SessionStatus
from agentos._turns.history import MessageHistory
from components import CallStatus
from components import Json

RAN_NOWHERE = "no process is running it"
"""Why a call the history has no outcome for is ``orphaned`` (it was running when stored)."""
UNMIRRORED = "as stored; its holder has not reported it yet"
"""Why a held session's call the history has no outcome for reads ``running``."""
DEFERRED = "deferred: waits for its continuation token"
"""Why a deferred call its session has no outcome for is ``pending``."""
DELIVERING = "token completed, waiting for delivery"
"""Why a deferred call is ``completed`` (or ``failed``) before its session heard."""
EXPIRED = "expired: "
"""How the outcome of a deferred call nobody completed in time starts
(``StoredToken.expiry_text``)."""
_MID_TURN = frozenset({SessionStatus.WAITING, SessionStatus.REQUESTING})


@dataclass(frozen=True, slots=True)
class ShownStatus:
    """A status as a person reads it: ``status`` from the vocabulary, ``note`` why (if it
    needs saying). ``str`` gives both: ``stopped · 1 call was running``."""

    status: str
    note: str | None = None

    def __str__(self) -> str:
        return self.status if self.note is None else f"{self.status} · {self.note}"


def shown_session_status(status: str, *, live: bool, were_running: int = 0) -> ShownStatus:
    """A stored session's status: ``status`` as stored, ``live`` whether a live process holds
    its lease, ``were_running`` its calls running when it was stored (see
    ``calls_running_when_stored``). Held: its own status. Not held and stored mid-turn:
    ``stopped``, saying what was under way; a status this agentos does not know:
    ``stopped``, naming it."""
    try:
        own = SessionStatus(status)
    except ValueError:
        return ShownStatus(SessionStatus.STOPPED.value, f"stored as {status!r}")
    if live or own not in _MID_TURN:
        return ShownStatus(own.value)
    if were_running:
        one = were_running == 1
        return ShownStatus(
            SessionStatus.STOPPED.value,
            f"{were_running} call{'' if one else 's'} {'was' if one else 'were'} running",
        )
    if own is SessionStatus.REQUESTING:
        return ShownStatus(SessionStatus.STOPPED.value, "its model request was under way")
    return ShownStatus(SessionStatus.STOPPED.value, "no process runs it")


def shown_call_status(
    recorded: str | None, *, live: bool, result: Json = None, token: StoredToken | None = None
) -> ShownStatus:
    """A stored call's status: ``recorded`` is what its history (or board) says, None when
    it holds no outcome, ``result`` that outcome; ``token`` the continuation token a deferred
    call waits on; ``live`` whether a live process holds its session. An expiry is ``failed``
    with its words as the note. No outcome: by its token (``pending``, deferred; ``completed``
    or ``failed`` once completed; ``failed`` once expired), else ``running`` while held, else
    ``orphaned``."""
    if recorded is not None:
        expired = recorded == CallStatus.FAILED.value and is_expiry(result)
        return ShownStatus(recorded, str(result) if expired else None)
    if token is not None:
        return _by_token(token)
    if live:
        return ShownStatus(CallStatus.RUNNING.value, UNMIRRORED)
    return ShownStatus(CallStatus.ORPHANED.value, RAN_NOWHERE)


def is_expiry(outcome: Json) -> bool:
    """Whether a failed call's outcome says its continuation token expired."""
    return isinstance(outcome, str) and outcome.startswith(EXPIRED)


def _by_token(token: StoredToken) -> ShownStatus:
    """A deferred call its session has no outcome for, as its token stands."""
    if token.completed_at is not None:
        status = CallStatus.COMPLETED if token.error is None else CallStatus.FAILED
        return ShownStatus(status.value, DELIVERING)
    if token.expired:
        return ShownStatus(CallStatus.FAILED.value, token.expiry_text)
    return ShownStatus(CallStatus.PENDING.value, DEFERRED)


def calls_running_when_stored(stored: StoredSession, tokens: Iterable[StoredToken]) -> list[str]:
    """The ids (the model's, else the runtime's) of the stored session's calls that were
    running when it was stored: its history (or board) holds no outcome for them and no
    continuation token waits on them."""
    tokens = list(tokens)
    waiting = {token.provider_call_id for token in tokens} | {token.call_id for token in tokens}
    if stored.board is not None:
        board = Board.from_json(stored.board)
        calls = (call for node in board.nodes.values() for call in node.calls)
        return [
            call.use_id or call.call_id
            for call in calls
            if not call.status.is_final and not {call.use_id, call.call_id} & waiting
        ]
    index = MessageHistory()
    index.load(stored.session_id, stored.history)
    running = []
    for message in stored.history:
        for block in blocks_of(message):
            use_id = str(block.get("id"))
            if block.get("type") != "tool_use" or use_id in waiting:
                continue
            known = index.find_call(stored.session_id, use_id)
            if known is None or known.status is None:
                running.append(use_id)
    return running


async def stored_session_status(
    store: SessionStore, stored: StoredSession, *, live: bool
) -> ShownStatus:
    """``shown_session_status`` of a session the store holds (read without its history, as
    ``list_sessions`` gives it): its history and tokens are read only when they matter, for
    a session nobody holds that was stored mid-turn."""
    status = stored.status
    if live or status not in _MID_TURN:
        return shown_session_status(status, live=live)
    read = stored.history or stored.board is not None
    whole = stored if read else await store.load_session(stored.session_id)
    if whole is None:  # deleted meanwhile: as it was listed
        return shown_session_status(status, live=live)
    tokens = await store.tokens_of(stored.session_id)
    running = calls_running_when_stored(whole, tokens)
    return shown_session_status(status, live=live, were_running=len(running))
