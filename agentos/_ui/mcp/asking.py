"""What a call of a served session asks a person (``ctx.ask``, an MCP server's elicitation)
goes to the MCP client that follows the session: ``elicitation/create`` on the request of the
``post`` that follows it, or, for a post run as a task, on the client's ``tasks/result`` while
the task is ``input_required``. Its answer is the call's.

A client that declared no elicitation (or not the question's mode), or a session no request
follows now, leaves the question on its call, as a page does for its person:
``get_tool_call_status`` and the session's resource show it, and the ``answer`` tool answers
it. A client's answer that does not fit the form, an error, or no answer in time declines
the question saying why; a call that ends withdraws it (the request is cancelled).
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import cast

import anyio
from mcp import MCPError
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.session import ServerSession
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.message import ServerMessageMetadata
from mcp_types import CONNECTION_CLOSED
from mcp_types import REQUEST_TIMEOUT
from mcp_types import ElicitRequest
from mcp_types import ElicitRequestFormParams
from mcp_types import ElicitRequestURLParams
from mcp_types import ElicitResult
from mcp_types import RequestId
from mcp_types import RequestParamsMeta
from pydantic import ValidationError

from agentos import Answer
from agentos import AnswerAction
from agentos import Asked
from agentos import Host
from agentos import JsonObject
from agentos import Question
from agentos import UnknownCallError
from agentos import UnknownSessionError
from agentos._ui.asking import ASK_TIMEOUT
from agentos._ui.lineage import lineage

NO_FORM: dict[str, Any] = {"type": "object", "properties": {}}
"""What a question without a form asks for: nothing but the choice."""
DONE = {AnswerAction.DECLINE: "declined", AnswerAction.CANCEL: "cancelled"}
"""How a reason says what the person did with a question they did not accept."""
GONE = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)

Route = Callable[[Asked], Awaitable[Answer | None]]
"""Who follows a session and asks its client: an answer, or None to leave it to ``answer``."""


class _Unsent:
    """An elicitation that could not reach its client (its connection or stream is gone)."""


UNSENT = _Unsent()


def can_take(client: ServerSession, question: Question) -> bool:
    """Whether ``client`` declared the elicitation mode ``question`` needs (a bare
    ``elicitation: {}`` is form mode, as before URL mode existed)."""
    declared = client.client_capabilities
    elicitation = None if declared is None else declared.elicitation
    if elicitation is None:
        return False
    if question.url is not None:
        return elicitation.url is not None
    return elicitation.form is not None or elicitation.url is None


def shown(asked: Asked) -> str:
    """A question as a line of progress or a task's status message."""
    return f"{asked.tool_name} ({asked.call_id}) asks: {asked.question.message}"


class ClientAsking:
    """The host's ``ask_person`` hook (call it): each question goes to the newest request
    that follows the asking call's session (or a session it is a sub-agent of)."""

    def __init__(self, host: Host, timeout: float | None = ASK_TIMEOUT) -> None:
        self._host = host
        self._timeout = timeout
        self._routes: dict[str, list[Route]] = {}

    async def __call__(self, asked: Asked) -> Answer | None:
        for session_id in lineage(self._host, asked.session_id):
            routes = self._routes.get(session_id)
            if routes:
                return await routes[-1](asked)
        return None

    def follow(self, session_id: str, route: Route) -> Callable[[], None]:
        """From now on ``route`` asks for ``session_id``'s calls; the function stops it."""
        routes = self._routes.setdefault(session_id, [])
        routes.append(route)

        def stop() -> None:
            if route in routes:
                routes.remove(route)
            if not routes and self._routes.get(session_id) is routes:
                del self._routes[session_id]

        return stop

    def on_request(
        self,
        client: ServerSession,
        request_id: RequestId | None,
        tell: Callable[[str], Awaitable[None]],
    ) -> Route:
        """A ``post``'s route: its client is asked on its request, or, unable to answer, is
        told (``tell``, its progress) that a call needs an answer."""

        async def route(asked: Asked) -> Answer | None:
            if can_take(client, asked.question):
                answer = await self.elicit(client, request_id, asked)
                if not isinstance(answer, _Unsent):
                    return answer
            with contextlib.suppress(MCPError, *GONE):  # a request gone cannot be told
                await tell(f"{shown(asked)} (it needs an answer: use the answer tool)")
            return None

        return route

    async def elicit(
        self,
        client: ServerSession,
        request_id: RequestId | None,
        asked: Asked,
        meta: RequestParamsMeta | None = None,
    ) -> Answer | _Unsent | None:
        """Send ``asked`` to ``client`` on the request ``request_id`` (``meta``: the request's
        ``_meta``): its answer (None: an accepted one, already given to the call through
        ``Host.answer``, which fits it to the form), or ``UNSENT`` if it could not go."""
        params = elicit_params(asked.question, meta)
        try:
            result = await client.send_request(
                ElicitRequest(params=params),
                ElicitResult,
                request_read_timeout_seconds=self._timeout,
                metadata=ServerMessageMetadata(related_request_id=request_id),
            )
        except NoBackChannelError:
            return UNSENT
        except MCPError as error:
            if error.code == CONNECTION_CLOSED:
                return UNSENT
            if error.code == REQUEST_TIMEOUT:
                return _declined(f"the MCP client did not answer within {self._timeout:g} s")
            return _declined(f"the MCP client answered with an error: {error}")
        except ValidationError as error:
            return _declined(f"the MCP client's answer is no elicitation result: {error}")
        except GONE:
            return UNSENT
        return self.taken(asked, result)

    def taken(self, asked: Asked, result: ElicitResult) -> Answer | None:
        """The client's ``result`` for ``asked``: the hook's answer (None: an accepted one,
        already given to the call through ``Host.answer``, which fits it to the form)."""
        action = AnswerAction(result.action)
        if action is not AnswerAction.ACCEPT:
            return Answer(action, reason=f"{DONE[action]} in the MCP client")
        url = asked.question.url
        content = None if url is not None else cast("JsonObject | None", result.content)
        answer = Answer(action, content)
        try:
            given = self._host.answer(asked.session_id, asked.call_id, answer)
        except (TypeError, ValueError) as error:
            return _declined(f"the MCP client's answer does not fit the form: {error}")
        except (UnknownSessionError, UnknownCallError):
            given = False
        return None if given else answer  # not shown on the call yet: the hook's answer

    def answer(
        self, session_id: str, call_id: str, action: str, content: JsonObject | None
    ) -> dict[str, Any]:
        """The ``answer`` tool, for a session of the client's: ``ToolError`` saying why an
        answer was not given."""
        chosen = AnswerAction(action)
        reason = None if chosen is AnswerAction.ACCEPT else f"{DONE[chosen]} by the MCP client"
        try:
            given = self._host.answer(session_id, call_id, Answer(chosen, content, reason))
        except UnknownCallError:
            raise ToolError(f"no call {call_id!r} in session {session_id}") from None
        except (TypeError, ValueError) as error:
            raise ToolError(f"the answer does not fit the question: {error}") from None
        if not given:
            raise ToolError(f"call {call_id} asks nothing now (answered already, or ended)")
        return {"session_id": session_id, "call_id": call_id, "answered": chosen.value}


