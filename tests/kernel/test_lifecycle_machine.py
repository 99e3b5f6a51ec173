"""A property-based lifecycle test: a hypothesis state machine over a real ``Runtime``.

The machine drives a ``Runtime`` on a ``ManualClock`` with small caps
(``max_running=3``, ``max_running_per_session=2``) and one ``Puppet`` tool: it
submits calls to three sessions (some with a hard timeout and/or an overdue
deadline, some nested under another call, some the runtime must reject),
reports progress on running calls, completes and fails them, cancels them
(with no scope, the right scope and the wrong one), moves the clock, and reads
status, listings and ``wait(timeout=0)``. After every step it checks the whole
runtime against a small model kept on the test side (see ``_check``).

The runtime is async; hypothesis rules are sync. Each example runs one event
loop in a background thread (``tests/support/loop_thread.py``): every rule acts on it
and then settles the runtime. Nothing touches the runtime, the clock or the
puppet from any other thread.

Nested calls follow docs/design.md: a call whose parent is running *in the
same session* is admitted at once, over the caps if need be, and counts as
running like any other; while a count is over its cap nothing is admitted from
the queue. A call whose running parent is in another session (a sub-agent's)
passes only the global cap: it is admitted at once if its own session has a
free slot, and otherwise queues like any call.
"""

from __future__ import annotations

import math
import uuid
from collections import Counter
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import ClassVar
from typing import Literal
from typing import TypeVar

from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle
from hypothesis.stateful import MultipleResults
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.stateful import invariant
from hypothesis.stateful import multiple
from hypothesis.stateful import precondition
from hypothesis.stateful import rule

from agentos import CallOptions
from agentos import CallSnapshot
from agentos import CallStatus
from agentos import CancelOutcome
from agentos import ErrorKind
from agentos import ManualClock
from agentos import ProgressKind
from agentos import Runtime
from agentos import RuntimeStatistics
from agentos import UnknownCallError
from agentos.testing import Puppet
from agentos.turns import Caller
from agentos.turns import CapabilityResult
from agentos.turns import Scope as ToolboxScope
from agentos.turns import SystemToolbox
from components import PROGRESS_KEPT
from components import TRANSITIONS
from tests.support.loop_thread import LoopThread
from tests.support.loop_thread import close_streams

T = TypeVar("T")

MAX_RUNNING = 3
MAX_PER_SESSION = 2
SESSIONS = ("s0", "s1", "s2")
RETENTION = 20.0
"""Retention of the retention variant; some clock moves jump past it, most do not."""

HARD_TIMEOUTS = (1.0, 4.0)
OVERDUE_AFTER = 2.0
CLOCK_STEPS = (0.0, 0.5, 1.0, 2.0, 5.0, 25.0)
STEP_SECONDS = 10.0

Rejection = Literal["invalid_input", "bad_json", "not_an_object", "unknown_tool"]
REJECTED_INPUT: dict[Rejection, tuple[str, Any, ErrorKind]] = {
    "invalid_input": ("puppet", {"label": 5}, ErrorKind.INVALID_INPUT),
    "bad_json": ("puppet", "{not json", ErrorKind.INVALID_INPUT),
    "not_an_object": ("puppet", "[1, 2]", ErrorKind.INVALID_INPUT),
    "unknown_tool": ("no_such_tool", {}, ErrorKind.UNKNOWN_TOOL),
}
Scope = Literal["none", "own", "other"]
SCOPES: tuple[Scope, ...] = ("none", "own", "other")
TimeoutChoice = Literal["default", "none", "short", "long"]
TIMEOUT_CHOICES: tuple[TimeoutChoice, ...] = ("default", "none", "short", "long")
"""``default`` leaves ``CallOptions.timeout`` None: neither the tool nor the runtime sets one."""


def _reachability() -> dict[CallStatus, frozenset[CallStatus]]:
    """Every status reachable from each status along ``TRANSITIONS`` (itself included)."""
    reachable: dict[CallStatus, frozenset[CallStatus]] = {}
    for start in TRANSITIONS:
        seen = {start}
        todo = [start]
        while todo:
            for after in TRANSITIONS[todo.pop()]:
                if after not in seen:
                    seen.add(after)
                    todo.append(after)
        reachable[start] = frozenset(seen)
    return reachable


REACHABLE = _reachability()


def _unknown_message(call_id: str) -> str:
    """The one message shape for an id the caller cannot see."""
    return f"no tool call with id {call_id!r}"


