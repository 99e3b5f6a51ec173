"""Resubscribing to a task this process does not run: the SDK's handler streams only the
tasks it runs (after a restart, or for a task another host sharing the store runs, it would
wait forever); here such a task is read from the store, its snapshot first, then each
change another host writes, until it ends or waits for input. A task that has ended answers
with its final snapshot (the SDK refuses it)."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import anyio
from a2a.server.agent_execution.active_task import (
    INTERRUPTED_TASK_STATES,
    TERMINAL_TASK_STATES,
)
from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import TaskStore
from a2a.types.a2a_pb2 import (
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import TaskNotFoundError

POLL_SECONDS = 0.25
"""How often the store is read for a task another process runs."""


class StoreFollowingHandler(DefaultRequestHandler):
    """The SDK's request handler, whose ``SubscribeToTask`` follows a task through the store
    when this process does not run it."""

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        tasks = self.task_store
        assert isinstance(tasks, TaskStore)  # agentos's, not a versioned one
        task = await tasks.get(params.id, context)
        if task is None:
            raise TaskNotFoundError
        # The registry of the tasks this process runs has no public accessor.
        if await self._active_task_registry.get(params.id) is not None:
            async for event in super().on_subscribe_to_task(params, context):
                yield event
            return
        yield task
        while task.status.state not in TERMINAL_TASK_STATES | INTERRUPTED_TASK_STATES:
            await anyio.sleep(POLL_SECONDS)
            now = await tasks.get(params.id, context)
            if now is None:
                return
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
