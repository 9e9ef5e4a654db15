"""Undo covers what commands changed: a real `totem run` (the package's scripted model, the
sandbox on, no --yes) runs `rm -rf data && echo x > new.txt && sed -i ...` with no question
asked; `totem undo` puts every file back byte for byte (untracked, binary, a link, an
executable bit), `totem redo` makes the change again. In a folder that is no repository, in
a clean repository, and in one with its own staged and unstaged changes, left as they were."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.headless import Project, json_lines
from tests.support.sandbox import require_bwrap
from totem.snapshots.prune import prune
from totem.snapshots.worktree import WorkTreeStore, store_folder

COMMAND = "rm -rf data && echo x > new.txt && sed -i s/a/b/ src/app.py"
BINARY = bytes(range(256)) * 4
GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]


def _tree(root: Path) -> dict[str, tuple[str, bytes, bool]]:
    """Every file and link under `root` (the .git folder aside): kind, content, executable."""
    found: dict[str, tuple[str, bytes, bool]] = {}
    for path in sorted(root.rglob("*")):
        if ".git" in path.relative_to(root).parts:
            continue
        name = str(path.relative_to(root))
        if path.is_symlink():
            found[name] = ("link", os.readlink(path).encode(), False)
        elif path.is_file():
            found[name] = ("file", path.read_bytes(), os.access(path, os.X_OK))
    return found


def _make(root: Path) -> None:
    (root / "data" / "raw").mkdir(parents=True)
    (root / "data" / "raw" / "sample.bin").write_bytes(BINARY)
    (root / "data" / "notes.txt").write_text("kept by hand, never committed\n")
    (root / "data" / "fetch.sh").write_text("#!/bin/sh\necho fetch\n")
    (root / "data" / "fetch.sh").chmod(0o755)
    (root / "data" / "latest").symlink_to("raw/sample.bin")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("name = 'a'\n")


def _git(root: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=root, check=True, text=True,
                          capture_output=True).stdout


def _repository(root: Path, *, dirty: bool) -> None:
    _git(root, "init", "-q")
    _git(root, "add", "src/app.py")
    _git(root, "commit", "-qm", "start")
    if dirty:  # the person's own work in progress: one change staged, one not
        (root / "src" / "app.py").write_text("name = 'a'  # staged\n")
        _git(root, "add", "src/app.py")
        (root / "src" / "app.py").write_text("name = 'a'  # staged, then more\n")
        (root / "src" / "extra.py").write_text("x = 1\n")
        _git(root, "add", "src/extra.py")


@pytest.mark.parametrize("kind", ["no repository", "clean repository", "dirty repository"])
def test_undo_puts_back_what_a_command_removed_created_and_edited(
    tmp_path: Path, kind: str,
) -> None:
    require_bwrap()
    project = Project(tmp_path)
    root = project.root
    _make(root)
    if kind != "no repository":
        _repository(root, dirty=kind == "dirty repository")
    status = _git(root, "status", "--porcelain") if kind != "no repository" else ""
    stashes = _git(root, "stash", "list") if kind != "no repository" else ""
    before = _tree(root)
    turns = [{"tool": "bash", "args": {"command": COMMAND}}, {"text": "Done."}]
    with project.serve(turns):
        ran = project.totem("run", "--format", "json", "clean up the data", timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    events = json_lines(ran.stdout)
    assert not [e for e in events if e["type"] in ("permission", "question")]
    end = next(e for e in events if e["type"] == "tool_end")
    assert not end["is_error"], end
    assert "deleted file mode 100755" in end["diff"] and "b/new.txt" in end["diff"]
    assert "-name = 'a'" in end["diff"]
    after = _tree(root)
    assert not (root / "data").exists() and after["new.txt"][1] == b"x\n"

    undone = project.totem("undo")
    assert undone.returncode == 0, undone.stderr
    assert _tree(root) == before
    for line in ("removed new.txt", "restored src/app.py", "recreated data/latest",
                 "recreated data/raw/sample.bin"):
        assert line in undone.stdout
    if kind != "no repository":
        assert _git(root, "status", "--porcelain") == status
        assert _git(root, "stash", "list") == stashes
    assert not (root / ".git").exists() or kind != "no repository"

    redone = project.totem("redo")
    assert redone.returncode == 0, redone.stderr
    assert _tree(root) == after


def test_undo_of_a_command_names_a_file_changed_since_and_touches_nothing(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    root = project.root
    _make(root)
    turns = [{"tool": "bash", "args": {"command": COMMAND}}, {"text": "Done."}]
    with project.serve(turns):
        assert project.totem("run", "--yes", "clean up").returncode == 0
    (root / "new.txt").write_text("mine now\n")
    refused = project.totem("undo")
    assert refused.returncode == 1
    assert "changed since the request: new.txt" in refused.stderr
    assert (root / "new.txt").read_text() == "mine now\n" and not (root / "data").exists()


def test_undo_of_a_request_whose_snapshots_were_pruned_says_so_and_changes_nothing(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    root = project.root
    _make(root)
    turns = [{"tool": "bash", "args": {"command": COMMAND}}, {"text": "Done."}]
    with project.serve(turns):
        assert project.totem("run", "--yes", "clean up").returncode == 0
    store = WorkTreeStore(root, store_folder(tmp_path / "data" / "totem", root))
    assert prune(store, keep_days=0, max_size=10**9, grace=0).requests == 1
    refused = project.totem("undo")
    assert refused.returncode == 1
    assert "pruned or lost" in refused.stderr and "Nothing was changed" in refused.stderr
    assert (root / "new.txt").read_text() == "x\n" and not (root / "data").exists()


def test_without_git_the_run_says_that_commands_changes_cannot_be_undone(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    empty = tmp_path / "bin"
    empty.mkdir()
    project.env["PATH"] = str(empty)  # no git to be found (bash runs by its full path)
    turns = [{"calls": [{"tool": "bash", "args": {"command": "echo x > new.txt"}},
                        {"tool": "bash", "args": {"command": "echo y > other.txt"}}]},
             {"text": "Done."}]
    with project.serve(turns):
        ran = project.totem("run", "--yes", "--format", "json", "make files")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    said = [e["text"] for e in json_lines(ran.stdout) if e["type"] == "notice"
            and "git is not installed" in e["text"]]
    assert len(said) == 1 and "cannot be undone" in said[0]  # said once, not per call
    assert (project.root / "new.txt").read_text() == "x\n"
