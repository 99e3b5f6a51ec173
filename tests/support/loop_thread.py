"""An event loop in a background thread, for hypothesis state machines (whose rules are sync).

Each example hosts its runtime (or host) in an async context on that loop; every
rule hands an async action to the loop, which acts and then ``settle``\\s the
runtime, so the machine only ever looks at a quiescent runtime. Nothing touches
the runtime from any other thread.
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from contextlib import AbstractContextManager
from typing import TypeVar

import anyio
from anyio.abc import TaskStatus
from anyio.from_thread import BlockingPortal
from anyio.from_thread import start_blocking_portal

from agentos import Runtime
from agentos.testing import Puppet
from agentos.testing import settle

T = TypeVar("T")


class HostedTaskDied(AssertionError):
    """What the loop hosts died under the machine (the cause is chained)."""


class LoopThread:
    """Holds ``host()`` open on a loop in a background thread until ``close``."""

    def __init__(self, host: Callable[[], AbstractAsyncContextManager[object]]) -> None:
        self._stop: anyio.Event | None = None
        self._portal_cm: AbstractContextManager[BlockingPortal] = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        try:
            self._task, _ = self._portal.start_task(self._hold, host)
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise

    async def _hold(
        self,
        host: Callable[[], AbstractAsyncContextManager[object]],
        *,
        task_status: TaskStatus[None],
    ) -> None:
        async with host():
            self._stop = anyio.Event()
            task_status.started()
            await self._stop.wait()

    @property
    def died(self) -> bool:
        return self._task.done()

    def run(self, action: Callable[[], Awaitable[T]], runtime: Runtime, seconds: float) -> T:
        """Run ``action`` then ``settle`` on the loop; a dead host is reported as such.

        ``seconds`` are real: a runtime that never goes quiet (a busy driver, a
        deadline it keeps waking for but never handles) fails the step instead
        of hanging.
        """

        async def act_and_settle() -> T:
            with anyio.fail_after(seconds):
                value = await action()
                await settle(runtime)
            return value

        try:
            value = self._portal.call(act_and_settle)
        except BaseException:
            self._raise_if_died()
            raise
        self._raise_if_died()
        return value

    def call(self, read: Callable[[], T]) -> T:
        """Run a synchronous ``read`` on the loop's thread (where the runtime may be read)."""
        return self._portal.call(read)

    def close(self) -> None:
        """Leave the hosted context and stop the loop."""
        try:
            if not self._task.done() and self._stop is not None:
                self._portal.call(self._stop.set)
                self._task.result(timeout=30)
        finally:
            self._portal_cm.__exit__(None, None, None)

    def _raise_if_died(self) -> None:
        if self._task.done():
            raise HostedTaskDied("the runtime died under the machine") from self._task.exception()


def close_streams(*puppets: Puppet) -> None:
    """Close what the puppets left open (work that never reached its ``finally``).

    An unclosed memory stream warns when collected, and warnings are errors here.
    """
    for puppet in puppets:
        for call in puppet.calls.values():
            for stream in (call.send, call.receive):
                if stream is not None:
                    stream.close()
