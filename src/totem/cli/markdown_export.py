"""A session's export (the JSON of `server.sessions.export`) written as Markdown."""

from __future__ import annotations

import json
import time
from typing import Any

__all__ = ["to_markdown"]

OUTPUT_LIMIT = 2_000  # characters of a tool's output kept in the Markdown


def to_markdown(data: dict[str, Any]) -> str:
    """The conversation: a heading, then each message's text, tool calls and notices."""
    info = data.get("session") or {}
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(info.get("created", 0))))
    lines = [f"# {info.get('title') or info.get('id', 'session')}", "",
             f"Session `{info.get('id', '')}` · {info.get('model', '')} · started {when}", ""]
    for message in data.get("messages", []):
        lines += _message(message)
    return "\n".join(lines).rstrip() + "\n"


def _message(message: dict[str, Any]) -> list[str]:
    who = "You" if message.get("role") == "user" else "totem"
    parts = [_part(p) for p in message.get("parts", [])]
    if message.get("role") == "user" and all(
        p.get("synthetic") for p in message.get("parts", []) if p.get("type") == "text"
    ) and any(p.get("type") == "text" for p in message.get("parts", [])):
        who = "totem (note to the model)"
    body = [line for part in parts for line in part]
    return [f"## {who}", "", *body] if body else []


def _part(part: dict[str, Any]) -> list[str]:
    kind = part.get("type")
    if kind == "text":
        count = len(part.get("images") or [])
        attached = [f"*[{count} image{'s' * (count != 1)} attached]*", ""] if count else []
        return [str(part.get("text", "")), "", *attached]
    if kind == "reasoning":
        text = str(part.get("text", "")).strip()
        return ["<details><summary>thinking</summary>", "", text, "", "</details>", ""]
    if kind == "tool":
        return _tool(part)
    if kind == "notice":
        return [f"> {part.get('level', 'info')}: {part.get('text', '')}", ""]
    if kind == "summary":
        return [f"*Summary of earlier turns ({part.get('kind')}):* {part.get('text', '')}", ""]
    return []


def _tool(part: dict[str, Any]) -> list[str]:
    output = str(part.get("output", ""))
    if len(output) > OUTPUT_LIMIT:
        output = output[:OUTPUT_LIMIT] + f"\n… ({len(output) - OUTPUT_LIMIT:,} more characters)"
    args = json.dumps(part.get("input"), ensure_ascii=False)
    if len(args) > 300:
        args = args[:299] + "…"
    fence = "````" if "```" in output else "```"
    return [f"**{part.get('name')}** ({part.get('state')}) `{args}`", "",
            fence, output.rstrip(), fence, ""]
