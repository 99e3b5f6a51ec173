"""A ``post`` (or ``start_session``) run as an MCP task, the 2025-11-25 protocol's tasks: a
``tools/call`` that asks for one is answered at once with the task, the turn goes on in the
host whatever becomes of the request or its connection, and ``tasks/get``, ``tasks/result``,
``tasks/cancel`` and ``tasks/list`` follow it, collect its answer and stop it. Tasks belong
to whoever started them (the token holder over HTTP, on any connection), as sessions do;
another's task id answers as an unknown one. A finished task is forgotten once its TTL has
passed, and a client holds at most ``MAX_HELD`` tasks.

The ``mcp`` SDK (2.3) serves none of this: its ``tools/call`` answer must be a
``CallToolResult``, and its extension hook may not bind ``tasks/*``. So a server middleware
(the SDK's public, provisional hook) hands a task-augmented call to the tool through a context
variable and answers with the task the tool started, and adds the ``tasks`` capability and
each task tool's ``execution`` to ``initialize`` and ``tools/list``; ``tasks/*`` are request
handlers of the low-level server.

A question one of the task's calls asks (``asking``) makes the task ``input_required``, its
status message the question, until it is answered: a client waiting on ``tasks/result`` is
sent it as ``elicitation/create`` naming the task in ``_meta``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

import anyio
import pydantic_core
from anyio.abc import TaskGroup
from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    CallToolResult,
    CancelTaskRequestParams,
    CancelTaskResult,
    CreateTaskResult,
    GetTaskPayloadRequestParams,
    GetTaskRequestParams,
    GetTaskResult,
    ListTasksResult,
    PaginatedRequestParams,
    RequestParamsMeta,
    Task,
    TaskMetadata,
    TaskStatus,
    TextContent,
)
from mcp_types.methods import serialize_server_result
from pydantic import ValidationError

from agentos._ui.mcp.asking import ClientAsking, TaskQuestions

TASKS_VERSION = "2025-11-25"
"""The protocol version whose tasks these are."""
DEFAULT_TTL_MS = 3600 * 1000
"""How long a task is kept after it is created when the client asks no TTL."""
MAX_TTL_MS = 24 * 3600 * 1000
"""The longest TTL granted, whatever the client asks."""
MAX_HELD = 100
"""The most tasks one client holds; the oldest finished one is forgotten for a new one."""
POLL_MS = 1000
"""How often a client is told to read a working task's status."""
FINAL: frozenset[TaskStatus] = frozenset({"completed", "failed", "cancelled"})
RELATED_TASK = "io.modelcontextprotocol/related-task"
CAPABILITY: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}

Tell = Callable[[str], Awaitable[None]]
"""How a task's work says what the session is doing (its status message)."""
Work = Callable[[Tell], Awaitable[dict[str, Any]]]
"""A task's work: the turn, told how to report, returning what the tool would have."""


@dataclass(slots=True)
class Asked:
    """A ``tools/call`` that asked to run as a task: the TTL it asked for, and the task the
    tool started (None while it started none, as when it refused the arguments)."""

    ttl: int | None
    task: Task | None = None


_ASKED: ContextVar[Asked | None] = ContextVar("agentos_mcp_task_asked", default=None)


@dataclass(slots=True)
class _Held:
    """A task this server runs or ran, and whose it is."""

    owner: str
    task: Task
    expires: float
    """When (``time.monotonic``) the task may be forgotten once it has finished."""
    done: anyio.Event = field(default_factory=anyio.Event)
    result: CallToolResult | None = None
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    told: str = ""
    """What the work said last (the status message again once no question waits)."""
    questions: TaskQuestions | None = None

    def tell(self, said: str) -> None:
        """What the session is doing: the status message, unless a question waits."""
        self.told = said
        if self.task.status != "input_required":
            self.update(message=said)

    def asking(self, question: str | None) -> None:
        """A call waits for an answer (``question``: the first such), or none does now."""
        if question is not None:
            self.update("input_required", question)
        elif self.task.status == "input_required":
            self.update("working", self.told)

    def update(self, status: TaskStatus | None = None, message: str | None = None) -> None:
        """A new status or status message; a final status is never changed."""
        if self.task.status in FINAL:
            return
        changes: dict[str, Any] = {"last_updated_at": _now()}
        if status is not None:
            changes["status"] = status
        if message is not None:
            changes["status_message"] = message
        self.task = self.task.model_copy(update=changes)


