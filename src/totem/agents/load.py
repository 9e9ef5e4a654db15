"""Every agent by name, from the four places where agents are defined; the last wins:
built in, saved for all projects, saved for this project, the project's .totem/agents.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from totem.agents.definitions import (
    BUILTIN_DIR,
    AgentDef,
    AgentError,
    AgentSource,
    parse_agent,
    project_key,
)
from totem.agents.saved import saved_agents

if TYPE_CHECKING:
    from totem.store.base import Store

__all__ = ["load_agents"]


def _folder_agents(
    folder: Path, source: AgentSource, problems: list[str] | None
) -> dict[str, AgentDef]:
    found: dict[str, AgentDef] = {}
    if not folder.is_dir():
        return found
    for file in sorted(folder.glob("*.md")):
        notes: list[str] = []
        try:
            text = file.read_text(encoding="utf-8")
            agent = parse_agent(
                text, source=source, path=str(file), default_name=file.stem, notes=notes
            )
        except (OSError, UnicodeDecodeError, AgentError) as exc:
            if problems is not None:
                problems.append(f"Agent file {file}: {exc}. It was not loaded.")
            continue
        if problems is not None:
            problems.extend(f"Agent file {file}: {note}." for note in notes)
            if agent.name in found:
                problems.append(
                    f"Agent file {file} defines '{agent.name}' again; it replaces "
                    f"{found[agent.name].path}."
                )
        found[agent.name] = agent
    return found


def _connection(store: Store | sqlite3.Connection | None) -> sqlite3.Connection | None:
    if isinstance(store, sqlite3.Connection):
        return store
    db = getattr(store, "db", None)  # SqliteStore; another backend keeps no saved agents yet
    return db if isinstance(db, sqlite3.Connection) else None


def load_agents(
    root: Path,
    store: Store | sqlite3.Connection | None = None,
    *,
    problems: list[str] | None = None,
) -> dict[str, AgentDef]:
    """Every agent by name: built in, saved for all projects, for this one, project files.

    Problems (a malformed file, an unknown field) are appended to `problems` when given,
    each a sentence naming the file, worth showing as a notice.
    """
    agents = _folder_agents(BUILTIN_DIR, "builtin", problems)
    db = _connection(store)
    if db is not None:
        for agent in saved_agents(db, project_key(root)):
            agents[agent.name] = agent
    agents.update(_folder_agents(root / ".totem" / "agents", "file", problems))
    return agents
