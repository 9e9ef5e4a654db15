"""read: a file with numbered lines, a folder listing, or an image as an image block.

`PlainRead` shows a file as it is, in a fence under its path, with no line numbers: a small
model copies the surface it is shown, and wrote read's numbers back into files."""

from __future__ import annotations

import asyncio
import base64
import difflib
import os
from pathlib import Path
from typing import BinaryIO, ClassVar
from weakref import WeakKeyDictionary

from pydantic import BaseModel, Field

from totem.fences import fence_for, language_of
from totem.messages import ImageBlock
from totem.policy.permission import PermissionService
from totem.tools.base import ToolContext, ToolError, ToolResult, truncate

__all__ = ["PlainRead", "Read", "ReadInput", "is_binary", "not_found"]

DEFAULT_LIMIT = 2000
MAX_LINE = 2000
MAX_IMAGE_BYTES = 5 * 1024 * 1024
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}

# The AGENTS.md files already given to the model, per run (one PermissionService per run).
_loaded_instructions: WeakKeyDictionary[PermissionService, set[Path]] = WeakKeyDictionary()


class ReadInput(BaseModel):
    path: str = Field(description="File or folder, relative to the project root.")
    offset: int | None = Field(None, ge=1, description="First line to read (1-based).")
    limit: int | None = Field(None, ge=1, description="Number of lines (default 2000).")


def is_binary(head: bytes) -> bool:
    """A NUL byte in the first block means binary, as git and grep decide."""
    return b"\0" in head


def not_found(path: str, resolved: Path, ctx: ToolContext) -> ToolError:
    """A 'not found' error naming similar entries of the folder, when there are some."""
    folder = resolved.parent
    if not folder.is_dir():
        return ToolError(f"{path} does not exist (nor does its folder {ctx.relative(folder)}).")
    names = os.listdir(folder)
    close = difflib.get_close_matches(resolved.name, names, n=3, cutoff=0.5)
    close += [n for n in names if resolved.name.lower() in n.lower() and n not in close][:3]
    if not close:
        return ToolError(f"{path} does not exist.")
    suggestions = ", ".join(ctx.relative(folder / name) for name in close[:3])
    return ToolError(f"{path} does not exist. Did you mean: {suggestions}?")


class Read:
    name: ClassVar[str] = "read"
    description: ClassVar[str] = (
        "Read a text file (lines numbered), list a folder, or view an image. "
        "Use offset/limit for long files."
    )
    read_only: ClassVar[bool] = True
    Input: ClassVar[type[BaseModel]] = ReadInput
    numbered: ClassVar[bool] = True  # each line after its number, `cat -n` style

    async def run(self, args: ReadInput, ctx: ToolContext) -> ToolResult:
        path = await ctx.resolve(args.path)
        await ctx.ask("read", [ctx.relative(path)], title=f"read {ctx.relative(path)}")
        title = ctx.relative(path)
        if path.is_dir():
            return ToolResult(_listing(path, args, ctx), title=title)
        note = ""
        if not path.exists():
            other = _case_variant(path)
            if other is None:
                raise not_found(args.path, path, ctx)
            note = f"[{args.path} does not exist; showing {ctx.relative(other)}]\n"
            path, title = other, ctx.relative(other)
        media_type = IMAGE_TYPES.get(path.suffix.lower())
        if media_type is not None:
            if not ctx.vision:
                size = path.stat().st_size
                return ToolResult(
                    f"{title} is an image ({media_type}, {size} bytes). The current model does "
                    "not take images (or is not known to), so it cannot be shown.",
                    title=title,
                )
            return _image(path, media_type, title)
        file = await ctx.files.open_read(path)
        output = await asyncio.to_thread(_numbered, file, path, args, ctx,
                                         numbered=self.numbered)
        instructions = _instructions(path, ctx)
        return ToolResult(note + output + instructions, title=title)


def _case_variant(path: Path) -> Path | None:
    """The one file of the folder whose name differs only in case (small models lower-case)."""
    if not path.parent.is_dir():
        return None
    wanted = path.name.lower()
    matches = [e for e in os.listdir(path.parent) if e.lower() == wanted]
    return path.parent / matches[0] if len(matches) == 1 else None


