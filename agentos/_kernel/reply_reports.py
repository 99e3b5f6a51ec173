"""When a finished call's report is applied: in its own task at once, or with its siblings'.

A model reply that asks for ten calls ends ten tasks, most often in one loop pass. A
report applied in a tick of its own, in its call's task, lets a listening session move on
with no hop; but until the last of the ten ends, the session cannot move on, and nine
ticks would be spent on news it only keeps. So a report whose siblings (the calls of the
same session and model reply, ``turn_id``) still work is held here; the last one's task
puts the held ones in the inbox before its own and ticks once for them all. What is still
held at the next loop pass (a sibling runs on: a slow download) goes to the inbox then, in
a tick of its own, so it waits one pass at most. A report is held only while the runtime
is open and the inbox is empty: with other news queued (sessions' submits wait for a
coming tick) it ticks at once, as before, so the last report's tick carries little but its
own reply, and the step of its session, which waits for that tick, starts as soon.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from components import InboxMessage
from components import SessionId
from components import ToolCallConfig
from components import TurnId

if TYPE_CHECKING:
    from agentos._kernel.kernel import Kernel

Reply = tuple[SessionId, TurnId]
"""A session's model reply: the calls one response asked for."""


class ReplyReports:
    """Who of a reply still works, and the reports held until the last of them ends."""

    __slots__ = ("_flush_planned", "_held", "_kernel", "_working")

    def __init__(self, kernel: Kernel) -> None:
        self._kernel = kernel
        self._working: dict[Reply, int] = {}
        """How many calls of each reply have a task that has not reported yet."""
        self._held: dict[Reply, list[InboxMessage]] = {}
        self._flush_planned = False

    def started(self, config: ToolCallConfig) -> None:
        """A call's task starts (a call of no reply, submitted by the application, is not
        counted: its report ticks at once, as ever)."""
        if config.turn_id is not None:
            reply = (config.session_id, config.turn_id)
            self._working[reply] = self._working.get(reply, 0) + 1

    def ended(self, config: ToolCallConfig) -> None:
        """A call's task ended without a report (cancelled from outside)."""
        if config.turn_id is not None:
            self._count_out((config.session_id, config.turn_id))

    def hold(self, config: ToolCallConfig, report: InboxMessage) -> bool:
        """Count the reporting call out; True if its report is held for its reply's last.
        Else its reply's held reports are in the inbox now, and the caller ticks for them
        and its own."""
        if config.turn_id is None:
            return False
        reply = (config.session_id, config.turn_id)
        if self._count_out(reply) and not self._kernel.ctx.inbox and not self._kernel.closed:
            held = self._held.get(reply)
            if held is None:
                self._held[reply] = [report]
            else:
                held.append(report)
            if not self._flush_planned:
                self._flush_planned = True
                asyncio.get_running_loop().call_soon(self.flush)
            return True
        held = self._held.pop(reply, None)
        if held is not None:
            self._kernel.ctx.inbox.extend(held)
        return False

    def release(self) -> bool:
        """Put every held report in the inbox (a read, a cancel, the runtime closing apply
        them first, as any report): True if there was any."""
        if not self._held:
            return False
        inbox = self._kernel.ctx.inbox
        for reports in self._held.values():
            inbox.extend(reports)
        self._held.clear()
        return True

    def flush(self) -> None:
        """At the next loop pass, what is still held goes to the inbox, in a tick here."""
        self._flush_planned = False
        if self.release() and not self._kernel.closed:
            self._kernel.tick()

    def _count_out(self, reply: Reply) -> bool:
        """One call of ``reply`` less at work; True if others still are."""
        left = self._working[reply] - 1
        if left:
            self._working[reply] = left
            return True
        del self._working[reply]
        return False
