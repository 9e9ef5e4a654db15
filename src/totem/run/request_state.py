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

__all__ = ["asked_lines", "change_targets", "commands_left", "file_ops_left", "files_to_create",
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


def files_to_create(request: str, root: Path) -> list[str]:
    """The files the request asks to create that do not exist yet, as it names them."""
    names = []
    for match in re.finditer(_CREATE, request, re.I):
        path = _inside(root, match.group(1))
        if path is not None and not path.exists() and match.group(1) not in names:
            names.append(match.group(1))
    return names


# "python app.py prints ...", "running report.py fails": a file named as a program run,
# which says where the trouble shows, not where the change goes
_RUN_FILE = r"\b(?:python3?|node|ruby|bash|sh|run|running|execute|executing)\s+(?:the\s+)?$"


def change_targets(request: str, root: Path) -> dict[str, list[str]] | None:
    """Where the change a request asks for goes, when it says so plainly: {"edit": the
    existing files it names, "write": the files it asks to create}. None when it does not
    say (no file named; a file named only as the program that misbehaves; a test that
    fails, whose fix is in the code; a rename or deletion, which bash makes).

    The first change step of a small model is held to these paths where the server can
    hold it: asked to add a line to .gitignore or to create NOTES.md, the 0.5B edited
    main.py and README.md, the first files it had been shown."""
    from totem.run.hands_off import hands_off
    from totem.run.read_ahead import named_files
    from totem.run.request_kind import asked_action
    from totem.tools.spelling import asks_about_spelling

    if asked_action(request) != "change" or commands_left(request, root):
        return None
    from totem.run.test_commands import test_named

    test = test_named(request, root)
    if test and re.search(r"\b(?:fail\w*|pass\w*|broken)\b", request, re.I):
        # the fix is in the code the test imports (the 1.5B edited the test six times)
        code = _imported_files(root, test)
        return {"edit": code, "write": []} if code else None
    if asks_about_spelling(request):  # made certain at the end (run/small_aid.py); held to
        return None                   # the file, the 0.5B renamed its heading instead
    off = hands_off(request)
    edit = []
    for path in named_files(root, request):
        name = re.escape(path.rsplit("/", 1)[-1])
        shown = [m.start() for m in re.finditer(rf"(?<![\w.-])(?:[\w.-]+/)*{name}(?![\w-])",
                                                 request)]
        if off.covers(path) or all(re.search(_RUN_FILE, request[:at], re.I) for at in shown):
            continue
        edit.append(path)
    create = files_to_create(request, root)
    return {"edit": edit, "write": create} if edit or create else None


_QUOTED = r"""(?:`(?P<q1>[^`\n]+)`|'(?P<q2>[^'\n]+)'|"(?P<q3>[^"\n]+)"|(?P<bare>\S[^\n]*?))"""
_SPOT = r"((?:[\w.-]+/)*\.?[\w-](?:[\w.-]*[\w-])?)"  # a path; a dotfile such as .gitignore too
_END = r"\s*[.!]?\s*$"
# "Add *.log as a new last line of .gitignore", "put 'x = 1' at the end of a.py"
_START = r"^\s*(?:please\s+)?"  # the request is that one thing
_APPEND_AT_END = (
    rf"{_START}(?:add|append|put|insert)\s+(?:the\s+line\s+)?{_QUOTED}\s+(?:as\s+(?:a\s+|the\s+)?"
    rf"(?:new\s+)?(?:last|final)\s+line\s+(?:of|to|in)|(?:at|to)\s+the\s+(?:end|bottom)\s+of)"
    rf"\s+{_SPOT}{_END}"
)
# "Append the line 'build/' to .gitignore", "add node_modules/ to .gitignore": the text
# quoted, or one word that is no plain word ("add logging to app.py" is not a line)
_APPEND_TO = (
    rf"{_START}"
    r"""(?:add|append)\s+(?:the\s+line\s+)?(?:`(?P<q1>[^`\n]+)`|'(?P<q2>[^'\n]+)'|"""
    r""""(?P<q3>[^"\n]+)"|(?P<bare>[^\s`'"]*[^\w\s`'"][^\s`'"]*))\s+to\s+"""
    rf"{_SPOT}{_END}"
)
# "Create a file named NOTES.md that contains exactly this one line: Release 4.2 ships."
_CREATE_WITH = (
    rf"{_START}(?:create|make|write|add)\s+(?:a\s+|an\s+|the\s+)?(?:new\s+)?(?:file\s+)?"
    rf"(?:called\s+|named\s+)?{_SPOT}\s+(?:that\s+(?:contains|holds|says)|containing|"
    rf"holding|with)\s+(?:exactly\s+|only\s+|just\s+)?(?:(?:this|the|one|single|following)\s+)*"
    rf"(?:line|text|content|sentence)?\s*(?::\s*{_QUOTED}|"
    r"""(?:`(?P<c1>[^`\n]+)`|'(?P<c2>[^'\n]+)'|"(?P<c3>[^"\n]+)"))\s*$"""
)


def _said(match: re.Match[str]) -> str:
    groups = match.groupdict()
    return next((groups[g] for g in ("q1", "q2", "q3", "c1", "c2", "c3", "bare")
                 if groups.get(g)), "")


def asked_lines(request: str, root: Path) -> list[tuple[str, str, str]]:
    """The lines the request gives word for word, and where: ("append", path, line) for a
    line it asks to add at the end of an existing file, ("create", path, line) for the one
    line of a file it asks to create (there yet or not). Only a request that says just
    that."""
    text = request.strip()
    for pattern, kind in ((_APPEND_AT_END, "append"), (_APPEND_TO, "append"),
                          (_CREATE_WITH, "create")):
        match = re.search(pattern, text, re.I)
        if match is None:
            continue
        path = match.group(1) if kind == "create" else match.group(match.lastindex or 0)
        line = _said(match).strip()
        place = _inside(root, path)
        if line and place is not None and (place.is_file() if kind == "append"
                                           else "." in path and not place.is_dir()):
            return [(kind, path, line)]
    return []


def _imported_files(root: Path, test: str) -> list[str]:
    """The project's own Python files that the test file imports, as paths from `root`
    (`from slug import slugify` -> slug.py; `import pkg.mod` -> pkg/mod.py), looked for
    beside the test, at the root and under src/."""
    import ast

    try:
        tree = ast.parse((root / test).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return []
    modules: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.append(node.module)
        elif isinstance(node, ast.Import):
            modules.extend(alias.name for alias in node.names)
    base = Path(test).parent
    found: list[str] = []
    for module in modules:
        stem = module.replace(".", "/")
        for folder in dict.fromkeys([base, Path("."), Path("src")]):
            for candidate in (folder / f"{stem}.py", folder / stem / "__init__.py"):
                if (root / candidate).is_file() and candidate.as_posix() not in found:
                    found.append(candidate.as_posix())
    return found


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
