"""Sub-agents: each ``agents`` entry of an agent's configuration is a tool whose call runs a
child session on the same host until the child's turn ends.

The call's progress is the child's own words and its tool calls starting and ending; its
result is the child's last answer. Cancelling the call stops the child and cancels every
call it has running (a sub-agent's among them, so cancel goes down the tree one tick per
level); the parent's other calls go on. Depth and the number of children running at once
are bounded, and a call asking past a bound fails at once saying which.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from typing import Protocol

from agentos._errors import UnknownCallError
from agentos._errors import UsageError
from agentos._host.maker import NewSession
from agentos._host.registry import SessionRegistry
from agentos._kernel.context import ToolContext
from agentos._kernel.runtime import Runtime
from agentos._kernel.tools import Tool
from agentos._kernel.tools import ToolFailure
from agentos._model.messages import blocks_of
from agentos._model.messages import content_text
from agentos._sessions.session import Session
from agentos._sessions.tool_access import AGENT_SOURCE
from agentos._store.protocol import SessionStore
from agentos._turns.agent_config import AgentConfig
from agentos._turns.agent_config import SubAgent
from agentos._turns.events import SessionStatus
from components import CallEvent
from components import CallEventKind
from components import CallId
from components import Json

SAID_CHARS = 2000
"""The longest piece of a child's words one progress entry carries."""
TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"task": {"type": "string", "minLength": 1, "description": "What to do."}},
    "required": ["task"],
    "additionalProperties": False,
}


class ChildOpener(Protocol):
    """How a sub-agent call opens its child session: a new one, running, or a stored one
    brought back (``SessionLifecycle``'s ``create_session`` and ``resume``)."""

    async def create_session(self, config: AgentConfig, how: NewSession) -> Session: ...

    async def resume(self, session_id: str) -> Session: ...


def child_session_id(tool_name: str, call_id: str) -> str:
    """The id of the child session a sub-agent call runs: its tool's name and the call's
    id, so a reader of the store finds a call's child (``agentos calls`` draws the tree)."""
    return f"{tool_name}-{call_id}"


@dataclass(frozen=True, slots=True)
class _Depth:
    """How deep a session is below its top-level session, and how deep its tree may go."""

    level: int
    limit: int


