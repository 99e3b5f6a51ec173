"""The wire of the ``io.modelcontextprotocol/tasks`` extension (SEP-2663, on the 2026-07-28
protocol), as the ext-tasks reference's v2 schema has it: the task a ``tools/call`` answers
with, the task ``tasks/get`` reads, and the ``tasks/*`` requests. The ``mcp`` SDK (2.3) has
the claim hook for the first but none of these, so they are here, on its base types (which
``ClientSession.send_request`` stamps with the per-request envelope and ``Mcp-Name``).

Imported only when a server speaks the extension: ``mcp_types`` takes a while to import.
"""

from __future__ import annotations

from typing import Any
from typing import Literal

from mcp_types import ErrorData
from mcp_types import Request
from mcp_types import RequestParams
from mcp_types import Result

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]


class CreatedTask(Result):
    """``tools/call``'s answer when the server runs the call as a task (``resultType:
    "task"``): the claim the session is told to accept."""

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    poll_interval_ms: int | None = None
    result_type: Literal["task"]


class DetailedTask(Result):
    """``tasks/get``'s answer: the task's status, with its result (completed), its error
    (failed) or what it asks (input_required)."""

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: ErrorData | None = None
    input_requests: dict[str, Any] | None = None


class TaskParams(RequestParams):
    """The params of ``tasks/get``, ``tasks/cancel`` and ``tasks/update`` (its answers)."""

    task_id: str
    input_responses: dict[str, Any] | None = None


class TaskRequest(Request[TaskParams, str]):
    """A ``tasks/*`` request; its ``taskId`` goes in the ``Mcp-Name`` header too."""

    name_param = "taskId"


def task_request(method: str, task_id: str, answers: dict[str, Any] | None = None) -> TaskRequest:
    """``method`` about the task ``task_id`` (``answers``: ``tasks/update``'s responses)."""
    return TaskRequest(method=method, params=TaskParams(task_id=task_id, input_responses=answers))


async def not_resolved_here(created: CreatedTask, context: Any) -> Any:
    """The claim's resolver, which agentos never lets the SDK call: it follows the task
    itself, with the call's context (``allow_claimed``)."""
    raise RuntimeError(f"task {created.task_id}: agentos follows its tasks itself")
