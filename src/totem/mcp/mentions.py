"""What the person types that reaches an MCP server: `@server:uri` attaches a resource, and
`/server:prompt arguments` sends a server's prompt.

    expansion = await expand_input(manager, "explain @docs:file:///a.md")  # None: nothing
    expansion.model_text      the text with the resources' contents attached below it

Prompt arguments are `name=value` words (quoted as in a shell), or plain words given to the
prompt's arguments in order. Completion offers `@server:uri` from each server's resources
and `/server:prompt` from its prompts (`completions`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from totem.mcp.connection import Connection
    from totem.mcp.manager import McpManager

__all__ = ["McpInputError", "completions", "expand_input", "mentions_mcp"]

MENTION = re.compile(r"(?<!\S)@([A-Za-z0-9_.-]+):(\S+)")
PROMPT = re.compile(r"/([A-Za-z0-9_.-]+):(\S+)(?:\s+(.*))?", re.DOTALL)


class McpInputError(Exception):
    """A mention or prompt command that cannot be served; the message says why."""


@dataclass(frozen=True, slots=True)
class Expansion:
    model_text: str
    attached: list[str]  # `server:uri` of each resource attached, or `server:prompt`


def mentions_mcp(text: str, servers: Iterable[str]) -> bool:
    """Whether `text` names a configured server in an `@server:` mention or a prompt."""
    names = set(servers)
    prompt = PROMPT.fullmatch(text.strip())
    return (prompt is not None and prompt.group(1) in names) or any(
        m.group(1) in names for m in MENTION.finditer(text))


async def expand_input(manager: McpManager, text: str) -> Expansion | None:
    """The text as the model should get it; None when it mentions no running server.
    Raises McpInputError for a server that is not running, a resource or prompt it refuses,
    or missing prompt arguments."""
    prompt = PROMPT.fullmatch(text.strip())
    if prompt is not None and prompt.group(1) in manager.config.servers:
        return await _prompt(manager, prompt.group(1), prompt.group(2), prompt.group(3) or "")
    found = [m for m in MENTION.finditer(text) if m.group(1) in manager.config.servers]
    if not found:
        return None
    from totem.mcp.connection import McpServerError
    from totem.mcp.primitives import read_resource

    blocks: list[str] = []
    attached: list[str] = []
    for match in found:
        server, uri = match.group(1), match.group(2).rstrip(".,;:!?)")
        connection = await _running(manager, server)
        try:
            content = await read_resource(connection, uri)
        except McpServerError as exc:
            raise McpInputError(str(exc)) from None
        blocks.append(f'<resource server="{server}" uri="{uri}">\n{content}\n</resource>')
        attached.append(f"{server}:{uri}")
    return Expansion(text + "\n\n" + "\n\n".join(blocks), attached)


async def _running(manager: McpManager, server: str) -> Connection:
    """The server's connection, started again first if it had stopped."""
    from totem.mcp.connection import McpServerError

    connection = manager.connections.get(server)
    if connection is None or connection.state not in ("ready", "crashed"):
        row = next(r for r in manager.status() if r.name == server)
        why = f"{row.state}: {row.detail}" if row.detail else row.state
        raise McpInputError(f"The MCP server '{server}' is not running ({why}).")
    if manager.reviver is not None:
        try:
            await manager.reviver.revive(connection)
        except McpServerError as exc:
            raise McpInputError(str(exc)) from None
    return connection


async def _prompt(manager: McpManager, server: str, name: str, rest: str) -> Expansion:
    from totem.mcp.connection import McpServerError
    from totem.mcp.primitives import get_prompt

    connection = await _running(manager, server)
    prompt = next((p for p in connection.prompts if p.name == name), None)
    if prompt is None:
        known = ", ".join(f"/{server}:{p.name}" for p in connection.prompts) or "none"
        raise McpInputError(f"The MCP server '{server}' has no prompt '{name}' (its prompts: "
                            f"{known}).")
    wanted = [(a.name, bool(a.required)) for a in prompt.arguments or []]
    arguments = _arguments(rest, [n for n, _ in wanted])
    missing = [n for n, required in wanted if required and n not in arguments]
    if missing:
        usage = " ".join(f"{n}=…" if r else f"[{n}=…]" for n, r in wanted)
        raise McpInputError(f"/{server}:{name} needs {', '.join(missing)}: /{server}:{name} "
                            f"{usage}")
    try:
        text = await get_prompt(connection, name, arguments)
    except McpServerError as exc:
        raise McpInputError(str(exc)) from None
    return Expansion(text, [f"{server}:{name}"])


def _arguments(rest: str, names: list[str]) -> dict[str, str]:
    """`a=1 b="two words"`, or words given to the arguments in order (the last takes the
    rest when there are more words than arguments)."""
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise McpInputError(f"The prompt's arguments cannot be read: {exc}.") from None
    if words and all("=" in w for w in words):
        return dict(w.split("=", 1) for w in words)
    if not names:
        return {}
    given = dict(zip(names, words, strict=False))
    if len(words) > len(names):
        given[names[-1]] = " ".join(words[len(names) - 1:])
    return given


def completions(manager: McpManager) -> list[str]:
    """`@server:uri` for each listed resource and `/server:prompt` for each prompt."""
    words: list[str] = []
    for name, connection in manager.connections.items():
        words += [f"@{name}:{r.uri}" for r in connection.resources]
        words += [f"/{name}:{p.name}" for p in connection.prompts]
    return words
