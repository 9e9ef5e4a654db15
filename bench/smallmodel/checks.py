"""Helpers the task checks share: comparing with the fixture, running code, reading answers."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

NEGATIONS = re.compile(
    r"\b(no|not|none|nothing|nowhere|never|doesn't|does not|isn't|is not|there is no|"
    r"there are no|cannot find|can't find|could not find|couldn't find|unable to find|"
    r"no such|absent|missing)\b",
    re.IGNORECASE,
)


def read(root: Path, path: str) -> str | None:
    """The text of `path` under `root`, or None when it is not there."""
    file = root / path
    return file.read_text(encoding="utf-8", errors="replace") if file.is_file() else None


def unchanged(root: Path, files: dict[str, str], *, skip: tuple[str, ...] = ()) -> str | None:
    """None when every fixture file but `skip` is still there with its content; else why not."""
    for path, content in files.items():
        if path in skip:
            continue
        now = read(root, path)
        if now is None:
            return f"{path} was removed"
        if now != content:
            return f"{path} was changed"
    return None


def run_python(root: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Runs this interpreter with `args` in `root` (the venv's, which has pytest and PyYAML)."""
    return subprocess.run(
        [sys.executable, *args], cwd=root, capture_output=True, text=True, timeout=timeout
    )


LIST_MARKER = re.compile(r"^\s*(?:\d+[.)]|#+)\s", re.MULTILINE)


def mentions_number(
    answer: str, number: int, *, words: tuple[str, ...] = (), near: str = ""
) -> bool:
    """True when `number` (or one of `words`) is in the answer as a whole number, not part of
    a longer one nor a list item's number ("5. Count the tests"); with `near`, only within 60
    characters of that word (say, "fail" for a count of failing tests)."""
    text = LIST_MARKER.sub(" ", answer)
    spellings = [rf"(?<![\d.]){number}(?![\d]|\.\d)", *(rf"\b{w}\b" for w in words)]
    for spelling in spellings:
        for match in re.finditer(spelling, text, re.IGNORECASE):
            around = text[max(0, match.start() - 60) : match.end() + 60]
            if not near or near.lower() in around.lower():
                return True
    return False


def says_absent(answer: str, *, near: str) -> bool:
    """True when one sentence of the answer names `near` and says, in some plain way, that it
    is not there ("No function connects to Redis", "Redis is not used")."""
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", answer):
        if near.lower() in sentence.lower() and NEGATIONS.search(sentence):
            return True
    return False


def write(root: Path, path: str, text: str) -> None:
    """Writes `text` to `path` under `root` (for the reference solutions)."""
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
