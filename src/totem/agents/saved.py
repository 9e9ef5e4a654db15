"""Agents saved in the store: for all projects (scope "global") or for one (scope "project").

Each function takes the store's `sqlite3.Connection` (`SqliteStore.db`). `project=None`
means the global scope; otherwise `project` is the project's key (`project_key(root)`).
"""

from __future__ import annotations

import json
import sqlite3
import time

from totem.agents.definitions import AgentDef, check_name

__all__ = ["delete_agent", "get_saved_agent", "save_agent", "saved_agents"]

_COLUMNS = "scope, project, name, description, tools, maxsteps, model, prompt"


def _scope(project: str | None) -> tuple[str, str]:
    return ("global", "") if project is None else ("project", project)


def _agent(row: tuple[str, str, str, str, str | None, int | None, str | None, str]) -> AgentDef:
    scope, _project, name, description, tools, max_steps, model, prompt = row
    return AgentDef(
        name=name,
        description=description,
        tools=None if tools is None else tuple(json.loads(tools)),
        max_steps=max_steps,
        model=model,
        prompt=prompt,
        source="global" if scope == "global" else "project",
    )


def save_agent(db: sqlite3.Connection, agent: AgentDef, *, project: str | None) -> None:
    """Insert or replace the agent of that name in the scope."""
    check_name(agent.name)
    tools = None if agent.tools is None else json.dumps(list(agent.tools))
    db.execute(
        f"INSERT OR REPLACE INTO agents ({_COLUMNS}, updated) VALUES (?,?,?,?,?,?,?,?,?)",
        (
            *_scope(project),
            agent.name,
            agent.description,
            tools,
            agent.max_steps,
            agent.model,
            agent.prompt,
            time.time(),
        ),
    )


def delete_agent(db: sqlite3.Connection, name: str, *, project: str | None) -> bool:
    """Remove the saved agent; False when the scope has none of that name."""
    cursor = db.execute(
        "DELETE FROM agents WHERE scope = ? AND project = ? AND name = ?", (*_scope(project), name)
    )
    return cursor.rowcount > 0


def get_saved_agent(db: sqlite3.Connection, name: str, *, project: str | None) -> AgentDef | None:
    row = db.execute(
        f"SELECT {_COLUMNS} FROM agents WHERE scope = ? AND project = ? AND name = ?",
        (*_scope(project), name),
    ).fetchone()
    return _agent(row) if row else None


def saved_agents(db: sqlite3.Connection, project: str | None) -> list[AgentDef]:
    """The global agents, then (when `project` is given) that project's: later ones win."""
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM agents "
        "WHERE scope = 'global' OR (scope = 'project' AND project = ?) "
        "ORDER BY scope = 'project', name",
        (project,),  # NULL matches no project row
    ).fetchall()
    return [_agent(row) for row in rows]
