"""How a model in constrained steps gives the text of a change: as plain text, never inside
JSON (Aider measured every model it tried scoring lower when its code came back as a JSON
string, "LLMs are bad at returning code in JSON", 2024-08-14).

One class per format, as Aider's `coders/`:

    WholeFile       the file's whole new text in one fenced block under its path
                    (Aider's `whole`, well-formed even on the 0.5B): for a new file or a
                    short one
    SearchReplace   SEARCH/REPLACE blocks (Aider's `diff`): for a long file, where writing
                    it whole would cost minutes and lose lines

`format_for(lines)` picks one from the file's length. Each format says what to ask for
(`ask`) and reads the model's reply back into calls of the project's own tools
(`read_reply`): `write` with the whole text, or one `edit` per block, so the change goes
through the same permission, sandbox, checkpoint, undo, diagnostics and write guard as any
other. A reply that cannot be read gives a plain reason instead, which becomes the call's
result. Parsing is tolerant, as Aider's is: a language tag or none, the path line or none,
prose before and after, a fence that is never closed, five to nine marker characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Protocol

from totem.fences import language_of

__all__ = [
    "WHOLE_FILE_LINES", "Call", "EditFormat", "SearchReplace", "Unreadable", "WholeFile",
    "format_for",
]

# A file of at most this many lines (or a new one) is written whole; a longer one is changed
# with SEARCH/REPLACE blocks. 120 lines are about 1,500 tokens: inside a small model's
# answer limit (2,048) with room to spare.
WHOLE_FILE_LINES = 120

_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w.+#/-]*)\s*$")
_SEARCH = re.compile(r"^\s*<{5,9}\s*(?:SEARCH|ORIGINAL)?\s*$")
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9}\s*(?:REPLACE|UPDATED)?\s*$")


@dataclass(frozen=True, slots=True)
class Call:
    """A call of one of the project's tools, read from the model's text."""

    name: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A reply that gives no change that can be made, and why, in words for the model."""

    reason: str


class EditFormat(Protocol):
    name: str

    def ask(self, path: str, *, exists: bool) -> str:
        """What the model is asked to write for a change of `path`."""
        ...

    def read_reply(self, reply: str, path: str, *, complete: bool) -> list[Call] | Unreadable:
        """The calls `reply` gives for `path`; `complete` False when it was cut short."""
        ...

    def finished(self, reply: str, path: str) -> bool:
        """Whether `reply`, still streaming, already holds all `read_reply` will take from
        it, whatever follows: the rest need not be generated."""
        ...


def _path_line(line: str, path: str) -> bool:
    """Whether `line` only names `path` (as `path`, `path:`, `# path`, **path**...)."""
    bare = line.strip().strip("`*#:").strip()
    return bool(bare) and (bare == path or bare == PurePosixPath(path).name
                           or bare.endswith("/" + path))


def _blocks(lines: list[str]) -> list[tuple[int, int | None]]:
    """The fenced blocks of `lines`: (index of the opening line, of the closing line or None
    when never closed). Inside a block, a fence with a language tag opens an inner one (a
    Markdown file's code) that a bare fence closes before the outer one."""
    found: list[tuple[int, int | None]] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        mark, depth, end = opening.group(1), 0, None
        for j in range(i + 1, len(lines)):
            inner = _FENCE.match(lines[j])
            if inner is None or inner.group(1)[0] != mark[0] or len(inner.group(1)) < len(mark):
                continue
            if inner.group(2):
                depth += 1
            elif depth:
                depth -= 1
            else:
                end = j
                break
        found.append((i, end))
        if end is None:
            break
        i = end + 1
    return found


def _unwrapped(body: list[str], path: str) -> list[str]:
    """A file's text that is itself one fenced block, without that fence, unless the file is
    Markdown (where a block may be the text): the 1.5B wrote notes.txt as "```text" /
    "```text" / "current notes" / "```" / "```", and the inner fence lines became the file."""
    if len(body) < 2 or language_of(path) == "markdown":
        return body
    if _FENCE.match(body[0]) is None or _blocks(body) != [(0, len(body) - 1)]:
        return body
    return _unwrapped(body[1:-1], path)


