"""A ``SessionStore`` made of its tables: each backend supplies the five, this class speaks the
protocol over them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, Self

from agentos._store.batching import GroupCommit, PendingTurn
from agentos._store.protocol import (
    CancelRequest,
    Completion,
    MirroredCall,
    StoredSession,
    StoredToken,
    TurnCommit,
)
from components import Json


class SessionTable(Protocol):
    async def create(self, session: StoredSession) -> None: ...
    async def set_status(self, session_id: str, status: str, *, version: int | None) -> None: ...
    async def set_title(self, session_id: str, title: str | None) -> None: ...
    async def load(self, session_id: str) -> StoredSession | None: ...
    async def mentioning(self, text: str) -> list[str]: ...
    async def list(self, prefix: str | None) -> list[StoredSession]: ...


class LeaseTable(Protocol):
    async def acquire(
        self, session_id: str, holder: str, *, ttl: float, steal: bool = False
    ) -> int | None: ...
    async def renew(
        self, holder: str, session_ids: Sequence[str], *, ttl: float
    ) -> dict[str, str | None]: ...
    async def release(self, session_id: str, holder: str) -> None: ...
    async def release_all(self, holder: str) -> None: ...
    async def live(self) -> dict[str, str]: ...


class TokenTable(Protocol):
    async def add(self, token: StoredToken) -> None: ...
    async def complete(
        self, token: str, result: Json = None, *, error: str | None = None
    ) -> Completion: ...
    async def get(self, token: str) -> StoredToken | None: ...
    async def of_session(self, session_id: str) -> list[StoredToken]: ...
    async def completed(self, tokens: Sequence[str]) -> list[StoredToken]: ...
    async def delete_expired(self, grace: float = 0.0) -> int: ...


class CallTable(Protocol):
    async def write(
        self, calls: Sequence[MirroredCall], answers: Sequence[CancelRequest]
    ) -> None: ...
    async def find(self, *, session_id: str | None, call_id: str | None) -> list[MirroredCall]: ...
    async def counts(self) -> dict[str, dict[str, int]]: ...
    async def request_cancel(self, call_id: str, session_id: str, reason: str) -> CancelRequest: ...
    async def request_of(self, call_id: str) -> CancelRequest | None: ...
    async def pending(self, holder: str) -> list[CancelRequest]: ...


class TableStore:
    """The ``SessionStore`` protocol over a backend's tables; subclasses open and close them."""

    _sessions: SessionTable
    _turns: GroupCommit
    _leases: LeaseTable
    _tokens: TokenTable
    _calls: CallTable

    async def close(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ sessions

    async def create_session(self, session: StoredSession) -> None:
        await self._sessions.create(session)

    async def commit_turn(self, turn: TurnCommit) -> None:
        """Commit together with every other turn waiting now: under load one
        transaction carries many sessions' turns, and none waits behind N others."""
        await self._turns.write(PendingTurn.of(turn))

    async def set_status(self, session_id: str, status: str, *, version: int | None = None) -> None:
        await self._sessions.set_status(session_id, status, version=version)

    async def set_title(self, session_id: str, title: str | None) -> None:
        await self._sessions.set_title(session_id, title)

    async def load_session(self, session_id: str) -> StoredSession | None:
        return await self._sessions.load(session_id)

    async def list_sessions(self, *, prefix: str | None = None) -> list[StoredSession]:
        return await self._sessions.list(prefix)

    async def sessions_mentioning(self, text: str) -> list[str]:
        return await self._sessions.mentioning(text)

    # -------------------------------------------------------------------- leases

    async def acquire_lease(
        self, session_id: str, holder: str, *, ttl: float, steal: bool = False
    ) -> int | None:
        return await self._leases.acquire(session_id, holder, ttl=ttl, steal=steal)

    async def renew_leases(
        self, holder: str, session_ids: Sequence[str], *, ttl: float
    ) -> dict[str, str | None]:
        return await self._leases.renew(holder, session_ids, ttl=ttl)

    async def release_lease(self, session_id: str, holder: str) -> None:
        await self._leases.release(session_id, holder)

    async def release_leases(self, holder: str) -> None:
        await self._leases.release_all(holder)

    async def live_leases(self) -> dict[str, str]:
        return await self._leases.live()

    # -------------------------------------------------------------------- tokens

    async def add_token(self, token: StoredToken) -> None:
        await self._tokens.add(token)

    async def complete_token(
        self, token: str, result: Json = None, *, error: str | None = None
    ) -> Completion:
        return await self._tokens.complete(token, result, error=error)

    async def get_token(self, token: str) -> StoredToken | None:
        return await self._tokens.get(token)

    async def tokens_of(self, session_id: str) -> list[StoredToken]:
        return await self._tokens.of_session(session_id)

    async def completed_tokens(self, tokens: Sequence[str]) -> list[StoredToken]:
        return await self._tokens.completed(tokens) if tokens else []

    async def delete_expired_tokens(self, *, grace: float = 0.0) -> int:
        return await self._tokens.delete_expired(grace)

    # -------------------------------------------------------- the calls' mirror

    async def mirror_calls(
        self, calls: Sequence[MirroredCall], answers: Sequence[CancelRequest] = ()
    ) -> None:
        await self._calls.write(calls, answers)

    async def mirrored_calls(
        self, *, session_id: str | None = None, call_id: str | None = None
    ) -> list[MirroredCall]:
        return await self._calls.find(session_id=session_id, call_id=call_id)

    async def call_counts(self) -> dict[str, dict[str, int]]:
        return await self._calls.counts()

    async def request_cancel(self, call_id: str, session_id: str, reason: str) -> CancelRequest:
        return await self._calls.request_cancel(call_id, session_id, reason)

    async def cancel_request(self, call_id: str) -> CancelRequest | None:
        return await self._calls.request_of(call_id)

    async def pending_cancels(self, holder: str) -> list[CancelRequest]:
        return await self._calls.pending(holder)

    # ---------------------------------------------------------------------- news

    async def listen(self, callback: Callable[[str], None]) -> bool:
        """No news by default: holders poll (a backend that can tell them sooner says so)."""
        return False

    def unlisten(self, callback: Callable[[str], None]) -> None:
        return None
