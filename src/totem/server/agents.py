"""The Agents panel: list every agent, and create, edit or delete the saved ones.

Built-in agents and the project's `.totem/agents/*.md` files are shown read-only; saved
agents live in the store, for all projects ("global") or for this one ("project").
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from totem.agents.definitions import (
    AgentDef,
    AgentError,
    check_name,
    parse_max_steps,
    parse_tools,
    project_key,
)
from totem.agents.load import load_agents
from totem.agents.saved import delete_agent, save_agent, saved_agents
from totem.store.base import Store

__all__ = ["agent_json", "agents_view", "delete_saved", "save_from_json"]


def _db(store: Store) -> sqlite3.Connection:
    db = getattr(store, "db", None)
    if not isinstance(db, sqlite3.Connection):
        raise AgentError("this store keeps no saved agents")
    return db


def agent_json(agent: AgentDef, *, active: bool) -> dict[str, Any]:
    return {
        "name": agent.name,
        "description": agent.description,
        "tools": list(agent.tools) if agent.tools is not None else None,
        "maxsteps": agent.max_steps,
        "model": agent.model,
        "prompt": agent.prompt,
        "source": agent.source,
        "path": agent.path,
        "editable": agent.source in ("global", "project"),
        "active": active,  # the definition a run of this name gets (the last place wins)
    }


def agents_view(root: Path, store: Store) -> dict[str, Any]:
    problems: list[str] = []
    winners = load_agents(root, store, problems=problems)
    listed = [agent_json(a, active=True) for a in winners.values()
              if a.source in ("builtin", "file")]
    db = getattr(store, "db", None)  # a store other than SQLite keeps no saved agents yet
    saved = saved_agents(db, project_key(root)) if isinstance(db, sqlite3.Connection) else []
    for agent in saved:
        winner = winners.get(agent.name)
        active = winner is not None and winner.source == agent.source
        listed.append(agent_json(agent, active=active))
    order = {"builtin": 0, "global": 1, "project": 2, "file": 3}
    listed.sort(key=lambda a: (a["name"], order[a["source"]]))
    return {"agents": listed, "problems": problems}


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str | int):
        raise AgentError(f"{key} must be text")
    return str(value).strip()


def save_from_json(root: Path, store: Store, data: dict[str, Any]) -> AgentDef:
    """Create or replace a saved agent from the panel's form; AgentError says what is wrong.

    `scope` is "global" or "project"; `previous` ({name, scope}) names the agent being edited
    when it was renamed or moved, so the old one is removed.
    """
    scope = data.get("scope")
    if scope not in ("global", "project"):
        raise AgentError("scope must be global (all projects) or project (this one)")
    description = _text(data, "description")
    if not description:
        raise AgentError("the description is empty (the model chooses an agent by it)")
    prompt = _text(data, "prompt")
    if not prompt:
        raise AgentError("the prompt is empty")
    tools = data.get("tools")
    if isinstance(tools, list) and not tools:
        raise AgentError("choose at least one tool, or all of them")
    agent = AgentDef(
        name=check_name(_text(data, "name")),
        description=description,
        tools=parse_tools(tools),
        max_steps=parse_max_steps(data.get("maxsteps") or None),
        model=_text(data, "model") or None,
        prompt=prompt,
        source=scope,
    )
    db = _db(store)
    project = project_key(root) if scope == "project" else None
    previous = data.get("previous")
    if isinstance(previous, dict) and previous.get("scope") in ("global", "project"):
        old_project = project_key(root) if previous["scope"] == "project" else None
        if (previous.get("name"), old_project) != (agent.name, project):
            delete_agent(db, str(previous.get("name")), project=old_project)
    save_agent(db, agent, project=project)
    return agent


def delete_saved(root: Path, store: Store, *, scope: str, name: str) -> bool:
    if scope not in ("global", "project"):
        raise AgentError("scope must be global or project")
    project = project_key(root) if scope == "project" else None
    return delete_agent(_db(store), name, project=project)
