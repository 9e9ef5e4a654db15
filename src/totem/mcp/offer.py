"""Which MCP tools the model is offered, and how.

While the definitions of all MCP tools fit the budget (tokens, `tools.mcp_schema_budget`),
each is offered with its server's schema. Past it, they are listed by name and one line in
the description of `mcp_tool_schema` (their `offered` is False: no definition is sent, but
they can be called); calling it with some names answers with their schemas and offers those
tools in full from the next step on (the manager rebuilds the offer, and the run picks it up
between steps).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from totem.mcp.config import tool_name
from totem.mcp.connection import Connection
from totem.mcp.lifecycle import Reviver
from totem.mcp.tool import McpTool, SchemaProblem, one_line
from totem.providers.base import ToolSpec
from totem.tools.base import Tool, ToolContext, ToolResult

__all__ = ["SCHEMA_TOOL", "McpSchemaTool", "Offer", "make_tools", "make_offer"]

SCHEMA_TOOL = "mcp_tool_schema"
CHARS_PER_TOKEN = 4
INTRO = (Path(__file__).parent / "schema_tool.txt").read_text(encoding="utf-8").strip()


@dataclass(slots=True)
class Offer:
    tools: list[Tool]  # every tool (the listed ones not offered), then the schema tool
    listed: list[McpTool]  # the tools offered by name only
    tokens: int  # what every definition in full would take


def make_tools(
    connections: Iterable[Connection], *, reviver: Reviver, problem: Callable[[str], None]
) -> list[McpTool]:
    """Every usable tool of the servers that run (or stopped, to be started on next use)."""
    tools: list[McpTool] = []
    taken: set[str] = set()
    for connection in connections:
        if connection.state not in ("ready", "crashed"):
            continue
        for remote in connection.tools:
            name = tool_name(connection.name, remote.name)
            if name in taken:
                name = tool_name(connection.name, f"{remote.name}_{len(taken)}")
            try:
                tool = McpTool(connection, remote, name=name)
            except SchemaProblem as exc:
                problem(f"The MCP server '{connection.name}' offers the tool {remote.name} "
                        f"with a schema that cannot be used ({exc}); it is left out.")
                continue
            taken.add(name)
            tool.reviver = reviver
            tools.append(tool)
    return tools


def tokens_of(tools: Iterable[McpTool]) -> int:
    chars = sum(len(t.name) + len(t.description) + len(json.dumps(t.schema)) for t in tools)
    return chars // CHARS_PER_TOKEN


def make_offer(
    tools: list[McpTool], *, budget: int, loaded: set[str], load: Callable[[list[str]], None]
) -> Offer:
    """All in full within `budget`; else the `loaded` ones in full and the rest listed."""
    tokens = tokens_of(tools)
    if tokens <= budget or not tools:
        return Offer(list(tools), [], tokens)
    listed = [t for t in tools if t.name not in loaded]
    for tool in listed:
        tool.offered = False  # callable still, for a run that does not refresh its tools
    schema: list[Tool] = [McpSchemaTool(tools, listed, load)] if listed else []
    return Offer([*tools, *schema], listed, tokens)


class SchemaArguments(BaseModel):
    names: list[str] = Field(description="Names of the listed MCP tools you mean to use.")


class McpSchemaTool:
    """Lists the MCP tools offered by name; loads the ones the model asks for."""

    name: ClassVar[str] = SCHEMA_TOOL
    read_only: ClassVar[bool] = True
    kind: ClassVar[str] = "mcp"
    Input: ClassVar[type[BaseModel]] = SchemaArguments

    def __init__(
        self, tools: list[McpTool], listed: list[McpTool], load: Callable[[list[str]], None]
    ) -> None:
        self.tools = {t.name: t for t in tools}
        self.load = load
        lines = [f"- {t.name}: {one_line(t.description)}" for t in listed]
        self.description = INTRO + "\n" + "\n".join(lines)

    def spec(self) -> ToolSpec:
        names = SchemaArguments.model_fields["names"].description or ""
        parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "names": {"type": "array", "items": {"type": "string"}, "description": names}
            },
            "required": ["names"],
        }
        return ToolSpec(self.name, self.description, parameters)

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        assert isinstance(args, SchemaArguments)
        parts: list[str] = []
        found: list[str] = []
        for name in args.names:
            tool = self.tools.get(name)
            if tool is None:
                known = ", ".join(sorted(self.tools))
                parts.append(f"{name}: no such MCP tool. MCP tools: {known}.")
                continue
            found.append(name)
            parts.append(f"{name}: {tool.description}\nParameters: {tool.schema_text()}")
        if found:
            self.load(found)
            parts.append(f"From your next step on, you can call: {', '.join(found)}.")
        return ToolResult("\n\n".join(parts) or "No tool names given.", title="MCP tool schemas")
