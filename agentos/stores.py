"""What a session store is made of, for code that writes a store or reads one directly.

``SqliteStore``, ``PostgresStore`` and ``open_store`` (in ``agentos``) are what a program
opens. Here: the ``SessionStore`` protocol a store implements, and the records it takes
and gives (``StoredSession``, ``TurnCommit``, ``StoredToken``, ``TokenRecord``, the live
call mirror's ``MirroredCall`` and ``CancelRequest``, a listing's ``SessionSummary``),
``stored_chat`` and ``stored_title``, which draw a stored session's chat and title as
``Session.chat`` and ``Session.title`` do,
``is_postgres_address``, which tells a PostgreSQL address from a file path, and
``session_title``, which makes what a person typed the title ``set_title`` keeps, and
what a stored session or call shows (``ShownStatus``: ``shown_session_status``,
``stored_session_status``, ``shown_call_status``, ``is_expiry``,
``calls_running_when_stored``, ``DEFERRED``), decided once for every front end, and
what a person sees of one call (``CallView``: its status, its newest progress and newest
log line apart, its times and disposition), built once from a ``CallSnapshot`` or from
what the store says of it for every front end and program; the calls of sessions a
process does not run, read and cancelled through the store (``find_call``,
``session_calls`` with its ``SessionCalls``, ``call_tree``, ``stored_calls``,
``cancel_call`` with its ``CancelReport``, ``CallLookupError``); and ids as a
person reads and types them: ``short_id``, and ``named_by`` and ``resolve_session_id``,
which take the start of an id (``MIN_PREFIX`` characters or more) for the one id it
starts (``AmbiguousIdError`` when it starts several); and the tasks ``agentos a2a`` serves,
kept beside the sessions (``a2a_tasks_of`` a store: its ``A2aTaskRows`` of
``StoredA2aTask``).
"""

from agentos._errors import AmbiguousIdError
from agentos._host.call_lookup import CallLookupError
from agentos._host.call_lookup import CancelReport
from agentos._host.call_lookup import SessionCalls
from agentos._host.call_lookup import call_tree
from agentos._host.call_lookup import cancel_call
from agentos._host.call_lookup import find_call
from agentos._host.call_lookup import session_calls
from agentos._host.call_view import CallView
from agentos._host.ids import MIN_PREFIX
from agentos._host.ids import named_by
from agentos._host.ids import resolve_session_id
from agentos._host.ids import short_id
from agentos._host.listing import SessionSummary
from agentos._host.shown import DEFERRED
from agentos._host.shown import RAN_NOWHERE
from agentos._host.shown import ShownStatus
from agentos._host.shown import calls_running_when_stored
from agentos._host.shown import is_expiry
from agentos._host.shown import shown_call_status
from agentos._host.shown import shown_session_status
from agentos._host.shown import stored_session_status
from agentos._host.stored_calls import stored_calls
from agentos._host.stored_chat import stored_chat
from agentos._host.stored_chat import stored_title
from agentos._public import claim_all
from agentos._sessions.tokens import TokenRecord
from agentos._store.opening import is_postgres_address
from agentos._store.protocol import ASKING
from agentos._store.protocol import CancelRequest
from agentos._store.protocol import MirroredCall
from agentos._store.protocol import SessionStore
from agentos._store.protocol import StoredSession
from agentos._store.protocol import StoredToken
from agentos._store.protocol import TurnCommit
from agentos._store.sql.a2a_tasks import A2aTaskRows
from agentos._store.sql.a2a_tasks import StoredA2aTask
from agentos._store.tables import a2a_tasks_of
from agentos._turns.title import session_title

__all__ = [
    "ASKING",
    "DEFERRED",
    "MIN_PREFIX",
    "RAN_NOWHERE",
    "A2aTaskRows",
    "AmbiguousIdError",
    "CallLookupError",
    "CallView",
    "CancelReport",
    "CancelRequest",
    "MirroredCall",
    "SessionCalls",
    "SessionStore",
    "SessionSummary",
    "ShownStatus",
    "StoredA2aTask",
    "StoredSession",
    "StoredToken",
    "TokenRecord",
    "TurnCommit",
    "a2a_tasks_of",
    "call_tree",
    "calls_running_when_stored",
    "cancel_call",
    "find_call",
    "is_expiry",
    "is_postgres_address",
    "named_by",
    "resolve_session_id",
    "session_calls",
    "session_title",
    "short_id",
    "shown_call_status",
    "shown_session_status",
    "stored_calls",
    "stored_chat",
    "stored_session_status",
    "stored_title",
]

claim_all(globals(), __all__, __name__)
