"""Delete one file and nothing else."""

from pathlib import Path

from bench.smallmodel.checks import unchanged

STEPS = 1
FILES = {
    "old_notes.txt": "draft ideas from 2019\n",
    "notes.txt": "current notes\n",
    "main.py": "print('ok')\n",
}
PROMPTS = {
    "direct": "Delete the file old_notes.txt, it is no longer needed.",
    "terse": "rm old_notes.txt pls, not needed",
    "indirect": (
        "Don't delete notes.txt, it's current. old_notes.txt is not needed anymore though, get "
        "rid of it."
    ),
    "other": "Supprime le fichier old_notes.txt, il ne sert plus à rien. Garde notes.txt.",
}
KEEP = {"indirect": ('notes.txt',), "other": ('notes.txt',)}


def check(root: Path, answer: str) -> str | None:
    if (root / "old_notes.txt").exists():
        return "old_notes.txt still there"
    return unchanged(root, FILES, skip=("old_notes.txt",))


def solve(root: Path) -> str:
    (root / "old_notes.txt").unlink()
    return "Deleted."
