"""How long a stalled host can hold others back: the server ends a transaction of ours left idle.

A host paused (SIGSTOP, a VM pause) or cut off with a transaction open keeps
its row locks until the server ends that transaction; with these settings it
does so after ``IDLE_IN_TRANSACTION`` seconds (below any lease expiry), and
notices a vanished client by TCP keepalives rather than after hours. Sent at
connection time, or (behind a transaction-mode pooler, which refuses unknown
startup settings) with ``SET LOCAL`` at the start of each transaction.
"""

from __future__ import annotations

IDLE_IN_TRANSACTION = 1.0
"""Seconds a transaction of ours may wait on its client before the server ends it. A host's
own transactions never pause between statements, so only a stalled host meets it (or one
whose loop stalled that long: its transaction is then tried again on a new connection)."""
LOCK_WAIT = 0.5
"""Seconds taking a lease waits on another transaction's lock before the session is "in use"."""
STEAL_LOCK_WAIT = 5 * IDLE_IN_TRANSACTION
"""A steal waits longer: a stalled holder's transaction has ended by then."""

SERVER_SETTINGS = {
    "idle_in_transaction_session_timeout": str(round(IDLE_IN_TRANSACTION * 1000)),
    "tcp_keepalives_idle": "10",
    "tcp_keepalives_interval": "5",
    "tcp_keepalives_count": "3",
}
"""Settings of every connection of the pool, when it reaches the server directly."""
IN_EACH_TRANSACTION = (
    f"SET LOCAL idle_in_transaction_session_timeout = {round(IDLE_IN_TRANSACTION * 1000)}"
)
"""The same bound, for one transaction: what a transaction-mode pooler lets through."""


def lock_wait(steal: bool) -> str:
    """The statement bounding a take's wait on row locks, in its transaction."""
    return f"SET LOCAL lock_timeout = {round((STEAL_LOCK_WAIT if steal else LOCK_WAIT) * 1000)}"
