"""write: a whole file's content, creating its folders."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from totem.tools.base import ToolContext, ToolError, ToolResult
from totem.tools.diffs import file_diff, joined
from totem.tools.hooks import after_write

__all__ = ["Write", "WriteInput", "line_count", "lines_of"]


class WriteInput(BaseModel):
    path: str = Field(description="File to write, relative to the project root.")
    content: str = Field(description="The complete new content of the file.")


def line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def lines_of(text: str) -> str:
    """'1 line', '12 lines'."""
    count = line_count(text)
    return f"{count} line{'' if count == 1 else 's'}"


async def _diff(path: Path, relative: str, content: str, ctx: ToolContext) -> str:
    """The change as a unified diff; a binary or unreadable file is named, not shown."""
    if not path.is_file():
        return file_diff(relative, None, content)
    try:
        return file_diff(relative, (await ctx.files.read_bytes(path)).decode("utf-8"), content)
    except (UnicodeDecodeError, OSError):
        return f"Binary file {relative} replaced by text ({lines_of(content)})\n"


class Write:
    name: ClassVar[str] = "write"
    description: ClassVar[str] = (
        "Create or overwrite a file with the given content. To change part of a file, use edit."
    )
    read_only: ClassVar[bool] = False
    Input: ClassVar[type[BaseModel]] = WriteInput

    async def run(self, args: WriteInput, ctx: ToolContext) -> ToolResult:
        path = await ctx.resolve(args.path)
        relative = ctx.relative(path)
        if path.is_dir():
            raise ToolError(f"{relative} is a folder; give the path of a file.")
        existed = path.exists()
        diff = joined([await _diff(path, relative, args.content, ctx)])
        await ctx.ask("edit", [relative], title=f"write {relative}", diff=diff)
        ctx.snapshot(path)
        ctx.meta["diff"] = diff
        path.parent.mkdir(parents=True, exist_ok=True)
        await ctx.files.write_bytes(path, args.content.encode("utf-8"))
        verb = "Overwrote" if existed else "Created"
        done = f"{verb} {relative} ({lines_of(args.content)})."
        return ToolResult(done + await after_write(ctx, path), title=relative)
