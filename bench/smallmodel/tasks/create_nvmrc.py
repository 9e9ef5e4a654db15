"""Create a dotfile holding one version string, in a Node project."""

import json
from pathlib import Path

from bench.smallmodel.checks import read, unchanged, write

STEPS = 1
VERSION = "20.11.1"
PROMPTS = {
    "direct": (
        f"Create a file named .nvmrc in the project root containing exactly one line: {VERSION}"
    ),
    "terse": f"add .nvmrc with {VERSION}",
    "indirect": (
        f"package.json stays as it is. This project is meant to run on Node {VERSION} and "
        "nothing says so yet: there should be an .nvmrc holding just that version."
    ),
}
KEEP = {"indirect": ("package.json",)}
FILES = {
    "package.json": json.dumps(
        {"name": "tidewatch", "version": "0.3.0", "main": "index.js",
         "scripts": {"start": "node index.js"}}, indent=2) + "\n",
    "index.js": "console.log('tides');\n",
}


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES)) is not None:
        return why
    text = read(root, ".nvmrc")
    if text is None:
        return ".nvmrc missing"
    return None if text.strip() == VERSION else f".nvmrc holds {text[:80]!r}"


def solve(root: Path) -> str:
    write(root, ".nvmrc", VERSION + "\n")
    return "Created .nvmrc."
