"""Hooks the file tools call after they change a file.

A hook gets the tool's context and the path written, and returns text to append to the
tool's result ("" for nothing to say), or an awaitable of it: a framework pack's conventions
check is one, a language server's new errors (totem.lsp) another. Hooks are given to a run by
the session (`Agent.after_write`), so tools know no pack and no server.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from totem.tools.base import AfterWrite, ToolContext

__all__ = ["AfterWrite", "after_write"]


async def after_write(ctx: ToolContext, path: Path) -> str:
    """What the run's hooks say of `path`, just written by write, edit or patch."""
    said = []
    for hook in ctx.after_write:
        note = hook(ctx, path)
        said.append(await note if inspect.isawaitable(note) else note)
    return "".join(said)
