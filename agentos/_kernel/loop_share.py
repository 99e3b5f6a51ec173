"""A pass of the event loop, shared: session steps past its budget wait for the next pass.

asyncio runs every callback that is ready when a pass starts before it looks at
its timers and sockets again. A thousand busy sessions would run all their steps
in one pass and stall everything else on the loop (a page's requests, other
tasks, the runtime's own timers) for as long as they take together. A step that
finds the pass's budget spent waits for the next pass, behind what is due then.
The first step of a pass always runs, so a loop that is not busy waits for
nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections import deque

PASS_BUDGET_SECONDS = 0.02
"""How long the session steps of one pass may take before the rest wait for the next."""


class LoopShare:
    """The session steps' share of one event loop's pass, and the steps waiting for theirs.

    Waiting steps are served in the order they came, a batch a pass; the batch grows
    while passes stay within the budget and shrinks when they run over (everything a
    pass runs counts: a step's later parts, calls ending, the collector). A step that
    comes while some wait goes behind them.
    """

    __slots__ = ("_batch", "_ends", "_passed", "_releasing", "_waiting")

    def __init__(self) -> None:
        self._ends = 0.0
        """When this pass's budget is spent; 0 while no step has run in this pass."""
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._releasing = False
        """A ``_release`` is due at the next pass."""
        self._batch = 8.0
        """How many waiting steps the next pass wakes."""
        self._passed = 0.0
        """When the last ``_release`` ran."""

    def spent(self) -> bool:
        """Whether a step must wait for a later pass (``next_pass``)."""
        return bool(self._waiting) or self._over()

    async def next_pass(self) -> None:
        """Wait, behind the steps already waiting, for a pass with budget left."""
        loop = asyncio.get_running_loop()
        turn = loop.create_future()
        self._waiting.append(turn)
        if not self._releasing:
            self._releasing = True
            self._passed = time.perf_counter()
            loop.call_soon(self._release)
        try:
            await turn
        except BaseException:
            if not turn.done() or turn.cancelled():
                with contextlib.suppress(ValueError):
                    self._waiting.remove(turn)
            raise

    def _release(self) -> None:
        """Once a pass: wake the next batch, sized by how long the last pass took."""
        now = time.perf_counter()
        took, self._passed = now - self._passed, now
        scale = PASS_BUDGET_SECONDS / took if took > 0 else 2.0
        self._batch = min(max(self._batch * min(max(scale, 0.5), 2.0), 1.0), 10_000.0)
        waiting = self._waiting
        count = int(self._batch)
        while waiting and count:
            turn = waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                count -= 1
        if waiting:
            asyncio.get_running_loop().call_soon(self._release)  # behind the batch just woken
        else:
            self._releasing = False

    def _over(self) -> bool:
        """Whether this pass's budget is spent; the first step of a pass opens it."""
        now = time.perf_counter()
        if not self._ends:
            self._ends = now + PASS_BUDGET_SECONDS
            asyncio.get_running_loop().call_soon(self._close)  # first in line at the next pass
            return False
        return now >= self._ends

    def _close(self) -> None:
        self._ends = 0.0


_shares: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopShare] = (
    weakref.WeakKeyDictionary()
)
"""One share a loop (a share keeps no reference to its loop: an entry goes with it)."""


def loop_share() -> LoopShare:
    """The running loop's share (one per loop: every host on it takes turns)."""
    loop = asyncio.get_running_loop()
    share = _shares.get(loop)
    if share is None:
        _shares[loop] = share = LoopShare()
    return share
