"""Is what the request asked for true of the project now? Two checks a small model's
closing answer gets before it is accepted.

- A file the request asks to delete that still exists, one to rename that is still under
  its old name, or one to create that is not there: the 1.5B model "deleted" a file by
  emptying it with edit, then said "Deleted old_notes.txt"; asked to write
  tests/test_stack.py, it edited stack.py. The nudge gives the exact command or call.
- A change whose last result carries the Python check's note (`[Check of app.py: ...]`,
  see tools/python_check.py): the model answered as if the file were fine.
"""

from __future__ import annotations

import re  # compiled on first use (re caches them), not at start-up
import shlex
from collections.abc import Iterable
from pathlib import Path

from totem.messages import Message, ToolPart

__all__ = ["commands_left", "file_ops_left", "files_to_create", "test_named",
           "unresolved_check"]

_PATH = r"((?:[\w.-]+/)*[\w-][\w.-]*\.\w+)"
_DELETE = rf"\b(?:delete|remove)\s+(?:the\s+)?(?:file\s+)?{_PATH}"
_RENAME = rf"\b(?:rename|move)\s+(?:the\s+)?(?:file\s+)?{_PATH}\s+(?:to|as|into)\s+{_PATH}"
# "write a pytest test file tests/test_x.py", "create notes/todo.md": the words between the
# verb and the path name the kind of file, never a place ("add a line to notes.txt")
_CREATE = (rf"\b(?:create|write|add|make)\s+(?:a\s+|an\s+|the\s+)?(?:new\s+)?"
           rf"(?:(?!to\b|in\b|into\b|inside\b|from\b)[\w-]+\s+){{0,3}}?(?:called\s+|named\s+)?"
           rf"{_PATH}")
_CHECK_NOTE = "\n\n[Check of "
_CHANGING = frozenset({"write", "edit", "patch"})


def _inside(root: Path, path: str) -> Path | None:
    candidate = (root / path).resolve()
    base = root.resolve()
    return candidate if candidate == base or base in candidate.parents else None


def commands_left(request: str, root: Path) -> list[tuple[str, str]]:
    """The deletions and renames the request asks for that are not done yet: (what is left,
    the command that does it), each file inside the project and named in the request."""
    left: list[tuple[str, str]] = []
    for match in re.finditer(_RENAME, request, re.I):
        old, new = (_inside(root, p) for p in match.groups())
        if old is not None and new is not None and old.exists() and not new.exists():
            left.append((f"{match.group(1)} is still there. To rename it",
                         f"mv {shlex.quote(match.group(1))} {shlex.quote(match.group(2))}"))
    renamed = {m.group(1) for m in re.finditer(_RENAME, request, re.I)}
    for match in re.finditer(_DELETE, request, re.I):
        path = _inside(root, match.group(1))
        if match.group(1) not in renamed and path is not None and path.is_file():
            left.append((f"{match.group(1)} still exists. To delete it",
                         f"rm {shlex.quote(match.group(1))}"))
    return left


_TEST_FILE = r"(?<![\w/.-])((?:[\w-]+/)*(?:test_\w+|\w+_test)\.py)\b"


def test_named(request: str, root: Path) -> str | None:
    """The one Python test file the request names that exists, as it names it."""
    found = {m.group(1) for m in re.finditer(_TEST_FILE, request)
             if (path := _inside(root, m.group(1))) is not None and path.is_file()}
    return found.pop() if len(found) == 1 else None


def files_to_create(request: str, root: Path) -> list[str]:
    """The files the request asks to create that do not exist yet, as it names them."""
    names = []
    for match in re.finditer(_CREATE, request, re.I):
        path = _inside(root, match.group(1))
        if path is not None and not path.exists() and match.group(1) not in names:
            names.append(match.group(1))
    return names


def file_ops_left(request: str, root: Path) -> str | None:
    """What is left of the deletions, renames and creations the request asks for, with the
    call that does each, or None when the files are as asked (or the request asks for none)."""
    left = [f"{what}, call bash with: {command}" for what, command in
            commands_left(request, root)]
    for name in files_to_create(request, root):
        left.append(f"{name} does not exist yet. To create it, call write with path {name} "
                    "and the file's whole content.")
    return "\n".join(dict.fromkeys(left)) or None


def unresolved_check(run: Iterable[Message]) -> str | None:
    """The check note of the run's last completed change, when it reported problems."""
    last: ToolPart | None = None
    for message in run:
        for part in message.parts:
            if isinstance(part, ToolPart) and part.name in _CHANGING and part.state == "completed":
                last = part
    if last is None or _CHECK_NOTE not in last.output:
        return None
    return last.output[last.output.index(_CHECK_NOTE):].strip()
