"""Fix a spelling mistake without touching the rest of the file."""

from pathlib import Path

from bench.smallmodel.checks import read, unchanged, write

STEPS = 2
GOOD = (
    "# Courier\n\nCourier moves parcels between depots.\n\n"
    "## Usage\n\nEach depot will receive a manifest before the truck leaves.\n"
    "Run `courier plan` to print the route.\n"
)
FILES = {"README.md": GOOD.replace("receive", "recieve"), "courier.py": "print('route')\n"}
PROMPTS = {
    "direct": "There is a spelling mistake in README.md. Please fix it.",
    "terse": "typo in readme, fix",
    "indirect": (
        "Leave courier.py alone; README.md has a misspelt word that should be corrected, and "
        "nothing else in it should change."
    ),
    "other": "In README.md ist ein Rechtschreibfehler. Bitte korrigiere ihn.",
}
KEEP = {"indirect": ('courier.py',)}


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES, skip=("README.md",))) is not None:
        return why
    text = read(root, "README.md")
    if text is None:
        return "README.md missing"
    return None if text.strip() == GOOD.strip() else "README.md is not the corrected text"


def solve(root: Path) -> str:
    write(root, "README.md", GOOD)
    return "Fixed 'recieve'."
