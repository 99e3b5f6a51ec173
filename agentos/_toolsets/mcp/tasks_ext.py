"""A tool call on a server that offers the ``io.modelcontextprotocol/tasks`` extension (the
newer tasks, SEP-2663): a call the server runs as a task follows it with ``tasks/get``, its
status and status message the call's progress and its inlined result the call's result; what
the task asks (``inputRequests``: a question, the session's model, the roots) reaches the
person or the model as a server's request does, and goes back with ``tasks/update``;
cancelling the call sends ``tasks/cancel``. The task's id is in every progress entry, as for
the older tasks (``tasks.py``), so a host that resumes the session after a restart goes on
with the task (``call``'s ``resumed``). Every call that is not one of the older tasks goes
through ``call``: on a connection without the extension it is a plain ``tools/call``.

The extension rides on the 2026-07-28 protocol, where a connection is set up by
``server/discover`` instead of ``initialize``. Over HTTP, where that probe commits nothing,
a server is probed first and spoken to in the 2026-07-28 protocol when it offers the
extension; any other server, and every stdio server (whose first request fixes the
protocol of the whole connection), gets the ``initialize`` handshake as before, and with it
the 2025-11-25 tasks if it runs those (``tasks.py``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

import anyio

from agentos._kernel.context import ToolContext
from agentos._toolsets.mcp.tasks import CANCEL_WAIT
from agentos._toolsets.mcp.tasks import FINAL
from agentos._toolsets.mcp.tasks import POLL_SECONDS
from agentos._toolsets.mcp.tasks import report
from agentos._toolsets.mcp.transport import InWords

TASKS = "io.modelcontextprotocol/tasks"
"""The extension's identifier, under ``capabilities.extensions``."""
MODERN = "2026-07-28"
"""The protocol the extension rides on."""
INPUT_ROUNDS = 50
"""At most this many rounds of input for one call not run as a task (a loop's end)."""

Answer = Callable[[Any], Awaitable[Any]]
"""An input request the server's answer carries -> its response (``ErrorData``: refused)."""


class TaskError(InWords):
    """A task the server answered about in a way that ends the call (its words say how)."""


def session_options() -> dict[str, Any]:
    """What a ``ClientSession`` takes to offer the extension: its capability, and the claim
    that lets ``tools/call`` answer with a task (both only in the 2026-07-28 protocol)."""
    from mcp.client.extension import ResultClaim

    from agentos._toolsets.mcp.tasks_wire import CreatedTask
    from agentos._toolsets.mcp.tasks_wire import not_resolved_here

    claim = ResultClaim(
        result_type="task",
        model=CreatedTask,
        resolve=not_resolved_here,
        protocol_versions=frozenset({MODERN}),
    )
    return {"extensions": {TASKS: {}}, "result_claims": {TASKS: [claim]}}


async def connect(session: Any, *, probe: bool) -> None:
    """Set the connection up: ``initialize``, unless ``probe`` (HTTP) finds with
    ``server/discover`` a server that offers the extension (then the 2026-07-28 protocol)."""
    from mcp import MCPError
    from mcp_types import DiscoverResult
    from pydantic import ValidationError

    if probe:
        try:
            found = DiscoverResult.model_validate(await session.send_discover(MODERN))
        except (MCPError, ValidationError):  # no discover, or not one agentos speaks
            found = None
        offered = None if found is None else found.capabilities.extensions
        if found is not None and MODERN in found.supported_versions and TASKS in (offered or {}):
            session.adopt(found)
            return
    await session.initialize()


def offers_tasks(session: Any) -> bool:
    """Whether the connection speaks the extension (the 2026-07-28 protocol, and the server
    declared it)."""
    if session.protocol_version != MODERN:
        return False
    offered = session.server_capabilities
    extensions = None if offered is None else offered.extensions
    return extensions is not None and TASKS in extensions


async def call(
    session: Any,
    remote: str,
    args: dict[str, Any],
    ctx: ToolContext,
    meta: Any,
    progress: Any,
    answer: Answer,
    started: Callable[[str], None],
    resumed: str | None = None,
) -> Any:
    """``tools/call`` (offering the extension when the connection speaks it): its
    ``CallToolResult``, at once or once the task it became ends (``started`` is told its
    id); the input it asks for on the way is answered and the call sent again with the
    answers. ``resumed``: the task the call ran as before a restart, followed instead of
    calling the tool again."""
    from mcp_types import CallToolResult
    from mcp_types import InputRequiredResult

    if resumed is not None:
        task = await _get(session, resumed)
        started(resumed)
        return await _follow(session, task, ctx, answer)

    answers: dict[str, Any] | None = None
    state: str | None = None
    for _ in range(INPUT_ROUNDS):
        result = await session.call_tool(
            remote,
            args,
            read_timeout_seconds=None,
            progress_callback=progress,
            meta=meta,
            input_responses=answers,
            request_state=state,
            allow_input_required=True,
            allow_claimed=True,
        )
        if isinstance(result, CallToolResult):
            return result
        if not isinstance(result, InputRequiredResult):
            started(result.task_id)
            return await _follow(session, result, ctx, answer)
        answers = await _answers(result.input_requests or {}, answer, f"the call of {remote}")
        state = result.request_state
    raise TaskError(f"{remote} asked for input {INPUT_ROUNDS} times without ending")


