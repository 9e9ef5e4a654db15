"""What a project holds, found from its files: its text files, the ones a request names, and
the names it defines that a request mentions.

Nothing here reads a request for what it asks. A request is searched only for what it
*names* that exists: a path of the project (`config.ini`, `src/app.py`), or a name the
project defines (`calc_ttl`, `LedgerReconciler`), in any language and any wording.
"""

from __future__ import annotations

import os
import re  # compiled on first use (re caches them), not at start-up
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ProjectFile", "defined_names", "distinctive", "mentioned", "named_files", "text_files",
]

MAX_FILES_SCANNED = 2_000  # a bigger project is listed, and only the files named are read
MAX_FILE_BYTES = 512_000
SKIP_DIRS = frozenset({
    ".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".idea", ".vscode", "dist", "build", "target",
    ".next", ".cache", ".totem",
})
# a definition in most languages: def/class/function/func/fn/struct/interface/type/const...
_DEFINITION = re.compile(
    r"^[ \t]*(?:export\s+)?(?:default\s+)?(?:pub(?:\(\w+\))?\s+)?(?:async\s+)?"
    r"(?:def|class|function|func|fn|struct|interface|enum|trait|type|const|let|var|module)"
    r"\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)"
    r"|^([A-Z][A-Z0-9_]{2,})\s*[:=]"  # CONSTANT = ...
    r"|^\[([\w.-]+)\]",  # an INI or TOML section
    re.M,
)


@dataclass(frozen=True, slots=True)
class ProjectFile:
    path: str  # relative, with '/'
    text: str


def text_files(root: Path) -> tuple[list[ProjectFile], bool]:
    """The project's text files (binary and big ones left out), in a stable order, and
    whether there were more than MAX_FILES_SCANNED."""
    found: list[ProjectFile] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        base = os.path.relpath(folder, root)
        for name in sorted(names):
            if len(found) >= MAX_FILES_SCANNED:
                return found, True
            relative = name if base == "." else f"{base}/{name}"
            text = _small_text(Path(folder) / name)
            if text is not None:
                found.append(ProjectFile(relative.replace(os.sep, "/"), text))
    return found, False


def _small_text(path: Path) -> str | None:
    try:
        if path.is_symlink() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:4096]:
        return None
    return data.decode("utf-8", errors="replace")


def mentioned(name: str, request: str) -> bool:
    """Whether `request` holds `name` as a token of its own (not inside a longer name)."""
    pattern = rf"(?<![\w./-]){re.escape(name)}(?![\w-]|\.\w)"
    return re.search(pattern, request, re.I if "." in name else 0) is not None


def named_files(files: Sequence[ProjectFile], request: str) -> list[ProjectFile]:
    """The files whose path, or whose name when no other file has it, the request holds."""
    names: dict[str, int] = {}
    for file in files:
        base = file.path.rsplit("/", 1)[-1]
        names[base] = names.get(base, 0) + 1
    named = []
    for file in files:
        base = file.path.rsplit("/", 1)[-1]
        if mentioned(file.path, request) or (names[base] == 1 and mentioned(base, request)):
            named.append(file)
    return named


def distinctive(name: str) -> bool:
    """Whether a name the project defines is shaped like code, not like a word of prose
    (`calc_ttl`, `LedgerReconciler`, `MAX_SIZE`, `sha256`, not `list` or `project`): only such
    a name, found in a request, is worth a search of the project. The name's shape decides,
    never the words around it."""
    return len(name) > 2 and (not name.isalpha() or not name.islower())


def defined_names(files: Sequence[ProjectFile]) -> dict[str, list[tuple[str, int]]]:
    """Each name the project defines -> where ((path, line) for each definition)."""
    found: dict[str, list[tuple[str, int]]] = {}
    for file in files:
        for match in _DEFINITION.finditer(file.text):
            name = next(g for g in match.groups() if g)
            line = file.text.count("\n", 0, match.start()) + 1
            found.setdefault(name, []).append((file.path, line))
    return found
