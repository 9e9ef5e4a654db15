"""Whether a project may have MCP servers at all: cheap enough for start-up (no parsing,
nothing of the MCP SDK imported)."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["MCP_SECTION", "configured"]

MCP_SECTION = re.compile(r"^mcp\s*:", re.MULTILINE)


def configured(root: Path) -> bool:
    """Whether any MCP server may be configured for `root`: a `.totem/mcp.json`, or an `mcp:`
    section in a config file. Cheap enough for start-up (no parsing, nothing imported)."""
    if (root / ".totem" / "mcp.json").is_file():
        return True
    from totem.settings.config import config_files

    for path in config_files(root):
        try:
            if MCP_SECTION.search(path.read_text(encoding="utf-8")):
                return True
        except OSError:
            continue
    return False
