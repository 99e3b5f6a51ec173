"""agentos: an agent runtime in which a conversation never blocks on a tool.

Every tool call is an entity in an esper world; systems move calls through
their life each tick. This module re-exports the public API.
"""

import inspect
import typing
from typing import TYPE_CHECKING, Any

from agentos._board.board import (
    Board,
    BoardAct,
    BoardAuthor,
    BoardCall,
    BoardNode,
    BoardRendering,
    BoardTrigger,
)
from agentos._errors import (
    AgentOSError,
    CallCancelled,
    ProviderError,
    RuntimeClosedError,
    SessionBusyError,
    SessionConflictError,
    SessionEndedError,
    SessionInUseError,
    StoreError,
    ToolboxError,
    ToolDefinitionError,
    ToolsetError,
    UnknownCallError,
    UnknownSessionError,
    UsageError,
    WrongThreadError,
)
from agentos._gc import GcSettings, tune_gc
from agentos._host.children import child_session_id
from agentos._host.host import Host
from agentos._host.listing import SessionSummary
from agentos._kernel.clock import Clock, ManualClock, SystemClock
from agentos._kernel.context import ToolContext
from agentos._kernel.isolation import IsolatedCall, IsolatedRunner, LocalProcessRunner
from agentos._kernel.options import CallOptions
from agentos._kernel.process import ProcessResult, run_process
from agentos._kernel.runtime import DEFAULT_SESSION, Runtime
from agentos._kernel.snapshot import (
    CancelOutcome,
    CompleteOutcome,
    RuntimeStatistics,
    SessionSnapshot,
    SessionStatistics,
)
from agentos._kernel.tools import InvalidToolInput, Tool, ToolFailure, tool
from agentos._kernel.toolsets import ToolRegistry, Toolset
from agentos._model.messages import Block, Message, ToolResultBlock
from agentos._model.prices import ModelPrices
from agentos._model.provider import (
    ModelRequest,
    ModelResponse,
    PartialReply,
    Provider,
    ReplyListener,
    ScriptedProvider,
    StreamingProvider,
)
from agentos._model.test_model import TestModel
from agentos._runners.ray import RayRunner
from agentos._sessions.error_record import ErrorRecord
from agentos._sessions.scope import Caller, Scope, SessionLineage
from agentos._sessions.session import Session
from agentos._sessions.tokens import ContinuationTokens, TokenRecord
from agentos._sessions.tool_access import ToolAccess
from agentos._sessions.toolbox import CapabilityResult, ChildSessions, SystemToolbox
from agentos._store.opening import is_postgres_address, open_store
from agentos._store.protocol import (
    CancelRequest,
    Completion,
    MirroredCall,
    SessionStore,
    StoredSession,
    StoredToken,
    TurnCommit,
)
from agentos._store.sqlite.store import SqliteStore
from agentos._toolsets.agent import AgentTools, agent_tools
from agentos._toolsets.imports import ToolImportError
from agentos._toolsets.mcp.server import McpServer
from agentos._turns.agent_config import (
    AgentConfig,
    Decorate,
    Decorator,
    Disposition,
    ExecutionMode,
    SubAgent,
    ToolPolicy,
    YieldOnAnyProgress,
    YieldOnTimeout,
    YieldWhenAllDone,
)
from agentos._turns.capabilities import CAPABILITIES, MAX_WAIT_SECONDS
from agentos._turns.chat import ChatCall, ChatEntry
from agentos._turns.context_view import ContextView, TranscriptView, ViewInput
from agentos._turns.events import SessionStatus
from agentos._turns.history import HistoryCall, HistoryLookup, MessageHistory, NoHistory
from agentos._turns.mcp_config import McpServerConfig
from agentos._turns.transcript import PLACEHOLDER_KEY
from components import (
    CallError,
    CallEvent,
    CallEventKind,
    CallId,
    CallSnapshot,
    CallStatus,
    ConversationId,
    ErrorKind,
    Json,
    JsonObject,
    ProgressKind,
    SessionId,
    ToolCallProgress,
    TurnId,
)

