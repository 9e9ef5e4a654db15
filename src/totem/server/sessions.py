"""Sessions for the page: listed, shown, forked and exported.

- `session_list`: the project's conversations, without the threads of sub-agents (those are
  shown inside the conversation that started them) but with forks.
- `messages_json`: stored messages as the page draws them (images as a count, not data).
- `fork`: a new session (`parent_id` = the original) holding copies of the messages up to
  a given one; the original is not changed.
- `export`: the session's messages and parts (and its sub-agents' threads) as JSON, every
  string scrubbed of secrets.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import asdict
from typing import Any

from totem.messages import Message, SummaryPart, TextPart, ToolPart, new_id, part_to_dict
from totem.policy.redact import Redactor
from totem.store.base import SessionInfo, Store

__all__ = ["count_messages", "export", "fork", "info_json", "messages_json", "session_list",
           "thread_ids"]

EXPORT_FORMAT = "totem-session/1"


def _db(store: Store) -> sqlite3.Connection | None:
    db = getattr(store, "db", None)
    return db if isinstance(db, sqlite3.Connection) else None


def count_messages(store: Store, session_id: str) -> int:
    db = _db(store)
    if db is None:
        return len(store.messages(session_id))
    (count,) = db.execute(
        "SELECT COUNT(*) FROM messages WHERE session_id = ?", (session_id,)
    ).fetchone()
    return int(count)


def info_json(info: SessionInfo) -> dict[str, Any]:
    return asdict(info)


def thread_ids(store: Store, project: str) -> set[str]:
    """The sessions of the project that are a sub-agent's thread (named by a task call)."""
    db = _db(store)
    if db is None:
        finder = getattr(store, "thread_ids", None)  # the PostgreSQL store's own query
        return set(finder(project)) if callable(finder) else set()
    rows = db.execute(
        "SELECT s.id FROM sessions s WHERE s.project = ? AND s.parent_id IS NOT NULL AND EXISTS "
        "(SELECT 1 FROM messages m JOIN parts p ON p.message_id = m.id "
        " WHERE m.session_id = s.parent_id AND p.type = 'tool' "
        " AND json_extract(p.data, '$.meta.session_id') = s.id)",
        (project,),
    ).fetchall()
    return {row[0] for row in rows}


def session_list(store: Store, project: str, *, limit: int = 200) -> list[dict[str, Any]]:
    threads = thread_ids(store, project)
    return [info_json(s) for s in store.list_sessions(project, limit=limit)
            if s.id not in threads]


def _part_json(part: Any) -> dict[str, Any]:
    data = part_to_dict(part)
    if isinstance(part, ToolPart | TextPart):
        data["images"] = len(part.images)  # the page shows "[image]", not the data
    return data


def message_json(message: Message) -> dict[str, Any]:
    return {
        "id": message.id,
        "role": message.role,
        "model": message.model,
        "finish": message.finish,
        "created": message.created,
        "usage": asdict(message.usage),
        "parts": [_part_json(p) for p in message.parts],
    }


def messages_json(messages: list[Message]) -> list[dict[str, Any]]:
    return [message_json(m) for m in messages]


def fork(store: Store, source: SessionInfo, *, until: str | None = None) -> SessionInfo:
    """A new session whose history is a copy of `source`'s up to message `until` (included;
    everything when None). KeyError when `until` is not a message of that session."""
    messages = store.messages(source.id)
    if until is not None:
        index = next((i for i, m in enumerate(messages) if m.id == until), None)
        if index is None:
            raise KeyError(until)
        messages = messages[: index + 1]
    title = f"Fork of {source.title or source.id}"[:120]
    copy = store.create_session(project=source.project, model=source.model, title=title,
                                parent_id=source.id)
    renamed: dict[str, str] = {}
    for message in messages:
        new = new_id("msg")
        renamed[message.id] = new
        parts = [_renamed(p, renamed) for p in message.parts]
        store.add_message(Message(
            id=new, session_id=copy.id, role=message.role, parts=parts,
            created=message.created, model=message.model, finish=message.finish,
            usage=message.usage,
        ))
    found = store.get_session(copy.id)
    return found if found is not None else copy


def _renamed(part: Any, renamed: dict[str, str]) -> Any:
    if isinstance(part, SummaryPart) and part.covers_until in renamed:
        return SummaryPart(part.kind, part.text, renamed[part.covers_until])
    return part


def _scrub(value: Any, redact: Redactor) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_scrub(v, redact) for v in value]
    if isinstance(value, dict):
        return {k: _scrub(v, redact) for k, v in value.items()}
    return value


def _full_messages(store: Store, session_id: str) -> list[dict[str, Any]]:
    result = []
    for message in store.messages(session_id):
        item = message_json(message)
        item["parts"] = [part_to_dict(p) for p in message.parts]  # images included
        result.append(item)
    return result


def export(store: Store, info: SessionInfo, *, redact: Redactor) -> dict[str, Any]:
    """The session as JSON: its messages and parts, the threads of its sub-agents, no secret."""
    messages = _full_messages(store, info.id)
    threads: dict[str, Any] = {}
    pending = [messages]
    while pending:
        for message in pending.pop():
            for part in message["parts"]:
                child = ((part.get("meta") or {}).get("session_id")
                         if part.get("type") == "tool" else None)
                if child and child not in threads:
                    child_info = store.get_session(str(child))
                    threads[child] = {
                        "session": info_json(child_info) if child_info else None,
                        "messages": _full_messages(store, str(child)),
                    }
                    pending.append(threads[child]["messages"])
    data = {
        "format": EXPORT_FORMAT,
        "exported": time.time(),
        "session": info_json(info),
        "messages": messages,
        "threads": threads,
    }
    scrubbed: dict[str, Any] = _scrub(data, redact)
    return scrubbed
