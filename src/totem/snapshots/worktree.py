"""Snapshots of a project's work tree in a git object store of totem's own.

The store is a git directory under totem's data folder, one per project; git runs with
GIT_DIR set to it and GIT_WORK_TREE to the project, so the project's own `.git` (its index,
its commits, its stash) is never read or written. A snapshot is a tree object: every file of
the project, untracked ones included, except what `.gitignore` names (a path given in `also`
is kept even so) and files above `max_file_size` (named in `Snapshot.left_out`).

The store keeps its index file between snapshots, so git's stat cache sees which files
changed: the snapshot of an unchanged tree hashes nothing and costs one `ls-files` (the tree
of an index that did not change since this process last wrote one is known).
Git writes objects, the index and refs through a lock file and a rename; a snapshot killed
midway leaves at most the index's lock, which the next snapshot, holding the store's own
lock, removes. A store that git cannot read is put aside and made again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from totem.snapshots.git import SnapshotError, git
from totem.store.base import Blob

__all__ = ["Change", "Snapshot", "WorkTreeStore", "store_folder"]

DEFAULT_MAX_FILE_SIZE = 20 * 1024 * 1024
STAMPS = ("pruned", "checked")  # the times of the last pruning and size check (prune.py)
GITLINK = "160000"  # a nested repository: its files are its own, not snapshotted
ABSENT = "000000"

# git's conversions are off: a file comes back byte for byte whatever .gitattributes says
_ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding\n"
_CONFIG = """[core]
\tautocrlf = false
\tsafecrlf = false
\tsymlinks = true
\tfilemode = true
\tquotepath = false
\tfsmonitor = false
\tlogAllRefUpdates = false
[gc]
\tauto = 0
[index]
\tthreads = true
"""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The work tree at one moment: a tree object of the store."""

    tree: str
    left_out: tuple[str, ...] = ()  # project-relative files above the size limit


@dataclass(frozen=True, slots=True)
class Change:
    """One file that differs between two snapshots (None: no file on that side)."""

    path: str  # project-relative, as git writes it
    before: Blob | None
    after: Blob | None


def store_folder(data: Path, root: Path) -> Path:
    """Where the snapshots of the project at `root` are kept under totem's data folder."""
    real = os.path.realpath(root)
    name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(real).name)[:40] or "root"
    digest = hashlib.sha256(real.encode()).hexdigest()[:16]
    return data / "snapshots" / f"{name}-{digest}.git"


