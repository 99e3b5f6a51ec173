"""Drawing the board for the model: one line per node and per call.

Threads go in order of last activity, the focus thread last; within a thread
nodes go depth-first, children in creation order, indented two spaces a level.
A line holds nothing that changes unless its thread is touched (no times, no
counts), so a thread whose calls have all landed renders byte-identically
until something is written to it: ``BoardRendering.stable_chars`` counts the leading
threads of that kind, where a prompt-cache breakpoint can go.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence

from agentos._board.data import CANCEL_TOOL
from agentos._board.data import NEW_THREAD_TOOL
from agentos._board.data import STATUS_TOOL
from agentos._board.data import BoardAuthor
from agentos._board.data import BoardCall
from agentos._board.data import BoardNode
from agentos._board.data import BoardRendering
from agentos._board.data import BoardTrigger
from agentos._turns.capabilities import CAPABILITIES
from components import FINAL_STATUSES
from components import CallStatus

INDENT = "  "
"""Per level of depth."""
CALL_INDENT = "   "
"""A call's line starts under its node's ``#``, past the marker."""
REFERENCE_CHARS = 200
"""Characters of a settled call's outcome a user reply's reference quotes."""


def notation(capabilities: Collection[str] = CAPABILITIES) -> str:
    """The system prompt's one explanation of the board's notation (and that it is not to be
    echoed), naming only the ``capabilities`` the agent has: appended to a board agent's
    system prompt."""
    return (
        "The conversation comes to you as a message board, drawn afresh every turn, not as a "
        "chat transcript. A thread starts at the left margin; a reply is indented two spaces "
        "under the node it answers; threads are ordered by last activity, the most recently "
        "active last. Each node line starts with a marker, `..` open (a user message with no "
        "finished answer below it yet, or an agent turn whose work is still running) or `ok` "
        "done, then its id (`#7`: nodes and calls share one counter, in the order they were "
        "made), who wrote it (`user` or `agent`) and its text in quotes. The `call #8 "
        "tool(arguments) ...` lines under an agent node are the calls that turn made, each "
        "with its outcome once it ends (completed, failed or cancelled). A call still running "
        f"says so and gives its id{_affordances(capabilities, ', passing that id')}; its line "
        "will be replaced by the outcome, and you are given a turn when every call of a node "
        "has ended, so there is no need to poll. A user reply under a node with calls states "
        "those calls as they are now, in parentheses before `user` (`#9 (re #8 tool: "
        "running) user ...`). Your answer goes under the last node of the board, unless a "
        "last line starting with `>>` names the node this turn is for (and may say why it "
        "happens). To tell the person something outside the current thread (for example, to "
        f"ask how to go on), call {NEW_THREAD_TOOL}(text): it opens a new thread whose text "
        "the person sees, and ends your turn. Write your replies as plain words: never write "
        "board markup (markers, `#` ids, `call` lines, indentation, `>>`) in them; the board "
        "is drawn for you."
    )


def _affordances(capabilities: Collection[str], passing: str = "") -> str:
    """``: inspect it with ... or stop it with ...`` for the capabilities the agent has."""
    can = []
    if STATUS_TOOL in capabilities:
        can.append(f"inspect it with {STATUS_TOOL}")
    if CANCEL_TOOL in capabilities:
        can.append(f"stop it with {CANCEL_TOOL}")
    return f": {' or '.join(can)}{passing}" if can else ""


NOTATION = notation()
"""The notation for an agent with every capability."""


