"""Errors the runtime raises to the code that calls it."""

from __future__ import annotations


class AgentOSError(Exception):
    """Base class for errors raised by agentos."""


class UnknownCallError(AgentOSError, LookupError):
    """No call with this id exists in the caller's scope.

    An id that belongs to another session gets exactly this error too, so
    scope never leaks whether a call exists.
    """

    def __init__(self, call_id: object) -> None:
        self.call_id = call_id
        super().__init__(f"no tool call with id {call_id!r}")


class CallCancelled(AgentOSError):
    """Raised inside a sync tool by ``ToolContext.check_cancelled`` once its call is cancelled."""


class RuntimeClosedError(AgentOSError, RuntimeError):
    """The runtime is not running (not entered yet, or already closed)."""


class ToolDefinitionError(AgentOSError, TypeError):
    """A function cannot be turned into a tool (say which parameter is wrong)."""
