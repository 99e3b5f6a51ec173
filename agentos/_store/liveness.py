"""Whether a lease still holds, for any backend: not expired, its process not known dead."""

from __future__ import annotations

import contextlib
import functools
import os
import socket
from pathlib import Path


@functools.cache
def this_machine() -> str:
    """Where a pid means this process's pid: the host name, and on Linux the kernel's boot
    and the pid namespace too (two containers may share a name, or a kernel)."""
    parts = [socket.gethostname()]
    with contextlib.suppress(OSError):
        parts.append(Path("/proc/sys/kernel/random/boot_id").read_text().strip())
        parts.append(str(os.stat("/proc/self/ns/pid").st_ino))
    return " ".join(parts)


def lease_is_live(expires_at: float, machine: str, pid: int, now: float) -> bool:
    """Not expired, and its process not known to be dead.

    A process is known dead only where its pid can be looked up (``this_machine``):
    there, a pid that no longer exists frees its leases at once.
    """
    if expires_at <= now:
        return False
    if machine != this_machine() or pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, as someone else's
        return True
    return True
