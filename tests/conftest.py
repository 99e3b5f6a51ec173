"""Fixtures for every room: the anyio backend, a manual clock, quiet logs, a puppet and a
runtime whose one tool it is, the Messages API's stand-in, a test's SQLite store file,
PostgreSQL and the store on each backend, and the command line's environment."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from agentos import ManualClock
from agentos import Runtime
from agentos.testing import MessagesStandIn
from agentos.testing import Puppet
from tests.support.backends import Backend
from tests.support.cli import any_env  # noqa: F401  (fixtures for every room)
from tests.support.cli import env  # noqa: F401  (fixtures for every room)
from tests.support.cli import quick_agent  # noqa: F401  (fixtures for every room)
from tests.support.postgres import Cluster
from tests.support.postgres import pgbouncer_in_front
from tests.support.postgres import postgres_cluster


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``runtime`` mark (warnings are errors here, an unknown mark's too), and
    give every Ray a test or its programs start a cluster of its own (``RAY_ADDRESS=local``):
    by default ``ray.init()`` joins the cluster Ray recorded in ``/tmp/ray`` as the last one
    started on this machine, which may be another test run's. A test that means a cluster
    names it."""
    os.environ["RAY_ADDRESS"] = "local"
    config.addinivalue_line(
        "markers", "runtime(**options): the options of the test's ``runtime`` fixture"
    )


@pytest.fixture(autouse=True)
def _quiet_logs() -> None:
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        cache_logger_on_first_use=False,
    )


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def puppet() -> Puppet:
    """The tool the test drives by hand: it runs until told to progress, complete or fail."""
    return Puppet()


@pytest.fixture
async def runtime(
    puppet: Puppet, clock: ManualClock, request: pytest.FixtureRequest
) -> AsyncIterator[Runtime]:
    """A runtime on the test's clock whose one tool is the puppet the test drives, with the
    options a ``@pytest.mark.runtime(...)`` on the test gives (``max_running=1``: a queue)."""
    marker = request.node.get_closest_marker("runtime")
    assert marker is None or not marker.args, "runtime(...) takes Runtime's keyword options"
    options = marker.kwargs if marker is not None else {}
    async with Runtime([puppet.tool], clock=clock, **options) as runtime:
        yield runtime


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """The test's own SQLite store file: a restart opens the same one."""
    return tmp_path / "agentos.db"


@pytest.fixture
def api() -> Iterator[MessagesStandIn]:
    """The Messages API's loopback stand-in, serving the replies a test scripts."""
    with MessagesStandIn() as stand_in:
        yield stand_in


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Cluster]:
    """One throwaway PostgreSQL for the whole run (``tests/support/postgres.py``), started on
    first use."""
    with postgres_cluster() as cluster:
        yield cluster


@pytest.fixture
def postgres_dsn(postgres_server: Cluster) -> str:
    """A fresh, empty database on the run's PostgreSQL."""
    return postgres_server.database()


@pytest.fixture(scope="session")
def pgbouncer(postgres_server: Cluster) -> Iterator[str]:
    """PgBouncer (transaction mode) in front of the run's PostgreSQL: an address with ``{db}``."""
    with pgbouncer_in_front(postgres_server) as address:
        yield address


@pytest.fixture(params=["sqlite", "postgres", "pgbouncer"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """A fresh store's address, once on each backend (``tests/support/backends.py``): an SQLite
    file, a PostgreSQL database, and the same behind PgBouncer in transaction mode."""
    if request.param == "sqlite":
        return Backend("sqlite", str(tmp_path / "agentos.db"))
    cluster: Cluster = request.getfixturevalue("postgres_server")
    if request.param == "postgres":
        return Backend("postgres", cluster.database())
    pooled: str = request.getfixturevalue("pgbouncer")
    name = cluster.new_database()
    direct = cluster.dsn.rsplit("/", 1)[0] + f"/{name}"
    return Backend("pgbouncer", pooled.format(db=name), direct)
