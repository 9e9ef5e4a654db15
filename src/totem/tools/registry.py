"""The built-in tools, in the order the model sees them; each loads on first use."""

from __future__ import annotations

from totem.tools.base import Tool
from totem.tools.lazy import LazyTool

__all__ = ["BUILTIN", "builtin_tools"]

# (name, read-only, module:Class)
BUILTIN: tuple[tuple[str, bool, str], ...] = (
    ("read", True, "totem.tools.read:Read"),
    ("glob", True, "totem.tools.glob:Glob"),
    ("grep", True, "totem.tools.grep:Grep"),
    ("write", False, "totem.tools.write:Write"),
    ("edit", False, "totem.tools.edit:Edit"),
    ("patch", False, "totem.tools.patch:Patch"),
    ("bash", False, "totem.tools.bash:Bash"),
    ("process", False, "totem.tools.process:ProcessTool"),
    ("fetch", True, "totem.tools.fetch:Fetch"),
    ("todo", False, "totem.tools.todo:TodoTool"),
    ("ask", True, "totem.tools.ask:Ask"),
    ("skill", True, "totem.tools.skill:Skill"),
)


def builtin_tools() -> list[Tool]:
    """The built-in tools (BUILTIN's order), each imported when first used."""
    return [LazyTool(name, read_only, target) for name, read_only, target in BUILTIN]
