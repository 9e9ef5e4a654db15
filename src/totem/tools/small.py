"""The tools a small local model sees: few, with short descriptions and flat arguments.

A model whose profile is small gets only what its tasks need (read, glob, grep, edit, write,
bash). Each tool's description and argument descriptions come from `<name>.small.txt`
beside the tools:

    first line(s): the description
    name: text      one line per argument the model is shown (the others keep defaults)

The schema keeps only those arguments, with their types and the short texts: no nested
objects, no optional extras a small model fills with copied schema text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from totem.providers.base import ToolSpec
from totem.tools.base import Tool, kind_of

__all__ = ["SMALL_TOOLS", "overwrite_refusal", "small_specs", "small_text", "small_tools"]

SMALL_TOOLS = ("read", "glob", "grep", "edit", "write", "bash")
_HERE = Path(__file__).parent


def small_text(name: str) -> tuple[str, dict[str, str]]:
    """The small description of tool `name` and its arguments' descriptions, in order."""
    lines = (_HERE / f"{name}.small.txt").read_text(encoding="utf-8").strip().splitlines()
    description: list[str] = []
    arguments: dict[str, str] = {}
    for line in lines:
        key, colon, text = line.partition(":")
        if colon and key.strip().isidentifier() and (arguments or description):
            arguments[key.strip()] = text.strip()
        elif not arguments:
            description.append(line.strip())
    return " ".join(d for d in description if d), arguments


def small_tools(tools: Sequence[Tool]) -> list[Tool]:
    """The tools of `tools` a small model is given: SMALL_TOOLS in that order, then any tool
    that is not one of totem's own (given by a test or an embedding program)."""
    from totem.tools.registry import BUILTIN

    own = {name for name, _, _ in BUILTIN} | {"task", "websearch"}
    by_name = {t.name: t for t in tools}
    kept = [by_name[name] for name in SMALL_TOOLS if name in by_name]
    return kept + [t for t in tools if t.name not in own and kind_of(t) != "integration"]


def _flat_schema(full: dict[str, Any], arguments: dict[str, str]) -> dict[str, Any]:
    properties = full.get("properties", {})
    kept: dict[str, Any] = {}
    for name, text in arguments.items():
        original = properties.get(name, {})
        kind = original.get("type")
        if kind is None:  # an optional value: anyOf [{type}, {type: null}]
            kinds = [o.get("type") for o in original.get("anyOf", []) if o.get("type") != "null"]
            kind = kinds[0] if kinds else "string"
        kept[name] = {"type": kind, "description": text}
    required = [n for n in full.get("required", []) if n in kept]
    return {"type": "object", "properties": kept, "required": required}


def small_specs(specs: Sequence[ToolSpec]) -> list[ToolSpec]:
    """The small versions of the specs of SMALL_TOOLS (others, e.g. MCP tools, as they are)."""
    made = []
    for spec in specs:
        if spec.name in SMALL_TOOLS:
            description, arguments = small_text(spec.name)
            spec = ToolSpec(spec.name, description, _flat_schema(spec.parameters, arguments))
        made.append(spec)
    return made


def overwrite_refusal(
    root: Path, name: str, args: dict[str, Any], *, made_here: Callable[[str], bool]
) -> str | None:
    """For a small model, the error for a write over an existing file (they write only the
    new line, and the rest of the file is lost), or None. A file the session itself created
    may be written again whole: nothing of the person's is in it to lose."""
    path = args.get("path")
    if name != "write" or not isinstance(path, str) or not path or made_here(path):
        return None
    target = Path(path) if Path(path).is_absolute() else root / path
    if not target.is_file():
        return None
    return (_HERE / "write.small-exists.txt").read_text(encoding="utf-8").strip().replace(
        "{path}", path)
