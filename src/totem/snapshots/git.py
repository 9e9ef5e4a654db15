"""Running the real git on totem's own snapshot store: GIT_DIR is the store, GIT_WORK_TREE the
project, the index a file of the store. Nothing here reads or writes the project's `.git`.

    git(store, "write-tree")      the command's stdout (bytes); SnapshotError when it fails
    GitMissing                    git is not installed: commands' changes cannot be undone
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

__all__ = ["GitMissing", "SnapshotError", "git", "git_program"]

TIMEOUT = 300.0  # seconds: a first snapshot of a very large tree hashes every file

# what the person's environment must not change in our git: another repository, index,
# object directory or work tree (a hook's environment carries these)
_FOREIGN = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_COMMON_DIR",
            "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_ATTR_SOURCE")


class SnapshotError(Exception):
    """The snapshot store could not do what was asked; the message says why."""


class GitMissing(SnapshotError):
    """No git program: files changed by commands cannot be snapshotted."""


def git_program() -> str | None:
    """The path of git, or None when it is not installed."""
    return shutil.which("git")


def environment(store: Path, work_tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _FOREIGN}
    env.update(GIT_DIR=str(store), GIT_WORK_TREE=str(work_tree),
               GIT_INDEX_FILE=str(store / "index"), LC_ALL="C", GIT_TERMINAL_PROMPT="0",
               GIT_OPTIONAL_LOCKS="0")
    return env


def git(
    store: Path, work_tree: Path, *args: str, stdin: bytes | None = None,
    ok: Sequence[int] = (0,),
) -> bytes:
    """Run `git ARGS` on the store in the project folder; its stdout."""
    program = git_program()
    if program is None:
        raise GitMissing("git is not installed")
    try:
        done = subprocess.run(
            [program, *args], cwd=work_tree, env=environment(store, work_tree), input=stdin,
            capture_output=True, timeout=TIMEOUT, check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SnapshotError(f"git {args[0]}: {exc}") from None
    if done.returncode not in ok:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SnapshotError(f"git {args[0]} failed: {said[-1] if said else done.returncode}")
    return done.stdout
