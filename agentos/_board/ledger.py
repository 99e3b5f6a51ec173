"""The board machine's background calls: its resource, as ``CallLedger`` is the transcript's.

Which calls run, whose outcome the model has yet to read on the board, which
node made each (the retry budget counts along that node's branch), the model's
id for each, and, after a restart, the calls the stored board kept waiting
until the shell re-creates them or gives them up.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentos._board.board import Board
from agentos._board.texts import LOST_ON_THE_BOARD
from agentos._model.messages import ToolResultBlock
from agentos._turns.transcript import read_placeholder
from components import CallId
from components import CallStatus


class BoardLedger:
    """What the board machine knows of its background calls beside the board itself."""

    def __init__(self) -> None:
        self.running: set[CallId] = set()
        self.deferred: set[CallId] = set()
        """Running calls only an outside completion ends."""
        self.outstanding: dict[CallId, str] = {}
        """Background calls whose outcome the model has not read on the board yet."""
        self._by_use: dict[str, CallId] = {}
        """The model's tool_use id -> the runtime's id (the model may name either)."""
        self._node_of: dict[CallId, int] = {}
        self.intervals: dict[CallId, tuple[float | None, bool]] = {}
        """Overdue interval of each call, and whether the model estimated it."""
        self.told: set[CallId] = set()
        """Running calls whose end the model caused or read itself (its own cancel, a final
        status): that answer was the news, their end wakes nothing."""
        self._restored: dict[str, str] = {}
        """After a restart: tool_use id -> the runtime id the stored board knows the call by."""

    def track(self, call_id: CallId, tool_use_id: str, node_id: int, *, deferred: bool) -> None:
        """A background call the machine waits for, made by ``node_id``."""
        self.running.add(call_id)
        if deferred:
            self.deferred.add(call_id)
        self.outstanding[call_id] = tool_use_id
        self._by_use[tool_use_id] = call_id
        self._node_of[call_id] = node_id

    def ended(self, call_id: CallId) -> None:
        """A running call reached its final status."""
        self.running.discard(call_id)
        self.deferred.discard(call_id)

    def names(self, named: str) -> CallId:
        """The runtime's id of the call the model names by either id."""
        return self._by_use.get(named, CallId(named))

    def tell(self, named: str) -> None:
        """A capability's answer just told the model this call's end (either id)."""
        call_id = self.names(named)
        if call_id in self.running:
            self.told.add(call_id)

    def node_of(self, named: str) -> int | None:
        """The node that made the call the model names (by either id), if it is one."""
        return self._node_of.get(self._by_use.get(named, CallId(named)))

    def read(self) -> None:
        """The board the model reads now shows every ended call's outcome."""
        for call_id in [c for c in self.outstanding if c not in self.running]:
            del self.outstanding[call_id]

    # ------------------------------------------------------------------ restarts

    def restore(self, board: Board, held: Mapping[str, ToolResultBlock]) -> list[tuple[str, str]]:
        """Keep the stored board's running calls waiting, as ``(tool_use_id, tool)``: by the
        model's id when ``held`` has it (the call may run under a new runtime id since an
        earlier restart), else by the runtime id its placeholder names (a board stored
        without use ids)."""
        outlived = {}
        for tool_use_id, block in held.items():
            note = read_placeholder(block.get("content"))
            if note is not None and isinstance(note.get("internal_id"), str):
                outlived[str(note["internal_id"])] = tool_use_id
        waiting = []
        for node in board.nodes.values():
            for call in node.calls:
                if not call.background or call.status.is_final:
                    continue
                use_id = outlived.get(call.call_id, call.use_id or call.call_id)
                if call.use_id is not None and call.use_id in held:
                    use_id = call.use_id
                self._restored[use_id] = call.call_id
                waiting.append((use_id, call.tool_name))
        return waiting

    def runtime_id_of(self, tool_use_id: str) -> CallId | None:
        call_id = self._restored.get(tool_use_id)
        return None if call_id is None else CallId(call_id)

    def lost(self, board: Board, tool_use_id: str) -> None:
        """A call kept waiting did not come back: it reads as orphaned."""
        call_id = self._restored.pop(tool_use_id, None)
        if call_id is not None:
            board.settle(call_id, CallStatus.ORPHANED, LOST_ON_THE_BOARD)

    def came_back(self, board: Board, call_id: CallId, tool_use_id: str, *, deferred: bool) -> None:
        """A call kept waiting runs again as ``call_id`` (the board shows that id)."""
        was = self._restored.pop(tool_use_id, None)
        if was is not None and was != call_id:
            board.rekey(was, call_id)
        self.track(call_id, tool_use_id, board.node_of_call(call_id).display_id, deferred=deferred)
