"""Issue 46: what the PostgreSQL store does with less than a database of its own: a user who
may only read, a pooler it was not told of."""

from __future__ import annotations

from pathlib import Path

import anyio
import asyncpg
import pytest
from pydantic import BaseModel

from agentos import AgentConfig
from agentos import Host
from agentos import PostgresStore
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import ToolContext
from agentos import YieldOnTimeout
from agentos import tool
from agentos.stores import StoredSession
from agentos.testing import last_tool_results
from agentos.testing import text
from agentos.testing import tool_calls
from tests.support.backends import echo
from tests.support.backends import say
from tests.support.cli import agentos
from tests.support.postgres import Cluster
from tests.support.postgres import pgbouncer_in_front

pytestmark = pytest.mark.anyio


async def test_a_read_only_user_opens_a_current_store_lists_and_shows(
    postgres_server: Cluster,
    env: dict[str, str],
) -> None:
    """Issue 46, point 9: opening a store whose schema is current needs no CREATE right, so
    a user granted only SELECT opens it, and ``agentos sessions`` and ``show`` work."""
    if postgres_server.directory is None:
        pytest.skip("no roles are made on a server of your own (AGENTOS_TEST_POSTGRES)")
    name = postgres_server.new_database()
    owner = postgres_server.dsn.rsplit("/", 1)[0] + f"/{name}"
    async with (
        await PostgresStore.open(owner) as store,
        Runtime([]) as runtime,
        Host(runtime, echo(), store=store) as host,
    ):
        await say(await host.create_session(session_id="kept"), "hello there")
    reader = f"reader_{name}"
    connection = await asyncpg.connect(owner)
    try:
        await connection.execute(
            f"CREATE ROLE {reader} LOGIN; GRANT CONNECT ON DATABASE {name} TO {reader}; "
            f"GRANT USAGE ON SCHEMA public TO {reader}; "
            f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {reader}; "
            f"REVOKE CREATE ON SCHEMA public FROM PUBLIC"
        )
    finally:
        await connection.close()
    reading = owner.replace("//postgres@", f"//{reader}@")
    async with await PostgresStore.open(reading) as store:
        assert [s.session_id for s in await store.list_sessions()] == ["kept"]
    listed = agentos({**env, "AGENTOS_DB": reading}, "sessions")
    assert listed.code == 0 and "kept" in listed.out, listed
    shown = agentos({**env, "AGENTOS_DB": reading}, "show", "kept")
    assert shown.code == 0 and "hello there" in shown.out and "heard hello" in shown.out, shown


class Nothing(BaseModel):
    pass


async def test_pgbouncer_reached_without_saying_so_is_used_as_a_pooler(
    postgres_server: Cluster, pgbouncer: str
) -> None:
    """Issue 46, point 7: PgBouncer in transaction mode, its address without
    ``?pooler=transaction``, is found when opening (it refuses startup settings) and used as
    a pooler: no LISTEN that would hear nothing, no cached statement that another server
    connection lacks, and another host's cancels reach the holder by the poll, every one."""
    unsaid = pgbouncer.format(db=postgres_server.new_database()).split("?")[0]
    cancelled: dict[str, anyio.Event] = {}

    @tool
    async def hold(args: Nothing, ctx: ToolContext) -> str:
        """Hold until cancelled."""
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.setdefault(ctx.call_id, anyio.Event()).set()
        return "never"

    provider = ScriptedProvider(
        (lambda r: bool(last_tool_results(r)), lambda r: text("stopped")),
        (lambda r: True, lambda r: tool_calls(("hold", {}))),
    )
    async with (
        await PostgresStore.open(unsaid) as store,
        await PostgresStore.open(unsaid) as other,
        Runtime([hold]) as runtime,
        Host(runtime, provider, store=store) as host,
    ):
        assert not await store.listen(lambda session_id: None)
        for number in range(20):
            await other.create_session(StoredSession(f"x{number}", {}, "idle", 1.0, 1.0))

        async def load(number: int) -> None:
            assert await (store, other)[number % 2].load_session(f"x{number % 20}") is not None

        async with anyio.create_task_group() as group:
            for number in range(400):  # many at once, over the pooler's server connections
                group.start_soon(load, number)
        config = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=1))
        session = await host.create_session(config, session_id="holding")
        for _ in range(5):
            await say(session, "hold on")
            (call,) = [c for c in session.outstanding() if c.call_id not in cancelled]
            await other.request_cancel(call.call_id, "holding", "not needed")
            with anyio.fail_after(10):
                await cancelled.setdefault(call.call_id, anyio.Event()).wait()
            await runtime.wait(call.call_id, 10)


def pgbouncers() -> set[int]:
    """The PgBouncer processes running on this machine."""
    running = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                program = (entry / "cmdline").read_bytes().split(b"\0", 1)[0]
            except OSError:
                continue  # it ended meanwhile
            if program.endswith(b"pgbouncer"):
                running.add(int(entry.name))
    return running


def test_the_pooler_a_test_starts_is_gone_once_it_ends(postgres_server: Cluster) -> None:
    """As root the tests start PgBouncer through ``runuser``, which does not pass a SIGKILL
    on: the pooler itself must be ended, not only what started it."""
    before = pgbouncers()
    with pgbouncer_in_front(postgres_server):
        started = pgbouncers() - before
        assert started, "the pooler runs"
    assert not started & pgbouncers(), "nothing of it is left running"
