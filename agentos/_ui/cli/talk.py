"""The commands that talk to a session: ``run``, ``resume`` and ``complete``."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path
from typing import Any
from typing import TypeVar

import click

from agentos import Completion
from agentos._ui.cli.agent import DEMO
from agentos._ui.cli.agent import Agent
from agentos._ui.cli.agent import load_agent
from agentos._ui.cli.common import EXIT_CODES_HELP
from agentos._ui.cli.common import EXIT_DONE
from agentos._ui.cli.common import EXIT_PENDING
from agentos._ui.cli.common import EXIT_UNKNOWN_TOKEN
from agentos._ui.cli.common import JSON_HELP
from agentos._ui.cli.common import CliError
from agentos._ui.cli.common import Interrupted
from agentos._ui.cli.common import require_text
from agentos._ui.cli.common import run_interruptibly
from agentos._ui.cli.common import say
from agentos._ui.cli.common import with_store
from agentos._ui.cli.database import Database
from agentos._ui.cli.session import Outcome
from agentos._ui.cli.session import TurnSettings
from agentos._ui.cli.session import resume_session
from agentos._ui.cli.session import start_session
from agentos.stores import SessionStore
from agentos.stores import StoredToken
from components import Json

F = TypeVar("F", bound=Callable[..., Any])

_TOKEN_TTL = click.option(
    "--token-ttl",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="How long a deferred call's new continuation token stays valid; after that the "
    "call ends failed (expired) [default: until it is used].",
)


_DEMO_TEXT = "the demo agent: 'approve' is deferred, a turn waits 0.5 s for its calls"


def agent_option(
    whose: str, default: Agent | None = DEMO, default_text: str = _DEMO_TEXT
) -> Callable[[F], F]:
    """``--agent FILE``, given to the command as its ``agent`` (``default`` without it);
    ``whose`` says whose agent it is (" of a new session")."""
    return click.option(
        "--agent",
        "agent",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        metavar="FILE",
        callback=lambda ctx, param, path: default if path is None else load_agent(path),
        help=f"Agent file{whose}, JSON or TOML: its model, prompt, tools and MCP servers "
        f"[default: {default_text}].",
    )


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("prompt")
@agent_option("")
@click.option(
    "--wait-for-async",
    is_flag=True,
    help="Wait until every running call has finished and the model has heard of it "
    "(deferred calls cannot finish by themselves: they stay pending).",
)
@click.option("--session-id", metavar="ID", help="The new session's id [default: a fresh one].")
@_TOKEN_TTL
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def run(
    db: Database,
    prompt: str,
    agent: Agent,
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
    [{"call_id", "provider_call_id", "tool_name", "status",
    "continuation_token"}] and "next_steps" (what to do about them). The
    token is set for deferred calls only. Running calls end with this
    process ('resume' tells the model they were lost; --wait-for-async waits
    for them); deferred ones wait for their token. A question a call asks
    (an MCP server's elicitation) is asked on the terminal when stdin and
    stdout are one (Answer? [y/N/c], then each field), else it is declined.
    """
    require_text(prompt, "PROMPT")
    begin = functools.partial(start_session, db, prompt=prompt, agent=agent, session_id=session_id)
    return _talk(begin, as_json, wait=wait_for_async, token_ttl=token_ttl)


@click.command(epilog=EXIT_CODES_HELP)
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
@agent_option(
    " to continue SESSION with, in this process",
    default=None,
    default_text="the agent SESSION was started with, its tools and MCP servers found again",
)
@_TOKEN_TTL
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def resume(
    db: Database,
    session_id: str,
    message: str | None,
    agent: Agent | None,
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
        require_text(message, "'--message'")
    begin = functools.partial(
        resume_session, db, typed=session_id, message=message, steal=steal, agent=agent
    )
    return _talk(begin, as_json, wait=wait_for_async, token_ttl=token_ttl)


@click.command("say", epilog=EXIT_CODES_HELP)
@click.argument("session_id", metavar="SESSION")
@click.argument("text", metavar="TEXT")
@click.option(
    "--wait-for-async",
    is_flag=True,
    help="Wait until every running call has finished and the model has heard of it.",
)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def say_command(
    db: Database, session_id: str, text: str, wait_for_async: bool, as_json: bool
) -> int:
    """Say TEXT to SESSION and wait for the model's answer: the next message of a
    conversation 'run' started ('resume SESSION --message TEXT' in one word).

    Prints the same as 'run'. The session goes on with the agent it was started with.
    """
    require_text(text, "TEXT")
    begin = functools.partial(
        resume_session, db, typed=session_id, message=text, steal=False, agent=None
    )
    return _talk(begin, as_json, wait=wait_for_async, token_ttl=None)


@click.command(
    epilog="\b\nExit codes:\n  0  applied, or already_completed\n"
    "  2  usage error (e.g. --result is not JSON)\n  4  unknown (or expired) token"
)
@click.argument("token")
@click.option("--result", "result_text", metavar="JSON", help="The call's result, as JSON.")
@click.option("--error", metavar="TEXT", help="Fail the call with this message instead.")
@click.pass_obj
def complete(db: Database, token: str, result_text: str | None, error: str | None) -> int:
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

    async def apply(store: SessionStore) -> tuple[Completion, StoredToken | None]:
        return await store.complete_token(token, result, error=error), await store.get_token(token)

    outcome, stored = with_store(db, apply)
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


def _talk(
    begin: Callable[[TurnSettings], Awaitable[Outcome]],
    as_json: bool,
    *,
    wait: bool,
    token_ttl: float | None,
) -> int:
    """Run the session's turn (``begin``: ``start_session`` or ``resume_session``), report
    it, and return the exit code. On a terminal the model's messages are printed as they
    arrive."""
    words = sys.stdout.isatty() and not as_json
    settings = TurnSettings(
        _say,
        live=sys.stderr.isatty(),
        wait_for_async=wait,
        words=words,
        token_ttl=token_ttl,
        asks=sys.stdin.isatty() and sys.stdout.isatty(),
    )
    try:
        outcome = run_interruptibly(functools.partial(begin, settings))
    except BaseException as error:  # on Ctrl-C the host saved the session on its way out
        ctrl_c = isinstance(error, KeyboardInterrupt) or (
            isinstance(error, BaseExceptionGroup) and error.subgroup(KeyboardInterrupt) is not None
        )
        if settings.opened and ctrl_c:
            raise Interrupted(settings.opened[0]) from error
        raise
    return _report(outcome, as_json, printed=words)


def _report(outcome: Outcome, as_json: bool, *, printed: bool = False) -> int:
    """The outcome on stdout (its messages unless ``printed`` as they arrived), what is
    pending on stderr."""
    if outcome.errors:
        raise CliError(
            f"the turn ended on an error: {outcome.errors[-1]} (session "
            f"{outcome.session_id} is saved; 'agentos resume {outcome.session_id}' "
            "tries again)"
        )
    if as_json or not sys.stdout.isatty():
        click.echo(json.dumps(outcome.to_json()))
    else:
        if not printed:
            say("\n\n".join(outcome.messages))
        say(f"\nsession {outcome.session_id}", err=True)
        for call in outcome.pending:
            pending = f"{call['tool_name']} ({call['status']}, call {call['call_id']})"
            say(f"pending: {pending}", err=True)
        for step in outcome.next_steps():
            say(f"  {step}", err=True)
    return EXIT_PENDING if outcome.pending else EXIT_DONE


def _say(line: str) -> None:
    say(line, err=True)
