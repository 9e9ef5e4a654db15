"""Which worker runs which session, for a `totem serve` with several workers on one PostgreSQL.

    hold = await claims.claim(session_id)        # None: a run of that session goes on already
    await hold.announce(start_id=..., cut=..., model=...)
    ...                                           # the run
    await hold.release()

A run holds its session: `claim` takes a session-level advisory lock on a connection of its
own, so that one run per session goes on whichever worker is asked for it; PostgreSQL lets the
lock go with the connection when a worker dies. `announce` writes the run's row of
`totem_runs`: the event id its events come after, how many stored messages came before it,
its model. Any worker reads it (`current`, `running`) to show the run; a row whose holder no
longer holds its lock (a killed worker) is no run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import psycopg

__all__ = ["LiveRun", "RunClaims", "RunHold"]

_SETUP_LOCK = 0x746F74656D + 3  # setups run one at a time
_RUN_LOCKS = 0x746F74  # the first key of every run's lock; the second is the session's hash
_TABLE = (b"CREATE TABLE IF NOT EXISTS totem_runs (session_id TEXT PRIMARY KEY, "
          b"pid INTEGER NOT NULL, start_id BIGINT NOT NULL, cut INTEGER NOT NULL, "
          b"model TEXT NOT NULL, started DOUBLE PRECISION NOT NULL)")
# A row counts while its connection is there and still holds its run's lock (it holds no other
# advisory lock: a connection of its own per run), until the run's last event is published
# (its holder lets go a moment later).
_ALIVE = ("EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted "
          "AND l.pid = r.pid AND l.classid = %s::int4::oid) AND NOT EXISTS (SELECT 1 FROM "
          "totem_run_events e WHERE e.session_id = r.session_id AND e.id > r.start_id "
          "AND (e.data::jsonb ->> 'type') = 'run_finished')")
FINISHING_SECONDS = 10  # how long a new run waits for a finished run's holder to let go


@dataclass(frozen=True, slots=True)
class LiveRun:
    """A run going on in some worker: its events come after `start_id`; `cut` stored
    messages came before it."""

    session_id: str
    start_id: int
    cut: int
    model: str


class RunHold:
    """The claim of one run on one session (its own connection holds the lock)."""

    def __init__(self, db: psycopg.AsyncConnection[tuple[Any, ...]], session_id: str) -> None:
        self._db = db
        self.session_id = session_id

    async def announce(self, *, start_id: int, cut: int, model: str) -> None:
        """Make the run visible to every worker."""
        await self._db.execute(
            "INSERT INTO totem_runs (session_id, pid, start_id, cut, model, started) "
            "VALUES (%s, pg_backend_pid(), %s, %s, %s, %s) ON CONFLICT (session_id) DO UPDATE "
            "SET pid = excluded.pid, start_id = excluded.start_id, cut = excluded.cut, "
            "model = excluded.model, started = excluded.started",
            (self.session_id, start_id, cut, model, time.time()))

    async def release(self) -> None:
        """The run ended: its row goes, then the lock (with the connection)."""
        try:
            await self._db.execute(
                "DELETE FROM totem_runs WHERE session_id = %s AND pid = pg_backend_pid()",
                (self.session_id,))
        finally:
            await self._db.close()


class RunClaims:
    """The runs of the sessions stored in the PostgreSQL database at `url`."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def _connect(self) -> psycopg.AsyncConnection[tuple[Any, ...]]:
        return await psycopg.AsyncConnection.connect(self.url, autocommit=True)

    async def setup(self) -> None:
        """Create the table of runs if it is not there."""
        async with await self._connect() as db, db.transaction():
            await db.execute("SELECT pg_advisory_xact_lock(%s)", (_SETUP_LOCK,))
            await db.execute(_TABLE)

    async def claim(self, session_id: str) -> RunHold | None:
        """The session for a new run; None while another run (on any worker) holds it.

        Two sessions whose ids hash alike share a lock: one waits for the other's run."""
        db = await self._connect()
        try:
            got = await self._lock(db, session_id, wait=False)
            if not got and await self.current(session_id) is None:
                got = await self._lock(db, session_id, wait=True)  # a run that just ended
        except BaseException:
            await db.close()
            raise
        if not got:
            await db.close()
            return None
        return RunHold(db, session_id)

    async def _lock(self, db: psycopg.AsyncConnection[tuple[Any, ...]], session_id: str, *,
                    wait: bool) -> bool:
        """Take the session's lock: at once, or within `FINISHING_SECONDS`."""
        if not wait:
            row = await (await db.execute("SELECT pg_try_advisory_lock(%s::int4, hashtext(%s))",
                                          (_RUN_LOCKS, session_id))).fetchone()
            return bool(row and row[0])
        await db.execute(f"SET statement_timeout = '{FINISHING_SECONDS}s'".encode())
        try:
            await db.execute("SELECT pg_advisory_lock(%s::int4, hashtext(%s))",
                             (_RUN_LOCKS, session_id))
        except psycopg.errors.QueryCanceled:
            return False
        finally:
            await db.execute(b"SET statement_timeout = 0")
        return True

    async def current(self, session_id: str) -> LiveRun | None:
        """The run going on in the session, on whichever worker; None when none."""
        async with await self._connect() as db:
            row = await (await db.execute(
                f"SELECT start_id, cut, model FROM totem_runs r WHERE session_id = %s AND {_ALIVE}",
                (session_id, _RUN_LOCKS))).fetchone()
        if row is None:
            return None
        return LiveRun(session_id, int(row[0]), int(row[1]), str(row[2]))

    async def running(self) -> set[str]:
        """The sessions with a run going on, on any worker."""
        async with await self._connect() as db:
            rows = await (await db.execute(
                f"SELECT session_id FROM totem_runs r WHERE {_ALIVE}", (_RUN_LOCKS,))).fetchall()
        return {str(row[0]) for row in rows}
