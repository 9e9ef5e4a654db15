"""The tasks: each module of bench/smallmodel/tasks/ is one, loaded here as a `Task`."""

from __future__ import annotations

import fnmatch
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.smallmodel import tasks as tasks_package


@dataclass(frozen=True, slots=True)
class Task:
    """One micro-task: files to start from, what the user says, and how to judge the result."""

    name: str
    prompt: str
    files: dict[str, str]
    steps: int  # about how many tool calls a careful agent needs
    check: Callable[[Path, str], str | None]  # None: passed; else why it failed
    solve: Callable[[Path], str]  # a reference solution, to test the check itself

    def materialise(self, root: Path) -> None:
        """Writes the fixture's files under `root`."""
        for path, text in self.files.items():
            file = root / path
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(text, encoding="utf-8")


def load_tasks(patterns: list[str] | None = None) -> list[Task]:
    """Every task, in name order; with `patterns` (globs or names), only those that match."""
    found = []
    for info in sorted(pkgutil.iter_modules(tasks_package.__path__), key=lambda i: i.name):
        if patterns and not any(fnmatch.fnmatch(info.name, p) for p in patterns):
            continue
        module = importlib.import_module(f"{tasks_package.__name__}.{info.name}")
        found.append(
            Task(
                name=info.name,
                prompt=module.PROMPT,
                files=module.FILES,
                steps=module.STEPS,
                check=module.check,
                solve=module.solve,
            )
        )
    return found
