"""The task file of `totem batch`: JSON Lines, one task a line.

    {"id": "fix-1", "repo": "../service-a", "prompt": "fix the lint errors"}
    {"id": "fix-2", "repo": "https://example.com/b.git", "ref": "main", "prompt": "...",
     "model": "local/qwen", "agent": "build", "maxsteps": 20}

`repo` is a path (relative to the task file) or a git URL. Blank lines and lines starting with
`#` are skipped. A bad line is an error naming the line; nothing runs then.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from totem.settings.errors import ConfigError

__all__ = ["BatchTask", "read_tasks", "task_from_dict"]

_TEXT_FIELDS = ("id", "repo", "prompt")
_OPTIONAL_TEXT = ("ref", "model", "agent")
_KNOWN = {*_TEXT_FIELDS, *_OPTIONAL_TEXT, "maxsteps"}


@dataclass(frozen=True, slots=True)
class BatchTask:
    id: str
    repo: str  # an absolute path, or a git URL
    prompt: str
    ref: str | None = None
    model: str | None = None
    agent: str | None = None
    maxsteps: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def task_from_dict(data: dict[str, Any]) -> BatchTask:
    return BatchTask(id=data["id"], repo=data["repo"], prompt=data["prompt"],
                     ref=data.get("ref"), model=data.get("model"), agent=data.get("agent"),
                     maxsteps=data.get("maxsteps"))


def _is_url(repo: str) -> bool:
    return "://" in repo or (repo.count(":") == 1 and "@" in repo.split(":")[0])


def _task(data: Any, *, base: Path) -> BatchTask:
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    unknown = sorted(set(data) - _KNOWN)
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(_KNOWN))})")
    for key in _TEXT_FIELDS:
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ValueError(f"{key!r} must be a non-empty string")
    for key in _OPTIONAL_TEXT:
        if data.get(key) is not None and not isinstance(data[key], str):
            raise ValueError(f"{key!r} must be a string")
    steps = data.get("maxsteps")
    if steps is not None and (not isinstance(steps, int) or isinstance(steps, bool) or steps < 1):
        raise ValueError("'maxsteps' must be a whole number of at least 1")
    repo = data["repo"] if _is_url(data["repo"]) else str((base / data["repo"]).resolve())
    return task_from_dict({**data, "repo": repo})


def read_tasks(path: Path) -> list[BatchTask]:
    """The tasks of `path`, checked; ConfigError naming the line of the first problem."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror}") from None
    tasks: list[BatchTask] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            task = _task(json.loads(line), base=path.parent)
        except ValueError as exc:  # json.JSONDecodeError is one
            raise ConfigError(f"{path}:{number}: {exc}") from None
        if task.id in seen:
            raise ConfigError(f"{path}:{number}: the id {task.id!r} is used twice")
        seen.add(task.id)
        tasks.append(task)
    if not tasks:
        raise ConfigError(f"{path}: no tasks in the file")
    return tasks
