"""How a front end that shows calls to a person takes their questions: it leaves each one
waiting on its call (the page, the terminal UI show it, and answer through
``Host.answer``), instead of letting a host with nobody to ask decline it."""

from __future__ import annotations

from agentos import Answer
from agentos import Asked

ASK_TIMEOUT = 600.0
"""Seconds a client of ``agentos mcp`` or ``agentos a2a`` has to answer a question it was
shown before it is declined (their ``--ask-timeout``'s default)."""


async def held_for_a_person(asked: Asked) -> Answer | None:
    """The ``ask_person`` hook of a host a person watches: no answer now; theirs comes."""
    return None
