"""Where a language server's command line is made: the one place a server is started from.

A sandbox for commands wraps what `server_argv` returns (a `Launch` given to
`LanguageServers`), so every server starts inside it without the client knowing.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

from totem.settings.lsp import LspServer

__all__ = ["Launch", "find_program", "server_argv"]

# (server, project root) -> the command line to run, or None when its program is missing
Launch: TypeAlias = Callable[[LspServer, Path], "list[str] | None"]


def find_program(name: str) -> str | None:
    """`name` on PATH, or beside this Python (a server installed with totem, as
    `pip install 'totem[lsp]'` does, is there even when its venv is not on PATH)."""
    if os.sep in name:
        return name if os.access(name, os.X_OK) else None
    found = shutil.which(name)
    if found is None:
        found = shutil.which(name, path=str(Path(sys.executable).parent))
    return found


def server_argv(server: LspServer, root: Path) -> list[str] | None:
    """The command line that starts `server` for the project at `root`; None when its program
    is not installed."""
    program = find_program(server.command[0])
    return None if program is None else [program, *server.command[1:]]
