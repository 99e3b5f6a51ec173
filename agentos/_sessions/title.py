"""What the person said in a session, oldest first: where its first words come from."""

from __future__ import annotations

from collections.abc import Sequence

from agentos._board.board import Board
from agentos._board.data import BoardAuthor
from agentos._model.messages import Message, blocks_of, text_of


def person_posts(board: Board | None, history: Sequence[Message]) -> list[str]:
    """The person's messages, read off the board or the history: copies first, so a reader
    on another thread (``Host.list``) is not upset by the loop adding to them meanwhile."""
    if board is not None:
        nodes = list(board.nodes.values())
        return [node.text for node in nodes if node.author is BoardAuthor.USER]
    user = [message for message in list(history) if message.get("role") == "user"]
    return [" ".join(text_of([block]) for block in blocks_of(message)) for message in user]
