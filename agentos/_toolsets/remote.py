"""What a toolset reached over the wire keeps the same way, an MCP server or an A2A agent."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Generic
from typing import TypeVar

from agentos._turns.mcp_config import check_names

Settings = TypeVar("Settings")


class RemoteToolset(Generic[Settings]):
    """A checked name, its settings, where ``${VAR}`` is read, and the calls that go on
    with the task they ran as before a restart (``resume_task``)."""

    def __init__(
        self, name: str, config: Settings, whose: str, environ: Mapping[str, str] | None
    ) -> None:
        check_names([name], whose)
        self.name = name
        self.config = config
        self._environ = os.environ if environ is None else environ
        self._resuming: dict[str, str] = {}
        """Call id -> the task it goes on with."""

    def resume_task(self, call_id: str, task_id: str) -> None:
        """Let the call ``call_id`` (just submitted, not yet started) go on with the task
        ``task_id`` it ran as before a restart, instead of starting its work again."""
        self._resuming[call_id] = task_id

    @property
    def resuming(self) -> Mapping[str, str]:
        """The calls handed a task by ``resume_task`` that have not started yet (the task
        of each, by call id). A call takes its task as it starts; one that ends without
        starting (cancelled first) keeps it until the runtime closes."""
        return dict(self._resuming)
