"""The kernel: one esper world, its ticks, and the driver that runs them.

Code that is not a tick (API calls, tool tasks, worker threads) only posts to
the inbox and wakes the driver. A tick applies the inbox and runs the systems
in phase order; the kernel then performs the effects the tick decided (start
or stop work, wake waiters, answer queries, deliver events). Ticks never
await. The driver sleeps until woken or until the nearest deadline passes. A
call whose session listens runs the tick that reports its end in its own task
and may hand off to what the session does next there.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import uuid
from collections import deque
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import esper

from agentos._kernel.clock import Clock
from agentos._kernel.listeners import Listeners
from agentos._kernel.work import Work
from agentos._kernel.work import cancel_requested
from agentos._log import agentos_logger
from components import Effects
from components import Entity
from components import InboxMessage
from components import SessionId
from components import TickContext
from components import UpdateSession
from systems import PHASES


class Kernel:
    """The world, the inbox's consumer and the driver task of one runtime."""

    def __init__(self, ctx: TickContext, clock: Clock, listeners: Listeners) -> None:
        self.ctx = ctx
        self.clock = clock
        self.listeners = listeners
        self.work: Work
        """Set by the runtime right after both are built."""
        self.world = f"agentos-{uuid.uuid4()}"
        self.looks: dict[Entity, dict[SessionId, int]] = {}
        """The ``version`` each observing session last saw of a call; dropped with the call."""
        self.closed = False
        self.loop_thread = 0
        self.internal_errors = 0
        """Hand-offs that raised."""
        self.hand_offs_here = 0
        self.hand_offs_spawned = 0
        self._hand_offs: list[tuple[SessionId, Callable[[], Awaitable[None]]]] | None = None
        """Set while a finishing call's own task runs the tick that reports it."""
        self._delivering = SessionId("default")
        self._processing = False
        self._performing = False
        self._later: deque[Effects] = deque()
        """Effects of ticks run by a listener while others are performed: performed next."""
        self._spare: list[Effects] = []
        self._wake_event = asyncio.Event()
        self._wake_requested = False
        self.batching: asyncio.Task[Any] | None = None
        """The task whose posts wake nobody: its batch applies them as it ends."""
        self._asleep = False
        self._armed: float | None = None
        """The deadline the sleeping driver wakes at by itself (None: only when woken)."""
        self._alarm: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop

    def open(self) -> None:
        """Make the world and its systems; called on the event loop's thread."""
        esper.switch_world(self.world)
        for priority, phase in enumerate(reversed(PHASES)):
            esper.add_processor(phase(), priority=priority)
        self.token = anyio.lowlevel.current_token()
        self.loop_thread = threading.get_ident()
        ctx = self.ctx
        ctx.log, ctx.log_info, ctx.log_debug = agentos_logger()

    def close(self) -> None:
        """Delete the world."""
        if esper.current_world == self.world:
            esper.switch_world("default")
        esper.delete_world(self.world)

    # ------------------------------------------------------------------- waking

    def post(self, message: InboxMessage) -> None:
        """Append to the inbox and wake the driver; callable from any thread."""
        self.ctx.inbox.append(message)
        if self._wake_requested:
            return
        if threading.get_ident() == self.loop_thread:
            if self.batching is None or asyncio.current_task() is not self.batching:
                self.wake()
            return
        self._wake_requested = True
        with contextlib.suppress(RuntimeError):  # the event loop is gone: the runtime closed
            anyio.from_thread.run_sync(self._wake_now, token=self.token)

    def post_unhurried(self, message: InboxMessage) -> None:
        """Append to the inbox for the next tick, whoever runs it, without waking the
        driver for it (a session opened: nothing acts on it before a read or a submit,
        which come after it); from another thread, ``post``."""
        if threading.get_ident() == self.loop_thread:
            self.ctx.inbox.append(message)
        else:
            self.post(message)

    def post_quietly(self, update: UpdateSession) -> None:
        """Keep a session's status for the next tick without waking the driver (no tick
        acts on it; reads flush it first); a later status replaces an unapplied one."""
        if threading.get_ident() == self.loop_thread:
            self.ctx.quiet[update.session_id] = update
        else:
            self.post(update)

    def wake(self) -> None:
        """Make the driver tick soon (on the loop's thread)."""
        if not self._wake_requested:
            self._wake_requested = True
            self._wake_event.set()

    def _wake_now(self) -> None:
        """Set the driver's event for a wake-up another thread already requested."""
        self._wake_event.set()

    def wake_on_clock(self) -> None:
        """A manual clock moved: wake the driver if the deadline it sleeps until passed."""
        if self._asleep and self._armed is not None and self.clock.monotonic() >= self._armed:
            self.wake()

    def _wake_if_due(self) -> None:
        """After a tick the driver did not run: wake it if it must tick sooner than it would."""
        ctx = self.ctx
        if ctx.inbox or (ctx.queues.ring and ctx.queues.running_total < ctx.limits.max_running):
            self.wake()
            return
        deadline = self._next_deadline()
        if deadline is not None and (self._armed is None or deadline < self._armed):
            self._arm(deadline)

    def _arm(self, deadline: float | None) -> None:
        """Set the sleeping driver's alarm for ``deadline``: a new deadline moves the alarm
        instead of costing the driver a tick to find it."""
        if self._alarm is not None:
            self._alarm.cancel()
            self._alarm = None
        self._armed = deadline
        budget = None if deadline is None else self.clock.sleep_budget(deadline)
        if budget is None:
            return
        if budget <= 0:
            self.wake()
        else:
            self._alarm = self._loop.call_later(budget, self.wake)

    def _next_deadline(self) -> float | None:
        ctx = self.ctx
        due = (ctx.deadlines.next_due(), ctx.waiters.next_due(), ctx.finished.next_due())
        return min((when for when in due if when is not None), default=None)

    async def drive(self) -> None:
        """The driver task: tick, then sleep until woken or the nearest deadline."""
        ctx = self.ctx
        limits = ctx.limits
        self._loop = asyncio.get_running_loop()
        woken = self._wake_event
        due = True
        while True:
            woken.clear()
            self._wake_requested = False
            if due or ctx.inbox or ctx.queues.ring:  # else another task's tick took the news
                self.tick()
            if ctx.inbox or (ctx.queues.ring and ctx.queues.running_total < limits.max_running):
                await anyio.lowlevel.checkpoint()
                continue
            deadline = self._next_deadline()
            budget = None if deadline is None else self.clock.sleep_budget(deadline)
            due = budget is not None and budget <= 0
            if due:
                await anyio.lowlevel.checkpoint()
                continue
            self._asleep = True
            self._arm(deadline)  # a timer, not a cancel scope: no scope a sleep
            try:
                await woken.wait()
            finally:
                self._asleep = False
                armed = self._armed
                self._arm(None)
            due = armed is not None and self.clock.sleep_budget(armed) == 0

    # ------------------------------------------------------------------ ticking

    def tick(self) -> None:
        """Apply up to ``messages_per_tick`` inbox messages, run the phases, perform the effects.

        A tick run from inside the effects (a listener cancels a call) performs
        its own effects after the ones in progress, so events keep their order.
        """
        if self._processing:
            return
        self._processing = True
        started = time.perf_counter()
        ctx = self.ctx
        try:
            if esper.current_world != self.world:
                esper.switch_world(self.world)
            inbox = ctx.inbox
            batch = ctx.batch
            later = self._quiet_first(batch) if ctx.quiet else ()
            for _ in range(min(len(inbox), ctx.limits.messages_per_tick)):
                batch.append(inbox.popleft())
            for update in later:  # sessions the inbox may open (else dropped: closed)
                if inbox:
                    ctx.quiet[update.session_id] = update
                else:
                    batch.append(update)
            ctx.now = self.clock.monotonic()
            ctx.wall = self.clock.wall()
            esper.process(ctx)
            effects = ctx.effects
            ctx.effects = self._spare.pop() if self._spare else Effects()
        finally:
            self._processing = False
        if self._performing:
            self._later.append(effects)
        else:
            self._performing = True
            try:
                self._perform(effects)
                while self._later:
                    self._perform(self._later.popleft())
            finally:
                self._performing = False
        cost = (time.perf_counter() - started) * 1e6
        stats = ctx.stats
        stats.last_tick_us = cost
        if cost > stats.max_tick_us:
            stats.max_tick_us = cost
        if self._asleep:
            self._wake_if_due()

    def _quiet_first(self, batch: list[InboxMessage]) -> list[UpdateSession]:
        """Put the statuses of open sessions first in ``batch``, so a close or a reopen in
        the inbox comes after them; return the others, for after the inbox."""
        ctx = self.ctx
        opened = ctx.sessions.by_id
        later = []
        for update in ctx.quiet.values():
            if update.session_id in opened:
                batch.append(update)
            else:
                later.append(update)
        ctx.quiet.clear()
        return later

    def drain(self) -> None:
        """Tick until the inbox is empty, so what the caller queued has been applied."""
        self.tick()
        while self.ctx.inbox and not self._processing:
            self.tick()

    @contextlib.contextmanager
    def batch(self, share_tick: bool = False) -> Iterator[None]:
        """Posts this task makes inside wake nobody; the block's end applies them in a tick
        here, or (``share_tick``) leaves them to a tick already coming, if one is. Another
        task's posts wake as usual; a nested block leaves it to the outer one."""
        task = asyncio.current_task()
        if self.batching is task:
            yield
            return
        holds = self.batching is None  # else another task's batch is open: ours wake as usual
        if holds:
            self.batching = task
        try:
            yield
        finally:
            if holds:
                self.batching = None
            if not self.closed:
                self._apply_batch(share_tick)

    def _apply_batch(self, share_tick: bool) -> None:
        if not (share_tick and self._tick_coming()):
            self.drain()
        elif self.ctx.inbox:
            self.wake()

    def _tick_coming(self) -> bool:
        """Whether a tick comes soon anyway: the driver's, woken, or a running call's report
        (a busy runtime then shares one tick among many sessions' submits)."""
        return not self._asleep or self._wake_requested or bool(self.ctx.queues.running_total)

    def apply_now(self) -> None:
        """Drain for a cancel or a completion: freed slots are filled by the driver."""
        self.ctx.admit = False
        try:
            self.drain()
        finally:
            self.ctx.admit = True

    def flush(self, *, statuses: bool = True) -> bool:
        """Apply what is queued so a read sees every earlier submit; True if anything was.
        A read of calls alone (``statuses=False``) leaves sessions' statuses for later."""
        if self.work.replies.release() or self.ctx.inbox or (statuses and self.ctx.quiet):
            self.drain()
            return True
        self.enter()
        return False

    def enter(self) -> None:
        """Make this runtime's world the one esper's functions read."""
        if esper.current_world != self.world:
            esper.switch_world(self.world)

    def _perform(self, effects: Effects) -> None:
        work = self.work
        for entity in effects.start:
            work.start(entity)
        for entity in effects.cancel:
            work.stop(entity)
        for entity in effects.forget:
            work.running.pop(entity, None)
            self.looks.pop(entity, None)
        for waiter in effects.release:
            waiter.notify()
        for query, found in effects.answer:
            query.answer(found)
        listeners = self.listeners
        for session, events in effects.deliver.items():
            self._delivering = session
            listeners.deliver(session, events)
        effects.clear()
        self._spare.append(effects)

    # ---------------------------------------------------------------- hand-offs

    async def report_here(self, session: SessionId, report: InboxMessage) -> None:
        """Tick in this task, so a listening session hears of the end with no hop, and
        run the hand-offs its callbacks asked for (the session's own first, here)."""
        self.ctx.inbox.append(report)
        self._hand_offs = []
        try:
            self.tick()
        finally:
            hand_offs, self._hand_offs = self._hand_offs, None
        here = next((fn for owner, fn in hand_offs if owner == session), None)
        for _, follow_up in hand_offs:
            if follow_up is not here:
                self.hand_offs_spawned += 1
                self.work.spawn(follow_up)
        if here is not None:
            self.hand_offs_here += 1
            await self.follow(here)

    def hand_off(self, follow_up: Callable[[], Awaitable[None]]) -> bool:
        """Queue ``follow_up`` for the task running this tick; False if no task awaits it."""
        if self._hand_offs is None:
            return False
        self._hand_offs.append((self._delivering, follow_up))
        return True

    async def follow(self, follow_up: Callable[[], Awaitable[None]]) -> None:
        """Run a hand-off; whatever it raises (but an exit) is logged and stays its own."""
        try:
            await follow_up()
        except anyio.get_cancelled_exc_class():
            if self.closed or cancel_requested():
                raise
            self.internal_errors += 1
            self.ctx.log.warning(
                "call_event_hand_off.failed", error="CancelledError nobody asked for"
            )
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # a listener's bug stays its own
            self.internal_errors += 1
            self.ctx.log.warning(
                "call_event_hand_off.failed", error=f"{type(error).__name__}: {error}"
            )
