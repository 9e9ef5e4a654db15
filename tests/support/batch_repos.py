"""Small generated repositories and task files for `totem batch`, with the fake server's
script of each task's conversation.

    repos = make_repos(tmp_path / "repos", count=20)
    write_tasks(tasks_file, repos)
    server = FakeOpenAIServer(conversations=conversations(len(repos), pause=2), models=["m"])
    check_result(result, number)          # the diff is exactly the task's change

Task N asks to rename the greeting of repository N; its script reads greeting.py, edits it,
runs `sleep PAUSE` (time for a test to kill a worker mid-task) and answers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["ORIGINAL", "batch_env", "check_result", "conversations", "make_repos", "mark",
           "run_batch", "task_id", "untouched", "write_tasks"]

ORIGINAL = 'NAME = "world"\n\n\ndef greet() -> str:\n    return f"hello {NAME}"\n'
SRC = str(Path(__file__).resolve().parents[2] / "src")
_GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]


def mark(number: int) -> str:
    return f"[task-{number:02d}]"


def task_id(number: int) -> str:
    return f"t{number:02d}"


def make_repos(base: Path, *, count: int) -> list[Path]:
    """`count` git repositories with one commit each: greeting.py and a README."""
    repos = []
    for number in range(count):
        repo = base / f"repo{number:02d}"
        repo.mkdir(parents=True)
        (repo / "greeting.py").write_text(ORIGINAL)
        (repo / "README.md").write_text(f"# repo {number}\n")
        subprocess.run([*_GIT, "init", "-q"], cwd=repo, check=True)
        subprocess.run([*_GIT, "add", "-A"], cwd=repo, check=True)
        subprocess.run([*_GIT, "commit", "-qm", "start"], cwd=repo, check=True)
        repos.append(repo)
    return repos


def write_tasks(path: Path, repos: list[Path], *,
                extra: list[dict[str, Any]] | None = None) -> None:
    lines = [{"id": task_id(n), "repo": os.path.relpath(repo, path.parent),
              "prompt": f"{mark(n)} Rename the greeting to task{n:02d}."}
             for n, repo in enumerate(repos)]
    path.write_text("".join(json.dumps(line) + "\n" for line in [*lines, *(extra or [])]))


def conversations(count: int, *, pause: float) -> dict[str, list[dict[str, Any]]]:
    scripts: dict[str, list[dict[str, Any]]] = {}
    for n in range(count):
        steps: list[dict[str, Any]] = [
            {"tool": "read", "args": {"path": "greeting.py"}},
            {"tool": "edit", "args": {"path": "greeting.py", "old_string": 'NAME = "world"',
                                      "new_string": f'NAME = "task{n:02d}"'}},
        ]
        if pause:
            steps.append({"tool": "bash", "args": {"command": f"sleep {pause:g}"}})
        steps.append({"text": f"Renamed the greeting to task{n:02d}."})
        scripts[mark(n)] = steps
    return scripts


def check_result(result: dict[str, Any], number: int) -> None:
    """The task ended well and its diff is exactly its one-line change."""
    assert result["status"] == "ok" and result["exit_reason"] == "finished", result
    assert result["final_answer"] == f"Renamed the greeting to task{number:02d}."
    changed = [line for line in result["diff"].splitlines()
               if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ['-NAME = "world"', f'+NAME = "task{number:02d}"'], result["diff"]
    assert result["files_changed"] == 1 and result["session_id"].startswith("ses_")
    assert result["usage"]["input"] > 0 and result["wall_s"] > 0


def untouched(repo: Path) -> bool:
    """The original has its first content and no change, staged or not."""
    status = subprocess.run([*_GIT, "status", "--porcelain"], cwd=repo, capture_output=True,
                            text=True, check=True).stdout
    worktrees = subprocess.run([*_GIT, "worktree", "list"], cwd=repo, capture_output=True,
                               text=True, check=True).stdout.strip().splitlines()
    return (repo / "greeting.py").read_text() == ORIGINAL and status == "" \
        and len(worktrees) == 1


def batch_env(tmp: Path, base_url: str, **extra: str) -> dict[str, str]:
    """The environment of a `totem batch`: its own config (the fake server) and data."""
    config = tmp / "totem.yaml"
    config.write_text(f"model: fake/m\nproviders:\n  fake: {{kind: openai, base_url: "
                      f"'{base_url}'}}\nknowledge: {{totaljs: never}}\n")  # no docs server
    return {**os.environ, "XDG_DATA_HOME": str(tmp / "data"),
            "XDG_CONFIG_HOME": str(tmp / "config"), "XDG_CACHE_HOME": str(tmp / "cache"),
            "TOTEM_CONFIG": str(config), "PYTHONPATH": SRC, **extra}


def run_batch(args: list[str], *, env: dict[str, str], cwd: Path,
              timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "totem", "batch", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
