"""glob: files whose path matches a pattern, newest first."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from totem.tools.base import ToolContext, ToolError, ToolResult

__all__ = ["SKIP_DIRS", "Glob", "GlobInput", "compile_glob", "walk_files"]

MAX_RESULTS = 100
SKIP_DIRS = frozenset({".git", "node_modules", ".venv"})


class GlobInput(BaseModel):
    pattern: str = Field(description="Glob such as **/*.py or src/**/*.ts.")
    path: str | None = Field(None, description="Folder to search (default: the project root).")


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
        elif c == "{" and _closing_brace(pattern, i) > 0:
            end = _closing_brace(pattern, i)
            options = _split_options(pattern[i + 1 : end])
            out.append("(?:" + "|".join(_translate(o) for o in options) + ")")
            i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _closing_brace(pattern: str, start: int) -> int:
    depth = 0
    for i in range(start, len(pattern)):
        depth += {"{": 1, "}": -1}.get(pattern[i], 0)
        if depth == 0:
            return i
    return -1


def _split_options(body: str) -> list[str]:
    options: list[str] = []
    depth, current = 0, ""
    for c in body:
        if c == "," and depth == 0:
            options.append(current)
            current = ""
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        current += c
    return [*options, current]


def compile_glob(pattern: str) -> re.Pattern[str]:
    """A glob as a regex over '/'-separated relative paths.

    `**` crosses folders, `*` and `?` do not, `[abc]` and `{a,b}` as in bash. A pattern
    without '/' matches a name at any depth (`*.py` is `**/*.py`), as in .gitignore.
    """
    pattern = pattern.strip().removeprefix("./")
    if "/" not in pattern.rstrip("/"):
        return re.compile("(?:.*/)?" + _translate(pattern.rstrip("/")), re.DOTALL)
    return re.compile(_translate(pattern.lstrip("/")), re.DOTALL)


def walk_files(base: Path, prefix: str = "") -> Iterator[tuple[str, Path]]:
    """Every file under `base` as (relative '/' path, path), depth first in name order (the
    order of `rg --sort=path`), skipping .git, node_modules and .venv; links not followed."""
    try:
        entries = sorted(os.scandir(base), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        relative = prefix + entry.name
        if entry.is_dir(follow_symlinks=False):
            if entry.name not in SKIP_DIRS:
                yield from walk_files(Path(entry.path), relative + "/")
        elif not entry.is_dir():  # a link to a folder is not followed
            yield relative, Path(entry.path)


def _find(base: Path, regex: re.Pattern[str]) -> list[Path]:
    found: list[tuple[float, str, Path]] = []
    for relative, path in walk_files(base):
        if regex.fullmatch(relative):
            try:
                mtime = path.stat().st_mtime
            except OSError:  # a dangling link
                mtime = 0.0
            found.append((-mtime, relative, path))
    found.sort()
    return [path for _, _, path in found]


class Glob:
    name: ClassVar[str] = "glob"
    description: ClassVar[str] = "Find files by name pattern; newest first."
    read_only: ClassVar[bool] = True
    Input: ClassVar[type[BaseModel]] = GlobInput

    async def run(self, args: GlobInput, ctx: ToolContext) -> ToolResult:
        if not args.pattern.strip():
            raise ToolError("The pattern is empty. Give a glob such as **/*.py.")
        if os.path.isabs(args.pattern) or args.pattern.startswith("~"):
            raise ToolError(
                "Give a pattern relative to the folder searched (e.g. **/*.py) and the "
                "folder in `path`."
            )
        base = await ctx.resolve(args.path or ".")
        await ctx.ask("glob", [args.pattern], title=f"glob {args.pattern}")
        if not base.is_dir():
            raise ToolError(f"{args.path} is not a folder; `path` must name a folder.")
        paths = await asyncio.to_thread(_find, base, compile_glob(args.pattern))
        where = ctx.relative(base)
        title = f"{args.pattern} in {where}"
        if not paths:
            return ToolResult(f"No files match {args.pattern} in {where}.", title=title)
        lines = [ctx.relative(path) for path in paths[:MAX_RESULTS]]
        if len(paths) > MAX_RESULTS:
            lines.append(
                f"\n[Showing the {MAX_RESULTS} newest of {len(paths)} files. "
                "Use a narrower pattern or path.]"
            )
        return ToolResult("\n".join(lines), title=title)
