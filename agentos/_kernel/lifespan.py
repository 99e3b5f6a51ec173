"""A runtime's life: what entering opens, and the order leaving closes it in."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from agentos._errors import ToolsetError
from agentos._errors import UsageError
from agentos._kernel.control import CallControl
from agentos._kernel.parts import RuntimeCore
from agentos._kernel.toolsets import Toolsets


@asynccontextmanager
async def lifespan(
    core: RuntimeCore, toolsets: Toolsets, control: CallControl, grace: float
) -> AsyncIterator[None]:
    """Open the world, the work group, the driver and the toolsets; on the way out, cancel
    the calls, end (or abandon, past ``grace`` seconds) the work, stop the driver."""
    if core.opened:
        raise UsageError("a Runtime can be entered only once")
    core.opened = True
    kernel, work = core.kernel, core.work
    kernel.open()
    unstarted: ToolsetError | None = None
    try:
        async with anyio.create_task_group() as group:
            await work.open()
            forget_clock = core.clock.on_advance(kernel.wake_on_clock)
            group.start_soon(kernel.drive)
            try:
                try:
                    await toolsets.start(group)
                except ToolsetError as error:
                    unstarted = error  # raised once all is closed, not in a group
                else:
                    yield
            finally:
                try:
                    control.cancel_everything("runtime closed")
                finally:
                    kernel.closed = True
                    forget_clock()
                    await work.close(grace)
                    group.cancel_scope.cancel()
    finally:
        core.listeners.close()
        kernel.close()
    if unstarted is not None:
        raise unstarted
