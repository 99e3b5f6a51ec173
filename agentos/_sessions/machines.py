"""Which turn machine a session's agent gets: a board's (``context_view = "board"``) or a
transcript's. The one module of ``_sessions`` that names the two; the rest sees a ``Machine``."""

from __future__ import annotations

from agentos._board.board import Board
from agentos._board.machine import BoardMachine
from agentos._kernel.runtime import Runtime
from agentos._sessions.tool_access import ToolAccess
from agentos._turns.agent_config import AgentConfig
from agentos._turns.call_options import ToolFacts
from agentos._turns.context_view import ContextView
from agentos._turns.machine import Machine
from agentos._turns.result_cache import ResultCache
from agentos._turns.transcript_machine import TurnMachine
from components import CallEventKind
from components import CallSnapshot


def machine_for(
    session_id: str,
    config: AgentConfig,
    access: ToolAccess,
    facts: ToolFacts,
    *,
    runtime: Runtime,
    view: ContextView,
    cache: ResultCache | None,
) -> Machine:
    """A new machine for the session: a board's, or a transcript's that reads the session's
    calls from ``runtime`` and shows the model its history through ``view``."""
    if config.context_view == "board":
        return BoardMachine(session_id, config, access.allows, facts=facts)
    return TurnMachine(
        session_id,
        config,
        access.allows,
        cache=cache,
        facts=facts,
        view=view,
        calls=_SessionCalls(runtime, session_id),
        status_of=runtime.last_status,
    )


_ENDS_AND_NEWS = frozenset(CallEventKind) - {
    CallEventKind.QUEUED,
    CallEventKind.STARTED,
    CallEventKind.PROGRESSED,
}


def heard_kinds(machine: Machine) -> frozenset[CallEventKind]:
    """The call events a session's machine acts on: a call's overdue news and its end, and
    for a board its start too (it shows running nodes). A transcript reads a call's start
    only for a placeholder, from the runtime (``last_status``), so the start of a call
    makes no event for it."""
    if isinstance(machine, BoardMachine):
        return _ENDS_AND_NEWS | {CallEventKind.STARTED}
    return _ENDS_AND_NEWS


class _SessionCalls:
    """A session's calls as the runtime has them now: one object a session, where a closure
    over the two is four the collector walks for as long as the session is loaded."""

    __slots__ = ("_runtime", "_session_id")

    def __init__(self, runtime: Runtime, session_id: str) -> None:
        self._runtime, self._session_id = runtime, session_id

    def __call__(self) -> list[CallSnapshot]:
        return self._runtime.list_calls(self._session_id)


def replies_since(machine: Machine, mark: int) -> tuple[list[str], int]:
    """The machine's replies after ``mark`` (0 at first, then what the last call returned)
    and the mark to read on from: a transcript's assistant messages after the first
    ``mark`` messages, each read once; a board's agent nodes after the first ``mark``."""
    view = machine.view
    if isinstance(machine, TurnMachine):
        return machine.replies_since(mark, view.length)
    replies = view.replies
    return replies[mark:], len(replies)


def board_of(machine: Machine) -> Board | None:
    """The board a board session's machine keeps (None for a transcript's)."""
    return machine.board if isinstance(machine, BoardMachine) else None
