"""agentos: an agent runtime in which a conversation never blocks on a tool.

Every tool call is an entity in an esper world; systems move calls through
their life each tick. This module re-exports what a program uses: the runtime,
tools, sessions, the host, stores, configuration, snapshots and errors. The rest
lives on its layer's face: ``agentos.board`` (the message board), ``agentos.turns``
(the turn machines, messages, context views, the system toolbox),
``agentos.stores`` (the store protocol and its records), ``agentos.testing``.
"""

from typing import TYPE_CHECKING
from typing import Any

from agentos._errors import AgentOSError
from agentos._errors import CallCancelled
from agentos._errors import ProviderError
from agentos._errors import RuntimeClosedError
from agentos._errors import SessionBusyError
from agentos._errors import SessionConflictError
from agentos._errors import SessionEndedError
from agentos._errors import SessionInUseError
from agentos._errors import StoreError
from agentos._errors import ToolboxError
from agentos._errors import ToolDefinitionError
from agentos._errors import ToolsetError
from agentos._errors import UnknownCallError
from agentos._errors import UnknownSessionError
from agentos._errors import UsageError
from agentos._errors import WrongThreadError
from agentos._gc import GcSettings
from agentos._gc import tune_gc
from agentos._host.children import child_session_id
from agentos._host.host import Host
from agentos._kernel.clock import Clock
from agentos._kernel.clock import ManualClock
from agentos._kernel.clock import SystemClock
from agentos._kernel.context import ToolContext
from agentos._kernel.isolation import IsolatedCall
from agentos._kernel.isolation import IsolatedRunner
from agentos._kernel.isolation import LocalProcessRunner
from agentos._kernel.options import CallOptions
from agentos._kernel.process import ProcessResult
from agentos._kernel.process import run_process
from agentos._kernel.questions import Asked
from agentos._kernel.runtime import DEFAULT_SESSION
from agentos._kernel.runtime import Runtime
from agentos._kernel.snapshot import CancelOutcome
from agentos._kernel.snapshot import CompleteOutcome
from agentos._kernel.snapshot import RuntimeStatistics
from agentos._kernel.snapshot import SessionSnapshot
from agentos._kernel.snapshot import SessionStatistics
from agentos._kernel.tools import InvalidToolInput
from agentos._kernel.tools import Tool
from agentos._kernel.tools import ToolFailure
from agentos._kernel.tools import tool
from agentos._kernel.toolsets import ToolRegistry
from agentos._kernel.toolsets import Toolset
from agentos._model.function_model import FunctionModel
from agentos._model.prices import ModelPrices
from agentos._model.provider import ClosableProvider
from agentos._model.provider import ModelRequest
from agentos._model.provider import ModelResponse
from agentos._model.provider import PartialReply
from agentos._model.provider import Provider
from agentos._model.provider import ReplyListener
from agentos._model.provider import ScriptedProvider
from agentos._model.provider import StreamingProvider
from agentos._model.test_model import TestModel
from agentos._public import claim as _claim
from agentos._public import claim_all as _claim_all
from agentos._runners.ray import RayRunner
from agentos._sessions.error_record import ErrorRecord
from agentos._sessions.scope import SessionLineage
from agentos._sessions.session import Session
from agentos._sessions.tokens import ContinuationTokens
from agentos._sessions.toolbox import ChildSessions
from agentos._store.opening import open_store
from agentos._store.protocol import Completion
from agentos._store.sqlite.store import SqliteStore
from agentos._toolsets.a2a.agent import A2aAgent
from agentos._toolsets.agent import AgentTools
from agentos._toolsets.agent import agent_tools
from agentos._toolsets.imports import ToolImportError
from agentos._toolsets.mcp.server import McpServer
from agentos._turns.agent_config import AgentConfig
from agentos._turns.agent_config import SubAgent
from agentos._turns.events import SessionStatus
from agentos._turns.mcp_config import McpServerConfig
from agentos._turns.tool_policy import Decorate
from agentos._turns.tool_policy import Decorator
from agentos._turns.tool_policy import Disposition
from agentos._turns.tool_policy import ExecutionMode
from agentos._turns.tool_policy import ToolPolicy
from agentos._turns.tool_policy import YieldOnAnyProgress
from agentos._turns.tool_policy import YieldOnTimeout
from agentos._turns.tool_policy import YieldWhenAllDone
from components import Answer
from components import AnswerAction
from components import CallError
from components import CallEvent
from components import CallEventKind
from components import CallId
from components import CallSnapshot
from components import CallStatus
from components import ConversationId
from components import ErrorKind
from components import Json
from components import JsonObject
from components import ProgressKind
from components import Question
from components import SessionId
from components import ToolCallProgress
from components import TurnId

