"""Issue 30: a session's title is the first thing the person said until someone names it;
the name is kept by the store, outlives a restart, and an empty one gives the first words
back."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentos import AgentConfig
from agentos import Host
from agentos import ManualClock
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import SqliteStore
from agentos import StoreError
from agentos import UnknownSessionError
from agentos.stores import StoredSession
from agentos.stores import session_title
from agentos.stores import stored_title
from agentos.testing import last_user_text
from agentos.testing import text
from agentos.turns import Message
from tests.support.backends import hosted
from tests.support.backends import running
from tests.support.backends import say
from tests.support.cli import agentos

pytestmark = pytest.mark.anyio


def echo() -> ScriptedProvider:
    return ScriptedProvider((lambda r: True, lambda r: text(f"heard {last_user_text(r)}")))


async def test_a_name_outlives_a_restart_and_an_empty_one_gives_the_first_words_back(
    path: Path, clock: ManualClock
) -> None:
    async with hosted(path, echo(), clock=clock) as (store, _, host):
        session = await host.create_session(session_id="trip")
        await say(session, "Plan a trip to Oslo\nin May, please")
        assert session.title == "Plan a trip to Oslo in May, please"
        summary = await host.rename("trip", "  Oslo\n\tin   May ")
        assert (summary.title, summary.live) == ("Oslo in May", True)
        assert session.title == "Oslo in May" == host.list()[0].title
        await say(session, "and a hotel")
        assert session.title == "Oslo in May", "a turn keeps the name"
        await host.unload("trip")
        (listed,) = await host.sessions()
        assert (listed.live, listed.title) == (False, "Oslo in May")
        named = await store.load_session("trip")
        assert named is not None and named.shown_title() == named.title == "Oslo in May"
    async with hosted(path, echo(), clock=clock) as (store, _, host):
        assert [s.title for s in await host.sessions()] == ["Oslo in May"]
        resumed = await host.resume("trip")
        assert resumed.title == "Oslo in May"
        assert len(resumed.replies) == 2
        assert await resumed.rename("") == "Plan a trip to Oslo in May, please"
        stored = await store.load_session("trip")
        assert stored is not None and stored.title is None
        assert stored.shown_title() == "Plan a trip to Oslo in May, please"
        await host.unload("trip")
        (listed,) = await host.sessions()
        assert listed.title == "Plan a trip to Oslo in May, please", "its first words, stored"


async def test_a_stored_session_is_renamed_in_the_store_without_resuming_it(
    tmp_path: Path, clock: ManualClock
) -> None:
    async with hosted(tmp_path / "agentos.db", echo(), clock=clock) as (_, _, host):
        await say(await host.create_session(session_id="old"), "hello")
        await host.unload("old")
        summary = await host.rename("old", "An old talk")
        assert (summary.session_id, summary.title, summary.live) == ("old", "An old talk", False)
        assert host.list() == [], "nothing was resumed"
        assert (await host.resume("old")).title == "An old talk"
        with pytest.raises(UnknownSessionError):
            await host.rename("ghost", "x")


async def test_bad_titles_are_refused_and_change_nothing(clock: ManualClock) -> None:
    async with running(echo(), clock=clock) as (_, host):
        session = await host.create_session(session_id="s")
        assert session.title == "", "nothing said yet"
        await session.rename("Named")
        for bad in (42, None, ["a list"]):
            with pytest.raises(TypeError, match="a title is a str"):
                await host.rename("s", bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="at most 80 characters, got 81"):
            await session.rename("x" * 81)
        for hidden, code in (
            ("\x1b[31mred", "U+001B"),
            ("a\x00b", "U+0000"),
            ("\u202etxt", "U+202E"),
        ):
            with pytest.raises(ValueError, match=re.escape(f"control characters, got {code}")):
                await session.rename(hidden)
        assert session.title == "Named"
        assert await session.rename("y" * 80 + "\n ") == "y" * 80
        with pytest.raises(TypeError):
            await host.rename("ghost", 42)  # type: ignore[arg-type]
        with pytest.raises(UnknownSessionError):
            await host.rename("ghost", "fine")
    assert session_title(" \n ") is None
    assert session_title("a\r\nb") == "a b"


async def test_without_a_store_a_name_is_kept_in_memory_and_told_to_listeners(
    clock: ManualClock,
) -> None:
    async with running(echo(), clock=clock) as (_, host):
        board = await host.create_session(AgentConfig(context_view="board"), session_id="b")
        await say(board, "what is on the board")
        assert board.title == "what is on the board"
        heard: list[str] = []
        board.on_change(lambda: heard.append(board.title))
        await host.rename("b", "The board")
        assert heard == ["The board"]
        assert [(s.session_id, s.title) for s in await host.sessions()] == [("b", "The board")]


class RefusesTitles(SqliteStore):
    """A store whose every title write fails, as a full disk's does."""

    async def set_title(self, session_id: str, title: str | None) -> None:
        raise StoreError("the disk is full")


async def test_a_rename_the_store_refuses_leaves_the_name_as_it_was(
    tmp_path: Path, clock: ManualClock
) -> None:
    async with (
        await RefusesTitles.open(tmp_path / "agentos.db") as store,
        Runtime([], clock=clock) as runtime,
        Host(runtime, echo(), store=store) as host,
    ):
        session = await host.create_session(session_id="s")
        await say(session, "first words")
        with pytest.raises(StoreError, match="the disk is full"):
            await host.rename("s", "Lost")
        assert session.title == "first words"


async def test_a_stored_session_whose_turns_wrote_no_first_words_is_named_by_its_history(
    tmp_path: Path,
) -> None:
    """A session stored before its turns kept ``first_words`` (an old database, or one
    created with a history and never run) is still shown by what the person said."""
    async with await SqliteStore.open(tmp_path / "agentos.db") as store:
        history: tuple[Message, ...] = ({"role": "user", "content": "hello there friend"},)
        await store.create_session(StoredSession("s1", {}, "idle", 1.0, 1.0, history=history))
        loaded = await store.load_session("s1")
    assert loaded is not None and loaded.first_words is None
    assert stored_title(loaded) == "hello there friend"
    assert loaded.shown_title() == "", "the record alone knows only what its turns wrote"
    shown = await anyio.to_thread.run_sync(show_json, tmp_path / "agentos.db", "s1")
    assert shown["title"] == "hello there friend"


def show_json(db: Path, session_id: str) -> Any:
    result = agentos({**os.environ, "AGENTOS_DB": str(db)}, "show", session_id, "--json")
    assert result.code == 0, result.err
    return json.loads(result.out)
