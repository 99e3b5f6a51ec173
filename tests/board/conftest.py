"""What the board tests read a scripted model's request with: the turn's focus node
(``focus``), whether the person asked for something (``asks``), and the board as shown
(``board_text``)."""

from __future__ import annotations

from collections.abc import Callable

from agentos import ModelRequest
from agentos.board import BoardTurn
from agentos.testing import blocks_of
from agentos.testing import board_turn


def focus(request: ModelRequest) -> BoardTurn:
    """The node the request's turn is for: a user's post, or (a turn of the board's own)
    an agent's node whose calls ended or ran long."""
    turn = board_turn(request)
    assert turn is not None, "not a board request"
    return turn


def asks(words: str) -> Callable[[ModelRequest], bool]:
    """The turn is for a user node whose text has ``words``."""

    def asked(request: ModelRequest) -> bool:
        turn = board_turn(request)
        return turn is not None and turn.author == "user" and words in turn.text

    return asked


def board_text(request: ModelRequest) -> str:
    """The board the model was shown: the request's one user message."""
    (message,) = request.messages
    return "".join(str(block.get("text", "")) for block in blocks_of(message))