class Drawn:
    """Lines already drawn, so a rendering costs what changed, not the whole board.

    A call's line is kept with the status and outcome it was drawn from and redrawn when
    either is another object; a node's head is kept with its text. A call's tool and
    arguments never change once it is added, so they are not checked.
    """

    def __init__(self, capabilities: Collection[str] = CAPABILITIES) -> None:
        self.capabilities = frozenset(capabilities)
        """What a pending call's instruction offers: a drawing is for one set."""
        self._calls: dict[int, tuple[CallStatus, str | None, str]] = {}
        self._heads: dict[int, tuple[str, str]] = {}

    def call(self, call: BoardCall) -> str:
        """``call_line(call)``, from the cache while the call has not moved."""
        kept = self._calls.get(call.display_id)
        if kept is not None and kept[0] is call.status and kept[1] is call.outcome:
            return kept[2]
        line = call_line(call, self.capabilities)
        self._calls[call.display_id] = (call.status, call.outcome, line)
        return line

    def head(self, node: BoardNode) -> str:
        """``agent 'text'``: who wrote a node and what, its line past the id and references."""
        kept = self._heads.get(node.display_id)
        if kept is not None and kept[0] is node.text:
            return kept[1]
        head = node.author.value
        if node.new_thread:
            head += " (new thread)"
        if node.text or node.author is BoardAuthor.USER:
            head += " " + quote(node.text)
        self._heads[node.display_id] = (node.text, head)
        return head


def render_board(
    nodes: Mapping[int, BoardNode],
    children: Mapping[int, Sequence[int]],
    threads: list[int],
    focus: int | None,
    roots: Mapping[int, int],
    note: str | None,
    drawn: Drawn,
) -> BoardRendering:
    """The whole board: ``threads`` (roots, least recently touched first), the focus
    node's thread last, then ``pointer``'s line."""
    focus_root = None if focus is None else roots[focus]
    if focus_root is not None:
        threads.remove(focus_root)
        threads.append(focus_root)
    parts: list[str] = []
    breaks: list[int] = []
    offset = stable_chars = settled_chars = 0
    stable = settled = True
    for root in threads:
        chunks, landed = render_thread(nodes, children, root, drawn)
        stable = stable and landed
        for chunk, live in chunks:
            settled = settled and ((stable and root != focus_root) or not live)
            parts.append(chunk)
            offset += len(chunk)
            breaks.append(offset)
            if stable:
                stable_chars = offset
            if settled:
                settled_chars = offset
    last = _last_node(children, threads[-1]) if threads else None
    line = pointer(focus, last, note)
    if line is not None:
        parts.append(line)
    return BoardRendering("".join(parts), stable_chars, settled_chars, tuple(breaks))


def pointer(focus: int | None, last: int | None, note: str | None) -> str | None:
    """The board's last line: the node the turn is for when another node is drawn last, and
    the turn's note (None: neither, the answer goes under the last node)."""
    said = [] if focus is None or focus == last else [f"turn for #{focus}"]
    if note is not None:
        said.append(note)
    return f">> {': '.join(said)}\n" if said else None


def _last_node(children: Mapping[int, Sequence[int]], root: int) -> int:
    """The node drawn last in a thread: depth-first, the newest child's newest child."""
    node = root
    while children[node]:
        node = children[node][-1]
    return node


def render_thread(
    nodes: Mapping[int, BoardNode],
    children: Mapping[int, Sequence[int]],
    root: int,
    drawn: Drawn,
) -> tuple[list[tuple[str, bool]], bool]:
    """One thread's lines, a chunk per node (with whether the chunk is live: an open marker,
    a running call or a reference to one), and whether every call in it has ended (then it
    cannot change until it is touched)."""
    order: list[tuple[int, int]] = []
    stack = [(root, 0)]
    while stack:
        node_id, depth = stack.pop()
        order.append((node_id, depth))
        below = children[node_id]
        if below:
            stack.extend((child, depth + 1) for child in reversed(below))
    answered: set[int] = set()
    """Nodes with an answer anywhere below them (``is_answer``)."""
    for node_id, _ in reversed(order):
        node = nodes[node_id]
        if node.parent is not None and (node_id in answered or is_answer(node)):
            answered.add(node.parent)
    chunks: list[tuple[str, bool]] = []
    landed = True
    for node_id, depth in order:
        node = nodes[node_id]
        indent = INDENT * depth
        moving = False
        if node.author is BoardAuthor.USER:
            done = node_id in answered
            parent = None if node.parent is None else nodes[node.parent]
            refs = "" if parent is None else references(parent)
            moving = parent is not None and any(
                c.status not in FINAL_STATUSES for c in parent.calls if c.background
            )
        else:
            done = _done(node)
            refs = ""
        marker = "ok" if done else ".."
        lines = [f"{indent}{marker} #{node_id}{refs} {drawn.head(node)}"]
        if node.calls:
            under = indent + CALL_INDENT
            for call in node.calls:
                final = call.status in FINAL_STATUSES
                landed = landed and final
                moving = moving or not final
                lines.append(under + drawn.call(call))
        lines.append("")
        chunks.append(("\n".join(lines), moving or not done))
    return chunks, landed


