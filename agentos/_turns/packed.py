"""A conversation's messages kept packed: one ``bytes`` each, built into dicts when read.

A history of Anthropic-format dicts is a dozen objects a turn that the cyclic collector
walks at every full collection, for as long as the session lives. Packed with ``marshal``
(in memory only, never stored: it keeps every builtin type as it is, tuples and bools
too) a message is one object the collector does not track, a seventh of the size. A
message ``marshal`` cannot pack (a value of a type of its own) is kept as it is.

``MessageLog`` is a transcript machine's history; ``PackedMessages`` an unchanging
stretch of it, read lazily: a request to the model and a view of the machine hold one
without building the messages no one reads. Both give a message packed as a fresh dict
each time it is read (changing it changes nothing kept), and the newest one as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import overload

from agentos._model.messages import Message
from components import Packed, pack, unpack


class _Messages(Sequence[Message]):
    """Messages read out of ``_packed``: by index, by slice (a list), or in order."""

    __slots__ = ()
    _packed: Sequence[Packed]

    def __len__(self) -> int:
        return len(self._packed)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return [unpack(packed) for packed in self._packed[index]]
        message: Message = unpack(self._packed[index])
        return message

    def __iter__(self) -> Iterator[Message]:
        return map(unpack, self._packed)


class PackedMessages(_Messages):
    """An unchanging stretch of a history, each message built when it is read; equal to
    any list or tuple of the same messages, and shown as a list."""

    __slots__ = ("_packed",)

    def __init__(self, packed: Iterable[Packed] = ()) -> None:
        self._packed = tuple(packed)

    def __reversed__(self) -> Iterator[Message]:
        return map(unpack, reversed(self._packed))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedMessages):
            return self._packed == other._packed or list(self) == list(other)
        if isinstance(other, list | tuple):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists, so unhashable like them

    def __repr__(self) -> str:
        return repr(list(self))


class MessageLog(_Messages):
    """A transcript's history: appended to, its last message replaced (a partial user turn
    extended). Every message but the last is packed; the last, the one a turn reads and
    extends, is kept as it is (as a list of them would: the same dict each read) and
    packed once the next one comes."""

    __slots__ = ("_packed", "_said")

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._packed: list[Packed] = [pack(message) for message in messages]
        if self._packed:
            self._packed[-1] = unpack(self._packed[-1])
        self._said: list[tuple[str, str]] = []
        """``said_upto``'s answer for the first packed messages, once asked: they never
        change, so a title or the replies read again build only the newest."""

    def said_upto(self, count: int, said: Callable[[Message], str]) -> list[tuple[str, str]]:
        """Each of the first ``count`` messages' role and ``said(message)`` (always the same
        function: what the messages say is kept for those packed)."""
        packed, kept = self._packed, self._said
        settled = min(count, len(packed) - 1)
        for index in range(len(kept), settled):
            message = unpack(packed[index])
            kept.append((str(message.get("role")), said(message)))
        told = kept[:count]
        if count >= len(packed) > settled >= 0:
            message = unpack(packed[-1])
            told.append((str(message.get("role")), said(message)))
        return told

    def append(self, message: Message) -> None:
        packed = self._packed
        if packed:
            packed[-1] = pack(packed[-1])
        packed.append(message)

    def replace_last(self, message: Message) -> None:
        self._packed[-1] = message

    def upto(self, count: int) -> PackedMessages:
        """The first ``count`` messages, unchanged by what is appended or replaced later."""
        return PackedMessages(self._packed[:count])
