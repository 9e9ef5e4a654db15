"""Sessions the page renames, deletes and searches (the SQLite store's tables).

- `search`: the project's sessions whose title or any text of theirs holds every word
  (case-insensitive), newest first.
- `delete`: a session, its messages, parts and file snapshots, and the threads its
  sub-agents ran; its forks stay (they are sessions of their own).
"""

from __future__ import annotations

import sqlite3

from totem.store.base import SessionInfo, Store

__all__ = ["delete", "search"]

_COLS = "id, project, title, model, parent_id, created, updated"


def _db(store: Store) -> sqlite3.Connection | None:
    db = getattr(store, "db", None)
    return db if isinstance(db, sqlite3.Connection) else None


def _like(word: str) -> str:
    escaped = word.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def search(store: Store, project: str, words: list[str], *, limit: int = 200) -> list[SessionInfo]:
    """The sessions of `project` that hold every one of `words` in their title or text."""
    db = _db(store)
    if db is None:
        found = store.list_sessions(project, limit=limit)
        return [s for s in found if all(w.lower() in s.title.lower() for w in words)]
    clauses, args = [], [project]
    for word in words[:8]:
        clauses.append(
            "(lower(s.title) LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM messages m "
            "JOIN parts p ON p.message_id = m.id WHERE m.session_id = s.id AND p.type = 'text' "
            "AND lower(json_extract(p.data, '$.text')) LIKE ? ESCAPE '\\'))")
        args += [_like(word), _like(word)]
    rows = db.execute(
        f"SELECT {', '.join('s.' + c.strip() for c in _COLS.split(','))} FROM sessions s "
        f"WHERE s.project = ? AND {' AND '.join(clauses)} ORDER BY s.updated DESC LIMIT ?",
        (*args, limit),
    ).fetchall()
    return [SessionInfo(*row) for row in rows]


def delete(store: Store, session_id: str, *, threads: set[str]) -> None:
    """Delete the session and, among `threads` (sub-agents' sessions), those it started."""
    db = _db(store)
    if db is None:
        raise ValueError("this store cannot delete sessions")
    doomed = [session_id]
    for current in doomed:
        children = db.execute("SELECT id FROM sessions WHERE parent_id = ?", (current,))
        doomed += [row[0] for row in children if row[0] in threads and row[0] not in doomed]
    marks = ",".join("?" * len(doomed))
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(f"DELETE FROM parts WHERE message_id IN (SELECT id FROM messages "
                   f"WHERE session_id IN ({marks}))", doomed)
        db.execute(f"DELETE FROM messages WHERE session_id IN ({marks})", doomed)
        db.execute(f"DELETE FROM snapshots WHERE session_id IN ({marks})", doomed)
        db.execute(f"DELETE FROM sessions WHERE id IN ({marks})", doomed)
        db.execute("UPDATE sessions SET parent_id = NULL WHERE parent_id = ?", (session_id,))
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
