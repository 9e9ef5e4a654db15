"""What a small local model is given: a few tools with short texts, and a short prompt.

A small model gets only what its tasks need (read, glob, grep, edit, write, bash). Each
tool's description and argument descriptions come from `texts/tool-<name>.txt`:

    first line(s): the description
    name: text      one line per argument the model is shown (the others keep defaults)

The schema keeps only those arguments, with their types and the short texts: no nested
objects, no optional extras a small model fills with copied schema text.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from totem.prompt.builder import environment, project_instructions
from totem.providers.base import ToolSpec
from totem.tools.base import Tool, kind_of

__all__ = ["SMALL_TOOLS", "small_specs", "small_system_prompt", "small_tools", "text"]

SMALL_TOOLS = ("read", "glob", "grep", "edit", "write", "bash")
_TEXTS = Path(__file__).with_name("texts")


@cache
def text(name: str) -> str:
    """The text file `texts/NAME.txt`, stripped."""
    return (_TEXTS / f"{name}.txt").read_text(encoding="utf-8").strip()


def tool_text(name: str) -> tuple[str, dict[str, str]]:
    """The small description of tool `name` and its arguments' descriptions, in order."""
    description: list[str] = []
    arguments: dict[str, str] = {}
    for line in text(f"tool-{name}").splitlines():
        key, colon, said = line.partition(":")
        if colon and key.strip().isidentifier() and (arguments or description):
            arguments[key.strip()] = said.strip()
        elif not arguments:
            description.append(line.strip())
    return " ".join(d for d in description if d), arguments


def _plain_grep() -> Tool:
    from totem.tools.grep import Grep

    return Grep(plain=True)


def _shown_plainly(tool: Tool) -> Tool:
    """totem's own read and grep, as a small model is shown them: a file as it is, in a
    fence under its path, with no line numbers (tools/read.PlainRead); a search's matches
    shaped like no file's content. The 1.5B wrote read's numbers and grep's `path:1:` lines
    back into files. Any other tool (or one a test gave) stays as it is."""
    from totem.tools.lazy import LazyTool

    if not isinstance(tool, LazyTool):
        return tool
    if tool.target == "totem.tools.read:Read":
        return LazyTool("read", True, "totem.tools.read:PlainRead")
    if tool.target == "totem.tools.grep:Grep":
        return LazyTool("grep", True, "totem.tools.grep:Grep", factory=_plain_grep)
    return tool


def small_tools(tools: Sequence[Tool]) -> list[Tool]:
    """The tools of `tools` a small model is given: SMALL_TOOLS in that order (read and grep
    shown plainly, `_shown_plainly`), then any tool that is not one of totem's own (given
    by a test or an embedding program)."""
    from totem.tools.registry import BUILTIN

    own = {name for name, _, _ in BUILTIN} | {"task", "websearch"}
    by_name = {t.name: t for t in tools}
    kept = [_shown_plainly(by_name[name]) for name in SMALL_TOOLS if name in by_name]
    return kept + [t for t in tools if t.name not in own and kind_of(t) != "integration"]


def _flat_schema(full: dict[str, Any], arguments: dict[str, str]) -> dict[str, Any]:
    properties = full.get("properties", {})
    kept: dict[str, Any] = {}
    for name, said in arguments.items():
        original = properties.get(name, {})
        kind = original.get("type")
        if kind is None:  # an optional value: anyOf [{type}, {type: null}]
            kinds = [o.get("type") for o in original.get("anyOf", []) if o.get("type") != "null"]
            kind = kinds[0] if kinds else "string"
        kept[name] = {"type": kind, "description": said}
    required = [n for n in full.get("required", []) if n in kept]
    return {"type": "object", "properties": kept, "required": required}


def small_specs(specs: Sequence[ToolSpec]) -> list[ToolSpec]:
    """The small versions of the specs of SMALL_TOOLS (others, e.g. MCP tools, as they are)."""
    made = []
    for spec in specs:
        if spec.name in SMALL_TOOLS:
            description, arguments = tool_text(spec.name)
            spec = ToolSpec(spec.name, description, _flat_schema(spec.parameters, arguments))
        made.append(spec)
    return made


def small_system_prompt(root: Path, *, knowledge: str = "") -> str:
    """texts/system.txt, the environment, the project's instructions and a framework primer
    (only when the project uses that framework); no skills list."""
    parts = [text("system"), environment(root), project_instructions(root), knowledge.strip()]
    return "\n\n".join(p for p in parts if p)
