"""A ``post`` (or ``start_session``) run as a task of the newer generation, the
``io.modelcontextprotocol/tasks`` extension (SEP-2663, on the 2026-07-28 protocol): a client
of that protocol that declares the extension is answered at once with the task
(``resultType: "task"``), whose turn ``task_book.py`` runs as for the older tasks;
``tasks/get`` reads its status, with its result once it has ended and, while one of its calls
asks a person, the question (``inputRequests``, an ``elicitation/create`` each) that
``tasks/update`` answers (``inputResponses``); ``tasks/cancel`` ends it and cancels the
calls its turn started.

This is the ``mcp`` SDK's server ``Extension`` (its capability under
``capabilities.extensions``, its methods, its ``tools/call`` interceptor). The SDK keys a
method's handler by its name alone, and the older tasks (``tasks.py``) have a ``tasks/get``
and a ``tasks/cancel`` too: so these two answer at any protocol, each request the way of
its own protocol's tasks.

The extension says a tool's failure (``isError``) is a ``completed`` task whose result says
so, and that a response to a question no longer asked, or a cancel of a task that has ended,
changes nothing.
"""

from __future__ import annotations

from typing import Any

from mcp import MCPError
from mcp.server.context import CallNext
from mcp.server.context import HandlerResult
from mcp.server.context import ServerRequestContext
from mcp.server.extension import Extension
from mcp.server.extension import MethodBinding
from mcp.server.mcpserver import require_client_extension
from mcp.server.session import ServerSession
from mcp_types import INVALID_PARAMS
from mcp_types import CallToolRequestParams
from mcp_types import CancelTaskRequestParams
from mcp_types import ElicitResult
from mcp_types import EmptyResult
from mcp_types import GetTaskRequestParams
from mcp_types import RequestParams
from mcp_types import Task
from mcp_types.methods import serialize_server_result
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from agentos._ui.mcp.task_book import FINAL
from agentos._ui.mcp.task_book import Asked
from agentos._ui.mcp.task_book import Held
from agentos._ui.mcp.task_book import TaskBook
from agentos._ui.mcp.task_book import asking_for
from agentos._ui.mcp.tasks import ServedTasks

TASKS = "io.modelcontextprotocol/tasks"
"""The extension's identifier, under ``capabilities.extensions``."""
MODERN = frozenset(MODERN_PROTOCOL_VERSIONS)
"""The protocols the extension rides on."""

Context = ServerRequestContext[Any, Any]


class TaskParams(RequestParams):
    """The params of ``tasks/get``, ``tasks/update`` (with its ``inputResponses``) and
    ``tasks/cancel``, of either generation."""

    task_id: str
    input_responses: dict[str, Any] | None = None


class TasksExtension(Extension):
    """The newer tasks of one server's ``book``; the older (``older``) answer ``tasks/get``
    and ``tasks/cancel`` at their protocols."""

    identifier = TASKS

    def __init__(self, book: TaskBook, older: ServedTasks) -> None:
        self._book = book
        self._older = older

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("tasks/get", TaskParams, self.get),
            MethodBinding("tasks/update", TaskParams, self.update, MODERN),
            MethodBinding("tasks/cancel", TaskParams, self.cancel),
        ]

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: Context, call_next: CallNext
    ) -> HandlerResult:
        """A task tool called by a client that declared the extension runs as a task: the
        call goes through the SDK as usual, and its answer is the task the tool started."""
        if ctx.protocol_version not in MODERN or params.name not in self._book.tools:
            return await call_next(ctx)
        declared = ctx.session.client_capabilities
        if declared is None or TASKS not in (declared.extensions or {}):
            return await call_next(ctx)
        asked = Asked(None)
        with asking_for(asked):
            answer = await call_next(ctx)
        if asked.task is None:  # refused before a task began: the error the call answers
            return answer
        return {"resultType": "task", **_shown(asked.task)}

    async def get(self, ctx: Context, params: TaskParams) -> HandlerResult:
        """``tasks/get``: the task's status and what its session is doing, with its result
        once it has ended, or what its calls ask meanwhile."""
        if ctx.protocol_version not in MODERN:
            older = GetTaskRequestParams(task_id=params.task_id, meta=params.meta)
            return await self._older.get(ctx, older)
        held = self._find(ctx, params)
        return _detailed(held, ctx.session, ctx.protocol_version)

    async def update(self, ctx: Context, params: TaskParams) -> EmptyResult:
        """``tasks/update``: the client's answers to the questions the task's calls ask
        (``inputResponses``, by the keys of its ``inputRequests``)."""
        held = self._find(ctx, params)
        if params.input_responses is None:
            raise MCPError(INVALID_PARAMS, "tasks/update carries inputResponses: none came")
        results: dict[str, ElicitResult] = {}
        for key, response in params.input_responses.items():
            try:
                results[key] = ElicitResult.model_validate(response)
            except ValidationError as error:
                first = error.errors()[0]
                where = ".".join(str(part) for part in first["loc"]) or "the response"
                raise MCPError(
                    INVALID_PARAMS,
                    f"input response {key!r} is no elicitation result ({where}: {first['msg']})",
                ) from None
        assert held.questions is not None
        for key, result in results.items():
            held.questions.respond(key, result)
        return EmptyResult()

    async def cancel(self, ctx: Context, params: TaskParams) -> HandlerResult:
        """``tasks/cancel``: cancel the calls the task's turn started and end the task (the
        session's turn goes on: ``Held.cancel``)."""
        if ctx.protocol_version not in MODERN:
            older = CancelTaskRequestParams(task_id=params.task_id, meta=params.meta)
            return await self._older.cancel(ctx, older)
        held = self._find(ctx, params)
        if held.task.status not in FINAL:
            held.cancel()
        return EmptyResult()

    def _find(self, ctx: Context, params: TaskParams) -> Held:
        require_client_extension(ctx, TASKS)
        return self._book.find(ctx, params.task_id)


def _shown(task: Task) -> dict[str, Any]:
    """A task as the extension's wire has it."""
    shown: dict[str, Any] = {
        "taskId": task.task_id,
        "status": task.status,
        "createdAt": task.created_at,
        "lastUpdatedAt": task.last_updated_at,
        "ttlMs": task.ttl,
        "pollIntervalMs": task.poll_interval,
    }
    if task.status_message is not None:
        shown["statusMessage"] = task.status_message
    return shown


def _detailed(held: Held, client: ServerSession, version: str) -> dict[str, Any]:
    """``tasks/get``'s answer: the task, with its result (ended, not cancelled) or the
    questions ``client`` can answer (``input_required``)."""
    shown = _shown(held.task)
    status = held.task.status
    if status in ("completed", "failed") and held.result is not None:
        dumped = held.result.model_dump(by_alias=True, mode="json", exclude_none=True)
        shown["status"] = "completed"  # a tool's failure is its result's isError
        shown["result"] = serialize_server_result(
            "tools/call", version, {"resultType": "complete", **dumped}
        )
    elif status == "input_required":
        assert held.questions is not None
        shown["inputRequests"] = held.questions.requests(client)
    return shown
