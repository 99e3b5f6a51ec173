"""Running a call's work: the work task group, retries, worker threads and isolated runners.

A call's work runs in an asyncio task of its own, which an ``Interrupt`` made with it
cancels (no task group's bookkeeping, and no anyio cancel scope: a third less memory
a call, then a tenth of its CPU). Hand-offs run in the work group, which a task of
its own holds. Closing cancels both, and stops waiting for a tool that swallows its
cancellation after a grace. Sync tools run in daemon worker threads, ``runner``
calls through a registered ``IsolatedRunner``. A call reports once, after its
last attempt, with a value checked here. Stopping a call cancels its task
(batched, from a loop callback) or sets its thread's cancel flag.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Coroutine
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any

import anyio
import esper
from anyio.abc import TaskGroup

from agentos._errors import CallCancelled
from agentos._kernel.context import ToolContext
from agentos._kernel.interrupt import Interrupt
from agentos._kernel.isolation import IsolatedCall
from agentos._kernel.isolation import IsolatedRunner
from agentos._kernel.json_values import ResultTooLarge
from agentos._kernel.json_values import safe_text
from agentos._kernel.json_values import to_json
from agentos._kernel.questions import Questions
from agentos._kernel.reply_reports import ReplyReports
from agentos._kernel.threads import DaemonThreads
from agentos._kernel.tools import Tool
from agentos._kernel.tools import ToolFailure
from components import CallError
from components import Entity
from components import ErrorKind
from components import ReportFailure
from components import ReportResult
from components import TickContext
from components import ToolCallConfig
from components import ToolCallState
from components import finished_why

if TYPE_CHECKING:
    from agentos._kernel.kernel import Kernel

INTERRUPTS_PER_PASS = 1_000
"""Task cancels delivered in one pass of the event loop."""
_STRAY_CANCEL = (
    "the tool raised CancelledError although nobody cancelled this call "
    "(did it await a task or future that something else cancelled?)"
)


class Work:
    """Starts, runs and stops the work of calls; the kernel calls it from tick effects."""

    def __init__(
        self,
        kernel: Kernel,
        tools: Mapping[str, Tool[Any]],
        runners: Mapping[str, IsolatedRunner],
        *,
        max_threads: int,
        max_result_chars: int | None,
    ) -> None:
        self._kernel = kernel
        self._post = kernel.post
        self._post_unhurried = kernel.post_unhurried
        self._inputs = kernel.ctx.inputs
        self._wall = kernel.clock.wall
        self._listened = kernel.listeners.callbacks
        self._tools = tools
        self._runners = runners
        self._max_threads = max_threads
        self._max_result_chars = max_result_chars
        self.replies = ReplyReports(kernel)
        """The reports held until the last call of their model reply ends."""
        self.questions = Questions()
        """The questions calls put to a person, and the host's hook that answers them."""
        self._ask = self.questions.ask
        self.running: dict[Entity, ToolContext] = {}
        """The context of every started call whose work was not stopped or reported."""
        self._live: dict[Entity, tuple[ToolCallConfig, asyncio.Task[Any], Interrupt]] = {}
        """Calls whose task has not ended: their interrupt for closing, their names for the log
        if closing abandons them, and the only strong reference to their task."""
        self._all_ended: asyncio.Event | None = None
        """Set while closing, once the last call's task has ended."""
        self._interrupts: list[Interrupt] = []
        self._done = anyio.Event()
        self._task: asyncio.Task[None] | None = None
        self.failures = 0
        """The work group failed (only a bug of ours can do that)."""

    async def open(self) -> None:
        """Start the task that holds the work group, and wait until the group is open."""
        self._threads = DaemonThreads(self._max_threads)
        self._cancelled_exc = anyio.get_cancelled_exc_class()
        self._loop = asyncio.get_running_loop()
        ready = anyio.Event()
        self._task = self._loop.create_task(self._hold(ready))
        await ready.wait()

    async def _hold(self, ready: anyio.Event) -> None:
        """The task whose task group runs tools and hand-offs (not a child of the runtime's)."""
        try:
            async with anyio.create_task_group() as group:
                self.group: TaskGroup = group
                ready.set()
                await anyio.sleep_forever()
        except BaseException as error:  # only a bug of ours can get here
            self.failures += 1
            self._kernel.ctx.log.error(
                "runtime.work_failed", error=f"{type(error).__name__}: {error}"
            )
        finally:
            self._done.set()

    async def close(self, grace: float) -> None:
        """Cancel every call's work and the work group, wait up to ``grace`` seconds for
        them, then abandon the rest."""
        self._all_ended = ended = asyncio.Event()
        if not self._live:
            ended.set()
        for _, _, interrupt in self._live.values():
            interrupt.cancel(always=True)
        self.group.cancel_scope.cancel()
        with anyio.move_on_after(grace, shield=True):
            await self._done.wait()
            await ended.wait()
        if not (self._done.is_set() and ended.is_set()):
            self._abandon(grace)
        self._threads.close()

    def _abandon(self, grace: float) -> None:
        """Stop waiting for tools that ignore their cancellation, and say which."""
        self._kernel.ctx.log.warning(
            "runtime.work_abandoned",
            grace_seconds=grace,
            calls=sorted(
                f"{config.call_id} ({config.tool_name})" for config, _, _ in self._live.values()
            ),
            threads=sorted(self._threads.busy()),
        )
        # asyncio.run would wait for these tasks forever when it ends the loop
        unregister = getattr(asyncio.tasks, "_unregister_task", None)
        if unregister is not None and self._task is not None:
            for task in (*(task for _, task, _ in self._live.values()), self._task):
                if task is not None:
                    unregister(task)

    def start(self, entity: Entity) -> None:
        """Start the admitted call's work (the world is switched in)."""
        config = esper.component_for_entity(entity, ToolCallConfig)
        args = self._inputs.pop(entity)  # the task holds it: a final call keeps none
        tool = self._tools.get(config.tool_name)
        if tool is None:  # its toolset dropped it (a server's new list) while the call waited
            message = f"tool {config.tool_name!r} was removed before the call could start"
            self._post(ReportFailure(entity, CallError(ErrorKind.UNKNOWN_TOOL, message)))
            return
        threaded = config.runner is None and not tool.is_async
        context = ToolContext(
            entity,
            config,
            self._post,
            self._post_unhurried,
            self._wall,
            self._ask,
            threaded=threaded,
        )
        self.running[entity] = context
        context._handle = interrupt = Interrupt(self._loop)
        self.replies.started(config)
        # The attempt's parts go as arguments: binding them in a partial per call cost
        # about 10 us a call in the lifecycle benchmark (60 -> 70+ us).
        task = self._loop.create_task(self._run(entity, config, tool, args, context, interrupt))
        if not task.done():  # an eager task may have ended already (and dropped its entry)
            self._live[entity] = (config, task, interrupt)

    def stop(self, entity: Entity) -> None:
        """Interrupt the call's work: the runtime ended the call."""
        running = self.running.pop(entity, None)
        if running is not None:
            handle = running._cancel(_why_stopped(self._kernel.ctx, entity))
            if handle is not None:
                if not self._interrupts:
                    self._loop.call_soon(self._deliver_interrupts)
                self._interrupts.append(handle)

    def spawn(self, follow_up: Callable[[], Awaitable[None]]) -> None:
        """Run a hand-off in a task of its own."""
        self.group.start_soon(self._kernel.follow, follow_up)

    def interrupting(self) -> bool:
        """Whether cancels are still on their way to their tasks."""
        return bool(self._interrupts)

    def _deliver_interrupts(self) -> None:
        """Cancel tasks from a loop callback, at most ``INTERRUPTS_PER_PASS`` a loop pass.

        Outside any task, anyio does not format the calling task into the
        reason (half the cost of a cancel); each cancel wakes a task that
        unwinds in the next pass, so cancelling 100,000 running calls never
        stalls the loop for long.
        """
        handles = self._interrupts
        batch, self._interrupts = handles[:INTERRUPTS_PER_PASS], handles[INTERRUPTS_PER_PASS:]
        if self._interrupts:
            self._loop.call_soon(self._deliver_interrupts)
        for handle in batch:
            handle.cancel()

    async def _run(
        self,
        entity: Entity,
        config: ToolCallConfig,
        tool: Tool[Any],
        args: object,
        context: ToolContext,
        interrupt: Interrupt,
    ) -> None:
        """The call's task: run the work, again after a failure while ``retries`` allow,
        and report once.

        Only a cancel the runtime asked for ends the task cancelled (and quietly); a tool
        that raises ``CancelledError`` on its own ends its call ``failed``.
        """
        kernel = self._kernel
        attempts = config.retries + 1
        reported = False
        interrupt.enter()
        try:
            for attempt in range(1, attempts + 1):
                try:
                    if config.timeouts.attempt is not None:
                        attempt_run = self._attempt(entity, config, tool, args, context)
                        report = await self._timed(entity, config.timeouts.attempt, attempt_run)
                    elif tool.is_async and config.runner is None:  # _attempt's, inlined:
                        fn = tool.fn  # one coroutine fewer per call in flight
                        value = await (fn(args, context) if tool.takes_context else fn(args))
                        report = _settle(entity, value, self._max_result_chars)
                    else:
                        report = await self._attempt(entity, config, tool, args, context)
                except self._cancelled_exc:
                    if context.cancelled or kernel.closed or cancel_requested():
                        raise
                    error = CallError(ErrorKind.TOOL_ERROR, _STRAY_CANCEL)
                    report = ReportFailure(entity, error)
                except BaseException as error:
                    report = ReportFailure(entity, _failure(error))
                if isinstance(report, ReportFailure) and attempt < attempts:
                    message = report.error.message
                    context.log(f"attempt {attempt} of {attempts} failed: {message}")
                    continue
                break
            interrupt.over()
            self.running.pop(entity, None)
            reported = True
            if self.replies.hold(config, report):
                pass  # its reply's last call applies it, or the next loop pass
            elif config.session_id in self._listened and not kernel.closed:
                await kernel.report_here(config.session_id, report)
            else:
                self._post(report)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # only a bug of ours, or a cancel from outside
            if not isinstance(error, self._cancelled_exc):
                self.failures += 1
                kernel.ctx.log.error(
                    "runtime.work_failed", error=f"{type(error).__name__}: {error}"
                )
        finally:
            if not reported:
                self.replies.ended(config)
            self._live.pop(entity, None)
            if self._all_ended is not None and not self._live:
                self._all_ended.set()

    async def _timed(
        self,
        entity: Entity,
        seconds: float,
        attempt: Coroutine[Any, Any, ReportResult | ReportFailure],
    ) -> ReportResult | ReportFailure:
        """``attempt`` bounded by ``seconds`` (``timeouts.attempt``) on the runtime's clock:
        past it the attempt is interrupted and fails timed out (a sync tool's thread runs on,
        unheard)."""
        clock = self._kernel.clock
        deadline = clock.monotonic() + seconds
        with anyio.CancelScope() as scope:
            budget = clock.sleep_budget(deadline)
            if budget is not None:
                scope.deadline = anyio.current_time() + budget

            def check() -> None:
                if clock.sleep_budget(deadline) == 0.0:
                    scope.cancel()

            forget = clock.on_advance(check)
            try:
                return await attempt
            finally:
                forget()
        message = f"attempt timed out after {seconds:g} s"
        return ReportFailure(entity, CallError(ErrorKind.TIMED_OUT, message))

    async def _attempt(
        self,
        entity: Entity,
        config: ToolCallConfig,
        tool: Tool[Any],
        args: object,
        context: ToolContext,
    ) -> ReportResult | ReportFailure:
        """One run of the work, its value checked: a sync tool's in its own thread."""
        limit = self._max_result_chars
        if config.runner is not None:
            call = IsolatedCall(
                config.call_id,
                config.session_id,
                tool.name,
                config.tool_input,
                # the base of a decorated call's (``decorated:run_isolated``)
                (config.disposition or "run_isolated").rpartition(":")[2],
                limit,
            )
            return _settle(entity, await self._runners[config.runner].run(call, context), limit)
        if tool.is_async:
            if tool.takes_context:
                return _settle(entity, await tool.fn(args, context), limit)
            return _settle(entity, await tool.fn(args), limit)
        label = f"{config.call_id} ({tool.name})"
        report: ReportResult | ReportFailure = await self._threads.run(
            _run_sync, tool, args, context, entity, limit, label=label
        )
        return report


