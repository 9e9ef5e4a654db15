"""Hooks the file tools call after they change a file.

A hook gets the tool's context and the path written, and returns text to append to the
tool's result ("" for nothing to say): a framework pack's conventions check is one. Hooks
are given to a run by the session (`Agent.after_write`), so tools know no pack.
"""

from __future__ import annotations

from pathlib import Path

from totem.tools.base import AfterWrite, ToolContext

__all__ = ["AfterWrite", "after_write"]


def after_write(ctx: ToolContext, path: Path) -> str:
    """What the run's hooks say of `path`, just written by write, edit or patch."""
    return "".join(hook(ctx, path) for hook in ctx.after_write)
