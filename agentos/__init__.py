"""agentos: an agent runtime in which a conversation never blocks on a tool.

Every tool call is an entity in an esper world; systems move calls through
their life each tick. This module re-exports the public API.
"""

from agentos._clock import Clock, ManualClock, SystemClock
from agentos._context import ToolContext
from agentos._errors import (
    AgentOSError,
    CallCancelled,
    RuntimeClosedError,
    ToolDefinitionError,
    UnknownCallError,
)
from agentos._process import ProcessResult, run_process
from agentos._runtime import DEFAULT_SESSION, Runtime
from agentos._snapshot import CallSnapshot, CancelOutcome, RuntimeStatistics
from agentos._tools import Tool, ToolFailure, tool
from components import (
    CallError,
    CallEvent,
    CallEventKind,
    CallId,
    CallStatus,
    ErrorKind,
    ProgressKind,
    SessionId,
    ToolCallProgress,
)

__all__ = [
    "DEFAULT_SESSION",
    "AgentOSError",
    "CallCancelled",
    "CallError",
    "CallEvent",
    "CallEventKind",
    "CallId",
    "CallSnapshot",
    "CallStatus",
    "CancelOutcome",
    "Clock",
    "ErrorKind",
    "ManualClock",
    "ProcessResult",
    "ProgressKind",
    "Runtime",
    "RuntimeClosedError",
    "RuntimeStatistics",
    "SessionId",
    "SystemClock",
    "Tool",
    "ToolCallProgress",
    "ToolContext",
    "ToolDefinitionError",
    "ToolFailure",
    "UnknownCallError",
    "run_process",
    "tool",
]
