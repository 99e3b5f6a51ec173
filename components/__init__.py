"""Data only: component types, ids, the status vocabulary and shared resources.

This package imports nothing of ours; ``systems`` and ``agentos`` build on it.
"""

from components._call_events import CallEvent
from components._call_events import CallEventKind
from components._call_events import OverdueNews
from components._finished import FinishedCall
from components._finished import FinishedCalls
from components._finished import finished_call
from components._finished import finished_deferred
from components._finished import finished_id
from components._finished import finished_provider_id
from components._finished import finished_session
from components._finished import finished_snapshot
from components._finished import finished_status
from components._finished import finished_why
from components._frozen import quick_init
from components._ids import CallId
from components._ids import ConversationId
from components._ids import Entity
from components._ids import SessionId
from components._ids import TurnId
from components._ids import new_call_id
from components._ids import same_conversation
from components._json import Json
from components._json import JsonObject
from components._messages import CancelCall
from components._messages import CancelReply
from components._messages import CloseSession
from components._messages import CompleteCall
from components._messages import CompleteReply
from components._messages import InboxMessage
from components._messages import OpenSession
from components._messages import ProgressBatch
from components._messages import ProgressNote
from components._messages import ReportFailure
from components._messages import ReportProgress
from components._messages import ReportResult
from components._messages import SetSessionCap
from components._messages import StatusQuery
from components._messages import SubmitCall
from components._messages import UpdateSession
from components._packed import Packed
from components._packed import Sealed
from components._packed import opened
from components._packed import pack
from components._packed import seal
from components._packed import unpack
from components._question import Answer
from components._question import AnswerAction
from components._question import Question
from components._resources import CallIndex
from components._resources import DeadlineKind
from components._resources import Deadlines
from components._resources import Effects
from components._resources import Limits
from components._resources import SchedulerQueues
from components._resources import SessionIndex
from components._resources import TickContext
from components._resources import TickStats
from components._resources import Waiter
from components._resources import Waiters
from components._session import SessionConfig
from components._session import SessionState
from components._snapshot import CallSnapshot
from components._snapshot import snapshot_of
from components._status import FINAL_STATUSES
from components._status import STATUS_TEXT
from components._status import STORED_STATUSES
from components._status import TRANSITIONS
from components._status import CallStatus
from components._status import SessionStatus
from components._status import can_transition
from components._tool_call import NO_TIMEOUTS
from components._tool_call import PROGRESS_KEPT
from components._tool_call import PROGRESS_PER_TICK
from components._tool_call import CallError
from components._tool_call import ErrorKind
from components._tool_call import ProgressKind
from components._tool_call import ProgressLog
from components._tool_call import TimeoutSettings
from components._tool_call import ToolCallConfig
from components._tool_call import ToolCallProgress
from components._tool_call import ToolCallState

__all__ = [
    "FINAL_STATUSES",
    "NO_TIMEOUTS",
    "PROGRESS_KEPT",
    "PROGRESS_PER_TICK",
    "STATUS_TEXT",
    "STORED_STATUSES",
    "TRANSITIONS",
    "Answer",
    "AnswerAction",
    "CallError",
    "CallEvent",
    "CallEventKind",
    "CallId",
    "CallIndex",
    "CallSnapshot",
    "CallStatus",
    "CancelCall",
    "CancelReply",
    "CloseSession",
    "CompleteCall",
    "CompleteReply",
    "ConversationId",
    "DeadlineKind",
    "Deadlines",
    "Effects",
    "Entity",
    "ErrorKind",
    "FinishedCall",
    "FinishedCalls",
    "InboxMessage",
    "Json",
    "JsonObject",
    "Limits",
    "OpenSession",
    "OverdueNews",
    "Packed",
    "ProgressBatch",
    "ProgressKind",
    "ProgressLog",
    "ProgressNote",
    "Question",
    "ReportFailure",
    "ReportProgress",
    "ReportResult",
    "SchedulerQueues",
    "Sealed",
    "SessionConfig",
    "SessionId",
    "SessionIndex",
    "SessionState",
    "SessionStatus",
    "SetSessionCap",
    "StatusQuery",
    "SubmitCall",
    "TickContext",
    "TickStats",
    "TimeoutSettings",
    "ToolCallConfig",
    "ToolCallProgress",
    "ToolCallState",
    "TurnId",
    "UpdateSession",
    "Waiter",
    "Waiters",
    "can_transition",
    "finished_call",
    "finished_deferred",
    "finished_id",
    "finished_provider_id",
    "finished_session",
    "finished_snapshot",
    "finished_status",
    "finished_why",
    "new_call_id",
    "opened",
    "pack",
    "quick_init",
    "same_conversation",
    "seal",
    "snapshot_of",
    "unpack",
]