def _listing(folder: Path, args: ReadInput, ctx: ToolContext) -> str:
    entries = sorted(entry.name + ("/" if entry.is_dir() else "") for entry in os.scandir(folder))
    if not entries:
        return f"{ctx.relative(folder)}/ is empty."
    start = (args.offset or 1) - 1
    limit = args.limit or DEFAULT_LIMIT
    shown = entries[start : start + limit]
    text = "\n".join(shown)
    if start + limit < len(entries):
        text += (
            f"\n\n[{len(entries)} entries; showing {start + 1}-{start + len(shown)}. "
            f"Use offset={start + len(shown) + 1} to see more.]"
        )
    return truncate(text, ctx.settings.output_limit, hint="use offset and limit")


def _image(path: Path, media_type: str, title: str) -> ToolResult:
    size = path.stat().st_size
    if size > MAX_IMAGE_BYTES:
        raise ToolError(
            f"{title} is an image of {size // 1024} KiB; images over "
            f"{MAX_IMAGE_BYTES // (1024 * 1024)} MiB cannot be read."
        )
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    said = f"{title}: an image ({media_type}, {size:,} bytes), attached."
    return ToolResult(said, title=title, images=[ImageBlock(media_type, data)])


class PlainRead(Read):
    """read for a small model: the file's text as it is, fenced under its path."""

    description: ClassVar[str] = (
        "Read a text file (shown as it is, in a fence under its path), list a folder, or "
        "view an image. Use offset/limit for long files."
    )
    numbered: ClassVar[bool] = False


def _numbered(opened: BinaryIO, path: Path, args: ReadInput, ctx: ToolContext, *,
              numbered: bool = True) -> str:
    """The lines `offset`.. of the file, `cat -n` style (or, not `numbered`, as they are in
    a fence under the file's path), within the output limit."""
    start = args.offset or 1
    limit = args.limit or DEFAULT_LIMIT
    budget = ctx.settings.output_limit
    shown: list[str] = []
    used = 0
    total = 0
    cut_at: int | None = None  # first line left out because of the output limit
    with opened as file:
        if is_binary(file.read(8192)):
            raise ToolError(f"{ctx.relative(path)} is a binary file; read shows text files only.")
        file.seek(0)
        for number, raw in enumerate(file, start=1):
            total = number
            if number < start or number >= start + limit or cut_at is not None:
                continue
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if len(line) > MAX_LINE:
                line = line[:MAX_LINE] + f"... [line cut at {MAX_LINE} characters]"
            entry = f"{number:6d}\t{line}" if numbered else line
            if used + len(entry) + 1 > budget and shown:
                cut_at = number
                continue
            shown.append(entry)
            used += len(entry) + 1
    if total == 0:
        return f"{ctx.relative(path)} is empty."
    if start > total:
        raise ToolError(
            f"offset {start} is past the end of {ctx.relative(path)}, which has {total} lines."
        )
    last = start + len(shown) - 1
    text = "\n".join(shown) if numbered else _fenced(ctx.relative(path), shown, start, last,
                                                       total)
    if cut_at is not None:
        text += (
            f"\n\n[Output limit reached: showing lines {start}-{last} of {total}. "
            f"Use offset={last + 1} to read on.]"
        )
    elif last < total:
        text += f"\n\n[Showing lines {start}-{last} of {total}. Use offset={last + 1} to read on.]"
    return text


def _fenced(title: str, lines: list[str], start: int, last: int, total: int) -> str:
    """`lines` as they are in the file, in a fence under its path (and which lines they are,
    when not all)."""
    body = "\n".join(lines)
    fence = fence_for(body)
    part = f" (lines {start}-{last} of {total})" if start > 1 or last < total else ""
    return f"{title}{part}\n{fence}{language_of(title)}\n{body}\n{fence}"


def _instructions(path: Path, ctx: ToolContext) -> str:
    """AGENTS.md files of the folders between the file and the root, each once per run."""
    root = Path(os.path.realpath(ctx.root))
    if root not in path.parents:
        return ""
    loaded = _loaded_instructions.setdefault(ctx.permission, set())
    if path.name == "AGENTS.md":
        loaded.add(path)
    folders = [p for p in path.parents if root in p.parents]
    parts: list[str] = []
    for folder in reversed(folders):
        candidate = folder / "AGENTS.md"
        if candidate in loaded or not candidate.is_file():
            continue
        loaded.add(candidate)
        content = truncate(candidate.read_text(errors="replace").strip(), 8000)
        parts.append(f"\n\nInstructions from {ctx.relative(candidate)}:\n{content}")
    return "".join(parts)
