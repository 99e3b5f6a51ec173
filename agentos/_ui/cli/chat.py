"""``agentos chat``: a terminal UI on a session of the command line's store."""

from __future__ import annotations

import sys

import anyio
import click

from agentos._ui.asking import held_for_a_person
from agentos._ui.cli.agent import DEMO
from agentos._ui.cli.agent import Agent
from agentos._ui.cli.agent import refuse_unrunnable
from agentos._ui.cli.common import say
from agentos._ui.cli.database import Database
from agentos._ui.cli.session import hosted
from agentos._ui.cli.session import stored_agent
from agentos._ui.cli.talk import agent_option
from agentos.stores import resolve_session_id


@click.command()
@click.argument("session_id", metavar="[SESSION]", required=False)
@agent_option(
    " (of a new session, or to continue SESSION with)",
    default=None,
    default_text="the demo agent; SESSION's own agent for SESSION",
)
@click.option(
    "--theme",
    type=click.Choice(["dark", "light"]),
    help="Colours for a dark or light terminal (default: what COLORFGBG says, else dark).",
)
@click.pass_obj
def chat(db: Database, session_id: str | None, agent: Agent | None, theme: str | None) -> None:
    """Talk to SESSION (else a new session) in a terminal UI while its calls run.

    Type in the message line; tab moves to the calls, where arrows move, c
    cancels one (after a y), enter shows its progress log and result, a answers
    the question a call asks (it reads "needs your answer"), b shows
    what the model reads next and q quits (ctrl+c quits from anywhere);
    page up/down scroll the chat.
    Calls still running when you quit end with the process, as with 'run':
    the next 'agentos chat SESSION' (or 'resume') finds them orphaned.
    """
    if agent is not None:
        refuse_unrunnable(agent)
    if not (sys.stdin.isatty() and sys.stderr.isatty()):  # Textual draws on stderr
        raise click.UsageError(
            "agentos chat needs a terminal on stdin and stderr "
            "(a script talks with 'agentos run' and 'agentos resume')"
        )
    from agentos._ui.tui.app import ChatApp

    async def main() -> None:
        async with await db.open() as store:
            found = None if session_id is None else await resolve_session_id(store, session_id)
            chosen = agent or (DEMO if found is None else await stored_agent(store, found))
            hosting = hosted(store, chosen, lambda line: None, ask_person=held_for_a_person)
            async with hosting as host:  # the calls' questions wait for the person's answer
                if found is None:
                    session = await host.create_session(chosen.config)
                else:
                    session = await host.resume(found, config=chosen.config)
                await ChatApp(session, host.runtime, theme=theme, host=host).run_async()
        say(f"session {session.session_id}", err=True)

    anyio.run(main)