__all__ = [
    "DEFAULT_SESSION",
    "A2aAgent",
    "AgentConfig",
    "AgentOSError",
    "AgentTools",
    "Answer",
    "AnswerAction",
    "AnthropicProvider",
    "Asked",
    "CallCancelled",
    "CallError",
    "CallEvent",
    "CallEventKind",
    "CallId",
    "CallOptions",
    "CallSnapshot",
    "CallStatus",
    "CancelOutcome",
    "ChildSessions",
    "Clock",
    "ClosableProvider",
    "CompleteOutcome",
    "Completion",
    "ContinuationTokens",
    "ConversationId",
    "Decorate",
    "Decorator",
    "Disposition",
    "ErrorKind",
    "ErrorRecord",
    "ExecutionMode",
    "FunctionModel",
    "GcSettings",
    "Host",
    "InvalidToolInput",
    "IsolatedCall",
    "IsolatedRunner",
    "Json",
    "JsonObject",
    "LocalProcessRunner",
    "ManualClock",
    "McpServer",
    "McpServerConfig",
    "ModelPrices",
    "ModelRequest",
    "ModelResponse",
    "PartialReply",
    "PostgresStore",
    "ProcessResult",
    "ProgressKind",
    "Provider",
    "ProviderError",
    "Question",
    "RayRunner",
    "ReplyListener",
    "Runtime",
    "RuntimeClosedError",
    "RuntimeStatistics",
    "ScriptedProvider",
    "Session",
    "SessionBusyError",
    "SessionConflictError",
    "SessionEndedError",
    "SessionId",
    "SessionInUseError",
    "SessionLineage",
    "SessionSnapshot",
    "SessionStatistics",
    "SessionStatus",
    "SqliteStore",
    "StoreError",
    "StreamingProvider",
    "SubAgent",
    "SystemClock",
    "TestModel",
    "Tool",
    "ToolCallProgress",
    "ToolContext",
    "ToolDefinitionError",
    "ToolFailure",
    "ToolImportError",
    "ToolPolicy",
    "ToolRegistry",
    "ToolboxError",
    "Toolset",
    "ToolsetError",
    "TurnId",
    "UnknownCallError",
    "UnknownSessionError",
    "UsageError",
    "WrongThreadError",
    "YieldOnAnyProgress",
    "YieldOnTimeout",
    "YieldWhenAllDone",
    "agent_tools",
    "child_session_id",
    "open_store",
    "run_process",
    "tool",
    "tune_gc",
]

if TYPE_CHECKING:
    from agentos._model.anthropic_provider import AnthropicProvider
    from agentos._store.postgres.store import PostgresStore


_LAZY = ("AnthropicProvider", "PostgresStore")
"""Imported on first use: the SDK takes a second to import; asyncpg is an optional extra."""

_claim_all(globals(), (name for name in __all__ if name not in _LAZY), "agentos")


def __getattr__(name: str) -> Any:
    """The ``_LAZY`` names, imported on first use, and ``__version__`` (read on first use
    from the installed package's metadata)."""
    if name == "__version__":
        from agentos._version import agentos_version

        return agentos_version()
    if name == "AnthropicProvider":
        from agentos._model.anthropic_provider import AnthropicProvider

        _claim(AnthropicProvider, "agentos")
        return AnthropicProvider
    if name == "PostgresStore":
        try:
            from agentos._store.postgres.store import PostgresStore
        except ImportError as error:
            raise ImportError(
                f"PostgresStore needs asyncpg ({error}): pip install 'agentos[postgres]'"
            ) from None
        _claim(PostgresStore, "agentos")
        return PostgresStore
    raise AttributeError(f"module 'agentos' has no attribute {name!r}")
