"""The message board: what a board agent reads instead of a transcript.

A node is one turn: a user message, or an agent turn with its text and every
call it made. Replies hang under the node they answer; calls hang off the
node that made them. Threads are ordered by last activity (the most recently
touched renders last); within a thread, nodes go depth-first by creation.
Nodes and calls share one counter of display ids (``#1``, ``#2``, ...),
given in creation order, so they are stable and deterministic.

``Board`` is pure data: it never awaits and never reads a clock (times come
in as arguments). The board turn machine (``machine``) moves it; this
module only records and answers questions about the tree; ``render``
draws it for the model and ``chat`` projects it for the person.
"""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from agentos._board.chat import chat_entries
from agentos._board.data import CANCEL_TOOL
from agentos._board.data import NEW_THREAD_TOOL
from agentos._board.data import STATUS_TOOL
from agentos._board.data import BoardAct
from agentos._board.data import BoardAuthor
from agentos._board.data import BoardCall
from agentos._board.data import BoardNode
from agentos._board.data import BoardRendering
from agentos._board.data import BoardTrigger
from agentos._board.reading import BoardTurn
from agentos._board.reading import read_turn
from agentos._board.render import NOTATION
from agentos._board.render import Drawn
from agentos._board.render import is_answer
from agentos._board.render import notation
from agentos._board.render import pending_instruction
from agentos._board.render import render_board
from agentos._turns.capabilities import CAPABILITIES
from agentos._turns.chat import ChatCall
from agentos._turns.chat import ChatEntry
from components import CallStatus
from components import Json
from components import JsonObject

__all__ = [
    "CANCEL_TOOL",
    "NEW_THREAD_TOOL",
    "NOTATION",
    "STATUS_TOOL",
    "Board",
    "BoardAct",
    "BoardAuthor",
    "BoardCall",
    "BoardNode",
    "BoardRendering",
    "BoardTrigger",
    "BoardTurn",
    "ChatCall",
    "ChatEntry",
    "notation",
    "pending_instruction",
    "read_turn",
]


