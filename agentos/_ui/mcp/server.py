"""A host served over MCP: another agent (Claude Code, Cursor, another agentos) starts
sessions, talks to them, and looks at and cancels their calls.

Each client sees only the sessions it started: over HTTP, whoever shows the token, on any
connection (a one-shot client follows up from its next one); without a token, its own
connection (so then the 2026-07-28 protocol, which has none, is refused: ``owners``);
another's id answers as one that does not exist. Those sessions are its
resources too (``resources``), which it may read and subscribe to. The capabilities give the
system toolbox's own answers, scoped to the session named and the sub-agents it runs. A
``post`` (and ``start_session``) lasts until the model has answered; meanwhile progress
notifications name the session first, then tell each of its calls starting, progressing and
ending, and a cancel from the client stops the calls that turn started. Asked to run as a
task (the 2025-11-25 protocol's, ``tasks``, or the tasks extension's at 2026-07-28,
``tasks_ext``), it answers at once and the turn goes on in the host (``task_book``): what it
would have told as progress becomes the task's status message. What a call asks a person goes to the
client that follows its session (``asking``), or waits for the ``answer`` tool.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import asynccontextmanager
from contextlib import contextmanager
from typing import Any
from typing import Literal

import anyio
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import INVALID_PARAMS
from mcp_types import CompleteRequestParams
from mcp_types import EmptyResult
from mcp_types import GetPromptRequestParams
from mcp_types import GetPromptResult
from mcp_types import GetTaskPayloadRequestParams
from mcp_types import LoggingLevel
from mcp_types import LoggingMessageNotification
from mcp_types import LoggingMessageNotificationParams
from mcp_types import PaginatedRequestParams
from mcp_types import ReadResourceRequestParams
from mcp_types import SetLevelRequestParams
from mcp_types import SubscribeRequestParams
from mcp_types import UnsubscribeRequestParams

import agentos
from agentos import AgentConfig
from agentos import AgentOSError
from agentos import CallEvent
from agentos import Host
from agentos import Session
from agentos._ui.asking import ASK_TIMEOUT
from agentos._ui.mcp.asking import ClientAsking
from agentos._ui.mcp.logging_levels import heard_at
from agentos._ui.mcp.logging_levels import level_of
from agentos._ui.mcp.owners import client_of
from agentos._ui.mcp.owners import one_client_each
from agentos._ui.mcp.owners import owner_of
from agentos._ui.mcp.resources import SessionResources
from agentos._ui.mcp.resources import state_of
from agentos._ui.mcp.task_book import MAX_HELD
from agentos._ui.mcp.task_book import TaskBook
from agentos._ui.mcp.task_book import Why
from agentos._ui.mcp.tasks import ServedTasks
from agentos._ui.mcp.tasks_ext import TasksExtension
from agentos._ui.posted_turn import PostedTurn
from agentos.turns import Caller
from agentos.turns import Scope

MCP_SESSION_HEADER = "mcp-session-id"
REQUEST_CANCELLED = "the MCP client cancelled its request"
"""Why a post's calls are cancelled when its request is."""


