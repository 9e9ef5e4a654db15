"""The tasks: each module of bench/smallmodel/tasks/ is one, loaded here as a `Task`.

A task module holds its fixture (FILES), its request in several wordings (PROMPTS: wording
name -> text), and how to judge it (check, solve). Two optional mappings say what a wording
adds to the check, as data:

- FORMS: wording -> a `forms.Form` the answer must be written in; the task's VALUE (and
  ALIASES) is then the value it must give, and the project must be left as it was.
- KEEP: wording -> files the request names as ones to leave alone; they must be unchanged.
"""

from __future__ import annotations

import fnmatch
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from bench.smallmodel import tasks as tasks_package
from bench.smallmodel.checks import unchanged
from bench.smallmodel.forms import Form, same_value

WORDINGS = ("direct", "terse", "indirect", "other")
REQUIRED = ("direct", "terse", "indirect")  # every task has these; "other" only a few


@dataclass(frozen=True, slots=True)
class Wording:
    """One way of putting a task's request, and what it asks beyond the task itself."""

    name: str
    prompt: str
    form: Form | None = None  # the form the answer must take; None: free form
    keep: tuple[str, ...] = ()  # fixture files the request says to leave alone


@dataclass(frozen=True, slots=True)
class Task:
    """One micro-task: files to start from, what the user says, and how to judge the result."""

    name: str
    wordings: dict[str, Wording]
    files: dict[str, str]
    steps: int  # about how many tool calls a careful agent needs
    check: Callable[[Path, str], str | None]  # None: passed; else why it failed
    solve: Callable[[Path], str]  # a reference solution, to test the check itself
    values: tuple[str, ...] = ()  # what an answer in a wording's form must give (VALUE first)

    @property
    def prompt(self) -> str:
        """The direct wording, as the task had before it had others."""
        return self.wordings["direct"].prompt

    def materialise(self, root: Path) -> None:
        """Writes the fixture's files under `root`."""
        for path, text in self.files.items():
            file = root / path
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(text, encoding="utf-8")

    def judge(self, root: Path, answer: str, *, wording: str) -> str | None:
        """None when the project under `root` and `answer` do what `wording` asked; else why
        not. The task's own check judges a free-form answer; a wording with a form is judged
        on the value the form gives."""
        said = self.wordings[wording]
        for path in said.keep:
            if (why := unchanged(root, {path: self.files[path]})) is not None:
                return f"{why}, which the request said to leave alone"
        if said.form is None:
            return self.check(root, answer)
        if (why := unchanged(root, self.files)) is not None:
            return why
        value = said.form.value(answer)
        if value is None:
            return f"answer is not {said.form.shape}"
        return None if same_value(value, self.values) else f"answer gives {value!r}"

    def reference(self, root: Path, *, wording: str) -> str:
        """The reference solution, its answer written in the form `wording` asks for."""
        answer = self.solve(root)
        form = self.wordings[wording].form
        return answer if form is None else form.written(self.values[0])


def from_module(name: str, module: ModuleType) -> Task:
    """The task that `module` describes; a ValueError says what is wrong with it."""
    prompts: dict[str, str] = module.PROMPTS
    forms: dict[str, Form] = getattr(module, "FORMS", {})
    keep: dict[str, tuple[str, ...]] = getattr(module, "KEEP", {})
    values = (module.VALUE, *getattr(module, "ALIASES", ())) if hasattr(module, "VALUE") else ()
    problems = [f"lacks the wording {w!r}" for w in REQUIRED if w not in prompts]
    problems += [f"has an unknown wording {w!r}" for w in {*prompts, *forms, *keep}
                 if w not in WORDINGS or w not in prompts]
    problems += [f"keeps {p!r}, which is not in FILES" for paths in keep.values()
                 for p in paths if p not in module.FILES]
    problems += [f"wording {w!r} asks for {f.shape} but does not say {f.marker!r}"
                 for w, f in forms.items() if w in prompts and f.marker not in prompts[w]]
    if forms and not values:
        problems.append("has FORMS but no VALUE")
    if problems:
        raise ValueError(f"task {name}: " + "; ".join(problems))
    return Task(
        name=name,
        wordings={w: Wording(w, text, forms.get(w), keep.get(w, ())) for w, text in
                  prompts.items()},
        files=module.FILES,
        steps=module.STEPS,
        check=module.check,
        solve=module.solve,
        values=values,
    )


def runs(tasks: list[Task], wordings: list[str]) -> list[tuple[Task, str]]:
    """Each task in each of `wordings` that it has ("all": every wording it has), a task's
    wordings one after the other, so that they run close in time (under the same load)."""
    unknown = [w for w in wordings if w != "all" and w not in WORDINGS]
    if unknown:
        raise ValueError(f"unknown wording {unknown[0]!r}; the wordings are {', '.join(WORDINGS)}")
    order = list(WORDINGS) if "all" in wordings else list(dict.fromkeys(wordings))
    return [(task, w) for task in tasks for w in order if w in task.wordings]


def load_tasks(patterns: list[str] | None = None) -> list[Task]:
    """Every task, in name order; with `patterns` (globs or names), only those that match."""
    found = []
    for info in sorted(pkgutil.iter_modules(tasks_package.__path__), key=lambda i: i.name):
        if patterns and not any(fnmatch.fnmatch(info.name, p) for p in patterns):
            continue
        module = importlib.import_module(f"{tasks_package.__name__}.{info.name}")
        found.append(from_module(info.name, module))
    return found
