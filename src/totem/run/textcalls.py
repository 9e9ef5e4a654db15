"""Tool calls written as text, the way small local models often answer.

When a server returns no structured tool call but the answer's text is one for a known tool,
the loop runs it and says so. Recognised shapes:

    <tool_call>{"name": "read", "arguments": {"path": "a.py"}}</tool_call>   (Qwen, Hermes)
    ```json {"name": "read", "arguments": {...}} ```                          (fenced block)
    {"name": "read", "arguments": {...}}                                        (bare JSON)

with `arguments` / `parameters` / `args` / `input`, a nested `function` object, a JSON list of
calls, or arguments encoded once more as a string.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["parse_text_tool_calls"]

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCED = re.compile(r"```[a-zA-Z_]*\s*\n?(.*?)```", re.S)
_ARG_KEYS = ("arguments", "parameters", "args", "input")


def _as_call(obj: Any, known: set[str]) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = obj.get("name") or obj.get("tool") or obj.get("tool_name")
    if not isinstance(name, str) or name not in known:
        return None
    args: Any = {}
    for key in _ARG_KEYS:
        if key in obj:
            args = obj[key]
            break
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return None
    if not isinstance(args, dict):
        return None
    return name, args


def _calls_in(blob: str, known: set[str]) -> list[tuple[str, dict[str, Any]]]:
    try:
        data = json.loads(blob)
    except json.JSONDecodeError:
        return []
    items = data if isinstance(data, list) else [data]
    calls = [_as_call(item, known) for item in items]
    return [c for c in calls if c is not None] if all(calls) else []


def parse_text_tool_calls(text: str, known: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls written in `text`, or [] when it holds none for a known tool."""
    stripped = text.strip()
    if not stripped or not known:
        return []
    for pattern in (_TAGGED, _FENCED):
        blocks = pattern.findall(stripped)
        if blocks:
            found = [call for block in blocks for call in _calls_in(block.strip(), known)]
            if found:
                return found
    if stripped[0] in "{[":
        return _calls_in(stripped, known)
    return []
