"""The changes each call made, in order: what undo puts back once the request is over.

The loop's runner asks for a snapshot of the work tree before a call that may change files
(a command, an MCP tool) and another after it; the difference is that call's change. The
file tools keep their own snapshot of each file they change (`ToolContext.before`), which is
added here too, with the content after the call. Only what happened during a call counts:
a file the person edits between two calls is theirs, not the request's.

Nothing here fails a call: a snapshot that cannot be taken is a warning (`warnings`), and
the call runs as it would have.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from totem.settings.snapshots import SnapshotSettings
from totem.snapshots.git import GitMissing, SnapshotError, git_program
from totem.snapshots.worktree import Snapshot, WorkTreeStore, store_folder
from totem.store.base import FileState

__all__ = ["CallChange", "CallSnapshots", "Taken", "takes_snapshots"]

# tools that keep a snapshot of each file they change themselves (ToolContext.snapshot)
OWN_SNAPSHOTS = frozenset({"write", "edit", "patch", "image", "tts"})
CHANGE_NO_FILES = frozenset({"todo", "task"})

GIT_MISSING = ("git is not installed, so files changed by commands cannot be undone "
               "(the file tools' own changes still can).")


def takes_snapshots(name: str, *, read_only: bool, parallel: bool) -> bool:
    """Whether a call of this tool runs between two snapshots of the work tree: one that
    may change files (a command, a process, an MCP tool), and keeps no snapshot of its own."""
    return not (read_only or parallel or name in OWN_SNAPSHOTS or name in CHANGE_NO_FILES)


@dataclass(frozen=True, slots=True)
class CallChange:
    """One file one call changed: its state before and after the call."""

    seq: int
    session_id: str
    path: str  # absolute, under the project's real path (as the file tools' snapshots)
    before: FileState
    after: FileState
    trees: tuple[str, ...] = ()  # the snapshots its blob sides come from (a command's)


@dataclass(frozen=True, slots=True)
class Taken:
    """The snapshot before one call."""

    session_id: str
    before: Snapshot


@dataclass(slots=True)
class CallSnapshots:
    """Snapshots around a project's calls and the changes they recorded, for the runs of
    one process (a sub-agent's calls included: its agent shares this object)."""

    store: WorkTreeStore
    settings: SnapshotSettings = field(default_factory=SnapshotSettings)
    changes: list[CallChange] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # said once by the runner, then cleared
    touched: set[str] = field(default_factory=set)  # kept in snapshots though ignored
    _seq: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _missing_said: bool = False
    _left_out_said: set[str] = field(default_factory=set)

    @staticmethod
    def for_project(root: Path, settings: SnapshotSettings, data: Path) -> CallSnapshots:
        folder = store_folder(data, root)
        return CallSnapshots(WorkTreeStore(root, folder, max_file_size=settings.max_file_size),
                             settings)

    def mark(self) -> int:
        """Where a request starts: its changes are those recorded after this mark."""
        return self._seq

    def since(self, mark: int) -> list[CallChange]:
        """The changes recorded after `mark`, in order."""
        with self._lock:
            return [c for c in self.changes if c.seq > mark]

    def forget(self, done: Iterable[CallChange]) -> None:
        """Drop the changes a finished request has recorded as checkpoints (a long-lived
        process, the web page's, would otherwise keep every one)."""
        gone = {c.seq for c in done}
        with self._lock:
            self.changes = [c for c in self.changes if c.seq not in gone]

    # around a call -----------------------------------------------------------------------

    def before(self, session_id: str) -> Taken | None:
        """The snapshot before a call; None (and a warning) when none could be taken."""
        snapshot = self._take()
        return Taken(session_id, snapshot) if snapshot is not None else None

    def after(self, taken: Taken) -> str:
        """The snapshot after the call; its changes are recorded. The unified diff of what
        the call changed ("" when nothing, or when no snapshot could be taken)."""
        snapshot = self._take()
        if snapshot is None:
            return ""
        left_out = set(taken.before.left_out) | set(snapshot.left_out)
        try:
            found = [c for c in self.store.changes(taken.before.tree, snapshot.tree)
                     if c.path not in left_out]
            diff = self.store.diff(taken.before.tree, snapshot.tree) if found else ""
        except SnapshotError as exc:
            self.warnings.append(f"What the call changed could not be read: {exc}.")
            return ""
        root = self.store.root
        with self._lock:
            for change in found:
                self._seq += 1
                self.changes.append(CallChange(
                    self._seq, taken.session_id, str(root / change.path), change.before,
                    change.after, (taken.before.tree, snapshot.tree)))
        return diff

    def files_changed(self, session_id: str, before: dict[Path, bytes | None]) -> None:
        """A file tool's changes: each file's content before the call, and now."""
        root = self.store.root
        with self._lock:
            for path, content in before.items():
                self._seq += 1
                after = _content(path)
                self.changes.append(CallChange(self._seq, session_id, str(path), content, after))
                inside = _inside(path, root)
                if inside is not None:  # an ignored file a call touched: kept from now on
                    self.touched.add(inside)

    def _take(self) -> Snapshot | None:
        if git_program() is None:
            if not self._missing_said:
                self._missing_said = True
                self.warnings.append(GIT_MISSING)
            return None
        try:
            snapshot = self.store.snapshot(also=sorted(self.touched))
        except GitMissing:
            return None
        except SnapshotError as exc:
            self.warnings.append(f"No snapshot of the work tree before this call ({exc}): "
                                 "what it changes cannot be undone.")
            return None
        finally:
            self.warnings.extend(self.store.notes)
            self.store.notes.clear()
        self._say_left_out(snapshot.left_out)
        return snapshot

    def _say_left_out(self, left_out: Iterable[str]) -> None:
        new = [p for p in left_out if p not in self._left_out_said]
        if not new:
            return
        self._left_out_said.update(new)
        shown = ", ".join(new[:5]) + (f" and {len(new) - 5} more" if len(new) > 5 else "")
        limit = self.store.max_file_size / (1024 * 1024)
        self.warnings.append(f"Left out of the work tree's snapshots, larger than {limit:g} MB "
                             f"(what commands do to them cannot be undone): {shown}")

    def tidy(self) -> None:
        """At a request's end: old snapshots pruned when it is time (totem.snapshots.prune)."""
        if not (self.store.folder / "HEAD").is_file():
            return
        from totem.snapshots.prune import maybe_prune

        try:
            maybe_prune(self.store, self.settings)
        except (SnapshotError, OSError) as exc:
            self.warnings.append(f"Old snapshots could not be pruned: {exc}")

    @staticmethod
    def trees(changes: Iterable[CallChange]) -> list[str]:
        """The snapshots that hold the blob sides of `changes`."""
        return list(dict.fromkeys(t for c in changes for t in c.trees))


def _content(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _inside(path: Path, root: Path) -> str | None:
    try:
        relative = Path(os.path.realpath(path)).relative_to(root)
    except ValueError:
        return None
    return str(relative) if str(relative) != "." else None
