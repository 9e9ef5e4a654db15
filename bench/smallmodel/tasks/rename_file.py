"""Rename a module and update the import that uses it."""

from pathlib import Path

from bench.smallmodel.checks import read, run_python, write

STEPS = 3
HELPERS = "def shout(text):\n    return text.upper() + '!'\n"
FILES = {
    "helpers.py": HELPERS,
    "main.py": "from helpers import shout\n\nprint(shout('ready'))\n",
}
PROMPTS = {
    "direct": (
        "Rename helpers.py to text_helpers.py and update the import in main.py so it still runs."
    ),
    "terse": "mv helpers.py text_helpers.py and fix the import in main.py",
    "indirect": (
        "helpers.py should be called text_helpers.py from now on; main.py imports it and must "
        "still run afterwards."
    ),
}


def check(root: Path, answer: str) -> str | None:
    if (root / "helpers.py").exists():
        return "helpers.py still there"
    if read(root, "text_helpers.py") is None:
        return "text_helpers.py missing"
    done = run_python(root, "main.py")
    return None if done.stdout.strip() == "READY!" else "main.py: " + done.stderr[-200:]


def solve(root: Path) -> str:
    (root / "helpers.py").rename(root / "text_helpers.py")
    write(root, "main.py", FILES["main.py"].replace("from helpers", "from text_helpers"))
    return "Renamed."
