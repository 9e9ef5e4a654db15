"""Agent definitions: built in, saved (for all projects or one), and project files.

`load_agents(root, store)` gives every agent by name, the last place winning; the `task`
tool offers them and runs the chosen one. `totem.agents.saved` keeps the saved ones.
"""

from __future__ import annotations

from totem.agents.definitions import (
    AgentDef,
    AgentError,
    AgentSource,
    parse_agent,
    project_key,
    to_markdown,
)
from totem.agents.load import load_agents

__all__ = [
    "AgentDef",
    "AgentError",
    "AgentSource",
    "load_agents",
    "parse_agent",
    "project_key",
    "to_markdown",
]
