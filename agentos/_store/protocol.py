"""Where sessions outlive the process: histories, statuses, continuation tokens, live calls.

``SessionStore`` is the interface the host uses; ``SqliteStore`` (in
``_store/sqlite/``) is the embedded default, ``PostgresStore`` (``_store/postgres/``)
the one hosts on many machines share. Besides what a session
needs to come back, the store keeps a live mirror of the calls of loaded
sessions (``MirroredCall``, written by the host that holds them) and the
cancel requests other processes leave for that host (``CancelRequest``).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from agentos._model.messages import Message
from components import Json
from components import JsonObject


class Completion(StrEnum):
    """What completing a continuation token did."""

    APPLIED = "applied"
    ALREADY_COMPLETED = "already_completed"
    UNKNOWN = "unknown"
    EXPIRED = "expired"
    """The call waited longer than the host's ``token_ttl``: it ended ``failed``."""


@dataclass(frozen=True, slots=True)
class StoredSession:
    session_id: str
    config: JsonObject
    status: str
    created_at: float
    updated_at: float
    parent_session_id: str | None = None
    history: tuple[Message, ...] = ()
    version: int = 0
    """Bumped by every write and every lease taken: a write names the version it expects."""
    board: dict[str, Json] | None = None  # JsonObject: an alias that | cannot join
    """A board session's board (``Board.to_json``); None for a transcript session."""
    usage: dict[str, int] | None = None
    """The session's model requests and token counts so far (``requests`` and the Messages
    API's ``usage`` names); None if never written."""
    title: str | None = None
    """The name someone gave the session (``set_title``); None: never named, and its first
    words stand for it."""
    first_words: str | None = None
    """The first thing the person said, as the session last wrote it (``TurnCommit``):
    what names it in a listing, which reads no history. None: nothing said yet."""

    def shown_title(self) -> str:
        """What to call the session: its name, else the first thing the person said (as
        its turns last wrote it, ``TurnCommit.first_words``); empty while nothing is said.
        A session loaded with its history: ``agentos.stores.stored_title``, which also reads
        the history."""
        return self.title if self.title is not None else self.first_words or ""


@dataclass(frozen=True, slots=True)
class StoredToken:
    token: str
    session_id: str
    call_id: str
    provider_call_id: str
    tool_name: str
    tool_input: JsonObject
    created_at: float
    expires_at: float | None = None
    completed_at: float | None = None
    result: Json = None
    error: str | None = None
    expired: bool = False
    """Set by the store that read it: nobody completed it before ``expires_at``."""

    @property
    def expiry_text(self) -> str:
        """How an expired token's call ended, in the words a live expiry uses."""
        ttl = 0.0 if self.expires_at is None else self.expires_at - self.created_at
        return f"expired: nobody completed it within {ttl:g} s"


@dataclass(frozen=True, slots=True)
class MirroredCall:
    """One call as the host holding its session last wrote it (every ``call_mirror_period``).

    Times are epoch seconds. ``progress`` is the newest payload the tool gave
    ``ctx.progress`` and ``log`` its newest log (or output) line, apart: a line never
    replaces a percent; ``progress_count`` counts every progress entry (the runtime's
    own ``started`` one too). ``result`` is the completed call's result, or
    for a long one its beginning as text.
    """

    call_id: str
    session_id: str
    provider_call_id: str | None
    tool_name: str
    tool_input: JsonObject
    status: str
    created_at: float
    updated_at: float
    holder: str
    """The host that wrote it (``leases.holder``): whether it still runs says the lease."""
    deferred: bool = False
    started_at: float | None = None
    ended_at: float | None = None
    progress: Json = None
    progress_count: int = 0
    result: Json = None
    error_kind: str | None = None
    error_message: str | None = None
    cancel_reason: str | None = None
    log: str | None = None
    disposition: str | None = None
    """How its session ran it (``CallSnapshot.disposition``)."""
    question: dict[str, Json] | None = None  # JsonObject: an alias that | cannot join
    """What the running call asks a person and waits to have answered (``Question.to_json``;
    None: it asks nothing now)."""


ASKING = "asking"
"""``call_counts``' key for the running calls that wait for a person's answer."""


@dataclass(frozen=True, slots=True)
class CancelRequest:
    """A request, left in the store, that the host holding ``session_id`` cancel a call.

    The holder applies it on its next look and writes ``answer``:
    ``{"cancelled": bool, "previous_status": ..., "status": ...}``, or
    ``{"cancelled": false, "found": false}`` when its runtime does not hold the call.
    """

    call_id: str
    session_id: str
    reason: str
    requested_at: float
    answered_at: float | None = None
    answer: Json = None


@dataclass(frozen=True, slots=True)
class TurnCommit:
    """One write of a session's turn: the first ``keep`` stored messages stay, ``messages``
    follow them, the status becomes ``status`` (and the board ``board``); with ``version``,
    only over that version."""

    session_id: str
    status: str
    keep: int
    messages: tuple[Message, ...]
    version: int | None = None
    board: dict[str, Json] | None = None  # JsonObject: an alias that | cannot join
    """A board session's board, written whole (None: the stored one stays)."""
    usage: dict[str, int] | None = None
    """The session's requests and token counts so far, written whole (None: the stored
    ones stay)."""
    first_words: str | None = None
    """The first thing the person said (None: the stored words stay)."""


