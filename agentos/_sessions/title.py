"""A session's title: the name someone gave it, else the first words the person said."""

from __future__ import annotations

from collections.abc import Sequence

from agentos._board.board import Board
from agentos._board.data import BoardAuthor
from agentos._model.messages import Message, blocks_of, text_of

TITLE_CHARS = 80
"""A title is at most this long: a given one is refused beyond it, first words are cut."""


def session_title(title: object) -> str | None:
    """``title`` as a session's name is kept: on one line, its runs of whitespace (newlines
    too) one space, trimmed; None for an empty one (the first words stand for the session
    again). ``TypeError`` unless a str; ``ValueError`` beyond ``TITLE_CHARS`` characters, so
    a name is never cut into something nobody wrote."""
    if not isinstance(title, str):
        raise TypeError(f"a title is a str, got {type(title).__name__}")
    words = " ".join(title.split())
    if len(words) > TITLE_CHARS:
        raise ValueError(f"a title is at most {TITLE_CHARS} characters, got {len(words)}")
    return words or None


def first_words(board: Board | None, history: Sequence[Message], queued: Sequence[str]) -> str:
    """The person's first message, on one line and cut at ``TITLE_CHARS``: read off the
    board or the history (copies: the loop may add to them meanwhile), else the posts the
    model has not read yet; empty if the person has said nothing."""
    if board is not None:
        nodes = list(board.nodes.values())
        posts = [node.text for node in nodes if node.author is BoardAuthor.USER]
    else:
        user = [message for message in list(history) if message.get("role") == "user"]
        posts = [" ".join(text_of([block]) for block in blocks_of(message)) for message in user]
    said = next((text for text in posts if text.strip()), None)
    if said is None:
        said = next(iter(queued), "")
    words = " ".join(said.split())
    return words if len(words) <= TITLE_CHARS else words[: TITLE_CHARS - 1] + "…"
