"""The ``agentos`` command line: run, resume, complete and inspect store-backed sessions.

Every error is one line on stderr and a non-zero exit code, never a
traceback (``AGENTOS_DEBUG=1`` lets unexpected ones through with theirs).
``python -m agentos.cli`` is the same program.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio
import click
import pydantic
import structlog
from rich.console import Console
from rich.table import Column, Table

from agentos import demo_tools
from agentos._agent_config import AgentConfig
from agentos._agent_problems import fit_problems, validation_problems
from agentos._cli_calls import brief, render_session, stored_calls, timestamp
from agentos._cli_live import CancelReport, LiveCall, cancel_call, find_call
from agentos._cli_live import session_calls as live_session_calls
from agentos._cli_session import CliError, Outcome, converse, no_database
from agentos._errors import AgentOSError, ProviderError, SessionInUseError, UnknownSessionError
from agentos._gc import tune_gc
from agentos._sqlite_store import SqliteStore, default_path
from agentos._store import Completion, StoredSession, StoredToken
from components import Json, JsonObject

EXIT_DONE = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_PENDING = 3
EXIT_UNKNOWN_TOKEN = 4
EXIT_IN_USE = 5
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
_EXIT_CODES = f"""\b
Exit codes:
  {EXIT_DONE}  done: the model answered and no call is pending
  {EXIT_ERROR}  error (one line on stderr)
  {EXIT_USAGE}  usage error (bad option, argument, agent file or JSON)
  {EXIT_PENDING}  calls still pending: running, or deferred until 'agentos complete TOKEN'
  {EXIT_UNKNOWN_TOKEN}  'agentos complete': no such continuation token, or it expired
  {EXIT_IN_USE}  the session is in use by another live process ('resume --steal' takes it)
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C); the session is saved
  {EXIT_TERMINATED}  terminated (SIGTERM); the session is saved"""
_JSON_HELP = "Print JSON even when stdout is a terminal (it is JSON whenever it is not)."

T = TypeVar("T")

_TOKEN_TTL = click.option(
    "--token-ttl",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="How long a deferred call's new continuation token stays valid; after that the "
    "call ends failed (expired) [default: until it is used].",
)


# ---------------------------------------------------------------------- the commands


@click.group(context_settings=_CONTEXT, epilog=_EXIT_CODES)
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="PATH",
    help="The session database [default: $AGENTOS_DB, else agentos.db in the user data folder].",
)
@click.version_option(package_name="agentos", prog_name="agentos")
@click.pass_context
def cli(ctx: click.Context, db: Path | None) -> None:
    """Run agent sessions whose tool calls never block the conversation.

    Sessions live in one SQLite file: 'run' starts one, 'resume' continues
    it in a later process, 'complete' answers a deferred call by its token;
    'status', 'calls' and 'cancel' look at and stop calls, even those a
    live process is running.
    The model is Claude when ANTHROPIC_API_KEY is set, else an offline
    scripted model; the tools are the demo's (fetch_calendar, write_report,
    approve, weather).
    """
    ctx.obj = db if db is not None else default_path()


@cli.command(epilog=_EXIT_CODES)
@click.argument("prompt")
@click.option(
    "--agent",
    "agent_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Agent configuration, JSON or TOML [default: the demo agent: 'approve' is deferred, "
    "a turn waits 0.5 s for its calls].",
)
@click.option(
    "--wait-for-async",
    is_flag=True,
    help="Wait until every running call has finished and the model has heard of it "
    "(deferred calls cannot finish by themselves: they stay pending).",
)
@click.option("--session-id", metavar="ID", help="The new session's id [default: a fresh one].")
@_TOKEN_TTL
@click.option("--json", "as_json", is_flag=True, help=_JSON_HELP)
@click.pass_obj
def run(
    db: Path,
    prompt: str,
    agent_file: Path | None,
    wait_for_async: bool,
    session_id: str | None,
    token_ttl: float | None,
    as_json: bool,
) -> int:
    """Start a session, say PROMPT, and wait for the model's turn.

    The session is saved after every turn. Prints every message the model
    wrote, in order (on a terminal), or {"session_id", "status", "answer",
    "messages"} (status "done"; "answer" is the last message); when calls
    are still running or deferred, status "pending", "pending_calls":
    [{"tool_call_id", "provider_call_id", "tool", "status",
    "continuation_token"}] and "next_steps" (what to do about them). The
    token is set for deferred calls only. Running calls end with this
    process ('resume' tells the model they were lost; --wait-for-async waits
    for them); deferred ones wait for their token.
    """
    _require_text(prompt, "PROMPT")
    config = demo_tools.DEFAULT_AGENT if agent_file is None else _load_agent(agent_file)
    outcome = _talk(
        db,
        prompt=prompt,
        config=config,
        session_id=session_id,
        wait=wait_for_async,
        token_ttl=token_ttl,
    )
    return _report(outcome, as_json)


@cli.command(epilog=_EXIT_CODES)
@click.argument("session_id", metavar="SESSION")
@click.option("--message", metavar="TEXT", help="Say this to the model [default: say nothing new].")
@click.option(
    "--wait-for-async",
    is_flag=True,
    help="Wait until every running call has finished and the model has heard of it.",
)
@click.option(
    "--steal",
    is_flag=True,
    help="Take SESSION even from a live process that holds it (that process stops writing it).",
)
@_TOKEN_TTL
@click.option("--json", "as_json", is_flag=True, help=_JSON_HELP)
@click.pass_obj
def resume(
    db: Path,
    session_id: str,
    message: str | None,
    wait_for_async: bool,
    steal: bool,
    token_ttl: float | None,
    as_json: bool,
) -> int:
    """Bring SESSION back in this process and let the model catch up.

    Calls that were running when it was saved are lost (orphaned); deferred
    calls come back, and those completed meanwhile are delivered. The model
    hears of both on its next turn: with --message that turn answers TEXT,
    otherwise, if there is news, agentos posts "(resumed)" to grant it.
    Prints the same JSON as 'run'. A session another live process holds
    (e.g. a 'run --wait-for-async' still waiting) is refused unless --steal.
    """
    if message is not None:
        _require_text(message, "'--message'")
    outcome = _talk(
        db,
        resume=session_id,
        message=message,
        wait=wait_for_async,
        steal=steal,
        token_ttl=token_ttl,
    )
    return _report(outcome, as_json)


@cli.command(
    epilog="\b\nExit codes:\n  0  applied, or already_completed\n"
    "  2  usage error (e.g. --result is not JSON)\n  4  unknown (or expired) token"
)
@click.argument("token")
@click.option("--result", "result_text", metavar="JSON", help="The call's result, as JSON.")
@click.option("--error", metavar="TEXT", help="Fail the call with this message instead.")
@click.pass_obj
def complete(db: Path, token: str, result_text: str | None, error: str | None) -> int:
    """Complete a deferred call by its continuation TOKEN, through the database only.

    Prints applied, already_completed (completing twice changes nothing) or
    unknown. The session's next process (e.g. 'agentos resume SESSION')
    delivers the outcome to the model.
    """
    if result_text is None and error is None:
        raise click.UsageError("give the call's result with --result JSON (or --error TEXT)")
    if result_text is not None and error is not None:
        raise click.UsageError("give --result JSON or --error TEXT, not both")
    result: Json = None
    if result_text is not None:
        try:
            result = json.loads(result_text)
        except ValueError as problem:
            raise click.BadParameter(f"not JSON ({problem})", param_hint="'--result'") from None

    async def apply(store: SqliteStore) -> tuple[Completion, StoredToken | None]:
        return await store.complete_token(token, result, error=error), await store.get_token(token)

    outcome, stored = _with_store(db, apply)
    click.echo(outcome.value)
    replayed = outcome is Completion.ALREADY_COMPLETED
    if replayed and stored is not None and (stored.result, stored.error) != (result, error):
        earlier = (
            f"--error {stored.error!r}"
            if stored.error is not None
            else f"--result {json.dumps(stored.result)}"
        )
        click.echo(
            f"note: the token was completed earlier with {earlier}; what you gave now was ignored",
            err=True,
        )
    refused = outcome in (Completion.UNKNOWN, Completion.EXPIRED)
    return EXIT_UNKNOWN_TOKEN if refused else EXIT_DONE


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="JSON lines even on a terminal.")
@click.pass_obj
def sessions(db: Path, as_json: bool) -> None:
    """List the stored sessions, oldest first: a table on a terminal, else JSON lines.

    status is the session's own (idle between turns); holder names the live
    process holding it, if any, and calls_running / calls_pending count its
    calls as that process last mirrored them (pending includes deferred calls).
    """

    async def listing(
        store: SqliteStore,
    ) -> tuple[list[StoredSession], dict[str, str], dict[str, dict[str, int]]]:
        return await store.list_sessions(), await store.live_leases(), await store.call_counts()

    if not db.exists():
        click.echo(f"no database at {db} yet: no sessions", err=True)
        return
    found, holders, counts = _with_store(db, listing)
    rows: list[JsonObject] = []
    for stored in found:
        holder = holders.get(stored.session_id)
        live = counts.get(stored.session_id, {}) if holder is not None else {}
        rows.append(
            {
                **_summary(stored),
                "holder": holder,
                "calls_running": live.get("running", 0),
                "calls_pending": live.get("pending", 0),
            }
        )
    columns = ["session_id", "agent", "status", "holder", "calls_running", "updated_at"]
    _table_or_lines(rows, columns, as_json)


@cli.command()
@click.argument("session_id", metavar="SESSION")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of text.")
@click.pass_obj
def show(db: Path, session_id: str, as_json: bool) -> None:
    """Print SESSION's history: what was said, and each tool call with its status.

    With --json: {"session_id", "agent", "status", "created_at",
    "updated_at", "parent_session_id", "history" (Anthropic Messages),
    "calls" (as 'agentos calls' prints them)}.
    """
    stored, tokens = _load(db, session_id)
    if not as_json:
        for line in render_session(stored, tokens):
            click.echo(line)
        return
    history: list[Json] = [*stored.history]
    calls: list[Json] = [call.to_json() for call in stored_calls(stored.history, tokens)]
    click.echo(json.dumps({**_summary(stored), "history": history, "calls": calls}))


@cli.command()
@click.argument("session_id", metavar="SESSION")
@click.option("--json", "as_json", is_flag=True, help="JSON lines even on a terminal.")
@click.pass_obj
def calls(db: Path, session_id: str, as_json: bool) -> None:
    """The status of SESSION's tool calls: live from the process holding it, else as stored.

    While a live process holds SESSION, its calls are running or pending,
    with their latest progress, as it last mirrored them (twice a second).
    Otherwise: completed, failed or cancelled (with its cancel_reason),
    orphaned (lost in a restart, or no process is running it), deferred
    (waiting for its token), completed or failed with a note (its token was
    completed; the session delivers it when it next runs), expired (its token
    ran out), or running_when_stored (a live process holds SESSION but did
    not mirror the call).
    """

    async def read(store: SqliteStore) -> list[LiveCall] | None:
        return await live_session_calls(store, session_id)

    found = _with_store(db, read)
    if found is None:
        raise UnknownSessionError(session_id)
    rows = [call.to_json() for call in found]
    if not as_json and sys.stdout.isatty():
        for row in rows:
            if row["note"] is not None:
                row["status"] = f"{row['status']} ({row['note']})"
            if row["cancel_reason"] is not None:
                row["result"] = f"reason: {row['cancel_reason']}"
            for name in ("result", "progress"):
                row[name] = None if row[name] is None else brief(row[name], 60)
    columns = ["tool", "status", "provider_call_id", "progress", "continuation_token", "result"]
    _table_or_lines(rows, columns, as_json)


@cli.command("status", epilog="\b\nExit codes:\n  0  found\n  1  no such call, or several")
@click.argument("call_id", metavar="CALL_ID")
@click.option("--session", "session_id", metavar="SESSION", help="Look in SESSION only.")
@click.option("--json", "as_json", is_flag=True, help=_JSON_HELP)
@click.pass_obj
def status_command(db: Path, call_id: str, session_id: str | None, as_json: bool) -> None:
    """What one tool call is doing, or how it ended: status, progress, error or cancel reason.

    CALL_ID is the runtime's id or the model's (toolu_...); a model's id can
    repeat across sessions, and then --session says which. While a live
    process holds the call's session the status is live (as that process
    mirrors it, twice a second); otherwise it is what the store says.
    Prints JSON when stdout is not a terminal.
    """

    async def find(store: SqliteStore) -> LiveCall:
        return await find_call(store, call_id, session_id)

    found = _with_store(db, find)
    if as_json or not sys.stdout.isatty():
        click.echo(json.dumps(found.to_json()))
    else:
        for line in found.describe():
            click.echo(line)


_CANCEL_EXIT_CODES = f"""\b
Exit codes:
  {EXIT_DONE}  cancelled, or not cancelled because the call had already ended
  {EXIT_ERROR}  no such call; a deferred call (complete its token); no process is running it
  {EXIT_PENDING}  queued: the process holding the session did not answer within --wait seconds;
     it applies the request when it next looks"""


@cli.command("cancel", epilog=_CANCEL_EXIT_CODES)
@click.argument("call_id", metavar="CALL_ID")
@click.option(
    "--reason",
    default="cancelled from the command line",
    show_default=True,
    metavar="TEXT",
    help="Why; recorded on the call and told to the model.",
)
@click.option("--session", "session_id", metavar="SESSION", help="Look in SESSION only.")
@click.option(
    "--wait",
    type=click.FloatRange(min=0),
    default=5.0,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait for the answer of the process holding the session.",
)
@click.option("--json", "as_json", is_flag=True, help=_JSON_HELP)
@click.pass_obj
def cancel_command(
    db: Path, call_id: str, reason: str, session_id: str | None, wait: float, as_json: bool
) -> int:
    """Cancel a running tool call, in the live process that holds its session.

    The request goes through the database: that process applies it within
    half a second, the call ends cancelled with REASON, and its model hears
    of it. A call no process runs (its session is not held), or one that
    already ended, is not cancelled, and the answer says why; a deferred call
    ends only by its token ('agentos complete TOKEN --error TEXT').
    """
    _require_text(reason, "'--reason'")

    async def attempt(store: SqliteStore) -> CancelReport:
        return await cancel_call(store, await find_call(store, call_id, session_id), reason, wait)

    report = _with_store(db, attempt)
    click.echo(json.dumps(report.to_json()) if as_json else report.describe())
    return EXIT_PENDING if report.outcome == "queued" else EXIT_DONE


# ---------------------------------------------------------------------- helpers


def _talk(db: Path, *, wait: bool, **how: Any) -> Outcome:
    return anyio.run(
        functools.partial(
            converse, db, say=_say, live=sys.stderr.isatty(), wait_for_async=wait, **how
        )
    )


def _report(outcome: Outcome, as_json: bool) -> int:
    if outcome.errors:
        raise CliError(
            f"the session stopped on an error: {outcome.errors[-1]} (session "
            f"{outcome.session_id} is saved; 'agentos resume {outcome.session_id} "
            "--message TEXT' tries again)"
        )
    if as_json or not sys.stdout.isatty():
        click.echo(json.dumps(outcome.to_json()))
    else:
        click.echo("\n\n".join(outcome.messages))
        click.echo(f"\nsession {outcome.session_id}", err=True)
        for call in outcome.pending:
            click.echo(
                f"pending: {call['tool']} ({call['status']}, call {call['tool_call_id']})", err=True
            )
        for step in outcome.next_steps():
            click.echo(f"  {step}", err=True)
    return EXIT_PENDING if outcome.pending else EXIT_DONE


def _summary(stored: StoredSession) -> JsonObject:
    return {
        "session_id": stored.session_id,
        "agent": stored.config.get("name"),
        "status": stored.status,
        "created_at": timestamp(stored.created_at),
        "updated_at": timestamp(stored.updated_at),
        "parent_session_id": stored.parent_session_id,
    }


def _require_text(value: str, name: str) -> None:
    if not value.strip():
        raise click.BadParameter("must not be empty", param_hint=name)


def _load_agent(path: Path) -> AgentConfig:
    """The agent file, checked against the command line's tools (it registers no runner)."""
    try:
        config = AgentConfig.from_file(path)
    except pydantic.ValidationError as error:
        problems = validation_problems(error)
    except (ValueError, OSError) as error:  # JSON, TOML, format and reading errors
        raise click.BadParameter(f"{path}: {error}", param_hint="'--agent'") from None
    else:
        problems = fit_problems(config, [tool.name for tool in demo_tools.TOOLS], ())
        if not problems:
            return config
    raise click.BadParameter(f"{path}: {'; '.join(problems)}", param_hint="'--agent'")


