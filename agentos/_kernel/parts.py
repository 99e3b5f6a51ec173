"""What every part of ``Runtime``'s API stands on: its parts, and the guards each method uses.

``Runtime`` is assembled from a few classes, one per kind of method (reading
calls, session entities, calls from other threads); they share this base, so
each reads the same world and refuses misuse the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import esper

from agentos._errors import RuntimeClosedError, UnknownCallError, WrongThreadError
from agentos._kernel.checks import check_text
from agentos._kernel.clock import Clock
from agentos._kernel.kernel import Kernel
from agentos._kernel.listeners import Listeners
from agentos._kernel.work import Work
from components import CallId, Entity, InboxMessage, TickContext, ToolCallConfig, ToolCallState


class RuntimeParts:
    """The kernel, work and listeners of a runtime (set by ``Runtime.__init__``)."""

    _ctx: TickContext
    _kernel: Kernel
    _work: Work
    _listeners: Listeners
    _clock: Clock
    _post: Callable[[InboxMessage], None]
    _opened: bool
    _max_result_chars: int | None

    def _flush(self) -> None:
        """Apply what is queued so a read sees every earlier submit and report."""
        self._check_loop_thread("status_threadsafe")
        self._kernel.flush()

    def _check_loop_thread(self, instead: str) -> None:
        self._check_open()
        self.check_thread(instead)

    def check_thread(self, instead: str) -> None:
        """``WrongThreadError`` naming ``instead`` unless called on the event loop's thread;
        for what is built on a runtime (a ``Session``) to guard its methods the same way."""
        if threading.get_ident() != self._kernel.loop_thread:
            raise WrongThreadError(
                f"call the runtime from its event loop's thread; from other threads use {instead}()"
            )

    def _check_open(self) -> None:
        if not self._opened or self._kernel.closed:
            closed = self._kernel.closed
            state = "closed" if closed else "not started (use 'async with Runtime(...)')"
            raise RuntimeClosedError(f"the runtime is {state}")

    def _resolve(self, call_id: str, session_id: str | None) -> Entity:
        """The entity of an internal call id (seen from ``session_id``, when given)."""
        check_text("call_id", call_id)
        entity = self._ctx.index.by_id.get(CallId(call_id))
        if entity is None:
            raise UnknownCallError(call_id)
        if session_id is not None and self._config(entity).session_id != session_id:
            raise UnknownCallError(call_id)
        return entity

    def _config(self, entity: Entity) -> ToolCallConfig:
        return esper.component_for_entity(entity, ToolCallConfig)

    def _state(self, entity: Entity) -> ToolCallState:
        return esper.component_for_entity(entity, ToolCallState)
