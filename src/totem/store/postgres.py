"""The PostgreSQL store (psycopg 3, `pip install 'totem[postgres]'`): the `Store` of a team's
shared server, or of several machines writing one history.

The same tables and migrations as the SQLite store. Every part is written when it changes, in
its own short transaction (autocommit), so what a run has shown is in the database even if the
process is killed a moment later. One connection per store, opened again when it is lost;
its calls are serialized, as the run, the page and a sub-agent may use one store from several
threads.
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from typing import Any, Concatenate, ParamSpec, TypeVar

import psycopg

from totem.messages import Message, Part, Usage, new_id, part_from_dict, part_json
from totem.policy.permission import Rule
from totem.settings.errors import ConfigError
from totem.store.base import (
    Checkpoint,
    FileState,
    SessionInfo,
    file_state,
    ref_columns,
    state_columns,
)
from totem.store.postgres_schema import migrate_postgres

__all__ = ["PostgresStore", "StoreUnavailable"]

_SESSION_COLS = "id, project, title, model, parent_id, created, updated"
P = ParamSpec("P")
T = TypeVar("T")


class StoreUnavailable(ConfigError):
    """The database cannot be reached or refused the login (the message names no password)."""


def _connect(url: str) -> psycopg.Connection[tuple[Any, ...]]:
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        where = psycopg.conninfo.conninfo_to_dict(url)
        place = f"{where.get('host') or 'localhost'}:{where.get('port') or 5432}"
        database = where.get("dbname") or where.get("user") or ""
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else "no reason"
        raise StoreUnavailable(
            f"the session store (PostgreSQL at {place}, database {database!r}) cannot be "
            f"reached: {first_line}"
        ) from None


def _reconnecting(
    method: Callable[Concatenate[PostgresStore, P], T],
) -> Callable[Concatenate[PostgresStore, P], T]:
    """Once the connection is lost (the server restarted, a proxy cut it), connect again and
    do the call once more: every write here is an upsert or a single statement, so a second
    try stores what the first would have."""

    @functools.wraps(method)
    def call(store: PostgresStore, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(store, *args, **kwargs)
        except psycopg.OperationalError:
            if not store.db.broken:
                raise
            store.reconnect()
            return method(store, *args, **kwargs)

    return call


class PostgresStore:
    """The `Store` on a PostgreSQL database at `url`; its schema is brought up to date."""

    def __init__(self, url: str) -> None:
        self._url = url
        self.db = _connect(url)
        self._lock = threading.RLock()
        with self._lock:
            migrate_postgres(self.db)

    @property
    def url(self) -> str:
        """The database's address (it may hold a password: never shown)."""
        return self._url

    def reconnect(self) -> None:
        """A new connection in place of a lost one."""
        with self._lock:
            with contextlib.suppress(psycopg.Error):
                self.db.close()
            self.db = _connect(self._url)

    @contextlib.contextmanager
    def _cursor(self, *, transaction: bool = False) -> Iterator[psycopg.Connection[Any]]:
        """The connection, for one call at a time; in one transaction when asked."""
        with self._lock:
            if not transaction:
                yield self.db
                return
            with self.db.transaction():
                yield self.db

    # sessions -------------------------------------------------------------------------------

    @_reconnecting
    def create_session(
        self, *, project: str, model: str, title: str = "", parent_id: str | None = None
    ) -> SessionInfo:
        now = time.time()
        info = SessionInfo(new_id("ses"), project, title, model, parent_id, now, now)
        with self._cursor() as db:
            db.execute(
                f"INSERT INTO sessions ({_SESSION_COLS}) VALUES (%s,%s,%s,%s,%s,%s,%s)",
                (info.id, project, title, model, parent_id, now, now),
            )
        return info

    @_reconnecting
    def get_session(self, session_id: str) -> SessionInfo | None:
        with self._cursor() as db:
            row = db.execute(
                f"SELECT {_SESSION_COLS} FROM sessions WHERE id = %s", (session_id,)
            ).fetchone()
        return SessionInfo(*row) if row else None

    def latest_session(self, project: str) -> SessionInfo | None:
        found = self.list_sessions(project, limit=1)
        return found[0] if found else None

    @_reconnecting
    def list_sessions(self, project: str, limit: int = 50) -> list[SessionInfo]:
        with self._cursor() as db:
            rows = db.execute(
                f"SELECT {_SESSION_COLS} FROM sessions WHERE project = %s "
                "ORDER BY updated DESC LIMIT %s",
                (project, limit),
            ).fetchall()
        return [SessionInfo(*row) for row in rows]

    @_reconnecting
    def thread_ids(self, project: str) -> list[str]:
        """The sessions of the project that are a sub-agent's thread (named by a task call)."""
        with self._cursor() as db:
            rows = db.execute(
                "SELECT s.id FROM sessions s WHERE s.project = %s AND s.parent_id IS NOT NULL "
                "AND EXISTS (SELECT 1 FROM messages m JOIN parts p ON p.message_id = m.id "
                " WHERE m.session_id = s.parent_id AND p.type = 'tool' "
                " AND (p.data::jsonb -> 'meta' ->> 'session_id') = s.id)",
                (project,),
            ).fetchall()
        return [str(row[0]) for row in rows]

    @_reconnecting
    def set_title(self, session_id: str, title: str) -> None:
        with self._cursor() as db:
            db.execute("UPDATE sessions SET title = %s WHERE id = %s", (title, session_id))

    # messages and parts ---------------------------------------------------------------------

    @_reconnecting
    def add_message(self, message: Message) -> None:
        now = time.time()
        with self._cursor(transaction=True) as db:
            # The session's row lock orders two writers of one session (seq stays unique).
            db.execute("SELECT 1 FROM sessions WHERE id = %s FOR UPDATE", (message.session_id,))
            row = db.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = %s",
                (message.session_id,),
            ).fetchone()
            assert row is not None
            db.execute(
                "INSERT INTO messages (id, session_id, seq, role, model, finish, usage, created)"
                " VALUES (%s,%s,%s,%s,%s,%s,%s,%s)",
                (message.id, message.session_id, row[0], message.role, message.model,
                 message.finish, json.dumps(asdict(message.usage)), message.created),
            )
            for index, part in enumerate(message.parts):
                _put_part(db, message.id, index, part, now)
            db.execute(
                "UPDATE sessions SET updated = %s WHERE id = %s", (now, message.session_id)
            )

    @_reconnecting
    def save_part(self, message_id: str, index: int, part: Part) -> None:
        with self._cursor() as db:
            _put_part(db, message_id, index, part, time.time())

    @_reconnecting
    def finish_message(self, message: Message) -> None:
        with self._cursor() as db:
            db.execute(
                "UPDATE messages SET finish = %s, usage = %s, model = %s WHERE id = %s",
                (message.finish, json.dumps(asdict(message.usage)), message.model, message.id),
            )

    @_reconnecting
    def messages(self, session_id: str) -> list[Message]:
        with self._cursor(transaction=True) as db:
            rows = db.execute(
                "SELECT id, role, model, finish, usage, created FROM messages "
                "WHERE session_id = %s ORDER BY seq",
                (session_id,),
            ).fetchall()
            parts: dict[str, list[Part]] = {row[0]: [] for row in rows}
            for message_id, data in db.execute(
                "SELECT p.message_id, p.data FROM parts p JOIN messages m ON m.id = p.message_id"
                " WHERE m.session_id = %s ORDER BY p.message_id, p.idx",
                (session_id,),
            ):
                if message_id in parts:
                    parts[message_id].append(part_from_dict(json.loads(data)))
        return [
            Message(id=mid, session_id=session_id, role=role, parts=parts[mid], created=created,
                    model=model, finish=finish, usage=Usage(**json.loads(usage)))
            for mid, role, model, finish, usage, created in rows
        ]

    # snapshots and remembered rules -----------------------------------------------------------

    @_reconnecting
    def save_snapshot(
        self, *, session_id: str, call_id: str, path: str, content: bytes | None
    ) -> None:
        with self._cursor() as db:
            db.execute(
                "INSERT INTO snapshots (session_id, call_id, path, content, created) "
                "VALUES (%s,%s,%s,%s,%s)",
                (session_id, call_id, path, content, time.time()),
            )

    @_reconnecting
    def snapshots(self, session_id: str) -> list[tuple[str, str, bytes | None]]:
        with self._cursor() as db:
            rows = db.execute(
                "SELECT call_id, path, content FROM snapshots WHERE session_id = %s ORDER BY id",
                (session_id,),
            ).fetchall()
        return [(c, p, _bytes(b)) for c, p, b in rows]

    @_reconnecting
    def snapshot_mark(self) -> int:
        """The id of the latest snapshot: a request's own come after it."""
        with self._cursor() as db:
            row = db.execute("SELECT COALESCE(MAX(id), 0) FROM snapshots").fetchone()
        return int(row[0]) if row else 0

    @_reconnecting
    def snapshots_after(
        self, session_id: str, mark: int, *, since: float = 0.0
    ) -> list[tuple[str, bytes | None]]:
        """(path, content) of the snapshots after `mark` of the session and of the sessions
        started from it since `since` (its sub-agents')."""
        with self._cursor() as db:
            rows = db.execute(
                "SELECT path, content FROM snapshots WHERE id > %s AND (session_id = %s OR "
                "session_id IN (SELECT id FROM sessions WHERE parent_id = %s AND created >= %s))"
                " ORDER BY id",
                (mark, session_id, session_id, since),
            ).fetchall()
        return [(p, _bytes(b)) for p, b in rows]

    @_reconnecting
    def add_checkpoints(
        self, session_id: str, message_id: str, files: list[tuple[str, FileState, FileState]]
    ) -> None:
        now = time.time()
        with self._cursor(transaction=True) as db:
            for path, before, after in files:
                db.execute(
                    "INSERT INTO checkpoints (session_id, message_id, path, before, after, "
                    "created, before_ref, after_ref) VALUES (%s,%s,%s,%s,%s,%s,%s,%s)",
                    (session_id, message_id, path, *state_columns(before, after), now,
                     *ref_columns(before, after)),
                )

    @_reconnecting
    def checkpoints(self, session_id: str) -> list[Checkpoint]:
        with self._cursor() as db:
            rows = db.execute(
                "SELECT id, session_id, message_id, path, before, after, state, created, undone, "
                "before_ref, after_ref FROM checkpoints WHERE session_id = %s ORDER BY id",
                (session_id,),
            ).fetchall()
        return [Checkpoint(int(i), s, m, p, file_state(_bytes(b), br), file_state(_bytes(a), ar),
                           st, c, u)
                for i, s, m, p, b, a, st, c, u, br, ar in rows]

    @_reconnecting
    def set_checkpoint_state(self, message_id: str, state: str) -> None:
        undone = time.time() if state == "undone" else None
        with self._cursor() as db:
            db.execute(
                "UPDATE checkpoints SET state = %s, undone = %s WHERE message_id = %s",
                (state, undone, message_id),
            )

    @_reconnecting
    def remembered_rules(self, project: str) -> list[Rule]:
        with self._cursor() as db:
            rows = db.execute(
                "SELECT permission, pattern, action FROM permission_rules WHERE project = %s",
                (project,),
            ).fetchall()
        return [Rule(p, pat, a) for p, pat, a in rows]

    @_reconnecting
    def remember_rule(self, project: str, rule: Rule) -> None:
        with self._cursor() as db:
            db.execute(
                "INSERT INTO permission_rules (project, permission, pattern, action) "
                "VALUES (%s,%s,%s,%s) ON CONFLICT (project, permission, pattern) "
                "DO UPDATE SET action = excluded.action",
                (project, rule.permission, rule.pattern, rule.action),
            )

    def close(self) -> None:
        with self._lock:
            self.db.close()


def _bytes(value: Any) -> bytes | None:
    """A BYTEA value as bytes (psycopg may give a memoryview)."""
    return None if value is None else bytes(value)


def _put_part(db: psycopg.Connection[Any], message_id: str, index: int, part: Part,
              now: float) -> None:
    db.execute(
        "INSERT INTO parts (message_id, idx, type, data, updated) VALUES (%s,%s,%s,%s,%s) "
        "ON CONFLICT (message_id, idx) DO UPDATE SET data = excluded.data, "
        "updated = excluded.updated",
        (message_id, index, part.type, part_json(part), now),
    )
