"""Code a small model wrote in its answer instead of calling a tool, made into edit calls.

(And the content of a file the request asks to create, given in the answer as a fenced block
or as `echo "..." > FILE` in a shell block, made into a write call.)

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


_ECHO = r"""^\s*echo\s+(?:-e\s+)?(["'])(.*?)\1\s*(>>?)\s*(\S+)\s*$"""
_SHELL = ("bash", "sh", "shell", "console", "zsh")
_KINDS = {".md": ("md", "markdown"), ".txt": ("txt", "text"), ".py": ("python", "py"),
          ".json": ("json",), ".yaml": ("yaml", "yml"), ".yml": ("yaml", "yml"),
          ".toml": ("toml",), ".ini": ("ini",), ".cfg": ("ini", "cfg")}


def _echoed(body: str, name: str) -> str | None:
    """The text a shell block's `echo "..." > name` (and `>> name`) lines put in the file."""
    lines = []
    for line in body.splitlines():
        found = re.match(_ECHO, line)
        if found and found.group(4).strip("'\"") == name:
            lines.append(found.group(2))
    return "\n".join(lines) + "\n" if lines else None


def _new_file(answer: str, name: str) -> str | None:
    """The content the answer gives for the new file `name`: echoed into it by a shell
    block, or a block of the file's kind (or of no stated kind)."""
    kinds = _KINDS.get(Path(name).suffix.lower(), ())
    blocks: list[tuple[str, str]] = re.findall(_FENCE, answer, re.S)
    for kind, body in blocks:
        kind = kind.lower()
        if kind in _SHELL:
            echoed = _echoed(body, name)
            if echoed is not None:
                return echoed
        elif body.strip() and (kind in kinds or not kind):
            return body if body.endswith("\n") else body + "\n"
    return None


def _creations(answer: str, *, request: str, root: Path) -> list[AheadCall]:
    from totem.run.request_state import files_to_create

    calls = []
    for name in files_to_create(request, root):
        content = _new_file(answer, name)
        if content is not None:
            calls.append(AheadCall("write", {"path": name, "content": content}))
    return calls


def calls_from_answer(answer: str, *, request: str, root: Path) -> list[AheadCall]:
    """The edit (or write) calls the answer's code stands for, or [] when it is not clear."""
    created = _creations(answer, request=request, root=root)
    if created:
        return created
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