def elicit_params(
    question: Question, meta: RequestParamsMeta | None = None, key: str | None = None
) -> ElicitRequestFormParams | ElicitRequestURLParams:
    """``question`` as an ``elicitation/create``'s params (``meta``: their ``_meta``; ``key``:
    a URL elicitation's id, a new one if None)."""
    if question.url is not None:
        return ElicitRequestURLParams(
            message=question.message,
            url=question.url,
            elicitation_id=key or secrets.token_urlsafe(12),
            meta=meta,
        )
    schema = question.form if question.form is not None else NO_FORM
    return ElicitRequestFormParams(message=question.message, requested_schema=schema, meta=meta)


def _declined(reason: str) -> Answer:
    return Answer(AnswerAction.DECLINE, reason=reason)


@dataclass(eq=False, slots=True)
class _Waiting:
    asked: Asked
    key: str = field(default_factory=lambda: secrets.token_urlsafe(9))
    """Its input request's key in a task's ``inputRequests``: never used twice."""
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: Answer | None = None
    sending: anyio.CancelScope | None = None


class TaskQuestions:
    """The questions a task's calls wait to have answered (a ``Route``): ``changed`` is told
    the first of them as a line (None when none waits); ``serve`` sends them to a client
    that waits on the task's ``tasks/result`` (2025-11-25), and ``requests`` shows them to
    one that reads the task (the tasks extension), which answers with ``respond``."""

    def __init__(self, asking: ClientAsking, changed: Callable[[str | None], None]) -> None:
        self._asking = asking
        self._changed = changed
        self._waiting: list[_Waiting] = []
        self._wake = anyio.Event()

    async def __call__(self, asked: Asked) -> Answer | None:
        waiting = _Waiting(asked)
        self._waiting.append(waiting)
        self._told()
        try:
            await waiting.answered.wait()
            return waiting.answer
        finally:
            self._waiting.remove(waiting)
            if waiting.sending is not None:
                waiting.sending.cancel()  # withdrawn: the elicitation is cancelled
            self._told()

    def _told(self) -> None:
        self._wake.set()
        self._wake = anyio.Event()
        self._changed(shown(self._waiting[0].asked) if self._waiting else None)

    def requests(self, client: ServerSession) -> dict[str, Any]:
        """The waiting questions ``client`` can take, as a task's ``inputRequests``: an
        ``elicitation/create`` for each, by its key."""
        return {
            waiting.key: {
                "method": "elicitation/create",
                "params": elicit_params(waiting.asked.question, key=waiting.key).model_dump(
                    by_alias=True, mode="json", exclude_none=True
                ),
            }
            for waiting in self._waiting
            if can_take(client, waiting.asked.question)
        }

    def respond(self, key: str, result: ElicitResult) -> None:
        """The client's answer to the question ``key``; one no longer waiting (answered or
        withdrawn meanwhile) is let be."""
        for waiting in self._waiting:
            if waiting.key == key and not waiting.answered.is_set():
                waiting.answer = self._asking.taken(waiting.asked, result)
                waiting.answered.set()
                return

    async def serve(
        self, client: ServerSession, request_id: RequestId | None, meta: RequestParamsMeta
    ) -> None:
        """Send each waiting question ``client`` can take on its request ``request_id``, as
        they come, until cancelled; one not answered then waits for the next request."""
        async with anyio.create_task_group() as group:
            while True:
                for waiting in self._waiting:
                    if waiting.sending is None and can_take(client, waiting.asked.question):
                        waiting.sending = anyio.CancelScope()
                        group.start_soon(self._send, waiting, client, request_id, meta)
                await self._wake.wait()

    async def _send(
        self,
        waiting: _Waiting,
        client: ServerSession,
        request_id: RequestId | None,
        meta: RequestParamsMeta,
    ) -> None:
        assert waiting.sending is not None
        try:
            with waiting.sending:
                answer = await self._asking.elicit(client, request_id, waiting.asked, meta)
                if not isinstance(answer, _Unsent):
                    waiting.answer = answer
                    waiting.answered.set()
        finally:
            if not waiting.answered.is_set():
                waiting.sending = None
