"""The session turn machines, for code that drives or inspects them directly.

``TurnMachine`` (a transcript) and ``BoardMachine`` (the message board) are
pure: ``handle(event)`` changes the state and returns the actions an async
shell performs (``Session`` is that shell). Tests and alternative shells use
these names; an application talks to ``Session``. Both are a ``Machine``: ``handle``,
``view`` (``MachineView``: the machine now, drawn after each event that changes it, its
history read from it, a ``ViewSource``, only when asked), ``chat()``, ``awaits``, and
``to_store`` / ``from_store`` (``StoredTurn``, ``Waiting``); each holds a ``TurnStatus``.
A ``SendRequest`` is the whole draft (a transcript's history through its
``ContextView``, a board drawn); for a draft that ``may_move``, ``Sending`` asks for it
again as it goes out (``[]``: unchanged). What a machine refuses before changing
anything (``Refused``: ``ReplyRefused``, ``UnknownNode``) reaches whoever sent the event.

Around them, what a session is made of, for code that builds or inspects one: the
messages (``Message``, ``Block``, ``ToolResultBlock``), the context views
(``ContextView``, ``TranscriptView``, ``ViewInput``), what a history says of each call
(``MessageHistory``, ``HistoryCall``, ``HistoryLookup``, ``NoHistory``), and the system
toolbox the model calls (``SystemToolbox``, ``CAPABILITIES``, ``MAX_WAIT_SECONDS``,
``PLACEHOLDER_KEY``, ``Caller``, ``Scope``, ``CapabilityResult``, ``ToolAccess``).

Below them, the turn layer's words for front ends that draw or check what a machine
handles: ``EXPECTED_SECONDS`` (the argument a background call's expected duration
comes in), ``blocks_of`` (a message's content blocks), and ``fit_problems`` /
``validation_problems`` (what is wrong with an agent, in lines a person can act on), and
``Parameter`` (one of an agent's ``parameters``, which scope the cache decorator),
``McpOAuth`` (how an MCP server's ``oauth`` settings sign in), ``A2aAgentConfig`` (one
of an agent's ``a2a_agents``: a remote agent called as a tool) and
``ResultCache`` (where the cache decorator keeps results: a host's, shared by its sessions).

How each call runs is the machine's decision too: ``options_for`` (pure, from the agent,
the ``tool_use``, its ``Decorations`` and the shell's ``ToolFacts``) gives the
``PlannedCall`` that ``SubmitCalls`` carries.
"""

import agentos
from agentos._board.machine import BoardMachine
from agentos._model.messages import Block
from agentos._model.messages import Message
from agentos._model.messages import ToolResultBlock
from agentos._model.messages import blocks_of
from agentos._public import claim_all
from agentos._sessions.scope import Caller
from agentos._sessions.scope import Scope
from agentos._sessions.tool_access import ToolAccess
from agentos._sessions.toolbox import CapabilityResult
from agentos._sessions.toolbox import SystemToolbox
from agentos._turns.a2a_config import A2aAgentConfig
from agentos._turns.agent_config import Parameter
from agentos._turns.agent_problems import fit_problems
from agentos._turns.agent_problems import validation_problems
from agentos._turns.call_options import PlannedCall
from agentos._turns.call_options import ToolFacts
from agentos._turns.call_options import options_for
from agentos._turns.capabilities import CAPABILITIES
from agentos._turns.capabilities import MAX_WAIT_SECONDS
from agentos._turns.context_view import ContextView
from agentos._turns.context_view import TranscriptView
from agentos._turns.context_view import ViewInput
from agentos._turns.decorations import Decorations
from agentos._turns.events import ENDED
from agentos._turns.events import TURN_TRANSITIONS
from agentos._turns.events import WAITING
from agentos._turns.events import Abandoned
from agentos._turns.events import Action
from agentos._turns.events import ArmTimer
from agentos._turns.events import CallLost
from agentos._turns.events import CallOverdue
from agentos._turns.events import CallRunning
from agentos._turns.events import CallSettled
from agentos._turns.events import CallsSubmitted
from agentos._turns.events import CallStarted
from agentos._turns.events import CancelCalls
from agentos._turns.events import CancelsDone
from agentos._turns.events import Commit
from agentos._turns.events import Committed
from agentos._turns.events import Crashed
from agentos._turns.events import DisarmTimer
from agentos._turns.events import Event
from agentos._turns.events import ModelReplied
from agentos._turns.events import OutcomeAwaited
from agentos._turns.events import Refused
from agentos._turns.events import ReplyRefused
from agentos._turns.events import Resumed
from agentos._turns.events import Sending
from agentos._turns.events import SendRequest
from agentos._turns.events import SessionStatus
from agentos._turns.events import StopRequested
from agentos._turns.events import StoredTurn
from agentos._turns.events import SubmitCalls
from agentos._turns.events import TimerFired
from agentos._turns.events import UnknownNode
from agentos._turns.events import UserPosted
from agentos._turns.expected import EXPECTED_SECONDS
from agentos._turns.history import HistoryCall
from agentos._turns.history import HistoryLookup
from agentos._turns.history import MessageHistory
from agentos._turns.history import NoHistory
from agentos._turns.machine import Machine
from agentos._turns.machine import MachineView
from agentos._turns.machine import ViewSource
from agentos._turns.machine import Waiting
from agentos._turns.mcp_config import McpOAuth
from agentos._turns.result_cache import ResultCache
from agentos._turns.transcript import PLACEHOLDER_KEY
from agentos._turns.transcript_machine import TurnMachine
from agentos._turns.turn_status import TurnStatus
from components import OverdueNews

__all__ = [
    "CAPABILITIES",
    "ENDED",
    "EXPECTED_SECONDS",
    "MAX_WAIT_SECONDS",
    "PLACEHOLDER_KEY",
    "TURN_TRANSITIONS",
    "WAITING",
    "A2aAgentConfig",
    "Abandoned",
    "Action",
    "ArmTimer",
    "Block",
    "BoardMachine",
    "CallLost",
    "CallOverdue",
    "CallRunning",
    "CallSettled",
    "CallStarted",
    "Caller",
    "CallsSubmitted",
    "CancelCalls",
    "CancelsDone",
    "CapabilityResult",
    "Commit",
    "Committed",
    "ContextView",
    "Crashed",
    "Decorations",
    "DisarmTimer",
    "Event",
    "HistoryCall",
    "HistoryLookup",
    "Machine",
    "MachineView",
    "McpOAuth",
    "Message",
    "MessageHistory",
    "ModelReplied",
    "NoHistory",
    "OutcomeAwaited",
    "OverdueNews",
    "Parameter",
    "PlannedCall",
    "Refused",
    "ReplyRefused",
    "ResultCache",
    "Resumed",
    "Scope",
    "SendRequest",
    "Sending",
    "SessionStatus",
    "StopRequested",
    "StoredTurn",
    "SubmitCalls",
    "SystemToolbox",
    "TimerFired",
    "ToolAccess",
    "ToolFacts",
    "ToolResultBlock",
    "TranscriptView",
    "TurnMachine",
    "TurnStatus",
    "UnknownNode",
    "UserPosted",
    "ViewInput",
    "ViewSource",
    "Waiting",
    "blocks_of",
    "fit_problems",
    "options_for",
    "validation_problems",
]

claim_all(globals(), (name for name in __all__ if name not in agentos.__all__), __name__)
