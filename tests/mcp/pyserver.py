"""An MCP server written with the Python `mcp` SDK (2.x), run by the tests over stdio.

python tests/mcp/pyserver.py          (the tests start it through totem's MCP client)
"""

from __future__ import annotations

import asyncio
import os
import sys

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

app = MCPServer("pyserver")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


class Color(BaseModel):
    color: str = Field(default="blue", description="a colour")
    shade: int = Field(default=3, description="how dark, 1 to 5")


@app.tool()
async def ask_color(ctx: Context) -> str:
    """Ask the person for their favourite colour."""
    result = await ctx.elicit("What is your favourite colour?", Color)
    if result.action == "accept":
        return f"accepted {result.data.color} {result.data.shade}"
    return result.action


@app.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Report progress for each step, then finish."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps, f"step {i + 1}")
        await asyncio.sleep(0.02)
    return f"did {steps} steps"


@app.tool()
async def hang(seconds: float) -> str:
    """Sleep for a while."""
    await asyncio.sleep(seconds)
    return "woke up"


@app.tool()
def crash() -> str:
    """Die in the middle of the call."""
    print("pyserver: crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


@app.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Ask the client's model to summarize a text (sampling)."""
    result = await ctx.session.create_message(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(text=text))],
        max_tokens=50,
        system_prompt="Summarize.",
    )
    content = result.content
    return f"model {result.model} said: {getattr(content, 'text', content)}"


def shout(text: str) -> str:
    """Say the text in capitals."""
    return text.upper()


@app.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `shout` and tell the client that the tool list changed."""
    app.add_tool(shout)
    await ctx.session.send_tool_list_changed()
    return "added shout"


@app.tool()
async def shrink(ctx: Context) -> str:
    """Remove the tool `shout` and tell the client that the tool list changed."""
    app.remove_tool("shout")
    await ctx.session.send_tool_list_changed()
    return "removed shout"


@app.tool()
async def add_note(name: str, text: str, ctx: Context) -> str:
    """Offer a resource note://NAME with the text, and tell the client that resources changed."""
    app.resource(f"note://{name}", name=name)(lambda: text)
    await ctx.session.send_resource_list_changed()
    return f"added note://{name}"


@app.tool()
def whoami() -> dict[str, str]:
    """The server's process id and working directory."""
    return {"pid": str(os.getpid()), "cwd": os.getcwd()}


if __name__ == "__main__":
    app.run("stdio")
