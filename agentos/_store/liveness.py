"""Whether a lease still holds, for any backend: not expired, its process not known dead."""

from __future__ import annotations

import os
import socket


def lease_is_live(expires_at: float, hostname: str, pid: int, now: float) -> bool:
    """Not expired, and its process not known to be dead.

    A process is known dead only on this machine (same host name): there,
    a pid that no longer exists frees its leases at once.
    """
    if expires_at <= now:
        return False
    if hostname != socket.gethostname() or pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, as someone else's
        return True
    return True
