"""When an edit's old_string is not in the file as written: the near misses worth taking.

Models copy old_string from what `read` showed, and small ones copy it a little wrong:
with the line numbers `read` puts in front of each line, or with the indentation or the
trailing spaces changed. Each near miss is taken only when it points at exactly one place
in the file; otherwise the edit fails as before, with its error.
"""

from __future__ import annotations

import os
import re  # compiled on first use (re caches them), not at start-up
from pathlib import Path

__all__ = ["already_there", "appended", "found_elsewhere", "near_match", "section_of",
           "starts_block", "unique_contexts", "whole_line"]

_NUMBERED = r"^\s*\d+\t"  # read's "     3\t" before each line


def _without_numbers(text: str) -> str | None:
    """`text` without read's line numbers, when every line that has text carries one."""
    lines = text.split("\n")
    filled = [line for line in lines if line.strip()]
    if not filled or not all(re.match(_NUMBERED, line) for line in filled):
        return None
    return "\n".join(re.sub(_NUMBERED, "", line, count=1) for line in lines)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _block_by_stripped_lines(content: str, old: str) -> tuple[int, int] | None:
    """The one run of whole lines of `content` equal to the lines of `old` once each is
    stripped of the spaces around it: its (start, end) offsets, or None."""
    wanted = [line.strip() for line in old.strip("\n").split("\n")]
    if not any(wanted):
        return None
    lines = content.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    found: list[tuple[int, int]] = []
    for first in range(len(lines) - len(wanted) + 1):
        if all(lines[first + i].strip() == wanted[i] for i in range(len(wanted))):
            found.append((offsets[first], offsets[first + len(wanted)] - 1))
            if len(found) > 1:
                return None
    return found[0] if found else None


def _reindent(new: str, *, old_first: str, file_first: str) -> str:
    """`new` with the indentation the model gave its first old line swapped for the file's."""
    given, real = _indent(old_first), _indent(file_first)
    if given == real:
        return new
    out = []
    for line in new.split("\n"):
        out.append(real + line[len(given):] if line.startswith(given) else line)
    return "\n".join(out)


def near_match(
    content: str, old: str, new: str, *, loose: bool = False
) -> tuple[str, str] | None:
    """(text really in `content`, its replacement) for an `old` not found as written, or
    None when no near miss points at exactly one place. `loose` (a small model's edit):
    one line written without its quotes or spacing (`version: 1.4.2` for the JSON line
    `"version": "1.4.2",`) is found too, and the value it changes is changed there."""
    plain_old = _without_numbers(old)
    if plain_old is not None:
        plain_new = _without_numbers(new)
        new = plain_new if plain_new is not None else new
        if content.count(plain_old) == 1:
            return plain_old, new
        old = plain_old
    block = _block_by_stripped_lines(content, old)
    if block is None:
        return _line_as_written(content, old, new) if loose else None
    start, end = block
    found = content[start:end]
    first_old = old.strip("\n").split("\n")[0]
    new_text = _reindent(new.strip("\n"), old_first=first_old, file_first=found.split("\n")[0])
    return found, new_text


_LOOSE_DROP = str.maketrans("", "", "\"'` \t")
_TOKEN = r"[\w.+-]"


def _loose(line: str) -> str:
    return line.translate(_LOOSE_DROP).rstrip(",;")


def _line_as_written(content: str, old: str, new: str) -> tuple[str, str] | None:
    """For one-line `old` and `new`: the one line of `content` that reads as `old` once
    quotes, spaces and a trailing comma are left out, and that line with the part `new`
    changes (whole words: `1.4.2` -> `1.5.0`) changed in it."""
    if "\n" in old.strip("\n") or "\n" in new.strip("\n") or not _loose(old):
        return None
    old, new = old.strip("\n"), new.strip("\n")
    lines = [line for line in content.split("\n") if _loose(line) == _loose(old)]
    if len(lines) != 1 or content.count(lines[0]) != 1:
        return None
    start = 0  # the changed part: after the common start, before the common end
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    while start > 0 and re.match(_TOKEN, old[start - 1]):  # widened to whole words
        start -= 1
    while end > 0 and re.match(_TOKEN, old[len(old) - end]):
        end -= 1
    gone, put = old[start:len(old) - end], new[start:len(new) - end]
    if gone == gone.strip():  # `port:8080` -> `port: 9090` changes the value, not spacing
        put = put.strip()
    if gone == put:
        return None
    found = [m.start() for m in re.finditer(rf"(?<!{_TOKEN}){re.escape(gone)}(?!{_TOKEN})",
                                             lines[0])] if gone.strip() else []
    if len(found) != 1:
        return None
    at = found[0]
    return lines[0], lines[0][:at] + put + lines[0][at + len(gone):]


