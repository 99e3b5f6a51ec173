"""What a session asks outside its machine: the model request, capability answers, runtime
calls, tool definitions.

``Outbound`` performs the turn machine's ``SubmitCalls``: a capability is
answered at once from the world, every other use becomes a runtime call (with
its disposition, decorations and, for a deferred call, a continuation token).
A background call's ``expected_seconds`` (``_turns/expected.py``) is taken out of its
input here and becomes its overdue interval; the history keeps what the model wrote.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from agentos._errors import ProviderError
from agentos._kernel.options import CallOptions
from agentos._kernel.runtime import Runtime
from agentos._kernel.snapshot import SessionStatistics
from agentos._model.messages import Block, ToolResultBlock, tool_result
from agentos._model.provider import (
    USAGE_FIELDS,
    ModelRequest,
    ModelResponse,
    Provider,
    ReplyListener,
    StreamingProvider,
)
from agentos._sessions.scope import Caller
from agentos._sessions.spans import SessionSpans
from agentos._sessions.tokens import ContinuationTokens
from agentos._sessions.tool_access import ToolAccess
from agentos._sessions.toolbox import SystemToolbox
from agentos._turns.agent_config import DECORATED, AgentConfig, Disposition
from agentos._turns.capabilities import CAPABILITIES, MESSAGE_AGENT
from agentos._turns.events import CallsSubmitted, CallStarted, SubmitCalls
from agentos._turns.expected import (
    estimate,
    has_own_field,
    take_expected_seconds,
    with_expected_seconds,
)
from components import CallStatus, Json


@dataclass(slots=True)
class Outbound:
    """What one session asks of the world outside its machine: the model, the runtime and
    the system toolbox."""

    session_id: str
    config: AgentConfig
    runtime: Runtime
    toolbox: SystemToolbox
    tokens: ContinuationTokens
    caller: Caller
    access: ToolAccess
    parent_call: str | None = None
    """The call this session runs as a sub-agent of: its calls are nested under it."""
    spans: SessionSpans | None = None
    """Its OpenTelemetry spans, when tracing is configured."""
    _expecting: tuple[int, frozenset[str]] | None = field(default=None, init=False)
    """The tools whose schema has our ``expected_seconds``, and the ``tools_version`` of
    the runtime they were found at (an MCP server's list may change)."""
    _requests: int = field(default=0, init=False)
    _checked: tuple[Provider, bool] | None = field(default=None, init=False)
    _usage: dict[str, int] = field(default_factory=dict, init=False)
    """The token counts of every response, summed by ``USAGE_FIELDS`` name."""

    async def ask(
        self, provider: Provider, request: ModelRequest, listener: ReplyListener | None = None
    ) -> ModelResponse:
        """One model request: its response (streamed to ``listener`` by a provider that
        streams). However it fails, a ``ProviderError`` says how (``timeout``,
        ``provider_bug``, or the provider's own kind); the session records it. The caller
        bounds it by ``request_timeout`` (its cancel scope's deadline: one scope a request)."""
        self._check_budget()
        self._requests += 1
        try:
            if listener is not None and self._streams(provider):
                response = await cast(StreamingProvider, provider).stream(request, listener)
            else:
                response = await provider.complete(request)
        except TimeoutError:
            raise self.timed_out() from None
        except ProviderError:
            raise
        except Exception as error:  # a provider's bug must not end the session
            raise ProviderError("provider_bug", f"{type(error).__name__}: {error}") from None
        for name in USAGE_FIELDS:
            count = response.usage.get(name)
            if isinstance(count, int) and not isinstance(count, bool):
                self._usage[name] = self._usage.get(name, 0) + count
        return response

    def _streams(self, provider: Provider) -> bool:
        """Whether ``provider`` streams, found once (a protocol check costs 30 us)."""
        if self._checked is None or self._checked[0] is not provider:
            self._checked = (provider, isinstance(provider, StreamingProvider))
        return self._checked[1]

    def timed_out(self) -> ProviderError:
        """The error of a request with no answer within ``request_timeout``."""
        seconds = self.config.request_timeout
        return ProviderError("timeout", f"no answer from the model in {seconds:g}s")

    def statistics(self) -> SessionStatistics:
        """Requests made so far, the token counts their answers reported, and their cost."""
        prices = self.config.model_prices()
        cost = None if prices is None else prices.cost(self._usage)
        return SessionStatistics(requests=self._requests, cost_usd=cost, **self._usage)

    def restore_usage(self, requests: int, usage: Mapping[str, int]) -> None:
        """Count what the session used before it was restored (the store kept it)."""
        self._requests += requests
        for name in USAGE_FIELDS:
            self._usage[name] = self._usage.get(name, 0) + int(usage.get(name, 0))

    def usage(self) -> dict[str, int]:
        """Requests and token counts so far, as the store keeps them."""
        usage = {"requests": self._requests, **self._usage}
        if self.spans is not None and self.spans.last is not None:
            usage["trace_id"], usage["trace_span_id"] = self.spans.last  # linked after a restart
        return usage

    def _check_budget(self) -> None:
        """Refuse a request past the session's token or cost limit (a ``budget`` error)."""
        config = self.config
        limit = config.max_tokens_per_session
        if limit is None and config.max_cost_per_session is None:
            return  # most sessions: nothing to add up
        spent = self.statistics()
        if limit is not None and spent.tokens >= limit:
            raise ProviderError(
                "budget",
                f"the session has used {spent.tokens:,} tokens, its max_tokens_per_session is "
                f"{limit:,}: it asks the model nothing more (raise the limit to go on)",
            )
        ceiling = config.max_cost_per_session
        if ceiling is not None and spent.cost_usd is not None and spent.cost_usd >= ceiling:
            raise ProviderError(
                "budget",
                f"the session has cost ${spent.cost_usd:.4f}, its max_cost_per_session is "
                f"${ceiling:g}: it asks the model nothing more (raise the limit to go on)",
            )

    async def submit(self, action: SubmitCalls, *, turn_id: str) -> CallsSubmitted:
        """Answer capabilities, record cache hits, and hand the other calls to the runtime."""
        answers: dict[str, ToolResultBlock] = {}
        started: list[CallStarted] = []
        read: list[str] = []
        for use, value in action.cached:
            self._record_cached(use, value, turn_id)
        for use in action.uses:
            tool_use_id, name, arguments = use["id"], use["name"], use.get("input", {})
            if name in self.config.capabilities and name in CAPABILITIES:
                answers[tool_use_id] = await self._capability(tool_use_id, name, arguments, read)
                continue
            decorations = action.decorations[tool_use_id]
            disposition = self.config.disposition(name)
            deferred = disposition is Disposition.DEFER
            timeout = decorations.timeout or self.config.call_timeout
            if deferred and self.tokens.ttl is not None:
                timeout = min(timeout or math.inf, self.tokens.ttl)
            overdue_after = self.config.call_overdue_after
            estimated = name in self.expecting() and estimate(arguments)
            arguments, overdue_after = self._take_expected(name, arguments, overdue_after)
            span, trace_parent = None, None
            if self.spans is not None:
                waited = disposition is Disposition.RUN_SYNC
                span, trace_parent = self.spans.call_span(name, tool_use_id, waited=waited)
            options = CallOptions(
                timeout=timeout,
                overdue_after=overdue_after,
                overdue_max=self.config.expected_seconds_cap,  # waiting backs off: 1, 2, 4 ...
                deferred=deferred,
                runner=(  # the policy's word: synchronous mode waits, but still isolates
                    self.config.isolated_runner
                    if self.config.policy.disposition(name) is Disposition.RUN_ISOLATED
                    else None
                ),
                retries=decorations.retries,
                attempt_timeout=decorations.attempt_timeout,
                label=decorations.label,
                disposition=(  # what readers see: decorated ones say so
                    disposition.value
                    if self.config.decorators(name) is None
                    else f"{DECORATED}{disposition.value}"
                ),
                trace_parent=trace_parent,
            )
            try:
                call_id = self.runtime.submit(
                    name,
                    _as_tool_input(arguments),
                    session_id=self.session_id,
                    provider_call_id=tool_use_id,
                    turn_id=turn_id,
                    parent_call_id=self.parent_call,
                    options=options,
                )
            except BaseException:
                if span is not None:
                    span.end()  # no call: its span ends here
                raise
            if span is not None and self.spans is not None:
                self.spans.track(call_id, span)
            token = None
            if disposition is Disposition.DEFER:
                token = await self.tokens.issue(
                    self.session_id,
                    call_id,
                    provider_call_id=tool_use_id,
                    tool_name=name,
                    tool_input=self.runtime.status(call_id).tool_input,
                )
            started.append(
                CallStarted(
                    tool_use_id,
                    call_id,
                    name,
                    disposition,
                    CallStatus.PENDING,  # a read would run a tick per call; STARTED follows
                    token,
                    decorations,
                    overdue_after,
                    estimated,
                )
            )
        return CallsSubmitted(answers, started, read, self.runtime.clock.monotonic())

    def _record_cached(self, use: Block, value: Json, turn_id: str) -> None:
        """A cache hit the machine answered: a completed call of its own, from the cache."""
        name = use["name"]
        arguments, _ = self._take_expected(name, use.get("input", {}), None)
        rule = self.config.decorators(name)
        self.runtime.record_cached(
            name,
            arguments if isinstance(arguments, dict) else {},  # a hit's input was an object
            value,
            session_id=self.session_id,
            provider_call_id=use["id"],
            turn_id=turn_id,
            label=None if rule is None else rule.option("label"),
        )

    async def _capability(
        self, tool_use_id: str, name: str, arguments: object, read: list[str]
    ) -> ToolResultBlock:
        result = await self.toolbox.invoke(name, arguments, self.caller)
        content = result.content
        named = content.get("tool_call_id")
        final = name == "get_tool_call_status" and content.get("is_final") is True
        stopped = name == "cancel_tool_call" and content.get("cancelled") is True
        if (final or stopped) and isinstance(named, str):
            read.append(named)  # the model knows: no late outcome
        return tool_result(tool_use_id, result.to_json(), error=result.is_error)

    def tool_definitions(self) -> list[dict[str, Any]]:
        """The tools as the model sees them: a background tool's schema has ``expected_seconds``."""
        expecting, cap = self.expecting(), self.config.expected_seconds_cap
        definitions = [
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": with_expected_seconds(tool.input_schema, cap)
                if tool.name in expecting
                else tool.input_schema,
            }
            for tool in self.access.tools()
        ]
        chosen = [
            name
            for name in self.config.capabilities
            if name in CAPABILITIES and (name != MESSAGE_AGENT or self.config.agents)
        ]
        return definitions + SystemToolbox.definitions(chosen)

    def _take_expected(
        self, name: str, arguments: object, default: float | None
    ) -> tuple[object, float | None]:
        """``arguments`` without the model's ``expected_seconds`` (for a tool that takes it)
        and the overdue interval it asks for, bounded (``default`` when it gives none)."""
        if name not in self.expecting():
            return arguments, default
        return take_expected_seconds(
            arguments,
            default=default,
            cap=self.config.expected_seconds_cap,
            floor=self.config.expected_seconds_floor,
        )

    def expecting(self) -> frozenset[str]:
        """Tools whose calls let the turn go on without them (run_async, run_isolated in
        asynchronous mode) and that have no field of that name of their own."""
        version = self.runtime.tools_version
        if self._expecting is None or self._expecting[0] != version:
            background = (Disposition.RUN_ASYNC, Disposition.RUN_ISOLATED)
            self._expecting = (
                version,
                frozenset(
                    name
                    for name, tool in self.runtime.tools.items()
                    if self.config.disposition(name) in background
                    and not has_own_field(tool.input_schema)
                ),
            )
        return self._expecting[1]


def _as_tool_input(arguments: object) -> dict[str, Any] | str:
    """What the model sent as a call's input, for the runtime to check: an object passes,
    anything else fails the call saying the arguments must be a JSON object."""
    if isinstance(arguments, dict | str):
        return arguments
    try:
        return json.dumps(arguments)
    except (TypeError, ValueError):
        return repr(arguments)
