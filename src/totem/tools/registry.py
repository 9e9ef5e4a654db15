"""The built-in tools, in the order the model sees them."""

from __future__ import annotations

from totem.tools.base import Tool
from totem.tools.bash import Bash
from totem.tools.edit import Edit
from totem.tools.glob import Glob
from totem.tools.grep import Grep
from totem.tools.patch import Patch
from totem.tools.read import Read
from totem.tools.write import Write

__all__ = ["builtin_tools"]


def builtin_tools() -> list[Tool]:
    """Fresh instances of read, glob, grep, write, edit, patch and bash."""
    return [Read(), Glob(), Grep(), Write(), Edit(), Patch(), Bash()]
