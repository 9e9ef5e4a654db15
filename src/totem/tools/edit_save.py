"""Saving an edit's result: the Python check, the question with its diff, the snapshot for
undo, the file written, and what the model is told.
"""

from __future__ import annotations

from pathlib import Path

from totem.tools.base import ToolContext, ToolError, ToolResult
from totem.tools.diffs import file_diff, joined
from totem.tools.hooks import after_write
from totem.tools.write import line_count

__all__ = ["save"]

WHOLE_FILE_LINES = 80  # a file this short is as easily written whole (Aider's `whole` format)


async def save(path: Path, before: str, after: str, replaced: int, ctx: ToolContext) -> ToolResult:
    relative = ctx.relative(path)
    # a model rarely mends a file its edit broke (small ones never): keep it whole
    from totem.tools.python_check import breaks_python

    broken = breaks_python(path, before, after)
    if broken is not None:
        whole = (f" Or call write with the whole new content of {relative}."
                 if line_count(before) <= WHOLE_FILE_LINES else "")
        raise ToolError(f"Refused: this edit would make {relative} invalid Python "
                        f"({broken}); nothing was changed. Copy old_string from the file "
                        f"and give new_string as complete, valid lines.{whole}")
    diff = joined([file_diff(relative, before, after)])
    await ctx.ask("edit", [relative], title=f"edit {relative}", diff=diff)
    ctx.snapshot(path)
    ctx.meta["diff"] = diff
    await ctx.files.write_bytes(path, after.encode("utf-8"))
    delta = line_count(after) - line_count(before)
    change = f"{'+' if delta >= 0 else ''}{delta} lines"
    times = f"{replaced} occurrences" if replaced > 1 else "1 occurrence"
    done = f"Edited {relative}: replaced {times} ({change})."
    if before.strip() and not after.strip():
        done += f" {relative} is now empty."
    return ToolResult(done + await after_write(ctx, path), title=relative)
