"""Misspelled words in the files a small model is shown before its first step.

Asked to fix a typo in README.md, the 1.5B coder reads the file and cannot tell which word
is wrong: it changed `Courier` to `Courier's` and left `recieve`. A spell checker can tell.
codespell's dictionary (common misspellings of English words in code and docs, each with
its correction; chosen by that project to have few false alarms) names only words it
lists: a word it does not know is never called wrong. The note is told whatever the
request says; the model decides whether the request is about it.
"""

from __future__ import annotations

import re  # compiled on first use (re caches them), not at start-up
from functools import cache
from importlib.util import find_spec
from pathlib import Path

__all__ = ["misspellings", "spelling_note"]

MAX_FOUND = 8
@cache
def _dictionary() -> dict[str, str]:
    """codespell's misspellings, lower case -> the correction(s); empty when it is missing."""
    spec = find_spec("codespell_lib")
    if spec is None or not spec.submodule_search_locations:
        return {}
    data = Path(next(iter(spec.submodule_search_locations))) / "data" / "dictionary.txt"
    try:
        text = data.read_text(encoding="utf-8")
    except OSError:
        return {}
    found: dict[str, str] = {}
    for line in text.splitlines():
        wrong, arrow, right = line.partition("->")
        if arrow:
            found[wrong.strip().lower()] = right.strip().rstrip(",").replace(",", " or")
    return found


def _words(line: str) -> list[str]:
    """The words of a line, with the parts of snake_case and camelCase names."""
    words = []
    for token in re.findall(r"[A-Za-z][A-Za-z']*[A-Za-z]|[A-Za-z]", line):
        words.append(token)
        words.extend(re.split(r"_+|(?<=[a-z])(?=[A-Z])", token))
    return words


def misspellings(text: str) -> list[tuple[int, str, str]]:
    """(line number, word as written, correction) for each misspelled word, first few."""
    known = _dictionary()
    found: list[tuple[int, str, str]] = []
    seen: set[str] = set()
    for number, line in enumerate(text.split("\n"), start=1):
        for word in _words(line):
            fix = known.get(word.lower())
            if fix is None or word.lower() in seen:
                continue
            seen.add(word.lower())
            found.append((number, word, fix))
            if len(found) >= MAX_FOUND:
                return found
    return found


def spelling_note(files: dict[str, str]) -> str:
    """The misspelled words of `files` (path -> text), as one note; '' when there are none."""
    said = []
    for path, text in files.items():
        found = misspellings(text)
        if found:
            said.append(f"{path}: " + "; ".join(f"line {line}: {word} (should be {fix})"
                                                 for line, word, fix in found))
    return ("[Words codespell knows as misspelled, in the files above: " + " | ".join(said)
            + ". Change them only if the request asks for it.]") if said else ""
