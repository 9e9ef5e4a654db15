"""The SQLite store: one file in the user data directory, WAL mode, append-only history.

Every part is written when it changes (`save_part` is an upsert on message id + index), in its
own short transaction, so a crash or a kill loses nothing already shown. With WAL and
synchronous=NORMAL a commit does not wait for the disk, which keeps this cheap per delta.
Several totem processes may share the file: each waits for the others' writes (busy
timeout), and a write that reads first takes the write lock at its start.
"""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from totem.messages import Message, Part, Usage, new_id, part_from_dict, part_json
from totem.policy.permission import Rule
from totem.store.base import (
    Checkpoint,
    FileState,
    SessionInfo,
    file_state,
    ref_columns,
    state_columns,
)
from totem.store.migrations import migrate

__all__ = ["SqliteStore"]

_SESSION_COLS = "id, project, title, model, parent_id, created, updated"
BUSY_SECONDS = 30.0  # how long a write waits for another process's write to end


def _use_wal(db: sqlite3.Connection) -> None:
    """Switch `db` to WAL. Two processes switching a new file at once can each hold the
    read lock the other waits on; SQLite then fails one at once, without its busy wait,
    so that one tries again."""
    deadline = time.monotonic() + BUSY_SECONDS
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        time.sleep(0.005 + 0.02 * random.random())


