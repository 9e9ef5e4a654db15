"""A server's resources and prompts: listed when it starts, read and fetched on request.

    await catalogue(connection)                 connection.resources, connection.prompts
    text = await read_resource(connection, uri) the contents, as text for the model
    text = await get_prompt(connection, name, {"city": "Paris"})

Resources and prompts are what the person chooses (an `@server:uri` mention, a
`/server:prompt` command), so no permission question comes before them; the server itself
was asked for before it started.
"""

from __future__ import annotations

import functools

import mcp_types as types
from mcp import Client

from totem.mcp.connection import Connection, McpServerError
from totem.mcp.tool import render_result

__all__ = ["catalogue", "get_prompt", "read_resource"]

MAX_PAGES = 20


async def catalogue(connection: Connection) -> None:
    """List the server's resources and prompts (those it says it has); a failure leaves the
    lists empty and is written to the server's log, never raised."""
    capabilities = connection.capabilities
    if capabilities is None:
        return
    try:
        if capabilities.resources is not None:
            connection.resources = await _resources(connection)
        if capabilities.prompts is not None:
            connection.prompts = await _prompts(connection)
    except McpServerError as exc:
        connection.note(f"listing failed: {exc.message}")


async def _resources(connection: Connection) -> list[types.Resource]:
    found: list[types.Resource] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await connection.request("resources/list", functools.partial(
            _list_resources, cursor=cursor))
        found.extend(page.resources)
        cursor = page.next_cursor
        if cursor is None:
            break
    return found


async def _prompts(connection: Connection) -> list[types.Prompt]:
    found: list[types.Prompt] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await connection.request("prompts/list", functools.partial(
            _list_prompts, cursor=cursor))
        found.extend(page.prompts)
        cursor = page.next_cursor
        if cursor is None:
            break
    return found


async def _list_resources(client: Client, *, cursor: str | None) -> types.ListResourcesResult:
    return await client.list_resources(cursor=cursor)


async def _list_prompts(client: Client, *, cursor: str | None) -> types.ListPromptsResult:
    return await client.list_prompts(cursor=cursor)


async def read_resource(connection: Connection, uri: str) -> str:
    """The resource's contents as text: text as it is, images and other data described."""
    result = await connection.request(f"resources/read of {uri}",
                                      lambda c: c.read_resource(uri))
    parts: list[str] = []
    for content in result.contents:
        if isinstance(content, types.TextResourceContents):
            parts.append(content.text)
        else:
            size = len(content.blob) * 3 // 4
            parts.append(f"[{content.mime_type or 'binary data'}, about {size} bytes, not shown]")
    return "\n".join(parts) or "(empty)"


async def get_prompt(connection: Connection, name: str, arguments: dict[str, str]) -> str:
    """The prompt's messages as one text: a lone user message as it is; several with roles."""
    result = await connection.request(f"prompts/get of {name}",
                                      lambda c: c.get_prompt(name, arguments))
    texts: list[tuple[str, str]] = []
    for message in result.messages:
        block = types.CallToolResult(content=[message.content])
        text, _ = render_result(block)
        texts.append((message.role, text))
    if len(texts) == 1 and texts[0][0] == "user":
        return texts[0][1]
    return "\n\n".join(f"[{role}]\n{text}" for role, text in texts)