def _with_store(db: Path, use: Callable[[SqliteStore], Awaitable[T]]) -> T:
    """Open the database to read or complete; a ``CliError`` when there is none (none is made)."""
    if not db.exists():
        raise CliError(no_database(db))

    async def job() -> T:
        async with await SqliteStore.open(db) as store:
            return await use(store)

    return anyio.run(job)


def _load(db: Path, session_id: str) -> tuple[StoredSession, list[StoredToken]]:
    async def read(store: SqliteStore) -> tuple[StoredSession | None, list[StoredToken]]:
        return await store.load_session(session_id), await store.tokens_of(session_id)

    stored, tokens = _with_store(db, read)
    if stored is None:
        raise UnknownSessionError(session_id)
    return stored, tokens


def _table_or_lines(rows: Sequence[JsonObject], columns: list[str], as_json: bool) -> None:
    if as_json or not sys.stdout.isatty():
        for row in rows:
            click.echo(json.dumps(row))
        return
    table = Table(*(Column(c, overflow="fold") for c in columns), box=None)
    for row in rows:
        table.add_row(*("" if row.get(c) is None else str(row.get(c)) for c in columns))
    Console().print(table)


def _say(line: str) -> None:
    click.echo(line, err=True)


# ---------------------------------------------------------------------- the entry point


