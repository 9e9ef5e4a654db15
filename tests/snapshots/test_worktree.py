"""The snapshot store with the real git: what a snapshot keeps and leaves out, that the
project's own repository is never touched, and that a broken store is mended."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from totem.snapshots.files import current_blob, put_blob
from totem.snapshots.worktree import Snapshot, WorkTreeStore, store_folder

BINARY = bytes(range(256)) * 3
GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "data" / "deep").mkdir(parents=True)
    (root / "data" / "notes.txt").write_text("notes\n")
    (root / "data" / "deep" / "blob.bin").write_bytes(BINARY)
    (root / "data" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "data" / "run.sh").chmod(0o755)
    (root / "data" / "link").symlink_to("notes.txt")
    (root / "app.py").write_text("a = 1\n")
    return root


def _store(root: Path, **more: int) -> WorkTreeStore:
    return WorkTreeStore(root, store_folder(root.parent / "data-home", root), **more)


def _objects(store: WorkTreeStore) -> set[str]:
    return {str(p) for p in (store.folder / "objects").rglob("*") if p.is_file()}


def test_a_snapshot_keeps_every_file_byte_for_byte_with_mode_and_links(root: Path) -> None:
    store = _store(root)
    first = store.snapshot()
    kept = {p.relative_to(root): current_blob(p) for p in root.rglob("*")
            if p.is_file() or p.is_symlink()}
    shutil.rmtree(root / "data")
    gone = store.snapshot()
    changes = store.changes(first.tree, gone.tree)
    assert {c.path for c in changes} == {"data/notes.txt", "data/deep/blob.bin",
                                         "data/run.sh", "data/link"}
    assert all(c.after is None for c in changes)
    contents = store.read([c.before for c in changes if c.before is not None])
    for change in changes:
        assert change.before is not None
        assert kept[Path(change.path)] == change.before
        put_blob(root / change.path, change.before, contents[change.before.oid])
    assert (root / "data" / "deep" / "blob.bin").read_bytes() == BINARY
    assert os.readlink(root / "data" / "link") == "notes.txt"
    assert os.access(root / "data" / "run.sh", os.X_OK)
    assert not os.access(root / "data" / "notes.txt", os.X_OK)
    assert store.snapshot().tree == first.tree


def test_an_unchanged_tree_writes_no_object_and_gives_the_same_tree(root: Path) -> None:
    store = _store(root)
    first = store.snapshot()
    objects = _objects(store)
    index = (store.folder / "index").stat().st_mtime_ns
    again = store.snapshot()
    assert again == first and _objects(store) == objects
    assert (store.folder / "index").stat().st_mtime_ns == index  # nothing re-hashed
    (root / "app.py").write_text("a = 2\n")
    changed = store.snapshot()
    assert [c.path for c in store.changes(first.tree, changed.tree)] == ["app.py"]
    assert "-a = 1" in store.diff(first.tree, changed.tree)


def test_ignored_files_are_left_out_unless_asked_for_and_large_ones_are_named(
    root: Path,
) -> None:
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    (root / "debug.log").write_text("log\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_bytes(b"\0obj")
    (root / "big.iso").write_bytes(b"x" * 5000)
    store = _store(root, max_file_size=4096)
    plain = store.snapshot()
    assert plain.left_out == ("big.iso",)
    listed = store.git("ls-tree", "-r", "--name-only", plain.tree).decode().split()
    assert "debug.log" not in listed and "build/out.o" not in listed
    assert "big.iso" not in listed and "app.py" in listed
    asked = store.snapshot(also=["debug.log"])
    assert [c.path for c in store.changes(plain.tree, asked.tree)] == ["debug.log"]
    (root / "debug.log").write_text("changed\n")
    # once kept, an ignored file's changes are seen without asking again
    assert [c.path for c in store.changes(asked.tree, store.snapshot().tree)] == ["debug.log"]


def test_the_projects_own_repository_is_left_exactly_as_it_was(root: Path) -> None:
    subprocess.run([*GIT, "init", "-q"], cwd=root, check=True)
    subprocess.run([*GIT, "add", "app.py"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "one"], cwd=root, check=True)
    (root / "app.py").write_text("a = 'staged'\n")
    subprocess.run([*GIT, "add", "app.py"], cwd=root, check=True)
    (root / "app.py").write_text("a = 'unstaged'\n")
    subprocess.run([*GIT, "stash", "list"], cwd=root, check=True)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("secret.txt\n")
    (root / "secret.txt").write_text("mine\n")

    def state() -> tuple[str, str, bytes, list[str]]:
        status = subprocess.run(["git", "status", "--porcelain"], cwd=root, text=True,
                                capture_output=True, check=True).stdout
        stash = subprocess.run(["git", "stash", "list"], cwd=root, text=True,
                               capture_output=True, check=True).stdout
        files = sorted(str(p.relative_to(root)) for p in (root / ".git").rglob("*"))
        return status, stash, (root / ".git" / "index").read_bytes(), files

    before = state()
    store = _store(root)
    snapshot = store.snapshot()
    (root / "app.py").write_text("a = 'by a command'\n")
    store.snapshot()
    (root / "app.py").write_text("a = 'unstaged'\n")
    assert state() == before
    listed = store.git("ls-tree", "-r", "--name-only", snapshot.tree).decode().split()
    assert ".git/index" not in listed and "app.py" in listed
    assert "secret.txt" not in listed  # the project's .git/info/exclude counts


def test_gitattributes_do_not_change_what_comes_back(root: Path) -> None:
    (root / ".gitattributes").write_text("* text=auto eol=lf\n*.txt filter=nothere\n")
    crlf = b"one\r\ntwo\r\n"
    (root / "dos.txt").write_bytes(crlf)
    store = _store(root)
    snapshot = store.snapshot()
    oid = store.git("rev-parse", f"{snapshot.tree}:dos.txt").decode().strip()
    blob = current_blob(root / "dos.txt")
    assert blob is not None and blob.oid == oid
    assert store.read([blob])[oid] == crlf


def test_a_lock_left_by_a_killed_snapshot_and_a_corrupt_index_are_mended(root: Path) -> None:
    store = _store(root)
    first = store.snapshot()
    (store.folder / "index.lock").write_bytes(b"half written")
    assert store.snapshot() == first
    (store.folder / "index").write_bytes(b"DIRC garbage")
    (root / "app.py").write_text("a = 3\n")
    mended = store.snapshot()
    assert any("index was made again" in note for note in store.notes)
    assert [c.path for c in store.changes(first.tree, mended.tree)] == ["app.py"]


def test_a_store_git_cannot_read_is_put_aside_and_started_again(root: Path) -> None:
    store = _store(root)
    store.snapshot()
    (store.folder / "HEAD").write_text("not a ref\n")
    (store.folder / "config").write_text("[[[ broken\n")
    again = store.snapshot()
    assert isinstance(again, Snapshot)
    assert any("moved to" in note for note in store.notes)
    assert list(store.folder.parent.glob("*.broken-*"))
    missing = _store(root)
    shutil.rmtree(missing.folder)
    assert missing.snapshot().tree == again.tree  # a deleted store is simply made again


def test_a_folder_that_is_not_a_repository_is_snapshotted(root: Path) -> None:
    assert not (root / ".git").exists()
    store = _store(root)
    snapshot = store.snapshot()
    listed = store.git("ls-tree", "-r", "--name-only", snapshot.tree).decode().split()
    assert "data/deep/blob.bin" in listed
    assert not (root / ".git").exists()
