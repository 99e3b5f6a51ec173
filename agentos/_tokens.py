"""Continuation tokens: how the outside world completes a deferred call."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from enum import StrEnum

from agentos._errors import UnknownCallError
from agentos._runtime import Runtime
from components import CallId


class Completion(StrEnum):
    APPLIED = "applied"
    ALREADY_COMPLETED = "already_completed"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class TokenRecord:
    token: str
    session_id: str
    call_id: CallId


class ContinuationTokens:
    """Tokens for deferred calls, held in memory (a store makes them durable later)."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._records: dict[str, TokenRecord] = {}

    def issue(self, session_id: str, call_id: CallId) -> str:
        token = secrets.token_urlsafe(18)
        self._records[token] = TokenRecord(token, session_id, call_id)
        return token

    def complete(
        self, token: str, result: object = None, *, error: str | None = None
    ) -> Completion:
        """Complete the deferred call behind ``token``; idempotent."""
        record = self._records.get(token) if isinstance(token, str) else None
        if record is None:
            return Completion.UNKNOWN
        try:
            outcome = self._runtime.complete(record.call_id, result, error=error)
        except UnknownCallError:
            return Completion.UNKNOWN
        return Completion.APPLIED if outcome.applied else Completion.ALREADY_COMPLETED

    def pending(self, session_id: str) -> list[TokenRecord]:
        return [record for record in self._records.values() if record.session_id == session_id]
