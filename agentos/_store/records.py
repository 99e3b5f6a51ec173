"""The store's records as rows, for any backend: one column per field, JSON kept as text.

A row is anything read by column name (``sqlite3.Row``, ``asyncpg.Record``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any
from typing import Protocol
from typing import cast

from agentos._errors import StoreError
from agentos._model.messages import Message
from agentos._store.protocol import CancelRequest
from agentos._store.protocol import MirroredCall
from agentos._store.protocol import StoredSession
from agentos._store.protocol import StoredToken
from components import JsonObject


class Row(Protocol):
    def __getitem__(self, key: str, /) -> Any: ...

    def keys(self) -> Iterable[str]: ...


CALL_COLUMNS = (
    "call_id, session_id, provider_call_id, tool_name, tool_input, status, deferred, progress, "
    "progress_count, result, error_kind, error_message, cancel_reason, created_at, started_at, "
    "ended_at, updated_at, holder, log, disposition, question"
)
CALL_COLUMN_COUNT = CALL_COLUMNS.count(",") + 1

MIRROR_KEPT = 24 * 3600.0
"""Seconds a finished call's row stays in the mirror after its last write: rows are pruned as
the mirror writes, so the table grows with the calls in flight, not with every call made
(a session needs only its history and tokens to come back)."""
PRUNE_PERIOD = 60.0
"""Seconds between prunes of one store: often enough, and no scan on every write."""


def text_column(text: str | None) -> str | None:
    """``text`` as a plain text column holds it everywhere: PostgreSQL refuses NUL, so it
    becomes U+FFFD (in every backend, so they read back the same)."""
    return text if text is None or "\x00" not in text else text.replace("\x00", "\ufffd")


def message_text(message: Message) -> str:
    """A message as its ``messages`` row keeps it: compact JSON (no spaces after separators)."""
    return json.dumps(message, separators=(",", ":"))


def message_from(text: str, *, seq: int, session_id: str, where: object) -> Message:
    """The message a ``messages`` row holds; a ``StoreError`` naming the row if the text is
    not a JSON object (the database was changed by something other than agentos)."""
    try:
        message = json.loads(text)
    except (TypeError, ValueError) as error:
        problem = f"it is not JSON: {error}"
    else:
        if isinstance(message, dict):
            return cast(Message, message)
        problem = f"it is JSON {type(message).__name__}, not a message object"
    raise StoreError(
        f"message {seq} of session {session_id!r} in {where} cannot be read ({problem}); "
        "the database was changed by something other than agentos"
    )


def session_from(
    row: Row, history: tuple[Message, ...], board: JsonObject | None = None
) -> StoredSession:
    columns = set(row.keys())  # an asyncpg Record's is an iterator: read once
    usage = row["usage"] if "usage" in columns else None
    title = row["title"] if "title" in columns else None
    said = row["first_words"] if "first_words" in columns else None
    return StoredSession(
        session_id=row["session_id"],
        config=json.loads(row["config"]),
        status=row["status"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        parent_session_id=row["parent_session_id"],
        history=history,
        version=row["version"],
        board=board,
        usage=None if usage is None else json.loads(usage),
        title=title,
        first_words=said,
    )


def token_from(row: Row, now: float) -> StoredToken:
    expires_at = row["expires_at"]
    return StoredToken(
        token=row["token"],
        session_id=row["session_id"],
        call_id=row["call_id"],
        provider_call_id=row["provider_call_id"],
        tool_name=row["tool_name"],
        tool_input=json.loads(row["tool_input"]),
        created_at=row["created_at"],
        expires_at=expires_at,
        completed_at=row["completed_at"],
        result=None if row["result"] is None else json.loads(row["result"]),
        error=row["error"],
        expired=row["completed_at"] is None and expires_at is not None and expires_at <= now,
    )


def call_values(call: MirroredCall) -> tuple[Any, ...]:
    """The ``calls`` row of ``call``, in ``CALL_COLUMNS`` order."""
    return (
        call.call_id,
        call.session_id,
        call.provider_call_id,
        call.tool_name,
        json.dumps(call.tool_input) if call.tool_input else "{}",
        call.status,
        call.deferred,
        None if call.progress is None else json.dumps(call.progress),
        call.progress_count,
        None if call.result is None else json.dumps(call.result),
        call.error_kind,
        text_column(call.error_message),
        text_column(call.cancel_reason),
        call.created_at,
        call.started_at,
        call.ended_at,
        call.updated_at,
        call.holder,
        text_column(call.log),
        call.disposition,
        None if call.question is None else json.dumps(call.question),
    )


def call_from(row: Row) -> MirroredCall:
    fields = _decoded(row, ("tool_input", "progress", "result", "question"))
    fields["deferred"] = bool(fields["deferred"])
    return MirroredCall(**fields)


def request_from(row: Row) -> CancelRequest:
    return CancelRequest(**_decoded(row, ("answer",)))


def _decoded(row: Row, json_columns: tuple[str, ...]) -> dict[str, Any]:
    """The row's columns by name (they are the dataclass's fields), JSON ones parsed."""
    fields = {name: row[name] for name in row.keys()}  # noqa: SIM118 - a Row is no mapping
    for name in json_columns:
        if fields[name] is not None:
            fields[name] = json.loads(fields[name])
    return fields