class SubAgents:
    """The sub-agent tools of one host, and the children their calls run."""

    def __init__(self, runtime: Runtime, sessions: SessionRegistry, opener: ChildOpener) -> None:
        self._runtime = runtime
        self._sessions = sessions
        self._opener = opener
        self._reattached: dict[str, str] = {}
        """A call made again after a restart -> the stored child session it goes on with."""
        self._depth: dict[str, _Depth] = {}
        self._children: dict[str, Session] = {}
        """Running sub-agent call -> the child session it runs."""
        self._running: dict[str, set[str]] = {}
        """Session -> its sub-agent calls running now."""

    def register(self, config: AgentConfig) -> None:
        """Give the runtime a tool for each of ``config``'s sub-agents (and theirs, down the
        tree); ``UsageError`` if another tool has one's name."""
        for name, child in config.agents.items():
            found = self._runtime.tool(name)
            if found is None:
                self._runtime.add_tool(
                    Tool.from_schema(
                        self._run,
                        name=name,
                        input_schema=TASK_SCHEMA,
                        description=child.description or f"The sub-agent {child.agent.name!r}.",
                        source=AGENT_SOURCE,
                    )
                )
            elif found.source != AGENT_SOURCE or found.fn != self._run:
                raise UsageError(
                    f"agent {config.name!r}: agents.{name}: the runtime has another tool "
                    f"named {name!r} (from {found.source or 'Python'}); rename the sub-agent"
                )
            self.register(child.agent)

    def post_to_child(self, call_id: str, text: str) -> str | None:
        """``message_agent``: the child reads ``text`` at its next turn; its id, or None."""
        child = self._children.get(call_id)
        if child is None:
            return None
        child.post(text)
        return child.session_id

    def child_of(self, call_id: str) -> Session | None:
        """The child session a running sub-agent call runs."""
        return self._children.get(call_id)

    def forget(self, session_id: str) -> None:
        self._depth.pop(session_id, None)

    async def reattacher(
        self, store: SessionStore, parent: Session
    ) -> Callable[[str, str, object], CallId | None] | None:
        """For ``restore``: a sub-agent call the restart lost goes on with a stored child of
        ``parent`` that waits on deferred calls alone (nothing of its work was lost) and has
        its tool and its task, made again under its tool_use id. None for an agent with no
        sub-agents, whose resume reads no other session."""
        if not parent.config.agents:
            return None
        waiting: dict[str, str] = {}  # child session -> its task
        for stored in await store.list_sessions():
            if (
                stored.parent_session_id == parent.session_id
                and stored.status == SessionStatus.WAITING_EXTERNAL.value
            ):
                loaded = await store.load_session(stored.session_id)
                history = [] if loaded is None else list(loaded.history)
                waiting[stored.session_id] = content_text(blocks_of(history[0])) if history else ""

        def again(tool_use_id: str, tool: str, arguments: object) -> CallId | None:
            task = arguments.get("task") if isinstance(arguments, dict) else None
            if tool not in parent.config.agents or not isinstance(task, str):
                return None
            child_id = next(
                (c for c, said in waiting.items() if c.startswith(f"{tool}-") and said == task),
                None,
            )
            if child_id is None:
                return None
            del waiting[child_id]  # two calls with one task go on with one child each
            call_id = self._runtime.submit(
                tool, {"task": task}, session_id=parent.session_id, provider_call_id=tool_use_id
            )
            self._reattached[call_id] = child_id
            return call_id

        return again

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> Json | ToolFailure:
        parent = self._sessions.get(ctx.session_id)
        spec = parent.config.agents.get(ctx.tool_name)
        if spec is None:
            return ToolFailure(
                f"agent {parent.config.name!r} has no sub-agent {ctx.tool_name!r} "
                "(its agents entries name the ones it may call)"
            )
        resumed = self._reattached.pop(ctx.call_id, None)
        refused = self._refusal(parent, ctx.tool_name)
        if refused is not None:
            return ToolFailure(refused)
        depth = self._depth_of(parent)
        config = _inherited(spec, parent, ctx)
        child_id = resumed or child_session_id(ctx.tool_name, ctx.call_id)
        self._depth[child_id] = _Depth(depth.level + 1, min(depth.limit, config.max_agent_depth))
        running = self._running.setdefault(parent.session_id, set())
        running.add(ctx.call_id)
        try:
            if resumed is None:
                how = NewSession(child_id, parent.session_id, parent_call=ctx.call_id)
                child = await self._opener.create_session(config, how)
            else:
                child = await self._opener.resume(child_id)
        except BaseException:
            self._done(parent.session_id, ctx.call_id)
            self._depth.pop(child_id, None)
            raise
        self._children[ctx.call_id] = child
        relay = _Relay(ctx, child, self._runtime)
        try:
            if resumed is None:
                await child._post_here(args["task"])  # its first step in this call's task
            await child.wait_settled(include_deferred=True)
            return _outcome(child, ctx.tool_name, relay.said())
        finally:
            relay.stop()
            self._children.pop(ctx.call_id, None)
            self._done(parent.session_id, ctx.call_id)
            self._stop(child)
            self._depth.pop(child_id, None)  # an ended child starts no child of its own

    def _refusal(self, parent: Session, name: str) -> str | None:
        """Why the parent may not start another child now (None: it may)."""
        depth = self._depth_of(parent)
        if depth.level + 1 > depth.limit:
            return (
                f"{name}: sub-agents may nest {depth.limit} deep below the first agent, and this "
                f"one would be {depth.level + 1} deep (max_agent_depth): answer from what you "
                "have, or ask for less"
            )
        cap = parent.config.max_children_running
        if len(self._running.get(parent.session_id, ())) >= cap:
            return (
                f"{name}: {cap} sub-agents of this session run already (max_children_running): "
                "wait for one to finish, or cancel one"
            )
        return None

    def _depth_of(self, session: Session) -> _Depth:
        found = self._depth.get(session.session_id)
        return found if found is not None else _Depth(0, session.config.max_agent_depth)

    def _done(self, session_id: str, call_id: str) -> None:
        running = self._running.get(session_id)
        if running is not None:
            running.discard(call_id)
            if not running:
                del self._running[session_id]

    def _stop(self, child: Session) -> None:
        """End the child, and cancel at once every call it has not finished (its children's
        and its deferred ones among them): cancelling waits for no turn of the child's.
        A child that answered with every outcome heard has none, and is not looked up."""
        if not child.idle or child.outstanding():
            for call in self._runtime.list_calls(child.session_id, include_final=False):
                self._runtime.cancel(call.call_id, "its sub-agent's call ended")
        child.stop()


