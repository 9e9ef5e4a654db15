"""patch: add, change, move and delete files with one `*** Begin Patch` text."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from totem.tools.base import ToolContext, ToolError, ToolResult
from totem.tools.diffs import file_diff, joined
from totem.tools.hooks import after_write
from totem.tools.patch_format import (
    FileChange,
    PatchError,
    affected_paths,
    parse_patch,
    plan_patch,
)
from totem.tools.read import is_binary

__all__ = ["Patch", "PatchInput"]

# a concrete example, not a template: models copy a template's placeholders as they are
DESCRIPTION = (Path(__file__).with_name("patch.txt")).read_text(encoding="utf-8").strip()


class PatchInput(BaseModel):
    patch: str = Field(description="The whole patch text, from *** Begin Patch to *** End Patch.")


class Patch:
    name: ClassVar[str] = "patch"
    description: ClassVar[str] = DESCRIPTION
    read_only: ClassVar[bool] = False
    Input: ClassVar[type[BaseModel]] = PatchInput

    async def run(self, args: PatchInput, ctx: ToolContext) -> ToolResult:
        try:
            ops = parse_patch(args.patch)
        except PatchError as exc:
            raise ToolError(str(exc)) from None
        if not ops:
            raise ToolError(
                "The patch contains no file operations. Add '*** Add File: ', "
                "'*** Update File: ' or '*** Delete File: ' sections."
            )
        resolved = {path: await ctx.resolve(path) for path in affected_paths(ops)}
        relatives = list(dict.fromkeys(ctx.relative(p) for p in resolved.values()))

        contents: dict[str, str | None | ToolError] = {}
        for path in resolved:  # read first (ctx.files may ask an editor); refused if asked for
            try:
                contents[path] = await _read(resolved[path], ctx)
            except ToolError as exc:
                contents[path] = exc

        def read_file(path: str) -> str | None:
            found = contents[path]
            if isinstance(found, ToolError):
                raise found
            return found

        try:
            changes = plan_patch(args.patch, read_file)
        except PatchError as exc:
            raise ToolError(str(exc)) from None
        diff = joined([_change_diff(c, resolved, ctx) for c in changes])
        await ctx.ask("edit", relatives, title=f"patch {', '.join(relatives)}", diff=diff)
        ctx.meta["diff"] = diff
        done: list[str] = []
        snapshotted: set[Path] = set()
        try:
            for change in changes:
                done.append(await _apply(change, resolved, snapshotted, ctx))
        except OSError as exc:
            applied = "; ".join(done) or "nothing"
            raise ToolError(f"The patch failed part way ({exc}). Applied: {applied}.") from None
        files = f"{len(relatives)} file{'' if len(relatives) == 1 else 's'}"
        checked = "".join([await after_write(ctx, p) for p in dict.fromkeys(resolved.values())])
        return ToolResult("\n".join(done) + checked, title=f"patch {files}")


def _change_diff(change: FileChange, resolved: dict[str, Path], ctx: ToolContext) -> str:
    moved = ctx.relative(resolved[change.move_to]) if change.move_to is not None else ""
    return file_diff(ctx.relative(resolved[change.path]), change.old, change.new, to=moved)


async def _read(path: Path, ctx: ToolContext) -> str | None:
    if not path.exists():
        return None
    if path.is_dir():
        raise ToolError(f"{ctx.relative(path)} is a folder; a patch changes files.")
    data = await ctx.files.read_bytes(path)
    if is_binary(data[:8192]):
        raise ToolError(f"{ctx.relative(path)} is a binary file; patch changes text files only.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(
            f"{ctx.relative(path)} is not UTF-8 text; patch cannot change it."
        ) from None


async def _apply(
    change: FileChange, resolved: dict[str, Path], snapshotted: set[Path], ctx: ToolContext
) -> str:
    """Make one planned change; return its line of the summary (`A`, `M`, `D`, `R`)."""
    source = resolved[change.path]
    targets = [source] if change.move_to is None else [source, resolved[change.move_to]]
    for path in targets:
        if path not in snapshotted:
            ctx.snapshot(path)
            snapshotted.add(path)
    if change.new is None:
        source.unlink()
        return f"D {ctx.relative(source)}"
    destination = targets[-1]
    destination.parent.mkdir(parents=True, exist_ok=True)
    await ctx.files.write_bytes(destination, change.new.encode("utf-8"))
    if change.move_to is not None:
        source.unlink()
        return f"R {ctx.relative(source)} -> {ctx.relative(destination)}"
    return f"{'A' if change.old is None else 'M'} {ctx.relative(source)}"
