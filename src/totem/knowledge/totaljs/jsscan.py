"""A JavaScript source split into code, comments and strings, line by line, for the
conventions check: enough of a tokenizer to know what is code, not a parser.

    Scanned.code[i]     line i+1 with comments blanked (strings kept)
    Scanned.bare[i]     line i+1 with comments and the contents of strings, template
                        literals and regular expressions blanked (their quotes kept)
    Scanned.strings     (line, quote, content) of every string literal ('...', "...", `...`)
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Scanned", "scan"]

_REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^")
_REGEX_KEYWORDS = {"return", "typeof", "case", "do", "else", "in", "of", "void", "throw",
                   "new", "delete", "instanceof", "yield", "await"}


@dataclass(slots=True)
class Scanned:
    code: list[str] = field(default_factory=list)
    bare: list[str] = field(default_factory=list)
    strings: list[tuple[int, str, str]] = field(default_factory=list)


@dataclass(slots=True)
class _State:
    mode: str = "code"  # code | line | block | string | regex
    quote: str = ""
    start: int = 1  # the line where the current string began
    text: list[str] = field(default_factory=list)  # the current string's content
    prev: str = ""  # the last significant character of code
    word: str = ""  # the identifier that ends at `prev`, if any
    gap: bool = False  # whitespace since `prev`
    in_class: bool = False  # inside [...] of a regular expression


def _regex_may_start(state: _State) -> bool:
    if state.prev == "" or state.prev in _REGEX_AFTER:
        return True
    return bool(state.word) and state.word in _REGEX_KEYWORDS


def scan(text: str) -> Scanned:
    out = Scanned()
    code: list[str] = []
    bare: list[str] = []
    state = _State()
    line = 1
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "\n":
            out.code.append("".join(code).rstrip("\r"))
            out.bare.append("".join(bare).rstrip("\r"))
            code, bare = [], []
            line += 1
            if state.mode == "string" and state.quote != "`":
                _end_string(out, state)  # an unterminated string ends with its line
            elif state.mode == "string":
                state.text.append(c)
            elif state.mode in ("line", "regex"):
                state.mode = "code"
            state.gap = True
            i += 1
            continue
        step = 1
        if state.mode == "code":
            if c == "/" and nxt in "/*":
                state.mode = "line" if nxt == "/" else "block"
                code.append("  ")
                bare.append("  ")
                step = 2
            elif c in "'\"`":
                state.mode, state.quote, state.start, state.text = "string", c, line, []
                code.append(c)
                bare.append(c)
            elif c == "/" and _regex_may_start(state):
                state.mode, state.in_class = "regex", False
                code.append(c)
                bare.append(c)
            else:
                code.append(c)
                bare.append(c)
                _significant(state, c)
        elif state.mode == "line":
            code.append(" ")
            bare.append(" ")
        elif state.mode == "block":
            if c == "*" and nxt == "/":
                state.mode = "code"
                code.append("  ")
                bare.append("  ")
                step = 2
            else:
                code.append(" ")
                bare.append(" ")
        elif state.mode == "string":
            if c == "\\" and nxt and nxt != "\n":
                code.append(c + nxt)
                bare.append("  ")
                state.text.append(c + nxt)
                step = 2
            elif c == state.quote:
                code.append(c)
                bare.append(c)
                _end_string(out, state)
                state.prev, state.word, state.gap = ")", "", False  # a string is a value
            else:
                code.append(c)
                bare.append(" ")
                state.text.append(c)
        else:  # regex
            if c == "\\" and nxt and nxt != "\n":
                code.append(c + nxt)
                bare.append("  ")
                step = 2
            else:
                if c == "[":
                    state.in_class = True
                elif c == "]":
                    state.in_class = False
                elif c == "/" and not state.in_class:
                    state.mode, state.prev, state.word, state.gap = "code", ")", "", False
                code.append(c)
                bare.append(c if state.mode == "code" else " ")
        i += step
    out.code.append("".join(code).rstrip("\r"))
    out.bare.append("".join(bare).rstrip("\r"))
    if state.mode == "string":
        _end_string(out, state)
    return out


def _end_string(out: Scanned, state: _State) -> None:
    out.strings.append((state.start, state.quote, "".join(state.text)))
    state.mode, state.text = "code", []


def _identifier(c: str) -> bool:
    return c.isalnum() or c in "_$"


def _significant(state: _State, c: str) -> None:
    if c.isspace():
        state.gap = True
        return
    if _identifier(c):
        joined = _identifier(state.prev) and not state.gap and state.word
        state.word = state.word + c if joined else c
    else:
        state.word = ""
    state.prev, state.gap = c, False