def cancel_requested() -> bool:
    """Whether someone asked the current task to stop (asyncio counts the requests)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # not on asyncio: trust the exception
        return True
    return task is None or task.cancelling() > 0


def _run_sync(
    tool: Tool[Any], args: object, context: ToolContext, entity: Entity, limit: int | None
) -> ReportResult | ReportFailure:
    """A sync tool's run, in a worker thread."""
    value = tool.fn(args, context) if tool.takes_context else tool.fn(args)
    return _settle(entity, value, limit)


def _settle(entity: Entity, value: Any, limit: int | None) -> ReportResult | ReportFailure:
    """The report of a value a tool returned: checked once, here, for every later reader."""
    if isinstance(value, ToolFailure):
        return ReportFailure(entity, CallError(ErrorKind.TOOL_ERROR, safe_text(value.message)))
    try:
        return ReportResult(entity, to_json(value, limit=limit))
    except ResultTooLarge as error:
        message = (
            f"the tool's result is too large: {error}; return less (a summary, a page, "
            "or where the full data was written)"
        )
        return ReportFailure(entity, CallError(ErrorKind.INVALID_RESULT, message))
    except (TypeError, ValueError) as error:
        message = f"the tool returned a value that is not JSON: {error}"
        return ReportFailure(entity, CallError(ErrorKind.INVALID_RESULT, message))


def _failure(error: BaseException) -> CallError:
    """The error a call ends with when its work raised."""
    if isinstance(error, CallCancelled):
        return CallError(ErrorKind.CANCELLED, str(error))
    text = safe_text(str(error))
    message = f"{type(error).__name__}: {text}" if text else type(error).__name__
    return CallError(ErrorKind.TOOL_ERROR, message)


def _why_stopped(ctx: TickContext, entity: Entity) -> str | None:
    """The reason a cancel gave, or why the call failed (it timed out)."""
    record = ctx.finished.get(entity)
    if record is not None:  # the tick that ended it has retired it
        return finished_why(record)
    state = esper.try_component(entity, ToolCallState)
    if state is None:
        return None
    if state.cancel_reason is not None:
        return state.cancel_reason
    return None if state.error is None else state.error.message
