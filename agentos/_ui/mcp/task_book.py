"""What both generations of MCP tasks share (``tasks.py``, the 2025-11-25 protocol's;
``tasks_ext.py``, the ``io.modelcontextprotocol/tasks`` extension's): the tasks one server
runs, whose each is, how long each is kept, and their work.

A ``tools/call`` that asks to run as a task hands that wish to the tool through a context
variable (``asking_for``), and the tool starts its task (``start``) instead of following the
turn itself: the turn goes on in the server's lifespan whatever becomes of the request or
its connection, what it would have told as progress becomes the task's status message,
and a question one of its calls asks makes it ``input_required`` until answered. When the
server stops, a task still working fails, its calls left to the host (not cancelled as a
``tasks/cancel`` would). Tasks
belong to whoever started them (the token holder over HTTP, on any connection), as
sessions do; another's task id answers as an unknown one. A finished task is forgotten
once its TTL has passed since it began and since it ended, and an owner holds at most so
many tasks still working (the server's cap, ``MAX_HELD`` unless it says).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from typing import Any

import anyio
import pydantic_core
from anyio.abc import TaskGroup
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import INTERNAL_ERROR
from mcp_types import INVALID_PARAMS
from mcp_types import INVALID_REQUEST
from mcp_types import CallToolResult
from mcp_types import Task
from mcp_types import TaskStatus
from mcp_types import TextContent

from agentos._ui.mcp.asking import ClientAsking
from agentos._ui.mcp.asking import TaskQuestions

DEFAULT_TTL_MS = 3600 * 1000
"""How long a task is kept after it is created when the client asks no TTL."""
MAX_TTL_MS = 24 * 3600 * 1000
"""The longest TTL granted, whatever the client asks."""
MAX_HELD = 100
"""The most tasks one client holds by default; the oldest finished one is forgotten for a
new one."""
POLL_MS = 1000
"""How often a client is told to read a working task's status."""
FINAL: frozenset[TaskStatus] = frozenset({"completed", "failed", "cancelled"})

CANCELLED = "the MCP client cancelled its task"
"""Why a task's calls are cancelled when ``tasks/cancel`` stops it."""
CANCEL_SAYS = (
    "cancelled by the MCP client: the calls its turn started are cancelled; the session goes "
    "on (its model hears so, answers, and may start other calls)"
)
"""A cancelled task's status message: what was stopped and what was not."""
STOPPED = "agentos mcp stopped before the turn ended: its calls were left to the host"
"""What a task still working says once the server stops."""

Tell = Callable[[str], Awaitable[None]]
"""How a task's work says what the session is doing (its status message)."""
Why = Callable[[], str | None]
"""Why the work is being cancelled: the reason to cancel its calls with, or None to leave
them running in the host (the server stops, not the client)."""
Work = Callable[[Tell, Why], Awaitable[dict[str, Any]]]
"""A task's work: the turn, told how to report and, if it is cancelled, why; returning
what the tool would have."""


@dataclass(slots=True)
class Asked:
    """A ``tools/call`` that asked to run as a task: the TTL it asked for (None: the
    default), and the task the tool started (None while it started none, as when it refused
    the arguments)."""

    ttl: int | None
    task: Task | None = None


_ASKED: ContextVar[Asked | None] = ContextVar("agentos_mcp_task_asked", default=None)


@contextmanager
def asking_for(asked: Asked) -> Iterator[None]:
    """While the ``tools/call`` goes through the SDK to its tool: the tool runs as a task."""
    token = _ASKED.set(asked)
    try:
        yield
    finally:
        _ASKED.reset(token)


@dataclass(slots=True)
class Held:
    """A task this server runs or ran, and whose it is."""

    owner: str
    task: Task
    expires: float
    """When (``time.monotonic``) the task may be forgotten once it has finished: its TTL
    after it began, and again after it ended (a turn may outlast its TTL)."""
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
        changes: dict[str, Any] = {"last_updated_at": now()}
        if status is not None:
            changes["status"] = status
        if message is not None:
            changes["status_message"] = message
        self.task = self.task.model_copy(update=changes)

    def cancel(self) -> None:
        """``tasks/cancel``: stop following the task's turn and cancel the calls it started.
        The session's turn itself goes on (agentos stops a turn only by stopping its session),
        so the status message says so."""
        self.update("cancelled", CANCEL_SAYS)
        self.scope.cancel()