class ServedTasks:
    """The tasks of one server: ``middleware`` goes into the server's middleware, ``run``
    into its lifespan, and ``get``/``result``/``cancel``/``list`` answer ``tasks/*``.
    ``owner_of`` says whose a request is by its headers; ``tools`` may run as tasks."""

    def __init__(
        self,
        owner_of: Callable[[Mapping[str, str] | None], str],
        tools: frozenset[str],
        asking: ClientAsking,
    ) -> None:
        self._owner_of = owner_of
        self._tools = tools
        self._asking = asking
        self._held: dict[str, _Held] = {}
        self._group: TaskGroup | None = None

    async def run(self) -> None:
        """Hold the tasks' work until cancelled (the server stops): it then stops too."""
        async with anyio.create_task_group() as self._group:
            await anyio.sleep_forever()

    @staticmethod
    def asked() -> Asked | None:
        """What the ``tools/call`` being answered asked, if it asked to run as a task."""
        return _ASKED.get()

    def start(self, asked: Asked, owner: str, work: Work, said: str) -> TaskQuestions:
        """Run ``work`` as ``owner``'s task (``said``: its first status message); ``asked``
        is told the task. The task's questions: the route its session's calls ask by."""
        if self._group is None:
            raise MCPError(INTERNAL_ERROR, "the server runs no tasks yet")
        self._forget_expired()
        self.room_for(owner)
        ttl = min(DEFAULT_TTL_MS if asked.ttl is None else max(asked.ttl, 0), MAX_TTL_MS)
        now = _now()
        task = Task(
            task_id=secrets.token_urlsafe(12),
            status="working",
            status_message=said,
            created_at=now,
            last_updated_at=now,
            ttl=ttl,
            poll_interval=POLL_MS,
        )
        held = _Held(owner, task, time.monotonic() + ttl / 1000, told=said)
        held.questions = TaskQuestions(self._asking, held.asking)
        self._held[task.task_id] = held
        self._group.start_soon(self._work, held, work)
        asked.task = task
        return held.questions

    async def _work(self, held: _Held, work: Work) -> None:
        async def tell(said: str) -> None:
            held.tell(said)

        outcome: CallToolResult
        with held.scope:
            try:
                value = await work(tell)
            except ToolError as error:
                outcome = _error(str(error))
            except Exception as error:  # what the tool would have answered: its error in words
                outcome = _error(f"{type(error).__name__}: {error}")
            else:
                text = pydantic_core.to_json(value, fallback=str, indent=2).decode()
                outcome = CallToolResult(
                    content=[TextContent(type="text", text=text)], structured_content=value
                )
            held.result = outcome
            held.update("failed" if outcome.is_error else "completed")
        if held.result is None:  # cancelled (tasks/cancel) before it had an answer
            held.result = _error(held.task.status_message or "the task was cancelled")
        held.done.set()

    # ------------------------------------------------------------------ tasks/*

    async def get(
        self, ctx: ServerRequestContext[Any, Any], params: GetTaskRequestParams
    ) -> GetTaskResult:
        """``tasks/get``: the task's status and what its session is doing."""
        task = self._find(ctx, params.task_id).task
        return GetTaskResult.model_validate(task.model_dump())

    async def result(
        self, ctx: ServerRequestContext[Any, Any], params: GetTaskPayloadRequestParams
    ) -> dict[str, Any]:
        """``tasks/result``: once the task has ended, what the plain call would have
        answered; meanwhile the questions its calls ask go to the client on this request."""
        held = self._find(ctx, params.task_id)
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
        """``tasks/cancel``: stop the task's turn, and the calls it started."""
        held = self._find(ctx, params.task_id)
        if held.task.status in FINAL:
            raise MCPError(INVALID_PARAMS, f"task {params.task_id} has already {held.task.status}")
        held.update("cancelled", "cancelled by the MCP client")
        held.scope.cancel()
        return CancelTaskResult.model_validate(held.task.model_dump())

    async def list(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams
    ) -> ListTasksResult:
        """``tasks/list``: the client's tasks, oldest first, all on one page."""
        if params.cursor is not None:
            raise MCPError(INVALID_PARAMS, f"no cursor {params.cursor!r}: tasks/list has one page")
        self._forget_expired()
        owner = self._owner(ctx)
        return ListTasksResult(tasks=[h.task for h in self._held.values() if h.owner == owner])

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
                if tool.get("name") in self._tools:
                    tool["execution"] = {"taskSupport": "optional"}
        return result

    async def _as_task(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext, params: Mapping[str, Any]
    ) -> HandlerResult:
        if ctx.protocol_version != TASKS_VERSION:  # no tasks at its version: ignored
            return await call_next(ctx)
        name = params.get("name")
        if name not in self._tools:
            raise MCPError(METHOD_NOT_FOUND, f"the tool {name!r} does not run as a task")
        try:
            ttl = TaskMetadata.model_validate(params["task"]).ttl
        except ValidationError as error:
            raise MCPError(INVALID_PARAMS, f"a task's metadata is {{ttl?: int}}: {error}") from None
        asked = Asked(ttl)
        token = _ASKED.set(asked)
        try:
            answer = await call_next(ctx)
        finally:
            _ASKED.reset(token)
        if asked.task is None:  # refused before a task began: the error the call answers
            return answer
        return CreateTaskResult(task=asked.task)

    # ------------------------------------------------------------------ helpers

    def _owner(self, ctx: ServerRequestContext[Any, Any]) -> str:
        return self._owner_of(getattr(ctx.request, "headers", None))

    def _find(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> _Held:
        self._forget_expired()
        held = self._held.get(task_id)
        if held is None or held.owner != self._owner(ctx):
            raise MCPError(INVALID_PARAMS, f"unknown task {task_id!r}")
        return held

    def _forget_expired(self) -> None:
        now = time.monotonic()
        for task_id, held in list(self._held.items()):
            if held.done.is_set() and now >= held.expires:
                del self._held[task_id]

    def room_for(self, owner: str) -> None:
        """Forget ``owner``'s oldest finished tasks until a new one fits; refuse (an
        ``MCPError``) when all ``MAX_HELD`` still work."""
        mine = [(i, h) for i, h in self._held.items() if h.owner == owner]
        finished = [i for i, h in mine if h.done.is_set()]
        for task_id in finished[: max(len(mine) - MAX_HELD + 1, 0)]:
            del self._held[task_id]
        if len(mine) - len(finished) >= MAX_HELD:
            raise MCPError(
                INVALID_REQUEST,
                f"you hold {MAX_HELD} tasks still working: wait for one or cancel one",
            )


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")
