"""A conversation's messages kept packed: one ``bytes`` each, built into dicts when read.

A history of Anthropic-format dicts is a dozen objects a turn that the cyclic collector
walks at every full collection, for as long as the session lives. Packed with ``marshal``
(in memory only, never stored: it keeps every builtin type as it is, tuples and bools
too) a message is one object the collector does not track, a seventh of the size; every
``CHUNK`` settled messages are then compressed together, a sixth again. A message
``marshal`` cannot pack (a value of a type of its own) is kept as it is.

``MessageLog`` is a transcript machine's history; ``PackedMessages`` an unchanging
stretch of it, read lazily: a request to the model and a view of the machine hold one
without building the messages no one reads. Both give a message packed as a fresh dict
each time it is read (changing it changes nothing kept), and the newest one as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from itertools import islice
from typing import overload

from agentos._model.messages import Message
from components import Packed
from components import Sealed
from components import opened
from components import pack
from components import seal
from components import unpack

CHUNK = 32
"""Messages sealed together into one chunk once they are all settled."""


class _Messages(Sequence[Message]):
    """Messages kept as ``_chunks`` of ``CHUNK`` each, then a ``_tail`` of the newest packed
    one by one: built from what is kept by index, by slice (a list), or in order, a chunk
    opened whole when any of its messages is read."""

    __slots__ = ()
    _chunks: Sequence[Sealed]
    _tail: Sequence[Packed]

    def __len__(self) -> int:
        return len(self._chunks) * CHUNK + len(self._tail)

    def __iter__(self) -> Iterator[Message]:
        return self._from(0)

    def __reversed__(self) -> Iterator[Message]:
        messages: list[Message] = list(self)
        messages.reverse()
        return iter(messages)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return list(self)[index]
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("message index out of range")
        settled = len(self._chunks) * CHUNK
        if index >= settled:
            message: Message = unpack(self._tail[index - settled])
        else:
            message = unpack(opened(self._chunks[index // CHUNK])[index % CHUNK])
        return message

    def between(self, start: int, end: int) -> Iterator[Message]:
        """The messages from ``start`` up to ``end``, in order: what a reader following the
        history has not read yet, without building the ones it has."""
        return islice(self._from(start), max(end - start, 0))

    def _from(self, start: int) -> Iterator[Message]:
        """The messages from ``start`` on, in order, each chunk opened once."""
        first, skip = divmod(start, CHUNK)
        chunks = self._chunks
        for number in range(first, len(chunks)):
            yield from map(unpack, opened(chunks[number])[skip:])
            skip = 0
        settled = len(chunks) * CHUNK
        for packed in self._tail[max(start - settled, 0) :]:
            yield unpack(packed)


class PackedMessages(_Messages):
    """An unchanging stretch of a history, each message built when it is read; equal to
    any list or tuple of the same messages, and shown as a list. Its chunks are the
    history's own: taking one copies a reference per ``CHUNK`` messages, not one per
    message of the whole history at every request."""

    __slots__ = ("_chunks", "_tail")

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        packed = tuple(pack(message) for message in messages)
        cut = len(packed) // CHUNK * CHUNK
        self._chunks: tuple[Sealed, ...] = tuple(
            seal(packed[start : start + CHUNK]) for start in range(0, cut, CHUNK)
        )
        self._tail: tuple[Packed, ...] = packed[cut:]

    @classmethod
    def _of(cls, chunks: tuple[Sealed, ...], tail: tuple[Packed, ...]) -> PackedMessages:
        made = cls.__new__(cls)
        made._chunks, made._tail = chunks, tail
        return made

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedMessages):
            same = self._chunks == other._chunks and self._tail == other._tail
            return same or list(self) == list(other)
        if isinstance(other, list | tuple):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists, so unhashable like them

    def __repr__(self) -> str:
        return repr(list(self))


class MessageLog(_Messages):
    """A transcript's history: appended to, its last message replaced (a partial user turn
    extended). Every message is packed but a last user message, the one a turn reads and
    extends: it is kept as it is (as a list of them would: the same dict each read) and
    packed once the next one comes. A model's message is packed as it comes: nothing
    extends it, and its blocks would otherwise live through the calls it asks for.
    Settled messages are sealed in chunks of ``CHUNK`` (``Sealed``): a full collection
    visits one reference per chunk, not one per message of every session's history (a
    list of 190 messages a session in the soak), and a chunk holds its messages in a
    sixth of the bytes."""

    __slots__ = ("_chunks", "_open", "_said", "_tail")

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        packed = [pack(message) for message in messages]
        cut = (len(packed) - 1) // CHUNK * CHUNK if packed else 0
        self._chunks: list[Sealed] | tuple[()] = [
            seal(tuple(packed[start : start + CHUNK])) for start in range(0, cut, CHUNK)
        ] or ()
        """A list once there is a chunk (a history under ``CHUNK`` messages keeps none)."""
        self._tail: list[Packed] = packed[cut:]
        """The newest messages (at least one if any): all packed but an open last one."""
        self._open = bool(self._tail)
        """The last message is kept as it is, not packed."""
        if self._open:
            self._tail[-1] = unpack(self._tail[-1])
        self._said: list[tuple[str, str]] | None = None
        """``said_upto``'s answer for the packed messages, once asked: they never change,
        so a title or the replies read again build only a newest user message."""

    def said_upto(self, count: int, said: Callable[[Message], str]) -> list[tuple[str, str]]:
        """Each of the first ``count`` messages' role and ``said(message)`` (always the same
        function: what the messages say is kept for those packed)."""
        if self._said is None:
            self._said = []
        kept, size = self._said, len(self)
        settled = min(count, size - 1 if self._open else size)
        if settled > len(kept):
            news = islice(self._from(len(kept)), settled - len(kept))
            kept.extend((str(message.get("role")), said(message)) for message in news)
        told = kept[:count]
        if count >= size > settled >= 0:
            message = self._tail[-1]  # open: kept as it is
            told.append((str(message.get("role")), said(message)))
        return told

    def open_user(self) -> Message | None:
        """The newest message if it is a user's that a turn may extend (kept as it is),
        else None: a model's, packed, is not built to be told apart."""
        if not self._open:
            return None
        last = self._tail[-1]
        return last if last.get("role") == "user" else None

    def append(self, message: Message) -> None:
        tail = self._tail
        if tail:
            if self._open:
                tail[-1] = pack(tail[-1])
            if len(tail) == CHUNK:
                if self._chunks:
                    self._chunks.append(seal(tuple(tail)))
                else:
                    self._chunks = [seal(tuple(tail))]
                self._tail = tail = []
        self._open = message.get("role") == "user"
        tail.append(message if self._open else pack(message))

    def replace_last(self, message: Message) -> None:
        self._tail[-1] = message
        self._open = True

    def settle(self) -> None:
        """Nothing will extend the newest message again (its conversation ended): pack it
        too, so an ended session keeps no message the collector walks."""
        if self._open:
            self._tail[-1] = pack(self._tail[-1])
            self._open = False

    def upto(self, count: int) -> PackedMessages:
        """The first ``count`` messages, unchanged by what is appended or replaced later."""
        full, rest = divmod(count, CHUNK)
        chunks = self._chunks
        if full < len(chunks):
            return PackedMessages._of(tuple(chunks[:full]), opened(chunks[full])[:rest])
        return PackedMessages._of(tuple(chunks), tuple(self._tail[: count - len(chunks) * CHUNK]))
