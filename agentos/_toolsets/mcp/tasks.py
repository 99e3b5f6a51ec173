"""A tool call that runs as an MCP task (the 2025-11-25 protocol's tasks): the server answers
``tools/call`` with a task at once, its status and status message are the call's progress,
``tasks/result`` brings its result (and, meanwhile, what it asks: a question about the task
comes back through it), and cancelling the call sends ``tasks/cancel``. The task's id is in
every progress entry, so the store's mirror of the call keeps it, and a host that resumes the
session after a restart goes on with the task (``resume_task``) instead of losing the call.

The ``mcp`` SDK (2.3) has the task types but no client for them: it checks a task-augmented
``tools/call``'s answer as a ``CallToolResult`` and refuses the task. So these requests go
out raw through the session's dispatcher and are read here with the SDK's own types.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import anyio

from agentos._kernel.context import ToolContext

TTL_MS = 24 * 3600 * 1000
"""How long the server is asked to keep a task and its result after it is created."""
POLL_SECONDS = (0.2, 5.0)
"""The bounds on how often a task's status is read (the server suggests, within these)."""
CANCEL_WAIT = 5.0
"""Seconds a cancel waits for the server to take ``tasks/cancel``."""
FINAL = frozenset({"completed", "failed", "cancelled"})
RELATED_TASK = "io.modelcontextprotocol/related-task"
"""The ``_meta`` key by which a server's request says which task it is about."""


def runs_as_task(session: Any, execution: Any) -> bool:
    """Whether a tool runs as a task: it asks for one (or allows one) and the server runs
    tools/call as tasks."""
    support = None if execution is None else execution.task_support
    if support not in ("required", "optional"):
        return False
    offered = session.server_capabilities
    tasks = None if offered is None else offered.tasks
    requests = None if tasks is None else tasks.requests
    tools = None if requests is None else requests.tools
    return tools is not None and tools.call is not None


async def run_task(
    session: Any,
    remote: str,
    args: dict[str, Any],
    ctx: ToolContext,
    meta: Any,
    started: Callable[[str], None],
) -> Any:
    """Start ``remote`` as a task (``started`` is told its id) and return its
    ``CallToolResult`` once it ends. The call's progress follows the task; cancelling the
    call cancels the task."""
    from mcp_types import CreateTaskResult

    params: dict[str, Any] = {"name": remote, "arguments": args, "task": {"ttl": TTL_MS}}
    if meta:
        params["_meta"] = meta
    task = CreateTaskResult.model_validate(await raw(session, "tools/call", params)).task
    started(task.task_id)
    return await _to_the_end(session, task, ctx)


async def resume_task(
    session: Any, task_id: str, ctx: ToolContext, started: Callable[[str], None]
) -> Any:
    """Go on with the task ``task_id`` a call ran as before a restart: its
    ``CallToolResult`` once it ends, the call's progress following it meanwhile."""
    from mcp_types import GetTaskResult

    task = GetTaskResult.model_validate(await raw(session, "tasks/get", {"taskId": task_id}))
    started(task_id)
    return await _to_the_end(session, task, ctx)


async def _to_the_end(session: Any, task: Any, ctx: ToolContext) -> Any:
    """Follow ``task`` until ``tasks/result`` brings its ``CallToolResult``; a cancel of the
    call sends ``tasks/cancel``."""
    from mcp_types import CallToolResult

    shown = report(ctx, task, None)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_follow, session, task, ctx, shown)
            payload = await raw(session, "tasks/result", {"taskId": task.task_id})
            group.cancel_scope.cancel()
    except anyio.get_cancelled_exc_class():
        # A closing connection may refuse it: the call's own cancel is what matters.
        with anyio.move_on_after(CANCEL_WAIT, shield=True), contextlib.suppress(Exception):
            await raw(session, "tasks/cancel", {"taskId": task.task_id})
        raise
    return CallToolResult.model_validate(payload)


async def raw(session: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One request, its answer unchecked by the SDK (see the module's note)."""
    answer: dict[str, Any] = await session._dispatcher.send_raw_request(method, params, {})
    return answer


async def _follow(session: Any, task: Any, ctx: ToolContext, shown: tuple[str, str] | None) -> None:
    """Read the task's status until it ends, each change a progress report."""
    from mcp_types import GetTaskResult

    while task.status not in FINAL:
        interval = (task.poll_interval or 1000) / 1000
        await anyio.sleep(min(max(interval, POLL_SECONDS[0]), POLL_SECONDS[1]))
        try:
            read = await raw(session, "tasks/get", {"taskId": task.task_id})
            task = GetTaskResult.model_validate(read)
        except Exception:  # no status to show: tasks/result still brings the outcome
            return
        shown = report(ctx, task, shown)


def report(ctx: ToolContext, task: Any, shown: tuple[str, str] | None) -> tuple[str, str]:
    """The task's status as the call's progress, when it changed since ``shown``."""
    now = (str(task.status), task.status_message or "")
    if now != shown:
        entry: dict[str, Any] = {"task_id": task.task_id, "status": now[0]}
        if now[1]:
            entry["text"] = now[1]
        ctx.progress(entry)
    return now


def related_task(context: Any, params: Any) -> str | None:
    """The task a server's request is about, if it says (its ``_meta``)."""
    for meta in (getattr(context, "meta", None), getattr(params, "meta", None)):
        related = _get(meta, RELATED_TASK)
        task_id = _get(related, "taskId") or _get(related, "task_id")
        if isinstance(task_id, str):
            return task_id
    return None


def _get(value: Any, key: str) -> Any:
    if isinstance(value, dict):
        return value.get(key)
    return getattr(value, key, None) if value is not None else None
