"""Code a small model wrote in its answer instead of calling a tool, made into edit calls.

Asked to "add a function clamp(value, low, high) to mathx.py", the 0.5B coder sent the same
edit three times with old_string equal to new_string, and then answered with the function,
correct, in a fenced block: what Aider asks every model for. When the run changed nothing,
the request asks for a change of one Python file it names, and the answer holds a block
that parses and defines a function or class the request names (or that the file defines
already), each definition becomes an `edit` call: the file's own definition of that name
replaced by the new one, or the new one added at the end; imports go through edit too (to
the top, see tools/edit_intent.py). The calls are made like the model's own: asked, shown,
checked. Anything less clear is left alone, and the usual nudges follow.
"""

from __future__ import annotations

import ast
import re  # compiled on first use (re caches them), not at start-up
from pathlib import Path

from totem.run.read_ahead import AheadCall

__all__ = ["calls_from_answer"]

_FENCE = r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```"
_PATH = r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.py)\b"
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _target(root: Path, request: str) -> Path | None:
    """The one existing Python file the request names."""
    named = {m.group(1) for m in re.finditer(_PATH, request)}
    found = [root / n for n in named if (root / n).is_file()]
    return found[0] if len(found) == 1 else None


def _blocks(answer: str) -> list[str]:
    return [body for kind, body in re.findall(_FENCE, answer, re.S)
            if kind.lower() in ("", "python", "py", "python3")]


def _source(lines: list[str], node: ast.stmt) -> str:
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    end = node.end_lineno or node.lineno
    return "\n".join(lines[start - 1:end])


def _definitions(tree: ast.Module) -> dict[str, ast.stmt]:
    return {n.name: n for n in tree.body if isinstance(n, _DEFINITIONS)}


def _calls_for(block: str, *, file: str, existing: str, request: str) -> list[AheadCall]:
    try:
        new_tree, old_tree = ast.parse(block), ast.parse(existing)
    except SyntaxError:
        return []
    if not all(isinstance(n, (*_DEFINITIONS, ast.Import, ast.ImportFrom)) for n in new_tree.body):
        return []
    new_lines, old_lines = block.split("\n"), existing.split("\n")
    old_defs = _definitions(old_tree)
    asked = set(re.findall(r"[A-Za-z_]\w*", request))
    calls: list[AheadCall] = []
    for node in new_tree.body:
        text = _source(new_lines, node)
        if isinstance(node, ast.Import | ast.ImportFrom):
            calls.append(AheadCall("edit", {"path": file, "old_string": "", "new_string": text}))
            continue
        assert isinstance(node, _DEFINITIONS)
        before = old_defs.get(node.name)
        if before is not None:
            old_text = _source(old_lines, before)
            if old_text.strip() != text.strip() and existing.count(old_text) == 1:
                calls.append(AheadCall("edit", {"path": file, "old_string": old_text,
                                                "new_string": text}))
        elif node.name in asked:
            calls.append(AheadCall("edit", {"path": file, "old_string": "",
                                            "new_string": text}))
    if not any(c.args["old_string"] or not str(c.args["new_string"]).startswith(("import", "from"))
               for c in calls):
        return []  # imports alone, or nothing new: not what the answer is about
    return calls


def calls_from_answer(answer: str, *, request: str, root: Path) -> list[AheadCall]:
    """The edit calls the answer's code stands for, or [] when it is not clear."""
    target = _target(root, request)
    if target is None:
        return []
    try:
        existing = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    file = target.relative_to(root).as_posix()
    for block in _blocks(answer):
        calls = _calls_for(block, file=file, existing=existing, request=request)
        if calls:
            return calls
    return []
