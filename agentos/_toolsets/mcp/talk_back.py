"""What an MCP server asks of agentos while its tools run: a person's answer (elicitation),
the session's model (sampling), the roots it may see, and the log lines it sends.

MCP does not say which call a server's request or log line belongs to (over HTTP it
travels on that call's stream, but the SDK does not tell its client), so they go to the
one call of this server that is running; with none or several running, a question is
declined and a sampling request refused saying why, and a log line goes to agentos's log
instead of to a call. When that call ends, what it asked ends too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio

from agentos._errors import AgentOSError
from agentos._errors import ProviderError
from agentos._kernel.context import ToolContext
from agentos._log import agentos_logger
from agentos._toolsets.mcp.sampling import Sampler
from agentos._toolsets.mcp.sampling import Unsupported
from agentos._toolsets.mcp.sampling import create_message_result
from agentos._toolsets.mcp.sampling import model_request
from agentos._toolsets.mcp.sampling import refusal
from agentos._toolsets.mcp.tasks import related_task
from components import AnswerAction
from components import CallId


class TalkBack:
    """The calls of one server in flight, and its requests' answers."""

    def __init__(self, server: str, roots: Sequence[str]) -> None:
        self.server = server
        self.roots = [root_uri(root) for root in roots]
        self.sampler: Sampler | None = None
        """How to ask a session's model: set by the host that runs the sessions."""
        self._running: dict[CallId, ToolContext] = {}
        self._tasks: dict[str, ToolContext] = {}
        """The calls running as tasks, by task id: a request about a task names it."""
        self._serving: dict[CallId, set[anyio.CancelScope]] = {}

    @contextmanager
    def running(self, ctx: ToolContext) -> Iterator[None]:
        """While ``ctx``'s call waits for the server; when it ends, what it asked ends."""
        self._running[ctx.call_id] = ctx
        try:
            yield
        finally:
            del self._running[ctx.call_id]
            for task_id in [t for t, running in self._tasks.items() if running is ctx]:
                del self._tasks[task_id]
            for scope in self._serving.pop(ctx.call_id, ()):
                scope.cancel()

    @contextmanager
    def _serving_call(self, ctx: ToolContext) -> Iterator[anyio.CancelScope]:
        """A scope around answering a request for ``ctx``'s call, cancelled when it ends."""
        with anyio.CancelScope() as scope:
            scopes = self._serving.setdefault(ctx.call_id, set())
            scopes.add(scope)
            try:
                yield scope
            finally:
                scopes.discard(scope)

    def task_started(self, task_id: str, ctx: ToolContext) -> None:
        """``ctx``'s call runs as the task ``task_id`` (until the call ends)."""
        self._tasks[task_id] = ctx

    def _the_call(self, context: Any = None, params: Any = None) -> ToolContext | str:
        """The call a request is for: the one whose task it names, else the one call
        running on this server, or why there is not one."""
        task_id = related_task(context, params)
        if task_id is not None:  # never another call's: a task nobody here follows asks no one
            found = self._tasks.get(task_id)
            return found or f"the task {task_id} it is about is no running call's"
        count = len(self._running)
        if count == 1:
            return next(iter(self._running.values()))
        if count == 0:
            return f"no call of MCP server {self.server!r} is running to ask for"
        return (
            f"{count} calls of MCP server {self.server!r} are running, and MCP does not "
            "say which of them asks"
        )

    async def elicit(self, context: Any, params: Any) -> Any:
        """``elicitation/create``: the running call asks its person (``ctx.ask``)."""
        from mcp_types import ElicitResult

        ctx = self._the_call(context, params)
        if isinstance(ctx, str):
            logger, _, _ = agentos_logger()
            logger.warning(
                "mcp.question_declined", server=self.server, reason=ctx, message=params.message
            )
            return ElicitResult(action="decline")
        return await self._elicit_for(ctx, params)

    async def answer_input(self, ctx: ToolContext, request: Any, *, sampling: bool) -> Any:
        """An input request a result carries (2026-07-28: a task's or a call's, answered in
        its next request) for ``ctx``'s call: the same answer as the request sent alone;
        ``sampling``: whether the server may ask the session's model."""
        from mcp_types import CreateMessageRequest
        from mcp_types import ElicitRequest

        if isinstance(request, ElicitRequest):
            return await self._elicit_for(ctx, request.params)
        if isinstance(request, CreateMessageRequest):
            if not sampling:
                return refusal(Unsupported("agentos offers this server no sampling"))
            return await self._sample_for(ctx, request.params)
        return await self.list_roots(None)

    async def _elicit_for(self, ctx: ToolContext, params: Any) -> Any:
        from mcp_types import ElicitResult

        form = getattr(params, "requested_schema", None)
        url = getattr(params, "url", None)
        source = f"MCP server {self.server}"
        with self._serving_call(ctx) as scope:
            answer = await ctx.ask(params.message, form=form, url=url, source=source)
        if scope.cancelled_caught:
            return ElicitResult(action="cancel")
        content = answer.content if answer.action is AnswerAction.ACCEPT and form else None
        return ElicitResult(action=answer.action.value, content=content)

    async def sample(self, context: Any, params: Any) -> Any:
        """``sampling/createMessage``: the running call's session asks its own model."""
        ctx = self._the_call(context, params)
        if isinstance(ctx, str):
            return refusal(Unsupported(f"cannot tell whose model to ask: {ctx}"))
        return await self._sample_for(ctx, params)

    async def _sample_for(self, ctx: ToolContext, params: Any) -> Any:
        try:
            if self.sampler is None:
                raise Unsupported("no host runs this call's session: nobody's model to ask")
            request = model_request(params, ctx.session_id)
        except Unsupported as error:
            return refusal(error)
        ctx.log(f"[sampling] MCP server {self.server} asks the session's model")
        with self._serving_call(ctx) as scope:
            try:
                model, response = await self.sampler(ctx.session_id, request)
            except (ProviderError, AgentOSError) as error:
                ctx.log(f"[sampling] not answered: {error}")
                return refusal(error)
        if scope.cancelled_caught:
            return refusal(Unsupported("the call that asked has ended"))
        written = response.usage.get("output_tokens")
        ctx.log(f"[sampling] {model} answered" + ("" if written is None else f": {written} tokens"))
        return create_message_result(response, model)

    async def list_roots(self, context: Any) -> Any:
        """``roots/list``: the roots the agent file offers this server."""
        from mcp_types import ListRootsResult
        from mcp_types import Root

        return ListRootsResult(roots=[Root(uri=uri) for uri in self.roots])

    async def logged(self, params: Any) -> None:
        """``notifications/message``: a log line of the running call (else agentos's log)."""
        data = params.data
        text = data if isinstance(data, str) else json.dumps(data, default=str)
        logger = f" {params.logger}" if params.logger else ""
        line = f"[{params.level}{logger}] {text}"
        ctx = self._the_call(None, params)
        if isinstance(ctx, str):
            logger, _, _ = agentos_logger()
            logger.info("mcp.server_log", server=self.server, line=line)
        else:
            ctx.log(line)


def root_uri(root: str) -> str:
    """A root as MCP names it: a ``file://`` URI, made from a path if need be."""
    if urlsplit(root).scheme == "file":
        return root
    return Path(root).expanduser().resolve().as_uri()
