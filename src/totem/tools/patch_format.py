"""The "*** Begin Patch" format used by the `patch` tool (the format of Codex's `apply_patch`).

Pure logic: `parse_patch` turns patch text into file operations; `plan_patch` computes every
resulting change through a read callback, writing nothing, so a caller can apply all or nothing.
The behaviour follows the reference (the Codex CLI's `apply_patch`), tested against it:

* Markers may be padded with whitespace; a `<<'EOF'` ... `EOF` heredoc wrapper is tolerated.
* Context is located leniently: exact text, then ignoring trailing whitespace, then ignoring
  surrounding whitespace, then also normalising typographic punctuation to ASCII.
* A chunk marked `*** End of File` must match the last lines of the file.
* Line endings are kept line by line (context lines keep theirs); new lines take the file's
  first line ending (`\\n` for files without one); an updated file always ends with a newline.
* A chunk with no old lines appends its lines at the end of the file.
* The operations apply in order, so a later one sees the effect of an earlier one.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

BEGIN_PATCH = "*** Begin Patch"
END_PATCH = "*** End Patch"
ADD_FILE = "*** Add File: "
DELETE_FILE = "*** Delete File: "
UPDATE_FILE = "*** Update File: "
MOVE_TO = "*** Move to: "
END_OF_FILE = "*** End of File"
_HEREDOC_STARTS = ("<<EOF", "<<'EOF'", '<<"EOF"')

# The characters Rust's `str::trim` removes (Unicode White_Space); Python's `str.strip()`
# would also remove U+001C..U+001F, which the reference keeps.
_WS = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys(
            "\xa0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
    }
)
_NEWLINE = re.compile(r"\r\n|\n|\r")
_Line = tuple[str, str | None]  # a line's text and its ending (None: not yet chosen)
_FORMAT_HINT = (
    "A patch starts with '*** Begin Patch', ends with '*** End Patch', and contains "
    "'*** Add File: <path>', '*** Delete File: <path>' or '*** Update File: <path>' sections."
)


class PatchError(Exception):
    """A patch that cannot be parsed or applied; the message says what to fix."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """One `@@` section of an update: `lines` are (marker, text) with marker ' ', '-' or '+'."""

    context: str | None
    lines: tuple[tuple[str, str], ...]
    end_of_file: bool = False

    @property
    def old_lines(self) -> list[str]:
        return [text for mark, text in self.lines if mark != "+"]

    @property
    def new_lines(self) -> list[str]:
        return [text for mark, text in self.lines if mark != "-"]


@dataclass(frozen=True, slots=True)
class AddFile:
    path: str
    content: str


@dataclass(frozen=True, slots=True)
class DeleteFile:
    path: str


@dataclass(frozen=True, slots=True)
class UpdateFile:
    path: str
    move_to: str | None
    chunks: tuple[Chunk, ...]


FileOp = AddFile | DeleteFile | UpdateFile


@dataclass(frozen=True, slots=True)
class FileChange:
    """One planned change; apply the list in order (a path may appear more than once)."""

    path: str  # path as written in the patch (relative, '/'-separated)
    move_to: str | None  # new path for a move, else None
    old: str | None  # previous content (None when the file did not exist)
    new: str | None  # new content (None when the file is deleted)


def _trim(text: str) -> str:
    return text.strip(_WS)


def _trim_end(text: str) -> str:
    return text.rstrip(_WS)


def _hunk_error(line_no: int, message: str) -> PatchError:
    return PatchError(f"Invalid patch, line {line_no}: {message}")


def _body_lines(text: str) -> tuple[list[str], int]:
    """The lines between the Begin/End markers, and the line number of the first one."""
    body = _trim(text)
    lines = [line.removesuffix("\r") for line in body.split("\n")] if body else []
    error = _check_boundaries(lines)
    if error is None:
        return lines[1:-1], 2
    if (
        len(lines) >= 4
        and lines[0] in _HEREDOC_STARTS
        and lines[-1].endswith("EOF")
        and _check_boundaries(lines[1:-1]) is None
    ):
        return lines[2:-2], 3
    raise PatchError(f"Invalid patch: {error}. {_FORMAT_HINT}")


def _check_boundaries(lines: list[str]) -> str | None:
    if lines and _trim(lines[0]) != BEGIN_PATCH:
        return f"the first line must be '{BEGIN_PATCH}'"
    if len(lines) < 2 or _trim(lines[-1]) != END_PATCH:
        return f"the last line must be '{END_PATCH}'"
    return None


def parse_patch(text: str) -> list[FileOp]:
    """Parse patch text into file operations; raise PatchError when it is malformed."""
    lines, first_no = _body_lines(text)
    ops: list[FileOp] = []
    i = 0
    while i < len(lines):
        header = _trim(lines[i])
        line_no = first_no + i
        i += 1
        if header.startswith(ADD_FILE):
            added: list[str] = []
            while i < len(lines) and lines[i].startswith("+"):
                added.append(lines[i][1:] + "\n")
                i += 1
            ops.append(AddFile(header.removeprefix(ADD_FILE), "".join(added)))
        elif header.startswith(DELETE_FILE):
            ops.append(DeleteFile(header.removeprefix(DELETE_FILE)))
        elif header.startswith(UPDATE_FILE):
            path = header.removeprefix(UPDATE_FILE)
            move_to = None
            if i < len(lines) and _trim_end(lines[i]).startswith(MOVE_TO):
                move_to = _trim_end(lines[i]).removeprefix(MOVE_TO)
                i += 1
            chunks: list[Chunk] = []
            while i < len(lines) and not lines[i].startswith("*"):
                if chunks and chunks[-1].end_of_file and not _trim(lines[i]):
                    i += 1  # blank lines after '*** End of File'
                    continue
                chunk, i = _parse_chunk(lines, i, first_no, first=not chunks)
                chunks.append(chunk)
            if not chunks:
                raise _hunk_error(
                    line_no,
                    f"the update of '{path}' has no changes. Follow '{UPDATE_FILE}{path}' with "
                    "'@@' and lines starting with ' ' (context), '-' (removed) or '+' (added).",
                )
            ops.append(UpdateFile(path, move_to, tuple(chunks)))
        else:
            raise _hunk_error(
                line_no,
                f"'{header}' is not a valid file header. Valid headers: '{ADD_FILE}{{path}}', "
                f"'{DELETE_FILE}{{path}}', '{UPDATE_FILE}{{path}}'. In an added file every line "
                "starts with '+'.",
            )
    return ops


def _parse_chunk(lines: list[str], i: int, first_no: int, *, first: bool) -> tuple[Chunk, int]:
    """Parse one chunk starting at lines[i]; return it and the index after it."""
    head = _trim_end(lines[i])
    context: str | None = None
    if head == "@@":
        i += 1
    elif head.startswith("@@ "):
        context = head.removeprefix("@@ ")
        i += 1
    elif not first:
        raise _hunk_error(
            first_no + i,
            f"expected a chunk to start with '@@' (or '@@ <context line>'), got '{lines[i]}'.",
        )
    body: list[tuple[str, str]] = []
    end_of_file = False
    while i < len(lines):
        line = lines[i]
        if _trim_end(line) == END_OF_FILE:
            if not body:
                break
            end_of_file = True
            i += 1
            break
        if line == "":
            body.append((" ", ""))
        elif line[0] in " +-":
            body.append((line[0], line[1:]))
        else:
            if not body:
                hint = " Use one '@@ <context line>' per chunk." if line.startswith("@@") else ""
                raise _hunk_error(
                    first_no + i,
                    f"unexpected line in an update: '{line}'. Every line of a chunk starts with "
                    f"' ' (context), '-' (removed) or '+' (added).{hint}",
                )
            break
        i += 1
    if not body:
        raise _hunk_error(first_no + i, "a chunk of an update contains no lines.")
    return Chunk(context, tuple(body), end_of_file), i


def affected_paths(ops: list[FileOp]) -> list[str]:
    """Every path the operations read or write, move targets included, without repeats."""
    paths: list[str] = []
    for op in ops:
        paths.append(op.path)
        if isinstance(op, UpdateFile) and op.move_to is not None:
            paths.append(op.move_to)
    return list(dict.fromkeys(paths))


def plan_patch(text: str, read_file: Callable[[str], str | None]) -> list[FileChange]:
    """Compute every change the patch makes, writing nothing; raise PatchError on any failure.

    `read_file(path)` returns the exact current text of `path` (line endings untouched) or
    None when it does not exist.  The changes are listed in patch order and must be applied in
    that order.
    """
    ops = parse_patch(text)
    if not ops:
        raise PatchError(
            "The patch contains no file operations, so nothing was changed. Add at least one "
            f"'{ADD_FILE}', '{DELETE_FILE}' or '{UPDATE_FILE}' section."
        )
    state: dict[str, str | None] = {}

    def current(path: str) -> str | None:
        key = posixpath.normpath(path)
        return state[key] if key in state else read_file(path)

    changes: list[FileChange] = []
    for op in ops:
        old = current(op.path)
        key = posixpath.normpath(op.path)
        if isinstance(op, AddFile):
            state[key] = op.content
            changes.append(FileChange(op.path, None, old, op.content))
        elif isinstance(op, DeleteFile):
            if old is None:
                raise PatchError(
                    f"Cannot delete {op.path}: the file does not exist. Check the path, or drop "
                    "this section. No file was changed."
                )
            state[key] = None
            changes.append(FileChange(op.path, None, old, None))
        else:
            if old is None:
                raise PatchError(
                    f"Cannot update {op.path}: the file does not exist. Check the path, or use "
                    f"'{ADD_FILE}{op.path}' to create it. No file was changed."
                )
            new = _apply_chunks(old, op.chunks, op.path)
            move_to = op.move_to
            if move_to is not None and posixpath.normpath(move_to) != key:
                state[key] = None
                state[posixpath.normpath(move_to)] = new
            else:
                move_to = None
                state[key] = new
            changes.append(FileChange(op.path, move_to, old, new))
    return changes


def _split_lines(content: str) -> list[_Line]:
    """Split into (text, line ending) pairs; '\\r\\n', '\\n' and a lone '\\r' end a line."""
    lines: list[_Line] = []
    start = 0
    for match in _NEWLINE.finditer(content):
        lines.append((content[start : match.start()], match.group()))
        start = match.end()
    if start < len(content):
        lines.append((content[start:], None))
    return lines


def _apply_chunks(content: str, chunks: tuple[Chunk, ...], path: str) -> str:
    lines = _split_lines(content)
    preferred = next((ending for _, ending in lines if ending is not None), "\n")
    texts = [text for text, _ in lines]
    replacements: list[tuple[int, int, list[_Line]]] = []
    index = 0
    for chunk in chunks:
        if chunk.context is not None:
            found = _seek(texts, [chunk.context], index, end_of_file=False)
            if found is None:
                raise PatchError(
                    f"Failed to find context '{chunk.context}' in {path}. The '@@ ' line must "
                    "copy a line of the file that comes before the change (and after the "
                    "previous chunk). Re-read the file and retry; no file was changed."
                )
            index = found + 1
        pattern = chunk.old_lines
        if not pattern:  # pure addition: appended at the end of the file
            replacements.append((len(texts), 0, [(text, None) for text in chunk.new_lines]))
            continue
        body = list(chunk.lines)
        found = _seek(texts, pattern, index, end_of_file=chunk.end_of_file)
        if found is None and pattern[-1] == "":
            # The trailing empty line stands for the file's final newline: retry without it.
            pattern = pattern[:-1]
            body = _without_final_newline(body)
            found = _seek(texts, pattern, index, end_of_file=chunk.end_of_file)
        if found is None:
            expected = "\n".join(chunk.old_lines)
            where = "at the end of " if chunk.end_of_file else "in "
            raise PatchError(
                f"Failed to find expected lines {where}{path}:\n{expected}\n"
                "The context (' ') and removed ('-') lines must match the file's current "
                "lines, in order. Re-read the file and retry; no file was changed."
            )
        replacements.extend(_runs(body, found))
        index = found + len(pattern)
    # Stable: insertions at the same place keep the order of the chunks.
    replacements.sort(key=lambda replacement: replacement[0])
    result: list[_Line] = []
    position = 0
    for start, length, segment in replacements:
        result.extend(lines[position:start])
        result.extend(segment)
        position = start + length
    result.extend(lines[position:])
    return "".join(text + (preferred if ending is None else ending) for text, ending in result)


def _without_final_newline(body: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Drop the last old line (an empty one), and the last new line too if it is empty."""
    ops: list[tuple[str, str] | None] = list(body)
    old_at = max(i for i, (mark, _) in enumerate(body) if mark != "+")
    new_at = max((i for i, (mark, _) in enumerate(body) if mark != "-"), default=-1)
    drop_new = new_at >= 0 and body[new_at][1] == ""
    if drop_new and new_at == old_at:
        ops[old_at] = None
    else:
        mark, text = body[old_at]
        ops[old_at] = ("+", text) if mark == " " else None
        if drop_new:
            mark, text = body[new_at]
            ops[new_at] = ("-", text) if mark == " " else None
    return [op for op in ops if op is not None]


