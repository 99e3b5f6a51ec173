"""JSON values kept in a form the cyclic collector does not track, built again when read.

A dict or list, even one holding only text and numbers, keeps a tuple that holds it
tracked; packed with ``marshal`` (in memory only, never stored: it keeps every builtin
type as it is, tuples and bools too) it is one ``bytes`` object, untracked and smaller. A
value ``marshal`` cannot pack (a value of a type of its own) is kept as it is.
"""

from __future__ import annotations

import marshal
import zlib
from typing import Any

Packed = Any
"""A value as kept: ``marshal`` bytes for a container, a str, number, bool or None as it
is (the collector tracks none of them), or a value ``marshal`` cannot pack, as given."""

_ATOMS = (str, int, float, bool, type(None))


def pack(value: Any) -> Packed:
    """``value`` in a form the collector does not track, where it can be (``unpack``)."""
    if type(value) in _ATOMS:
        return value
    try:
        return kept_bytes(marshal.dumps(value))
    except ValueError:  # a value marshal does not know: kept as given, as a list would
        return value


def kept_bytes(dumped: bytes) -> bytes:
    """A copy of ``dumped`` of its own size, for keeping: ``marshal`` grows its buffer past
    the small-object allocator's 512 bytes and shrinks it in place, which left every kept
    value in the C heap, between the freed tails that fragment it (~40 % more memory)."""
    return bytes(memoryview(dumped))


def unpack(packed: Packed) -> Any:
    """The value ``pack`` took (a fresh one for a container: the caller's to change)."""
    return marshal.loads(packed) if type(packed) is bytes else packed


Sealed = bytes | tuple[Any, ...]
"""Values that never change again, kept together (``seal``)."""


def seal(values: tuple[Any, ...]) -> Sealed:
    """``values`` marshalled together and compressed (zlib, level 1: a run of values of one
    shape takes a sixth of what they take packed one by one; 5 µs to open); the tuple as
    it is when one of them is a value ``marshal`` cannot pack."""
    try:
        return zlib.compress(marshal.dumps(values), 1)
    except ValueError:
        return values


def opened(sealed: Sealed) -> tuple[Any, ...]:
    """The values ``seal`` took (fresh ones, for containers)."""
    if type(sealed) is bytes:
        values: tuple[Any, ...] = marshal.loads(zlib.decompress(sealed))
        return values
    return sealed  # type: ignore[return-value]  # a tuple: marshal could not pack it
