"""Continuation tokens: how the outside world completes a deferred call.

Tokens live in memory and, when the host has a store, in the store too, so a
token issued before a restart still completes its call after it.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Collection
from dataclasses import dataclass

from agentos._errors import UnknownCallError
from agentos._kernel.runtime import Runtime
from agentos._store.protocol import Completion
from agentos._store.protocol import SessionStore
from agentos._store.protocol import StoredToken
from components import CallId
from components import ErrorKind
from components import Json
from components import JsonObject


@dataclass(slots=True)
class TokenRecord:
    token: str
    session_id: str
    call_id: CallId
    provider_call_id: str
    tool_name: str
    expires_at: float | None = None
    """When (the runtime's clock) the token stops completing its call; None: never."""


class ContinuationTokens:
    """Tokens for the deferred calls of every session on one host."""

    def __init__(
        self, runtime: Runtime, store: SessionStore | None = None, *, ttl: float | None = None
    ) -> None:
        self._runtime = runtime
        self._store = store
        self._ttl = ttl
        self._records: dict[str, TokenRecord] = {}

    @property
    def ttl(self) -> float | None:
        """Seconds (on the runtime's clock) a deferred call waits for its token, or None."""
        return self._ttl

    async def issue(
        self,
        session_id: str,
        call_id: CallId,
        *,
        provider_call_id: str,
        tool_name: str,
        tool_input: JsonObject,
    ) -> str:
        token = "ct_" + secrets.token_urlsafe(18)  # never "-…": a CLI would read an option
        if self._store is not None:
            now = time.time()
            expires = None if self._ttl is None else now + self._ttl
            await self._store.add_token(
                StoredToken(
                    token,
                    session_id,
                    call_id,
                    provider_call_id,
                    tool_name,
                    tool_input,
                    now,
                    expires,
                )
            )
        expires_at = None if self._ttl is None else self._runtime.clock.monotonic() + self._ttl
        self._records[token] = TokenRecord(
            token, session_id, call_id, provider_call_id, tool_name, expires_at
        )
        return token

    def bind(self, stored: StoredToken, call_id: CallId) -> None:
        """Point a token (issued before a restart) at the call that stands for it now; what
        is left of its time (the store's wall clock) counts on the runtime's clock from now."""
        expires_at = None
        if stored.expires_at is not None:
            left = max(0.0, stored.expires_at - time.time())
            expires_at = self._runtime.clock.monotonic() + left
        self._records[stored.token] = TokenRecord(
            stored.token,
            stored.session_id,
            call_id,
            stored.provider_call_id,
            stored.tool_name,
            expires_at,
        )

    async def complete(
        self, token: str, result: Json = None, *, error: str | None = None
    ) -> Completion:
        """Complete the deferred call behind ``token``; idempotent, durable first."""
        if not isinstance(token, str):
            return Completion.UNKNOWN
        record = self._records.get(token)
        if record is not None:
            ended = self._ending(record)
            if ended is not None:  # cancelled, expired or completed: never applied
                return ended
        outcome: Completion | None = None
        if self._store is not None:
            outcome = await self._store.complete_token(token, result, error=error)
            if outcome is not Completion.APPLIED:
                return outcome
        if record is None:
            return outcome or Completion.UNKNOWN
        try:
            done = self._runtime.complete(record.call_id, result, error=error)
        except UnknownCallError:
            return outcome or Completion.UNKNOWN
        if outcome is not None:
            return outcome
        return Completion.APPLIED if done.applied else Completion.ALREADY_COMPLETED

    async def catch_up(self, session_ids: Collection[str]) -> int:
        """Complete the calls of these sessions whose tokens another process completed in the
        store (``agentos complete``, another host); how many it completed."""
        if self._store is None:
            return 0
        waiting = {
            token: record
            for token, record in self._records.items()
            if record.session_id in session_ids and self._ending(record) is None
        }
        if not waiting:
            return 0
        applied = 0
        for stored in await self._store.completed_tokens(list(waiting)):
            record = waiting[stored.token]
            try:
                done = self._runtime.complete(record.call_id, stored.result, error=stored.error)
            except UnknownCallError:
                continue
            applied += done.applied
        return applied

    def _ending(self, record: TokenRecord) -> Completion | None:
        """How the call already ended (retention forgets only final calls), or None. A token
        past its time is expired at once, before the tick that ends its call."""
        try:
            call = self._runtime.status(record.call_id)
        except UnknownCallError:
            return Completion.ALREADY_COMPLETED
        if not call.is_final:
            expires_at = record.expires_at
            if expires_at is not None and self._runtime.clock.monotonic() >= expires_at:
                return Completion.EXPIRED
            return None
        if call.error is not None and call.error.kind is ErrorKind.TIMED_OUT:
            return Completion.EXPIRED
        return Completion.ALREADY_COMPLETED

    def forget(self, session_id: str) -> None:
        """Drop the session's tokens from memory (it was unloaded; the store keeps them)."""
        self._records = {
            token: record
            for token, record in self._records.items()
            if record.session_id != session_id
        }

    def pending(self, session_id: str) -> list[TokenRecord]:
        """The session's tokens whose call still waits for them."""
        return [
            record
            for record in self._records.values()
            if record.session_id == session_id and self._ending(record) is None
        ]
