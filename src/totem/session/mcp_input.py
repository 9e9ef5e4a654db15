"""`@server:uri` mentions and `/server:prompt` commands in what the person types, made into
what the model receives (mcp/mentions.py does the work; this starts the servers first).

    expansion = await mcp_input(service, label, text, emit)   # None: no MCP in the text

The servers start as they do for a run (each asking first, through `emit`), so a mention in
the first message of a session works; later runs reuse them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from totem.events import Event
from totem.mcp.mentions import Expansion, McpInputError, mentions_mcp

if TYPE_CHECKING:
    from totem.session.service import SessionService

__all__ = ["McpInputError", "mcp_completions", "mcp_input"]


async def mcp_input(
    service: SessionService, label: str, text: str, emit: Callable[[Event], None]
) -> Expansion | None:
    toolset = service.toolset
    if toolset.mcp_config is None or not mentions_mcp(text, toolset.mcp_config.servers):
        return None
    await toolset.mcp_tools(service.agent(label), emit)
    assert toolset.mcp is not None
    from totem.mcp.mentions import expand_input

    return await expand_input(toolset.mcp, text)


def mcp_completions(service: SessionService) -> list[str]:
    """What Tab may complete to: each resource and prompt of the running servers; before
    they start, `@server:` and `/server:` for each configured one."""
    toolset = service.toolset
    if toolset.mcp is not None:
        from totem.mcp.mentions import completions

        return completions(toolset.mcp)
    servers = toolset.mcp_config.servers if toolset.mcp_config is not None else {}
    return [word for name in servers for word in (f"@{name}:", f"/{name}:")]
