"""The ``agentos`` command line: run, resume, complete and inspect store-backed sessions.

Every error is one line on stderr and a non-zero exit code, never a
traceback (``AGENTOS_DEBUG=1`` lets unexpected ones through with theirs).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Sequence

import click
import pydantic
import structlog

from agentos import AgentOSError
from agentos import ProviderError
from agentos import SessionInUseError
from agentos import StoreError
from agentos import UnknownSessionError
from agentos import tune_gc
from agentos._ui.cli.a2a import a2a
from agentos._ui.cli.chat import chat
from agentos._ui.cli.common import EXIT_CODES_HELP
from agentos._ui.cli.common import EXIT_DONE
from agentos._ui.cli.common import EXIT_ERROR
from agentos._ui.cli.common import EXIT_IN_USE
from agentos._ui.cli.common import EXIT_INTERRUPTED
from agentos._ui.cli.common import EXIT_TERMINATED
from agentos._ui.cli.common import EXIT_USAGE
from agentos._ui.cli.common import Interrupted
from agentos._ui.cli.database import Database
from agentos._ui.cli.look import calls
from agentos._ui.cli.look import cancel_command
from agentos._ui.cli.look import sessions
from agentos._ui.cli.look import show
from agentos._ui.cli.look import status_command
from agentos._ui.cli.mcp import mcp
from agentos._ui.cli.rename import rename_command
from agentos._ui.cli.serve import serve
from agentos._ui.cli.talk import complete
from agentos._ui.cli.talk import resume
from agentos._ui.cli.talk import run
from agentos._ui.cli.talk import say_command
from agentos._ui.cli.tracing_setup import traced
from agentos._ui.terminal_text import visible
from agentos.stores import AmbiguousIdError
from agentos.turns import validation_problems

_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(context_settings=_CONTEXT, epilog=EXIT_CODES_HELP)
@click.option(
    "--db",
    metavar="PATH|URL",
    help="The session database: a file, or postgresql://... to share sessions between hosts "
    "[default: $AGENTOS_DB, else agentos.db in the user data folder].",
)
@click.version_option(package_name="agentos", prog_name="agentos")
@click.pass_context
def cli(ctx: click.Context, db: str | None) -> None:
    """Run agent sessions whose tool calls never block the conversation.

    Sessions live in one SQLite file, or a PostgreSQL database: 'run' starts
    one, 'resume' continues it in a later process, 'complete' answers a deferred call by its token;
    'status', 'calls' and 'cancel' look at and stop calls, even those a
    live process is running; 'rename' names a session.
    The model is Claude when ANTHROPIC_API_KEY is set, else an offline
    scripted model; the tools are the demo's (fetch_calendar, write_report,
    approve, weather). An --agent file names its own (a Claude model it
    names needs ANTHROPIC_API_KEY; model = "test" or "module:function", a
    Python function that writes the replies, runs offline).
    """
    ctx.obj = Database.chosen(db)


def _database_here(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """``agentos COMMAND --db PATH``: the same as ``agentos --db PATH COMMAND``."""
    if value is not None:
        ctx.obj = Database(value)


for _command in (
    run,
    resume,
    say_command,
    complete,
    sessions,
    show,
    calls,
    status_command,
    cancel_command,
    rename_command,
    serve,
    chat,
    mcp,
    a2a,
):
    _command.params.append(
        click.Option(
            ["--db"],
            metavar="PATH|URL",
            expose_value=False,
            callback=_database_here,
            help="The session database (as 'agentos --db PATH COMMAND').",
        )
    )
    cli.add_command(_command)

for _command in (run, resume, say_command, chat, serve, mcp, a2a):  # the commands running sessions
    traced(_command)  # when OTEL_TRACES_EXPORTER or an OTLP endpoint asks


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


def _interrupted(error: BaseException | None = None) -> int:
    """One line: how the command ended, and which session it saved (not an error)."""
    how, code = (
        ("terminated (SIGTERM)", EXIT_TERMINATED)
        if _terminated
        else ("interrupted", EXIT_INTERRUPTED)
    )
    if isinstance(error, Interrupted):
        sid = error.session_id
        how = f"{how}; session {sid} saved ('agentos resume {sid}' goes on)"
        click.echo(visible(how), err=True)
        return code
    return _fail(how, code)


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
    except click.Abort as abort:  # click's word for Ctrl-C: the interruption is its cause
        return _interrupted(abort.__cause__)
    except Exception as error:
        return _fail_with(error)
    except BaseExceptionGroup as group:  # a task group's; KeyboardInterrupt within, say
        return _fail_with(group)
    except KeyboardInterrupt as error:
        return _interrupted(error)
    return code if isinstance(code, int) else EXIT_DONE


def _fail_with(error: BaseException) -> int:
    cause = _innermost(error)
    if isinstance(cause, KeyboardInterrupt):
        return _interrupted(cause)
    if isinstance(cause, click.ClickException):
        return _fail(cause.format_message(), cause.exit_code)
    if isinstance(cause, UnknownSessionError):
        return _fail(f"{cause} (see 'agentos sessions')", EXIT_ERROR)
    if isinstance(cause, AmbiguousIdError):
        return _fail(str(cause), EXIT_USAGE)
    if isinstance(cause, SessionInUseError):
        steal = f"'agentos resume {cause.session_id} --steal'"
        return _fail(
            f"{cause.in_use}; wait for it to finish, or take it over with {steal}", EXIT_IN_USE
        )
    if isinstance(cause, ProviderError):
        return _fail(f"the model failed: {cause.kind}: {cause.message}", EXIT_ERROR)
    if isinstance(cause, StoreError) and cause.other_file_helps:
        return _fail(f"{cause} (--db or AGENTOS_DB)", EXIT_ERROR)
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
    click.echo("error: " + " ".join(visible(message).split()), err=True)
    return code
