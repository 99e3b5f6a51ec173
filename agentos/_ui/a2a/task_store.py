"""The A2A tasks kept in agentos's session store (``a2a_tasks``), each its owner's: a task
outlives the process that ran it, and any host sharing the store lists and reads it. Another
owner's task is, to a client, one that does not exist. Each row names the host that wrote it
last, the one that runs the task (only that host writes a task that has not ended)."""

from __future__ import annotations

import time

from a2a.server.context import ServerCallContext
from a2a.server.tasks import TaskStore
from a2a.types.a2a_pb2 import ListTasksRequest
from a2a.types.a2a_pb2 import ListTasksResponse
from a2a.types.a2a_pb2 import Role
from a2a.types.a2a_pb2 import Task
from a2a.types.a2a_pb2 import TaskState
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError
from a2a.utils.task import ListTasksCursor
from a2a.utils.task import decode_list_tasks_cursor
from a2a.utils.task import encode_list_tasks_cursor
from google.protobuf.json_format import MessageToJson
from google.protobuf.json_format import Parse

from agentos.stores import A2aTaskRows
from agentos.stores import StoredA2aTask

AGENT_LINES_KEPT = 100
"""The newest of the agent's messages a stored task's history keeps (every status update
moves its predecessor's message there: a turn of many call events would grow it without
end, and each save writes it whole); the client's messages are all kept."""


def kept(task: Task) -> Task:
    """``task`` with its history cut to the client's messages and the newest
    ``AGENT_LINES_KEPT`` of the agent's, in order."""
    agents = [i for i, m in enumerate(task.history) if m.role != Role.ROLE_USER]
    if len(agents) <= AGENT_LINES_KEPT:
        return task
    dropped = set(agents[:-AGENT_LINES_KEPT])
    cut = Task()
    cut.CopyFrom(task)
    del cut.history[:]
    cut.history.extend(m for i, m in enumerate(task.history) if i not in dropped)
    return cut


def owner_of(context: ServerCallContext) -> str:
    """Whose tasks a request sees: the user its token names (``app``'s context builder)."""
    return context.user.user_name


def _key(task: Task) -> tuple[bool, int, str]:
    """``ListTasks``' order (newest first when reversed): the SDK's in-memory store's."""
    stamped = task.HasField("status") and task.status.HasField("timestamp")
    return (stamped, task.status.timestamp.ToNanoseconds() if stamped else 0, task.id)


class StoredTasks(TaskStore):
    """The SDK's ``TaskStore`` over the ``a2a_tasks`` rows of a session store, written by
    the host named ``host`` (its leases' holder)."""

    def __init__(self, rows: A2aTaskRows, host: str) -> None:
        self._rows = rows
        self.host = host

    async def save(self, task: Task, context: ServerCallContext) -> None:
        stored = StoredA2aTask(
            task.id,
            owner_of(context),
            task.context_id,
            TaskState.Name(task.status.state),
            MessageToJson(kept(task)),
            time.time(),
            self.host,
        )
        if not await self._rows.save(stored):
            raise InvalidParamsError(message=f"task {task.id} is not yours")

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        stored = await self._rows.get(owner_of(context), task_id)
        return None if stored is None else Parse(stored.task, Task())

    async def runner_of(self, task: Task, context: ServerCallContext) -> tuple[str | None, bool]:
        """The host that runs (or ran) ``task`` (None: a row from before hosts were kept),
        and whether it is its context's newest task but for those rejected: a context runs
        one task at a time, so an older one no one runs here was left by a host that
        stopped, whatever name the host now holding the context goes by."""
        rows = await self._rows.of_owner(owner_of(context), task.context_id)
        mine = next((row for row in rows if row.task_id == task.id), None)
        rejected = TaskState.Name(TaskState.TASK_STATE_REJECTED)
        newest = next((row for row in rows if row.state != rejected), None)
        host = None if mine is None else mine.host
        return host, newest is not None and newest.task_id == task.id

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        rows = await self._rows.of_owner(owner_of(context), params.context_id or None)
        tasks = [Parse(row.task, Task()) for row in rows]
        if params.status:
            tasks = [task for task in tasks if task.status.state == params.status]
        if params.HasField("status_timestamp_after"):
            after = params.status_timestamp_after.ToNanoseconds()
            tasks = [task for task in tasks if _key(task)[0] and _key(task)[1] >= after]
        tasks.sort(key=_key, reverse=True)
        total = len(tasks)
        if params.page_token:
            cursor = decode_list_tasks_cursor(params.page_token)
            if cursor is None:
                raise InvalidParamsError(message=f"invalid page token: {params.page_token}")
            tasks = [task for task in tasks if _key(task) < cursor.sort_key()]
        size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
        page, more = tasks[:size], len(tasks) > size
        last = _key(page[-1]) if page else None
        token = (
            encode_list_tasks_cursor(ListTasksCursor(last[1] if last[0] else None, last[2]))
            if more and last is not None
            else None
        )
        return ListTasksResponse(
            tasks=page, next_page_token=token, total_size=total, page_size=size
        )

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        await self._rows.delete(owner_of(context), task_id)