__all__ = [
    "CAPABILITIES",
    "DEFAULT_SESSION",
    "MAX_WAIT_SECONDS",
    "PLACEHOLDER_KEY",
    "AgentConfig",
    "AgentOSError",
    "AgentTools",
    "AnthropicProvider",
    "Block",
    "Board",
    "BoardAct",
    "BoardAuthor",
    "BoardCall",
    "BoardNode",
    "BoardRendering",
    "BoardTrigger",
    "CallCancelled",
    "CallError",
    "CallEvent",
    "CallEventKind",
    "CallId",
    "CallOptions",
    "CallSnapshot",
    "CallStatus",
    "Caller",
    "CancelOutcome",
    "CancelRequest",
    "CapabilityResult",
    "ChatCall",
    "ChatEntry",
    "ChildSessions",
    "Clock",
    "CompleteOutcome",
    "Completion",
    "ContextView",
    "ContinuationTokens",
    "ConversationId",
    "Decorate",
    "Decorator",
    "Disposition",
    "ErrorKind",
    "ErrorRecord",
    "ExecutionMode",
    "GcSettings",
    "HistoryCall",
    "HistoryLookup",
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
    "Message",
    "MessageHistory",
    "MirroredCall",
    "ModelPrices",
    "ModelRequest",
    "ModelResponse",
    "NoHistory",
    "PartialReply",
    "PostgresStore",
    "ProcessResult",
    "ProgressKind",
    "Provider",
    "ProviderError",
    "RayRunner",
    "ReplyListener",
    "Runtime",
    "RuntimeClosedError",
    "RuntimeStatistics",
    "Scope",
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
    "SessionStore",
    "SessionSummary",
    "SqliteStore",
    "StoreError",
    "StoredSession",
    "StoredToken",
    "StreamingProvider",
    "SubAgent",
    "SystemClock",
    "SystemToolbox",
    "TestModel",
    "TokenRecord",
    "Tool",
    "ToolAccess",
    "ToolCallProgress",
    "ToolContext",
    "ToolDefinitionError",
    "ToolFailure",
    "ToolImportError",
    "ToolPolicy",
    "ToolRegistry",
    "ToolResultBlock",
    "ToolboxError",
    "Toolset",
    "ToolsetError",
    "TranscriptView",
    "TurnCommit",
    "TurnId",
    "UnknownCallError",
    "UnknownSessionError",
    "UsageError",
    "ViewInput",
    "WrongThreadError",
    "YieldOnAnyProgress",
    "YieldOnTimeout",
    "YieldWhenAllDone",
    "agent_tools",
    "child_session_id",
    "is_postgres_address",
    "open_store",
    "run_process",
    "tool",
    "tune_gc",
]

if TYPE_CHECKING:
    from agentos._model.anthropic_provider import AnthropicProvider
    from agentos._store.postgres.store import PostgresStore


def _claim(value: object) -> None:
    """Name ``agentos`` as the home of a public class or function defined in our packages.

    Tracebacks, reprs and docs then show ``agentos.Runtime`` rather than the private
    module it lives in today; pickling finds it there too.
    """
    if not (inspect.isclass(value) or inspect.isfunction(value)):
        return
    if value.__module__.partition(".")[0] not in ("agentos", "components"):
        return
    if inspect.isclass(value):
        # get_type_hints reads a class's string annotations in the namespace of its
        # ``__module__``: evaluate them where they were written, while it still is.
        # (One that cannot be evaluated stays a string; tests/test_public_surface.py says so.)
        own = inspect.get_annotations(value)
        if own and any(isinstance(hint, str) for hint in own.values()):
            try:
                hints = typing.get_type_hints(value, include_extras=True)
            except (NameError, TypeError):
                pass
            else:
                value.__annotations__ = {name: hints[name] for name in own}
    value.__module__ = "agentos"


_LAZY = ("AnthropicProvider", "PostgresStore")
"""Imported on first use: the SDK takes a second to import; asyncpg is an optional extra."""

for _name in __all__:
    if _name not in _LAZY:
        _claim(globals()[_name])
del _name


def __getattr__(name: str) -> Any:
    """The ``_LAZY`` names, imported on first use."""
    if name == "AnthropicProvider":
        from agentos._model.anthropic_provider import AnthropicProvider

        _claim(AnthropicProvider)
        return AnthropicProvider
    if name == "PostgresStore":
        try:
            from agentos._store.postgres.store import PostgresStore
        except ImportError as error:
            raise ImportError(
                f"PostgresStore needs asyncpg ({error}): pip install 'agentos[postgres]'"
            ) from None
        _claim(PostgresStore)
        return PostgresStore
    raise AttributeError(f"module 'agentos' has no attribute {name!r}")