async def _follow(session: Any, task: Any, ctx: ToolContext, answer: Answer) -> Any:
    """Read the task until it ends (each change of status a progress report), answering
    what it asks; a call that ends before the task cancels it."""
    task_id: str = task.task_id
    answered: dict[str, str] = {}
    shown: tuple[str, str] | None = None
    try:
        if task.status in FINAL and getattr(task, "result_type", None) == "task":
            task = await _get(session, task_id)  # created already ended: its outcome is read
        while True:
            shown = report(ctx, task, shown)
            if task.status in FINAL:
                return _outcome(task)
            asked = _new_inputs(getattr(task, "input_requests", None) or {}, answered, task_id)
            if task.status == "input_required" and asked:
                given = await _answers(asked, answer, f"task {task_id}")
                dumped = {
                    k: v.model_dump(by_alias=True, mode="json", exclude_none=True)
                    for k, v in given.items()
                }
                await _send(session, "tasks/update", task_id, dumped)
                answered |= {key: _fingerprint(request) for key, request in asked.items()}
            else:
                interval = (task.poll_interval_ms or 1000) / 1000
                await anyio.sleep(min(max(interval, POLL_SECONDS[0]), POLL_SECONDS[1]))
            task = await _get(session, task_id)
    except BaseException:
        if task.status not in FINAL:  # a closing connection may refuse it: the call ends anyway
            with anyio.move_on_after(CANCEL_WAIT, shield=True), contextlib.suppress(Exception):
                await _send(session, "tasks/cancel", task_id)
        raise


def _new_inputs(inputs: dict[str, Any], answered: dict[str, str], task_id: str) -> dict[str, Any]:
    """The input requests not answered yet. A key answered before comes back while the
    server takes the answer; the same key asking something else is the server's error (as
    the reference client has it), which would otherwise never be asked."""
    fresh = {}
    for key, request in inputs.items():
        if key not in answered:
            fresh[key] = request
        elif answered[key] != _fingerprint(request):
            raise TaskError(f"task {task_id} reused its input key {key!r} for another request")
    return fresh


def _fingerprint(request: Any) -> str:
    """A request as canonical JSON, to tell a repeat from a different request."""
    dumped = request if isinstance(request, dict) else request.model_dump(mode="json")
    return json.dumps(dumped, sort_keys=True, default=str)


async def _answers(requests: dict[str, Any], answer: Answer, whose: str) -> dict[str, Any]:
    """Each input request's response, in turn (a person answers one question at a time)."""
    from mcp_types import ErrorData
    from mcp_types import InputRequest
    from pydantic import TypeAdapter
    from pydantic import ValidationError

    parse: TypeAdapter[Any] = TypeAdapter(InputRequest)
    given: dict[str, Any] = {}
    for key, request in requests.items():
        try:
            asked = request if not isinstance(request, dict) else parse.validate_python(request)
        except ValidationError as error:
            raise TaskError(
                f"{whose} asks for input {key!r} in a malformed way: {_first(error)}"
            ) from None
        response = await answer(asked)
        if isinstance(response, ErrorData):
            raise TaskError(f"{whose} asked for {asked.method}, refused: {response.message}")
        given[key] = response
    return given


async def _get(session: Any, task_id: str) -> Any:
    """``tasks/get``: the task's status, checked."""
    from pydantic import ValidationError

    from agentos._toolsets.mcp.tasks_wire import DetailedTask

    try:
        task = await _send(session, "tasks/get", task_id, result=DetailedTask)
    except ValidationError as error:
        raise TaskError(
            f"the server's status of task {task_id} is malformed: {_first(error)}"
        ) from None
    if task.task_id != task_id:
        raise TaskError(f"asked about task {task_id}, the server answered about {task.task_id}")
    return task


async def _send(
    session: Any,
    method: str,
    task_id: str,
    answers: dict[str, Any] | None = None,
    *,
    result: Any = None,
) -> Any:
    """One ``tasks/*`` request through the session (which stamps the 2026-07-28 envelope)."""
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED
    from mcp_types import Result

    from agentos._toolsets.mcp.tasks_wire import task_request

    try:
        return await session.send_request(task_request(method, task_id, answers), result or Result)
    except MCPError as error:
        if error.code == CONNECTION_CLOSED:
            raise
        raise TaskError(f"{method} of task {task_id}: {error.error.message}") from None


def _outcome(task: Any) -> Any:
    """The ``CallToolResult`` of a task that ended."""
    from mcp_types import CallToolResult
    from pydantic import ValidationError

    if task.status == "cancelled":
        raise TaskError(f"task {task.task_id} was cancelled by the server")
    if task.status == "failed":
        why = task.error.message if task.error is not None else task.status_message
        raise TaskError(f"task {task.task_id} failed: {why or 'the server says no more'}")
    if task.result is None:
        raise TaskError(f"task {task.task_id} completed without a result")
    try:
        return CallToolResult.model_validate(task.result)
    except ValidationError as error:
        raise TaskError(
            f"the result of task {task.task_id} is malformed: {_first(error)}"
        ) from None


def _first(error: Any) -> str:
    """A validation error's first complaint, in words."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the answer"
    return f"{where}: {first['msg']}"