class TaskBook:
    """The tasks of one server: ``run`` goes into its lifespan; ``owner_of`` says whose a
    request is by its headers; ``tools`` may run as tasks; an owner holds at most
    ``max_held``."""

    def __init__(
        self,
        owner_of: Callable[[Mapping[str, str] | None], str],
        tools: frozenset[str],
        asking: ClientAsking,
        max_held: int = MAX_HELD,
    ) -> None:
        if max_held < 1:
            raise ValueError(f"an owner holds at least one task, not {max_held}")
        self.tools = tools
        self._max_held = max_held
        self._owner_of = owner_of
        self._asking = asking
        self._held: dict[str, Held] = {}
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
        created = now()
        task = Task(
            task_id=secrets.token_urlsafe(12),
            status="working",
            status_message=said,
            created_at=created,
            last_updated_at=created,
            ttl=ttl,
            poll_interval=POLL_MS,
        )
        held = Held(owner, task, time.monotonic() + ttl / 1000, told=said)
        held.questions = TaskQuestions(self._asking, held.asking)
        self._held[task.task_id] = held
        self._group.start_soon(self._work, held, work)
        asked.task = task
        return held.questions

    async def _work(self, held: Held, work: Work) -> None:
        async def tell(said: str) -> None:
            held.tell(said)

        def why() -> str | None:
            return CANCELLED if held.scope.cancel_called else None

        outcome: CallToolResult
        try:
            with held.scope:
                try:
                    value = await work(tell, why)
                except ToolError as error:
                    outcome = _error(str(error))
                except Exception as error:  # what the tool would have answered, in words
                    outcome = _error(f"{type(error).__name__}: {error}")
                else:
                    text = pydantic_core.to_json(value, fallback=str, indent=2).decode()
                    outcome = CallToolResult(
                        content=[TextContent(type="text", text=text)], structured_content=value
                    )
                held.result = outcome
                held.update("failed" if outcome.is_error else "completed")
        except anyio.get_cancelled_exc_class():  # the server stops: the task ends unanswered
            held.update("failed", STOPPED)
            raise
        finally:
            if held.result is None:  # cancelled (tasks/cancel, or the server stops)
                held.result = _error(held.task.status_message or "the task was cancelled")
            held.expires = max(held.expires, time.monotonic() + (held.task.ttl or 0) / 1000)
            held.done.set()

    def owner(self, ctx: ServerRequestContext[Any, Any]) -> str:
        """Whose the request is."""
        return self._owner_of(getattr(ctx.request, "headers", None))

    def find(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> Held:
        """The task ``task_id`` of the request's owner (another's: an unknown task)."""
        self._forget_expired()
        held = self._held.get(task_id)
        if held is None or held.owner != self.owner(ctx):
            raise MCPError(INVALID_PARAMS, f"unknown task {task_id!r}")
        return held

    def mine(self, ctx: ServerRequestContext[Any, Any]) -> list[Task]:
        """The request's owner's tasks, oldest first."""
        self._forget_expired()
        owner = self.owner(ctx)
        return [h.task for h in self._held.values() if h.owner == owner]

    def _forget_expired(self) -> None:
        moment = time.monotonic()
        for task_id, held in list(self._held.items()):
            if held.done.is_set() and moment >= held.expires:
                del self._held[task_id]

    def room_for(self, owner: str) -> None:
        """Forget ``owner``'s oldest finished tasks until a new one fits; refuse (an
        ``MCPError``) when all it may hold still work."""
        most = self._max_held
        mine = [(i, h) for i, h in self._held.items() if h.owner == owner]
        finished = [i for i, h in mine if h.done.is_set()]
        for task_id in finished[: max(len(mine) - most + 1, 0)]:
            del self._held[task_id]
        if len(mine) - len(finished) >= most:
            raise MCPError(
                INVALID_REQUEST, f"you hold {most} tasks still working: wait for one or cancel one"
            )


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def now() -> str:
    """The time as a task's ``createdAt`` and ``lastUpdatedAt`` say it."""
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")
