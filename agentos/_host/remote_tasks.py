"""After a restart, a call that ran as a remote task (an MCP server's, an A2A agent's) goes
on with its task instead of being lost: the store's mirror of the call kept the task's id
in its newest progress, and the toolset that runs the task is asked about it again
(``McpServer.resume_task``, ``A2aAgent.resume_task``)."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Protocol
from typing import runtime_checkable

from agentos._kernel.runtime import Runtime
from agentos._store.protocol import MirroredCall
from components import CallId
from components import CallStatus


@runtime_checkable
class FollowsTasks(Protocol):
    """A toolset whose calls run as remote tasks a new call can go on with."""

    def resume_task(self, call_id: str, task_id: str) -> None:
        """Let the just-submitted call ``call_id`` go on with the task ``task_id``."""
        ...


Reattach = Callable[[str, str, object], CallId | None]
"""``restore``'s question for a call the history leaves unanswered (tool_use id, tool,
input): the new call that goes on with its work, or None (it is lost)."""


def task_reattacher(
    runtime: Runtime, session_id: str, mirrored: Sequence[MirroredCall]
) -> Reattach | None:
    """For ``restore``: each unfinished call of the session whose mirror names a remote
    task, made again under its tool_use id and following that task. None when none does."""
    tasks = {
        row.provider_call_id: task_id
        for row in mirrored
        if row.provider_call_id is not None
        and not CallStatus(row.status).is_final
        and (task_id := _task_of(row)) is not None
    }
    if not tasks:
        return None

    def again(tool_use_id: str, tool: str, arguments: object) -> CallId | None:
        task_id = tasks.pop(tool_use_id, None)
        found = runtime.tool(tool)
        server = None if found is None else runtime.toolsets.get(found.source or "")
        if task_id is None or not isinstance(server, FollowsTasks):
            return None
        arguments = arguments if isinstance(arguments, dict) else {}
        call_id = runtime.submit(
            tool, arguments, session_id=session_id, provider_call_id=tool_use_id
        )
        server.resume_task(call_id, task_id)
        return call_id

    return again


def either(*reattachers: Reattach | None) -> Reattach | None:
    """The first of ``reattachers`` that takes a call (None when none is given)."""
    present = [r for r in reattachers if r is not None]
    if len(present) < 2:
        return present[0] if present else None

    def first(tool_use_id: str, tool: str, arguments: object) -> CallId | None:
        for reattach in present:
            call_id = reattach(tool_use_id, tool, arguments)
            if call_id is not None:
                return call_id
        return None

    return first


def _task_of(row: MirroredCall) -> str | None:
    progress = row.progress
    task_id = progress.get("task_id") if isinstance(progress, dict) else None
    return task_id if isinstance(task_id, str) and task_id else None
