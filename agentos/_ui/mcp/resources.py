"""A client's sessions as MCP resources: ``agentos://sessions/{session_id}``, one for each
session it started, read as the JSON a ``post`` answers (status, the model's last answer,
the calls still running). A client may subscribe to one to hear when it changes, and
complete a session id against the template.

Another client's session, or any other URI, is a resource that does not exist.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp_types import INVALID_PARAMS
from mcp_types import CompleteRequestParams
from mcp_types import CompleteResult
from mcp_types import Completion
from mcp_types import EmptyResult
from mcp_types import ListResourcesResult
from mcp_types import ListResourceTemplatesResult
from mcp_types import PaginatedRequestParams
from mcp_types import ReadResourceRequestParams
from mcp_types import ReadResourceResult
from mcp_types import Resource
from mcp_types import ResourceTemplate
from mcp_types import ResourceTemplateReference
from mcp_types import SubscribeRequestParams
from mcp_types import TextResourceContents
from mcp_types import UnsubscribeRequestParams

from agentos import Host
from agentos import Session
from agentos._ui.mcp.watching import Watchers
from agentos.stores import shown_session_status

PREFIX = "agentos://sessions/"
TEMPLATE = PREFIX + "{session_id}"
JSON = "application/json"
COMPLETIONS_MAX = 100
"""The most values a completion may give (the protocol's bound)."""

Context = ServerRequestContext[Any, Any]


def uri_of(session_id: str) -> str:
    """The resource of a session."""
    return PREFIX + session_id


def state_of(host: Host, session: Session) -> dict[str, Any]:
    """What a ``post`` answers and the resource reads: the session's shown status, the
    model's last answer, and the calls not finished yet (with the question one waits to have
    answered, as ``get_tool_call_status`` shows it)."""
    replies = session.replies
    running: list[dict[str, Any]] = []
    for call in host.runtime.list_calls(session.session_id, include_final=False):
        shown = {"tool_call_id": call.call_id, "tool_name": call.tool_name}
        running.append({**shown, "status": call.status.value})
        if call.question is not None:
            running[-1]["waiting_for_person"] = call.question.to_json()
    return {
        "session_id": session.session_id,
        "status": shown_session_status(session.status, live=True).status,
        "answer": replies[-1] if replies else "",
        "running_calls": running,
    }


class SessionResources:
    """The handlers of ``resources/*`` and ``completion/complete`` over one host; ``started``
    gives the ids of the sessions the client (by its request headers) started."""

    def __init__(self, host: Host, started: Callable[[Mapping[str, str] | None], set[str]]) -> None:
        self._host = host
        self._started = started
        self.watchers = Watchers(uri_of, host.runtime.on_call_events)

    async def list(self, ctx: Context, params: PaginatedRequestParams) -> ListResourcesResult:
        return ListResourcesResult(
            resources=[
                Resource(
                    uri=uri_of(session_id),
                    name=session_id,
                    description="an agentos session you started: its status, the model's "
                    "last answer and the calls still running",
                    mime_type=JSON,
                )
                for session_id in sorted(self._mine(ctx))
            ]
        )

    async def templates(
        self, ctx: Context, params: PaginatedRequestParams
    ) -> ListResourceTemplatesResult:
        template = ResourceTemplate(
            uri_template=TEMPLATE,
            name="session",
            description="an agentos session you started (start_session gives its id)",
            mime_type=JSON,
        )
        return ListResourceTemplatesResult(resource_templates=[template])

    async def read(self, ctx: Context, params: ReadResourceRequestParams) -> ReadResourceResult:
        session = self._session(ctx, params.uri)
        text = json.dumps(state_of(self._host, session), ensure_ascii=False)
        contents = TextResourceContents(uri=params.uri, mime_type=JSON, text=text)
        return ReadResourceResult(contents=[contents])

    async def subscribe(self, ctx: Context, params: SubscribeRequestParams) -> EmptyResult:
        self.watchers.subscribe(self._session(ctx, params.uri), ctx.session)
        return EmptyResult()

    async def unsubscribe(self, ctx: Context, params: UnsubscribeRequestParams) -> EmptyResult:
        session = self._session(ctx, params.uri)
        self.watchers.unsubscribe(session.session_id, ctx.session)
        return EmptyResult()

    async def complete(self, ctx: Context, params: CompleteRequestParams) -> CompleteResult:
        """The client's session ids that start with what it typed, for the template's
        ``session_id``; nothing for anything else (agentos has no prompts)."""
        ref, argument = params.ref, params.argument
        values: list[str] = []
        if (
            isinstance(ref, ResourceTemplateReference)
            and ref.uri == TEMPLATE
            and argument.name == "session_id"
        ):
            values = sorted(i for i in self._mine(ctx) if i.startswith(argument.value))
        shown = values[:COMPLETIONS_MAX]
        completion = Completion(values=shown, total=len(values), has_more=len(values) > len(shown))
        return CompleteResult(completion=completion)

    def _mine(self, ctx: Context) -> set[str]:
        return self._started(getattr(ctx.request, "headers", None))

    def _session(self, ctx: Context, uri: str) -> Session:
        session_id = uri.removeprefix(PREFIX) if uri.startswith(PREFIX) else None
        if session_id is None or session_id not in self._mine(ctx):
            raise MCPError(
                INVALID_PARAMS,
                f"no resource {uri!r}: agentos's resources are {TEMPLATE}, one for each "
                "session you started",
            )
        return self._host.get(session_id)
