"""Where the file tools read and write a file's bytes: the disk, or an editor's buffers.

`read`, `write`, `edit` and `patch` go through `ctx.files` for a file's content, so that a
client such as an editor over ACP (`totem.acp.files`) can give its unsaved buffers and take
the writes; everything else (resolving paths, listing folders, existence checks, snapshots,
deletions) stays on the disk. `DiskFiles` is the default.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import BinaryIO, Protocol

__all__ = ["DiskFiles", "FileAccess", "as_stream"]


class FileAccess(Protocol):
    async def read_bytes(self, path: Path) -> bytes:
        """The file's content; FileNotFoundError when there is none."""
        ...

    async def open_read(self, path: Path) -> BinaryIO:
        """The file's content as a binary stream (read line by line for long files)."""
        ...

    async def write_bytes(self, path: Path, data: bytes) -> None:
        """Replace the file's content, creating its folders."""
        ...


class DiskFiles:
    """The files as they are on disk."""

    async def read_bytes(self, path: Path) -> bytes:
        return path.read_bytes()

    async def open_read(self, path: Path) -> BinaryIO:
        return path.open("rb")

    async def write_bytes(self, path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def as_stream(data: bytes) -> BinaryIO:
    """Bytes held in memory (an editor's buffer) as a stream."""
    return io.BytesIO(data)
