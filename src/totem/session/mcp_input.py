"""`@server:uri` mentions and `/server:prompt` commands in what the person types, made into
what the model receives, for every client of the session (mcp/mentions.py does the work).

    events = with_mcp_input(toolset, agent, text, run)   # run(model_text) -> the run's events

The servers start first, as they do for a run (each asking, through the same stream of
events, so any client answers as it answers a run's questions); then the run gets the text
with the resources attached, or the prompt. Input that cannot be served ends the stream
with a notice saying why and a RunFinished("error"); nothing is sent to the model.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from totem.events import Event, Notice, RunFinished
from totem.mcp.mentions import Expansion, McpInputError, mentions_mcp

if TYPE_CHECKING:
    from totem.run.agent import Agent
    from totem.session.toolset import Toolset

__all__ = ["mcp_completions", "mentions_servers", "with_mcp_input"]


def mentions_servers(toolset: Toolset, text: str) -> bool:
    """Whether `text` names a configured MCP server (cheap: nothing is started)."""
    return toolset.mcp_config is not None and mentions_mcp(text, toolset.mcp_config.servers)


async def with_mcp_input(
    toolset: Toolset,
    agent: Agent,
    text: str,
    run: Callable[[str | None], AsyncIterator[Event]],
) -> AsyncIterator[Event]:
    events: asyncio.Queue[Event] = asyncio.Queue()
    expanding = asyncio.ensure_future(_expand(toolset, agent, text, events.put_nowait))
    while not (expanding.done() and events.empty()):
        getting = asyncio.ensure_future(events.get())
        await asyncio.wait({getting, expanding}, return_when=asyncio.FIRST_COMPLETED)
        if getting.done():
            yield getting.result()
        else:
            getting.cancel()
    try:
        expansion = expanding.result()
    except McpInputError as exc:
        yield Notice(str(exc), "warning")
        yield RunFinished("error", str(exc))
        return
    if expansion is not None:
        yield Notice(f"Attached {', '.join(expansion.attached)}.")
    async for event in run(expansion.model_text if expansion is not None else None):
        yield event


async def _expand(
    toolset: Toolset, agent: Agent, text: str, emit: Callable[[Event], None]
) -> Expansion | None:
    await toolset.mcp_tools(agent, emit)
    assert toolset.mcp is not None
    from totem.mcp.mentions import expand_input

    return await expand_input(toolset.mcp, text)


def mcp_completions(toolset: Toolset) -> list[str]:
    """What Tab may complete to: each resource and prompt of the running servers; before
    they start, `@server:` and `/server:` for each configured one."""
    if toolset.mcp is not None:
        from totem.mcp.mentions import completions

        return completions(toolset.mcp)
    servers = toolset.mcp_config.servers if toolset.mcp_config is not None else {}
    return [word for name in servers for word in (f"@{name}:", f"/{name}:")]
