"""The files a bash line writes through redirects (`>`, `>>`, `2>`, `&>`, `>|`) and `tee`.

`write_targets("cd sub && make 2> log.txt | tee -a ../all.log")` gives `log.txt` and
`../all.log`, each with the `cd` folders in effect before it. They are found at every level:
in `bash -c '...'`, `eval`, `$( )`, backticks and process substitutions. A target whose place
cannot be known before the line runs (a variable, a glob, after `cd -`) is marked so, and is
then treated as a path outside the project. This is a best effort, as `split_commands` is.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from totem.policy.shell_parse import _MAX_DEPTH, _scan, _unwrap

__all__ = ["Place", "WriteTarget", "locate", "write_targets"]

_WRITE_OP = re.compile(r"\d*(?:>|>>|>\||&>|&>>|<>|>&)")
_READ_OP = re.compile(r"\d*(?:<|<<|<<-|<<<)")
_DUPLICATE = re.compile(r"\d*[<>]&(?:\d+-?|-)")  # 2>&1, >&2, <&-: no file
_UNKNOWABLE = re.compile(r"[$`*?\[]")
HARMLESS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/fd/2"})
Place: TypeAlias = Literal["harmless", "inside", "outside", "unknown"]


@dataclass(frozen=True, slots=True)
class WriteTarget:
    """A file a command writes: as written, and the `cd` folders before it (None: unknown)."""

    path: str
    folders: tuple[str, ...] | None = ()


def _split_redirects(words: list[str]) -> tuple[list[str], list[str]]:
    """The write targets of a command's redirects, and its words without the redirects."""
    targets: list[str] = []
    plain: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if _WRITE_OP.fullmatch(word) and i + 1 < len(words):
            targets.append(words[i + 1])
            i += 2
        elif _READ_OP.fullmatch(word):
            i += 2
        else:
            if not _DUPLICATE.fullmatch(word):
                plain.append(word)
            i += 1
    return targets, plain


def _tee_files(words: list[str]) -> list[str]:
    files: list[str] = []
    options = True
    for word in words[1:]:
        if options and word == "--":
            options = False
        elif not (options and word.startswith("-")):
            files.append(word)
    return files


def _cd(folders: tuple[str, ...] | None, words: list[str]) -> tuple[str, ...] | None:
    """The folders after `cd`/`pushd` with these words; None when bash alone can know."""
    args = [w for w in words[1:] if not w.startswith("-") or w == "-"]
    if folders is None or (args and (args[0] == "-" or _UNKNOWABLE.search(args[0]))):
        return None
    return (*folders, args[0] if args else "~")


def _targets(
    line: str, folders: tuple[str, ...] | None, depth: int
) -> tuple[list[WriteTarget], tuple[str, ...] | None]:
    """The write targets of a line, and the `cd` folders in effect after it."""
    if depth > _MAX_DEPTH:
        return [WriteTarget(line.strip(), None)], None
    scan = _scan(line)
    start = folders
    found: list[WriteTarget] = []
    for words in scan.commands:
        redirected, plain = _split_redirects(words)
        found.extend(WriteTarget(t, folders) for t in redirected)
        inner, scripts = _unwrap(plain)
        head = os.path.basename(inner[0]) if inner else ""
        if head == "tee":
            found.extend(WriteTarget(t, folders) for t in _tee_files(inner))
        elif head in ("cd", "pushd"):
            folders = _cd(folders, inner)
        elif head == "popd":
            folders = None
        for script in scripts:
            inside, after = _targets(script, folders, depth + 1)
            found.extend(inside)
            if head == "eval":
                folders = after
    for script in scan.nested:  # where they run among the commands is not kept
        found.extend(_targets(script, start if folders == start else None, depth + 1)[0])
    return found, folders


def write_targets(line: str) -> list[WriteTarget]:
    """The files a bash line writes through redirects and `tee`, in order, each once."""
    unique: list[WriteTarget] = []
    for target in _targets(line, (), 0)[0]:
        if target.path[:2] not in ("<(", ">(") and target not in unique:
            unique.append(target)
    return unique


def locate(target: WriteTarget, root: Path) -> tuple[Place, str]:
    """Where a target is: its path relative to the root when inside, its real path when
    outside, the text as written when unknown."""
    if target.path in HARMLESS:
        return "harmless", target.path
    if target.folders is None or _UNKNOWABLE.search(target.path) or not target.path:
        return "unknown", target.path
    place = root
    for part in (*target.folders, target.path):
        place = place / os.path.expanduser(part)  # an absolute part starts again from "/"
    real = Path(os.path.realpath(place))
    if real == root or root in real.parents:
        return "inside", str(real.relative_to(root)) or "."
    return "outside", str(real)
