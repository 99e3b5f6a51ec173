"""Issue 46: what the PostgreSQL store does with less than a database of its own: a user who
may only read, a pooler it was not told of, a server that is down."""

from __future__ import annotations

import asyncpg
import pytest

from agentos import Host, PostgresStore, Runtime
from tests._backends import echo, say
from tests._cli import agentos, env  # noqa: F401 - env is a fixture
from tests._postgres import Cluster

pytestmark = pytest.mark.anyio


async def test_a_read_only_user_opens_a_current_store_lists_and_shows(
    postgres_server: Cluster,
    env: dict[str, str],  # noqa: F811
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
