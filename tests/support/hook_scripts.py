"""Hooks as a person writes them: small shell scripts in a folder, made executable."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["alive", "script"]


def script(path: Path, body: str) -> str:
    """`body` as an executable /bin/sh script at `path`; its path, as a hook's command."""
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie nobody has reaped counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False