def _other_session(session: str) -> str:
    return SESSIONS[(SESSIONS.index(session) + 1) % len(SESSIONS)]


@dataclass(frozen=True)
class Submission:
    """One call to submit."""

    session: str
    tool_name: str
    tool_input: Any
    rejected: ErrorKind | None
    timeout: TimeoutChoice
    overdue_set: bool
    parent: str | None = None

    @property
    def hard(self) -> float | None:
        return {"default": None, "none": None, "short": HARD_TIMEOUTS[0], "long": HARD_TIMEOUTS[1]}[
            self.timeout
        ]

    @property
    def overdue(self) -> float | None:
        return OVERDUE_AFTER if self.overdue_set else None


@dataclass
class Expected:
    """What the test knows about one submitted call."""

    call_id: str
    session: str
    tool_name: str
    rejected: ErrorKind | None
    hard: float | None
    overdue: float | None
    parent: str | None
    borrowed: bool
    """Admitted at once because its parent was running (in the same session): never queued."""
    jumped: bool = False
    """Admitted at once past the global cap: its running parent is in another session."""
    last: CallSnapshot | None = None
    progress: list[object] = field(default_factory=list)
    forgotten: bool = False

    @property
    def status(self) -> CallStatus | None:
        return None if self.last is None else self.last.status


@dataclass(frozen=True)
class PuppetView:
    started: bool
    cleaned_up: bool
    cancelled: bool


@dataclass
class Observation:
    """Everything the invariants read, gathered in one go on the loop thread."""

    now: float
    snapshots: dict[str, CallSnapshot | None]
    unknown_messages: dict[str, str]
    listings: dict[str, list[CallSnapshot]]
    live_listings: dict[str, list[CallSnapshot]]
    stats: RuntimeStatistics
    puppet: dict[str, PuppetView]


