"""Lines of a byte stream, found in linear time and bounded: each byte is looked at once,
and a line longer than the limit is given up as ``TooLong`` (its first bytes) and the rest
of it skipped, so a server cannot make the host hold or re-scan an endless line."""

from __future__ import annotations

from dataclasses import dataclass

HEAD = 512
"""Bytes of a too-long line kept: enough for a JSON-RPC message's ``id``."""


@dataclass(frozen=True)
class TooLong:
    """A line over the limit: its first bytes; the rest of it is skipped."""

    head: bytes
    limit: int


class LineSplitter:
    """Feed it chunks; it gives back each finished line (without its newline)."""

    def __init__(self, limit: int | None) -> None:
        self._limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        self._skipping = False

    def feed(self, chunk: bytes) -> list[bytes | TooLong]:
        found: list[bytes | TooLong] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if not self._skipping and piece:
                self._parts.append(piece)
                self._size += len(piece)
                if self._limit is not None and self._size > self._limit:
                    found.append(TooLong(b"".join(self._parts)[:HEAD], self._limit))
                    self._parts, self._size, self._skipping = [], 0, True
            if end < 0:
                return found
            if self._skipping:
                self._skipping = False
            else:
                found.append(b"".join(self._parts))
                self._parts, self._size = [], 0
            start = end + 1

    def rest(self) -> bytes:
        """The unfinished last line, when the stream has ended."""
        return b"" if self._skipping else b"".join(self._parts)
