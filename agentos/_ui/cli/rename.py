"""``agentos rename``: name a stored session, as the web page's title does."""

from __future__ import annotations

import json

import click

from agentos import UnknownSessionError
from agentos._ui.cli.common import JSON_HELP
from agentos._ui.cli.common import say
from agentos._ui.cli.common import with_store
from agentos._ui.cli.database import Database
from agentos.stores import SessionStore
from agentos.stores import StoredSession
from agentos.stores import resolve_session_id
from agentos.stores import session_title
from agentos.stores import stored_title


@click.command("rename")
@click.argument("session_id", metavar="SESSION")
@click.argument("title", metavar="TITLE")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def rename_command(db: Database, session_id: str, title: str, as_json: bool) -> None:
    """Give SESSION the title TITLE (one line, at most 80 characters); prints its title now.

    An empty TITLE takes the name away: the session is called by its first
    message again. A process running SESSION keeps showing the title it had
    until it loads the session again.
    """
    try:
        name = session_title(title)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="TITLE") from None

    async def write(store: SessionStore) -> StoredSession | None:
        found = await resolve_session_id(store, session_id)
        if await store.load_session(found) is None:
            return None
        await store.set_title(found, name)
        return await store.load_session(found)

    renamed = with_store(db, write)
    if renamed is None:
        raise UnknownSessionError(session_id)
    shown = stored_title(renamed)
    if as_json:
        body = {"session_id": renamed.session_id, "title": name, "shown_title": shown}
        click.echo(json.dumps(body))
    else:
        say(shown)
