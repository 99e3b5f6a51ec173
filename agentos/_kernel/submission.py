"""New calls, ``Runtime.submit`` and ``Runtime.record_cached``: their arguments checked and their
``ToolCallConfig`` built in one place, so a call run here and one served from a cache are alike."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

from agentos._kernel.checks import check_input
from agentos._kernel.checks import check_optional_texts
from agentos._kernel.checks import check_text
from agentos._kernel.checks import optional_texts
from agentos._kernel.isolation import IsolatedRunner
from agentos._kernel.json_values import to_json
from agentos._kernel.options import CallOptions
from agentos._kernel.parts import RuntimeCore
from agentos._kernel.tools import Tool
from components import NO_TIMEOUTS
from components import CallId
from components import ConversationId
from components import JsonObject
from components import SessionId
from components import SubmitCall
from components import TimeoutSettings
from components import ToolCallConfig
from components import TurnId
from components import new_call_id


class CallSubmission:
    """``Runtime.submit`` and ``Runtime.record_cached``: each posts a ``SubmitCall``."""

    def __init__(
        self,
        core: RuntimeCore,
        tools: Mapping[str, Tool[Any]],
        runners: Mapping[str, IsolatedRunner],
        default_timeout: float | None,
    ) -> None:
        self._core = core
        self._post = core.kernel.post
        self._wall = core.clock.wall
        self._tools = tools
        self._runners = runners
        self._default_timeout = default_timeout
        self._checked: CallOptions | None = None
        """The options the last submit checked."""

    def submit(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any] | str | None,
        session_id: str,
        provider_call_id: str | None,
        conversation_id: str | None,
        turn_id: str | None,
        parent_call_id: str | None,
        options: CallOptions,
    ) -> CallId:
        self._check_names(tool_name, session_id)
        if not optional_texts(provider_call_id, conversation_id, turn_id, parent_call_id):
            check_optional_texts(
                provider_call_id=provider_call_id,
                conversation_id=conversation_id,
                turn_id=turn_id,
                parent_call_id=parent_call_id,
            )
        if not isinstance(options, CallOptions):
            raise TypeError(f"options must be a CallOptions, got {type(options).__name__}")
        if options is not self._checked:  # frozen: checked once, however often it is passed
            options.check()
            self._checked = options
        runner = options.runner
        if runner is not None and runner not in self._runners:
            known = ", ".join(sorted(self._runners)) or "none"
            raise ValueError(f"no isolated runner named {runner!r} (registered: {known})")
        tool = self._tools.get(tool_name)
        timeout = options.timeout
        if timeout is None:
            timeout = (
                self._default_timeout if tool is None or tool.timeout is None else tool.timeout
            )
        elif timeout == math.inf:
            timeout = None
        raw, args, rejection = check_input(self._tools, tool_name, tool_input)
        config = _config(
            tool_name,
            session_id,
            raw,
            options,
            timeouts=_timeouts(
                timeout, options.overdue_after, options.attempt_timeout, options.overdue_max
            ),
            provider_call_id=provider_call_id,
            conversation_id=conversation_id,
            turn_id=turn_id,
            parent_call_id=parent_call_id,
        )
        self._post(SubmitCall(config, self._wall(), args, rejection))
        return config.call_id

    def record_cached(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        result: object,
        *,
        session_id: str,
        provider_call_id: str | None,
        turn_id: str | None,
        label: str | None,
    ) -> CallId:
        self._check_names(tool_name, session_id)
        check_optional_texts(provider_call_id=provider_call_id, turn_id=turn_id, label=label)
        raw = to_json(dict(tool_input))
        assert isinstance(raw, dict)
        config = _config(
            tool_name,
            session_id,
            raw,
            CallOptions(label=label),
            provider_call_id=provider_call_id,
            turn_id=turn_id,
            from_cache=True,
        )
        self._post(SubmitCall(config, self._wall(), cached_result=to_json(result)))
        return config.call_id

    def _check_names(self, tool_name: str, session_id: str) -> None:
        """Refuse a closed runtime, then a tool or session name that is not a non-empty str."""
        self._core.check_open()
        check_text("tool_name", tool_name)
        check_text("session_id", session_id)


@functools.lru_cache(maxsize=256)
def _timeouts(
    hard: float | None, overdue: float | None, attempt: float | None, overdue_max: float | None
) -> TimeoutSettings:
    """Calls with the same deadlines share one (frozen) ``TimeoutSettings``."""
    return TimeoutSettings(hard, overdue, attempt, overdue_max)


def _config(
    tool_name: str,
    session_id: str,
    tool_input: JsonObject,
    options: CallOptions,
    *,
    timeouts: TimeoutSettings = NO_TIMEOUTS,
    provider_call_id: str | None,
    conversation_id: str | None = None,
    turn_id: str | None,
    parent_call_id: str | None = None,
    from_cache: bool = False,
) -> ToolCallConfig:
    """A new call's config under a new id: its names typed, ``options`` saying how it runs."""
    return ToolCallConfig(
        call_id=new_call_id(),
        session_id=SessionId(session_id),
        tool_name=tool_name,
        tool_input=tool_input,
        provider_call_id=provider_call_id,
        conversation_id=None if conversation_id is None else ConversationId(conversation_id),
        turn_id=None if turn_id is None else TurnId(turn_id),
        parent_call_id=None if parent_call_id is None else CallId(parent_call_id),
        timeouts=timeouts,
        deferred=bool(options.deferred),
        runner=options.runner,
        retries=options.retries,
        label=options.label,
        from_cache=from_cache,
        disposition=options.disposition,
        trace_parent=options.trace_parent,
        nobody_to_ask=options.nobody_to_ask,
    )
