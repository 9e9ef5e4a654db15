"""One Exercism exercise as the harness sees it: its files, the prompt, a fresh working copy."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

PROMPTS = Path(__file__).parent / "prompts"
# Aider's benchmark/prompts.py, word for word
INSTRUCTIONS_ADDENDUM = (PROMPTS / "instructions_addendum.txt").read_text(encoding="utf-8")
TEST_FAILURES = (PROMPTS / "test_failures.txt").read_text(encoding="utf-8")
HIDDEN = (".meta", ".docs")  # never copied to the agent's folder (the example is in .meta)


class ExerciseError(ValueError):
    """An exercise folder that is not laid out as Exercism's are."""


@dataclass(frozen=True, slots=True)
class Exercise:
    """A pristine exercise folder: `.docs/`, `.meta/config.json` and the files it names."""

    name: str
    source: Path
    solution: tuple[str, ...]  # the stub(s) the agent edits, relative to the folder
    tests: tuple[str, ...]
    examples: tuple[str, ...]  # the reference solution(s), for the harness self-test only

    @classmethod
    def load(cls, folder: Path) -> Exercise:
        config_file = folder / ".meta" / "config.json"
        try:
            files = json.loads(config_file.read_text(encoding="utf-8"))["files"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ExerciseError(f"{config_file}: no readable 'files' ({exc})") from exc
        hidden = set(files.get("test", [])) | set(files.get("example", []))
        solution = tuple(p for p in files.get("solution", []) if p not in hidden
                         and not p.startswith(HIDDEN))
        exercise = cls(name=folder.name, source=folder, solution=solution,
                       tests=tuple(files.get("test", [])),
                       examples=tuple(files.get("example", [])))
        missing = [p for p in (*solution, *exercise.tests, ".docs/instructions.md")
                   if not (folder / p).is_file()]
        if not solution or not exercise.tests or missing:
            raise ExerciseError(f"{folder}: no solution or test file, or missing {missing}")
        return exercise

    @property
    def file_list(self) -> str:
        """The stub names as Aider's prompts give them ("acronym.py")."""
        return " ".join(Path(p).name for p in self.solution)

    def instructions(self) -> str:
        """The first message, built as Aider's run_test_real builds it: introduction.md (when
        there is one), instructions.md, instructions.append.md, then the addendum."""
        docs = self.source / ".docs"
        text = ""
        for name in ("introduction.md", "instructions.md", "instructions.append.md"):
            if (docs / name).is_file():
                text += (docs / name).read_text(encoding="utf-8")
        return text + INSTRUCTIONS_ADDENDUM.format(file_list=self.file_list)

    def materialise(self, target: Path) -> None:
        """A fresh copy of the exercise in `target`, without .meta and .docs."""
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(self.source, target, ignore=shutil.ignore_patterns(*HIDDEN, "__pycache__"))

    def tests_changed(self, work: Path) -> list[str]:
        """The test files that differ in `work` from the pristine copy (or are gone)."""
        changed = []
        for path in self.tests:
            copy = work / path
            if not copy.is_file() or copy.read_bytes() != (self.source / path).read_bytes():
                changed.append(path)
        return changed

    def restore_tests(self, work: Path) -> None:
        """Puts the pristine test files back, as Aider's run_unit_tests does before each run."""
        for path in self.tests:
            target = work / path
            if target.is_symlink() or target.is_file():
                target.unlink()
            elif target.is_dir():
                shutil.rmtree(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.source / path, target)


def load_exercises(folder: Path, only: list[str] | None = None) -> list[Exercise]:
    """Every exercise under `folder` (sorted by name), or those named in `only`."""
    if not folder.is_dir():
        raise ExerciseError(f"{folder} is not a folder")
    names = sorted(p.name for p in folder.iterdir() if (p / ".meta" / "config.json").is_file())
    if only:
        unknown = sorted(set(only) - set(names))
        if unknown:
            raise ExerciseError(f"no exercise {', '.join(unknown)} in {folder}")
        names = [n for n in names if n in set(only)]
    return [Exercise.load(folder / name) for name in names]