def main(argv: Sequence[str] | None = None) -> None:
    """The console script: run the command line and exit with its code."""
    tune_gc()  # a host process: full collections would pause every session's loop
    signal.signal(signal.SIGTERM, _terminate)
    sys.exit(run_cli(argv))


_terminated: list[int] = []
"""The SIGTERMs received: the next interruption is reported as termination."""


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM stops the command the way Ctrl-C does: sessions are saved, one line is said."""
    _terminated.append(signum)
    signal.raise_signal(signal.SIGINT)


def _interrupted() -> int:
    if _terminated:
        return _fail("terminated (SIGTERM)", EXIT_TERMINATED)
    return _fail("interrupted", EXIT_INTERRUPTED)


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code. Errors become one line on stderr."""
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(30),  # warnings and up
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
    )
    try:
        code = cli.main(args=argv, prog_name="agentos", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as error:
        error.show()
        return EXIT_USAGE
    except click.UsageError as error:
        hint = f" (see '{error.ctx.command_path} --help')" if error.ctx is not None else ""
        return _fail(error.format_message() + hint, error.exit_code)
    except click.ClickException as error:
        return _fail(error.format_message(), error.exit_code)
    except click.Abort:
        return _interrupted()
    except Exception as error:
        return _fail_with(error)
    except BaseExceptionGroup as group:  # a task group's; KeyboardInterrupt within, say
        return _fail_with(group)
    except KeyboardInterrupt:
        return _interrupted()
    return code if isinstance(code, int) else EXIT_DONE


def _fail_with(error: BaseException) -> int:
    cause = _innermost(error)
    if isinstance(cause, KeyboardInterrupt):
        return _interrupted()
    if isinstance(cause, click.ClickException):
        return _fail(cause.format_message(), cause.exit_code)
    if isinstance(cause, UnknownSessionError):
        return _fail(f"{cause} (see 'agentos sessions')", EXIT_ERROR)
    if isinstance(cause, SessionInUseError):
        steal = f"'agentos resume {cause.session_id} --steal'"
        return _fail(
            f"{cause.in_use}; wait for it to finish, or take it over with {steal}", EXIT_IN_USE
        )
    if isinstance(cause, ProviderError):
        return _fail(f"the model failed: {cause.kind}: {cause.message}", EXIT_ERROR)
    if isinstance(cause, AgentOSError):
        return _fail(str(cause), EXIT_ERROR)
    if isinstance(cause, pydantic.ValidationError):
        return _fail(f"invalid {cause.title}: {'; '.join(validation_problems(cause))}", EXIT_ERROR)
    if isinstance(cause, OSError):
        where = f": {cause.filename}" if cause.filename else ""
        return _fail(f"{cause.strerror or cause}{where}", EXIT_ERROR)
    if os.environ.get("AGENTOS_DEBUG"):
        raise error
    return _fail(
        f"internal error: {type(cause).__name__}: {cause} (AGENTOS_DEBUG=1 shows where)",
        EXIT_ERROR,
    )


def _innermost(error: BaseException) -> BaseException:
    """The error a task group wraps (the first that is not a cancellation)."""
    while isinstance(error, BaseExceptionGroup):
        leaves = [e for e in error.exceptions if not isinstance(e, asyncio.CancelledError)]
        error = (leaves or list(error.exceptions))[0]
    return error


def _fail(message: str, code: int) -> int:
    click.echo("error: " + " ".join(message.split()), err=True)
    return code


if __name__ == "__main__":
    main()
