"""What every part of ``Runtime`` stands on: the kernel, work and listeners, and the guards.

``Runtime`` is a facade over a few parts, one per kind of method (reading calls,
session entities, calls from other threads); each is built with this one core,
so all read the same world and refuse misuse the same way.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import esper

from agentos._errors import RuntimeClosedError
from agentos._errors import UnknownCallError
from agentos._errors import WrongThreadError
from agentos._kernel.checks import check_text
from agentos._kernel.clock import Clock
from agentos._kernel.kernel import Kernel
from agentos._kernel.listeners import Listeners
from agentos._kernel.work import Work
from components import CallId
from components import CallSnapshot
from components import Entity
from components import InboxMessage
from components import SessionId
from components import TickContext
from components import ToolCallConfig
from components import ToolCallState
from components import finished_session
from components import finished_snapshot
from components import snapshot_of


@dataclass(slots=True)
class RuntimeCore:
    """The kernel, work and listeners of one runtime, and the guards its methods use."""

    ctx: TickContext
    kernel: Kernel
    work: Work
    listeners: Listeners
    clock: Clock
    opened: bool = False
    """Entered once (``async with``); a closed runtime stays closed."""

    def post(self, message: InboxMessage) -> None:
        """Queue ``message`` for the next tick (from any thread)."""
        self.kernel.post(message)

    def flush(self) -> None:
        """Apply what is queued so a read sees every earlier submit and report."""
        self.check_loop_thread("status_threadsafe")
        self.kernel.flush()

    def flush_calls(self) -> None:
        """``flush`` for a read of calls only: sessions' statuses wait for the next tick."""
        self.check_loop_thread("status_threadsafe")
        self.kernel.flush(statuses=False)

    def check_loop_thread(self, instead: str) -> None:
        self.check_open()
        self.check_thread(instead)

    def check_thread(self, instead: str) -> None:
        """``WrongThreadError`` naming ``instead`` unless on the event loop's thread."""
        if threading.get_ident() != self.kernel.loop_thread:
            raise WrongThreadError(
                f"call the runtime from its event loop's thread; from other threads use {instead}()"
            )

    def check_open(self) -> None:
        if not self.opened or self.kernel.closed:
            closed = self.kernel.closed
            state = "closed" if closed else "not started (use 'async with Runtime(...)')"
            raise RuntimeClosedError(f"the runtime is {state}")

    def resolve(self, call_id: str, session_id: str | None) -> Entity:
        """The entity of an internal call id (seen from ``session_id``, when given)."""
        check_text("call_id", call_id)
        entity = self.ctx.index.by_id.get(CallId(call_id))
        if entity is None:
            raise UnknownCallError(call_id)
        if session_id is not None and self.session_of(entity) != session_id:
            raise UnknownCallError(call_id)
        return entity

    def snapshot(self, entity: Entity) -> CallSnapshot:
        """The call now: from the world while it runs, from its record once it has ended."""
        record = self.ctx.finished.get(entity)
        if record is not None:
            return finished_snapshot(record)
        return snapshot_of(
            esper.component_for_entity(entity, ToolCallConfig),
            esper.component_for_entity(entity, ToolCallState),
        )

    def session_of(self, entity: Entity) -> SessionId:
        record = self.ctx.finished.get(entity)
        if record is not None:
            return finished_session(record)
        return esper.component_for_entity(entity, ToolCallConfig).session_id

    def is_final(self, entity: Entity) -> bool:
        """Whether the call has ended (a call may end and stay in the world within a tick)."""
        if entity in self.ctx.finished:
            return True
        return esper.component_for_entity(entity, ToolCallState).status.is_final
