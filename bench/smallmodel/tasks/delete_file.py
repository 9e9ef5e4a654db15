"""Delete one file and nothing else."""

from pathlib import Path

from bench.smallmodel.checks import unchanged

STEPS = 1
FILES = {
    "old_notes.txt": "draft ideas from 2019\n",
    "notes.txt": "current notes\n",
    "main.py": "print('ok')\n",
}
PROMPT = "Delete the file old_notes.txt, it is no longer needed."


def check(root: Path, answer: str) -> str | None:
    if (root / "old_notes.txt").exists():
        return "old_notes.txt still there"
    return unchanged(root, FILES, skip=("old_notes.txt",))


def solve(root: Path) -> str:
    (root / "old_notes.txt").unlink()
    return "Deleted."