class LifecycleMachine(RuleBasedStateMachine):
    """Drives one ``Runtime`` per example and checks it against ``Expected`` after each step."""

    calls: Bundle[str] = Bundle("calls")

    RETENTION_SECONDS: ClassVar[float | None] = None
    """None: final calls are kept for good, so every id must stay answerable."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = ManualClock()
        self.puppet = Puppet()
        self.runtime = Runtime(
            [self.puppet.tool],
            clock=self.clock,
            max_running=MAX_RUNNING,
            max_running_per_session=MAX_PER_SESSION,
            retention_seconds=self.RETENTION_SECONDS,
        )
        self.toolbox = SystemToolbox(self.runtime)
        self.expected: dict[str, Expected] = {}
        self.counter = 0
        # What the current step may legitimately do to calls (reset after each check).
        self.may_end: dict[str, tuple[CallStatus, ErrorKind | None]] = {}
        self.advanced = False
        self.loop = LoopThread(lambda: self.runtime)

    # ------------------------------------------------------------------ plumbing

    def _run(self, action: Callable[[], Awaitable[T]]) -> T:
        return self.loop.run(action, self.runtime, STEP_SECONDS)

    def teardown(self) -> None:
        try:
            crashed = self.loop.died  # then the step that found it out failed with the cause
            self.loop.close()
            if not crashed:
                # Leaving the runtime cancels every call that was not final; work is interrupted.
                for call_id, call in self.puppet.calls.items():
                    assert not call.started or call.cleaned_up, f"{call_id}: work outlived it"
        finally:
            close_streams(self.puppet)

    def _next(self) -> int:
        self.counter += 1
        return self.counter

    def _running_puppet_calls(self) -> list[str]:
        return [
            item.call_id
            for item in self.expected.values()
            if item.status is CallStatus.RUNNING and not item.forgotten
        ]

    # --------------------------------------------------------------------- submit

    def _submit(self, specs: list[Submission]) -> list[str]:
        """Submit every call in one go (so they reach the runtime in the same tick)."""
        now = self.clock.monotonic()
        borrowed, jumped = self._nested_admissions(specs)

        async def action() -> list[tuple[str, CallSnapshot]]:
            ids = []
            for spec in specs:
                timeout = math.inf if spec.timeout == "none" else spec.hard
                ids.append(
                    self.runtime.submit(
                        spec.tool_name,
                        spec.tool_input,
                        session_id=spec.session,
                        parent_call_id=spec.parent,
                        options=CallOptions(timeout=timeout, overdue_after=spec.overdue),
                    )
                )
            return [(call_id, self.runtime.status(call_id)) for call_id in ids]

        submitted = self._run(action)
        for spec, lends, jumps, (call_id, first) in zip(
            specs, borrowed, jumped, submitted, strict=True
        ):
            self.expected[call_id] = Expected(
                call_id=call_id,
                session=spec.session,
                tool_name=spec.tool_name,
                rejected=spec.rejected,
                hard=spec.hard,
                overdue=spec.overdue,
                parent=spec.parent,
                borrowed=lends,
                jumped=jumps,
            )
            assert first.submitted_at == now
            assert first.tool_input == ({} if isinstance(spec.tool_input, str) else spec.tool_input)
            if spec.rejected is not None:
                assert first.status is CallStatus.FAILED, first
                assert first.error is not None and first.error.kind is spec.rejected, first.error
                self.may_end[call_id] = (CallStatus.FAILED, spec.rejected)
            elif lends or jumps:
                assert first.status is CallStatus.RUNNING, f"a nested call queued: {first}"
        return [call_id for call_id, _ in submitted]

    def _nested_admissions(self, specs: list[Submission]) -> tuple[list[bool], list[bool]]:
        """Which calls the scheduler admits at once: skipping the queue and both caps (its
        parent is a running call of its session), or skipping the global cap only (its
        running parent is in another session, and its own session has a free slot, counting
        the calls of the batch admitted so). The runtime is quiescent between steps, so a
        parent's status is the one seen last."""
        running = Counter(
            item.session for item in self.expected.values() if item.status is CallStatus.RUNNING
        )
        borrowed, jumped = [], []
        for spec in specs:
            parent = None if spec.parent is None else self.expected[spec.parent]
            runs = (
                parent is not None
                and spec.rejected is None
                and not parent.forgotten
                and parent.status is CallStatus.RUNNING
            )
            same = runs and parent is not None and parent.session == spec.session
            jumps = runs and not same and running[spec.session] < MAX_PER_SESSION
            if same or jumps:
                running[spec.session] += 1
            borrowed.append(same)
            jumped.append(jumps)
        return borrowed, jumped

    @rule(
        target=calls,
        batch=st.lists(
            st.tuples(
                st.sampled_from(SESSIONS),
                st.sampled_from(TIMEOUT_CHOICES),
                st.booleans(),
            ),
            min_size=1,
            max_size=3,
        ),
    )
    def submit(self, batch: list[tuple[str, TimeoutChoice, bool]]) -> MultipleResults[str]:
        specs = [
            Submission(session, "puppet", {"label": f"call-{self._next()}"}, None, timeout, overdue)
            for session, timeout, overdue in batch
        ]
        return multiple(*self._submit(specs))

    @rule(
        target=calls,
        session=st.sampled_from(SESSIONS),
        rejection=st.sampled_from(sorted(REJECTED_INPUT)),
        timeout=st.sampled_from(["default", "short"]),
    )
    def submit_rejected(self, session: str, rejection: Rejection, timeout: TimeoutChoice) -> str:
        tool_name, tool_input, kind = REJECTED_INPUT[rejection]
        (call_id,) = self._submit(
            [Submission(session, tool_name, tool_input, kind, timeout, overdue_set=False)]
        )
        return call_id

    @rule(
        target=calls,
        parent=calls,
        same_session=st.booleans(),
        timeout=st.sampled_from(["none", "short"]),
    )
    def submit_nested(self, parent: str, same_session: bool, timeout: TimeoutChoice) -> str:
        # A parent in another session lends a place past the global cap only.
        session = self.expected[parent].session
        if not same_session:
            session = _other_session(session)
        label = f"child-{self._next()}"
        (call_id,) = self._submit(
            [Submission(session, "puppet", {"label": label}, None, timeout, False, parent)]
        )
        return call_id

    # -------------------------------------------------------------- drive the work

    @precondition(lambda self: bool(self._running_puppet_calls()))
    @rule(data=st.data())
    def report_progress(self, data: st.DataObject) -> None:
        call_id = data.draw(st.sampled_from(self._running_puppet_calls()), label="call")
        payload = {"step": self._next()}

        async def action() -> None:
            self.puppet.progress(call_id, payload)

        self._run(action)
        self.expected[call_id].progress.append(payload)

    @precondition(lambda self: bool(self._running_puppet_calls()))
    @rule(data=st.data())
    def complete(self, data: st.DataObject) -> None:
        call_id = data.draw(st.sampled_from(self._running_puppet_calls()), label="call")
        value = {"done": self._next(), "items": [1, "two", None]}

        async def action() -> None:
            self.puppet.complete(call_id, value)

        self.may_end[call_id] = (CallStatus.COMPLETED, None)
        self._run(action)
        after = self._run(lambda: self._status(call_id))
        assert after.status is CallStatus.COMPLETED, after
        assert after.result == value
        assert after.error is None

    @precondition(lambda self: bool(self._running_puppet_calls()))
    @rule(data=st.data())
    def fail(self, data: st.DataObject) -> None:
        call_id = data.draw(st.sampled_from(self._running_puppet_calls()), label="call")
        message = f"boom {self._next()}"

        async def action() -> None:
            self.puppet.fail(call_id, message)

        self.may_end[call_id] = (CallStatus.FAILED, ErrorKind.TOOL_ERROR)
        self._run(action)
        after = self._run(lambda: self._status(call_id))
        assert after.status is CallStatus.FAILED, after
        assert after.error is not None
        assert after.error.kind is ErrorKind.TOOL_ERROR
        assert after.error.message == f"RuntimeError: {message}"

    # --------------------------------------------------------------------- cancel

    def _scope(self, call_id: str, scope: Scope) -> str | None:
        session = self.expected[call_id].session
        return {"none": None, "own": session, "other": _other_session(session)}[scope]

    def _visible(self, call_id: str, scope: Scope) -> bool:
        return not self.expected[call_id].forgotten and scope != "other"

    def _check_unknown(self, error: UnknownCallError, call_id: str) -> None:
        """Wrong scope, a forgotten call and a made-up id all look exactly alike."""
        assert type(error) is UnknownCallError
        assert error.call_id == call_id
        assert str(error) == _unknown_message(call_id)
        assert str(error) == str(UnknownCallError(call_id))

    def _status_or_none(self, call_id: str) -> CallSnapshot | None:
        """The call as an unscoped status reads it, or None where it is unknown."""
        try:
            return self.runtime.status(call_id)
        except UnknownCallError:
            return None

    def _check_scoped_read(
        self,
        call_id: str,
        scope: Scope,
        answer: CallSnapshot | UnknownCallError,
        now: CallSnapshot | None,
    ) -> None:
        """A read in ``scope`` answers the call as it is (``now``, read unscoped right after)
        where the scope sees it, and exactly as an unknown id elsewhere."""
        if self._visible(call_id, scope):
            assert isinstance(answer, CallSnapshot), answer
            assert answer == now
        else:
            assert isinstance(answer, UnknownCallError), answer
            self._check_unknown(answer, call_id)

    @rule(call_id=calls, scope=st.sampled_from(SCOPES))
    def cancel(self, call_id: str, scope: Scope) -> None:
        self._cancel(call_id, scope)

    def _live_calls(self) -> list[str]:
        return [
            item.call_id
            for item in self.expected.values()
            if item.last is not None and not item.last.is_final
        ]

    @precondition(lambda self: bool(self._live_calls()))
    @rule(data=st.data(), scope=st.sampled_from(("none", "own")))
    def cancel_live(self, data: st.DataObject, scope: Scope) -> None:
        """Most calls in the bundle are final; this one aims at calls that are not."""
        self._cancel(data.draw(st.sampled_from(self._live_calls()), label="call"), scope)

    def _cancel(self, call_id: str, scope: Scope) -> None:
        before = self.expected[call_id].last
        reason = f"reason {self._next()}"
        session_id = self._scope(call_id, scope)

        async def action() -> CancelOutcome | UnknownCallError:
            try:
                return self.runtime.cancel(call_id, reason, session_id=session_id)
            except UnknownCallError as error:
                return error

        if self._visible(call_id, scope) and before is not None and not before.is_final:
            self.may_end[call_id] = (CallStatus.CANCELLED, ErrorKind.CANCELLED)
        outcome = self._run(action)
        if not self._visible(call_id, scope):
            assert isinstance(outcome, UnknownCallError), outcome
            self._check_unknown(outcome, call_id)
            return
        assert isinstance(outcome, CancelOutcome), outcome
        assert before is not None
        assert outcome.call_id == call_id
        # Nothing moves between steps, so the status before is the one seen last.
        assert outcome.previous_status is before.status
        assert outcome.cancelled is (not before.is_final), (outcome, before)
        if not outcome.cancelled:
            assert outcome.previous_status.is_final
            return
        after = self._run(lambda: self._status(call_id))
        assert after.status is CallStatus.CANCELLED, after
        assert after.cancel_reason == reason
        assert after.error is not None
        assert after.error.kind is ErrorKind.CANCELLED
        assert after.error.message == reason
        if before.status is CallStatus.RUNNING:
            view = self.puppet.calls[call_id]
            assert view.cleaned_up, "a cancelled running call's work was not cleaned up"
            assert view.cancelled, "a cancelled running call's work never saw the cancellation"

    async def _status(self, call_id: str) -> CallSnapshot:
        return self.runtime.status(call_id)

    @rule()
    def cancel_made_up_id(self) -> None:
        made_up = str(uuid.uuid4())

        async def action() -> list[UnknownCallError]:
            errors: list[UnknownCallError] = []
            for session_id in (None, SESSIONS[0]):
                try:
                    self.runtime.cancel(made_up, session_id=session_id)
                except UnknownCallError as error:
                    errors.append(error)
            return errors

        errors = self._run(action)
        assert len(errors) == 2
        for error in errors:
            self._check_unknown(error, made_up)

    # ---------------------------------------------------------------- capabilities

    def _caller(self, session: str, wide: bool) -> Caller:
        return Caller(session, scope=ToolboxScope.ALL if wide else ToolboxScope.OWN)

    def _sees(self, call_id: str, caller: Caller) -> bool:
        item = self.expected[call_id]
        if item.forgotten:
            return False
        return caller.scope is ToolboxScope.ALL or caller.session_id == item.session

    async def _made_up_answer(self, name: str, caller: Caller) -> str:
        made_up = str(uuid.uuid4())
        result = await self.toolbox.invoke(name, {"tool_call_id": made_up}, caller)
        return result.to_json().replace(made_up, "<id>")

    @rule(call_id=calls, session=st.sampled_from(SESSIONS), wide=st.booleans())
    def capability_status(self, call_id: str, session: str, wide: bool) -> None:
        caller = self._caller(session, wide)

        async def action() -> tuple[CapabilityResult, CallSnapshot | None, str]:
            result = await self.toolbox.invoke(
                "get_tool_call_status", {"tool_call_id": call_id}, caller
            )
            now = self._status_or_none(call_id)
            return result, now, await self._made_up_answer("get_tool_call_status", caller)

        result, now, made_up = self._run(action)
        if self._sees(call_id, caller):
            assert not result.is_error, result.content
            assert now is not None
            assert result.content["tool_call_id"] == call_id
            assert result.content["status"] == now.status.value
            assert result.content["is_final"] is now.is_final
        else:
            assert result.is_error, result.content
            assert result.to_json().replace(call_id, "<id>") == made_up, "scope leaks existence"

    @rule(call_id=calls, session=st.sampled_from(SESSIONS), wide=st.booleans())
    def capability_cancel(self, call_id: str, session: str, wide: bool) -> None:
        caller = self._caller(session, wide)
        before = self.expected[call_id].last
        reason = f"capability reason {self._next()}"
        visible = self._sees(call_id, caller)
        if visible and before is not None and not before.is_final:
            self.may_end[call_id] = (CallStatus.CANCELLED, ErrorKind.CANCELLED)

        async def action() -> tuple[CapabilityResult, str]:
            arguments = {"tool_call_id": call_id, "reason": reason}
            result = await self.toolbox.invoke("cancel_tool_call", arguments, caller)
            return result, await self._made_up_answer("cancel_tool_call", caller)

        result, made_up = self._run(action)
        if not visible:
            assert result.is_error, result.content
            assert result.to_json().replace(call_id, "<id>") == made_up, "scope leaks existence"
            return
        assert before is not None
        assert result.content == {
            "tool_call_id": call_id,
            "internal_id": call_id,
            "cancelled": not before.is_final,
            "previous_status": before.status.value,
        }

    @rule(session=st.sampled_from(SESSIONS), wide=st.booleans())
    def capability_list(self, session: str, wide: bool) -> None:
        caller = self._caller(session, wide)

        async def action() -> tuple[CapabilityResult, set[str]]:
            result = await self.toolbox.invoke("list_running_tool_calls", {}, caller)
            sessions = SESSIONS if wide else (session,)
            live: set[str] = {
                snapshot.call_id
                for name in sessions
                for snapshot in self.runtime.list_calls(name, include_final=False)
            }
            return result, live

        result, live = self._run(action)
        listed = result.content["tool_calls"]
        assert isinstance(listed, list)
        assert {entry["tool_call_id"] for entry in listed if isinstance(entry, dict)} == live
        for call_id in live:
            assert self._sees(call_id, caller)

    # ---------------------------------------------------------------------- clock

    @rule(seconds=st.sampled_from(CLOCK_STEPS))
    def advance(self, seconds: float) -> None:
        async def action() -> None:
            self.clock.advance(seconds)

        self.advanced = True
        self._run(action)

    # ---------------------------------------------------------------------- reads

    @rule(call_id=calls, scope=st.sampled_from(SCOPES))
    def status(self, call_id: str, scope: Scope) -> None:
        session_id = self._scope(call_id, scope)

        async def action() -> tuple[CallSnapshot | UnknownCallError, CallSnapshot | None]:
            try:
                scoped = self.runtime.status(call_id, session_id=session_id)
            except UnknownCallError as error:
                scoped_or_error: CallSnapshot | UnknownCallError = error
            else:
                scoped_or_error = scoped
            return scoped_or_error, self._status_or_none(call_id)

        self._check_scoped_read(call_id, scope, *self._run(action))

    @rule()
    def status_made_up_id(self) -> None:
        made_up = str(uuid.uuid4())

        async def action() -> UnknownCallError | None:
            try:
                self.runtime.status(made_up)
            except UnknownCallError as error:
                return error
            return None

        error = self._run(action)
        assert error is not None
        self._check_unknown(error, made_up)

    @rule(call_id=calls, scope=st.sampled_from(SCOPES))
    def wait_zero(self, call_id: str, scope: Scope) -> None:
        session_id = self._scope(call_id, scope)

        async def action() -> tuple[CallSnapshot | UnknownCallError, CallSnapshot | None]:
            try:
                waited: CallSnapshot | UnknownCallError = await self.runtime.wait(
                    call_id, 0, session_id=session_id
                )
            except UnknownCallError as error:
                waited = error
            return waited, self._status_or_none(call_id)

        # A zero timeout answers at once with the call as it is; nothing moved since.
        self._check_scoped_read(call_id, scope, *self._run(action))

    @rule(include_final=st.booleans())
    def list_unused_session(self, include_final: bool) -> None:
        async def action() -> list[CallSnapshot]:
            return self.runtime.list_calls("never-used", include_final=include_final)

        assert self._run(action) == []

    # ----------------------------------------------------------------- invariants

    async def _observe(self) -> Observation:
        runtime = self.runtime
        snapshots: dict[str, CallSnapshot | None] = {}
        unknown_messages: dict[str, str] = {}
        for call_id in self.expected:
            try:
                snapshots[call_id] = runtime.status(call_id)
            except UnknownCallError as error:
                snapshots[call_id] = None
                unknown_messages[call_id] = str(error)
        return Observation(
            now=self.clock.monotonic(),
            snapshots=snapshots,
            unknown_messages=unknown_messages,
            listings={s: runtime.list_calls(s) for s in SESSIONS},
            live_listings={s: runtime.list_calls(s, include_final=False) for s in SESSIONS},
            stats=runtime.statistics(),
            puppet={
                call_id: PuppetView(call.started, call.cleaned_up, call.cancelled)
                for call_id, call in self.puppet.calls.items()
            },
        )

    @invariant()
    def runtime_matches_model(self) -> None:
        observation = self._run(self._observe)
        try:
            self._check(observation)
        finally:
            self.may_end = {}
            self.advanced = False

    def _check(self, obs: Observation) -> None:
        started: set[str] = set()
        for item in self.expected.values():
            if self._check_call(item, obs.snapshots[item.call_id], obs):
                started.add(item.call_id)
        live = [item for item in self.expected.values() if not item.forgotten]
        self._check_caps(live, obs, started)
        self._check_listings(live, obs)
        self._check_statistics(live, obs)
        self._check_work(live, obs)

    def _check_work(self, live: list[Expected], obs: Observation) -> None:
        """The tool's side agrees: work runs exactly while its call is running."""
        for item in live:
            assert item.last is not None
            if item.rejected is not None:
                assert item.call_id not in obs.puppet, "a rejected call reached the tool"
                continue
            view = obs.puppet.get(item.call_id)
            ran = view is not None and view.started
            assert ran is (item.last.started_at is not None), (item.last, view)
            if item.last.status is CallStatus.RUNNING:
                assert view is not None and not view.cleaned_up, "running, but its work ended"
            elif item.last.is_final and ran:
                assert view is not None and view.cleaned_up, "final, but its work is alive"

    def _check_call(self, item: Expected, snap: CallSnapshot | None, obs: Observation) -> bool:
        """Check one call against what was known of it; returns whether it just started."""
        now = obs.now
        call_id = item.call_id
        prev = item.last
        retention = self.RETENTION_SECONDS
        due_to_forget = (
            retention is not None
            and prev is not None
            and prev.is_final
            and prev.completed_at is not None
            and prev.completed_at + retention <= now
        )
        if item.forgotten or due_to_forget:
            assert snap is None, f"{call_id}: kept past its retention: {snap}"
            assert obs.unknown_messages[call_id] == _unknown_message(call_id)
            item.forgotten = True
            return False
        assert snap is not None, f"{call_id} was lost (last seen: {prev})"
        assert snap.call_id == call_id
        assert snap.session_id == item.session
        assert snap.tool_name == item.tool_name
        assert snap.parent_call_id == item.parent

        if prev is not None:
            if prev.is_final:
                # Final is absorbing: status, result, error, timestamps, progress, all of it.
                assert snap == prev, f"{call_id}: a final call changed:\n{prev}\n{snap}"
            assert snap.status in REACHABLE[prev.status], f"{prev.status} -> {snap.status}"
            assert snap.version >= prev.version
            assert snap.overdue >= prev.overdue, "the overdue flag was cleared"
        newly_final = snap.is_final and (prev is None or not prev.is_final)
        newly_started = snap.started_at is not None and (prev is None or prev.started_at is None)

        status = snap.status
        assert status in TRANSITIONS and status is not CallStatus.ORPHANED
        if status is CallStatus.PENDING:
            assert snap.started_at is None and snap.completed_at is None
            assert not item.borrowed, "a nested call of a running parent never queues"
            assert not item.jumped, "admitted at once, it never queues"
            assert item.rejected is None
            assert not snap.overdue
        if newly_started:
            assert snap.started_at == now, "a call started at some other time than now"
        if snap.started_at is not None:
            assert snap.started_at >= snap.submitted_at
        if status is CallStatus.RUNNING:
            assert snap.started_at is not None and snap.completed_at is None
            assert snap.error is None
            if item.hard is not None:
                assert snap.started_at + item.hard > now, f"{call_id}: hard timeout missed"
            expect_overdue = item.overdue is not None and snap.started_at + item.overdue <= now
            assert snap.overdue is expect_overdue, (snap, now)
            self._check_progress(item, snap)

        if snap.is_final:
            assert snap.completed_at is not None
            if newly_final:
                assert snap.completed_at == now, "a call ended at some other time than now"
                self._check_ending(item, prev, snap, now)
            if snap.started_at is not None:
                assert snap.completed_at >= snap.started_at
            if status is not CallStatus.COMPLETED:
                assert snap.error is not None
            if snap.error is not None and snap.error.kind is ErrorKind.TIMED_OUT:
                assert status is CallStatus.FAILED
                assert item.hard is not None and snap.started_at is not None
                assert snap.completed_at >= snap.started_at + item.hard
                view = obs.puppet[call_id]
                assert view.cleaned_up and view.cancelled, "timed-out work not interrupted"
        item.last = snap
        return newly_started

    def _check_ending(
        self, item: Expected, prev: CallSnapshot | None, snap: CallSnapshot, now: float
    ) -> None:
        """A call may end only for a reason this very step gave it."""
        assert snap.error is None or snap.status is not CallStatus.COMPLETED
        kind = None if snap.error is None else snap.error.kind
        allowed = self.may_end.get(item.call_id)
        timed_out = (
            self.advanced
            and prev is not None
            and prev.status is CallStatus.RUNNING
            and item.hard is not None
            and prev.started_at is not None
            and prev.started_at + item.hard <= now
        )
        if timed_out:
            assert (snap.status, kind) == (CallStatus.FAILED, ErrorKind.TIMED_OUT), snap
            assert prev is not None and prev.started_at is not None and item.hard is not None
            if item.overdue is not None:
                overdue_at = prev.started_at + item.overdue
                hard_at = prev.started_at + item.hard
                # Deadlines fire in time order within the tick that passes them both.
                if overdue_at < hard_at:
                    assert snap.overdue, "overdue passed while running, but not flagged"
                elif overdue_at > hard_at:
                    assert not snap.overdue, "flagged overdue after it had already failed"
            return
        assert allowed is not None, f"{item.call_id} ended for no reason: {prev} -> {snap}"
        assert (snap.status, kind) == allowed, (snap, allowed)
        assert snap.overdue is (prev is not None and prev.overdue)

    def _check_progress(self, item: Expected, snap: CallSnapshot) -> None:
        sent = [None, *item.progress]  # the runtime's ``started`` entry, then the reports
        assert snap.progress_seq == len(sent)
        if not snap.progress_dropped:
            assert snap.progress[0].kind is ProgressKind.STARTED
        assert [entry.payload for entry in snap.progress] == sent[-PROGRESS_KEPT:]
        assert [entry.seq for entry in snap.progress] == list(
            range(len(sent) - len(snap.progress) + 1, len(sent) + 1)
        )
        assert snap.progress_dropped == max(0, len(sent) - PROGRESS_KEPT)

    def _check_caps(self, live: list[Expected], obs: Observation, started: set[str]) -> None:
        running: Counter[str] = Counter()
        from_queue: Counter[str] = Counter()
        own_cap: Counter[str] = Counter()
        queued_now: set[str] = set()
        pending: Counter[str] = Counter()
        for item in live:
            if item.status is CallStatus.RUNNING:
                running[item.session] += 1
                if not item.borrowed:
                    own_cap[item.session] += 1
                if not (item.borrowed or item.jumped):
                    from_queue[item.session] += 1
                    if item.call_id in started:
                        queued_now.add(item.session)
            elif item.status is CallStatus.PENDING:
                pending[item.session] += 1
        total = sum(running.values())
        # Every running call counts, nested ones included.
        assert obs.stats.running == total, (obs.stats.running, total)
        # Only nested calls (admitted at once) may push a count over its cap ...
        assert sum(from_queue.values()) <= MAX_RUNNING, f"global cap exceeded: {from_queue}"
        for session, count in own_cap.items():
            assert count <= MAX_PER_SESSION, f"{session} is over its cap: {count}"
        # ... and nothing leaves the queue while a count is over its cap. Within a step
        # every call ends before anything is admitted, so the last admission of a step
        # saw the counts as they are now, less one.
        if queued_now:
            assert total <= MAX_RUNNING, f"admitted over the global cap: {running}"
        for session in queued_now:
            assert running[session] <= MAX_PER_SESSION, f"{session} admitted over its cap"
        # Work-conserving: a call waits only while one of the caps is actually full.
        for session, waiting in pending.items():
            assert running[session] >= MAX_PER_SESSION or total >= MAX_RUNNING, (
                f"{session} has {waiting} pending with free slots: {running}"
            )
        # FIFO within a session: a call waiting means no later call of it has started.
        for session in SESSIONS:
            waiting_seen = False
            for item in live:
                if item.session != session or item.borrowed or item.jumped or item.rejected:
                    continue
                assert item.last is not None
                if item.last.status is CallStatus.PENDING:
                    waiting_seen = True
                elif waiting_seen and item.last.started_at is not None:
                    raise AssertionError(f"{item.call_id} started before an earlier call")
        # A running total of calls that skipped the queue, like ``calls_forgotten``.
        assert obs.stats.nested_admissions == sum(
            item.borrowed or item.jumped for item in self.expected.values()
        )

    def _check_listings(self, live: list[Expected], obs: Observation) -> None:
        for session in SESSIONS:
            listing = obs.listings[session]
            assert all(snap.session_id == session for snap in listing), "another session leaked"
            expected_ids = [item.call_id for item in live if item.session == session]
            assert [snap.call_id for snap in listing] == expected_ids, "not in submission order"
            for snap in listing:
                assert snap == obs.snapshots[snap.call_id]
            assert obs.live_listings[session] == [s for s in listing if not s.is_final]

    def _check_statistics(self, live: list[Expected], obs: Observation) -> None:
        stats = obs.stats
        counts = Counter(item.status for item in live)
        expected_counts = {s: counts[s] for s in CallStatus if s is not CallStatus.ORPHANED}
        assert dict(stats.calls_by_status) == expected_counts
        assert stats.pending == counts[CallStatus.PENDING]
        assert stats.inbox_length == 0
        assert stats.waiters == 0, "a wait(timeout=0) left its waiter behind"
        assert stats.sessions == len({item.session for item in live})
        assert stats.calls_forgotten == len(self.expected) - len(live)
        assert stats.events_dropped == 0


class RetentionMachine(LifecycleMachine):
    """The same machine with retention on: final calls are forgotten ``RETENTION`` s later."""

    RETENTION_SECONDS = RETENTION


SETTINGS = settings(
    max_examples=100,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
"""About 50 ms an example: a few seconds for both machines, more only while shrinking."""

LifecycleMachine.TestCase.settings = SETTINGS
RetentionMachine.TestCase.settings = settings(SETTINGS, max_examples=60)

TestLifecycle = LifecycleMachine.TestCase
TestLifecycleWithRetention = RetentionMachine.TestCase
