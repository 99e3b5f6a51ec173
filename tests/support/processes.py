"""Watching processes that are not our children (killed process groups, orphans)."""

from __future__ import annotations

import time
from pathlib import Path


def dies_within(pid: int, seconds: float) -> bool:
    """Whether a process that is not our child ends (or turns zombie) within ``seconds``.

    SIGKILL lands asynchronously, and an orphan may stay a zombie where PID 1
    does not reap, so this reads /proc rather than waiting on the process.
    """
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):  # gone before, or while, it was read
        return False
    state = stat.rsplit(")", 1)[1].split()[0]
    return state not in {"Z", "X"}
