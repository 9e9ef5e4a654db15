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
)


def builtin_tools() -> list[Tool]:
    """read, glob, grep, write, edit, patch and bash, each imported when first used."""
    return [LazyTool(name, read_only, target) for name, read_only, target in BUILTIN]
