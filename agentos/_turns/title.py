"""A session's title as text: a name someone gave it, or the first words the person said."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

TITLE_CHARS = 80
"""A title is at most this long: a given one is refused beyond it, first words are cut."""


def session_title(title: object) -> str | None:
    """``title`` as a session's name is kept: on one line, its runs of whitespace (newlines
    too) one space, trimmed; None for an empty one (the first words stand for the session
    again). ``TypeError`` unless a str; ``ValueError`` beyond ``TITLE_CHARS`` characters, so
    a name is never cut into something nobody wrote, and for a control or format character
    (an escape, a NUL, a right-to-left override: a name shows as it was typed)."""
    if not isinstance(title, str):
        raise TypeError(f"a title is a str, got {type(title).__name__}")
    words = " ".join(title.split())
    hidden = next((c for c in words if unicodedata.category(c) in ("Cc", "Cf")), None)
    if hidden is not None:
        raise ValueError(f"a title cannot hold control characters, got U+{ord(hidden):04X}")
    if len(words) > TITLE_CHARS:
        raise ValueError(f"a title is at most {TITLE_CHARS} characters, got {len(words)}")
    return words or None


def first_words(posts: Iterable[str]) -> str:
    """The first of the person's ``posts`` that says anything, on one line and cut at
    ``TITLE_CHARS``; empty if none does."""
    said = next((text for text in posts if text.strip()), "")
    words = " ".join(said.split())
    return words if len(words) <= TITLE_CHARS else words[: TITLE_CHARS - 1] + "…"