class HostOverMcp:
    """The MCP tools over one host: ``app()`` is the server to run (stdio or HTTP)."""

    def __init__(
        self,
        host: Host,
        agents: Mapping[str, AgentConfig],
        default: str,
        *,
        ask_timeout: float | None = ASK_TIMEOUT,
        max_tasks: int = MAX_HELD,
    ) -> None:
        """``agents``: what ``start_session(agent=...)`` may name; ``default`` when it names
        none. The questions the host's calls ask go to the clients (a host given its own
        ``ask_person`` keeps it), who have ``ask_timeout`` seconds to answer each. A client
        holds at most ``max_tasks`` tasks still working."""
        if default not in agents:
            raise ValueError(f"the default agent {default!r} is not one of the agents")
        self._host = host
        self._agents = dict(agents)
        self._default = default
        self._clients: dict[str, set[str]] = {}
        """Per owner (``owner_of``: whoever shows the token over HTTP, whichever connection it
        comes on; the one client on stdio): the ids of the sessions it started."""
        self._levels: dict[str, LoggingLevel] = {}
        """Per client that set one (``logging/setLevel``): the least severe level it hears."""
        self._resources = SessionResources(host, self._started_by)
        self._asking = ClientAsking(host, ask_timeout)
        if host.runtime.ask_person is None:
            host.runtime.ask_person = self._asking
        tools = frozenset({"start_session", "post"})
        self._tasks = TaskBook(owner_of, tools, self._asking, max_tasks)
        self._older = ServedTasks(self._tasks)

    def app(self) -> MCPServer:
        with _logging_left_alone():
            app: MCPServer[None] = MCPServer(
                "agentos",
                instructions="Hand slow work to agentos agents and watch it: start_session, "
                "then post; a session's tool calls run in the background, and "
                "list_running_tool_calls, get_tool_call_status and cancel_tool_call look at "
                "and stop them.",
                log_level="WARNING",
                version=agentos.__version__,
                lifespan=self._serving,
                middleware=[one_client_each, self._older.middleware],
                extensions=[TasksExtension(self._tasks, self._older)],
            )
        for handler in (
            self.start_session,
            self.post,
            self.get_tool_call_status,
            self.list_running_tool_calls,
            self.cancel_tool_call,
            self.answer,
        ):
            app.add_tool(handler, description=inspect.getdoc(handler), structured_output=True)
        # MCPServer has no public way to answer a method it has no decorator for, or to
        # answer one for each client (its ``completion`` decorator is untyped, its
        # resources the same for all): the low-level server's is used.
        add = app._lowlevel_server.add_request_handler
        resources = self._resources
        add("logging/setLevel", SetLevelRequestParams, self.set_level)
        add("prompts/get", GetPromptRequestParams, self.get_prompt)
        add("completion/complete", CompleteRequestParams, resources.complete)
        add("resources/list", PaginatedRequestParams, resources.list)
        add("resources/templates/list", PaginatedRequestParams, resources.templates)
        add("resources/read", ReadResourceRequestParams, resources.read)
        add("resources/subscribe", SubscribeRequestParams, resources.subscribe)
        add("resources/unsubscribe", UnsubscribeRequestParams, resources.unsubscribe)
        add("tasks/result", GetTaskPayloadRequestParams, self._older.result)
        add("tasks/list", PaginatedRequestParams, self._older.list)
        return app

    @asynccontextmanager
    async def _serving(self, app: MCPServer[None]) -> AsyncIterator[None]:
        """While the server runs: the task that tells subscribers of changed sessions, and
        the work of the tasks clients start."""
        async with anyio.create_task_group() as group:
            group.start_soon(self._resources.watchers.run)
            group.start_soon(self._tasks.run)
            yield
            group.cancel_scope.cancel()

    async def set_level(
        self, ctx: ServerRequestContext[Any, Any], params: SetLevelRequestParams
    ) -> EmptyResult:
        """``logging/setLevel``: from now on the client hears its turns' call events at
        ``params.level`` and above as log messages."""
        self._levels[client_of(getattr(ctx.request, "headers", None))] = params.level
        return EmptyResult()

    async def get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: GetPromptRequestParams
    ) -> GetPromptResult:
        """``prompts/get``: agentos has no prompts, so each name is unknown (an error for
        the client, not a traceback on the server's stderr as the SDK's own handler logs)."""
        raise MCPError(INVALID_PARAMS, f"no prompt named {params.name!r}: agentos has no prompts")

    async def start_session(
        self, message: str, ctx: Context, agent: str | None = None
    ) -> dict[str, Any]:
        """Start a session with one of the agents (the default one if none is named) and
        post its first message: the model's answer, and the calls still running."""
        name = agent or self._default
        config = self._agents.get(name)
        if config is None:
            known = ", ".join(sorted(self._agents))
            raise ToolError(f"no agent named {name!r} (agents: {known})")
        self._room_for_task(ctx)  # before the session: a refused task starts none
        session = await self._host.create_session(config)
        self._started(ctx).add(session.session_id)
        return await self._answer(session, message, ctx)

    async def post(self, session_id: str, message: str, ctx: Context) -> dict[str, Any]:
        """Post a message to one of your sessions: the model's answer, and the calls still
        running (their progress arrives as notifications while the turn lasts)."""
        return await self._answer(self._session(session_id, ctx), message, ctx)

    async def get_tool_call_status(
        self,
        session_id: str,
        tool_call_id: str,
        ctx: Context,
        include_progress: bool = True,
        wait_for_completion: bool = False,
        timeout_seconds: float = 5.0,
    ) -> dict[str, Any]:
        """Look at one call of one of your sessions (or of a sub-agent it runs): status,
        progress, result; changed_since_last_look says whether anything moved."""
        arguments = {
            "tool_call_id": tool_call_id,
            "include_progress": include_progress,
            "wait_for_completion": wait_for_completion,
            "timeout_seconds": timeout_seconds,
        }
        return await self._ask("get_tool_call_status", session_id, arguments, ctx)

    async def list_running_tool_calls(
        self, ctx: Context, session_id: str | None = None
    ) -> dict[str, Any]:
        """The calls not finished yet of one of your sessions (all of them with no id), and
        of the sub-agents they run."""
        ids = sorted(self._started(ctx)) if session_id is None else [session_id]
        calls: list[Any] = []
        for each in ids:
            calls += (await self._ask("list_running_tool_calls", each, {}, ctx))["tool_calls"]
        return {"tool_calls": calls}

    async def cancel_tool_call(
        self,
        session_id: str,
        tool_call_id: str,
        ctx: Context,
        reason: str = "cancelled by the MCP client",
    ) -> dict[str, Any]:
        """Cancel a call of one of your sessions; says whether it took."""
        arguments = {"tool_call_id": tool_call_id, "reason": reason}
        return await self._ask("cancel_tool_call", session_id, arguments, ctx)

    async def answer(
        self,
        session_id: str,
        call_id: str,
        action: Literal["accept", "decline", "cancel"],
        ctx: Context,
        content: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Answer the question a call of one of your sessions asks a person (its progress,
        get_tool_call_status's waiting_for_person and the session's resource show it):
        accept with content fitting its form, decline, or cancel."""
        self._session(session_id, ctx)
        return self._asking.answer(session_id, call_id, action, content)

    # ------------------------------------------------------------------ helpers

    def _started(self, ctx: Context) -> set[str]:
        """The sessions this client started."""
        return self._started_by(ctx.headers)

    def _started_by(self, headers: Mapping[str, str] | None) -> set[str]:
        return self._clients.setdefault(owner_of(headers), set())

    def _session(self, session_id: str, ctx: Context) -> Session:
        if session_id not in self._started(ctx):
            raise ToolError(f"no session with id {session_id!r} (start_session starts one)")
        return self._host.get(session_id)

    def _room_for_task(self, ctx: Context) -> None:
        """Asked to run as a task, refuse (an ``MCPError``) when the client holds as many
        still working as it may."""
        if self._tasks.asked() is not None:
            self._tasks.room_for(owner_of(ctx.headers))

    async def _ask(
        self, capability: str, session_id: str, arguments: dict[str, Any], ctx: Context
    ) -> dict[str, Any]:
        self._session(session_id, ctx)
        caller = Caller(session_id, scope=Scope.CHILDREN)
        answer = await self._host.toolbox.invoke(capability, arguments, caller)
        if answer.is_error:
            raise ToolError(answer.to_json())
        return dict(answer.content)

    async def _answer(self, session: Session, message: str, ctx: Context) -> dict[str, Any]:
        """Post ``message`` and follow the turn to its end; asked to run as a task, start the
        task that follows it instead (the task is the answer then)."""
        asked = self._tasks.asked()
        owner = owner_of(ctx.headers)
        self._room_for_task(ctx)
        turn = _Turn.posted(self._host, session, message)
        said = f"session {session.session_id}: posted"
        following: list[Callable[[], None]] = []  # asking the client, from the post on
        if asked is not None:

            async def work(tell: Callable[[str], Awaitable[None]], why: Why) -> dict[str, Any]:
                try:
                    state = await turn.follow(lambda line, _: tell(line), why)
                finally:
                    following.pop()()
                await tell(f"session {session.session_id}: {state['status']}")
                return state

            questions = self._tasks.start(asked, owner, work, said)
            following.append(self._asking.follow(session.session_id, questions))
            return {}
        progress = _Progress(ctx, self._levels.get(client_of(ctx.headers)))
        client = ctx.request_context.session
        stop = self._asking.follow(
            session.session_id, self._asking.on_request(client, ctx.request_id, progress.line)
        )
        try:
            try:
                await progress(said, None)
            except BaseException:
                turn.stop()
                raise
            return await turn.follow(progress)
        finally:
            stop()


Tell = Callable[[str, CallEvent | None], Awaitable[None]]
"""Where a turn says what its session is doing: a line, and the call event it tells of."""


class _Turn(PostedTurn):
    """A posted message's turn, followed to the model's answer for one request."""

    @classmethod
    def posted(cls, host: Host, session: Session, message: str) -> _Turn:
        """Post ``message`` (an ended session, an empty message: a ``ToolError``)."""
        try:
            turn = PostedTurn.posted(host, session, message)
        except (AgentOSError, ValueError) as error:
            raise ToolError(str(error)) from None
        return cls(host, session, turn.events, turn.stop, turn.asked_before)

    async def follow(self, tell: Tell, why: Why = lambda: REQUEST_CANCELLED) -> dict[str, Any]:
        """Tell the turn's call events until the model has answered: the session's state
        then. Cancelled, stop the calls this turn started (not another turn's of the same
        session, nor one a person started) for the reason ``why`` gives, if it gives one."""
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._relay, tell)
                await self.session.wait_idle()
                group.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            reason = why()
            if reason is not None:
                self.cancel_calls(reason)
            raise
        finally:
            self.stop()
        return state_of(self.host, self.session)

    async def _relay(self, tell: Tell) -> None:
        async for event in self.events:
            await tell(self.said(event), event)


class _Progress:
    """A request's turn told as progress notifications, and, at the level the client set,
    as log messages."""

    def __init__(self, ctx: Context, wanted: LoggingLevel | None) -> None:
        self._ctx = ctx
        self._wanted = wanted
        self._count = 0

    async def line(self, said: str) -> None:
        """Tell ``said``, of no call event."""
        await self(said, None)

    async def __call__(self, said: str, event: CallEvent | None) -> None:
        ctx = self._ctx
        await ctx.report_progress(self._count, None, said)
        self._count += 1
        if event is None or not heard_at(level := level_of(event), self._wanted):
            return
        log = LoggingMessageNotificationParams(level=level, logger="agentos", data=said)
        await ctx.request_context.session.send_notification(
            LoggingMessageNotification(params=log), related_request_id=ctx.request_id
        )


@contextmanager
def _logging_left_alone() -> Iterator[None]:
    """The SDK's server configures the root logger when made (INFO to stderr, a line per
    client); a library leaves logging to the application, so the root logger is given a
    handler for that moment, which makes the SDK's ``basicConfig`` do nothing."""
    root = logging.getLogger()
    if root.handlers:
        yield  # the application configured logging: basicConfig leaves it as it is
        return
    placeholder = logging.NullHandler()
    root.addHandler(placeholder)
    try:
        yield
    finally:
        root.removeHandler(placeholder)