_BLOCK_START = r"^(?:async\s+def|def|class|function|export|func|fn|pub|public|private|static)\b"


def starts_block(text: str) -> bool:
    """Whether `text` begins a new function or class (`def clamp(...)`, `class A`): a model
    that names a new piece by its first line; anything else not found is an error (the 0.5B
    named the file itself and would have had junk added)."""
    return bool(text.strip()) and re.match(_BLOCK_START, text.lstrip()) is not None


def whole_line(content: str, old: str) -> tuple[int, int] | None:
    """Where `old` (found several times in `content`) is a whole line, when it is that
    only once: `Jam is sweet.` is in `    Jam is sweet.` too, but is one line by itself."""
    if not old or "\n" in old:
        return None
    # preceded by the start or a line break, followed by one or the end
    found = [m.start() for m in re.finditer(rf"(?<![^\n]){re.escape(old)}(?![^\n])", content)]
    return (found[0], found[0] + len(old)) if len(found) == 1 else None


def already_there(content: str, addition: str) -> tuple[str, int | None]:
    """An addition to the end of `content` without read's line numbers (`     7    text`,
    `     7\ttext`, copied from what read showed), and the line where `content` already has
    all of it (the 1.5B, its fix made, appended the fixed line again), or None."""
    lines = addition.split("\n")
    numbered = r"^\s*\d+(?:\t| {2,})"
    filled = [line for line in lines if line.strip()]
    if filled and all(re.match(numbered, line) for line in filled):
        addition = "\n".join(re.sub(numbered, "", line, count=1) for line in lines)
    block = addition.strip("\n")
    at = f"\n{content}\n".find(f"\n{block}\n")  # whole lines only
    if not block.strip() or at < 0:
        return addition, None
    return addition, content[:at].count("\n") + 1


def appended(content: str, addition: str) -> str:
    """`content` with `addition` at its end: after a blank line or two when the addition is
    a new function or class (PEP 8's two for Python), else on the next line."""
    body = content.rstrip("\n")
    piece = addition.strip("\n")
    if not body:
        return piece + "\n"
    gap = "\n"
    if re.match(_BLOCK_START, piece.lstrip()):
        gap = "\n\n\n" if re.match(r"^(?:async\s+def|def|class)\b", piece.lstrip()) else "\n\n"
    return body + gap + piece + "\n"


MAX_FILES_SEARCHED = 2_000
MAX_FILE_BYTES = 512_000
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox"})


def found_elsewhere(root: Path, old: str, *, besides: Path) -> dict[str, str]:
    """The project's other files (at most three) that hold `old` as written, path -> text: a
    model often edits the file that uses a text instead of the one that holds it."""
    if len(old.strip()) < 4:
        return {}
    root = Path(os.path.realpath(root))
    found: dict[str, str] = {}
    seen = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(names):
            path = Path(folder) / name
            seen += 1
            if seen > MAX_FILES_SEARCHED or len(found) >= 3:
                return found
            if path == besides or path.is_symlink():
                continue
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    continue
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if old in text:
                found[path.relative_to(root).as_posix()] = text
    return found


MAX_CONTEXTS = 3


_SECTION = r"^\s*(?:\[[^\]]+\]|(?:async\s+)?def\s+\w+|class\s+\w+|[\w-]+:\s*$)"


def section_of(content: str, line: int) -> str | None:
    """The nearest header above line `line` (1-based): `[database]`, `def load`, `server:`."""
    lines = content.split("\n")
    for text in reversed(lines[: line - 1]):
        found = re.match(_SECTION, text)
        if found:
            return found.group(0).strip()
    return None


def unique_contexts(content: str, old: str) -> list[tuple[int, str]]:
    """For an old_string found several times: each place (its first line's number) with the
    fewest whole lines around it, from the line above down, that appear once in the file;
    a model picks the one it means instead of guessing at context."""
    lines = content.split("\n")
    starts = [i for i in range(len(content)) if content.startswith(old, i)]
    found: list[tuple[int, str]] = []
    for start in starts[:MAX_CONTEXTS]:
        first = content.count("\n", 0, start)
        last = content.count("\n", 0, start + len(old))
        for above in range(first + 1):
            block = "\n".join(lines[first - above:last + 1])
            if content.count(block) == 1:
                found.append((first + 1, block))
                break
    return found