class WorkTreeStore:
    """The snapshot store of one project."""

    def __init__(self, root: Path, folder: Path, *,
                 max_file_size: int = DEFAULT_MAX_FILE_SIZE) -> None:
        self.root = Path(os.path.realpath(root))
        self.folder = folder
        self.max_file_size = max_file_size
        self.notes: list[str] = []  # what went wrong and was mended (said once, then cleared)
        self._last_tree: tuple[tuple[int, int, int], str] | None = None  # (index stat, tree)
        self.added = 0  # files hashed by this process's snapshots (loose objects written)

    def git(self, *args: str, stdin: bytes | None = None) -> bytes:
        return git(self.folder, self.root, *args, stdin=stdin)

    # taking snapshots --------------------------------------------------------------------

    def snapshot(self, *, also: Iterable[str] = ()) -> Snapshot:
        """The work tree now. A store that fails is mended once (its index made again, or
        the whole store when git cannot read it); SnapshotError when that fails too."""
        wanted = list(also)
        try:
            with self.locked():
                try:
                    return self._snapshot(wanted)
                except SnapshotError as first:
                    self._mend(first)
                    return self._snapshot(wanted)
        except OSError as exc:  # the data folder itself (full, read-only, not a folder)
            raise SnapshotError(f"{exc.strerror or exc}: {exc.filename or self.folder}") \
                from None

    def _snapshot(self, also: list[str]) -> Snapshot:
        self._ensure()
        listed = self.git("ls-files", "-z", "-m", "-o", "--exclude-standard",
                          *self._person_excludes())
        paths = [p for p in listed.decode("utf-8", "surrogateescape").split("\0")
                 if p and not p.endswith("/")]  # "sub/": a nested repository
        paths += also
        kept, left_out = self._by_size(paths)
        if kept:
            stdin = "\0".join(kept).encode("utf-8", "surrogateescape") + b"\0"
            self.git("update-index", "-z", "--add", "--remove", "--replace", "--stdin",
                     stdin=stdin)
            self.added += len(kept)
        return Snapshot(self._write_tree(), tuple(left_out))

    def _write_tree(self) -> str:
        """The index's tree: known when the index file is the one it was written from."""
        try:
            index = os.stat(self.folder / "index")
            key = (index.st_ino, index.st_size, index.st_mtime_ns)
        except OSError:
            key = None
        if key is not None and self._last_tree is not None and self._last_tree[0] == key:
            return self._last_tree[1]
        tree = self.git("write-tree").decode().strip()
        if key is not None:
            self._last_tree = (key, tree)
        return tree

    def _person_excludes(self) -> list[str]:
        """The project's own `.git/info/exclude`, which only the project's git reads."""
        exclude = self.root / ".git" / "info" / "exclude"
        return [f"--exclude-from={exclude}"] if exclude.is_file() else []

    def _by_size(self, paths: list[str]) -> tuple[list[str], list[str]]:
        """The paths to add (or remove: gone), and the files too large to keep."""
        kept: list[str] = []
        large: list[str] = []
        for path in dict.fromkeys(paths):
            try:
                size = os.lstat(self.root / path).st_size
            except OSError:
                kept.append(path)  # gone: update-index removes it
                continue
            (large if size > self.max_file_size else kept).append(path)
        if large:  # a file that grew past the limit: out of the index too
            stdin = "\0".join(large).encode("utf-8", "surrogateescape") + b"\0"
            self.git("update-index", "-z", "--force-remove", "--stdin", stdin=stdin)
        return kept, large

    # the store itself --------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's own lock: one snapshot at a time, across processes. With it
        held, a lock file git left behind is from a process that died (kill -9): removed."""
        self.folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock_path = self.folder.parent / f"{self.folder.name}.lock"
        with open(lock_path, "a+b") as lock:
            _lock(lock.fileno())
            for name in ("index.lock", "packed-refs.lock"):
                with contextlib.suppress(FileNotFoundError):
                    (self.folder / name).unlink()
            yield

    def _ensure(self) -> None:
        """Make the store when it is missing (first use, or deleted since)."""
        if (self.folder / "HEAD").is_file() and (self.folder / "objects").is_dir():
            return
        if self.folder.exists():
            self._put_aside("it was incomplete")
        # made beside and renamed into place: a store is either whole or absent
        making = self.folder.with_name(f"{self.folder.name}.making-{os.getpid()}")
        self._remove_tree(making)
        git(making, self.root, "init", "-q", "--template=")  # no sample hooks to copy
        (making / "info").mkdir(exist_ok=True)
        (making / "info" / "attributes").write_text(_ATTRIBUTES)
        with open(making / "config", "a") as config:
            config.write(_CONFIG)
        for stamp in STAMPS:  # a new store is as good as a pruned one
            (making / stamp).touch()
        os.chmod(making, 0o700)
        os.replace(making, self.folder)

    def _mend(self, failure: SnapshotError) -> None:
        """After a failed snapshot: a fresh index (git re-hashes every file), or a fresh
        store when git cannot use it at all."""
        try:
            self.git("rev-parse", "--git-dir")
        except SnapshotError:
            self._put_aside(str(failure))
            return
        self.notes.append(f"snapshot store: {failure}; its index was made again")
        with contextlib.suppress(FileNotFoundError):
            (self.folder / "index").unlink()

    def _put_aside(self, why: str) -> None:
        if not self.folder.exists():
            return
        aside = self.folder.with_name(f"{self.folder.name}.broken-{int(time.time())}")
        os.replace(self.folder, aside)
        self.notes.append(f"snapshot store could not be used ({why}); it was moved to "
                          f"{aside} and a new one started: earlier requests' command "
                          "changes cannot be undone")

    @staticmethod
    def _remove_tree(path: Path) -> None:
        import shutil

        shutil.rmtree(path, ignore_errors=True)

    # reading snapshots -------------------------------------------------------------------

    def changes(self, before: str, after: str) -> list[Change]:
        """The files that differ from snapshot `before` to `after`."""
        if before == after:
            return []
        raw = self.git("diff-tree", "-r", "-z", "--no-renames", before, after)
        fields = raw.decode("utf-8", "surrogateescape").split("\0")
        found: list[Change] = []
        for header, path in zip(fields[0::2], fields[1::2], strict=False):
            if not header.startswith(":"):
                continue
            old_mode, new_mode, old_oid, new_oid = header[1:].split(" ")[:4]
            if GITLINK in (old_mode, new_mode):
                continue
            found.append(Change(path, _blob(old_mode, old_oid), _blob(new_mode, new_oid)))
        return found

    def diff(self, before: str, after: str) -> str:
        """The unified diff from `before` to `after` (binary files said to differ)."""
        if before == after:
            return ""
        out = self.git("diff-tree", "-r", "-p", "--no-renames", "--no-color", "--no-ext-diff",
                       "--no-textconv", "--no-commit-id", before, after)
        return out.decode("utf-8", "replace")

    def read(self, blobs: Sequence[Blob]) -> dict[str, bytes]:
        """The contents of `blobs`, by object id (one `cat-file --batch` for them all);
        SnapshotError when one is no longer in the store."""
        wanted = list(dict.fromkeys(b.oid for b in blobs))
        if not wanted:
            return {}
        out = self.git("cat-file", "--batch", stdin=("\n".join(wanted) + "\n").encode())
        found: dict[str, bytes] = {}
        at = 0
        for oid in wanted:
            end = out.index(b"\n", at)
            header = out[at:end].decode()
            if header.endswith("missing"):
                raise SnapshotError(f"the snapshot of a file is gone from the store ({oid})")
            size = int(header.rsplit(" ", 1)[1])
            found[oid] = out[end + 1:end + 1 + size]
            at = end + 1 + size + 1
        return found

    def has(self, blobs: Iterable[Blob]) -> bool:
        """Whether every one of `blobs` is still in the store."""
        try:
            self.read(list(blobs))
        except (SnapshotError, ValueError):
            return False
        return True

    def keep(self, name: str, trees: Sequence[str], *, now: float | None = None) -> None:
        """Keep `trees` (and every file in them) until pruned: refs named after the request,
        with the time, which pruning reads."""
        unique = list(dict.fromkeys(trees))
        if not unique:
            return
        stamp = int(time.time() if now is None else now)
        lines = "".join(f"update refs/requests/{stamp}-{name}/{i} {tree}\n"
                        for i, tree in enumerate(unique))
        try:
            with self.locked():
                self.git("update-ref", "--stdin", stdin=lines.encode())
        except OSError as exc:
            raise SnapshotError(str(exc)) from None


def _blob(mode: str, oid: str) -> Blob | None:
    return None if mode == ABSENT else Blob(mode, oid)


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # not a POSIX system: no lock across processes
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