class Board:
    """The nodes of one session's board, and what can be asked of them.

    Every write goes through a method. A post in a thread (a user message, an agent
    turn, its text and calls) moves the thread last; a call settling or starting to run
    changes its line in place. That order is what ``render`` shows, and what keeps
    untouched threads byte-stable.
    """

    def __init__(self) -> None:
        self.nodes: dict[int, BoardNode] = {}
        """Every node by display id, in creation order."""
        self._next_id = 1
        self._children: dict[int, list[int]] = {}
        self._root: dict[int, int] = {}
        self._threads: dict[int, None] = {}
        """Roots, the least recently touched first (a dict keeps insertion order)."""
        self._calls: dict[str, list[BoardCall]] = {}
        """By call id; a provider's ids may repeat across turns, so the newest is last."""
        self._by_use: dict[str, BoardCall] = {}
        """Background calls by the model's tool_use id (a cancel may name either id)."""
        self._node_of: dict[int, BoardNode] = {}
        """A call's display id -> the node that made it."""
        self._drawn = Drawn()
        self.version = 0
        """Grows with every write (each touches its thread): a drawing of an unchanged
        version is the same drawing."""

    # ------------------------------------------------------------ writing

    def posts(self, author: BoardAuthor) -> list[str]:
        """The text of each of ``author``'s nodes, oldest first: of a copy, so a reader on
        another thread (``Host.list``) is not upset by the loop adding nodes meanwhile."""
        return [node.text for node in list(self.nodes.values()) if node.author is author]

    def post_user(self, text: str, *, reply_to: int | None = None, at: float = 0.0) -> BoardNode:
        """A user message: a new root, or a reply under ``reply_to`` (``KeyError`` if unknown)."""
        if reply_to is not None:
            self._node(reply_to)
        return self._add_node(reply_to, BoardAuthor.USER, text=text, at=at)

    def open_turn(
        self, parent: int, trigger: BoardTrigger, *, at: float = 0.0, text: str = ""
    ) -> BoardNode:
        """An agent node under ``parent`` for one model answer."""
        self._node(parent)
        return self._add_node(parent, BoardAuthor.AGENT, text=text, trigger=trigger, at=at)

    def new_thread(self, text: str, *, at: float = 0.0) -> BoardNode:
        """An agent root posted by the ``new_thread`` capability."""
        return self._add_node(None, BoardAuthor.AGENT, text=text, new_thread=True, at=at)

    def write(self, node_id: int, text: str) -> BoardNode:
        """Set an agent node's text (the model's words for its turn): a post, its thread
        moves last."""
        node = self._node(node_id)
        node.text = text
        self._move_last(node_id)
        return node

    def add_call(
        self,
        node_id: int,
        call_id: str,
        tool_name: str,
        tool_input: JsonObject,
        *,
        background: bool,
        use_id: str | None = None,
    ) -> BoardCall:
        """Hang a call off ``node_id`` (an agent node): part of its turn, the thread moves last."""
        node = self._node(node_id)
        if node.author is not BoardAuthor.AGENT:
            raise ValueError(f"calls hang off agent nodes; #{node_id} is the user's")
        call = BoardCall(
            self._take_id(), call_id, tool_name, dict(tool_input), background, use_id=use_id
        )
        node.calls.append(call)
        self._index(call, node)
        self._move_last(node_id)
        return call

    def settle(self, call_id: str, status: CallStatus, outcome: str) -> BoardNode:
        """A call ended (or a capability answered): its node. The call's line changes where it
        is; the thread keeps its place (only a post moves a thread).

        A final status is absorbing: settling a call that already ended changes nothing.
        """
        if not status.is_final:
            raise ValueError(f"settle takes a final status, not {status.value!r}: use set_status")
        call = self._call(call_id)
        node = self._node_of[call.display_id]
        if not call.status.is_final:
            call.status = status
            call.outcome = outcome
            self.version += 1
        return node

    def set_status(self, call_id: str, status: CallStatus) -> None:
        """A background call started running (not final: ``settle`` for that); the thread
        keeps its place."""
        if status.is_final:
            raise ValueError(f"{status.value!r} is final: use settle")
        call = self._call(call_id)
        if not call.status.is_final and call.status != status:
            call.status = status
            self.version += 1

    def rekey(self, call_id: str, new_id: str) -> None:
        """The call now runs under ``new_id`` (a deferred call re-created after a restart):
        the board knows it, and shows it, by that id (the thread keeps its place)."""
        call = self._call(call_id)
        same = self._calls[call_id]
        same.remove(call)
        if not same:
            del self._calls[call_id]
        call.call_id = new_id
        self._calls.setdefault(new_id, []).append(call)
        self._drawn = Drawn()  # its drawn line names the old id
        self.version += 1

    # ------------------------------------------------------------ storing

    def to_json(self) -> JsonObject:
        """The board as JSON, for the store: its nodes with their calls, and the thread order."""
        nodes: list[Json] = [_node_json(node) for node in self.nodes.values()]
        threads: list[Json] = [*self._threads]
        return {"nodes": nodes, "threads": threads, "next_id": self._next_id}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Board:
        """A board ``to_json`` wrote (``ValueError`` for anything else)."""
        board = cls()
        try:
            for item in data["nodes"]:
                node = _node_of_json(item)
                board.nodes[node.display_id] = node
                board._children[node.display_id] = []
                if node.parent is None:
                    board._root[node.display_id] = node.display_id
                else:
                    board._children[node.parent].append(node.display_id)
                    board._root[node.display_id] = board._root[node.parent]
                for call in node.calls:
                    board._index(call, node)
            board._threads = {int(root): None for root in data["threads"]}
            board._next_id = int(data["next_id"])
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"not a stored board: {error!r}") from None
        return board

    # ------------------------------------------------------------ reading

    def node_of_call(self, call_id: str) -> BoardNode:
        """The node that made the call (the newest call of that id still running, if any)."""
        return self._node_of[self._call(call_id).display_id]

    def call(self, call_id: str) -> BoardCall:
        """The call of that id (``KeyError`` if none): the newest still running, if any."""
        return self._call(call_id)

    def named(self, call_id: str) -> BoardCall | None:
        """The background call a model names by the runtime's id or its own tool_use id."""
        calls = self._calls.get(call_id)
        found = next((c for c in reversed(calls or ()) if c.background), None)
        return found if found is not None else self._by_use.get(call_id)

    def root_of(self, node_id: int) -> int:
        """The display id of the thread's root that ``node_id`` belongs to."""
        self._node(node_id)
        return self._root[node_id]

    def children(self, node_id: int) -> Sequence[int]:
        """The nodes answering ``node_id``, in creation order."""
        self._node(node_id)
        return self._children[node_id]

    def threads(self) -> list[int]:
        """Every thread's root, the least recently touched first (``render``'s order)."""
        return list(self._threads)

    def settled(self, node_id: int) -> bool:
        """Whether every background call of the node is final."""
        return all(c.status.is_final for c in self._node(node_id).calls if c.background)

    def answered(self, node_id: int) -> bool:
        """A user node: an answer (``is_answer``: a turn's last word the person or a result
        prompted) exists anywhere below it, in its thread (not only directly beneath it: a
        person following up on their own question puts the answer deeper). A turn that
        started work answers nothing, nor does its calls' settling: the answer is the result
        turn's last word, below."""
        todo = list(self.children(node_id))
        while todo:
            node = self.nodes[todo.pop()]
            if is_answer(node):
                return True
            todo.extend(self._children[node.display_id])
        return False

    def cancels_on_branch(self, node_id: int, tool: str) -> int:
        """Cancels of calls to ``tool`` made on the branch from the root down to ``node_id``
        (its ancestors and itself only: calls made side by side never spend each other's
        budget, and stopping other work on the branch spends nothing of this one's)."""
        count = 0
        current: int | None = node_id
        while current is not None:
            node = self._node(current)
            for call in node.calls:
                if call.tool_name == CANCEL_TOOL and call.status is CallStatus.COMPLETED:
                    target = self.named(str(call.tool_input.get("tool_call_id", "")))
                    count += target is not None and target.tool_name == tool
            current = node.parent
        return count

    def did(self, node_id: int) -> BoardAct:
        """What the node did: no call is its last word, background work started it, and
        synchronous capabilities alone only looked."""
        calls = self._node(node_id).calls
        if not calls:
            return BoardAct.FINAL
        if any(call.background for call in calls):
            return BoardAct.STARTED
        return BoardAct.LOOKED

    def render(
        self,
        *,
        focus: int | None = None,
        note: str | None = None,
        capabilities: Collection[str] = CAPABILITIES,
    ) -> BoardRendering:
        """The whole board as text for the model, the focus node's thread last. A ``>>`` line
        ends it when the focus node is not the last drawn (naming it) or there is a ``note``
        (why this turn happens, said once); a pending call's instruction names only the
        ``capabilities`` the agent has."""
        if focus is not None:
            self._node(focus)
        if self._drawn.capabilities != frozenset(capabilities):
            self._drawn = Drawn(capabilities)
        threads = list(self._threads)
        return render_board(
            self.nodes, self._children, threads, focus, self._root, note, self._drawn
        )

    def chat(self) -> list[ChatEntry]:
        """The person's view: user posts, and the agent nodes a person is shown."""
        return chat_entries(self)

    # ------------------------------------------------------------ inside

    def _take_id(self) -> int:
        display_id = self._next_id
        self._next_id += 1
        return display_id

    def _add_node(
        self,
        parent: int | None,
        author: BoardAuthor,
        *,
        text: str,
        at: float,
        trigger: BoardTrigger | None = None,
        new_thread: bool = False,
    ) -> BoardNode:
        node = BoardNode(
            self._take_id(), parent, author, text, trigger=trigger, new_thread=new_thread, at=at
        )
        node_id = node.display_id
        self.nodes[node_id] = node
        self._children[node_id] = []
        if parent is None:
            self._root[node_id] = node_id
        else:
            self._root[node_id] = self._root[parent]
            self._children[parent].append(node_id)
        self._move_last(node_id)
        return node

    def _move_last(self, node_id: int) -> None:
        """Something was posted in the node's thread: it renders last."""
        self.version += 1
        root = self._root[node_id]
        self._threads.pop(root, None)
        self._threads[root] = None

    def _index(self, call: BoardCall, node: BoardNode) -> None:
        self._calls.setdefault(call.call_id, []).append(call)
        self._node_of[call.display_id] = node
        if call.background and call.use_id is not None:
            self._by_use[call.use_id] = call

    def _node(self, node_id: int) -> BoardNode:
        try:
            return self.nodes[node_id]
        except KeyError:
            raise KeyError(f"no node #{node_id} on this board") from None

    def _call(self, call_id: str) -> BoardCall:
        calls = self._calls.get(call_id)
        if not calls:
            raise KeyError(f"no call {call_id!r} on this board")
        for call in reversed(calls):
            if not call.status.is_final:
                return call
        return calls[-1]