class SessionStore(Protocol):
    async def create_session(self, session: StoredSession) -> None:
        """Record a new session (its history, if any, too)."""
        ...

    async def commit_turn(self, turn: TurnCommit) -> None:
        """Atomically: keep the first ``turn.keep`` stored messages, then store
        ``turn.messages``, and set ``turn.status``.

        With ``turn.version``, only if the stored version is that one (then it is
        one more); otherwise ``SessionConflictError`` and nothing is written.
        """
        ...

    async def set_status(self, session_id: str, status: str, *, version: int | None = None) -> None:
        """Like ``commit_turn`` for the status alone."""
        ...

    async def set_title(self, session_id: str, title: str | None) -> None:
        """Name the session (None: unnamed again); ``StoreError`` for a session it lacks.

        A label, not a turn: it names no version and bumps none (nor ``updated_at``), so
        the host holding the session writes on undisturbed.
        """
        ...

    async def acquire_lease(
        self, session_id: str, holder: str, *, ttl: float, steal: bool = False
    ) -> int | None:
        """Hold the session for ``ttl`` seconds; returns its new version (None: no such session).

        ``SessionInUseError`` while another holder's lease is live (not expired,
        and its process not known dead), unless ``steal``. Taking the lease
        bumps the version, so the previous holder can write nothing more.
        """
        ...

    async def renew_leases(
        self, holder: str, session_ids: Sequence[str], *, ttl: float
    ) -> dict[str, str | None]:
        """Extend ``holder``'s leases by ``ttl``; returns the sessions it lost -> who holds them."""
        ...

    async def release_lease(self, session_id: str, holder: str) -> None:
        """Give the session up (nothing happens unless ``holder`` holds it)."""
        ...

    async def release_leases(self, holder: str) -> None:
        """Give up every session ``holder`` holds."""
        ...

    async def load_session(self, session_id: str) -> StoredSession | None: ...

    async def list_sessions(self, *, prefix: str | None = None) -> list[StoredSession]:
        """Every session (with ``prefix``: whose id starts with it), without histories,
        oldest first."""
        ...

    async def sessions_mentioning(self, text: str) -> list[str]:
        """The ids of the sessions, oldest first, whose stored history or board holds
        ``text``, or that have a continuation token or mirrored call whose id (the runtime's
        or the model's) starts with it: where a call with that id, or starting so, may be."""
        ...

    async def add_token(self, token: StoredToken) -> None: ...

    async def complete_token(
        self, token: str, result: Json = None, *, error: str | None = None
    ) -> Completion:
        """Idempotent: ``applied`` once, then ``already_completed``; ``unknown`` otherwise."""
        ...

    async def get_token(self, token: str) -> StoredToken | None: ...

    async def tokens_of(self, session_id: str) -> list[StoredToken]: ...

    async def completed_tokens(self, tokens: Sequence[str]) -> list[StoredToken]:
        """Those of ``tokens`` someone completed (any process), first completed first."""
        ...

    async def delete_expired_tokens(self, *, grace: float = 0.0) -> int:
        """Delete the tokens that expired more than ``grace`` seconds ago; how many."""
        ...

    async def live_leases(self) -> dict[str, str]:
        """Session -> holder, for every lease that is live (not expired, its process not dead)."""
        ...

    async def mirror_calls(
        self, calls: Sequence[MirroredCall], answers: Sequence[CancelRequest] = ()
    ) -> None:
        """In one transaction: write (replace) these calls' rows, and these answered requests."""
        ...

    async def mirrored_calls(
        self, *, session_id: str | None = None, call_id: str | None = None
    ) -> list[MirroredCall]:
        """Mirrored calls, oldest first: a session's, or those ``call_id`` names (either id)."""
        ...

    async def call_counts(self) -> dict[str, dict[str, int]]:
        """Session -> status -> how many of its mirrored calls have it; and under
        ``ASKING`` (no status) how many of its running calls wait for a person's answer,
        when any do.

        Only rows the session's lease holder wrote count: a previous holder's
        rows say what its calls were doing when it stopped writing.
        """
        ...

    async def request_cancel(self, call_id: str, session_id: str, reason: str) -> CancelRequest:
        """Leave a cancel request for the session's holder (replacing an earlier one)."""
        ...

    async def cancel_request(self, call_id: str) -> CancelRequest | None:
        """The call's latest cancel request, answered or not."""
        ...

    async def pending_cancels(self, holder: str) -> list[CancelRequest]:
        """Unanswered requests for sessions whose lease ``holder`` holds, oldest first."""
        ...

    async def listen(self, callback: Callable[[str], None]) -> bool:
        """Call ``callback(session_id)`` when any process leaves a cancel request or a token
        completion for a session; returns whether it will (SQLite cannot: False).

        Best-effort: news can be missed, so a holder still polls. Calling it
        again with the same callback reconnects a lost subscription.
        """
        ...

    def unlisten(self, callback: Callable[[str], None]) -> None: ...

    async def close(self) -> None: ...
