"""Read before changing: an existing file the session has not read is not overwritten.

A model that writes, edits or patches a file it never looked at replaces what it cannot
know (small models overwrote requirements.txt and geometry.py wholesale this way). As in
Claude Code, such a call is refused with an error telling the model to read the file
first. Creating a new file is fine, and a file the session itself wrote counts as read.

What counts as read is taken from the session's stored history (so a continued session
keeps what it read before), then kept up to date as calls complete.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from totem.messages import Message, ToolPart

__all__ = ["CHANGING_TOOLS", "ReadFirst", "changed_paths"]

CHANGING_TOOLS = frozenset({"write", "edit", "patch"})


def changed_paths(name: str, args: Mapping[str, Any]) -> list[str]:
    """The paths a write, edit or patch call would change, as written in the call."""
    if name in ("write", "edit"):
        path = args.get("path")
        return [path] if isinstance(path, str) and path else []
    if name == "patch":
        from totem.tools.patch_format import PatchError, UpdateFile, parse_patch

        text = args.get("patch")
        if not isinstance(text, str):
            return []
        try:
            ops = parse_patch(text)
        except PatchError:
            return []  # the tool itself says what is wrong with the patch
        return [op.path for op in ops] + [
            op.move_to for op in ops if isinstance(op, UpdateFile) and op.move_to is not None
        ]
    return []


def _read_path(name: str, args: Mapping[str, Any]) -> list[str]:
    if name == "read":
        path = args.get("path")
        return [path] if isinstance(path, str) and path else []
    return changed_paths(name, args)


class ReadFirst:
    """The files one session has read (or written itself), by real path."""

    def __init__(self, root: Path, history: Iterable[Message]) -> None:
        self.root = Path(os.path.realpath(root))
        self.seen: set[Path] = set()
        self.made: set[Path] = set()  # files the session created (write or edit on no file)
        for message in history:
            for part in message.parts:
                if isinstance(part, ToolPart) and part.state == "completed":
                    self.record(part.name, part.input or {}, output=part.output or "")

    def _real(self, path: str) -> Path:
        candidate = Path(os.path.expanduser(path))
        if not candidate.is_absolute():
            candidate = self.root / candidate
        return Path(os.path.realpath(candidate))

    def record(self, name: str, args: Mapping[str, Any], *, output: str = "") -> None:
        """A completed call: a read, or a change the session made, makes its files known; a
        write or edit that says it created its file makes the file the session's own."""
        for path in _read_path(name, args):
            self.seen.add(self._real(path))
        if name in ("write", "edit") and output.startswith("Created "):
            self.made.update(self._real(p) for p in changed_paths(name, args))

    def made_here(self, path: str) -> bool:
        """Whether the session itself created the file at `path`."""
        return self._real(path) in self.made

    def refusal(self, name: str, args: Mapping[str, Any]) -> str | None:
        """The error for a call that would change an existing file not read yet, or None."""
        if name not in CHANGING_TOOLS:
            return None
        unread = [
            path for path in changed_paths(name, args)
            if self._real(path).is_file() and self._real(path) not in self.seen
        ]
        if not unread:
            return None
        names = ", ".join(dict.fromkeys(unread))
        return (
            f"Refused: {names} already exists and has not been read in this session. "
            f"Call read with path {unread[0]} first, then make the change from what the file "
            "really contains. (Creating a new file needs no read.)"
        )
