"""Whether a project file is a stub: code whose bodies are still to be written.

A file is a stub when it is blank, or when it is Python and one of its functions has a body
of nothing but a docstring, `pass`, `...` or `raise NotImplementedError` (Exercism's stubs,
scaffolds, a class whose methods are to be filled in). A stub is written whole: the 1.5B,
given edit on one, inserted new methods above the `pass` ones, which then overrode them.
A file with real bodies is changed with edit: given only write, the 1.5B rewrote a 6-line
module as the one new function, and later with the read's line numbers in it.

This reads the project's file, never the request.
"""

from __future__ import annotations

import ast

__all__ = ["is_stub"]


def _placeholder(statement: ast.stmt) -> bool:
    """`pass`, `...`, a docstring, or `raise NotImplementedError(...)`."""
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return statement.value.value is Ellipsis or isinstance(statement.value.value, str)
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"
    return False


def is_stub(path: str, text: str) -> bool:
    """Whether the file at `path` with `text` is blank, or Python with a placeholder body."""
    if not text.strip():
        return True
    if not path.endswith(".py"):
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
               and all(_placeholder(s) for s in node.body)
               for node in ast.walk(tree))
