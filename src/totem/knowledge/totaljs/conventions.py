"""The Total.js conventions check: our own checker, written from the published Total.js
coding style (tabs, semicolons, single quotes, var first, classic for loops, lowercase file
names, `Namespace|action` ids, globals instead of require()). Each rule's id and message are
in conventions.json; the skill totaljs-conventions says the same in prose.

    check(path, text) -> list[Finding]      path relative to the project root

.js files get every JavaScript rule, .html files the whitespace rules plus the JavaScript
rules inside their inline <script> blocks, .css files the whitespace rules.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path, PurePath
from typing import Any

from totem.knowledge.base import Finding
from totem.knowledge.totaljs.jsscan import Scanned, scan

__all__ = ["check", "checked_file", "rules"]

HERE = Path(__file__).parent
APP_FOLDERS = {"controllers", "schemas", "definitions", "modules", "actions", "plugins"}
NODE_BUILTINS = {"fs", "path", "http", "https", "crypto", "os", "url", "util", "child_process",
                 "net", "zlib", "stream", "events", "querystring"}
_KEYWORD = r"(?:if|for|while|switch|catch|function|with|else|do|try|finally|case|default|class)"
_STATEMENT = re.compile(
    rf"^(?!{_KEYWORD}\b|async\s+function\b)(?:(?:var|let|const|return|throw|break|continue)\b"
    r"|(?:await\s+)?[\w$][\w$.]*(?:\[[^\]]*\])*\s*(?:[-+*/%]?=(?!=)|\+\+|--|\())"
)
_ASSIGNMENT = re.compile(
    r"^(?:(?:var|let|const)\s|return\b|(?:module\.)?exports\b.*=|"
    r"[\w$][\w$.]*(?:\[[^\]]*\])*\s*[-+*/%]?=(?!=))"
)
_OPEN_ENDINGS = tuple(";,{([+-*/%&|^!?:=<>.~\\")
_CONTINUES = tuple(".?:+-*/%&|^,)]{")
_ACTION_ID = re.compile(r"\bNEWACTION\(\s*(['\"`])(.*?)\1")
_SCHEMA_NAME = re.compile(r"\bNEWSCHEMA\(\s*(['\"`])(.*?)\1")
_GOOD_ACTION_ID = re.compile(r"[A-Z][A-Za-z0-9]*\|[a-z][\w/{}:-]*")
_GOOD_SCHEMA_NAME = re.compile(r"@?[A-Z][A-Za-z0-9]*(?:/[A-Za-z0-9]+)?")
_ACTION_START = re.compile(r"\bNEWACTION\(|\bschema\.action\(")
_CONTROLLER_RESPONSE = re.compile(r"\$\.(?:json|view|file|html|plain)\(")
_REQUIRE = re.compile(r"\brequire\(\s*['\"]([^'\"]+)['\"]\s*\)")
_SWING = re.compile(
    r"javax\.swing|java\.awt|\bextends\s+J(?:Component|Panel|Frame)\b|\bnew\s+J(?:Frame|Panel|"
    r"Button|Label|TextField)\b|\bpaintComponent\b|\bimport\s+java\."
)
_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.IGNORECASE | re.DOTALL)
_GOOD_NAME = re.compile(r"[a-z0-9@][a-z0-9.@-]*")


@functools.cache
def rules() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((HERE / "conventions.json").read_text(encoding="utf-8"))
    return data


def checked_file(path: PurePath) -> bool:
    """A .js, .html or .css file outside dependency, log and data folders; not minified."""
    data = rules()
    if path.suffix.lower() not in data["checked"] or re.search(r"\.min[.@]", path.name):
        return False
    return not set(path.parts[:-1]) & set(data["skipped_folders"])


def _finding(rule: str, line: int) -> Finding:
    return Finding(rule, line, rules()["rules"][rule]["message"])


def check(path: PurePath, text: str) -> list[Finding]:
    kind = path.suffix.lower().lstrip(".")
    findings = list(_file_name(path))
    lines = text.split("\n")
    findings += _whitespace(lines)
    if kind in ("js", "html"):
        findings += [_finding("not-swing", n) for n, line in enumerate(lines, 1)
                     if _SWING.search(line)]
    if kind == "js":
        findings += _javascript(scan(text), path, offset=0)
    elif kind == "html":
        for match in _SCRIPT.finditer(text):
            attributes = match.group(1).lower()
            if "src=" in attributes or ("type=" in attributes and "javascript" not in attributes
                                        and "module" not in attributes):
                continue
            offset = text.count("\n", 0, match.start(2))
            findings += _javascript(scan(match.group(2)), path, offset=offset)
    return findings


def _file_name(path: PurePath) -> Iterator[Finding]:
    if not _GOOD_NAME.fullmatch(path.name):
        yield _finding("file-name", 0)


def _whitespace(lines: list[str]) -> Iterator[Finding]:
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r")
        if line != line.rstrip():
            yield _finding("trailing-space", number)
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if " " in indent and line.strip() and not line.lstrip().startswith("*"):
            yield _finding("tabs", number)


def _javascript(source: Scanned, path: PurePath, *, offset: int) -> list[Finding]:
    found: list[Finding] = []
    for line, quote, content in source.strings:
        if quote == '"' and "'" not in content:
            found.append(_finding("quotes", line + offset))
    for number, (code, bare) in enumerate(zip(source.code, source.bare, strict=True), 1):
        where = number + offset
        if re.match(r"\s*const\s", bare) or re.search(r"\bfor\s*\(\s*const\s", bare):
            if bare[:1].isspace() or "require(" not in code:
                found.append(_finding("var", where))
        if ".forEach(" in bare:
            found.append(_finding("for-loop", where))
        found += _names(code, where)
        found += _requires(code, path, where)
    found += [_finding("semicolon", n + offset) for n in _missing_semicolons(source.bare)]
    found += [_finding("action-response", n + offset) for n in _action_responses(source.bare)]
    return found


def _names(code: str, where: int) -> Iterator[Finding]:
    for match in _ACTION_ID.finditer(code):
        if not _GOOD_ACTION_ID.fullmatch(match.group(2)):
            yield _finding("action-id", where)
    for match in _SCHEMA_NAME.finditer(code):
        if not _GOOD_SCHEMA_NAME.fullmatch(match.group(2)):
            yield _finding("action-id", where)


def _requires(code: str, path: PurePath, where: int) -> Iterator[Finding]:
    if len(path.parts) < 2 or path.parts[0] not in APP_FOLDERS:
        return
    for match in _REQUIRE.finditer(code):
        target = match.group(1)
        if target.startswith(".") or target.removeprefix("node:") in NODE_BUILTINS:
            yield _finding("require", where)


def _next_code(lines: list[str], index: int) -> str:
    for line in lines[index + 1:]:
        if line.strip():
            return line.strip()
    return ""


def _missing_semicolons(bare: list[str]) -> Iterator[int]:
    """Lines that end a statement without a semicolon: simple one-line statements, `}` that
    closes an assigned function or object, and `})` that closes a call."""
    stack: list[bool] = []  # for each open brace: whether it opened an assigned value
    for index, raw in enumerate(bare):
        line = raw.strip()
        if not line:
            continue
        following = _next_code(bare, index)
        continues = following.startswith(_CONTINUES)
        if line in ("}", "})") and not continues:
            assigned = stack[-1] if stack else False
            if line == "})" or assigned:
                yield index + 1
        elif (_STATEMENT.match(line) and _balanced(line) and not line.endswith(_OPEN_ENDINGS)
              and not continues):
            yield index + 1
        assigned_line = bool(_ASSIGNMENT.match(line))
        for position, char in enumerate(line):
            if char == "{":
                stack.append(assigned_line and position == len(line) - 1)
            elif char == "}" and stack:
                stack.pop()


def _balanced(line: str) -> bool:
    return all(line.count(a) == line.count(b) for a, b in ("()", "[]", "{}"))


def _action_responses(bare: list[str]) -> Iterator[int]:
    """Lines inside an action (NEWACTION or schema.action) that answer like a controller."""
    text = "\n".join(bare)
    for start in _ACTION_START.finditer(text):
        depth, end = 0, len(text)
        for position in range(start.end() - 1, len(text)):
            char = text[position]
            depth += (char == "(") - (char == ")")
            if depth == 0:
                end = position
                break
        for match in _CONTROLLER_RESPONSE.finditer(text, start.end(), end):
            yield text.count("\n", 0, match.start()) + 1
