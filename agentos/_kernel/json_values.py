"""Turning what tools hand back into plain JSON values, checked once for every consumer.

A value that passes ``to_json`` encodes with ``dumps`` (the session's
encoder), with pydantic-core (the toolbox's) and as UTF-8 for the model: no
lone surrogates, no non-finite floats, no integers too long to print, nothing
nested deeper than JSON encoders accept.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Collection
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from components import Json

_SCALARS = (str, int, float, bool, type(None))
_SHORT_INT_BITS = 64
_NUMBERS = frozenset({int, float, bool, type(None)})
_SMALL_ITEMS = 16
_SMALL_TEXT = 1024
_END = object()
MAX_DEPTH = 200
"""Containers nested deeper than this are refused (encoders recurse)."""


class ResultTooLarge(ValueError):
    """The value's JSON text is longer than the limit it was checked against."""


def to_json(value: Any, *, limit: int | None = None) -> Json:
    """A plain JSON copy of ``value``; raises TypeError or ValueError if it has none.

    Pydantic models are dumped in JSON mode; containers are copied, so a tool
    that keeps mutating its own object cannot change a stored result. With
    ``limit``, JSON text longer than ``limit`` characters raises
    ``ResultTooLarge``; the size is estimated first, so a huge value is
    refused without encoding it.
    """
    if isinstance(value, _SCALARS):
        return _scalar(value, limit)
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if type(value) is dict and len(value) <= _SMALL_ITEMS:
        copy = _flat_copy(value, limit)
        if copy is not None:
            return copy
    if not _obviously_small(value):
        size = _estimate(value, math.inf if limit is None else limit)
        if limit is not None and size > limit:
            raise ResultTooLarge(f"its JSON text is over {limit:,} characters")
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    if limit is not None and len(text) > limit:
        raise ResultTooLarge(f"its JSON text is {len(text):,} characters, over {limit:,}")
    _check_unicode(text)
    return json.loads(text)  # type: ignore[no-any-return]


def dumps(value: Json) -> str:
    """The JSON text of a value ``to_json`` accepted, as the session writes it for the model
    (None, a bool and an int, which many tools return, without the encoder)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return int.__repr__(value)
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def safe_text(text: str) -> str:
    """``text`` with any lone surrogate replaced, so it encodes as UTF-8 (error messages)."""
    if text.isascii():
        return text
    return text.encode("utf-8", "replace").decode("utf-8")


def _scalar(value: str | int | float | bool | None, limit: int | None) -> Json:
    if isinstance(value, str):
        if limit is not None and len(value) + 2 > limit:
            raise ResultTooLarge(f"it is a string of {len(value):,} characters, over {limit:,}")
        _check_unicode(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} is not a JSON number")
    elif isinstance(value, int) and value.bit_length() > _SHORT_INT_BITS:
        _check_int(value)
    return value


def _check_unicode(text: str) -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"it holds a lone surrogate ({text[error.start]!r} at position {error.start}), "
            "which is not Unicode text"
        ) from None


def _check_int(value: int) -> None:
    try:
        repr(value)  # refused at once, before converting, past the interpreter's digit limit
    except ValueError:
        digits = sys.get_int_max_str_digits()
        raise ValueError(f"it holds an integer with more than {digits} digits") from None


def _obviously_small(value: object) -> bool:
    """A flat dict or list of a few short scalars: nothing to estimate or nest."""
    kind = type(value)
    children: Collection[object]
    if kind is dict:
        children = value.values()  # type: ignore[attr-defined]
    elif kind is list:
        children = value  # type: ignore[assignment]
    else:
        return False
    if len(children) > _SMALL_ITEMS:
        return False
    for child in children:
        if type(child) is str:
            if len(child) > _SMALL_TEXT:
                return False
        elif type(child) not in _NUMBERS:
            return False
    return True


def _flat_copy(value: dict[Any, Any], limit: int | None) -> Json | None:
    """A copy of a small dict of text keys and text, short int, bool or None values,
    without encoding it (progress entries and small results are most such), in one pass
    over it; None for anything else, which takes the encoder's round trip."""
    bound = 2
    for key, item in value.items():
        kind = type(item)
        if type(key) is not str:
            return None
        if kind is str:
            _check_unicode(item)
            bound += 6 * len(item) + 4  # every character escaped, quotes, ", "
        elif kind is bool or item is None or (kind is int and item.bit_length() <= _SHORT_INT_BITS):
            bound += 23  # -18446744073709551615, ", "
        else:
            return None
        _check_unicode(key)
        bound += 6 * len(key) + 4  # quotes, ": "
    if limit is not None and bound > limit:
        return None  # the encoder measures it exactly
    return dict(value)


def _estimate(value: object, limit: float) -> int:
    """About how long ``value``'s JSON text is, stopping as soon as that passes ``limit``.

    Also refuses nesting deeper than ``MAX_DEPTH``, which pydantic-core would.
    """
    size = 0
    stack: list[Iterator[object]] = [iter((value,))]
    while stack:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
        elif isinstance(item, str):
            size += len(item) + 3
        elif isinstance(item, dict):
            size += 2 + sum(len(key) + 4 if isinstance(key, str) else 24 for key in item)
            stack.append(iter(item.values()))
        elif isinstance(item, list | tuple):
            size += 2
            stack.append(iter(item))
        else:
            size += 24
        if size > limit:
            break
        if len(stack) > MAX_DEPTH + 1:
            raise ValueError(f"it is nested deeper than {MAX_DEPTH} levels")
    return size
