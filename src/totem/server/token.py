"""The token of `totem serve`, the same from one start to the next: kept in the user's data
dir (`serve-token`, mode 0600), so that open tabs keep working when the server restarts, and
so that several workers started on one data dir take the same token.

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
    """The kept token; a new one (kept) when there is none, it is malformed or `rotate`.

    Several workers started at once on one data dir agree on one token: the first to write
    the file wins, the others read it."""
    where = path or token_path()
    if not rotate:
        kept = _kept(where)
        if kept is not None:
            return kept
        if not where.exists():
            _write_private(where, new_token(), replace=False)  # whoever writes first wins
        # read again: ours, or that of a worker that wrote it since the first read (one
        # that found no file and then a file must not take it for a malformed one)
        kept = _kept(where)
        if kept is not None:
            return kept
        # else the file is malformed, or readable by others: replaced below
    token = new_token()
    _write_private(where, token, replace=True)
    return token


def _kept(path: Path) -> str | None:
    """The token in the file, if it is one and only its owner may read it."""
    with contextlib.suppress(OSError):
        if path.stat().st_mode & 0o077:  # readable by others: not a secret any more
            return None
        kept = path.read_text(encoding="ascii").strip()
        if _VALID.match(kept):
            return kept
    return None


def _write_private(path: Path, token: str, *, replace: bool) -> bool:
    """Write `token` to `path`, mode 0600 from the start (a new file, then renamed over the
    old, or linked where none is); False when `replace` is off and another came first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (token + "\n").encode("ascii"))
    finally:
        os.close(fd)
    if replace:
        os.replace(temporary, path)
        return True
    try:
        os.link(temporary, path)  # fails where the file is: the first writer's token stays
    except FileExistsError:
        return False
    finally:
        temporary.unlink()
    return True
