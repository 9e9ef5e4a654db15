"""The MCP client: servers from `.totem/mcp.json` and the config, offered as `server__tool`.

    config.py        the servers as configuration (no SDK import)
    manager.py       McpManager: ask, start, offer tools, stop (no SDK import until started)
    connection.py    one server, owned by a task of its own (imports the SDK)
    tool.py          McpTool (the Tool shape), result mapping
    offer.py         which tools are offered in full, which listed by name (mcp_tool_schema)
    lifecycle.py     restart on next use with backoff; disable after repeated failures
    oauth.py         OAuth sign-in through the SDK (oauth_store.py: tokens in the key store)
    primitives.py    resources and prompts: listed at start, read and fetched on request
    mentions.py      `@server:uri` and `/server:prompt` in what the person types
    elicitation.py   a server's elicitation as questions for the person
    sampling.py      a server's sampling request, served by the session's model

Importing this package loads nothing of the MCP SDK; it is imported only when a server is
configured and allowed to start. `configured(root)` tells, cheaply, whether to look further.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from totem.mcp.presence import configured

if TYPE_CHECKING:
    from totem.mcp.config import McpConfig, ServerConfig, load_mcp_config
    from totem.mcp.manager import McpManager, ServerStatus, is_mcp_tool

__all__ = [
    "configured",
    "McpConfig",
    "McpManager",
    "ServerConfig",
    "ServerStatus",
    "is_mcp_tool",
    "load_mcp_config",
]


def __getattr__(name: str) -> Any:
    """Each name loads its module on first use, so that `configured` costs nothing more."""
    if name in ("McpConfig", "ServerConfig", "load_mcp_config"):
        from totem.mcp import config

        return getattr(config, name)
    if name in ("McpManager", "ServerStatus", "is_mcp_tool"):
        from totem.mcp import manager

        return getattr(manager, name)
    raise AttributeError(f"module 'totem.mcp' has no attribute {name!r}")
