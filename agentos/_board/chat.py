"""The person's view of the board: the plain chat a UI shows.

Every user post is shown. An agent node is shown by the table of what a person sees, on why
its turn happened and what it did (below); a ``new_thread`` post is always
shown, an agent node with no text never. Nothing is deleted from the board:
a hidden node that started background work still puts its call widgets on
screen (an entry with no text), so a silent retry shows a fresh spinner. An
answer that lands after a later question reintroduces itself by quoting the
question it answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentos._board.data import BoardAct
from agentos._board.data import BoardAuthor
from agentos._board.data import BoardNode
from agentos._board.data import BoardTrigger
from agentos._turns.chat import SHOWN_WORDS
from agentos._turns.chat import ChatCall
from agentos._turns.chat import ChatEntry

if TYPE_CHECKING:
    from agentos._board.board import Board

SHOWN: frozenset[tuple[BoardTrigger, BoardAct]] = frozenset(
    (BoardTrigger(trigger), BoardAct(act)) for trigger, act in SHOWN_WORDS
)
"""The table of what a person sees (``SHOWN_WORDS``) in the board's own terms."""

QUESTION_CHARS = 60
"""How much of an earlier question a late answer quotes."""


def chat_entries(board: Board) -> list[ChatEntry]:
    """The chat, in creation order."""
    entries: list[ChatEntry] = []
    asked: dict[int, int] = {}
    """Node -> the nearest user node at or above it."""
    latest_user: int | None = None
    for node_id, node in board.nodes.items():
        if node.parent is not None and node.parent in asked:
            asked[node_id] = asked[node.parent]
        if node.author is BoardAuthor.USER:
            asked[node_id] = node_id
            latest_user = node_id
            entries.append(ChatEntry(node_id, BoardAuthor.USER.value, node.text, node.at))
            continue
        calls = widgets(node)
        if not shown(board, node):
            if calls:
                entries.append(ChatEntry(node_id, BoardAuthor.AGENT.value, "", node.at, calls))
            continue
        text = node.text
        question = asked.get(node_id)
        if question is not None and question != latest_user:
            text = f'Regarding "{shorten(board.nodes[question].text)}": {node.text}'
        entries.append(ChatEntry(node_id, BoardAuthor.AGENT.value, text, node.at, calls))
    return entries


def shown(board: Board, node: BoardNode) -> bool:
    """Whether the person sees an agent node's words."""
    if node.new_thread:
        return True
    if not node.text or node.trigger is None:
        return False
    return (node.trigger, board.did(node.display_id)) in SHOWN


def widgets(node: BoardNode) -> tuple[ChatCall, ...]:
    """The node's background calls as the person sees them: a spinner or a mark."""
    return tuple(
        ChatCall(call.display_id, call.call_id, call.tool_name, dict(call.tool_input), call.status)
        for call in node.calls
        if call.background
    )


def shorten(question: str) -> str:
    """The question on one line, cut at a word near ``QUESTION_CHARS`` with an ellipsis."""
    flat = " ".join(question.split())
    if len(flat) <= QUESTION_CHARS:
        return flat
    cut = flat[:QUESTION_CHARS].rsplit(" ", 1)[0] or flat[:QUESTION_CHARS]
    return cut.rstrip(",;:.") + "…"
