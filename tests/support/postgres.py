"""A real PostgreSQL server for the tests (Debian's `postgresql` package): `initdb` into a
temporary folder, the server on 127.0.0.1 at a free port, fsync off (the tests kill clients,
never the server), stopped at the end. Each test takes a database of its own.

    with postgres_server() as server:
        url = server.new_database()      # postgresql://totem@127.0.0.1:PORT/t_1

PostgreSQL refuses to run as root: under root the server runs as the package's `postgres`
user. Missing binaries skip the tests (fail them with TOTEM_REQUIRE_SERVERS=1).
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.ports import free_port
from tests.support.required import unavailable

__all__ = ["PostgresServer", "postgres_bin", "postgres_server"]


def postgres_bin() -> Path | None:
    """The folder of initdb and postgres (Debian keeps them out of PATH)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


@dataclass
class PostgresServer:
    port: int
    folder: Path
    _numbers: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://totem@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A new, empty database; its URL."""
        import psycopg

        name = f"t_{next(self._numbers)}"
        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(f"CREATE DATABASE {name}".encode())
        return self.url(name)


def _as_owner() -> dict[str, int]:
    """Popen arguments that run a server command as a user PostgreSQL accepts."""
    if os.geteuid() != 0:
        return {}
    owner = pwd.getpwnam("postgres")
    return {"user": owner.pw_uid, "group": owner.pw_gid}


def _ready(url: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=2):
            return True
    except psycopg.OperationalError:
        return False


@contextlib.contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """Start a fresh server for the length of the `with`."""
    bindir = postgres_bin()
    if bindir is None:
        unavailable("PostgreSQL is not installed (apt-get install postgresql)")
    folder = Path(tempfile.mkdtemp(prefix="totem-pg-"))
    owner = _as_owner()
    if owner:
        os.chown(folder, owner["user"], owner["group"])
    try:
        subprocess.run(
            [str(bindir / "initdb"), "-D", str(folder / "data"), "-U", "totem", "-A", "trust",
             "-E", "UTF8", "--no-sync", "--no-instructions"],
            check=True, capture_output=True, timeout=120, **owner,
        )
        server = PostgresServer(free_port(), folder)
        with open(folder / "server.log", "wb") as log:
            process = subprocess.Popen(
                [str(bindir / "postgres"), "-D", str(folder / "data"), "-h", "127.0.0.1",
                 "-p", str(server.port), "-k", str(folder), "-c", "fsync=off",
                 "-c", "full_page_writes=off", "-c", "max_connections=200"],
                stdout=log, stderr=subprocess.STDOUT, **owner,
            )
        try:
            deadline = time.monotonic() + 60
            while not _ready(server.url()):
                if process.poll() is not None or time.monotonic() > deadline:
                    tail = (folder / "server.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"PostgreSQL did not start:\n{tail}")
                time.sleep(0.1)
            yield server
        finally:
            process.send_signal(signal.SIGINT)  # fast shutdown: clients are cut off
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
