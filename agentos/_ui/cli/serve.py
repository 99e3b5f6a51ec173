"""``agentos serve``: the live web page over the command line's runtime, host and store."""

from __future__ import annotations

import asyncio
import logging
import secrets
from types import FrameType

import click

from agentos import Host
from agentos._ui.asking import held_for_a_person
from agentos._ui.cli.agent import Agent
from agentos._ui.cli.agent import choose_model
from agentos._ui.cli.common import CliError
from agentos._ui.cli.common import run_interruptibly
from agentos._ui.cli.common import server_takes_ctrl_c
from agentos._ui.cli.database import Database
from agentos._ui.cli.talk import agent_option
from agentos._ui.web.limits import STALL_SECONDS

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


@click.command()
@click.option("--host", "bind", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@agent_option(" of the sessions the page starts")
@click.option(
    "--token",
    metavar="TEXT",
    help="Required on every request [default: none on 127.0.0.1; generated and printed when "
    "binding any other address].",
)
@click.option(
    "--allow-host",
    "allowed_hosts",
    metavar="NAME",
    multiple=True,
    help="Also answer requests for this Host name (a reverse proxy's); without a token the "
    "page answers only 127.0.0.1, localhost and [::1]. Repeatable.",
)
@click.option(
    "--stall-seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=STALL_SECONDS,
    show_default=True,
    help="Disconnect a page that has left this long unread what the server has to send it "
    "(it reconnects and catches up).",
)
@click.pass_obj
def serve(
    db: Database,
    bind: str,
    port: int,
    agent: Agent,
    token: str | None,
    allowed_hosts: tuple[str, ...],
    stall_seconds: float,
) -> None:
    """Serve a live web page: the sessions of the database, a page per session where a
    person talks to it, watches, peeks at and cancels its calls, and answers the questions
    they ask (Ctrl-C stops)."""
    if token is None and bind not in LOOPBACK:
        token = secrets.token_urlsafe(24)

    import uvicorn  # the web stack loads only for this command

    from agentos._ui.web.app import make_app
    from agentos._ui.web.listen import listen

    async def main() -> None:
        provider = choose_model(  # a model that cannot run fails each request: the page says so
            agent.config, lambda line: click.echo(line, err=True), refuse=False
        )
        async with (
            await db.open() as store,
            agent.runtime() as runtime,
            Host(runtime, provider, store=store, ask_person=held_for_a_person) as host,
        ):
            app = make_app(
                host,
                runtime,
                config=agent.config,
                token=token,
                allowed_hosts=allowed_hosts,
                stall_seconds=stall_seconds,
            )
            try:
                listening = listen(bind, port, stall_seconds=stall_seconds)
            except OSError as error:
                raise CliError(f"cannot listen on {bind}:{port}: {error.strerror}") from None
            shown = f"[{bind}]" if ":" in bind else bind
            query = "" if token is None else f"/?token={token}"
            address = f"http://{shown}:{listening.getsockname()[1]}{query}"
            click.echo(f"agentos: serving {address}  (Ctrl-C stops)", err=True)
            loop = asyncio.get_running_loop()
            pages = app.state.pages

            class Server(uvicorn.Server):
                """uvicorn, ending the pages' streams with a last chunk as it starts to stop
                (sse-starlette would cut them half a second later)."""

                def handle_exit(self, sig: int, frame: FrameType | None) -> None:
                    loop.call_soon_threadsafe(pages.end_streams)
                    super().handle_exit(sig, frame)

            server = Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
            logging.getLogger("uvicorn.error").addFilter(_let_go)
            try:
                with server_takes_ctrl_c():
                    await server.serve(sockets=[listening])
            finally:
                app.state.pages.close()

    run_interruptibly(main)


def _let_go(record: logging.LogRecord) -> bool:
    """uvicorn's log without the line it writes for each stream the app lets go of (a page
    that stopped reading): a response left unfinished on purpose."""
    return record.getMessage() != "ASGI callable returned without completing response."
