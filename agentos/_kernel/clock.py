"""Where the runtime reads time: the system's clocks, or a manual one for tests."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Protocol

import anyio


class Clock(Protocol):
    """``monotonic`` drives deadlines; ``wall`` (epoch seconds) stamps events."""

    def monotonic(self) -> float: ...

    def wall(self) -> float: ...

    def sleep_budget(self, deadline: float) -> float | None:
        """Real seconds the kernel may sleep before ``deadline``; None: until woken."""
        ...

    def on_advance(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` whenever time jumps; returns a function that unregisters."""
        ...


class SystemClock:
    """The process's monotonic clock and the wall clock."""

    def monotonic(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        return time.time()

    def sleep_budget(self, deadline: float) -> float | None:
        return max(0.0, deadline - time.monotonic())

    def on_advance(self, callback: Callable[[], None]) -> Callable[[], None]:
        return _nothing


class ManualClock:
    """A clock that moves only when told to, so timeouts are tested without sleeping."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self._now = start
        self._listeners: list[Callable[[], None]] = []

    def monotonic(self) -> float:
        return self._now

    def wall(self) -> float:
        return self._now

    def sleep_budget(self, deadline: float) -> float | None:
        return 0.0 if deadline <= self._now else None

    def on_advance(self, callback: Callable[[], None]) -> Callable[[], None]:
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback)

    def advance(self, seconds: float) -> None:
        """Move time forward and wake every runtime that reads this clock.

        Call it from the event loop's thread, like the runtime's own methods.
        """
        if seconds < 0:
            raise ValueError(f"a clock cannot go back: advance({seconds})")
        self._now += seconds
        for callback in list(self._listeners):
            callback()


def _nothing() -> None:
    return None


async def sleep(clock: Clock, seconds: float) -> None:
    """Sleep ``seconds`` of ``clock``'s time: real time, or until a manual clock is advanced."""
    deadline = clock.monotonic() + seconds
    woken = anyio.Event()

    def wake() -> None:
        woken.set()

    forget = clock.on_advance(wake)
    try:
        while (budget := clock.sleep_budget(deadline)) != 0.0:
            with anyio.move_on_after(math.inf if budget is None else budget):
                await woken.wait()
            woken = anyio.Event()
    finally:
        forget()
