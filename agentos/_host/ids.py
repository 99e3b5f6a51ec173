"""Ids as a person reads and types them: the short form every screen shows, and the start of
an id (``MIN_PREFIX`` characters or more) taken for the whole id when it is the start of
only one, as git takes an abbreviated commit.

An id typed whole always means itself, even when it is also the start of a longer one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Iterable
from typing import TypeVar

from agentos._errors import AmbiguousIdError
from agentos._store.protocol import SessionStore

MIN_PREFIX = 6
"""The fewest characters taken as the start of an id; anything shorter names an id whole."""
SHORT = 8
"""How many characters of an id's random part ``short_id`` keeps."""
LISTED = 10
"""How many candidates an ``AmbiguousIdError``'s message names."""

_UUID_END = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
_STEM = re.compile(r"[A-Za-z]+[-_]")
"""The word an id starts with to say its kind (a model's ``toolu_``, ``session-``): kept
whole, the characters after it shortened."""

T = TypeVar("T")


def short_id(full: str) -> str:
    """What a screen shows of an id, typed back as its start: ``09a12183`` for a call's
    ``09a12183-…``, ``session-09a12183`` for ``session-<uuid>`` (whatever names the kind
    of id before a UUID stays), ``toolu_01AbCdEf`` for a model's ``toolu_…``; an id no
    longer than its first word and eight characters, whole."""
    uuid = _UUID_END.search(full)
    stem = _STEM.match(full)
    keep = (uuid.start() if uuid else stem.end() if stem else 0) + SHORT
    return full if len(full) <= keep else full[:keep]


def named_by(
    typed: str,
    candidates: Iterable[T],
    ids: Callable[[T], Iterable[str]],
    *,
    describe: Callable[[T], str],
    what: str,
) -> list[T]:
    """The candidates ``typed`` names: every one with an id equal to it (a whole id wins,
    and a model's id can repeat), else the one whose id starts with it (none when ``typed``
    is shorter than ``MIN_PREFIX``); [] when none does. ``AmbiguousIdError`` when it is
    the start of several ``what`` (``describe`` says what each is, after its short id)."""
    candidates = list(candidates)
    whole = [c for c in candidates if typed in ids(c)]
    if whole or len(typed) < MIN_PREFIX:
        return whole
    started = [c for c in candidates if any(i.startswith(typed) for i in ids(c))]
    if len(started) <= 1:
        return started
    names = [
        f"{short_id(next(i for i in ids(c) if i.startswith(typed)))} {describe(c)}" for c in started
    ]
    listed = ", ".join(names[:LISTED])
    if len(names) > LISTED:
        listed += f" and {len(names) - LISTED} more"
    raise AmbiguousIdError(
        f"{typed!r} is the start of several {what}' ids: {listed}; type more of the id",
        tuple(names),
    )


async def resolve_session_id(store: SessionStore, typed: str) -> str:
    """The id of the session ``typed`` names: itself if a session has that id, else the one
    session whose id starts with it; ``AmbiguousIdError`` (naming them) when several do.
    ``typed`` unchanged when none does, so the lookup that follows says it is unknown."""
    if len(typed) < MIN_PREFIX:
        return typed
    found = named_by(
        typed,
        await store.list_sessions(prefix=typed),
        lambda session: (session.session_id,),
        describe=lambda session: f"({_clipped(session.shown_title()) or 'untitled'})",
        what="sessions",
    )
    return found[0].session_id if found else typed


def _clipped(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
