"""Misspelled words in a file, for a request about a typo: named under what `read` shows.

Asked to "fix the typo in README.md", the 1.5B coder reads the file and cannot tell which
word is wrong: it changed `Courier` to `Courier's` and left `recieve`. A spell checker
can tell. codespell's dictionary (common misspellings of English words in code and docs,
each with its correction; chosen by that project to have few false alarms) is loaded only
when a request asks about spelling, and only words it lists are named: a word it does not
know is never called wrong.
"""

from __future__ import annotations

import re  # compiled on first use (re caches them), not at start-up
from functools import cache
from importlib.util import find_spec
from pathlib import Path

__all__ = ["asks_about_spelling", "misspellings", "spelling_fixes", "spelling_note"]

MAX_FOUND = 8
_ASKS = r"\b(?:typos?|spelling|spelt|misspel\w*|spelled\s+wrong\w*)\b"


def asks_about_spelling(request: str) -> bool:
    """Whether the request is about a typo or a spelling mistake."""
    return re.search(_ASKS, request, re.I) is not None


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


def spelling_note(path: Path, request: str) -> str:
    """For a request about spelling, the misspelled words of the file at `path`, as a note
    to put under what `read` shows; '' otherwise."""
    if not asks_about_spelling(request):
        return ""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    found = misspellings(text)
    if not found:
        return ""
    words = "; ".join(f"line {line}: {word} (should be {fix})" for line, word, fix in found)
    return f"\n\n[Misspelled words in this file: {words}.]"


def spelling_fixes(text: str) -> list[tuple[str, str]]:
    """(a line of `text`, the line corrected) for each line with misspelled words whose
    correction is certain (codespell gives one, not "x or y"), where that line is the only
    one of the text that reads so (an edit must fit one place)."""
    lines = text.split("\n")
    fixed: dict[int, str] = {}
    for number, word, fix in misspellings(text):
        if " or " in fix:
            continue
        right = fix[0].upper() + fix[1:] if word[0].isupper() else fix
        line = fixed.get(number, lines[number - 1])
        fixed[number] = re.sub(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", right, line)
    return [(lines[n - 1], new) for n, new in sorted(fixed.items())
            if new != lines[n - 1] and lines.count(lines[n - 1]) == 1]
