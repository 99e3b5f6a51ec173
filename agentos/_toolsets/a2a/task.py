"""One remote task as the agentos call that follows it: the messages sent to it, the events
read back (streamed, or polled with ``GetTask`` when the agent does not stream), each new
status and its message a progress entry naming the task, the artifacts kept for the result.

``RemoteTask`` knows the protocol's moves; what a call does at each state (ask, answer,
return, fail) is ``call.py``'s.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import anyio

from agentos._kernel.context import ToolContext
from agentos._toolsets.a2a.parts import FINAL
from agentos._toolsets.a2a.parts import INTERRUPTED
from agentos._toolsets.a2a.parts import state_word
from agentos._toolsets.a2a.parts import text_of

CANCEL_WAIT = 5.0
"""Seconds a cancel waits for the agent to take ``CancelTask``."""


@dataclass(frozen=True, slots=True)
class Remote:
    """What a call needs of its agent: the SDK's client, whether the agent streams, how
    often to poll when it does not, how long it may be silent on a stream and how long it
    may take to answer a request, and its name for errors."""

    name: str
    client: Any
    streaming: bool
    poll_interval: float
    answer_timeout: float
    request_timeout: float


class Silent(Exception):
    """The agent said nothing for longer than it may."""


class RemoteTask:
    """The task a call runs as: its ids, state, status message and artifacts so far."""

    def __init__(self, remote: Remote, ctx: ToolContext) -> None:
        self.remote = remote
        self.ctx = ctx
        self.task_id: str | None = None
        self.context_id: str | None = None
        self.state = "submitted"
        self.status_message: Any = None
        self.reply: Any = None
        """The agent's message when it answered without a task."""
        self._artifacts: dict[str, list[Any]] = {}
        self._shown: tuple[str, str] | None = None
        self._answered: str | None = None
        """The question (its state and message id) the answer sent last was to."""
        self._stamp = ""
        """When the agent set the task's status, as it says."""
        self.seen = False
        """Whether the agent told the task's status (a follow-up names a task unread)."""

    @property
    def settled(self) -> bool:
        """Whether the task ended or waits for its client (or there is no task); a question
        already answered is not waited on again (the agent has not read the answer yet)."""
        if self.reply is not None or self.state in FINAL:
            return True
        return self.state in INTERRUPTED and self._question() != self._answered

    def answering(self) -> None:
        """Say the task's question is being answered: until the agent's status moves on,
        reading it again (a snapshot, a poll) is not a new question."""
        self._answered = self._question()

    def _question(self) -> str:
        said = "" if self.status_message is None else self.status_message.message_id
        return f"{self.state}:{said}:{self._stamp}"

    def artifact_parts(self) -> list[Any]:
        """Every part of every artifact, in the order they came."""
        return [part for parts in self._artifacts.values() for part in parts]

    async def send(self, message: Any) -> None:
        """Send ``message`` (on the task, if it has one) and read what comes back until the
        stream ends; without streaming, the task as it is once sent. ``Silent`` when the
        agent says nothing for ``answer_timeout`` seconds before there is a task."""
        from a2a.types import SendMessageRequest

        request = SendMessageRequest(message=message)
        if not await self._read(self.remote.client.send_message(request)):
            if self.task_id is None:
                raise Silent(f"no answer to the message within {self.remote.answer_timeout:g} s")
            await self.read()
        if self.task_id is None and self.reply is None:
            raise ValueError("the agent answered the message with neither a task nor a message")

    async def follow(self) -> None:
        """Wait until the task ends or waits for its client: its stream when the agent
        streams (``SubscribeToTask``; read with ``GetTask`` and subscribed to again whenever
        it is silent ``answer_timeout`` seconds), else reading it every ``poll_interval``
        seconds."""
        from a2a.types import SubscribeToTaskRequest

        if self.task_id is None:
            return
        while self.remote.streaming and not self.settled:
            request = SubscribeToTaskRequest(id=self.task_id)
            try:
                ended = await self._read(self.remote.client.subscribe(request))
            except Exception:
                await self.read()  # a task that ended meanwhile is not subscribed to
                if self.settled:
                    return
                raise
            if ended:
                break  # the stream ended before the task did: read it from now on
            await self.read()
        while not self.settled:
            await anyio.sleep(self.remote.poll_interval)
            await self.read()

    async def resume(self, task_id: str) -> None:
        """Take up the task ``task_id`` again (after a restart): read it, then follow it."""
        self.task_id = task_id
        await self.read()
        await self.follow()

    async def _read(self, events: Any) -> bool:
        """Take ``events`` (the SDK's stream) until they end or the task settles (True: an
        agent's subscription stays open while its task waits for input), or until the agent
        is silent ``answer_timeout`` seconds (False)."""
        try:
            while True:
                with anyio.move_on_after(self.remote.answer_timeout):
                    event = await anext(events, None)
                    if event is None:
                        return True
                    self._take(event)
                    if self.settled:
                        return True
                    continue
                return False
        finally:
            with anyio.CancelScope(shield=True):
                await events.aclose()

    async def read(self) -> None:
        """Read the task (``GetTask``); ``Silent`` if the agent does not answer within
        ``request_timeout`` seconds."""
        from a2a.types import GetTaskRequest

        wait = self.remote.request_timeout
        with anyio.move_on_after(wait):
            self._take_task(await self.remote.client.get_task(GetTaskRequest(id=self.task_id)))
            return
        raise Silent(f"the agent did not answer GetTask within {wait:g} s")

    async def cancel(self, reason: str | None) -> None:
        """Ask the agent to cancel the task, ``reason`` in the request's metadata; waits
        ``CANCEL_WAIT`` at most, and a refusal is not the call's concern."""
        from a2a.types import CancelTaskRequest

        if self.task_id is None or self.state in FINAL:
            return
        request = CancelTaskRequest(id=self.task_id)
        if reason:
            request.metadata.update({"reason": reason})
        with anyio.move_on_after(CANCEL_WAIT, shield=True), contextlib.suppress(Exception):
            await self.remote.client.cancel_task(request)

    # -------------------------------------------------------------------- events

    def _take(self, event: Any) -> None:
        kind = event.WhichOneof("payload")
        if kind == "task":
            self._take_task(event.task)
        elif kind == "message":
            self.reply = event.message
            self.context_id = event.message.context_id or self.context_id
        elif kind == "status_update":
            update = event.status_update
            self._ids(update.task_id, update.context_id)
            self._status(update.status)
        elif kind == "artifact_update":
            update = event.artifact_update
            self._ids(update.task_id, update.context_id)
            self._artifact(update.artifact, append=update.append)

    def _take_task(self, task: Any) -> None:
        self._ids(task.id, task.context_id)
        for artifact in task.artifacts:
            self._artifact(artifact, append=False)
        self._status(task.status)

    def _ids(self, task_id: str, context_id: str) -> None:
        self.task_id = task_id or self.task_id
        self.context_id = context_id or self.context_id

    def _artifact(self, artifact: Any, *, append: bool) -> None:
        kept = self._artifacts.setdefault(artifact.artifact_id, [])
        if not append:
            kept.clear()
        kept.extend(artifact.parts)

    def _status(self, status: Any) -> None:
        self.seen = True
        self.state = state_word(status.state)
        self._stamp = status.timestamp.ToJsonString() if status.HasField("timestamp") else ""
        self.status_message = status.message if status.HasField("message") else None
        said = "" if self.status_message is None else text_of(self.status_message.parts)
        if (self.state, said) != self._shown:
            self._shown = (self.state, said)
            entry: dict[str, Any] = {"task_id": self.task_id, "status": self.state}
            if self.context_id:
                entry["context_id"] = self.context_id
            if said:
                entry["text"] = said
            self.ctx.progress(entry)
