"""Bump a version in a JSON file without breaking it."""

import json
from pathlib import Path

from bench.smallmodel.checks import read, write

STEPS = 2
DATA = {
    "name": "lantern",
    "version": "1.4.2",
    "description": "Lights up logs",
    "scripts": {"test": "pytest -q"},
    "dependencies": {"rich": "13.7.1"},
}
FILES = {"package.json": json.dumps(DATA, indent=2) + "\n"}
PROMPTS = {
    "direct": "Bump the version in package.json to 1.5.0.",
    "terse": "package.json version -> 1.5.0",
    "indirect": "package.json still says 1.4.2, but this release is 1.5.0.",
}


def check(root: Path, answer: str) -> str | None:
    text = read(root, "package.json")
    if text is None:
        return "package.json missing"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"package.json no longer parses: {exc}"
    return None if data == {**DATA, "version": "1.5.0"} else f"package.json holds {data}"


def solve(root: Path) -> str:
    write(root, "package.json", FILES["package.json"].replace("1.4.2", "1.5.0"))
    return "Bumped."
