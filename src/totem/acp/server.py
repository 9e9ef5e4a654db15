"""`totem acp` runs this: the agent on stdin and stdout until the editor closes them.

stdout carries the protocol alone; anything totem has to say goes in session updates, and
Python's own warnings and errors go to stderr (the editor's log).
"""

from __future__ import annotations

from acp import run_agent

from totem.acp.agent import TotemAgent

__all__ = ["serve_stdio"]


async def serve_stdio() -> None:
    agent = TotemAgent()
    try:
        # resume and close are in the SDK's "unstable" set; Zed and others use them
        await run_agent(agent, use_unstable_protocol=True)
    finally:
        await agent.aclose()
