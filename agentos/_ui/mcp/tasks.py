"""A ``post`` (or ``start_session``) run as an MCP task, the 2025-11-25 protocol's tasks: a
``tools/call`` that asks for one is answered at once with the task (``task_book.py`` keeps
it and runs its turn), and ``tasks/get``, ``tasks/result``, ``tasks/cancel`` and
``tasks/list`` follow it, collect its answer and end it (cancelling its turn's calls).

The ``mcp`` SDK (2.3) serves none of this: its ``tools/call`` answer must be a
``CallToolResult`` at this protocol. So a server middleware (the SDK's public, provisional
hook) hands a task-augmented call to the tool (``asking_for``) and answers with the task the
tool started, and adds the ``tasks`` capability and each task tool's ``execution`` to
``initialize`` and ``tools/list``; ``tasks/result`` and ``tasks/list`` are request handlers
of the low-level server, and ``tasks/get`` and ``tasks/cancel`` come through the newer
tasks' extension (``tasks_ext.py``), which shares their names.

A question one of the task's calls asks (``asking``) makes the task ``input_required``, its
status message the question, until it is answered: a client waiting on ``tasks/result`` is
sent it as ``elicitation/create`` naming the task in ``_meta``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from typing import cast

import anyio
from mcp import MCPError
from mcp.server.context import CallNext
from mcp.server.context import HandlerResult
from mcp.server.context import ServerRequestContext
from mcp_types import INVALID_PARAMS
from mcp_types import METHOD_NOT_FOUND
from mcp_types import CancelTaskRequestParams
from mcp_types import CancelTaskResult
from mcp_types import CreateTaskResult
from mcp_types import GetTaskPayloadRequestParams
from mcp_types import GetTaskRequestParams
from mcp_types import GetTaskResult
from mcp_types import ListTasksResult
from mcp_types import PaginatedRequestParams
from mcp_types import RequestParamsMeta
from mcp_types import TaskMetadata
from mcp_types.methods import serialize_server_result
from pydantic import ValidationError

from agentos._ui.mcp.task_book import FINAL
from agentos._ui.mcp.task_book import Asked
from agentos._ui.mcp.task_book import TaskBook
from agentos._ui.mcp.task_book import asking_for

TASKS_VERSION = "2025-11-25"
"""The protocol version whose tasks these are."""
RELATED_TASK = "io.modelcontextprotocol/related-task"
CAPABILITY: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}


class ServedTasks:
    """The 2025-11-25 tasks of one server's ``book``: ``middleware`` goes into the server's
    middleware, and ``get``/``result``/``cancel``/``list`` answer ``tasks/*``."""

    def __init__(self, book: TaskBook) -> None:
        self._book = book

    # ------------------------------------------------------------------ tasks/*

    async def get(
        self, ctx: ServerRequestContext[Any, Any], params: GetTaskRequestParams
    ) -> GetTaskResult:
        """``tasks/get``: the task's status and what its session is doing."""
        _served_at(ctx, "tasks/get")
        task = self._book.find(ctx, params.task_id).task
        return GetTaskResult.model_validate(task.model_dump())

    async def result(
        self, ctx: ServerRequestContext[Any, Any], params: GetTaskPayloadRequestParams
    ) -> dict[str, Any]:
        """``tasks/result``: once the task has ended, what the plain call would have
        answered; meanwhile the questions its calls ask go to the client on this request."""
        _served_at(ctx, "tasks/result")
        held = self._book.find(ctx, params.task_id)
        assert held.questions is not None
        async with anyio.create_task_group() as group:
            meta = cast(RequestParamsMeta, {RELATED_TASK: {"taskId": params.task_id}})
            group.start_soon(held.questions.serve, ctx.session, ctx.request_id, meta)
            await held.done.wait()
            group.cancel_scope.cancel()
        assert held.result is not None
        dumped = held.result.model_dump(by_alias=True, mode="json", exclude_none=True)
        answer = serialize_server_result("tools/call", TASKS_VERSION, dumped)
        answer["_meta"] = {**answer.get("_meta", {}), RELATED_TASK: {"taskId": params.task_id}}
        return answer

    async def cancel(
        self, ctx: ServerRequestContext[Any, Any], params: CancelTaskRequestParams
    ) -> CancelTaskResult:
        """``tasks/cancel``: cancel the calls the task's turn started and end the task (the
        session's turn goes on: ``Held.cancel``)."""
        _served_at(ctx, "tasks/cancel")
        held = self._book.find(ctx, params.task_id)
        if held.task.status in FINAL:
            raise MCPError(INVALID_PARAMS, f"task {params.task_id} has already {held.task.status}")
        held.cancel()
        return CancelTaskResult.model_validate(held.task.model_dump())

    async def list(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams
    ) -> ListTasksResult:
        """``tasks/list``: the client's tasks, oldest first, all on one page."""
        _served_at(ctx, "tasks/list")
        if params.cursor is not None:
            raise MCPError(INVALID_PARAMS, f"no cursor {params.cursor!r}: tasks/list has one page")
        return ListTasksResult(tasks=self._book.mine(ctx))

    # ------------------------------------------------------------------ the hook

    async def middleware(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Tasks where the SDK has no place for them: the capability in ``initialize``, the
        task tools' ``execution`` in ``tools/list``, and a task-augmented ``tools/call``
        answered with its task."""
        params = ctx.params if isinstance(ctx.params, Mapping) else {}
        if ctx.method == "tools/call" and params.get("task") is not None:
            return await self._as_task(ctx, call_next, params)
        result = await call_next(ctx)
        if not isinstance(result, dict):
            return result
        if ctx.method == "initialize" and result.get("protocolVersion") == TASKS_VERSION:
            result["capabilities"] = {**result.get("capabilities", {}), "tasks": CAPABILITY}
        elif ctx.method == "tools/list" and ctx.protocol_version == TASKS_VERSION:
            for tool in result.get("tools", []):
                if tool.get("name") in self._book.tools:
                    tool["execution"] = {"taskSupport": "optional"}
        return result

    async def _as_task(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext, params: Mapping[str, Any]
    ) -> HandlerResult:
        if ctx.protocol_version != TASKS_VERSION:  # no tasks at its version: ignored
            return await call_next(ctx)
        name = params.get("name")
        if name not in self._book.tools:
            raise MCPError(METHOD_NOT_FOUND, f"the tool {name!r} does not run as a task")
        try:
            ttl = TaskMetadata.model_validate(params["task"]).ttl
        except ValidationError as error:
            raise MCPError(INVALID_PARAMS, f"a task's metadata is {{ttl?: int}}: {error}") from None
        asked = Asked(ttl)
        with asking_for(asked):
            answer = await call_next(ctx)
        if asked.task is None:  # refused before a task began: the error the call answers
            return answer
        return CreateTaskResult(task=asked.task)


def _served_at(ctx: ServerRequestContext[Any, Any], method: str) -> None:
    """Tasks are the 2025-11-25 protocol's: at another, ``method`` is one it does not have."""
    if ctx.protocol_version != TASKS_VERSION:
        raise MCPError(
            METHOD_NOT_FOUND,
            f"{method} is a method of protocol {TASKS_VERSION}, not {ctx.protocol_version}",
        )
