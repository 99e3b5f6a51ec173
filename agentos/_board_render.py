"""Drawing the board for the model (seed 004): one line per node and per call.

Threads go in order of last activity, the focus thread last; within a thread
nodes go depth-first, children in creation order, indented two spaces a level.
A line holds nothing that changes unless its thread is touched (no times, no
counts), so a thread whose calls have all landed renders byte-identically
until something is written to it: ``Rendered.stable_chars`` counts the leading
threads of that kind, where a prompt-cache breakpoint can go.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from agentos._board_data import (
    CANCEL_TOOL,
    NEW_THREAD_TOOL,
    STATUS_TOOL,
    Author,
    BoardCall,
    BoardNode,
    Rendered,
)

if TYPE_CHECKING:
    from agentos._board import Board

INDENT = "  "
"""Per level of depth."""
CALL_INDENT = "   "
"""A call's line starts under its node's ``#``, past the marker."""

NOTATION = (
    "The conversation comes to you as a message board, drawn afresh every turn, not as a "
    "chat transcript. A thread starts at the left margin; a reply is indented two spaces "
    "under the node it answers; threads are ordered by last activity, the most recently "
    "active last. Each node line starts with a marker, `..` open (a user message with no "
    "answer anywhere below it yet, or an agent turn whose work is still running) or `ok` "
    "done, then its id (`#7`: nodes and calls share one counter, in the order they were "
    "made), who wrote it (`user` or `agent`) and its text in quotes. The `call #8 "
    "tool(arguments) ...` lines under an agent node are the calls that turn made, each with "
    "its outcome once it ends (completed, failed or cancelled). A call still running says so "
    f"and gives its id: inspect it with {STATUS_TOOL} or stop it with {CANCEL_TOOL}, passing "
    "that id; its line will be replaced by the outcome, and you are given a turn when every "
    "call of a node has ended, so there is no need to poll. A user reply under a node with "
    "calls lists those calls' current state in parentheses (`re #8 tool: running`). The line "
    "starting with `>>` after the board says why this turn happens and which node it is for; "
    "your answer goes under that node. To tell the person something outside the current "
    f"thread (for example, to ask how to go on), call {NEW_THREAD_TOOL}(text): it opens a new "
    "thread whose text the person sees. Write your replies as plain words: never write board "
    "markup (markers, `#` ids, `call` lines, indentation, `>>`) in them; the board is drawn "
    "for you."
)
"""The system prompt's one explanation of the board's notation (and that it is not to be
echoed): appended to a board agent's system prompt."""


def render_board(board: Board, focus: int | None, note: str | None) -> Rendered:
    """The whole board, the focus node's thread last and ``note`` after it."""
    roots = board.threads()
    if focus is not None:
        root = board.root_of(focus)
        roots.remove(root)
        roots.append(root)
    parts: list[str] = []
    stable_chars = 0
    stable = True
    for root in roots:
        text, landed = render_thread(board, root)
        parts.append(text)
        if stable and landed:
            stable_chars += len(text)
        else:
            stable = False
    if note is not None:
        parts.append(f">> turn for #{focus}: {note}\n" if focus is not None else f">> {note}\n")
    return Rendered("".join(parts), stable_chars)


def render_thread(board: Board, root: int) -> tuple[str, bool]:
    """One thread's lines, and whether every call in it has ended (it cannot change
    until it is touched)."""
    nodes = board.nodes
    order: list[tuple[BoardNode, int]] = []
    stack = [(root, 0)]
    while stack:
        node_id, depth = stack.pop()
        order.append((nodes[node_id], depth))
        stack.extend((child, depth + 1) for child in reversed(board.children(node_id)))
    answered: set[int] = set()
    """User nodes with an answer anywhere below them."""
    for node, _ in reversed(order):
        if node.parent is not None and (
            node.display_id in answered or (node.author is Author.AGENT and node.text)
        ):
            answered.add(node.parent)
    lines: list[str] = []
    landed = True
    for node, depth in order:
        indent = INDENT * depth
        lines.append(indent + node_line(board, node, node.display_id in answered))
        for call in node.calls:
            landed = landed and call.status.is_final
            lines.append(f"{indent}{CALL_INDENT}{call_line(call)}")
    lines.append("")
    return "\n".join(lines), landed


def node_line(board: Board, node: BoardNode, answered: bool) -> str:
    """``ok #2 agent 'text'``: the marker, id, author, and the text quoted on one line."""
    if node.author is Author.USER:
        done = answered
    else:
        done = all(call.status.is_final for call in node.calls if call.background)
    line = f"{'ok' if done else '..'} #{node.display_id} {node.author.value}"
    if node.new_thread:
        line += " (new thread)"
    if node.text or node.author is Author.USER:
        line += " " + quote(node.text)
    if node.author is Author.USER and node.parent is not None:
        line += references(board.nodes[node.parent])
    return line


def references(parent: BoardNode) -> str:
    """`` (re #3 fetch: running, #4 fetch: completed)``: the state now of the background
    calls of the node a user reply answers ("" if it has none)."""
    calls = [call for call in parent.calls if call.background]
    if not calls:
        return ""
    listed = ", ".join(f"#{call.display_id} {call.tool}: {call.status.value}" for call in calls)
    return f" (re {listed})"


def call_line(call: BoardCall) -> str:
    """A call as it stands: its outcome once final, an instruction while it runs."""
    head = f"call #{call.display_id} {signature(call)}"
    if call.status.is_final:
        if call.outcome is None:
            return f"{head} {call.status.value}"
        return f"{head} {call.status.value}: {quote(call.outcome)}"
    if call.background:
        return pending_instruction(call)
    return f"{head} not answered yet"


def pending_instruction(call: BoardCall) -> str:
    """How a running call reads on the board: what runs, its id, what may be done with it
    (``get_tool_call_status`` to inspect, ``cancel_tool_call`` to stop it), and that the line
    will be replaced by its outcome."""
    call_id = json.dumps(call.call_id)
    return (
        f"call #{call.display_id} {signature(call)} {call.status.value.upper()} as id {call_id}:"
        f" inspect it with {STATUS_TOOL}(tool_call_id={call_id}) or stop it with"
        f" {CANCEL_TOOL}(tool_call_id={call_id}); this line will be replaced by its outcome"
    )


def signature(call: BoardCall) -> str:
    """``fetch_calendar(person="Jane")``: the tool and its arguments, JSON-quoted."""
    arguments = ", ".join(
        f"{name}={json.dumps(value, ensure_ascii=False, default=str)}"
        for name, value in call.arguments.items()
    )
    return f"{call.tool}({arguments})"


def quote(text: str) -> str:
    """Python's ``repr``: quoted and escaped, so a newline in text cannot break the layout."""
    return repr(text)
