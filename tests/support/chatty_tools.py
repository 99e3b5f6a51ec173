"""A tool that talks on every channel a worker has: stdout, stderr, a warning and Ray's
logger (``tests/ui/cli/test_ray.py``: none of it may reach the command's output)."""

from __future__ import annotations

import logging
import sys
import warnings

from pydantic import BaseModel

from agentos import tool


class Nothing(BaseModel):
    pass


@tool
def chatter(args: Nothing) -> str:
    """Say something everywhere, then answer."""
    print("chatter on stdout")
    print("chatter on stderr", file=sys.stderr)
    warnings.warn("chatter warns", UserWarning, stacklevel=1)
    logging.getLogger("ray").warning("chatter on Ray's logger")
    return "said"
