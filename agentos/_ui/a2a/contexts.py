"""Which session a message's turn runs in, held here before its task is written.

A context is an agentos session. A message may name only a context of its sender's:
another owner's, or a session started elsewhere, or one that does not exist, is refused as
not found. A message naming a task runs in that task's context. Before the SDK writes the
task, this host takes the session (loaded here, brought back from the store, or new), so
from the task's first row on, the host the row names holds its session: another host
reads the task as run, never as abandoned. A session another live host holds is not taken
over: the message is refused, naming that host, and no task is made of it.
"""

from __future__ import annotations

import a2a.server.agent_execution as execution
from a2a.server.agent_execution.active_task import TERMINAL_TASK_STATES
from a2a.server.context import ServerCallContext
from a2a.types.a2a_pb2 import SendMessageRequest
from a2a.types.a2a_pb2 import Task
from a2a.types.a2a_pb2 import TaskState
from a2a.utils.errors import InvalidParamsError
from a2a.utils.errors import UnsupportedOperationError

from agentos import AgentConfig
from agentos import Host
from agentos import SessionInUseError
from agentos import UnknownSessionError
from agentos._ui.a2a.task_store import owner_of
from agentos.stores import A2aTaskRows


class SessionContexts(execution.SimpleRequestContextBuilder):
    """The SDK's request-context builder over ``host``'s sessions of ``config``; ``rows``
    the tasks served (who has tasks in which context)."""

    def __init__(self, rows: A2aTaskRows, host: Host, config: AgentConfig) -> None:
        super().__init__()
        self._rows = rows
        self._host = host
        self._config = config

    async def build(
        self,
        context: ServerCallContext,
        params: SendMessageRequest | None = None,
        task_id: str | None = None,
        context_id: str | None = None,
        task: Task | None = None,
    ) -> execution.RequestContext:
        if context_id and owner_of(context) not in await self._rows.context_owners(context_id):
            raise InvalidParamsError(
                message=f"no context {context_id!r} (a message without a context starts one)"
            )
        built = await super().build(context, params, task_id, context_id, task)
        if params is not None:
            session_id = await self._session_of(task_id, built, context)
            if session_id is not None:
                await self._hold(session_id)
        return built

    async def _session_of(
        self, task_id: str | None, built: execution.RequestContext, context: ServerCallContext
    ) -> str | None:
        """The session the message's turn runs in: the context of the task it names (the
        SDK gives a message naming only a task a new context id), else its context's; None
        for a task that has ended (the SDK refuses a message on it)."""
        if not task_id:
            return built.context_id
        stored = await self._rows.get(owner_of(context), task_id)
        if stored is None:
            return built.context_id
        if TaskState.Value(stored.state) in TERMINAL_TASK_STATES:
            return None
        return stored.context_id

    async def _hold(self, session_id: str) -> None:
        """Have the session live here (its lease this host's); ``UnsupportedOperationError``
        naming the live host that holds it instead."""
        try:
            await self._host.open(session_id)
        except UnknownSessionError:
            await self._host.create_session(self._config, session_id=session_id)
        except SessionInUseError as error:
            raise UnsupportedOperationError(
                message=f"context {session_id} runs on another host ({error.holder}), which "
                "holds its session: send the message to that host's A2A server (or again "
                "once it lets the session go)"
            ) from None
