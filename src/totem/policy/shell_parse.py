"""A bash line split into its simple commands, for permission matching and the exec policy.

`split_commands("cd src && sudo rm -rf build | tee log")` gives
`["cd src", "sudo rm -rf build", "rm -rf build", "tee log"]`: pipes, `&&`, `||`, `;`, `&`,
newlines, subshells, `$( )`, backticks and `<( )` all separate commands, and wrappers
(`env VAR=x`, `sudo`, `timeout N`, `nice`, `nohup`, `xargs`, `bash -c '...'`, `eval`) are
unwrapped so that the command they run is the one matched. Words are unquoted (`r''m` is
`rm`), so quoting cannot hide a command from a pattern. This is a best effort for matching,
not a bash parser: variables and aliases are not expanded.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field

__all__ = ["forbidden", "split_commands"]

_SPACE = " \t"
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
_LEADING_KEYWORDS = {"{", "}", "!", "then", "do", "else", "elif", "if", "while", "until", "time"}
_CLOSING_KEYWORDS = {"fi", "done", "esac", "}", "in"}
_HEADER_KEYWORDS = {"for", "select", "case", "function"}
_SHELLS = {"bash", "sh", "zsh", "dash", "ksh"}
_MAX_DEPTH = 8


@dataclass
class _Scan:
    """The words of each simple command of a line, and the scripts nested inside it."""

    text: str
    pos: int = 0
    commands: list[list[str]] = field(default_factory=list)
    nested: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    word: str = ""
    in_word: bool = False
    heredocs: list[tuple[str, bool, bool]] = field(default_factory=list)  # strip tabs? expand?
    heredoc_next: bool | None = None  # the next word is a heredoc delimiter (strip tabs?)
    quoted: bool = False  # the word being read has quotes or a backslash in it

    def end_word(self) -> None:
        if self.in_word:
            if self.heredoc_next is not None:
                self.heredocs.append((self.word, self.heredoc_next, not self.quoted))
                self.heredoc_next = None
            self.words.append(self.word)
        self.word, self.in_word, self.quoted = "", False, False

    def end_command(self) -> None:
        self.end_word()
        if self.words:
            self.commands.append(self.words)
        self.words = []

    def add(self, text: str) -> None:
        self.word += text
        self.in_word = True


def _matching(text: str, start: int, opener: str, closer: str) -> int:
    """Index just past the `closer` that balances the `opener` before `start`."""
    depth, i = 1, start
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            end = text.find("'", i + 1)
            i = len(text) if end < 0 else end + 1
            continue
        if c == '"':
            i = _double_quoted_end(text, i + 1)
            continue
        if c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def _double_quoted_end(text: str, start: int) -> int:
    i = start
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
        elif c == '"':
            return i + 1
        elif text.startswith("$(", i):
            i = _matching(text, i + 2, "(", ")")
        elif c == "`":
            i = _backtick_end(text, i + 1)
        else:
            i += 1
    return len(text)


def _backtick_end(text: str, start: int) -> int:
    i = start
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == "`":
            return i + 1
        else:
            i += 1
    return len(text)


def substitutions(text: str) -> list[str]:
    """The scripts of the `$( )` and backticks in text that bash expands (a heredoc's body,
    a `${ }` or `$(( ))`): they run as commands of their own."""
    inner = _Scan(text)
    while inner.pos < len(text):
        c = text[inner.pos]
        if c == "\\":
            inner.pos += 2
        elif c == "$":
            _dollar(inner)
        elif c == "`":
            _backtick(inner)
        else:
            inner.pos += 1
    return inner.nested


def _dollar(scan: _Scan) -> None:
    """`$(...)`, `$((...))`, `${...}` or a plain `$` at scan.pos."""
    text, i = scan.text, scan.pos
    if text.startswith("$((", i):
        end = _matching(text, i + 3, "(", ")")
        end = min(len(text), end + 1) if text.startswith(")", end) else end
        scan.nested.extend(substitutions(text[i + 3 : end]))
        scan.add(text[i:end])
    elif text.startswith("$(", i):
        end = _matching(text, i + 2, "(", ")")
        scan.nested.append(text[i + 2 : end - 1])
        scan.add(text[i:end])
    elif text.startswith("${", i):
        end = _matching(text, i + 2, "{", "}")
        scan.nested.extend(substitutions(text[i + 2 : end - 1]))
        scan.add(text[i:end])
    else:
        end = i + 1
        scan.add("$")
    scan.pos = end


def _backtick(scan: _Scan) -> None:
    end = _backtick_end(scan.text, scan.pos + 1)
    scan.nested.append(scan.text[scan.pos + 1 : end - 1].replace("\\`", "`"))
    scan.add(scan.text[scan.pos : end])
    scan.pos = end


def _double_quotes(scan: _Scan) -> None:
    text = scan.text
    scan.pos += 1
    scan.in_word = scan.quoted = True
    while scan.pos < len(text):
        c = text[scan.pos]
        if c == '"':
            scan.pos += 1
            return
        if c == "\\" and scan.pos + 1 < len(text):
            following = text[scan.pos + 1]
            if following == "\n":
                pass
            elif following in '$`"\\':
                scan.add(following)
            else:
                scan.add(c + following)
            scan.pos += 2
        elif c == "$":
            _dollar(scan)
        elif c == "`":
            _backtick(scan)
        else:
            scan.add(c)
            scan.pos += 1


def _redirection(scan: _Scan) -> None:
    """`>`, `>>`, `2>&1`, `&>`, `<`, `<<EOF`, `<<<` ...: kept as a word of the command."""
    text, i = scan.text, scan.pos
    match = re.compile(r"&>>?|<<<|<<-?|<>|<&-?|>&-?|>>|>\||[<>]").match(text, i)
    assert match is not None
    op = match.group()
    end = match.end()
    if op in (">&", "<&"):
        digits = re.compile(r"\d+-?").match(text, end)
        if digits:
            op, end = op + digits.group(), digits.end()
    prefix = ""
    if scan.in_word and scan.word.isdigit():
        prefix, scan.word, scan.in_word = scan.word, "", False
    scan.end_word()
    scan.words.append(prefix + op)
    if op in ("<<", "<<-"):
        scan.heredoc_next = op == "<<-"
    scan.pos = end


def _skip_heredocs(scan: _Scan) -> None:
    """After a newline: skip the bodies of the heredocs opened on the line just ended, keeping
    the substitutions of those whose delimiter is not quoted (bash runs them)."""
    text = scan.text
    for delimiter, strip_tabs, expands in scan.heredocs:
        start = body_end = scan.pos
        while scan.pos < len(text):
            line_start = scan.pos
            end = text.find("\n", scan.pos)
            end = len(text) if end < 0 else end
            line = text[scan.pos : end]
            scan.pos = body_end = end + 1
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                body_end = line_start
                break
        if expands:
            scan.nested.extend(substitutions(text[start:body_end]))
    scan.heredocs = []


def _scan(text: str) -> _Scan:
    scan = _Scan(text)
    while scan.pos < len(text):
        c = text[scan.pos]
        two = text[scan.pos : scan.pos + 2]
        if c in _SPACE:
            scan.end_word()
            scan.pos += 1
        elif c == "\n":
            scan.end_command()
            scan.pos += 1
            _skip_heredocs(scan)
        elif c == "#" and not scan.in_word:
            end = text.find("\n", scan.pos)
            scan.pos = len(text) if end < 0 else end
        elif c == "\\":
            if text[scan.pos + 1 : scan.pos + 2] != "\n":
                scan.add(text[scan.pos + 1 : scan.pos + 2])
                scan.quoted = True
            scan.pos += 2
        elif c == "'":
            end = text.find("'", scan.pos + 1)
            end = len(text) if end < 0 else end
            scan.add(text[scan.pos + 1 : end])
            scan.quoted = True
            scan.pos = end + 1
        elif c == '"':
            _double_quotes(scan)
        elif c == "$":
            _dollar(scan)
        elif c == "`":
            _backtick(scan)
        elif two in ("<(", ">(") and not scan.in_word:
            end = _matching(text, scan.pos + 2, "(", ")")
            scan.nested.append(text[scan.pos + 2 : end - 1])
            scan.add(text[scan.pos : end])
            scan.pos = end
        elif two == "&>" or c in "<>":
            _redirection(scan)
        elif c in ";&|()":
            scan.end_command()
            scan.pos += 2 if two in ("&&", "||", "|&", ";;") else 1
        else:
            scan.add(c)
            scan.pos += 1
    scan.end_command()
    return scan


def _skip_options(words: list[str], with_value: set[str]) -> list[str]:
    """Drop leading options (and the values of those in `with_value`)."""
    i = 0
    while i < len(words) and words[i].startswith("-") and words[i] != "-":
        if words[i] == "--":
            return words[i + 1 :]
        i += 2 if words[i] in with_value else 1
    return words[i:]


def _unwrap(words: list[str]) -> tuple[list[str], list[str]]:
    """The words of the command a wrapper runs, and scripts passed as text (`bash -c`)."""
    while words and (_ASSIGNMENT.match(words[0]) or words[0] in _LEADING_KEYWORDS):
        words = words[1:]
    if not words:
        return [], []
    head, rest = os.path.basename(words[0]), words[1:]
    if head == "env":
        rest = _skip_options(rest, {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"})
        return _unwrap(rest)
    if head in ("sudo", "doas"):
        with_value = {"-u", "-g", "-p", "-C", "-D", "-h", "-r", "-t", "-U", "-T", "-c"}
        return _unwrap(_skip_options(rest, with_value))
    if head == "timeout":
        rest = _skip_options(rest, {"-s", "--signal", "-k", "--kill-after"})
        return _unwrap(rest[1:])
    if head == "nice":
        if rest and re.fullmatch(r"-\d+", rest[0]):
            rest = rest[1:]
        return _unwrap(_skip_options(rest, {"-n", "--adjustment"}))
    if head in ("nohup", "exec", "builtin", "stdbuf") or (
        head == "command" and not set(rest[:1]) & {"-v", "-V"}
    ):
        return _unwrap(_skip_options(rest, {"-o", "-e", "-i", "-a"}))
    if head == "xargs":
        with_value = {"-n", "-I", "-i", "-P", "-d", "-L", "-l", "-s", "-E", "-e", "-a"}
        inner = _skip_options(rest, with_value)
        return _unwrap(inner) if inner else (words, [])
    if head == "eval":
        return [], [" ".join(rest)]
    if head in _SHELLS:
        for i, word in enumerate(rest):
            if not word.startswith("-"):
                break
            if "c" in word.lstrip("-") and not word.startswith("--") and i + 1 < len(rest):
                return [], [rest[i + 1]]
    return words, []


def _split(line: str, depth: int) -> list[str]:
    if depth > _MAX_DEPTH:
        return [line.strip()] if line.strip() else []
    scan = _scan(line)
    commands: list[str] = []
    for words in scan.commands:
        if words[0] in _CLOSING_KEYWORDS or words[0] in _HEADER_KEYWORDS:
            continue
        inner, scripts = _unwrap(words)
        stripped = words
        while stripped and stripped[0] in _LEADING_KEYWORDS:
            stripped = stripped[1:]
        head = os.path.basename(stripped[0]) if stripped else ""
        if head in ("sudo", "doas"):
            commands.append(" ".join(stripped))
        if inner:
            commands.append(" ".join(inner))
        for script in scripts:
            commands.extend(_split(script, depth + 1))
    for script in scan.nested:
        commands.extend(_split(script, depth + 1))
    unique: list[str] = []
    for command in commands:
        if command and command not in unique:
            unique.append(command)
    return unique


def split_commands(line: str) -> list[str]:
    """The simple commands of a bash line, unquoted and unwrapped, each once.

    Commands come in the order written; those nested in `$( )`, backticks or `<( )` follow
    the commands of the line they appear in.
    """
    return _split(line, 0)


def _forms(command: str) -> list[str]:
    """A command as matched: as written, and with a path to the program cut to its name."""
    words = command.split(" ")
    forms = [command]
    if "/" in words[0]:
        forms.append(" ".join([os.path.basename(words[0]), *words[1:]]))
    return forms


def forbidden(commands: list[str], patterns: list[str]) -> str | None:
    """A message for the model when a command matches a forbidden pattern; None otherwise.

    Patterns are fnmatch-style (`rm -rf /*`, `git push *`); `git push *` also forbids a bare
    `git push`, and `/bin/rm` counts as `rm`.
    """
    for command in commands:
        for pattern in patterns:
            pattern = " ".join(pattern.split())
            bare = pattern[:-2] if pattern.endswith(" *") else None
            for form in _forms(command):
                if fnmatch.fnmatchcase(form, pattern) or form == bare:
                    return (
                        f"Refused: `{command}` "
                        f"matches `{pattern}`, which the user's settings forbid. Do not run it "
                        "or a variant of it; do the task another way or ask the user."
                    )
    return None
