"""Append-only schema migrations: never edit one that shipped; add a new one at the end."""

from __future__ import annotations

import sqlite3

__all__ = ["MIGRATIONS", "migrate", "statements"]

MIGRATIONS: list[str] = [
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        project TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        model TEXT NOT NULL DEFAULT '',
        parent_id TEXT,
        created REAL NOT NULL,
        updated REAL NOT NULL
    );
    CREATE INDEX sessions_project ON sessions(project, updated);
    CREATE TABLE messages (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        model TEXT,
        finish TEXT,
        usage TEXT NOT NULL DEFAULT '{}',
        created REAL NOT NULL
    );
    CREATE UNIQUE INDEX messages_session ON messages(session_id, seq);
    CREATE TABLE parts (
        message_id TEXT NOT NULL REFERENCES messages(id),
        idx INTEGER NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        updated REAL NOT NULL,
        PRIMARY KEY (message_id, idx)
    );
    CREATE TABLE snapshots (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        path TEXT NOT NULL,
        content BLOB,
        created REAL NOT NULL
    );
    CREATE INDEX snapshots_session ON snapshots(session_id, id);
    CREATE TABLE permission_rules (
        project TEXT NOT NULL,
        permission TEXT NOT NULL,
        pattern TEXT NOT NULL,
        action TEXT NOT NULL,
        PRIMARY KEY (project, permission, pattern)
    );
    """,
    # saved agents: scope 'global' (project '') or 'project'; tools is a JSON list, NULL = all
    """
    CREATE TABLE agents (
        scope TEXT NOT NULL,
        project TEXT NOT NULL DEFAULT '',
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        tools TEXT,
        maxsteps INTEGER,
        model TEXT,
        prompt TEXT NOT NULL DEFAULT '',
        updated REAL NOT NULL,
        PRIMARY KEY (scope, project, name)
    );
    """,
    # undo: per request (its user message) and file, the content before and after it;
    # NULL content means the file did not exist; state is 'done' or 'undone' (since `undone`)
    """
    CREATE TABLE checkpoints (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        path TEXT NOT NULL,
        before BLOB,
        after BLOB,
        state TEXT NOT NULL DEFAULT 'done',
        created REAL NOT NULL,
        undone REAL
    );
    CREATE INDEX checkpoints_session ON checkpoints(session_id, id);
    """,
    # undo of what commands changed: a side kept in the project's snapshot store (a git
    # blob, totem.snapshots) is "MODE OID" here, its BLOB column NULL
    """
    ALTER TABLE checkpoints ADD COLUMN before_ref TEXT;
    ALTER TABLE checkpoints ADD COLUMN after_ref TEXT;
    """,
]


def migrate(db: sqlite3.Connection) -> None:
    """Bring the schema of `db` (opened with isolation_level=None) up to date.

    Several processes may open a new store at once: each takes the write lock first
    (BEGIN IMMEDIATE) and reads the version under it, so a migration runs exactly once.
    """
    (version,) = db.execute("PRAGMA user_version").fetchone()
    if version >= len(MIGRATIONS):
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        (version,) = db.execute("PRAGMA user_version").fetchone()
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            for statement in statements(script):
                db.execute(statement)
            db.execute(f"PRAGMA user_version = {number}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def statements(script: str) -> list[str]:
    """The SQL statements of `script`, one by one (`executescript` would commit first)."""
    found: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            found.append(pending.strip())
            pending = ""
    if pending.strip():
        found.append(pending.strip())
    return found
