"""A tool that tells which process ran it (``tests/ui/cli/test_ray.py``)."""

from __future__ import annotations

import os

from pydantic import BaseModel

from agentos import tool


class Nothing(BaseModel):
    pass


@tool
def whoami(args: Nothing) -> dict[str, int]:
    """The process the call ran in, and the process that started that one."""
    return {"pid": os.getpid(), "parent": os.getppid()}
