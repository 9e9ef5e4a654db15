"""Live runs shared by several processes through PostgreSQL: the groundwork of a `totem serve`
with several workers on one database.

- The worker that runs a session `publish`es each event of the run: a row of
  `totem_run_events` (its id only grows) and a `NOTIFY totem_events` naming the session.
- Any worker `follow`s a session from an event id (a page's `Last-Event-ID`): the rows after
  it, then each new one as its notification comes, so a stream resumed on another worker
  misses nothing and repeats nothing.
- A reply to a question (permission, ask) given on any worker is `answer`ed: a row of
  `totem_replies` and a `NOTIFY totem_replies`; the worker whose run asked `wait_reply`s for
  it and takes it (the row is deleted: one reply, taken once).
- A stop asked on any worker (`request_abort`) reaches the run's worker (`wait_abort`).
- `prune` drops the events of runs older than a given age (their parts are in the store).

The two tables belong to the relay, not to the session store: `setup` creates them once.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import psycopg

__all__ = ["PgRelay"]

_SETUP_LOCK = 0x746F74656D + 1  # an advisory lock of its own: setups run one at a time
_TABLES = (
    b"CREATE TABLE IF NOT EXISTS totem_run_events (id BIGSERIAL PRIMARY KEY, "
    b"session_id TEXT NOT NULL, data TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)",
    b"CREATE INDEX IF NOT EXISTS totem_run_events_session ON totem_run_events(session_id, id)",
    b"CREATE TABLE IF NOT EXISTS totem_replies (request_id TEXT PRIMARY KEY, "
    b"data TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)",
)
RESCAN_SECONDS = 5.0  # a follower looks at the table this often even without a notification


class PgRelay:
    """Events and replies of live runs, in the PostgreSQL database at `url`."""

    def __init__(self, url: str) -> None:
        self.url = url
        # publish keeps one connection (per event loop): a run publishes every token
        self._publisher: tuple[asyncio.AbstractEventLoop, asyncio.Lock,
                               psycopg.AsyncConnection[tuple[Any, ...]]] | None = None

    async def _connect(self) -> psycopg.AsyncConnection[tuple[Any, ...]]:
        return await psycopg.AsyncConnection.connect(self.url, autocommit=True)

    async def _publishing(self) -> tuple[asyncio.Lock, psycopg.AsyncConnection[tuple[Any, ...]]]:
        """The connection `publish` uses, opened again when it is lost or another loop runs."""
        loop = asyncio.get_running_loop()
        kept = self._publisher
        if kept is None or kept[0] is not loop or kept[2].closed:
            kept = (loop, asyncio.Lock(), await self._connect())
            self._publisher = kept
        return kept[1], kept[2]

    async def setup(self) -> None:
        """Create the relay's tables if they are not there."""
        async with await self._connect() as db, db.transaction():
            await db.execute("SELECT pg_advisory_xact_lock(%s)", (_SETUP_LOCK,))
            for statement in _TABLES:
                await db.execute(statement)

    async def publish(self, session_id: str, event: dict[str, Any]) -> int:
        """Store one event of the session's run and tell the followers; its id. A lost
        connection fails this call (the event may or may not be stored: never twice); the
        next call connects again."""
        lock, db = await self._publishing()
        async with lock:
            try:
                async with db.transaction():
                    row = await (await db.execute(
                        "INSERT INTO totem_run_events (session_id, data, created) "
                        "VALUES (%s, %s, %s) RETURNING id",
                        (session_id, json.dumps(event), time.time()))).fetchone()
                    await db.execute("SELECT pg_notify('totem_events', %s)", (session_id,))
            except psycopg.OperationalError:
                await db.close()
                raise
        assert row is not None
        return int(row[0])

    async def aclose(self) -> None:
        """Close the connection `publish` keeps."""
        kept, self._publisher = self._publisher, None
        if kept is not None and kept[0] is asyncio.get_running_loop():
            await kept[2].close()

    async def events(self, session_id: str, *, after: int = 0) -> list[tuple[int, dict[str, Any]]]:
        """The session's events with an id above `after`, in order."""
        async with await self._connect() as db:
            return await _rows_after(db, session_id, after)

    async def last_id(self, session_id: str) -> int:
        """The id of the session's latest event (0: none)."""
        async with await self._connect() as db:
            row = await (await db.execute(
                "SELECT COALESCE(MAX(id), 0) FROM totem_run_events WHERE session_id = %s",
                (session_id,))).fetchone()
        return int(row[0]) if row else 0

    async def follow(self, session_id: str, *,
                     after: int = 0) -> AsyncIterator[tuple[int, dict[str, Any]]]:
        """The session's events after `after`, then each new one as it comes (until closed)."""
        async with await self._connect() as db:
            await db.execute("LISTEN totem_events")  # before reading: nothing falls between
            last = after
            while True:
                for event_id, event in await _rows_after(db, session_id, last):
                    last = event_id
                    yield event_id, event
                async for note in db.notifies(timeout=RESCAN_SECONDS):
                    if note.payload == session_id:
                        break

    async def answer(self, request_id: str, reply: dict[str, Any]) -> None:
        """Give the reply to a question, for whichever worker's run asked it."""
        async with await self._connect() as db, db.transaction():
            await db.execute(
                "INSERT INTO totem_replies (request_id, data, created) VALUES (%s, %s, %s) "
                "ON CONFLICT (request_id) DO NOTHING", (request_id, json.dumps(reply), time.time()))
            await db.execute("SELECT pg_notify('totem_replies', %s)", (request_id,))

    async def wait_reply(self, request_id: str) -> dict[str, Any]:
        """Wait for the reply to the question `request_id` and take it."""
        async with await self._connect() as db:
            await db.execute("LISTEN totem_replies")
            while True:
                row = await (await db.execute(
                    "DELETE FROM totem_replies WHERE request_id = %s RETURNING data",
                    (request_id,))).fetchone()
                if row is not None:
                    found: dict[str, Any] = json.loads(row[0])
                    return found
                async for note in db.notifies(timeout=RESCAN_SECONDS):
                    if note.payload == request_id:
                        break

    async def request_abort(self, session_id: str) -> None:
        """Ask the worker running the session to stop its run."""
        async with await self._connect() as db:
            await db.execute("SELECT pg_notify('totem_abort', %s)", (session_id,))

    async def wait_abort(self, session_id: str, *,
                         listening: asyncio.Event | None = None) -> None:
        """Return when a stop of the session's run is asked, on any worker; `listening` is
        set once a stop asked from now on cannot be missed."""
        async with await self._connect() as db:
            await db.execute("LISTEN totem_abort")
            if listening is not None:
                listening.set()
            while True:
                async for note in db.notifies():
                    if note.payload == session_id:
                        return

    async def prune(self, *, older_than: float) -> int:
        """Drop the events published more than `older_than` seconds ago; how many."""
        async with await self._connect() as db:
            cursor = await db.execute("DELETE FROM totem_run_events WHERE created < %s",
                                      (time.time() - older_than,))
            return cursor.rowcount


async def _rows_after(db: psycopg.AsyncConnection[tuple[Any, ...]], session_id: str,
                      after: int) -> list[tuple[int, dict[str, Any]]]:
    rows = await (await db.execute(
        "SELECT id, data FROM totem_run_events WHERE session_id = %s AND id > %s ORDER BY id",
        (session_id, after))).fetchall()
    return [(int(event_id), json.loads(data)) for event_id, data in rows]