def _runs(body: list[tuple[str, str]], found: int) -> list[tuple[int, int, list[_Line]]]:
    """Each run of '-'/'+' lines as (start, old length, new lines); context lines stay as
    they are in the file (text and line ending)."""
    runs: list[tuple[int, int, list[_Line]]] = []
    old_index = 0
    start, removed = -1, 0
    added: list[_Line] = []
    for mark, text in [*body, (" ", "")]:
        if mark == " ":
            if start >= 0:
                runs.append((start, removed, added))
                start, removed, added = -1, 0, []
            old_index += 1
            continue
        if start < 0:
            start = found + old_index
        if mark == "-":
            removed += 1
            old_index += 1
        else:
            added.append((text, None))
    return runs


def _seek(lines: list[str], pattern: list[str], start: int, *, end_of_file: bool) -> int | None:
    """Index of the first match of `pattern` in `lines` at or after `start`, trying strict
    comparison first and looser ones after; an end-of-file pattern must end the file."""
    if not pattern:
        return start
    last = len(lines) - len(pattern)
    if last < 0:
        return None
    candidates = range(max(start, last), last + 1) if end_of_file else range(start, last + 1)
    for normalise in (None, _trim_end, _trim, _normalise):
        have = lines if normalise is None else [normalise(line) for line in lines]
        want = pattern if normalise is None else [normalise(line) for line in pattern]
        for i in candidates:
            if have[i : i + len(want)] == want:
                return i
    return None


def _normalise(text: str) -> str:
    return _trim(text).translate(_PUNCTUATION)
