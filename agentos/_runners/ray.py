"""Tool calls on a Ray cluster: ``RayRunner``, an isolated runner (``agentos[ray]``).

A call's work runs as a Ray task on whatever cluster ``ray.init()`` reached, as a
streaming generator: the task runs the tool in a thread of its worker and yields each
progress report as it is made, then the outcome, so progress reaches the call while it
runs. The event loop never blocks on Ray (each item is awaited). Cancelling the call
(a cancel, a timeout, a stop) cancels the task with ``force=True``, which ends its worker
process whatever the tool is doing. A worker or node that dies fails the call naming
it (Ray's own retry, which would run the tool twice, is off); a result or an error that
cannot be sent back (it does not pickle) fails it too.
``ray`` is imported when a call first runs, so ``import agentos`` stays light.
"""

from __future__ import annotations

import asyncio
import os
import queue
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from agentos._kernel.context import ToolContext
from agentos._kernel.isolation import IsolatedCall
from agentos._kernel.tools import Tool, ToolFailure
from components import Json

_PROGRESS, _LOG, _RESULT, _FAILED = "progress", "log", "result", "failed"


class RayRunner:
    """Runs the calls of ``tools`` as Ray tasks. Register it with
    ``runtime.add_runner("ray", RayRunner(tools))`` and give an agent
    ``isolated_runner = "ray"`` (or submit with ``CallOptions(runner="ray")``).

    ``options``: passed to the task (``num_cpus``, ``resources``, ``runtime_env``...).
    A task is never run again after its worker dies (``max_retries=0``): a tool's side
    effects happen once, and the call fails saying why; pass ``max_retries`` to change it.
    Without a ``runtime_env`` the workers get this process's ``sys.path`` as their
    ``PYTHONPATH``, so they import the tools' modules from where this process does (an
    agent file's directory, say) on a local cluster.
    """

    def __init__(self, tools: Iterable[Tool[Any]], **options: Any) -> None:
        self.tools = {item.name: item for item in tools}
        self.options = options
        self._remote: Any = None

    async def run(self, call: IsolatedCall, ctx: ToolContext) -> Json | ToolFailure:
        import ray
        import ray.exceptions

        found = self.tools.get(call.tool_name)
        if found is None:
            known = ", ".join(sorted(self.tools)) or "none"
            return ToolFailure(f"the Ray runner has no tool {call.tool_name!r} (it has: {known})")
        if self._remote is None:
            paths = os.pathsep.join(path for path in sys.path if path)
            options = {
                "runtime_env": {"env_vars": {"PYTHONPATH": paths}},
                "max_retries": 0,
                **self.options,
            }
            self._remote = ray.remote(num_returns="streaming")(_run_in_worker).options(**options)
        stream = self._remote.remote(
            found.fn, found.input_model, call.tool_input, found.takes_context, call.call_id
        )
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
        except ray.exceptions.WorkerCrashedError as error:
            return ToolFailure(f"the Ray worker running the call died: {_first_line(error)}")
        except ray.exceptions.NodeDiedError as error:
            return ToolFailure(f"the Ray node running the call died: {_first_line(error)}")
        except ray.exceptions.RayTaskError as error:  # raised in the worker, outside the tool
            return ToolFailure(f"the Ray task failed: {_first_line(error)}")
        except ray.exceptions.RaySystemError as error:
            return ToolFailure(f"Ray could not run the call: {_first_line(error)}")
        except BaseException:
            ray.cancel(stream, force=True)  # the call was cancelled: end the work at once
            raise
        return ToolFailure("the Ray task ended without an outcome")


def _first_line(error: BaseException) -> str:
    lines = [line for line in str(error).splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__


class _WorkerContext:
    """What a tool sees of its call inside a Ray worker: progress and log lines."""

    def __init__(self, call_id: str, reports: queue.Queue[tuple[str, object]]) -> None:
        self.call_id = call_id
        self._reports = reports
        self.cancelled = False

    def progress(self, payload: object, **_: object) -> None:
        self._reports.put((_PROGRESS, payload))

    def log(self, line: str) -> None:
        self._reports.put((_LOG, str(line)))

    def heartbeat(self) -> None:
        """Nothing to tell: the worker is alive while it runs."""

    def check_cancelled(self) -> None:
        """A cancelled Ray task's worker is ended, so a running tool is never cancelled."""


def _run_in_worker(
    fn: Any, input_model: Any, tool_input: Any, takes_context: bool, call_id: str
) -> Iterator[tuple[str, object]]:
    """The Ray task: validate the input, run the tool in a thread, yield its reports as
    they come and then its outcome (a result that does not pickle fails in Ray)."""
    reports: queue.Queue[tuple[str, object]] = queue.Queue()
    context = _WorkerContext(call_id, reports)
    outcome: list[tuple[str, object]] = []

    def work() -> None:
        try:
            args = input_model.model_validate(tool_input)
            value = fn(args, context) if takes_context else fn(args)
            if asyncio.iscoroutine(value):
                value = asyncio.run(value)
            if isinstance(value, ToolFailure):
                outcome.append((_FAILED, value.message))
            else:
                outcome.append((_RESULT, value))
        except Exception as error:
            outcome.append((_FAILED, f"{type(error).__name__}: {error}"))
        finally:
            reports.put(("done", None))

    threading.Thread(target=work, daemon=True).start()
    while True:
        kind, value = reports.get()
        if kind == "done":
            break
        yield kind, value
    yield outcome[0]
