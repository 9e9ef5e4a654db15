"""The store's migrations on PostgreSQL: the very list SQLite runs, in PostgreSQL's words.

The migrations are written once, for SQLite (`totem.store.migrations`); three column types
are said differently here: REAL is a 4-byte float in PostgreSQL (too coarse for a time), so it
becomes DOUBLE PRECISION; BLOB becomes BYTEA; an AUTOINCREMENT key becomes BIGSERIAL.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from totem.store.migrations import MIGRATIONS, statements

if TYPE_CHECKING:
    import psycopg

__all__ = ["migrate_postgres", "postgres_statements"]

_TYPES = [
    (re.compile(r"\bINTEGER PRIMARY KEY AUTOINCREMENT\b"), "BIGSERIAL PRIMARY KEY"),
    (re.compile(r"\bREAL\b"), "DOUBLE PRECISION"),
    (re.compile(r"\bBLOB\b"), "BYTEA"),
]
# Any number that names this lock: migrations of one database run one at a time.
_MIGRATION_LOCK = 0x746F74656D


def postgres_statements(script: str) -> list[str]:
    """The statements of one SQLite migration, with the column types PostgreSQL knows."""
    translated = []
    for statement in statements(script):
        for pattern, replacement in _TYPES:
            statement = pattern.sub(replacement, statement)
        translated.append(statement)
    return translated


def migrate_postgres(db: psycopg.Connection[tuple[Any, ...]]) -> None:
    """Bring the schema up to date (the connection is in autocommit mode). Several processes
    may open a new database at once: each takes one advisory lock and reads the version under
    it, so each migration runs exactly once; DDL is transactional, so a failed one leaves
    nothing behind."""
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        db.execute("CREATE TABLE IF NOT EXISTS totem_schema (version INTEGER NOT NULL)")
        row = db.execute("SELECT version FROM totem_schema").fetchone()
        if row is None:
            db.execute("INSERT INTO totem_schema (version) VALUES (0)")
        version = int(row[0]) if row else 0
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            for statement in postgres_statements(script):
                db.execute(statement.encode())
            db.execute("UPDATE totem_schema SET version = %s", (number,))
