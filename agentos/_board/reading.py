"""Reading a drawn board back: which node a turn is for, and what it says.

A board request names its turn's node only when that node is not drawn last
(``render.pointer``), so a scripted model, a test or a benchmark that answers
board turns reads the board as the model does: the ``>>`` line if there is
one, else the last node.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

_NODE = re.compile(
    r"^(?P<indent> *)(?P<marker>ok|\.\.) #(?P<id>\d+)(?: \(re (?P<refs>.*?)\))?"
    r" (?P<author>user|agent)(?: \(new thread\))?(?: (?P<text>'.*'|\".*\"))?$"
)
_POINTER = re.compile(r"^>> (?:turn for #(?P<id>\d+)(?:: |$))?(?P<note>.*)$")


@dataclass(frozen=True, slots=True)
class BoardTurn:
    """The node a board request's turn is for, as the board draws it."""

    node: int
    author: str
    """``user`` or ``agent``."""
    text: str
    """The node's text, unquoted."""
    note: str | None
    """What the ``>>`` line says besides naming the node (an overdue call, say)."""
    references: str | None
    """A user reply's ``re ...`` list: the calls of the node it answers, as they are now."""
    calls: tuple[str, ...]
    """The ``call #N ...`` lines drawn under the node."""
    lines: tuple[str, ...]
    """The whole board, line by line."""


def read_turn(board: str) -> BoardTurn | None:
    """The turn a drawn board asks for (None: not a board, or an empty one)."""
    lines = tuple(board.rstrip("\n").split("\n"))
    pointed = _POINTER.match(lines[-1]) if lines else None
    note = None
    node_id = None
    if pointed is not None:
        note = pointed["note"] or None
        node_id = None if pointed["id"] is None else int(pointed["id"])
    heads = [(i, _NODE.match(line)) for i, line in enumerate(lines)]
    found = [(i, head) for i, head in heads if head is not None]
    if not found:
        return None
    at, head = found[-1]
    if node_id is not None:
        at, head = next(((i, h) for i, h in found if int(h["id"]) == node_id), found[-1])
    calls = []
    for line in lines[at + 1 :]:
        if not line.lstrip().startswith("call #"):
            break
        calls.append(line.strip())
    quoted = head["text"]
    return BoardTurn(
        node=int(head["id"]),
        author=head["author"],
        text="" if quoted is None else str(ast.literal_eval(quoted)),
        note=note,
        references=head["refs"],
        calls=tuple(calls),
        lines=lines,
    )
