"""A file on disk as the snapshot store sees it: its git mode and blob id, and putting one
back (content, executable bit, symbolic link).

The id is git's own (sha1 of "blob SIZE\\0" and the content; a link's content is its target),
computed here so that checking whether a file is still what a request left costs no process.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from totem.store.base import Blob

__all__ = ["blob_id", "current_blob", "put_blob"]

LINK = "120000"
EXECUTABLE = "100755"
REGULAR = "100644"


def blob_id(content: bytes) -> str:
    digest = hashlib.sha1(b"blob %d\0" % len(content), usedforsecurity=False)
    digest.update(content)
    return digest.hexdigest()


def current_blob(path: Path) -> Blob | None:
    """What `path` holds now as the store would keep it; None: no file (or a folder)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return Blob(LINK, blob_id(os.fsencode(os.readlink(path))))
    if not stat.S_ISREG(info.st_mode):
        return None
    with open(path, "rb") as file:
        content = file.read()
    return Blob(EXECUTABLE if info.st_mode & stat.S_IXUSR else REGULAR, blob_id(content))


def put_blob(path: Path, blob: Blob, content: bytes) -> None:
    """Make `path` hold `content` with `blob`'s mode: a link, or a file (executable or not)."""
    _clear(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if blob.mode == LINK:
        os.symlink(os.fsdecode(content), path)
        return
    path.write_bytes(content)
    umask = _umask()
    os.chmod(path, (0o777 if blob.mode == EXECUTABLE else 0o666) & ~umask)


def _clear(path: Path) -> None:
    """Room for a file at `path`: a link or file there goes; an empty folder too."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        path.rmdir()  # a folder with files in it stays (OSError: the caller says so)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
