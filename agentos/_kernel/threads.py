"""Worker threads for sync tools: daemon threads, so a tool that never returns
cannot keep the interpreter from exiting (anyio's own workers are joined at exit).

A call waiting for a thread is one ``_Job`` in a queue and one future: a thread that
finishes takes the next job itself, and nothing of the wait is a task of its own (in
a soak, a thousand calls wait for a thread at any moment).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections import deque
from collections.abc import Callable
from enum import Enum
from typing import Any

IDLE_SECONDS = 10.0
"""How long an idle worker waits for work before its thread ends."""


class _State(Enum):
    QUEUED = "queued"
    RUNNING = "running"
    ABANDONED = "abandoned"
    """Its caller stopped waiting: not run if it was queued, unheard if it runs."""
    DONE = "done"


class _Job:
    """``fn(*args)`` and the future its caller awaits."""

    __slots__ = ("args", "fn", "future", "label", "loop", "state")

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        label: str,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.fn = fn
        self.args = args
        self.label = label
        self.loop = loop
        self.future: asyncio.Future[tuple[bool, Any]] = loop.create_future()
        self.state = _State.QUEUED


_END = object()
"""What a worker is handed to end its thread."""


class DaemonThreads:
    """Runs blocking functions in reused daemon threads, at most ``max_threads`` at once,
    first come first served.

    A caller cancelled while its function runs stops waiting at once and frees
    its slot; the thread finishes on its own, without effect (abandoned). A caller
    cancelled while it waits for a slot leaves its function unrun.
    """

    def __init__(self, max_threads: int) -> None:
        self._max = max_threads
        self._lock = threading.Lock()
        self._queue: deque[_Job] = deque()
        self._queued_abandoned = 0
        self._slots = 0
        """Jobs running whose caller still waits: at most ``max_threads``."""
        self._idle: list[_Worker] = []
        self._busy: dict[_Worker, str] = {}
        self._closed = False

    async def run(self, fn: Callable[..., Any], *args: Any, label: str) -> Any:
        """``fn(*args)`` in a worker thread; ``label`` names the work in ``busy()``."""
        job = _Job(fn, args, label, asyncio.get_running_loop())
        with self._lock:
            starting = self._start(job) if self._slots < self._max else None
            if starting is None:
                self._queue.append(job)
        if starting is not None:
            starting.hand(job)
        try:
            ok, value = await job.future
        except BaseException:  # cancelled: the function is left unrun, or runs unheard
            self._abandon(job)
            raise
        if ok:
            return value
        raise value

    def close(self) -> None:
        """End the idle threads now, and each busy one when no job is left for it."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.jobs.put(_END)

    def busy(self) -> list[str]:
        """The labels of the work running in a thread right now."""
        with self._lock:
            return list(self._busy.values())

    def _start(self, job: _Job, worker: _Worker | None = None) -> _Worker:
        """Take a slot for ``job`` on ``worker``, an idle one or a new one (the lock held;
        a new one's thread starts when it is handed the job)."""
        self._slots += 1
        job.state = _State.RUNNING
        if worker is None:
            worker = self._idle.pop() if self._idle else _Worker(self)
        self._busy[worker] = job.label
        return worker

    def _next(self) -> _Job | None:
        """The first queued job its caller still waits for, if a slot is free (the lock
        held)."""
        while self._queue and self._slots < self._max:
            job = self._queue.popleft()
            if job.state is _State.QUEUED:
                return job
            self._queued_abandoned -= 1
        return None

    def _abandon(self, job: _Job) -> None:
        with self._lock:
            if job.state is _State.QUEUED:
                job.state = _State.ABANDONED
                self._queued_abandoned += 1
                if self._queued_abandoned > max(64, len(self._queue) // 2):
                    self._queue = deque(j for j in self._queue if j.state is _State.QUEUED)
                    self._queued_abandoned = 0
                return
            if job.state is not _State.RUNNING:
                return
            job.state = _State.ABANDONED
            self._slots -= 1
            following = self._next()
            starting = None if following is None else self._start(following)
        if starting is not None and following is not None:
            starting.hand(following)

    def _finished(self, worker: _Worker, job: _Job) -> _Job | object | None:
        """The job ``worker`` runs next; None: it waits, idle; ``_END``: its thread ends."""
        with self._lock:
            del self._busy[worker]
            if job.state is _State.RUNNING:
                job.state = _State.DONE
                self._slots -= 1
            following = self._next()
            if following is not None:
                self._start(following, worker)
                return following
            if self._closed:
                return _END
            self._idle.append(worker)
            return None

    def _retire(self, worker: _Worker) -> bool:
        """An idle worker asks to end; False if a job was just handed to it."""
        with self._lock:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False


def _settle(future: asyncio.Future[tuple[bool, Any]], ok: bool, value: Any) -> None:
    if not future.done():  # not cancelled meanwhile
        future.set_result((ok, value))


class _Worker:
    """A thread that runs jobs, handed or taken from the queue, until it idles too long."""

    __slots__ = ("jobs", "pool", "started")

    def __init__(self, pool: DaemonThreads) -> None:
        self.pool = pool
        self.jobs: queue.SimpleQueue[_Job | object] = queue.SimpleQueue()
        self.started = False

    def hand(self, job: _Job) -> None:
        """Run ``job`` next (called without the pool's lock: it may start the thread)."""
        self.jobs.put(job)
        if not self.started:
            self.started = True
            threading.Thread(target=self._serve, name="agentos tool worker", daemon=True).start()

    def _serve(self) -> None:
        job: _Job | object | None = None
        while True:
            if job is None:
                try:
                    job = self.jobs.get(timeout=IDLE_SECONDS)
                except queue.Empty:
                    if self.pool._retire(self):
                        return
                    continue
            if not isinstance(job, _Job):
                return
            try:
                value, ok = job.fn(*job.args), True
            except BaseException as error:  # handed to the waiting task, which decides
                value, ok = error, False
            following = self.pool._finished(self, job)
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                job.loop.call_soon_threadsafe(_settle, job.future, ok, value)
            del value
            job = following
