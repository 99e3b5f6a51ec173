"""The commands that look at sessions and calls, and cancel them: ``sessions``, ``show``,
``calls``, ``status`` and ``cancel``."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from typing import cast

import click
from pydantic import ValidationError

from agentos import AgentConfig
from agentos import SessionStatistics
from agentos import UnknownSessionError
from agentos._ui.call_json import looked_up_json
from agentos._ui.call_json import stored_call_json
from agentos._ui.cli.call_text import asking_note
from agentos._ui.cli.call_text import asking_text
from agentos._ui.cli.call_text import brief
from agentos._ui.cli.call_text import call_facts
from agentos._ui.cli.call_text import cancel_text
from agentos._ui.cli.call_text import render_chat
from agentos._ui.cli.call_text import render_session
from agentos._ui.cli.common import EXIT_DONE
from agentos._ui.cli.common import EXIT_ERROR
from agentos._ui.cli.common import EXIT_PENDING
from agentos._ui.cli.common import EXIT_USAGE
from agentos._ui.cli.common import JSON_HELP
from agentos._ui.cli.common import CliError
from agentos._ui.cli.common import load
from agentos._ui.cli.common import require_text
from agentos._ui.cli.common import say
from agentos._ui.cli.common import summary
from agentos._ui.cli.common import table_or_lines
from agentos._ui.cli.common import with_store
from agentos._ui.cli.database import Database
from agentos._ui.cli.sessions_table import ListedSession
from agentos._ui.cli.sessions_table import print_sessions
from agentos.board import Board
from agentos.stores import ASKING
from agentos.stores import CallLookupError
from agentos.stores import CallView
from agentos.stores import CancelReport
from agentos.stores import SessionStore
from agentos.stores import ShownStatus
from agentos.stores import StoredSession
from agentos.stores import call_tree
from agentos.stores import cancel_call
from agentos.stores import find_call
from agentos.stores import resolve_session_id
from agentos.stores import short_id
from agentos.stores import stored_calls
from agentos.stores import stored_chat
from agentos.stores import stored_session_status
from components import CallStatus
from components import Json
from components import JsonObject


@click.command()
@click.option("--json", "as_json", is_flag=True, help="JSON lines even on a terminal.")
@click.pass_obj
def sessions(db: Database, as_json: bool) -> None:
    """List the stored sessions, oldest first: a table on a terminal, else JSON lines.

    title is the name 'agentos rename' (or the web page) gave it, else the
    first thing the person said; status is the session's own (idle between
    turns) while a live process holds it, else stopped when it was stored
    mid-turn, with status_note saying what was under way ("1 call was
    running"); holder names the live process holding it, if any, and
    calls_running / calls_pending count its calls as that process last
    mirrored them (pending includes deferred calls), and calls_asking those of
    its running calls that wait for a person's answer (given where the session
    runs: its page or terminal).
    """

    async def listing(
        store: SessionStore,
    ) -> tuple[list[tuple[StoredSession, ShownStatus]], dict[str, str], dict[str, dict[str, int]]]:
        holders = await store.live_leases()
        found = [
            (stored, await stored_session_status(store, stored, live=stored.session_id in holders))
            for stored in await store.list_sessions()
        ]
        return found, holders, await store.call_counts()

    if not db.exists():
        click.echo(f"no database at {db} yet: no sessions", err=True)
        return
    found, holders, counts = with_store(db, listing)
    rows: list[JsonObject] = []
    for stored, shown in found:
        holder = holders.get(stored.session_id)
        live = counts.get(stored.session_id, {}) if holder is not None else {}
        rows.append(
            {
                **summary(stored),
                "status": shown.status,
                "status_note": shown.note,
                "holder": holder,
                "calls_running": live.get("running", 0),
                "calls_pending": live.get("pending", 0),
                "calls_asking": live.get(ASKING, 0),
            }
        )
    if as_json or not sys.stdout.isatty():
        table_or_lines(rows, [], as_json=True)
        return
    print_sessions(
        [
            ListedSession(
                session_id=stored.session_id,
                agent=str(row["agent"] or ""),
                status=str(shown) + asking_note(int(str(row["calls_asking"]))),
                holder=str(row["holder"] or ""),
                running=int(str(row["calls_running"])),
                updated_at=stored.updated_at,
                title=str(row["title"] or ""),
            )
            for row, (stored, shown) in zip(rows, found, strict=True)
        ]
    )


@click.command()
@click.argument("session_id", metavar="SESSION")
@click.option(
    "--history",
    "whole_history",
    is_flag=True,
    help="Every message as the model read it (tool results, the runtime's nudges) instead "
    "of the chat a person sees.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of text.")
@click.pass_obj
def show(db: Database, session_id: str, whole_history: bool, as_json: bool) -> None:
    """Print SESSION's chat: what the person said, the agent's answers, and each tool call
    with its status (what the runtime's own turns did with a call is a mark beside it).

    With --json: {"session_id", "title" (its name, else the first thing the
    person said), "agent", "status" and "status_note" (as 'agentos sessions'
    gives them), "created_at", "updated_at", "parent_session_id", "chat" (what a
    person sees: {"role", "text", "calls": [{"call_id", "tool_name", "status",
    "note"}]}), "history" (Anthropic Messages, as the model read them), "calls"
    (as 'agentos calls' prints them), "usage" (requests, tokens by kind,
    cost_usd at the model's prices, cache_hit_ratio)}.
    """
    stored, tokens = load(db, session_id)
    live, status = _held(db, stored)
    spent = _spent(stored)
    if not as_json:
        render = render_session if whole_history else render_chat
        for line in render(stored, tokens, status, live=live):
            say(line)
        if spent is not None:
            say(_spent_line(spent))
        return
    history = cast("list[Json]", list(stored.history))  # messages are JSON objects
    found = stored_calls(stored, tokens, live=live)
    calls: list[Json] = [stored_call_json(call) for call in found]
    shown = {key: call for call in found for key in (call.provider_call_id, call.call_id) if key}
    board = {} if stored.board is None else {"board": Board.from_json(stored.board).to_json()}
    usage: JsonObject = {} if spent is None else {"usage": _spent_json(spent)}
    chat: list[Json] = [
        {
            "role": entry.role,
            "text": entry.text,
            "calls": [
                {
                    "call_id": call.call_id,
                    "tool_name": call.tool_name,
                    "status": _status_of(shown.get(call.call_id), call.status.value),
                    "note": call.note,
                }
                for call in entry.calls
            ],
        }
        for entry in stored_chat(stored)
    ]
    body = {**summary(stored), "status": status.status, "status_note": status.note}
    body |= {"chat": chat, "history": history, **board, "calls": calls}
    body |= usage
    click.echo(json.dumps(body))


def _held(db: Database, stored: StoredSession) -> tuple[bool, ShownStatus]:
    """Whether a live process holds the session's lease (runs it now), and how it stands."""

    async def read(store: SessionStore) -> tuple[bool, ShownStatus]:
        live = stored.session_id in await store.live_leases()
        return live, await stored_session_status(store, stored, live=live)

    return with_store(db, read)


def _status_of(call: CallView | None, chat_status: str) -> str:
    """A chat call's status as ``agentos calls`` gives it (``shown_call_status``)."""
    return chat_status if call is None else call.status.value


USAGE_NAMES = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


def _spent(stored: StoredSession) -> SessionStatistics | None:
    """What the session's model requests used and cost, as the store kept it."""
    if not stored.usage:
        return None
    counts = {name: int(stored.usage.get(name, 0)) for name in USAGE_NAMES}
    try:
        prices = AgentConfig.model_validate(stored.config).model_prices()
    except ValidationError:  # a configuration this agentos cannot read: tokens only
        prices = None
    cost = None if prices is None else prices.cost(counts)
    requests = int(stored.usage.get("requests", 0))
    return SessionStatistics(requests=requests, cost_usd=cost, **counts)


def _spent_json(spent: SessionStatistics) -> JsonObject:
    fields: JsonObject = {"requests": spent.requests, "tokens": spent.tokens}
    fields |= {name: getattr(spent, name) for name in USAGE_NAMES}
    return fields | {"cost_usd": spent.cost_usd, "cache_hit_ratio": spent.cache_hit_ratio}


def _spent_line(spent: SessionStatistics) -> str:
    parts = (
        f"{spent.input_tokens:,} in, {spent.output_tokens:,} out, "
        f"{spent.cache_read_input_tokens:,} cache read, "
        f"{spent.cache_creation_input_tokens:,} cache write"
    )
    asked = f"{spent.requests} request{'' if spent.requests == 1 else 's'}"
    line = f"usage: {asked}, {spent.tokens:,} tokens ({parts})"
    if spent.cost_usd is not None:
        line += f", ${spent.cost_usd:.4f}"
    if spent.cache_hit_ratio is not None:
        line += f", cache hit {spent.cache_hit_ratio:.0%}"
    return line


@click.command()
@click.argument("session_id", metavar="SESSION")
@click.option("--json", "as_json", is_flag=True, help="JSON lines even on a terminal.")
@click.pass_obj
def calls(db: Database, session_id: str, as_json: bool) -> None:
    """The status of SESSION's tool calls: live from the process holding it, else as stored.
    A sub-agent's call is followed by its child session's calls, indented (in JSON: its
    "session_id" and a "depth" below SESSION).

    While a live process holds SESSION, its calls are running or pending,
    with their latest progress, as it last mirrored them (twice a second).
    Otherwise: completed, failed or cancelled (with its cancel_reason),
    orphaned (lost in a restart, or it was running when stored and no
    process is running it), pending with the note "deferred: ..." (waiting
    for its continuation_token), completed or failed with a note (its token
    was completed; the session delivers it when it next runs), failed with
    the note "expired: ..." (nobody completed its token in time), or running
    with a note (a live process holds SESSION but has not mirrored the call).
    """

    async def read(store: SessionStore) -> list[tuple[int, CallView]] | None:
        return await call_tree(store, await resolve_session_id(store, session_id))

    found = with_store(db, read)
    if found is None:
        raise UnknownSessionError(session_id)
    rows = [{**looked_up_json(call), "depth": depth} for depth, call in found]
    if not as_json and sys.stdout.isatty():
        for row, (_, call) in zip(rows, found, strict=True):
            row["call"] = short_id(call.request_id)
            if row["depth"]:
                row["tool_name"] = f"{'  ' * (int(str(row['depth'])) - 1)}└ {row['tool_name']}"
            if row["note"] is not None:
                row["status"] = f"{row['status']} ({row['note']})"
            if call.question is not None and call.status is CallStatus.RUNNING:
                row["status"] = f"{row['status']} ({asking_text(call.question)})"
            if row["cancel_reason"] is not None:
                row["result"] = f"reason: {row['cancel_reason']}"
            for name in ("result", "progress"):
                row[name] = None if row[name] is None else brief(row[name], 60)
    columns = [
        "call",
        "tool_name",
        "status",
        "progress",
        "continuation_token",
        "result",
    ]
    table_or_lines(rows, columns, as_json)


@click.command(
    "status",
    epilog="\b\nExit codes:\n  0  found\n  1  no such call, or several sessions have it\n"
    "  2  CALL_ID is the start of several calls' ids (they are listed)",
)
@click.argument("call_id", metavar="CALL_ID")
@click.option("--session", "session_id", metavar="SESSION", help="Look in SESSION only.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def status_command(db: Database, call_id: str, session_id: str | None, as_json: bool) -> None:
    """What one tool call is doing, or how it ended: status, progress, error or cancel reason.

    CALL_ID is the runtime's id or the model's (toolu_...), or the start of
    one (6 characters or more, as the screens show it); a model's id can
    repeat across sessions, and then --session says which. While a live
    process holds the call's session the status is live (as that process
    mirrors it, twice a second); otherwise it is what the store says.
    Prints JSON when stdout is not a terminal.
    """

    async def find(store: SessionStore) -> CallView:
        with in_cli_words():
            return await find_call(store, call_id, session_id)

    found = with_store(db, find)
    if as_json or not sys.stdout.isatty():
        click.echo(json.dumps(looked_up_json(found)))
    else:
        for line in call_facts(found):
            say(line)


_CANCEL_EXIT_CODES = f"""\b
Exit codes:
  {EXIT_DONE}  cancelled
  {EXIT_ERROR}  not cancelled: the call had already ended (it says how); no such call; a
     deferred call (complete its token); no process is running it
  {EXIT_USAGE}  CALL_ID is the start of several calls' ids (they are listed)
  {EXIT_PENDING}  queued: the process holding the session did not answer within --wait seconds;
     it applies the request when it next looks"""


@click.command("cancel", epilog=_CANCEL_EXIT_CODES)
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
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def cancel_command(
    db: Database, call_id: str, reason: str, session_id: str | None, wait: float, as_json: bool
) -> int:
    """Cancel a running tool call, in the live process that holds its session.

    The request goes through the database: that process applies it within
    half a second, the call ends cancelled with REASON, and its model hears
    of it. A call no process runs (its session is not held), or one that
    already ended, is not cancelled, and the answer says why; a deferred call
    ends only by its token ('agentos complete TOKEN --error TEXT'). CALL_ID
    is an id as 'agentos status' takes it.
    """
    require_text(reason, "'--reason'")

    async def attempt(store: SessionStore) -> CancelReport:
        with in_cli_words():
            return await cancel_call(
                store, await find_call(store, call_id, session_id), reason, wait=wait
            )

    report = with_store(db, attempt)
    if as_json:
        click.echo(json.dumps(report.to_json()))
    else:
        say(cancel_text(report))
    if report.outcome == "already_final":
        return EXIT_ERROR
    return EXIT_PENDING if report.outcome == "queued" else EXIT_DONE


@contextlib.contextmanager
def in_cli_words() -> Iterator[None]:
    """A call look-up's error, advising the command that helps next."""
    try:
        yield
    except CallLookupError as error:
        call, what = error.call, error.what
        if error.reason == "unknown":
            raise CliError(f"{what} (see 'agentos calls SESSION')") from None
        if error.reason == "ambiguous":
            raise CliError(f"{what}; say which with --session SESSION") from None
        if error.reason == "deferred" and call is not None:
            token = call.continuation_token or "TOKEN"
            raise CliError(f"{what}; 'agentos complete {token} --error TEXT' fails it") from None
        if error.reason == "nowhere" and call is not None and call.holder is None:
            resume = f"'agentos resume {call.session_id}' tells the model it was lost"
            raise CliError(f"{what}; {resume}") from None
        raise
