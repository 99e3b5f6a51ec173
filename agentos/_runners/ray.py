"""Tool calls on a Ray cluster: ``RayRunner``, an isolated runner (``agentos[ray]``).

A sync tool's call runs as a Ray task, an async tool's as a method of an async actor; both
are streaming generators that yield each progress report as it is made, then the outcome,
so progress reaches the call while it runs. The event loop never blocks on Ray (each item
is awaited). Cancelling the call (a cancel, a timeout, a stop) cancels a task with
``force=True``, which ends its worker process whatever the tool is doing, and an actor's
method softly: the async tool sees ``CancelledError`` at its next await, as in process, and
its cleanup runs. A worker, actor or node that dies fails the call naming it (Ray's own
retry, which would run the tool twice, is off); a result or an error that cannot be sent
back (it does not pickle) fails it too, and so does a lost cluster (``ray_watch``).
``ray`` is imported when a call first runs, so ``import agentos`` stays light.
"""

from __future__ import annotations

import asyncio
import os
import queue
import sys
import threading
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agentos._kernel.context import ToolContext
from agentos._kernel.isolation import IsolatedCall
from agentos._kernel.json_values import ResultTooLarge
from agentos._kernel.json_values import to_json
from agentos._kernel.tools import Tool
from agentos._kernel.tools import ToolFailure
from agentos._runners.ray_watch import CLUSTER
from agentos._runners.ray_watch import ClusterLost
from components import Json

_PROGRESS, _LOG, _RESULT, _FAILED, _DONE = "progress", "log", "result", "failed", "done"
_Report = tuple[str, object]


