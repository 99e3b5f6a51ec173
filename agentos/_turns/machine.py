"""What both turn machines share: a session's own status, moved only as the table allows.

``TurnMachine`` (a transcript) and ``BoardMachine`` (a board) differ in what
the model reads and when a turn goes on; both take events and return actions
for the same shell, and report the status the same way.
"""

from __future__ import annotations

from agentos._turns.agent_config import AgentConfig
from agentos._turns.events import ENDED, TURN_TRANSITIONS, SendRequest, SessionStatus

_ALLOWED = {
    status: TURN_TRANSITIONS[status] | {status, SessionStatus.FAILED} for status in SessionStatus
}


class MachineBase:
    """A session's status, its request count and whether it is stopping."""

    def __init__(self, session_id: str, config: AgentConfig) -> None:
        self.session_id = session_id
        self.config = config
        self.status = SessionStatus.IDLE
        self.requests = 0
        self._stopping = False

    @property
    def ended(self) -> bool:
        return self.status in ENDED

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def queued_posts(self) -> list[str]:
        """User messages the chat does not show yet (none: a board shows a post at once)."""
        return []

    def request_now(self, asked: SendRequest) -> SendRequest:
        """``asked`` as it goes out now, when the shell performs it (a transcript's: as
        decided; ``BoardMachine`` draws the board again)."""
        return asked

    def abandon(self) -> None:
        """The shell's task ended (its host is closing): nothing will move this turn again."""
        if not self.ended:
            self.status = SessionStatus.STOPPED

    def _move(self, status: SessionStatus) -> None:
        if status not in _ALLOWED[self.status]:
            raise AssertionError(f"turn cannot move from {self.status} to {status}")
        self.status = status
