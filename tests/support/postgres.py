"""A throwaway PostgreSQL for the tests: Debian's ``initdb``/``pg_ctl`` on loopback, fsync off.

``AGENTOS_TEST_POSTGRES=postgresql://...`` points the tests at a server of
your own instead (each test gets a database of its own on it). Without
either, the PostgreSQL tests skip with a message saying so; under ``CI=true``
they fail instead.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from tests.support.skips import cannot_run

HOW = (
    "the PostgreSQL tests need Debian's postgresql (apt install postgresql: initdb, pg_ctl) "
    "or AGENTOS_TEST_POSTGRES=postgresql://user@host/db"
)


def _bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


@dataclass
class Cluster:
    """A server the tests may stop and start (None ``directory``: the user's own, never)."""

    dsn: str
    directory: Path | None = None
    port: int = 0
    acknowledged_is_durable: bool = False
    """Whether a commit is on disk when it is acknowledged (synchronous_commit): needed by a
    test that crashes the server, else the last commits before the crash may be lost."""
    _databases: int = field(default=0)

    def database(self) -> str:
        """A fresh, empty database on the server: its address."""
        return self.dsn.rsplit("/", 1)[0] + f"/{self.new_database()}"

    def new_database(self) -> str:
        """A fresh, empty database on the server: its name."""
        self._databases += 1
        name = f"t{os.getpid()}_{self._databases}"
        subprocess.run(
            [_bin("psql") or "psql", self.dsn, "-qc", f"CREATE DATABASE {name}"],
            check=True,
            capture_output=True,
        )
        return name

    def _ctl(self, *arguments: str) -> None:
        assert self.directory is not None, "not a server these tests started"
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.directory} "
            "-c fsync=off -c full_page_writes=off"
        )
        if not self.acknowledged_is_durable:
            options += " -c synchronous_commit=off"
        command = [_bin("pg_ctl") or "pg_ctl", "-D", str(self.directory / "data"), "-w"]
        command += ["-o", options, "-l", str(self.directory / "log"), *arguments]
        subprocess.run(_as_postgres(command), check=True, capture_output=True, timeout=60)

    def start(self) -> None:
        self._ctl("start")

    def stop(self, mode: str = "fast") -> None:
        self._ctl("-m", mode, "stop")


def _as_postgres(command: list[str]) -> list[str]:
    """initdb refuses root: as root, run it as the ``postgres`` user."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_available() -> bool:
    """Whether a server can be had: the user's own, or Debian's to start."""
    own = bool(os.environ.get("AGENTOS_TEST_POSTGRES"))
    return own or (_bin("initdb") is not None and _bin("pg_ctl") is not None)


@contextlib.contextmanager
def postgres_cluster(*, acknowledged_is_durable: bool = False) -> Iterator[Cluster]:
    """A server for the tests, started here and stopped after (or the user's own)."""
    own = os.environ.get("AGENTOS_TEST_POSTGRES")
    if own:
        yield Cluster(own)
        return
    initdb = _bin("initdb")
    if initdb is None or not server_available():
        cannot_run("the PostgreSQL tests", HOW)
    directory = Path(tempfile.mkdtemp(prefix="agentos-pg-"))
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    initialize = [initdb, "-D", str(directory / "data"), "-A", "trust", "-U", "postgres"]
    subprocess.run(
        _as_postgres([*initialize, "--no-sync", "-E", "UTF8"]), check=True, capture_output=True
    )
    port = _free_port()
    address = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    cluster = Cluster(address, directory, port, acknowledged_is_durable)
    cluster.start()
    try:
        yield cluster
    finally:
        with contextlib.suppress(subprocess.SubprocessError):
            cluster.stop("immediate")
        shutil.rmtree(directory, ignore_errors=True)


POOLER_HOW = (
    "the tests behind a transaction-mode pooler need PgBouncer (apt install pgbouncer) "
    "in front of the throwaway PostgreSQL"
)


@contextlib.contextmanager
def pgbouncer_in_front(cluster: Cluster) -> Iterator[str]:
    """PgBouncer in transaction mode in front of ``cluster``: its address, ``{db}`` for the
    database's name, with agentos's ``pooler=transaction`` option."""
    pgbouncer = shutil.which("pgbouncer") or (
        "/usr/sbin/pgbouncer" if os.path.exists("/usr/sbin/pgbouncer") else None
    )
    if pgbouncer is None or cluster.directory is None:
        cannot_run("the pooler tests", POOLER_HOW)
    directory = Path(tempfile.mkdtemp(prefix="agentos-pgbouncer-"))
    port = _free_port()
    (directory / "users.txt").write_text('"postgres" ""\n')
    (directory / "pgbouncer.ini").write_text(
        f"[databases]\n* = host=127.0.0.1 port={cluster.port}\n"
        f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\n"
        f"unix_socket_dir =\nauth_type = trust\nauth_file = {directory}/users.txt\n"
        "pool_mode = transaction\nmax_client_conn = 200\ndefault_pool_size = 20\n"
        f"logfile = {directory}/log\npidfile = {directory}/pid\n"
    )
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
        for name in ("users.txt", "pgbouncer.ini"):
            shutil.chown(directory / name, "postgres", "postgres")
    process = subprocess.Popen(
        _as_postgres([pgbouncer, str(directory / "pgbouncer.ini")]),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,  # it writes to its log file
    )
    try:
        deadline = 200
        while deadline:  # PgBouncer says nothing when ready: until it accepts a connection
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None, (directory / "log").read_text()
                deadline -= 1
                time.sleep(0.05)
        yield f"postgresql://postgres@127.0.0.1:{port}/{{db}}?pooler=transaction"
    finally:
        _stop(process, directory / "pid")
        shutil.rmtree(directory, ignore_errors=True)


def _stop(process: subprocess.Popen[bytes], pidfile: Path) -> None:
    """End PgBouncer itself, by the pid it wrote, then the process that started it: as root
    that is ``runuser``, which cannot pass a SIGKILL on, so killing it alone left PgBouncer
    running, one more after every test run."""
    try:
        pid = int(pidfile.read_text())
    except (OSError, ValueError):
        pid = None
    if pid is not None and pid != process.pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    process.kill()
    process.wait()