class RayRunner:
    """Runs the calls of ``tools`` on Ray. Register it with
    ``runtime.add_runner("ray", RayRunner(tools))`` and give an agent
    ``isolated_runner = "ray"`` (or submit with ``CallOptions(runner="ray")``).

    ``options``: passed to the tasks and the actor (``num_cpus``, ``resources``,
    ``runtime_env``...). Async tools share one async actor, started on their first call
    (again if it dies), running up to ``max_concurrency`` calls at once (1,000).
    Nothing is run again after its worker dies (``max_retries=0``): a tool's side
    effects happen once, and the call fails saying why. Without a ``runtime_env`` the
    workers get this process's ``sys.path`` as their ``PYTHONPATH``, so they import the
    tools' modules from where this process does (an agent file's directory, say) on a
    local cluster. If the application has not called ``ray.init``, the first call does,
    quietly: what workers print stays in Ray's log files (``log_to_driver=False``), and
    Ray's logger, like agentos's, says nothing unless the application configures logging.
    """

    def __init__(self, tools: Iterable[Tool[Any]], **options: Any) -> None:
        self.tools = {item.name: item for item in tools}
        self.options = options
        self._task: Any = None
        self._actor: Any = None
        self._generation = 0

    async def run(self, call: IsolatedCall, ctx: ToolContext) -> Json | ToolFailure:
        import ray

        found = self.tools.get(call.tool_name)
        if found is None:
            known = ", ".join(sorted(self.tools)) or "none"
            return ToolFailure(f"the Ray runner has no tool {call.tool_name!r} (it has: {known})")
        try:
            generation = await CLUSTER.connected(ray)
        except ClusterLost as gone:
            return ToolFailure(str(gone))
        work = _Work(
            found.fn,
            found.input_model,
            call.tool_input,
            found.takes_context,
            call.call_id,
            call.max_result_chars,
        )
        actor = None
        if found.is_async:
            actor = self._async_actor(ray, generation)
            stream = actor.run.options(num_returns="streaming").remote(work)
        else:
            stream = self._sync_task(ray).remote(work)
        lost = CLUSTER.lost()
        outcome = asyncio.ensure_future(self._outcome(stream, actor, ctx))
        try:
            await asyncio.wait((outcome, lost), return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            # The call was cancelled: end the work at once (an actor's method is cancelled
            # softly, since force would end every call the actor runs).
            outcome.cancel()
            if not lost.done():
                ray.cancel(stream, force=actor is None)
            raise
        finally:
            CLUSTER.forget(lost)
        if outcome.done():
            return outcome.result()
        outcome.cancel()
        return ToolFailure(lost.result())

    async def _outcome(self, stream: Any, actor: Any, ctx: ToolContext) -> Json | ToolFailure:
        """The call's outcome from its stream, each progress report passed on as it comes."""
        import ray.exceptions as failures

        try:
            async for ref in stream:
                kind, value = await ref
                if kind == _PROGRESS:
                    ctx.progress(value)
                elif kind == _LOG:
                    ctx.log(str(value))
                elif kind == _RESULT:
                    return value  # type: ignore[no-any-return]
                else:
                    return ToolFailure(str(value))
        except (failures.ActorDiedError, failures.ActorUnavailableError) as error:
            if self._actor is actor:
                self._actor = None  # the next async call starts another
            return ToolFailure(f"the Ray actor running the call died: {_first_line(error)}")
        except failures.WorkerCrashedError as error:
            return ToolFailure(f"the Ray worker running the call died: {_first_line(error)}")
        except failures.NodeDiedError as error:
            return ToolFailure(f"the Ray node running the call died: {_first_line(error)}")
        except failures.RayTaskError as error:  # raised in the worker, outside the tool
            return ToolFailure(f"the Ray task failed: {_first_line(error)}")
        except failures.RaySystemError as error:
            return ToolFailure(f"Ray could not run the call: {_first_line(error)}")
        return ToolFailure("the Ray task ended without an outcome")

    def _options(self) -> dict[str, Any]:
        paths = os.pathsep.join(path for path in sys.path if path)
        return {
            "runtime_env": {"env_vars": {"PYTHONPATH": paths}},
            "max_retries": 0,
            **self.options,
        }

    def _sync_task(self, ray: Any) -> Any:
        if self._task is None:
            remote = ray.remote(num_returns="streaming")(_run_in_worker)
            self._task = remote.options(**self._options())
        return self._task

    def _async_actor(self, ray: Any, generation: int) -> Any:
        if self._actor is None or self._generation != generation:  # or of a lost cluster
            options = self._options()
            options.pop("max_retries")  # an actor's is max_restarts, 0 by default
            options.setdefault("max_concurrency", 1000)
            self._actor = ray.remote(_AsyncWorker).options(**options).remote()
            self._generation = generation
        return self._actor


def _first_line(error: BaseException) -> str:
    lines = [line for line in str(error).splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__


class _WorkerContext:
    """What a tool sees of its call inside a Ray worker: progress and log lines."""

    def __init__(self, call_id: str, report: Callable[[_Report], None]) -> None:
        self.call_id = call_id
        self._report = report
        self.cancelled = False

    def progress(self, payload: object, **_: object) -> None:
        self._report((_PROGRESS, payload))

    def log(self, line: str) -> None:
        self._report((_LOG, str(line)))

    def heartbeat(self) -> None:
        """Nothing to tell: the worker is alive while it runs."""

    def check_cancelled(self) -> None:
        """A cancelled Ray task's worker is ended, so a running sync tool is never
        cancelled; an async tool hears ``CancelledError``."""


def _outcome(value: object, limit: int | None) -> _Report:
    """What the worker sends back: a result longer than ``limit`` is refused here, before
    it leaves the worker; one that is not JSON is left for the runtime to name."""
    if isinstance(value, ToolFailure):
        return (_FAILED, value.message)
    try:
        to_json(value, limit=limit)
    except ResultTooLarge as error:
        return (_FAILED, f"the tool's result is too large: {error}; refused in the Ray worker")
    except (TypeError, ValueError):
        pass
    return (_RESULT, value)


def _raised(error: BaseException) -> _Report:
    """The failure of a tool that raised, worded as in process (``SystemExit: 3``)."""
    text = str(error)
    return (_FAILED, f"{type(error).__name__}: {text}" if text else type(error).__name__)


@dataclass(frozen=True)
class _Work:
    """One call as its worker runs it: the tool's function, its input, and the longest
    result it may send back (``limit``, in characters)."""

    fn: Any
    input_model: Any
    tool_input: Any
    takes_context: bool
    call_id: str
    limit: int | None

    def start(self, context: _WorkerContext) -> Any:
        """The tool's value on its validated input (an async tool's: a coroutine)."""
        args = self.input_model.model_validate(self.tool_input)
        return self.fn(args, context) if self.takes_context else self.fn(args)


def _run_in_worker(work: _Work) -> Iterator[_Report]:
    """The Ray task for a sync tool: validate the input, run the tool in a thread, yield
    its reports as they come and then its outcome (a result that does not pickle fails in
    Ray)."""
    reports: queue.Queue[_Report] = queue.Queue()
    context = _WorkerContext(work.call_id, reports.put)
    outcome: list[_Report] = []

    def call_tool() -> None:
        try:
            value = work.start(context)
            if asyncio.iscoroutine(value):  # a coroutine function that hides what it is
                value = asyncio.run(value)
            outcome.append(_outcome(value, work.limit))
        except BaseException as error:  # SystemExit too: it ends the call, not the worker
            outcome.append(_raised(error))
        finally:
            reports.put((_DONE, None))

    threading.Thread(target=call_tool, daemon=True).start()
    while (report := reports.get())[0] != _DONE:
        yield report
    yield outcome[0]


class _AsyncWorker:
    """The actor for async tools: each call's tool runs as a task of the actor's event
    loop, so closing the call's stream (Ray's soft cancel) cancels the tool itself."""

    async def run(self, work: _Work) -> AsyncIterator[_Report]:
        reports: asyncio.Queue[_Report] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def tell(report: _Report) -> None:  # a tool may report from a thread of its own
            loop.call_soon_threadsafe(reports.put_nowait, report)

        context = _WorkerContext(work.call_id, tell)

        async def call_tool() -> _Report:
            try:
                return _outcome(await work.start(context), work.limit)
            except (Exception, SystemExit, KeyboardInterrupt) as error:
                return _raised(error)
            finally:
                tell((_DONE, None))  # after every report, whichever thread made them

        task = asyncio.ensure_future(call_tool())
        try:
            while (report := await reports.get())[0] != _DONE:
                yield report
            yield await task
        finally:
            task.cancel()  # a no-op once it has ended
