"""Append a pinned requirement as the last line of requirements.txt."""

from pathlib import Path

from bench.smallmodel.checks import read, unchanged

STEPS = 2
ORIGINAL = "fastapi==0.111.0\nuvicorn==0.30.1\npydantic==2.7.4\n"
PIN = "httpx==0.27.2"
FILES = {
    "requirements.txt": ORIGINAL,
    "app.py": "from fastapi import FastAPI\n\napp = FastAPI()\n",
}
PROMPTS = {
    "direct": f"Append the line {PIN} to the end of requirements.txt.",
    "terse": f"add {PIN} to requirements.txt (last line)",
    "indirect": (
        f"app.py is done. requirements.txt is missing {PIN}, which belongs after the other "
        "pins, as its last line."
    ),
    "other": f"Añade la línea {PIN} al final de requirements.txt.",
}
KEEP = {"indirect": ("app.py",)}


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES, skip=("requirements.txt",))) is not None:
        return why
    text = read(root, "requirements.txt")
    if text is None:
        return "requirements.txt missing"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return None if lines == [*ORIGINAL.split(), PIN] else f"got {lines}"


def solve(root: Path) -> str:
    (root / "requirements.txt").write_text(ORIGINAL + PIN + "\n")
    return "Appended."
