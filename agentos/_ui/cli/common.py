"""What the ``agentos`` commands share: exit codes, opening the store, tables or JSON lines."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import threading
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from typing import TypeVar

import anyio
import click
from rich.console import Console
from rich.table import Column
from rich.table import Table
from rich.text import Text

from agentos import AgentOSError
from agentos import UnknownSessionError
from agentos._ui.cli.database import Database
from agentos._ui.durations import timestamp
from agentos._ui.terminal_text import one_line
from agentos._ui.terminal_text import visible
from agentos.stores import SessionStore
from agentos.stores import StoredSession
from agentos.stores import StoredToken
from agentos.stores import resolve_session_id
from agentos.stores import stored_title
from components import JsonObject

EXIT_DONE = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_PENDING = 3
EXIT_UNKNOWN_TOKEN = 4
EXIT_IN_USE = 5
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

EXIT_CODES_HELP = f"""\b
Exit codes:
  {EXIT_DONE}  done: the model answered and no call is pending
  {EXIT_ERROR}  error (one line on stderr)
  {EXIT_USAGE}  usage error (bad option, argument, agent file or JSON; an id's start that
     is the start of several ids: they are listed)
  {EXIT_PENDING}  calls still pending: running, or deferred until 'agentos complete TOKEN'
  {EXIT_UNKNOWN_TOKEN}  'agentos complete': no such continuation token, or it expired
  {EXIT_IN_USE}  the session is in use by another live process ('resume --steal' takes it)
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C); the session is saved
  {EXIT_TERMINATED}  terminated (SIGTERM); the session is saved"""


class CliError(AgentOSError):
    """Ends the command with this one line on stderr and exit code 1."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) while a command talked to ``session_id``, which is saved."""

    def __init__(self, session_id: str) -> None:
        super().__init__(session_id)
        self.session_id = session_id


def no_database(db: Database) -> str:
    """Why a command that reads the store has nothing to read."""
    return (
        f"no database at {db}: nothing has run with it yet ('agentos run' creates it; "
        "--db or AGENTOS_DB names another)"
    )


JSON_HELP = "Print JSON even when stdout is a terminal (it is JSON whenever it is not)."


T = TypeVar("T")


def summary(stored: StoredSession) -> JsonObject:
    """A stored session's row in 'agentos sessions' (and the head of 'show --json')."""
    return {
        "session_id": stored.session_id,
        "title": stored_title(stored) or None,
        "agent": stored.config.get("name"),
        "status": stored.status,
        "created_at": timestamp(stored.created_at),
        "updated_at": timestamp(stored.updated_at),
        "parent_session_id": stored.parent_session_id,
    }


def require_text(value: str, name: str) -> None:
    """A usage error unless ``value`` has more than whitespace."""
    if not value.strip():
        raise click.BadParameter("must not be empty", param_hint=name)


def with_store(db: Database, use: Callable[[SessionStore], Awaitable[T]]) -> T:
    """Open the database to read or complete; a ``CliError`` when there is none (none is made)."""
    if not db.exists():
        raise CliError(no_database(db))

    async def job() -> T:
        async with await db.open() as store:
            return await use(store)

    return run_interruptibly(job)


_SERVING: list[bool] = []
"""One entry per server serving now, in this process (``server_takes_ctrl_c``)."""


@contextlib.contextmanager
def server_takes_ctrl_c() -> Iterator[None]:
    """While a uvicorn server serves in this block, a Ctrl-C is the server's alone.

    uvicorn stops gracefully on it (the pages' streams end with their last chunk, its
    connections finish), then raises the signal again for the command. The signal also
    reaches ``run_interruptibly``'s handler (asyncio's wake-up pipe hears every signal),
    which would cancel the command at once and cut the server's streams short.
    """
    _SERVING.append(True)
    try:
        yield
    finally:
        _SERVING.pop()


def run_interruptibly(job: Callable[[], Awaitable[T]]) -> T:
    """``anyio.run(job)``, where Ctrl-C (and SIGTERM, which ``main`` turns into one) cancels
    the job and, once the loop has closed, raises ``KeyboardInterrupt``.

    asyncio's own handler cancels the main task once, and an anyio scope in that task
    that is cancelling at the same moment can take the cancellation for its own (it
    uncancels the task): the command then ran on as if never interrupted. Here the
    cancel is made again while the task does not count it, never during its cleanup.
    """
    interrupted: list[bool] = []
    done: list[T] = []

    async def guarded() -> None:
        if threading.current_thread() is not threading.main_thread():
            done.append(await job())  # signals reach the main thread only
            return
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        assert task is not None

        def interrupt() -> None:
            if _SERVING:
                return  # the server stops itself, then raises the signal again
            if interrupted:
                raise KeyboardInterrupt  # a second Ctrl-C: stop waiting for the first
            interrupted.append(True)
            keep_cancelled()

        def keep_cancelled() -> None:
            if task.done():
                return
            if task.cancelling() == 0:  # not yet, or a scope took it for its own
                task.cancel()
            loop.call_later(0.2, keep_cancelled)

        loop.add_signal_handler(signal.SIGINT, interrupt)
        try:
            done.append(await job())
        except asyncio.CancelledError:
            if not interrupted:
                raise
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    anyio.run(guarded)
    if interrupted or not done:
        raise KeyboardInterrupt
    return done[0]


def load(db: Database, session_id: str) -> tuple[StoredSession, list[StoredToken]]:
    """The stored session ``session_id`` names (whole or its start) and its tokens;
    ``UnknownSessionError`` if there is none."""

    async def read(store: SessionStore) -> tuple[StoredSession | None, list[StoredToken]]:
        found = await resolve_session_id(store, session_id)
        return await store.load_session(found), await store.tokens_of(found)

    stored, tokens = with_store(db, read)
    if stored is None:
        raise UnknownSessionError(session_id)
    return stored, tokens


def table_or_lines(rows: Sequence[JsonObject], columns: list[str], as_json: bool) -> None:
    """A table of ``columns`` on a terminal; else (or with ``as_json``) a JSON line per row."""
    if as_json or not sys.stdout.isatty():
        for row in rows:
            click.echo(json.dumps(row))
        return
    table = Table(*(Column(c, overflow="fold") for c in columns), box=None)
    for row in rows:
        cells = ("" if row.get(c) is None else str(row.get(c)) for c in columns)
        table.add_row(*(Text(one_line(cell)) for cell in cells))
    Console().print(table)


def say(text: str, *, err: bool = False) -> None:
    """Print text a tool, model or user wrote, its control characters escaped (``visible``):
    what they wrote cannot drive the terminal."""
    click.echo(visible(text), err=err)
