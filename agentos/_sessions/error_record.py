"""What went wrong in a session, as a record: ``Session.errors`` holds these."""

from __future__ import annotations

from typing import Any
from typing import Self


class ErrorRecord(str):
    """One error of a session: its ``kind`` (``timeout``, ``store``, ``session_crashed``,
    a ``ProviderError`` kind such as ``rate_limited``...), ``message``, ``at`` (epoch
    seconds) and ``turn`` (the model requests the session had made by then).

    It reads as ``"kind: message"``, so code that prints or compares the text goes on
    working; code that decides reads the fields.
    """

    kind: str
    message: str
    at: float
    turn: int

    def __new__(cls, kind: str, message: str, *, at: float, turn: int = 0) -> Self:
        record = super().__new__(cls, f"{kind}: {message}")
        record.kind, record.message, record.at, record.turn = kind, message, at, turn
        return record

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuilt, (self.kind, self.message, self.at, self.turn))


def _rebuilt(kind: str, message: str, at: float, turn: int) -> ErrorRecord:
    return ErrorRecord(kind, message, at=at, turn=turn)
