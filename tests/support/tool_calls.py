"""Running a tool as the loop does: a real ToolContext on a project folder, with a real
PermissionService, and a call that validates the arguments first.

The fixtures of tests/tools/conftest.py (`make_ctx`, `ctx`, `call`) are built on these; the
types here (`MakeContext`, `Call`) are what tests annotate those fixtures with.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal, Protocol

from totem.abort import AbortSignal
from totem.events import Event, PermissionAsked
from totem.policy.permission import Mode, PermissionService, Reply, Rule
from totem.tools.base import Tool, ToolContext, ToolResult, ToolSettings, parse_arguments

__all__ = ["Call", "MakeContext", "SnapshotLog", "answering", "call_tool", "tool_context"]


class SnapshotLog:
    """A SnapshotSink that keeps what it is given, in order."""

    def __init__(self) -> None:
        self.saved: list[tuple[str, bytes | None]] = []

    def save_snapshot(
        self, *, session_id: str, call_id: str, path: str, content: bytes | None
    ) -> None:
        self.saved.append((path, content))


class MakeContext(Protocol):
    def __call__(
        self,
        *,
        mode: Mode = "yes",
        rules: Iterable[Rule] = (),
        settings: ToolSettings | None = None,
    ) -> ToolContext: ...


Call = Callable[..., ToolResult]


def tool_context(
    project: Path,
    *,
    mode: Mode = "yes",
    rules: Iterable[Rule] = (),
    settings: ToolSettings | None = None,
) -> ToolContext:
    """A context for a tool call in `project`, snapshots kept in a `SnapshotLog`."""
    permission = PermissionService(rules=rules, mode=mode, project=str(project))
    return ToolContext(
        root=project,
        session_id="ses_test",
        call_id="call_test",
        abort=AbortSignal(),
        permission=permission,
        settings=settings or ToolSettings(),
        snapshots=SnapshotLog(),
    )


def call_tool(tool: Tool, ctx: ToolContext, **arguments: Any) -> ToolResult:
    """Validate the arguments as the loop does and run the tool in a fresh event loop.

    An asyncio.Event belongs to the first loop that waits on it, so a context used again
    gets a new abort signal (unless it was aborted on purpose).
    """
    ctx.tool_name = tool.name
    if not ctx.abort.aborted:
        ctx.abort = AbortSignal()
    args = parse_arguments(tool, arguments)
    return asyncio.run(tool.run(args, ctx))


def answering(
    ctx: ToolContext, kind: Literal["once", "always", "reject"]
) -> list[PermissionAsked]:
    """Give `ctx` an interactive permission service whose every question a person answers
    with `kind`; the questions asked land, in order, in the list returned."""
    asked: list[PermissionAsked] = []

    def answer(event: Event) -> None:
        assert isinstance(event, PermissionAsked)
        asked.append(event)
        ctx.permission.reply(event.request_id, Reply(kind))

    ctx.permission = PermissionService(rules=[], mode="interactive", project="p", emit=answer)
    return asked
