"""A task's own working copy, in a scratch folder: a `git clone` of the repository (a path or
a URL) at the task's ref, or a copy of a folder that is not a repository (committed there, so
that the run's changes are a diff). The original is only read.

Each attempt gets a new folder: a task started again after a lost worker never meets the
leftovers of the first attempt.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from totem.batch.tasks import BatchTask

__all__ = ["CopyError", "WorkCopy", "make_copy"]

_GIT_IDENTITY = ["-c", "user.name=totem batch", "-c", "user.email=batch@totem.invalid",
                 "-c", "commit.gpgsign=false"]
_ENV = {"GIT_TERMINAL_PROMPT": "0"}


class CopyError(Exception):
    """The repository could not be copied (the message says what git said)."""


@dataclass(frozen=True, slots=True)
class WorkCopy:
    folder: Path  # the attempt's scratch folder, removed unless kept
    root: Path  # the repository inside it, where the run works
    base: str  # the commit the run started from

    def diff(self) -> str:
        """Everything the run changed, new files included, against the starting commit."""
        _git(self.root, "add", "-A")
        return _git(self.root, "diff", "--cached", "--no-color", "--binary", self.base)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _git(root: Path | None, *args: str) -> str:
    import os

    command = ["git", *_GIT_IDENTITY, *(["-C", str(root)] if root else []), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **_ENV}, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise CopyError(f"git {args[0]}: {said[-1] if said else 'failed'}")
    return done.stdout


def _is_url(repo: str) -> bool:
    return "://" in repo or (":" in repo and not Path(repo).exists())


def _checkout(root: Path, ref: str) -> None:
    try:
        _git(root, "checkout", "--quiet", "--detach", ref)
    except CopyError:
        _git(root, "checkout", "--quiet", "--detach", f"origin/{ref}")


def make_copy(task: BatchTask, *, scratch: Path) -> WorkCopy:
    """A fresh copy of the task's repository at its ref, under `scratch`."""
    scratch.mkdir(parents=True, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", task.id)[:60]
    folder = Path(tempfile.mkdtemp(prefix=f"{safe}-", dir=scratch))
    root = folder / "repo"
    try:
        if _is_url(task.repo) or (Path(task.repo) / ".git").exists():
            checkout = ["--no-checkout"] if task.ref else []
            _git(None, "clone", "--quiet", *checkout, task.repo, str(root))
            if task.ref:
                _checkout(root, task.ref)
        elif Path(task.repo).is_dir():
            if task.ref:
                raise CopyError(f"{task.repo} is not a git repository: it has no ref {task.ref}")
            shutil.copytree(task.repo, root, symlinks=True)
            _git(root, "init", "--quiet")
            _git(root, "add", "-A")
            _git(root, "commit", "--quiet", "--allow-empty", "-m", "the folder as it was")
        else:
            raise CopyError(f"{task.repo}: no such folder")
        base = _git(root, "rev-parse", "HEAD").strip()
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return WorkCopy(folder, root, base)
