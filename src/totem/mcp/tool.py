"""An MCP server's tool in totem's `Tool` shape, and what its results become.

The model sees the server's own input schema (`McpTool.spec()`), under the name
`server__tool`. Arguments are checked against that schema here, with an error worded for
the model that repeats the schema; then the call asks permission (`mcp`, pattern
`server__tool`), reports the server's progress notifications as `ToolProgress` events, and
maps the result: text, images as image blocks, structured content, resource links and
embedded resources. A tool error from the server, a crash, or a timeout is a `ToolError`.

Which tools are offered in full, and which only by name, is offer.py's business.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import mcp_types as types
from pydantic import BaseModel, ConfigDict

from totem.events import ToolProgress
from totem.mcp.connection import Connection, McpServerError
from totem.mcp.lifecycle import Reviver
from totem.messages import ImageBlock
from totem.providers.base import ToolSpec
from totem.tools.base import ToolContext, ToolError, ToolResult, truncate

__all__ = ["McpArguments", "McpTool", "SchemaProblem", "one_line", "render_result"]

MAX_DESCRIPTION = 4000
SHORT_DESCRIPTION = 120  # characters of a listed tool's description: its first line


class SchemaProblem(Exception):
    """A tool's input schema cannot be used; the tool is left out with a notice."""


class McpArguments(BaseModel):
    """Whatever the model sent: the server's JSON schema is checked in `McpTool.run`."""

    model_config = ConfigDict(extra="allow")


class McpTool:
    Input: ClassVar[type[BaseModel]] = McpArguments
    kind: ClassVar[str] = "mcp"

    def __init__(self, connection: Connection, tool: types.Tool, *, name: str) -> None:
        self.connection = connection
        self.server = connection.name
        self.remote = tool.name  # the name the server knows
        self.name = name
        text = tool.description or tool.title or f"The {tool.name} tool of {self.server}."
        self.description = text[:MAX_DESCRIPTION]
        hints = tool.annotations
        self.read_only = bool(hints is not None and hints.read_only_hint)
        self.schema = _model_schema(tool.input_schema)
        self._validator = _validator(self.schema, name)
        self.reviver: Reviver | None = None  # restarts a server that stopped, on next use
        self.offered = True  # False: listed by name only, in mcp_tool_schema (offer.py)

    def spec(self) -> ToolSpec:
        """What the model sees: the server's own schema."""
        return ToolSpec(self.name, self.description, self.schema)

    def schema_text(self) -> str:
        return json.dumps(self.schema, ensure_ascii=False, separators=(",", ":"))

    def check(self, arguments: dict[str, Any]) -> None:
        errors = sorted(self._validator.iter_errors(arguments), key=lambda e: list(e.path))
        if not errors:
            return
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error.path) or 'arguments'}: {error.message}"
            for error in errors[:5]
        )
        raise ToolError(
            f"Invalid arguments for {self.name}: {problems}. Its parameters (JSON schema): "
            + truncate(self.schema_text(), 4000)
        )

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        arguments = args.model_dump() if isinstance(args, BaseModel) else dict(args or {})
        self.check(arguments)
        shown = json.dumps(arguments, ensure_ascii=False)
        shown = shown if len(shown) <= 200 else shown[:199] + "…"
        await ctx.ask(
            "mcp",
            [self.name],
            title=f"call {self.remote} on the MCP server '{self.server}' with {shown}",
        )
        ctx.abort.check()

        async def report(progress: float, total: float | None, message: str | None) -> None:
            if ctx.emit is not None:
                ctx.emit(ToolProgress(ctx.call_id, self.name, message or "", progress, total))

        try:
            note = await self.reviver.revive(self.connection) if self.reviver else ""
            result = await self.connection.call(self.remote, arguments, progress=report)
        except McpServerError as exc:
            raise ToolError(str(exc)) from None
        if self.reviver is not None:
            self.reviver.succeeded(self.connection)
        text, images = render_result(result)
        text = f"{note}\n{text}" if note else text
        text = truncate(text, ctx.settings.output_limit, hint="the MCP server's output was long")
        if result.is_error:
            raise ToolError(text or f"{self.remote} failed without saying why.")
        return ToolResult(text, title=f"{self.server}: {self.remote}", images=images)


def one_line(text: str) -> str:
    """The first sentence or line of a description, at most SHORT_DESCRIPTION characters."""
    line = text.strip().split("\n", 1)[0].strip()
    end = line.find(". ")
    line = line[: end + 1] if end > 0 else line
    return line if len(line) <= SHORT_DESCRIPTION else line[: SHORT_DESCRIPTION - 1] + "…"


def _model_schema(schema: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(schema, dict):
        raise SchemaProblem("the input schema is not a JSON object")
    cleaned = {k: v for k, v in schema.items() if k != "$schema"}
    if cleaned.get("type") != "object":
        raise SchemaProblem("the input schema does not describe an object")
    cleaned.setdefault("properties", {})
    return cleaned


def _validator(schema: dict[str, Any], name: str) -> Any:
    from jsonschema import SchemaError  # type: ignore[import-untyped, unused-ignore]
    from jsonschema.validators import validator_for  # type: ignore[import-untyped, unused-ignore]
    from referencing import Registry

    cls = validator_for(schema)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        raise SchemaProblem(f"the input schema is not valid JSON Schema: {exc.message}") from None
    return cls(schema, registry=Registry())


def render_result(result: types.CallToolResult) -> tuple[str, list[ImageBlock]]:
    """A tool result as text for the model, with its images as image blocks."""
    texts: list[str] = []
    images: list[ImageBlock] = []
    for block in result.content:
        match block:
            case types.TextContent(text=text):
                texts.append(text)
            case types.ImageContent(data=data, mime_type=mime):
                images.append(ImageBlock(mime, data))
            case types.AudioContent(data=data, mime_type=mime):
                texts.append(f"[audio ({mime}, about {len(data) * 3 // 4} bytes), not shown]")
            case types.ResourceLink():
                texts.append(_link(block))
            case types.EmbeddedResource(resource=resource):
                texts.extend(_embedded(resource, images))
    structured = result.structured_content
    if structured is not None and not _already_in(structured, texts):
        dumped = json.dumps(structured, ensure_ascii=False, indent=2)
        texts.append(f"Structured content:\n{dumped}")
    if not texts and not images:
        texts.append("(no output)")
    return "\n".join(texts), images


def _link(link: types.ResourceLink) -> str:
    line = f"[resource link] {link.title or link.name}: {link.uri}"
    if link.mime_type:
        line += f" ({link.mime_type})"
    if link.description:
        line += f" — {link.description}"
    return line


def _embedded(
    resource: types.TextResourceContents | types.BlobResourceContents, images: list[ImageBlock]
) -> list[str]:
    mime = resource.mime_type or ""
    if isinstance(resource, types.TextResourceContents):
        return [f"[resource {resource.uri}{f' ({mime})' if mime else ''}]", resource.text]
    if mime.startswith("image/"):
        images.append(ImageBlock(mime, resource.blob))
        return [f"[resource {resource.uri}: image below]"]
    size = len(resource.blob) * 3 // 4
    return [f"[resource {resource.uri}: {mime or 'binary'}, about {size} bytes, not shown]"]


def _already_in(structured: Any, texts: list[str]) -> bool:
    """Servers usually repeat structured content as JSON text; do not show it twice."""
    for text in texts:
        try:
            if json.loads(text) == structured:
                return True
        except ValueError:
            continue
    return False
