"""Tool calls written as text, the way small local models often answer.

When a server returns no structured tool call but the answer's text is one for a known tool,
the loop runs it and says so. Recognised shapes:

    <tool_call>{"name": "read", "arguments": {"path": "a.py"}}</tool_call>   (Qwen, Hermes)
    ```json {"name": "read", "arguments": {...}} ```                          (fenced block)
    {"name": "read", "arguments": {...}}                                        (bare JSON)
    {"tool": "read", "args": {...}}   {"read": {"path": "a.py"}}               (other keys)
    <bash command="ls"/>   <read><path>a.py</path></read>                       (XML)
    read(path="a.py")   bash("ls")                                              (a call)

with `arguments` / `parameters` / `args` / `input`, a nested `function` object, a JSON list of
calls, arguments encoded once more as a string, or the arguments wrapped in a copy of the
schema ({"type": "object", "properties": {...}}). A call to a tool named after a file
(`hello.txt` with a content) is a write of that file (`repair_call`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from totem.run.textcall_forms import Params

__all__ = ["params_of", "parse_text_tool_calls", "repair_call"]

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCED = re.compile(r"```[a-zA-Z_]*\s*\n?(.*?)```", re.S)
_ARG_KEYS = ("arguments", "parameters", "args", "input")
_FILE_NAME = re.compile(r"^[\w./-]*\w\.[A-Za-z0-9]{1,8}$")
Call = tuple[str, dict[str, Any]]


def _unwrapped(args: dict[str, Any]) -> dict[str, Any]:
    """Arguments given inside a copy of the schema: {"type": "object", "properties": {...}}."""
    props = args.get("properties")
    if args.get("type") == "object" and isinstance(props, dict):
        return {k: (v["value"] if isinstance(v, dict) and "value" in v else v)
                for k, v in props.items()}
    return args


def repair_call(name: str, args: dict[str, Any], known: Collection[str]) -> Call | None:
    """A call to a tool that does not exist, when it clearly means a real one: a tool named
    after a file, with a content, is a write of that file."""
    content = args.get("content", args.get("text"))
    if ("write" in known and name not in known and _FILE_NAME.match(name)
            and isinstance(content, str)):
        path = args.get("path")
        return "write", {"path": path if isinstance(path, str) and path else name,
                         "content": content}
    return None


def _as_call(obj: Any, known: Collection[str]) -> Call | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = obj.get("name") or obj.get("tool") or obj.get("tool_name")
    if name is None and len(obj) == 1:  # {"read": {"path": "a.py"}}
        name, value = next(iter(obj.items()))
        obj = {"name": name, "arguments": value}
    if not isinstance(name, str):
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
    args = _unwrapped(args)
    return (name, args) if name in known else repair_call(name, args, known)


def _calls_in(blob: str, known: Collection[str]) -> list[Call]:
    try:
        data = json.loads(blob)
    except json.JSONDecodeError:
        return []
    items = data if isinstance(data, list) else [data]
    calls = [_as_call(item, known) for item in items]
    return [c for c in calls if c is not None] if all(calls) else []


def _other_forms(blob: str, params: Params) -> list[Call]:
    """XML and name(args) calls (their module loads when a text is not JSON)."""
    from totem.run.textcall_forms import calls_in_python, calls_in_xml

    return calls_in_xml(blob, params) or calls_in_python(blob, params)


def _any_form(blob: str, known: Collection[str], params: Params) -> list[Call]:
    return _calls_in(blob, known) or _other_forms(blob, params)


def parse_text_tool_calls(
    text: str, known: Collection[str], *, params: Params | None = None
) -> list[Call]:
    """The tool calls written in `text`, or [] when it holds none for a known tool.
    `params` gives each tool's argument names (required first) for the XML and call forms."""
    stripped = text.strip()
    if not stripped or not known:
        return []
    params = params if params is not None else {name: () for name in known}
    tagged = _TAGGED.findall(stripped)
    found = [c for block in tagged for c in _any_form(block.strip(), known, params)]
    if found:
        return found
    fenced = _FENCED.findall(stripped)
    found = [c for block in fenced for c in _calls_in(block.strip(), known)]
    if found:
        return found
    if stripped[0] in "{[":
        found = _calls_in(stripped, known)
        if found:
            return found
    return _other_forms(stripped, params)


def params_of(specs: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """Argument names per tool from JSON schemas (name -> schema), required first."""
    made = {}
    for name, schema in specs.items():
        props = list(schema.get("properties", {}))
        required = [p for p in schema.get("required", []) if p in props]
        made[name] = required + [p for p in props if p not in required]
    return made
