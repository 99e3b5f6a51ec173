"""``McpServer``: the tools of one MCP server as a toolset of the runtime.

Its task owns the connection: it starts the server (stdio) or reaches it (streamable
HTTP), lists its tools (and its resources' and prompts' tools, ``offered.py``) and puts them
in the runtime's registry, lists them again when the server says one of those lists
changed, and closes the connection when the runtime
closes. A stdio server that dies is started again by the next call that needs it; an
HTTP server that drops is reached again in the background, with backoff. A call is
the runtime's: its task sends ``tools/call`` with no read timeout (the runtime's own
timeout governs), turns progress notifications into progress, and, when cancelled,
lets the SDK send ``notifications/cancelled`` with the reason the cancel gave. What the
server asks back while a call runs (a person's answer, the session's model, the roots,
its log lines) is ``TalkBack``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import AsyncExitStack
from functools import partial
from typing import TYPE_CHECKING
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import TaskStatus

from agentos._errors import ToolsetError
from agentos._kernel.context import ToolContext
from agentos._kernel.tools import Tool
from agentos._kernel.tools import ToolFailure
from agentos._kernel.toolsets import ToolRegistry
from agentos._log import agentos_logger
from agentos._toolsets.mcp import tasks_ext
from agentos._toolsets.mcp.cancel_reason import ReasonedWrites
from agentos._toolsets.mcp.cancel_reason import told_why
from agentos._toolsets.mcp.listing import Link
from agentos._toolsets.mcp.listing import Reached
from agentos._toolsets.mcp.listing import every_page
from agentos._toolsets.mcp.oauth import Authorize
from agentos._toolsets.mcp.oauth import start_timed_by
from agentos._toolsets.mcp.offered import offered_tools
from agentos._toolsets.mcp.resources import read_name
from agentos._toolsets.mcp.results import outcome
from agentos._toolsets.mcp.sampling import Sampler
from agentos._toolsets.mcp.talk_back import TalkBack
from agentos._toolsets.mcp.tasks import resume_task
from agentos._toolsets.mcp.tasks import run_task
from agentos._toolsets.mcp.tasks import runs_as_task
from agentos._toolsets.mcp.tools import adapt
from agentos._toolsets.mcp.tools import progress_entry
from agentos._toolsets.mcp.transport import connection_lost
from agentos._toolsets.mcp.transport import first_of
from agentos._toolsets.mcp.transport import leaf_error
from agentos._toolsets.mcp.transport import open_streams
from agentos._toolsets.mcp.transport import said
from agentos._toolsets.remote import RemoteToolset
from agentos._turns.capabilities import SESSION_TOOL_NAMES
from agentos._turns.mcp_config import McpOAuth
from agentos._turns.mcp_config import McpServerConfig
from agentos._turns.mcp_config import shared_settings
from agentos._version import agentos_version
from components import Json

if TYPE_CHECKING:  # the SDK takes a third of a second to import: only when a server starts
    from agentos._toolsets.mcp.stdio import ServerProcess

BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
"""Seconds between attempts to reach an HTTP server that dropped (the last repeats)."""
LIST_CHANGED = frozenset(
    f"notifications/{kind}/list_changed" for kind in ("tools", "resources", "prompts")
)
"""What makes the server's tools be listed again (its resources' and prompts' are tools too)."""
ADAPT_BATCH = 50
"""Listed tools checked between two chances for the start's timeout to fire."""


