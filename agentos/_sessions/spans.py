"""A session's OpenTelemetry spans (GenAI semantic conventions), when tracing is configured.

``invoke_agent {agent}`` spans a turn: from the first model request the session makes
while no turn runs to the turn's end (``gen_ai.conversation.id`` is the session id).
``chat {model}`` spans each model request, under its turn, with its token usage (the
turn's span holds the conversation's id; fewer attributes, as each costs the SDK time).
``execute_tool {tool}`` spans each call from its submission to its end, with its progress
as span events and ``error.type`` when it did not complete. A call the turn waits for
(``run_sync``) is the turn's child; one the turn may end before (``run_async``,
``run_isolated``, ``defer``) starts a trace of its own linked to the turn, so no span is
ever the child of one that ended before it. The ids of the last turn are stored with the
session (``SessionWriter``), so after a restart the first turn, the calls found lost
(``orphaned``) and the deferred calls completed meanwhile link to the earlier trace.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING
from typing import Any
from typing import NamedTuple
from typing import cast

from agentos._errors import ProviderError
from agentos._model.provider import USAGE_FIELDS
from agentos._model.provider import ModelRequest
from agentos._model.provider import ModelResponse
from agentos._sessions.tracing import error_attributes
from agentos._sessions.tracing import remote_context
from agentos._sessions.tracing import traceparent
from components import CallEvent
from components import CallEventKind
from components import CallId

if TYPE_CHECKING:
    from opentelemetry.trace import Link
    from opentelemetry.trace import Span
    from opentelemetry.trace import SpanContext
    from opentelemetry.trace import Tracer

PAYLOAD_CHARS = 1_000
"""A progress payload longer than this (as JSON) is cut in its span event."""
_USAGE_ATTRIBUTES = {
    "input_tokens": "gen_ai.usage.input_tokens",
    "output_tokens": "gen_ai.usage.output_tokens",
    "cache_read_input_tokens": "gen_ai.usage.cache_read.input_tokens",
    "cache_creation_input_tokens": "gen_ai.usage.cache_creation.input_tokens",
}
assert set(_USAGE_ATTRIBUTES) == set(USAGE_FIELDS)


SPANNED = frozenset(CallEventKind) - {
    CallEventKind.QUEUED,
    CallEventKind.STARTED,
    CallEventKind.OVERDUE,
}
"""The call events a call's span records (``call_event``): its progress and its end."""