def _done(node: BoardNode) -> bool:
    return all(c.status in FINAL_STATUSES for c in node.calls if c.background)


def is_answer(node: BoardNode) -> bool:
    """An agent node that answers the questions above it: a turn's last word (text, no call)
    in a turn the person or a result prompted (a timer's turn speaks to nobody). It never
    depends on a call's status, so a call settling leaves the markers above its node as they
    were drawn (the stable prefix the prompt cache reads); the answer the result prompts is
    a node of its own, below."""
    return (
        node.author is BoardAuthor.AGENT
        and bool(node.text)
        and not node.calls
        and node.trigger is not BoardTrigger.TIMER
    )


def references(parent: BoardNode) -> str:
    """`` (re #3 fetch: running, #4 fetch: completed 'free 9-12')``: the state now of the
    background calls of the node a user reply answers, a settled one's outcome quoted up to
    ``REFERENCE_CHARS`` ("" if it has none)."""
    listed = ", ".join(_reference(call) for call in parent.calls if call.background)
    return f" (re {listed})" if listed else ""


def _reference(call: BoardCall) -> str:
    said = f"#{call.display_id} {call.tool_name}: {call.status.value}"
    if call.status.is_final and call.outcome is not None:
        outcome = call.outcome
        if len(outcome) > REFERENCE_CHARS:
            outcome = outcome[:REFERENCE_CHARS] + "…"
        said += " " + quote(outcome)
    return said


def call_line(call: BoardCall, capabilities: Collection[str] = CAPABILITIES) -> str:
    """A call as it stands: its outcome once final, an instruction while it runs."""
    head = f"call #{call.display_id} {signature(call)}"
    if call.status.is_final:
        if call.outcome is None:
            return f"{head} {call.status.value}"
        return f"{head} {call.status.value}: {quote(call.outcome)}"
    if call.background:
        return pending_instruction(call, capabilities)
    return f"{head} not answered yet"


def pending_instruction(call: BoardCall, capabilities: Collection[str] = CAPABILITIES) -> str:
    """How a running call reads on the board: what runs, its id, what the agent may do with
    it (inspect it with ``get_tool_call_status``, stop it with ``cancel_tool_call``: only
    those of its ``capabilities``), and that the line will be replaced by its outcome."""
    call_id = json.dumps(call.call_id)
    can = []
    if STATUS_TOOL in capabilities:
        can.append(f"inspect it with {STATUS_TOOL}(tool_call_id={call_id})")
    if CANCEL_TOOL in capabilities:
        can.append(f"stop it with {CANCEL_TOOL}(tool_call_id={call_id})")
    offered = f" {' or '.join(can)};" if can else ""
    return (
        f"call #{call.display_id} {signature(call)} {call.status.value.upper()} as id {call_id}:"
        f"{offered} this line will be replaced by its outcome"
    )


def signature(call: BoardCall) -> str:
    """``fetch_calendar(person="Jane")``: the tool and its arguments, JSON-quoted."""
    arguments = ", ".join(
        f"{name}={json.dumps(value, ensure_ascii=False, default=str)}"
        for name, value in call.tool_input.items()
    )
    return f"{call.tool_name}({arguments})"


def quote(text: str) -> str:
    """Python's ``repr``: quoted and escaped, so a newline in text cannot break the layout."""
    return repr(text)