class WholeFile:
    """The whole new text of the file, in one fenced block under its path."""

    name = "whole"

    def ask(self, path: str, *, exists: bool) -> str:
        what = "the whole new text of" if exists else "the text of the new file"
        keeps = (" Give every line the file keeps, with your change in it: the file is "
                 "replaced by exactly what is in the block." if exists else "")
        tag = language_of(path)
        # said in words, with no stand-in for the text: shown "(the file's text)" between
        # the fences, the 1.5B wrote notes.txt as "(current notes)", 2 runs of 2
        return (f"Now write {what} {path} as plain text: first the line {path}, then the "
                f"line ```{tag}, then every line of the file, then the line ``` alone. "
                f"No line numbers, no JSON.{keeps}")

    def finished(self, reply: str, path: str) -> bool:
        """A closed block under the path: the one `read_reply` takes, as a closed block of
        the text so far is one of the whole text too. The 1.5B, after its block, wrote the
        block again and other files' blocks under the same path: 2,065 tokens, ~3 minutes
        of a CPU, for a one-line file."""
        lines = reply.splitlines()
        if not reply.endswith("\n"):
            lines = lines[:-1]  # the line still being written
        return any(end is not None and start > 0 and _path_line(lines[start - 1], path)
                   for start, end in _blocks(lines))

    def read_reply(self, reply: str, path: str, *, complete: bool) -> list[Call] | Unreadable:
        lines = reply.splitlines()
        blocks = _blocks(lines)
        if not blocks:
            return Unreadable(
                f"Nothing was written: the reply has no fenced block (a line of ``` before "
                f"the text of {path} and one after it).")
        chosen = next((b for b in blocks if b[0] > 0 and _path_line(lines[b[0] - 1], path)),
                      None)
        if chosen is None:  # no block under the path: the longest one
            chosen = max(blocks, key=lambda b: (b[1] if b[1] is not None else len(lines)) - b[0])
        start, end = chosen
        if end is None and not complete:
            return Unreadable(
                f"Nothing was written: the reply was cut off before the end of {path}'s "
                "block. Write the file again, whole and shorter if you can.")
        body = lines[start + 1:end if end is not None else len(lines)]
        if body and _path_line(body[0], path) and len(body) > 1:
            body = body[1:]  # the path repeated as the block's first line
        while body and not body[-1].strip():  # a blank line before the closing fence is
            body = body[:-1]                   # the model's spacing, not the file's end
        body = _unwrapped(body, path)
        content = "\n".join(body)
        return [Call("write", {"path": path, "content": content + "\n" if content else ""})]


class SearchReplace:
    """Changes as SEARCH/REPLACE blocks: lines copied exactly from the file, and the lines
    that take their place."""

    name = "search-replace"

    def finished(self, reply: str, path: str) -> bool:
        return False  # another block may follow

    def ask(self, path: str, *, exists: bool) -> str:
        if not exists:
            return WholeFile().ask(path, exists=False)
        return (f"Now write the change of {path} as plain text: one or more SEARCH/REPLACE "
                "blocks, like this:\n\n"
                f"{path}\n<<<<<<< SEARCH\n(lines copied exactly from the file, a few "
                "around the change)\n=======\n(the lines that take their place)\n"
                ">>>>>>> REPLACE\n\nNo line numbers, no JSON. Copy the SEARCH lines exactly "
                "as the file has them, spaces included.")

    def read_reply(self, reply: str, path: str, *, complete: bool) -> list[Call] | Unreadable:
        lines = reply.splitlines()
        calls: list[Call] = []
        i = 0
        while i < len(lines):
            if not _SEARCH.match(lines[i]):
                i += 1
                continue
            divider = next((j for j in range(i + 1, len(lines)) if _DIVIDER.match(lines[j])),
                           None)
            if divider is None:
                return Unreadable("Nothing was changed: a SEARCH block has no ======= line "
                                  "after its lines.")
            closing = next((j for j in range(divider + 1, len(lines))
                            if _REPLACE.match(lines[j])), None)
            if closing is None and not complete:
                return Unreadable("Nothing was changed: the reply was cut off before the "
                                  "end of a block (>>>>>>> REPLACE).")
            search = _unfenced(lines[i + 1:divider])
            replace = _unfenced(lines[divider + 1:closing if closing is not None else None])
            if not "".join(search).strip():
                return Unreadable("Nothing was changed: a SEARCH part is empty. Copy the "
                                  "lines to change from the file into it.")
            calls.append(Call("edit", {"path": path, "old_string": "\n".join(search),
                                       "new_string": "\n".join(replace)}))
            i = closing + 1 if closing is not None else len(lines)
        if not calls and _blocks(lines):  # the whole file in a fence, as for a short one
            return WholeFile().read_reply(reply, path, complete=complete)
        if not calls:
            return Unreadable(
                f"Nothing was changed: the reply has no block of the form\n{path}\n"
                "<<<<<<< SEARCH\n(lines from the file)\n=======\n(new lines)\n"
                ">>>>>>> REPLACE")
        return calls


def _unfenced(lines: list[str]) -> list[str]:
    """A block's lines without a fence the model wrote around the markers."""
    if lines and _FENCE.match(lines[-1]):
        lines = lines[:-1]
    if lines and _FENCE.match(lines[0]):
        lines = lines[1:]
    return lines


def format_for(lines: int | None) -> EditFormat:
    """The format for a file of `lines` lines (None: a new file)."""
    if lines is None or lines <= WHOLE_FILE_LINES:
        return WholeFile()
    return SearchReplace()
