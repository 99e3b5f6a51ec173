"""What a session store is made of, for code that writes a store or reads one directly.

``SqliteStore``, ``PostgresStore`` and ``open_store`` (in ``agentos``) are what a program
opens. Here: the ``SessionStore`` protocol a store implements, and the records it takes
and gives (``StoredSession``, ``TurnCommit``, ``StoredToken``, ``TokenRecord``, the live
call mirror's ``MirroredCall`` and ``CancelRequest``, a listing's ``SessionSummary``),
``is_postgres_address``, which tells a PostgreSQL address from a file path, and
``session_title``, which makes what a person typed the title ``set_title`` keeps.
"""

from agentos._host.listing import SessionSummary
from agentos._public import claim_all
from agentos._sessions.tokens import TokenRecord
from agentos._store.opening import is_postgres_address
from agentos._store.protocol import (
    CancelRequest,
    MirroredCall,
    SessionStore,
    StoredSession,
    StoredToken,
    TurnCommit,
)
from agentos._turns.title import session_title

__all__ = [
    "CancelRequest",
    "MirroredCall",
    "SessionStore",
    "SessionSummary",
    "StoredSession",
    "StoredToken",
    "TokenRecord",
    "TurnCommit",
    "is_postgres_address",
    "session_title",
]

claim_all(globals(), __all__, __name__)
