"""A real ToolContext on a tmp_path project, with a real PermissionService."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

import pytest

from totem.abort import AbortSignal
from totem.policy.permission import Mode, PermissionService, Rule
from totem.tools.base import Tool, ToolContext, ToolResult, ToolSettings, parse_arguments


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


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the project, with a secret file in it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("top secret\n")
    return folder


@pytest.fixture
def make_ctx(project: Path) -> MakeContext:
    def make(
        *,
        mode: Mode = "yes",
        rules: Iterable[Rule] = (),
        settings: ToolSettings | None = None,
    ) -> ToolContext:
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

    return make


@pytest.fixture
def ctx(make_ctx: MakeContext) -> ToolContext:
    return make_ctx()


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


@pytest.fixture
def call() -> Call:
    return call_tool
