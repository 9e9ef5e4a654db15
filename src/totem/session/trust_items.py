"""What an untrusted project's config files would change, in words: for the trust question
(terminal and page) and for the one notice of a run in an untrusted folder."""

from __future__ import annotations

from pathlib import Path

__all__ = ["agent_settings", "refused_notice", "trust_items", "untrusted_notice"]


def agent_settings(root: Path) -> list[str]:
    """The project's agents that pick a model or a step limit (ignored until trusted)."""
    from totem.agents.load import load_agents

    items: list[str] = []
    for name, agent in load_agents(root).items():
        if agent.source != "file":
            continue
        if agent.model:
            items.append(f"agent '{name}': model {agent.model}")
        if agent.max_steps is not None:
            items.append(f"agent '{name}': maxsteps {agent.max_steps}")
    return items


def trust_items(root: Path) -> list[str]:
    """Everything the project's config files would change once trusted; empty when nothing
    (then no question is needed). Raises ConfigError for a file with errors."""
    from totem.mcp import configured
    from totem.mcp.config import load_mcp_config
    from totem.settings.config import load_config

    items = list(load_config(root, trusted=False).ignored)
    if configured(root):
        items += load_mcp_config(root, trusted=False).ignored
    return items + agent_settings(root)


def untrusted_notice(items: list[str]) -> str | None:
    if not items:
        return None
    return ("This folder is not trusted, so its .totem config was ignored for: "
            + "; ".join(items)
            + ". Run `totem trust` here (or `totem run --trust`) to apply it.")


def refused_notice(items: list[str]) -> str | None:
    if not items:
        return None
    return "Ignored from the project's config (a project may never do this): " + "; ".join(items)
