"""edit: replace an exact string in a file."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from totem.tools.base import ToolContext, ToolError, ToolResult
from totem.tools.diffs import file_diff, joined
from totem.tools.edit_save import save
from totem.tools.hooks import after_write
from totem.tools.read import is_binary, not_found
from totem.tools.write import lines_of

__all__ = ["Edit", "EditInput"]


class EditInput(BaseModel):
    path: str = Field(description="File to change, relative to the project root.")
    old_string: str = Field(description="Exact text to replace, whitespace included.")
    new_string: str = Field(description="Text to put in its place.")
    replace_all: bool = Field(False, description="Replace every occurrence.")


class Edit:
    name: ClassVar[str] = "edit"
    description: ClassVar[str] = (
        "Replace old_string with new_string in a file. old_string must match the file exactly "
        "and be unique unless replace_all. Empty old_string creates a new file."
    )
    read_only: ClassVar[bool] = False
    Input: ClassVar[type[BaseModel]] = EditInput

    async def run(self, args: EditInput, ctx: ToolContext) -> ToolResult:
        path = await ctx.resolve(args.path)
        return await self._edit(path, args, ctx)

    async def _edit(self, path: Path, args: EditInput, ctx: ToolContext) -> ToolResult:
        if args.old_string == args.new_string:
            raise ToolError("old_string and new_string are the same; there is nothing to change.")
        relative = ctx.relative(path)
        if path.is_dir():
            raise ToolError(f"{relative} is a folder; give the path of a file.")
        if not path.exists():
            if args.old_string:
                missing = not_found(args.path, path, ctx)
                raise ToolError(f"{missing} To create a new file, use write.")
            return await _create(path, args.new_string, ctx)
        content = _text(await ctx.files.read_bytes(path), relative)
        if not args.old_string and content.strip() and args.new_string.strip():
            return await _append(path, content, args.new_string, ctx, why="was empty")
        if not args.old_string:
            return await save(path, content, args.new_string, 1, ctx)
        old, new = args.old_string, args.new_string
        count = content.count(old)
        if count == 0 and "\r\n" in content and "\n" in old:
            old, new = _crlf(old), _crlf(new)
            count = content.count(old)
        if count == 0:
            from totem.tools.edit_match import near_match, starts_block

            near = near_match(content, old, new, loose=True)
            if near is not None:
                old, new = near
                count = 1
            elif new.startswith(old) and starts_block(old):
                return await _append(path, content, new, ctx,
                                     why=f"was not in {relative}; new_string begins with it")
        if count == 0:
            raise ToolError(_not_found(path, old, relative, ctx))
        if count > 1 and not args.replace_all:
            from totem.tools.edit_match import whole_line

            line = whole_line(content, old)
            if line is not None:  # old_string is a whole line once: that line is meant
                start, end = line
                return await save(path, content, content[:start] + new + content[end:], 1, ctx)
        if count > 1 and not args.replace_all:
            raise ToolError(_many(content, old, count, relative))
        updated = content.replace(old, new) if args.replace_all else content.replace(old, new, 1)
        return await save(path, content, updated, count if args.replace_all else 1, ctx)


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def _text(data: bytes, relative: str) -> str:
    if is_binary(data[:8192]):
        raise ToolError(f"{relative} is a binary file; edit changes text files only.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{relative} is not UTF-8 text; edit cannot change it safely.") from None


async def _create(path: Path, content: str, ctx: ToolContext) -> ToolResult:
    relative = ctx.relative(path)
    diff = joined([file_diff(relative, None, content)])
    await ctx.ask("edit", [relative], title=f"create {relative}", diff=diff)
    ctx.snapshot(path)
    ctx.meta["diff"] = diff
    path.parent.mkdir(parents=True, exist_ok=True)
    await ctx.files.write_bytes(path, content.encode("utf-8"))
    done = f"Created {relative} ({lines_of(content)})."
    return ToolResult(done + await after_write(ctx, path), title=relative)


def _many(content: str, old: str, count: int, relative: str) -> str:
    import json

    from totem.tools.edit_match import section_of, unique_contexts

    text = (f"old_string appears {count} times in {relative}; add more context to make it "
            "unique, or set replace_all to replace every occurrence.")
    places = []
    for line, block in unique_contexts(content, old):
        section = section_of(content, line)
        where = f"line {line}" + (f" (in {section})" if section else "")
        places.append(f"{where}: {json.dumps(block)}")
    if places:
        text += " Each place, as an old_string found once: " + "; ".join(places)
    return text


def _not_found(path: Path, old: str, relative: str, ctx: ToolContext) -> str:
    from totem.tools.edit_match import found_elsewhere

    text = (f"old_string was not found in {relative} — read the file and copy the exact text, "
            "including whitespace and indentation.")
    allowed = list(found_elsewhere(ctx.root, old, besides=path))
    if allowed:
        text += f" It is in {', '.join(allowed)}: to change it there, call edit with that path."
    return text


async def _append(
    path: Path, before: str, addition: str, ctx: ToolContext, *, why: str
) -> ToolResult:
    """The model adds a new piece (a function, a line) to the file: old_string is nowhere
    in the file and new_string begins with it, or old_string is empty.
    The piece goes at the end of the file."""
    from totem.tools.edit_match import already_there, appended

    addition, where = already_there(before, addition)
    if where is not None:
        raise ToolError(f"Refused: {ctx.relative(path)} already has that text (line {where}), "
                        "so nothing was added. If the request is done, answer with what you "
                        "changed.")
    result = await save(path, before, appended(before, addition), 1, ctx)
    note = f"[old_string {why}, so new_string was added at the end of the file.]\n"
    return ToolResult(note + result.output, title=result.title)