def _inherited(spec: SubAgent, parent: Session, ctx: ToolContext) -> AgentConfig:
    """The child's configuration, with the retry budget the parent has left on the branch
    that made the call when that is less than the child's own."""
    left = parent.config.retry_budget
    board = parent.board
    if board is not None and ctx.provider_call_id is not None:
        try:
            node = board.node_of_call(ctx.provider_call_id)
        except KeyError:
            pass
        else:
            left -= board.cancels_on_branch(node.display_id, ctx.tool_name)
    budget = max(0, min(spec.agent.retry_budget, left))
    if budget == spec.agent.retry_budget:
        return spec.agent
    return spec.agent.model_copy(update={"retry_budget": budget})


def _outcome(child: Session, name: str, said: str) -> Json | ToolFailure:
    """The child's last answer (``said``); a failure saying what it said last when it
    failed, was stopped, or its turn ended without an answer (its step limit)."""
    last = f" It said last: {said}" if said else " It said nothing."
    if child.status is SessionStatus.FAILED:
        error = child.errors[-1].message if child.errors else "its session failed"
        return ToolFailure(f"{name} failed: {error}.{last}")
    if child.ended:  # stopped by someone else: the parent's call ends it only afterwards
        return ToolFailure(f"{name}'s session was stopped before it answered.{last}")
    if child._last_role() == "user":
        steps = child.config.max_steps_per_turn
        return ToolFailure(
            f"{name} stopped at its step limit ({steps} model requests) without an answer.{last}"
        )
    return said


_RELAYED = frozenset(CallEventKind) - {
    CallEventKind.QUEUED,
    CallEventKind.PROGRESSED,
    CallEventKind.OVERDUE,
}
"""The child's call events the relay tells: a call's start and its end."""


class _Relay:
    """The child's words and its calls starting and ending, as the parent call's progress."""

    def __init__(self, ctx: ToolContext, child: Session, runtime: Runtime) -> None:
        self._ctx = ctx
        self._child = child
        self._runtime = runtime
        replies, self._read = child._replies_since(0)  # a resumed child's are not told
        self._last = replies[-1] if replies else ""
        self._seen = self._mark()
        self._stops: tuple[Callable[[], None], ...] = (
            child.on_change(self._changed),
            runtime.on_call_events(child.session_id, self._call_event, kinds=_RELAYED),
        )

    def stop(self) -> None:
        stops, self._stops = self._stops, ()  # they hold the relay: no cycle is left behind
        for stop in stops:
            stop()

    def said(self) -> str:
        """What the child said last ("" for nothing), its newest words read first."""
        self._changed()
        return self._last

    def _mark(self) -> tuple[int, int, SessionStatus]:
        """What changes whenever the child says something: a reply is a new message (a
        board's, the end of a model request, which moves the status)."""
        child = self._child
        return child.message_count, child.requests, child.status

    def _changed(self) -> None:
        mark = self._mark()
        if mark == self._seen:
            return
        grew = mark[0] != self._seen[0]
        self._seen = mark
        child = self._child
        if not grew and child.board is None:  # a transcript's reply is a new message
            return
        replies, self._read = child._replies_since(self._read)
        if not replies:
            return
        self._last = replies[-1]
        ending = child.status is SessionStatus.IDLE and not child.outstanding()
        for said in replies:
            if not said:
                continue
            if ending:  # its answer: the call's end follows at once, in a tick of its own
                self._ctx._progress_before_end({"said": said[:SAID_CHARS]})
            else:
                self._ctx.progress({"said": said[:SAID_CHARS]})

    def _call_event(self, event: CallEvent) -> None:
        if event.kind is CallEventKind.STARTED:
            try:
                name = self._runtime.status(event.call_id).tool_name
            except UnknownCallError:
                return
            self._ctx.progress({"tool_name": name, "call_id": event.call_id, "status": "running"})
        elif event.snapshot is not None:  # it ended
            entry: dict[str, Json] = {
                "tool_name": event.snapshot.tool_name,
                "call_id": event.call_id,
                "status": event.status.value,
            }
            if event.error is not None:
                entry["error"] = event.error.message
            self._ctx.progress(entry)
