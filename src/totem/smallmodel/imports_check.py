"""Names a changed Python module no longer gives to the project's files that import them.

After an edit or a write of `pkg/mod.py`, every other Python file of the project that says
`from pkg.mod import a, b` (or `from mod import ...` beside it) is read with `ast`, and the
names it imports that the module no longer defines are reported: the 1.5B, asked to write
`abbreviate` in acronym.py, renamed it to `create_acronym`, and the tests that import
`abbreviate` could no longer run. What the project's own files import is a fact of the
project, found in any wording and any language of the request.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

from totem.smallmodel.project import ProjectFile

__all__ = ["missing_imports"]


def _module_names(path: str) -> set[str]:
    """The dotted names `path` may be imported by: `a/b/c.py` as `a.b.c`, `b.c` and `c`."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return {".".join(parts[i:]) for i in range(len(parts))} if parts else set()


def _defined(tree: ast.Module) -> set[str] | None:
    """What a module gives to `from it import x`: its top-level definitions, assignments and
    imports; None when it imports with `*` or sets `__getattr__` (anything may be there)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return None
                names.add((alias.asname or alias.name).split(".")[0])
    return None if "__getattr__" in names else names


def _imported_from(tree: ast.Module, modules: set[str]) -> Iterable[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in modules and not node.level:
            yield from (alias.name for alias in node.names if alias.name != "*")


def _parsed(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def missing_imports(changed: str, text: str,
                    files: Sequence[ProjectFile]) -> list[tuple[str, str]]:
    """(importing file, name) for each name another file imports from `changed` (now
    `text`) that it no longer defines; nothing when either does not parse."""
    if not changed.endswith(".py"):
        return []
    tree = _parsed(text)
    defined = _defined(tree) if tree is not None else None
    if defined is None:
        return []
    modules = _module_names(changed)
    found: list[tuple[str, str]] = []
    for file in files:
        if file.path == changed or not file.path.endswith(".py"):
            continue
        other = _parsed(file.text)
        if other is None:
            continue
        for name in dict.fromkeys(_imported_from(other, modules)):
            if name not in defined:
                found.append((file.path, name))
    return found
