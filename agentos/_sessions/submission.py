"""Performing the machine's ``SubmitCalls``: each use becomes what the machine decided.

A capability is answered at once from the system toolbox; every other use
becomes a runtime call with the options the machine decided (``options_for``),
under its span when the session is traced, and a deferred one gets its
continuation token; a use the machine answered from its cache is recorded as a
completed call of its own. Nothing here decides how a call runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import replace

from agentos._kernel.runtime import Runtime
from agentos._model.messages import ToolResultBlock
from agentos._model.messages import tool_result
from agentos._sessions.scope import Caller
from agentos._sessions.spans import SessionSpans
from agentos._sessions.tokens import ContinuationTokens
from agentos._sessions.toolbox import SystemToolbox
from agentos._turns.call_options import PlannedCall
from agentos._turns.events import CallsSubmitted
from agentos._turns.events import CallStarted
from agentos._turns.events import SubmitCalls
from agentos._turns.tool_policy import Disposition
from components import CallId
from components import CallStatus
from components import Json

TURN_PREFIX = "request-"


def turn_of(request: int) -> str:
    """The ``turn_id`` of the calls a session's ``request``-th model request asked for."""
    return f"{TURN_PREFIX}{request}"


def request_of(turn_id: str | None) -> int | None:
    """The model request of its session a call's ``turn_id`` names (None: none does)."""
    if turn_id is None or not turn_id.startswith(TURN_PREFIX):
        return None
    number = turn_id.removeprefix(TURN_PREFIX)
    return int(number) if number.isdigit() else None


@dataclass(slots=True)
class CallSubmitter:
    """Where one session's calls go: its runtime, its system toolbox and its tokens."""

    session_id: str
    runtime: Runtime
    toolbox: SystemToolbox
    tokens: ContinuationTokens
    caller: Caller
    parent_call: str | None = None
    """The call this session runs as a sub-agent of: its calls are nested under it."""
    spans: SessionSpans | None = None
    """Its OpenTelemetry spans, when tracing is configured."""

    async def submit(self, action: SubmitCalls, *, turn_id: str) -> CallsSubmitted:
        """Answer capabilities, record cache hits, and hand the other calls to the runtime."""
        answers: dict[str, ToolResultBlock] = {}
        started: list[CallStarted] = []
        read: list[str] = []
        for call, value in action.cached:
            self._record_cached(call, value, turn_id)
        for use in action.uses:
            tool_use_id = use["id"]
            planned = action.calls.get(tool_use_id)
            if planned is None:
                arguments = use.get("input", {})
                answers[tool_use_id] = await self._capability(
                    use["name"], use["id"], arguments, read
                )
            else:
                call_id = self._start(planned, turn_id)
                started.append(await self._started(planned, call_id))
        return CallsSubmitted(answers, started, read, self.runtime.clock.monotonic())

    def _start(self, planned: PlannedCall, turn_id: str) -> CallId:
        """The runtime call, under its span (which ends here if there is no call)."""
        span, options = None, planned.options
        if self.spans is not None:
            waited = planned.disposition is Disposition.RUN_SYNC
            span, trace_parent = self.spans.call_span(
                planned.name, planned.tool_use_id, waited=waited
            )
            options = replace(options, trace_parent=trace_parent)
        try:
            call_id = self.runtime.submit(
                planned.name,
                planned.arguments,
                session_id=self.session_id,
                provider_call_id=planned.tool_use_id,
                turn_id=turn_id,
                parent_call_id=self.parent_call,
                options=options,
            )
        except BaseException:
            if span is not None:
                span.end()
            raise
        if span is not None and self.spans is not None:
            self.spans.track(call_id, span)
        return call_id

    async def _started(self, planned: PlannedCall, call_id: CallId) -> CallStarted:
        """What the machine hears of a call it planned: a deferred one with its token."""
        token = None
        if planned.disposition is Disposition.DEFER:
            token = await self.tokens.issue(
                self.session_id,
                call_id,
                provider_call_id=planned.tool_use_id,
                tool_name=planned.name,
                tool_input=self.runtime.status(call_id).tool_input,
            )
        return CallStarted(
            planned.tool_use_id,
            call_id,
            planned.name,
            planned.disposition,
            CallStatus.PENDING,  # a read would run a tick per call; STARTED follows
            token,
            planned.decorations,
            planned.options.overdue_after,
            planned.estimated,
        )

    def _record_cached(self, planned: PlannedCall, value: Json, turn_id: str) -> None:
        """A cache hit the machine answered: a completed call of its own, from the cache."""
        arguments = planned.arguments
        self.runtime.record_cached(
            planned.name,
            arguments if isinstance(arguments, dict) else {},  # a hit's input was an object
            value,
            session_id=self.session_id,
            provider_call_id=planned.tool_use_id,
            turn_id=turn_id,
            label=planned.options.label,
        )

    async def _capability(
        self, name: str, tool_use_id: str, arguments: object, read: list[str]
    ) -> ToolResultBlock:
        result = await self.toolbox.invoke(name, arguments, self.caller)
        content = result.content
        named = content.get("tool_call_id")
        final = name == "get_tool_call_status" and content.get("is_final") is True
        stopped = name == "cancel_tool_call" and content.get("cancelled") is True
        if (final or stopped) and isinstance(named, str):
            read.append(named)  # the model knows: no late outcome
        return tool_result(tool_use_id, result.to_json(), error=result.is_error)