class McpServer(RemoteToolset[McpServerConfig]):
    """A toolset: one MCP server's tools, under ``prefix``, limited to ``tools`` if given."""

    def __init__(
        self, name: str, config: McpServerConfig, *, environ: Mapping[str, str] | None = None
    ) -> None:
        """``environ`` is where ``${VAR}`` is read (the process environment by default)."""
        super().__init__(name, config, "a server's", environ)
        self._session: Any = None
        self._process: ServerProcess | None = None
        self._attempted = anyio.Event()
        self._attempts_ended = 0
        """Connection attempts that have ended, won or lost: calls waiting for one count."""
        self._wanted = anyio.Event()
        self._relist = anyio.Event()
        self._lost: str | None = None
        """Why the last connection ended or the last attempt failed (None: it is up)."""
        self._attempts = 0
        self.problems: list[str] = []
        """Tools the server lists that agentos leaves out, and why."""
        self._talk = TalkBack(name, config.roots)
        self._executions: dict[str, Any] = {}
        """How each listed tool runs (its ``execution``: whether it runs as a task)."""
        self._reader: str | None = None
        """The tool that reads the server's resources (None: it offers none)."""
        self.authorize: Authorize | None = None
        """The person's step when the server needs an OAuth sign-in (``oauth`` settings):
        given the authorization URL, the URL the browser came back to. None: a server
        that needs one, with no token kept from an earlier sign-in, fails to start."""

    @classmethod
    def stdio(
        cls,
        name: str,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        tools: Sequence[str] | None = None,
        prefix: str = "",
        start_timeout: float = 30.0,
        roots: Sequence[str] = (),
    ) -> McpServer:
        """A server the runtime starts as ``command args`` and talks to over stdio;
        ``roots``: the directories it may see (none by default)."""
        chosen = shared_settings(tools, prefix, start_timeout, roots)
        config = McpServerConfig(
            command=command, args=list(args), env=dict(env or {}), cwd=cwd, **chosen
        )
        return cls(name, config)

    @classmethod
    def http(
        cls,
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        tools: Sequence[str] | None = None,
        prefix: str = "",
        start_timeout: float = 30.0,
        roots: Sequence[str] = (),
        oauth: McpOAuth | bool = False,
        authorize: Authorize | None = None,
    ) -> McpServer:
        """A server the runtime reaches at ``url`` over streamable HTTP; ``oauth``: sign in
        when it asks (True: the default settings), ``authorize`` being the person's step."""
        chosen = shared_settings(tools, prefix, start_timeout, roots)
        config = McpServerConfig(url=url, headers=dict(headers or {}), oauth=oauth, **chosen)
        server = cls(name, config)
        server.authorize = authorize
        return server

    @staticmethod
    def loopback_authorize(tell: Callable[[str], object], *, within: float = 300.0) -> Authorize:
        """An ``authorize`` for a person at a terminal: ``tell`` shows them the URL to open,
        and agentos listens on ``oauth.redirect_uri`` (a loopback address) for the browser
        coming back, ``within`` seconds at most."""
        from agentos._toolsets.mcp.oauth_loopback import loopback_authorize

        return loopback_authorize(tell, within=within)

    @property
    def sampler(self) -> Sampler | None:
        """How the server's sampling requests reach a session's model (``Session.sample``):
        set by the host that runs the sessions; None answers them with an error."""
        return self._talk.sampler

    @sampler.setter
    def sampler(self, sampler: Sampler | None) -> None:
        self._talk.sampler = sampler

    def __repr__(self) -> str:
        where = self.config.url or " ".join([self.config.command or "", *self.config.args])
        return f"<McpServer {self.name} ({self.config.transport}: {where})>"

    # ------------------------------------------------------------- the connection

    async def run(self, tools: ToolRegistry, *, task_status: TaskStatus[None]) -> None:
        """Connect and list; say started; then keep the connection until cancelled."""
        self._registry = tools
        self._attempted, self._wanted, self._relist = anyio.Event(), anyio.Event(), anyio.Event()
        self._session, self._process, self._lost, self._attempts = None, None, None, 0
        started = False
        while True:
            try:
                async with AsyncExitStack() as stack:
                    try:
                        await self._connect(stack, first=not started)
                    finally:
                        self._attempt_ended()  # won or lost: the calls waiting for it look
                    if not started:
                        task_status.started()
                        started = True
                    await self._serve()
            except Exception as error:
                failure = leaf_error(error)
                if not isinstance(failure, ToolsetError):
                    failure = ToolsetError(f"mcp_servers.{self.name}: {said(failure)}")
                if not started:
                    raise failure from None
                self._down(str(failure))
            finally:
                self._session = None
            await self._before_reconnecting()

    async def _connect(self, stack: AsyncExitStack, *, first: bool) -> None:
        from mcp import ClientSession
        from mcp_types import Implementation

        seconds = self.config.start_timeout
        deadline = anyio.current_time() + seconds  # the whole start: reading the tools too
        read, write = await self._open(stack)
        write = ReasonedWrites(write)
        talk = self._talk
        session = await stack.enter_async_context(
            ClientSession(
                read,
                write,
                read_timeout_seconds=None,
                sampling_callback=talk.sample if self.config.sampling else None,
                elicitation_callback=talk.elicit,
                list_roots_callback=talk.list_roots if talk.roots else None,
                logging_callback=talk.logged,
                message_handler=self._on_message,
                client_info=Implementation(name="agentos", version=agentos_version()),
                **tasks_ext.session_options(),
            )
        )
        try:
            with anyio.fail_at(deadline) as start, start_timed_by(start):
                await tasks_ext.connect(session, probe=self.config.url is not None)
                await self._list(session, first=first)
        except TimeoutError:
            raise ToolsetError(
                f"mcp_servers.{self.name}: did not answer initialize and tools/list within "
                f"{seconds:g} s{self._stderr_said()}"
            ) from None
        except ToolsetError:
            raise
        except Exception as error:
            raise ToolsetError(f"mcp_servers.{self.name}: {await self._why(error)}") from None
        self._session, self._lost, self._attempts = session, None, 0

    def _attempt_ended(self) -> None:
        self._attempts_ended += 1
        self._attempted.set()
        self._attempted = anyio.Event()

    async def _open(self, stack: AsyncExitStack) -> Any:
        """The streams of a new connection: a started process, or an HTTP client."""
        cap = self._registry.max_result_chars
        streams, self._process = await open_streams(
            stack, self.name, self.config, self._environ, cap, self.authorize
        )
        return streams

    async def _serve(self) -> None:
        """Relist when the server says its tools changed; return when the connection ends."""
        ended = anyio.Event()
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                await self._connection_ended()
                ended.set()

            group.start_soon(watch)
            while True:
                await first_of(ended.wait, self._relist.wait)
                if ended.is_set():
                    group.cancel_scope.cancel()
                    return
                self._relist = anyio.Event()
                try:
                    await self._list(self._session, first=False)
                except Exception as error:
                    self._log("mcp.relist_failed", error=said(error))

    async def _connection_ended(self) -> None:
        """Wait until the server's process exits (stdio) or a call finds it gone (HTTP)."""
        if self._process is not None:
            await self._process.process.wait()
            self._down(self._exited(self._process.exit_code))
        else:
            while self._lost is None:
                await self._wanted.wait()
                self._wanted = anyio.Event()

    async def _before_reconnecting(self) -> None:
        """stdio: wait for a call that needs the server; HTTP: back off, then try again."""
        if self.config.command is not None:
            await self._wanted.wait()
            self._wanted = anyio.Event()
            return
        delay = BACKOFF[min(self._attempts, len(BACKOFF) - 1)]
        self._attempts += 1
        await anyio.sleep(delay)

    def _down(self, why: str) -> None:
        self._lost = why
        self._log("mcp.server_down", reason=why)

    async def _on_message(self, message: Any) -> None:
        method = getattr(getattr(message, "root", message), "method", None)
        if method in LIST_CHANGED:
            self._relist.set()

    # ------------------------------------------------------------------ the tools

    async def _list(self, session: Any, *, first: bool) -> None:
        """List the server's tools (every page) and make them the toolset's tools, with
        those of its resources and prompts."""
        listed = await every_page(session.list_tools, "tools")
        self._executions = {listing.name: listing.execution for listing in listed}
        tools: list[Tool[Any]] = []
        problems: list[str] = []
        for start in range(0, len(listed), ADAPT_BATCH):
            await anyio.lowlevel.checkpoint()  # a timeout or a cancel can end a long list
            batch = listed[start : start + ADAPT_BATCH]
            made, said = adapt(batch, self.config, self.name, self._caller, self._holder)
            tools += made
            problems += said
        link = Link(self._reach, lambda: self._reader)
        tools += await offered_tools(
            session, self.name, self.config.tools, self._holder, link, problems
        )
        if first:
            wanted = self.config.tools or ()
            known = {t.name for t in listed} | {t.name for t in tools}
            missing = [name for name in wanted if name not in known]
            if missing:
                offered = ", ".join(sorted(t.name for t in listed)) or "none"
                raise ToolsetError(
                    f"mcp_servers.{self.name}.tools: the server has no tool "
                    f"{', '.join(repr(m) for m in missing)} (it has: {offered})"
                )
        try:
            self._registry.replace(self.name, tools)
        except ValueError as error:
            if first:
                raise ToolsetError(f"mcp_servers.{self.name}: {error}") from None
            self._log("mcp.relist_refused", error=str(error))
            return
        self.problems = problems
        self._reader = next((t.name for t in tools if t.name == read_name(self.name)), None)
        for problem in problems:
            self._log("mcp.tool_left_out", problem=problem)

    def _holder(self, name: str) -> str | None:
        """Who other than this server has the tool name ``name`` (None: nobody)."""
        if name in SESSION_TOOL_NAMES:
            return f"the session's own {name}"
        held = self._registry.by_name.get(name)
        if held is None or held.source == self.name:
            return None
        return "a Python tool" if held.source is None else f"server {held.source}'s tool"

    def _caller(self, remote: str) -> Any:
        async def call(args: dict[str, Any], ctx: ToolContext) -> Json | ToolFailure:
            return await self.call(remote, args, ctx)

        return call

    async def call(self, remote: str, args: dict[str, Any], ctx: ToolContext) -> Json | ToolFailure:
        """Call the server's tool ``remote``; the server's failure becomes the call's."""
        resumed = self._resuming.pop(ctx.call_id, None)  # taken now, whatever happens next
        reached = await self._reach()
        if reached is None:
            return ToolFailure(f"MCP server {self.name!r} is not available: {self._lost}")
        session, failed = reached

        async def progress(done: float, total: float | None, message: str | None) -> None:
            ctx.progress(progress_entry(done, total, message))

        meta: Any = None if ctx.trace_parent is None else {"traceparent": ctx.trace_parent}
        answer = partial(self._talk.answer_input, ctx, sampling=self.config.sampling)
        try:
            with self._talk.running(ctx), told_why(ctx):
                started = partial(self._talk.task_started, ctx=ctx)
                if resumed is not None and not tasks_ext.offers_tasks(session):
                    result = await resume_task(session, resumed, ctx, started)
                elif runs_as_task(session, self._executions.get(remote)):
                    result = await run_task(session, remote, args, ctx, meta, started)
                else:  # a plain call, or one of the newer tasks (the server chooses)
                    result = await tasks_ext.call(
                        session, remote, args, ctx, meta, progress, answer, started, resumed
                    )
        except Exception as error:
            return await failed(error)
        return outcome(result, self._reader)

    async def _reach(self) -> Reached | None:
        """The live session (None: it cannot be reached) and how a call's failure on it is
        told: a lost connection is to the process that served it, not a later one."""
        session = await self._ready()
        if session is None:
            return None
        return session, partial(self._failed, process=self._process)

    async def _failed(self, error: Exception, process: ServerProcess | None) -> ToolFailure:
        """A call's failure from what it raised; when it lost the connection (to the
        server's ``process``, if it has one), the next call waits for a new one."""
        if not connection_lost(leaf_error(error)):  # a task's requests come in a group
            return ToolFailure(f"MCP server {self.name!r}: {said(error)}")
        if process is not None:
            code = await process.exited(within=2.0)
            if code is not None:
                return ToolFailure(self._exited(code))
        self._session = None
        self._down(said(error))
        self._wanted.set()
        return ToolFailure(f"MCP server {self.name!r} was lost: {said(error)}")

    async def _ready(self) -> Any:
        """The live session, starting the server again if it died (None: it cannot be)."""
        process = self._process
        if self._session is not None and (process is None or process.exit_code is None):
            return self._session
        ended = self._attempts_ended
        self._wanted.set()
        with anyio.move_on_after(self.config.start_timeout + 1.0):
            while self._attempts_ended == ended:
                await self._attempted.wait()
        return self._session

    # ----------------------------------------------------------------- the words

    def _exited(self, code: int | None) -> str:
        return f"MCP server {self.name!r} exited (code {code})"

    def _stderr_said(self) -> str:
        words = "" if self._process is None else self._process.last_words()
        return f": {words}" if words else ""

    async def _why(self, error: BaseException) -> str:
        """Why a connection attempt failed: the process's exit, else the error."""
        if self._process is not None and connection_lost(leaf_error(error)):
            code = await self._process.exited(within=2.0)
            if code is not None:
                return f"exited (code {code}) before answering initialize{self._stderr_said()}"
        return said(error)

    def _log(self, event: str, **fields: object) -> None:
        logger, _, _ = agentos_logger()
        logger.warning(event, server=self.name, **fields)
