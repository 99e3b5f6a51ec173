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
from agentos._history import (
    PLACEHOLDER_KEY,
    HistoryCall,
    HistoryLookup,
    MessageHistory,
    NoHistory,
)
from agentos._process import ProcessResult, run_process
from agentos._runtime import DEFAULT_SESSION, Runtime
from agentos._scope import Caller, Scope, SessionLineage
from agentos._snapshot import CallSnapshot, CancelOutcome, CompleteOutcome, RuntimeStatistics
from agentos._toolbox import (
    CAPABILITIES,
    MAX_WAIT_SECONDS,
    CapabilityResult,
    SystemToolbox,
    ToolboxError,
)
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
    "CAPABILITIES",
    "DEFAULT_SESSION",
    "MAX_WAIT_SECONDS",
    "PLACEHOLDER_KEY",
    "AgentOSError",
    "CallCancelled",
    "CallError",
    "CallEvent",
    "CallEventKind",
    "CallId",
    "CallSnapshot",
    "CallStatus",
    "Caller",
    "CancelOutcome",
    "CapabilityResult",
    "Clock",
    "CompleteOutcome",
    "ErrorKind",
    "HistoryCall",
    "HistoryLookup",
    "ManualClock",
    "MessageHistory",
    "NoHistory",
    "ProcessResult",
    "ProgressKind",
    "Runtime",
    "RuntimeClosedError",
    "RuntimeStatistics",
    "Scope",
    "SessionId",
    "SessionLineage",
    "SystemClock",
    "SystemToolbox",
    "Tool",
    "ToolCallProgress",
    "ToolContext",
    "ToolDefinitionError",
    "ToolFailure",
    "ToolboxError",
    "UnknownCallError",
    "run_process",
    "tool",
]
