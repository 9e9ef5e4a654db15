"""The token of `totem serve`, the same from one start to the next: kept in the user's data
dir (`serve-token`, mode 0600), so that open tabs keep working when the server restarts.

    token = stable_token()             # read it, or make and keep a new one
    token = stable_token(rotate=True)  # `totem serve --new-token`: a new one, kept
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from totem.server.security import new_token
from totem.settings.paths import data_dir

__all__ = ["stable_token", "token_path"]

_VALID = re.compile(r"[A-Za-z0-9_\-]{32,128}\Z")


def token_path() -> Path:
    return data_dir() / "serve-token"


def stable_token(*, rotate: bool = False, path: Path | None = None) -> str:
    """The kept token; a new one (kept) when there is none, it is malformed or `rotate`."""
    where = path or token_path()
    if not rotate:
        with contextlib.suppress(OSError):
            if where.stat().st_mode & 0o077:  # readable by others: not a secret any more
                rotate = True
            else:
                kept = where.read_text(encoding="ascii").strip()
                if _VALID.match(kept):
                    return kept
    token = new_token()
    _write_private(where, token)
    return token


def _write_private(path: Path, token: str) -> None:
    """Write `token` to `path`, mode 0600 from the start (a new file, renamed over the old)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (token + "\n").encode("ascii"))
    finally:
        os.close(fd)
    os.replace(temporary, path)
