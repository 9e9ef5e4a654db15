"""`totem acp` runs this: the agent on stdin and stdout until the editor closes them.

stdout carries the protocol alone; anything totem has to say goes in session updates, and
Python's own warnings and errors go to stderr (the editor's log). stdin reaches the SDK through
`gate.LineGate`, which answers the lines the SDK cannot take (see there).
"""

from __future__ import annotations

import asyncio
import contextlib

from acp import run_agent
from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
from acp.stdio import stdio_streams

from totem.acp.agent import TotemAgent
from totem.acp.gate import LineGate

__all__ = ["serve_stdio"]


async def serve_stdio() -> None:
    agent = TotemAgent()
    stdin, stdout = await stdio_streams(limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    gate = LineGate(stdin, stdout, limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    pump = asyncio.create_task(gate.pump(), name="totem.acp.gate")
    try:
        # resume and close are in the SDK's "unstable" set; Zed and others use them
        await run_agent(agent, stdout, gate.reader, use_unstable_protocol=True)
    finally:
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pump
        await agent.aclose()
