"""Containment first: a call's paths outside the project are settled before anything else.

Before any other check of a call (read-before-change, a small model's overwrite guard, the
files a request says not to touch), each path it names is resolved: one outside the project
is asked as `external_directory` (denied by default) and, refused, comes back as outside the
project, worded from the path as given. Nothing in the message depends on what is there
outside, so the model learns nothing about which files exist beyond the root.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from totem.tools.base import ToolContext
from totem.tools.read_first import changed_paths

__all__ = ["call_paths", "contain"]


def call_paths(name: str, args: Mapping[str, Any]) -> list[str]:
    """The paths a call names: the files a write, edit or patch changes, and the `path` of any
    other tool (read, glob, grep, image, tts...)."""
    paths = changed_paths(name, args)
    path = args.get("path")
    if isinstance(path, str) and path and path not in paths:
        paths.append(path)
    return paths


async def contain(name: str, args: Mapping[str, Any], ctx: ToolContext) -> None:
    """Raise the ToolError of the first path of the call that leaves the project (unless a rule
    or the person allows it)."""
    for path in call_paths(name, args):
        await ctx.resolve(path)
