"""Worker threads for sync tools: daemon threads, so a tool that never returns
cannot keep the interpreter from exiting (anyio's own workers are joined at exit).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel

IDLE_SECONDS = 10.0
"""How long an idle worker waits for work before its thread ends."""

_Job = tuple[Callable[[], Any], Callable[[bool, Any], None]] | None
"""A function and where to report its outcome; None tells the worker to end."""


class DaemonThreads:
    """Runs blocking functions in reused daemon threads, at most ``max_threads`` at once.

    A caller cancelled while its function runs stops waiting at once and frees
    its slot; the thread finishes on its own, without effect (abandoned).
    """

    def __init__(self, max_threads: int) -> None:
        self._limiter = anyio.CapacityLimiter(max_threads)
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._busy: dict[_Worker, str] = {}
        self._closed = False

    async def run(self, fn: Callable[[], Any], *, label: str) -> Any:
        """``fn()`` in a worker thread; ``label`` names the work in ``busy()``."""
        async with self._limiter:
            token = anyio.lowlevel.current_token()
            done = anyio.Event()
            outcome: list[tuple[bool, Any]] = []

            def report(ok: bool, value: Any) -> None:
                outcome.append((ok, value))
                with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                    anyio.from_thread.run_sync(done.set, token=token)

            self._hand(label, (fn, report))
            await done.wait()
        ok, value = outcome[0]
        if ok:
            return value
        raise value

    def close(self) -> None:
        """End the idle threads now, and each busy one when its work returns."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.jobs.put(None)

    def busy(self) -> list[str]:
        """The labels of the work running in a thread right now."""
        with self._lock:
            return list(self._busy.values())

    def _hand(self, label: str, job: _Job) -> None:
        with self._lock:
            worker = self._idle.pop() if self._idle else _Worker(self)
            self._busy[worker] = label
        worker.jobs.put(job)

    def _finished(self, worker: _Worker) -> bool:
        """Back to idle; False once the pool is closed (the thread then ends)."""
        with self._lock:
            self._busy.pop(worker, None)
            if self._closed:
                return False
            self._idle.append(worker)
            return True

    def _retire(self, worker: _Worker) -> bool:
        """An idle worker asks to end; False if a job was just handed to it."""
        with self._lock:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False


class _Worker:
    __slots__ = ("jobs", "pool")

    def __init__(self, pool: DaemonThreads) -> None:
        self.pool = pool
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="agentos tool worker", daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                job = self.jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                if self.pool._retire(self):
                    return
                continue
            if job is None:
                return
            fn, report = job
            try:
                value, ok = fn(), True
            except BaseException as error:  # handed to the waiting task, which decides
                value, ok = error, False
            serving = self.pool._finished(self)
            report(ok, value)
            del value, fn, report, job
            if not serving:
                return