def _node_json(node: BoardNode) -> Json:
    calls: list[Json] = [
        {
            "display_id": c.display_id,
            "call_id": c.call_id,
            "tool_name": c.tool_name,
            "tool_input": c.tool_input,
            "background": c.background,
            "status": c.status.value,
            "outcome": c.outcome,
            "use_id": c.use_id,
        }
        for c in node.calls
    ]
    return {
        "display_id": node.display_id,
        "parent": node.parent,
        "author": node.author.value,
        "text": node.text,
        "calls": calls,
        "trigger": None if node.trigger is None else node.trigger.value,
        "new_thread": node.new_thread,
        "at": node.at,
    }


def _node_of_json(item: Mapping[str, Any]) -> BoardNode:
    trigger = item["trigger"]
    calls = [
        BoardCall(
            int(c["display_id"]),
            str(c["call_id"]),
            str(c.get("tool_name", c.get("tool"))),  # "tool", "arguments": older boards
            dict(c.get("tool_input", c.get("arguments"))),
            bool(c["background"]),
            CallStatus(c["status"]),
            None if c["outcome"] is None else str(c["outcome"]),
            None if c.get("use_id") is None else str(c["use_id"]),
        )
        for c in item["calls"]
    ]
    return BoardNode(
        int(item["display_id"]),
        None if item["parent"] is None else int(item["parent"]),
        BoardAuthor(item["author"]),
        str(item["text"]),
        calls,
        None if trigger is None else BoardTrigger(trigger),
        bool(item["new_thread"]),
        float(item["at"]),
    )
