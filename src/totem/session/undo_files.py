"""Putting files back for undo and redo: whether a file is still what a request left, and
making it hold a checkpoint's state again.

A state is bytes (a file tool's snapshot: the content), a Blob of the project's snapshot
store (a command's change: content, executable bit or symbolic link), or None (no file).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from totem.snapshots.files import blob_id, current_blob, put_blob
from totem.snapshots.worktree import WorkTreeStore
from totem.store.base import Blob, FileState

__all__ = ["is_now", "needs_store", "put_all", "relative", "same_state"]


def same_state(a: FileState, b: FileState) -> bool:
    """Whether two states hold the same file (bytes beside a blob: the same content)."""
    if a is None or b is None:
        return a is b
    if isinstance(a, bytes) and isinstance(b, bytes):
        return a == b
    if isinstance(a, Blob) and isinstance(b, Blob):
        return a == b
    content, blob = (a, b) if isinstance(a, bytes) else (b, a)
    assert isinstance(content, bytes) and isinstance(blob, Blob)
    return blob_id(content) == blob.oid


def is_now(path: str, state: FileState) -> bool:
    """Whether the file at `path` holds `state` now."""
    if isinstance(state, Blob):
        return current_blob(Path(path)) == state
    target = Path(path)
    is_file = target.is_file() and not target.is_symlink()
    if state is None:
        return not is_file and not target.is_symlink()
    return is_file and target.read_bytes() == state


def needs_store(states: Sequence[FileState]) -> bool:
    return any(isinstance(s, Blob) for s in states)


def put_all(
    targets: Sequence[tuple[str, FileState]], *, root: Path, store: WorkTreeStore | None
) -> list[str]:
    """Make each path hold its state: files removed first (a folder may become a file),
    then the others written. The summary lines, in that order. The blobs are read first,
    all together, so a store that lost one changes nothing (SnapshotError)."""
    blobs = [s for _, s in targets if isinstance(s, Blob)]
    contents = store.read(blobs) if blobs and store is not None else {}
    lines: list[str] = []
    for path, state in sorted(targets, key=lambda t: t[1] is not None):
        lines.append(_put(Path(path), state, contents, root))
    return lines


def _put(target: Path, state: FileState, contents: dict[str, bytes], root: Path) -> str:
    shown = relative(str(target), root)
    existed = target.exists() or target.is_symlink()
    if state is None:
        if target.is_symlink() or target.is_file():
            target.unlink()
        return f"removed {shown}"
    if isinstance(state, Blob):
        put_blob(target, state, contents[state.oid])
    else:
        if target.is_symlink():
            target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(state)
    return f"restored {shown}" if existed else f"recreated {shown}"


def relative(path: str, root: Path) -> str:
    try:
        return os.path.relpath(path, os.path.realpath(root))
    except ValueError:
        return path
