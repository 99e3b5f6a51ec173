"""The watch over this process's Ray cluster: its loss fails the calls on it, the host lives.

Ray ends a driver whose cluster's GCS has not answered for
``gcs_rpc_server_reconnect_timeout_s`` (60 s by default), every session of the host with
it. So the runner connects with that bound lifted, and a thread asks the GCS a cheap
question every second: two answers missed in a row and the cluster is lost, and every
call waiting on it fails naming its address. A later call reconnects if the address
answers again, or fails at once saying it does not.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import time
import warnings
from typing import Any

RECONNECT_BOUND = "RAY_gcs_rpc_server_reconnect_timeout_s"
_A_YEAR = str(365 * 24 * 3600)
PING_EVERY = 1.0
PING_TIMEOUT = 2.0
MISSED_TO_LOSE = 2


class ClusterLost(Exception):
    """The Ray cluster this process was connected to, or would join, does not answer; the
    message names it."""


class ClusterWatch:
    """This process's connection to Ray: made on the first call, watched, made again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: set[tuple[asyncio.AbstractEventLoop, asyncio.Future[str]]] = set()
        self._watching = False
        self._lost: str | None = None
        self._address: str | None = None
        self.generation = 0
        """Bumped on each new connection: an actor of an older one is gone."""

    async def connected(self, ray: Any) -> int:
        """The connection's generation, connecting first if need be (in a thread); raises
        ``ClusterLost`` if the cluster was lost and its address still does not answer."""
        if self._watching and self._lost is None and ray.is_initialized():
            return self.generation
        return await asyncio.to_thread(self._connect, ray)

    def lost(self) -> asyncio.Future[str]:
        """A future set to the loss's message when the cluster is lost; ``forget`` it after."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()
        with self._lock:
            if self._lost is not None:
                future.set_result(self._lost)
            else:
                self._waiting.add((loop, future))
        return future

    def forget(self, future: asyncio.Future[str]) -> None:
        with self._lock:
            self._waiting.discard((asyncio.get_running_loop(), future))

    def _connect(self, ray: Any) -> int:
        with self._lock:
            if self._lost is not None and self._address is not None:
                refused = _refused(self._address)
                if refused:
                    raise ClusterLost(f"{self._lost}; it still does not answer ({refused})")
                ray.shutdown()
                self._lost = None
                _init(ray, self._address)
            elif not ray.is_initialized():
                unanswered = _unanswered_address()
                if unanswered:
                    raise ClusterLost(unanswered)
                _init(ray, None)
            if not self._watching:
                self._address = str(ray.get_runtime_context().gcs_address)
                self._watching = True
                self.generation += 1
                threading.Thread(
                    target=self._watch, args=(ray, self.generation), daemon=True
                ).start()
            return self.generation

    def _watch(self, ray: Any, generation: int) -> None:
        missed, since = 0, 0.0
        stop = threading.Event()
        while not stop.wait(PING_EVERY):
            if not ray.is_initialized() or generation != self.generation:
                break  # shut down by the application: the next call connects again
            asked = time.monotonic()
            try:
                worker = ray._private.worker.global_worker
                worker.gcs_client.internal_kv_exists(b"agentos", b"agentos", timeout=PING_TIMEOUT)
                missed = 0
            except Exception:
                missed, since = missed + 1, since if missed else asked
                if missed >= MISSED_TO_LOSE:
                    self._lose(time.monotonic() - since)
                    return
        with self._lock:
            if generation == self.generation:
                self._watching = False

    def _lose(self, seconds: float) -> None:
        with self._lock:
            self._lost = (
                f"lost the Ray cluster at {self._address}: "
                f"its GCS has not answered for {seconds:.0f} s"
            )
            self._watching = False
            waiting, self._waiting = self._waiting, set()
        for loop, future in waiting:
            loop.call_soon_threadsafe(_tell, future, self._lost)


def _tell(future: asyncio.Future[str], message: str) -> None:
    if not future.done():
        future.set_result(message)


def _init(ray: Any, address: str | None) -> None:
    """``ray.init(address)`` as Ray's own first-call init, with the driver's bound lifted
    (for this driver only: the variable is put back once Ray has read it), and quiet: the
    workers' output stays in Ray's log files, Ray removes its own stderr handler
    (``configure_logging=False``), what Ray logs or warns while it starts is held back, and
    its logger is then the application's (``quiet_logging``). Whatever ``ray.init`` raises
    is what the caller gets."""
    from ray._raylet import Config  # type: ignore[attr-defined]

    logging.getLogger("ray").setLevel(_UNHEARD)
    before = os.environ.get(RECONNECT_BOUND)
    if before is None:
        os.environ[RECONNECT_BOUND] = _A_YEAR
    try:
        Config.initialize("")  # Ray read its settings at import: read them again
        with warnings.catch_warnings():  # for this init only, not the whole process after
            warnings.filterwarnings("ignore", module=r"ray(\.|$)")
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    finally:
        if before is None:
            os.environ.pop(RECONNECT_BOUND, None)
        quiet_logging()


_UNHEARD = logging.CRITICAL + 1
"""A level above every record's: nothing logged reaches a handler."""


def quiet_logging() -> None:
    """Ray's logger as a library's: its own stderr handler (added when ``ray`` is imported)
    gone, its records passed to the application's logging, at the application's level,
    and nothing printed if the application set none up (``logging.NullHandler``). Ray's
    handler is known by its class's module, not by a private import another Ray may lack."""
    logger = logging.getLogger("ray")
    for handler in list(logger.handlers):
        if type(handler).__module__.partition(".")[0] == "ray":
            logger.removeHandler(handler)
    if not any(isinstance(handler, logging.NullHandler) for handler in logger.handlers):
        logger.addHandler(logging.NullHandler())
    logger.propagate = True
    logger.setLevel(logging.NOTSET)


def _unanswered_address() -> str:
    """Why the cluster a bare ``ray.init()`` would join does not answer, or '' if it does or
    Ray would start a local one. Ray joins the cluster ``RAY_ADDRESS`` names, else the one
    its temporary folder records as last started here, which outlives a cluster that
    crashed; with the driver's bound lifted, a dead one would keep the call waiting for
    good. What Ray cannot resolve, ``ray.init`` raises itself."""
    from ray._common.utils import get_ray_address_file
    from ray._private.services import canonicalize_bootstrap_address

    try:
        address = canonicalize_bootstrap_address(None)  # type: ignore[arg-type]
    except Exception:
        return ""
    refused = _refused(address) if address is not None else ""
    if not refused:
        return ""
    named = os.environ.get("RAY_ADDRESS")
    if named == "auto":
        source = "the cluster RAY_ADDRESS=auto found on this machine (a raylet of it still runs)"
    elif named:
        source = "the address RAY_ADDRESS names" + (f" ({named})" if named != address else "")
    else:
        source = (
            f"the cluster Ray recorded as last started here ({get_ray_address_file(None)}):"
            " start it again, or remove that file to have Ray start a local cluster"
        )
    return f"no Ray cluster answers at {address} ({refused}), {source}"


def _refused(address: str) -> str:
    """Why the GCS at ``host:port`` does not take a connection, or '' if it does."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=PING_TIMEOUT):
            return ""
    except OSError as error:
        return error.strerror or type(error).__name__


CLUSTER = ClusterWatch()
"""The one watch: a process has one Ray connection, whichever runners use it."""
