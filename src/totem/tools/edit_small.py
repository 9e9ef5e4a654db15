"""edit for a small model: the edit read the one way it can only mean (tools/edit_intent.py),
saved like any other edit (asked, snapshotted, checked), with a note saying how it was read.
"""

from __future__ import annotations

import re  # compiled on first use (re caches them), not at start-up
from pathlib import Path

from totem.tools.base import ToolContext, ToolError, ToolResult
from totem.tools.edit_intent import (
    Reading,
    definition_inserted,
    definition_renamed,
    import_kept,
    imports_moved_up,
    is_name,
    other_uses,
    placed_by_request,
    renamed,
    repeats_file,
)

__all__ = ["problems_to_fix", "small_reading"]

_REPEATED = (
    "Refused: new_string repeats lines {path} already has, and an empty old_string adds it "
    "at the end, so they would be there twice; nothing was changed. To change a part of "
    "{path}, old_string is that part as it is now (copied from the file) and new_string is "
    "its new text."
)


async def small_reading(
    path: Path, content: str, *, old: str, new: str, replace_all: bool, ctx: ToolContext
) -> ToolResult | None:
    """The result of the edit (`old` -> `new` in the file at `path`, which holds `content`)
    as read for a small model, or None to edit as written."""
    python = path.suffix == ".py"
    reading = imports_moved_up(content, old, new, python=python) or import_kept(
        content, old, new, python=python)
    if reading is None and not old and new.strip() and repeats_file(content, new):
        raise ToolError(_REPEATED.format(path=ctx.relative(path)))
    renaming = definition_renamed(content, old, new) if reading is None else None
    if renaming is not None:
        name, _, reading = renaming
        return await _saved(path, content, reading, ctx, old=name)
    if reading is None and old and not replace_all:
        count = content.count(old)
        if count >= 1:
            reading = renamed(content, old, new)
        if reading is None and count > 1:
            reading = placed_by_request(content, old, new, ctx.request)
        if reading is None and count == 1:
            reading = definition_inserted(content, old, new)
        if count == 0 and not _near(content, old, new):
            return await _in_other_file(path, old, new, ctx)
    if reading is None:
        return None
    return await _saved(path, content, reading, ctx, old=old)


def _near(content: str, old: str, new: str) -> bool:
    """Whether the usual edit finds its place anyway (a near match, or a new block)."""
    from totem.tools.edit_match import near_match, starts_block

    return near_match(content, old, new, loose=True) is not None or (
        new.startswith(old) and starts_block(old))


async def _saved(
    path: Path, content: str, reading: Reading, ctx: ToolContext, *, old: str
) -> ToolResult:
    from totem.tools.edit_save import save

    result = await save(path, content, reading.updated, reading.replaced, ctx)
    output = (reading.note + "\n" if reading.note else "") + result.output
    if is_name(old):
        from totem.tools.edit_match import found_elsewhere

        output += other_uses(found_elsewhere(ctx.root, old, besides=path), old)
    return ToolResult(output, title=result.title)


async def _in_other_file(path: Path, old: str, new: str, ctx: ToolContext) -> ToolResult | None:
    """The edit made in the one other file that holds `old` (the model edited the file that
    uses a text instead of the one that has it), or None (the usual error follows)."""
    from totem.tools.edit_match import found_elsewhere

    elsewhere = found_elsewhere(ctx.root, old, besides=path)
    if len(elsewhere) != 1:
        return None
    [(other, text)] = elsewhere.items()
    if ctx.change_refusal is not None and ctx.change_refusal(other) is not None:
        return None
    reading = renamed(text, old, new)
    if reading is None and text.count(old) == 1:
        reading = Reading(text.replace(old, new), "")
    if reading is None:
        return None
    note = (f"[old_string is not in {ctx.relative(path)}; it is only in {other}, so the edit "
            f"was made there.]")
    target = await ctx.resolve(other)
    moved = Reading(reading.updated, note + (" " + reading.note if reading.note else ""),
                    reading.replaced)
    return await _saved(target, text, moved, ctx, old=old)


def problems_to_fix(path: Path, ctx: ToolContext) -> str:
    """Under a small model's failed edit of a Python file: what the Python check finds wrong
    with the file as it is, and for a standard module used without its import, the call that
    adds it (the 1.5B, asked to fix a NameError, sent the line unchanged, twice)."""
    import sys

    from totem.tools.python_check import python_check

    if path.suffix != ".py" or not path.is_file():
        return ""
    note = python_check(ctx, path)
    if not note:
        return ""
    modules = [name for name in re.findall(r"name '(\w+)' is not defined", note)
               if name in sys.stdlib_module_names]
    for name in modules[:1]:
        note += (f"\n[To import {name}, call edit with path {ctx.relative(path)}, old_string \"\" "
                 f"and new_string \"import {name}\".]")
    return note
