"""After a Python file is written: its syntax errors and the names it uses but never defines.

What a language server tells Claude Code or OpenCode after an edit, for the one language
whose checker ships with Python: `ast` for the syntax, `symtable` for the names (the
compiler's own scoping rules). A model that used `json` without importing it, or left a
bracket open, reads it in the tool's result and can fix it at once. Files with a star
import are not checked for names (anything may come from it).
"""

from __future__ import annotations

import ast
import builtins
import symtable
from collections.abc import Iterator
from pathlib import Path

from totem.tools.base import ToolContext

__all__ = ["breaks_python", "python_check", "python_problems"]

MAX_NAMES = 3
MAX_BYTES = 1_000_000
_MODULE_NAMES = frozenset({"__file__", "__name__", "__doc__", "__spec__", "__loader__",
                           "__package__", "__builtins__", "__path__", "__annotations__",
                           "__dict__", "__class__"})


def _tables(table: symtable.SymbolTable) -> Iterator[symtable.SymbolTable]:
    yield table
    for child in table.get_children():
        yield from _tables(child)


def _defined_globally(top: symtable.SymbolTable) -> set[str]:
    """Names bound at module level, or declared global and bound in a function."""
    defined = {s.get_name() for s in top.get_symbols()
               if s.is_assigned() or s.is_imported() or s.is_namespace()}
    for table in _tables(top):
        for symbol in table.get_symbols():
            if symbol.is_declared_global() and symbol.is_assigned():
                defined.add(symbol.get_name())
    return defined


def _undefined(source: str, filename: str) -> list[str]:
    top = symtable.symtable(source, filename, "exec")
    known = _defined_globally(top) | set(dir(builtins)) | _MODULE_NAMES
    missing: list[str] = []
    for table in _tables(top):
        for symbol in table.get_symbols():
            name = symbol.get_name()
            if (symbol.is_referenced() and symbol.is_global() and name not in known
                    and name not in missing):
                missing.append(name)
    return missing


def _first_use(tree: ast.AST, name: str) -> int | None:
    lines = [n.lineno for n in ast.walk(tree)
             if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return min(lines) if lines else None


def python_problems(source: str, *, filename: str) -> list[str]:
    """The problems of one Python source: a syntax error, else its undefined names."""
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as exc:
        return [f"line {exc.lineno}: SyntaxError: {exc.msg}"]
    if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
           for n in ast.walk(tree)):
        return []
    problems = []
    for name in _undefined(source, filename)[:MAX_NAMES]:
        line = _first_use(tree, name)
        where = f"line {line}: " if line else ""
        problems.append(f"{where}name '{name}' is not defined (a missing import or definition?)")
    return problems


def python_check(ctx: ToolContext, path: Path) -> str:
    """The after-write hook: the problems of a Python file just written, as a note."""
    if path.suffix != ".py":
        return ""
    try:
        if path.stat().st_size > MAX_BYTES:
            return ""
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    problems = python_problems(source, filename=path.name)
    if not problems:
        return ""
    relative = ctx.relative(path)
    return "\n\n[Check of " + relative + ": " + "; ".join(problems) + "]"


def breaks_python(path: Path, before: str, after: str) -> str | None:
    """The syntax error a change would bring into a Python file that had none, with the line
    as the change would leave it (what a model needs to see what it did), or None."""
    if path.suffix != ".py":
        return None
    try:
        ast.parse(before)
    except SyntaxError:
        return None  # it was broken before: not this change's doing
    try:
        ast.parse(after)
    except SyntaxError as exc:
        said = f"line {exc.lineno}: SyntaxError: {exc.msg}"
        lines = after.splitlines()
        if exc.lineno and 0 < exc.lineno <= len(lines) and lines[exc.lineno - 1].strip():
            said += f"; line {exc.lineno} would read: {lines[exc.lineno - 1].strip()[:160]}"
        return said
    return None