class SqliteStore:
    def __init__(self, path: Path | str) -> None:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.path = str(path)
        self.db = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=BUSY_SECONDS
        )
        # The wait for a lock comes first: switching to WAL needs one when other processes
        # open the same new file at the same moment.
        self.db.execute(f"PRAGMA busy_timeout={int(BUSY_SECONDS * 1000)}")
        _use_wal(self.db)
        self.db.execute("PRAGMA synchronous=NORMAL")
        migrate(self.db)

    # sessions -------------------------------------------------------------------------------

    def create_session(
        self, *, project: str, model: str, title: str = "", parent_id: str | None = None
    ) -> SessionInfo:
        now = time.time()
        info = SessionInfo(new_id("ses"), project, title, model, parent_id, now, now)
        self.db.execute(
            f"INSERT INTO sessions ({_SESSION_COLS}) VALUES (?,?,?,?,?,?,?)",
            (info.id, project, title, model, parent_id, now, now),
        )
        return info

    def get_session(self, session_id: str) -> SessionInfo | None:
        row = self.db.execute(
            f"SELECT {_SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return SessionInfo(*row) if row else None

    def latest_session(self, project: str) -> SessionInfo | None:
        found = self.list_sessions(project, limit=1)
        return found[0] if found else None

    def list_sessions(self, project: str, limit: int = 50) -> list[SessionInfo]:
        rows = self.db.execute(
            f"SELECT {_SESSION_COLS} FROM sessions WHERE project = ? "
            "ORDER BY updated DESC LIMIT ?",
            (project, limit),
        ).fetchall()
        return [SessionInfo(*row) for row in rows]

    def set_title(self, session_id: str, title: str) -> None:
        self.db.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, session_id))

    # messages and parts ---------------------------------------------------------------------

    def add_message(self, message: Message) -> None:
        now = time.time()
        with self._writing():
            (seq,) = self.db.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?",
                (message.session_id,),
            ).fetchone()
            self.db.execute(
                "INSERT INTO messages (id, session_id, seq, role, model, finish, usage, created)"
                " VALUES (?,?,?,?,?,?,?,?)",
                (
                    message.id,
                    message.session_id,
                    seq,
                    message.role,
                    message.model,
                    message.finish,
                    json.dumps(asdict(message.usage)),
                    message.created,
                ),
            )
            for index, part in enumerate(message.parts):
                self._put_part(message.id, index, part, now)
            self.db.execute(
                "UPDATE sessions SET updated = ? WHERE id = ?", (now, message.session_id)
            )

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """A transaction that reads then writes: it takes the write lock at its start. A
        deferred one would fail at once, without waiting, when another process wrote after
        its read (WAL cannot upgrade a stale read to a write)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def save_part(self, message_id: str, index: int, part: Part) -> None:
        self._put_part(message_id, index, part, time.time())

    def _put_part(self, message_id: str, index: int, part: Part, now: float) -> None:
        self.db.execute(
            "INSERT INTO parts (message_id, idx, type, data, updated) VALUES (?,?,?,?,?) "
            "ON CONFLICT (message_id, idx) DO UPDATE SET data = excluded.data, "
            "updated = excluded.updated",
            (message_id, index, part.type, part_json(part), now),
        )

    def finish_message(self, message: Message) -> None:
        self.db.execute(
            "UPDATE messages SET finish = ?, usage = ?, model = ? WHERE id = ?",
            (message.finish, json.dumps(asdict(message.usage)), message.model, message.id),
        )

    def messages(self, session_id: str) -> list[Message]:
        rows = self.db.execute(
            "SELECT id, role, model, finish, usage, created FROM messages "
            "WHERE session_id = ? ORDER BY seq",
            (session_id,),
        ).fetchall()
        result: list[Message] = []
        for mid, role, model, finish, usage, created in rows:
            parts = [
                part_from_dict(json.loads(data))
                for (data,) in self.db.execute(
                    "SELECT data FROM parts WHERE message_id = ? ORDER BY idx", (mid,)
                )
            ]
            result.append(
                Message(
                    id=mid,
                    session_id=session_id,
                    role=role,
                    parts=parts,
                    created=created,
                    model=model,
                    finish=finish,
                    usage=Usage(**json.loads(usage)),
                )
            )
        return result

    # snapshots and remembered rules -----------------------------------------------------------

    def save_snapshot(
        self, *, session_id: str, call_id: str, path: str, content: bytes | None
    ) -> None:
        self.db.execute(
            "INSERT INTO snapshots (session_id, call_id, path, content, created) "
            "VALUES (?,?,?,?,?)",
            (session_id, call_id, path, content, time.time()),
        )

    def snapshots(self, session_id: str) -> list[tuple[str, str, bytes | None]]:
        rows = self.db.execute(
            "SELECT call_id, path, content FROM snapshots WHERE session_id = ? ORDER BY id",
            (session_id,),
        ).fetchall()
        return [(c, p, b) for c, p, b in rows]

    def snapshot_mark(self) -> int:
        """The id of the latest snapshot: a request's own come after it."""
        (mark,) = self.db.execute("SELECT COALESCE(MAX(id), 0) FROM snapshots").fetchone()
        return int(mark)

    def snapshots_after(
        self, session_id: str, mark: int, *, since: float = 0.0
    ) -> list[tuple[str, bytes | None]]:
        """(path, content) of the snapshots after `mark` of the session and of the sessions
        started from it since `since` (its sub-agents')."""
        rows = self.db.execute(
            "SELECT path, content FROM snapshots WHERE id > ? AND (session_id = ? OR "
            "session_id IN (SELECT id FROM sessions WHERE parent_id = ? AND created >= ?)) "
            "ORDER BY id",
            (mark, session_id, session_id, since),
        ).fetchall()
        return [(p, b) for p, b in rows]

    def add_checkpoints(
        self, session_id: str, message_id: str, files: list[tuple[str, FileState, FileState]]
    ) -> None:
        now = time.time()
        with self._writing():
            for path, before, after in files:
                self.db.execute(
                    "INSERT INTO checkpoints (session_id, message_id, path, before, after, "
                    "created, before_ref, after_ref) VALUES (?,?,?,?,?,?,?,?)",
                    (session_id, message_id, path, *state_columns(before, after), now,
                     *ref_columns(before, after)),
                )

    def checkpoints(self, session_id: str) -> list[Checkpoint]:
        rows = self.db.execute(
            "SELECT id, session_id, message_id, path, before, after, state, created, undone, "
            "before_ref, after_ref FROM checkpoints "
            "WHERE session_id = ? ORDER BY id",
            (session_id,),
        ).fetchall()
        return [Checkpoint(i, s, m, p, file_state(b, br), file_state(a, ar), st, c, u)
                for i, s, m, p, b, a, st, c, u, br, ar in rows]

    def set_checkpoint_state(self, message_id: str, state: str) -> None:
        undone = time.time() if state == "undone" else None
        self.db.execute(
            "UPDATE checkpoints SET state = ?, undone = ? WHERE message_id = ?",
            (state, undone, message_id),
        )

    def remembered_rules(self, project: str) -> list[Rule]:
        rows = self.db.execute(
            "SELECT permission, pattern, action FROM permission_rules WHERE project = ?",
            (project,),
        ).fetchall()
        return [Rule(p, pat, a) for p, pat, a in rows]

    def remember_rule(self, project: str, rule: Rule) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO permission_rules (project, permission, pattern, action) "
            "VALUES (?,?,?,?)",
            (project, rule.permission, rule.pattern, rule.action),
        )

    def close(self) -> None:
        self.db.close()
