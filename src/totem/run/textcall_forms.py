"""The tool-call shapes small models write besides JSON: XML elements and `name(args)` calls.

    <tools><bash command="rm old_backup.py" timeout="10"/></tools>     attributes
    <read><path>a.py</path></read>                                      child elements
    <function=read><parameter=path>a.py</parameter></function>          Qwen3-Coder's form
    read(path="a.py")   bash("ls")                                      a call, alone on its line

An element counts only when it is named after a known tool and carries at least one argument
the tool has; a `name(args)` call only when the whole text is such calls (prose that mentions
a tool stays prose). Positional values go to the tool's arguments in order.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["Params", "calls_in_python", "calls_in_xml"]

Params = Mapping[str, Sequence[str]]  # tool name -> its argument names, required first

_ATTR = re.compile(r"""([A-Za-z_][\w-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_CHILD = re.compile(r"<([A-Za-z_][\w-]*)\s*>(.*?)</\1\s*>", re.S)
_QWEN_FUNCTION = re.compile(r"<function=([\w.-]+)>(.*?)(?:</function>|$)", re.S)
_QWEN_PARAMETER = re.compile(r"<parameter=([\w-]+)>\n?(.*?)\n?</parameter>", re.S)
_FENCE = re.compile(r"^```[a-zA-Z_]*\s*\n?(.*?)\n?```$", re.S)


def _element(name: str) -> re.Pattern[str]:
    tag = re.escape(name)
    attrs = r"""((?:\s+[A-Za-z_][\w-]*\s*=\s*(?:"[^"]*"|'[^']*'))*)"""
    return re.compile(rf"<{tag}{attrs}\s*(?:/>|>(.*?)</{tag}\s*>)", re.S)


def _value(text: str) -> str:
    return html.unescape(text.strip("\n"))


def _element_args(attrs: str, body: str | None, names: Sequence[str]) -> dict[str, Any] | None:
    args: dict[str, Any] = {}
    for match in _ATTR.finditer(attrs):
        args[match.group(1)] = _value(match.group(2) if match.group(2) is not None
                                      else match.group(3))
    if body:
        children = {m.group(1): _value(m.group(2)) for m in _CHILD.finditer(body)}
        if children:
            args.update(children)
        else:  # <bash>ls</bash>, <write path="a.txt">text</write>: the first one missing
            missing = [n for n in names if n not in args]
            if missing and body.strip():
                args[missing[0]] = _value(body)
    if not any(key in names for key in args):
        return None
    return {k: v for k, v in args.items() if k in names}


def calls_in_xml(text: str, params: Params) -> list[tuple[str, dict[str, Any]]]:
    """Tool calls written as XML elements named after known tools, in the text's order."""
    found: list[tuple[int, str, dict[str, Any]]] = []
    for match in _QWEN_FUNCTION.finditer(text):
        name = match.group(1)
        if name in params:
            given = {m.group(1): _value(m.group(2))
                     for m in _QWEN_PARAMETER.finditer(match.group(2))}
            found.append((match.start(), name, dict(given)))
    if found:
        return [(name, args) for _, name, args in found]
    for name, names in params.items():
        for match in _element(name).finditer(text):
            parsed = _element_args(match.group(1) or "", match.group(2), names)
            if parsed is not None:
                found.append((match.start(), name, parsed))
    return [(name, args) for _, name, args in sorted(found, key=lambda f: f[0])]


def _literal_call(line: str, params: Params) -> tuple[str, dict[str, Any]] | None:
    import ast

    try:
        node = ast.parse(line, mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in params):
        return None
    names = params[node.func.id]
    try:
        positional = [ast.literal_eval(a) for a in node.args]
        named = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    except ValueError:
        return None
    if len(positional) > len(names) or len(named) != len(node.keywords):
        return None
    args = dict(zip(names, positional, strict=False))
    args.update(named)
    return node.func.id, args


def calls_in_python(text: str, params: Params) -> list[tuple[str, dict[str, Any]]]:
    """`read(path="a.py")` calls, when the text (unfenced, unquoted) is nothing else."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    calls = []
    for line in body.splitlines():
        line = line.strip().strip("`").strip()
        if not line:
            continue
        call = _literal_call(line, params)
        if call is None:
            return []
        calls.append(call)
    return calls
