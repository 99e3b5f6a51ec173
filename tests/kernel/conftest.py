"""What the kernel tests share besides the fixtures every room has: a sync tool that holds
its worker thread until the test lets it go (``held_in_a_thread``)."""

from __future__ import annotations

import threading
from typing import Any

from agentos import Tool
from agentos import tool
from tests.support.arguments import Empty


def held_in_a_thread(name: str, result: str) -> tuple[Tool[Any], threading.Event]:
    """A sync tool ``name`` whose calls each hold a worker thread until the event is set (10 s
    at the most: a bound, never a measure), then return ``result``; and that event."""
    release = threading.Event()

    def held(args: Empty) -> str:
        release.wait(10)
        return result

    return tool(held, name=name), release
