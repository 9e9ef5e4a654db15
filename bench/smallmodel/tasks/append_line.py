"""Append a line to a file, keeping the others."""

from pathlib import Path

from bench.smallmodel.checks import read, unchanged

STEPS = 2
ORIGINAL = "__pycache__/\n.venv/\ndist/\n"
FILES = {".gitignore": ORIGINAL, "main.py": "print('hi')\n"}
PROMPTS = {
    "direct": "Add *.log as a new last line of .gitignore.",
    "terse": "gitignore needs *.log at the end",
    "indirect": "Don't touch main.py. .gitignore should end with the line *.log, after dist/.",
    "other": "Ajoute la ligne *.log à la fin du fichier .gitignore.",
}
KEEP = {"indirect": ('main.py',)}


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES, skip=(".gitignore",))) is not None:
        return why
    text = read(root, ".gitignore")
    if text is None:
        return ".gitignore missing"
    lines = [line for line in text.splitlines() if line.strip()]
    return None if lines == ["__pycache__/", ".venv/", "dist/", "*.log"] else f"got {lines}"


def solve(root: Path) -> str:
    (root / ".gitignore").write_text(ORIGINAL + "*.log\n")
    return "Added."