class SessionSpans:
    """The spans of one session; every method is cheap and never raises into the session."""

    def __init__(
        self,
        tracer: Tracer,
        session_id: str,
        agent: str,
        *,
        earlier: tuple[int, int] | None = None,
    ) -> None:
        """``earlier``: the trace and span ids of the session's last turn before a restart."""
        global _otel
        if _otel is None:
            import opentelemetry.context
            import opentelemetry.trace

            _otel = _Otel(
                opentelemetry.trace, opentelemetry.context, opentelemetry.context.Context()
            )
        self._tracer = tracer
        self._session_id = session_id
        self._agent = agent
        self._turn_name = f"invoke_agent {agent}"
        self._turn: Span | None = None
        self._turn_context: Any = None
        self._calls: dict[CallId, Span] = {}
        self._earlier = None if earlier is None else remote_context(*earlier)
        self._link_earlier = self._earlier is not None
        """The first turn after a restart links to the earlier trace."""
        self.last: tuple[int, int] | None = earlier
        """The trace and span ids of the newest turn (kept with the session)."""

    # ------------------------------------------------------------------ turns

    def turn(self, running: bool) -> None:
        """A turn runs (``running``) or rests: open or end its span."""
        if running and self._turn is None:
            links = self._links(self._earlier) if self._link_earlier else []
            self._link_earlier = False
            self._turn = self._tracer.start_span(
                self._turn_name,
                attributes={
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": self._agent,
                    "gen_ai.conversation.id": self._session_id,
                },
                links=links,
            )
            self._turn_context = _otel.trace.set_span_in_context(self._turn)
            context = self._turn.get_span_context()
            self.last = (context.trace_id, context.span_id)
        elif not running and self._turn is not None:
            self._turn.end()
            self._turn = self._turn_context = None

    # ------------------------------------------------------------------ model requests

    def request(self, request: ModelRequest, provider: str) -> Span:
        """A ``chat`` span for one model request (under its turn); end it with ``answered``."""
        return self._tracer.start_span(
            f"chat {request.model}",
            context=self._turn_context,
            kind=_otel.trace.SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": provider,
                "gen_ai.request.model": request.model,
            },
        )

    @staticmethod
    def enter(span: Span) -> object:
        """Make ``span`` the current span until ``leave`` (with what this returns): what the
        provider traces (the ``anthropic`` SDK's own span of the API call) nests under it."""
        return _otel.context.attach(_otel.trace.set_span_in_context(span))

    @staticmethod
    def leave(token: object) -> None:
        _otel.context.detach(token)

    def answered(
        self, span: Span, response: ModelResponse | None, error: ProviderError | None = None
    ) -> None:
        """End a ``chat`` span with the response's usage, or the error, which the turn's span
        says too (None and None: the request was cut by a stop)."""
        if response is not None:
            usage = response.usage
            span.set_attributes(
                {
                    attribute: usage[name]
                    for name, attribute in _USAGE_ATTRIBUTES.items()
                    if isinstance(usage.get(name), int)
                }
            )
        elif error is not None:
            _failed(span, error.kind, error.message)
            if self._turn is not None:
                _failed(self._turn, error.kind, error.message)
        else:
            _failed(span, "cancelled", "the session stopped")
        span.end()

    # ------------------------------------------------------------------ calls

    def call_span(self, tool: str, tool_use_id: str, *, waited: bool) -> tuple[Span, str]:
        """Open a call's ``execute_tool`` span, before it is submitted: under the turn if the
        turn waits for it, else in a trace of its own linked to the turn. The span and its
        ``traceparent`` (for the call: an MCP server hears it); ``track`` it once submitted."""
        turn = self._turn
        parent = self._turn_context if waited else _otel.root
        links = [] if waited or turn is None else self._links(turn.get_span_context())
        span = self._tracer.start_span(
            f"execute_tool {tool}",
            context=parent,
            links=links,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": tool,
                "gen_ai.tool.call.id": tool_use_id,
            },
        )
        return span, traceparent(span)

    def track(self, call_id: CallId, span: Span) -> None:
        """The call of ``span`` was submitted as ``call_id``: its events end the span."""
        span.set_attribute("agentos.call.id", call_id)
        self._calls[call_id] = span

    def call_event(self, event: CallEvent) -> None:
        """Progress becomes a span event; the final event ends the span. A call this
        process did not submit (a deferred one from before a restart) gets a span when
        it ends, linked to the earlier trace."""
        span = self._calls.get(event.call_id)
        if event.kind is CallEventKind.PROGRESSED and span is not None and event.progress:
            payload = json.dumps(event.progress.payload, default=str)[:PAYLOAD_CHARS]
            span.add_event(
                "progress",
                {"agentos.progress.kind": event.progress.kind.value, "agentos.progress": payload},
            )
            return
        if not event.status.is_final or (event.snapshot is not None and event.snapshot.from_cache):
            return  # a cache hit ran nothing
        if span is None:
            snapshot = event.snapshot
            tool = snapshot.tool_name if snapshot is not None else "tool"
            tool_use_id = (snapshot.provider_call_id if snapshot is not None else None) or ""
            span = self._resumed(event.call_id, tool, tool_use_id)
        else:
            del self._calls[event.call_id]
        if event.kind is CallEventKind.CANCELLED:
            _failed(span, "cancelled", "the call was cancelled")
        elif event.error is not None:
            _failed(span, event.error.kind.value, event.error.message)
        span.end()

    def lost(self, tool_use_id: str, tool: str) -> None:
        """A call the history holds and no process ran through a restart: an ``orphaned``
        span, linked to the earlier trace."""
        span = self._resumed(None, tool, tool_use_id)
        _failed(span, "orphaned", "the call did not survive a restart")
        span.end()

    def _resumed(self, call_id: CallId | None, tool: str, tool_use_id: str) -> Span:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": tool_use_id,
            "gen_ai.conversation.id": self._session_id,
        }
        if call_id is not None:
            attributes["agentos.call.id"] = call_id
        return self._tracer.start_span(
            f"execute_tool {tool}",
            context=_otel.root,
            links=self._links(self._earlier),
            attributes=attributes,
        )

    def close(self) -> None:
        """The session's task ends: end what is open (calls that go on are told so)."""
        for span in self._calls.values():
            span.set_attribute("agentos.call.outlived_session", True)
            span.end()
        self._calls.clear()
        self.turn(False)

    # ------------------------------------------------------------------ plumbing

    @staticmethod
    def _links(context: SpanContext | None) -> list[Link]:
        return [] if context is None else [_otel.trace.Link(context)]


class _Otel(NamedTuple):
    """OpenTelemetry's modules, imported when the first traced session is made."""

    trace: Any
    context: Any
    root: Any
    """An empty context: a span started in it begins a trace of its own."""


_otel: _Otel = None  # type: ignore[assignment]


def _failed(span: Span, kind: str, message: str) -> None:
    span.set_attributes(error_attributes(kind))
    span.set_status(_otel.trace.Status(_otel.trace.StatusCode.ERROR, message))


def spans_for(
    tracer: object | None, session_id: str, agent: str, *, earlier: tuple[int, int] | None
) -> SessionSpans | None:
    """A session's spans, or None when the application configured no tracing (``tracer``
    is an OpenTelemetry ``Tracer``, typed ``object`` so that nothing imports it unasked)."""
    if tracer is None:
        return None
    return SessionSpans(cast("Tracer", tracer), session_id, agent, earlier=earlier)
