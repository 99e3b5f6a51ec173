"""The SDK's request handler, told about the tasks this process does not run.

Its single-process ``SubscribeToTask`` streams only a task this process runs (for another
it would wait forever): here such a task is read from the store, its snapshot first, then
each change the host running it writes, until it ends or waits for input; a task that has
ended answers with its final snapshot (the SDK refuses it).

A task is run by the host its row names while that host holds the task's context's
session. One that has not ended, is not run here, and whose host is gone (or holds the
session no more, or is this one) was left unfinished by a host that stopped: read, it is
``failed`` saying so, as no one will ever finish it, even once its session runs a new
task (here or on another host). A task another live host runs is cancelled there: the
SDK would write ``canceled`` in the store while its turn went on.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator
from collections.abc import Awaitable
from collections.abc import Callable

import anyio
from a2a.helpers import new_text_part
from a2a.server.agent_execution import AgentExecutor
from a2a.server.agent_execution import RequestContextBuilder
from a2a.server.agent_execution.active_task import INTERRUPTED_TASK_STATES
from a2a.server.agent_execution.active_task import TERMINAL_TASK_STATES
from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.types.a2a_pb2 import AgentCard
from a2a.types.a2a_pb2 import CancelTaskRequest
from a2a.types.a2a_pb2 import GetTaskRequest
from a2a.types.a2a_pb2 import ListTasksRequest
from a2a.types.a2a_pb2 import ListTasksResponse
from a2a.types.a2a_pb2 import Message
from a2a.types.a2a_pb2 import Role
from a2a.types.a2a_pb2 import SubscribeToTaskRequest
from a2a.types.a2a_pb2 import Task
from a2a.types.a2a_pb2 import TaskArtifactUpdateEvent
from a2a.types.a2a_pb2 import TaskState
from a2a.types.a2a_pb2 import TaskStatus
from a2a.types.a2a_pb2 import TaskStatusUpdateEvent
from a2a.utils.errors import TaskNotCancelableError
from a2a.utils.errors import TaskNotFoundError
from a2a.utils.errors import UnsupportedOperationError

from agentos._ui.a2a.task_store import StoredTasks

POLL_SECONDS = 0.25
"""How often the store is read for a task another process runs."""
ABANDONED = "the host that ran its turn stopped before the turn ended"
"""What a task left unfinished by a stopped host says, failed."""


class StoreFollowingHandler(DefaultRequestHandler):
    """``DefaultRequestHandler`` whose reads know the tasks other processes run or ran;
    ``live_sessions`` gives the sessions live hosts hold (session -> holder: their
    leases)."""

    def __init__(
        self,
        executor: AgentExecutor,
        tasks: StoredTasks,
        card: AgentCard,
        contexts: RequestContextBuilder,
        live_sessions: Callable[[], Awaitable[dict[str, str]]],
    ) -> None:
        super().__init__(
            agent_executor=executor,
            task_store=tasks,
            agent_card=card,
            request_context_builder=contexts,
        )
        self._live_sessions = live_sessions
        self._tasks = tasks

    async def _runs_elsewhere(self, task: Task, context: ServerCallContext) -> bool:
        """Whether another live host runs ``task``: the one its row names holds its context's
        session (for a row from before hosts were kept: any live host does), and no newer
        task of the context has started since (a restarted host may go by the same name)."""
        holder = (await self._live_sessions()).get(task.context_id)
        if holder is None:
            return False
        host, newest = await self._tasks.runner_of(task, context)
        if host is None:
            return True
        return newest and host == holder and host != self._tasks.host

    async def _as_it_is(self, task: Task, context: ServerCallContext) -> Task:
        """``task``, or, left unfinished by a host that stopped, ``failed`` (and stored so)."""
        if task.status.state in TERMINAL_TASK_STATES:
            return task
        # The registry of the tasks this process runs has no public accessor.
        if await self._active_task_registry.get(task.id) is not None:
            return task
        if await self._runs_elsewhere(task, context):
            return task
        said = Message(
            role=Role.ROLE_AGENT,
            parts=[new_text_part(ABANDONED)],
            message_id=uuid.uuid4().hex,
            task_id=task.id,
            context_id=task.context_id,
        )
        failed = Task()
        failed.CopyFrom(task)
        failed.status.CopyFrom(TaskStatus(state=TaskState.TASK_STATE_FAILED, message=said))
        failed.status.timestamp.GetCurrentTime()
        await self._tasks.save(failed, context)
        return await self._tasks.get(task.id, context) or failed  # an end met meanwhile stays

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        task = await self._tasks.get(params.id, context)
        if task is not None:
            await self._as_it_is(task, context)
        found: Task | None = await super().on_get_task(params, context)
        return found

    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        page: ListTasksResponse = await super().on_list_tasks(params, context)
        for task in page.tasks:
            if task.status.state not in TERMINAL_TASK_STATES:
                task.status.CopyFrom((await self._as_it_is(task, context)).status)
        return page

    async def on_cancel_task(
        self, params: CancelTaskRequest, context: ServerCallContext
    ) -> Task | None:
        task = await self._tasks.get(params.id, context)
        if task is None:
            raise TaskNotFoundError
        task = await self._as_it_is(task, context)
        running_here = await self._active_task_registry.get(params.id) is not None
        if task.status.state not in TERMINAL_TASK_STATES and not running_here:
            host, _ = await self._tasks.runner_of(task, context)
            who = host or f"the one holding session {task.context_id}"
            raise TaskNotCancelableError(
                message=f"task {params.id} runs on another host ({who}): cancel it there"
            )
        cancelled: Task | None = await super().on_cancel_task(params, context)
        return cancelled

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        task = await self._tasks.get(params.id, context)
        if task is None:
            raise TaskNotFoundError
        running_here = await self._active_task_registry.get(params.id) is not None
        if running_here and task.status.state not in TERMINAL_TASK_STATES:
            try:
                async for event in super().on_subscribe_to_task(params, context):
                    yield event
                return
            except UnsupportedOperationError:
                # It ended between the two reads, still registered: the SDK refuses an
                # ended task, which is answered here with its final snapshot.
                ended = await self._tasks.get(params.id, context)
                if ended is None or ended.status.state not in TERMINAL_TASK_STATES:
                    raise
                task = ended
        task = await self._as_it_is(task, context)
        yield task
        while task.status.state not in TERMINAL_TASK_STATES | INTERRUPTED_TASK_STATES:
            await anyio.sleep(POLL_SECONDS)
            now = await self._tasks.get(params.id, context)
            if now is None:
                return
            now = await self._as_it_is(now, context)
            for event in _changes(task, now):
                yield event
            task = now


def _changes(before: Task, after: Task) -> list[Event]:
    """What ``after`` tells that ``before`` did not: its new artifacts, then its status."""
    told: list[Event] = []
    known = {artifact.artifact_id for artifact in before.artifacts}
    for artifact in after.artifacts:
        if artifact.artifact_id not in known:
            told.append(
                TaskArtifactUpdateEvent(
                    task_id=after.id, context_id=after.context_id, artifact=artifact
                )
            )
    if after.status != before.status:
        told.append(
            TaskStatusUpdateEvent(
                task_id=after.id, context_id=after.context_id, status=after.status
            )
        )
    return told
