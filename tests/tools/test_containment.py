"""no file tool reaches outside the project root unless a rule allows the path."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.tool_calls import Call, MakeContext
from totem.policy.permission import Rule
from totem.tools.base import Tool, ToolContext, ToolError
from totem.tools.edit import Edit
from totem.tools.glob import Glob
from totem.tools.grep import Grep
from totem.tools.patch import Patch
from totem.tools.read import Read
from totem.tools.write import Write

Arguments = Callable[[str, str], dict[str, Any]]  # (file path, folder path) -> arguments

TOOLS: list[tuple[Tool, Arguments]] = [
    (Read(), lambda file, folder: {"path": file}),
    (Glob(), lambda file, folder: {"pattern": "*", "path": folder}),
    (Grep(), lambda file, folder: {"pattern": "secret", "path": file}),
    (Grep(ripgrep=False), lambda file, folder: {"pattern": "secret", "path": folder}),
    (Write(), lambda file, folder: {"path": file, "content": "pwned\n"}),
    (Edit(), lambda file, folder: {"path": file, "old_string": "top", "new_string": "pwned"}),
    (
        Patch(),
        lambda file, folder: {
            "patch": f"*** Begin Patch\n*** Update File: {file}\n@@\n-top secret\n+pwned\n"
            "*** End Patch"
        },
    ),
    (
        Patch(),
        lambda file, folder: {
            "patch": f"*** Begin Patch\n*** Add File: {folder}/new.txt\n+pwned\n*** End Patch"
        },
    ),
]
TOOL_IDS = ["read", "glob", "grep", "grep-builtin", "write", "edit", "patch", "patch-add"]


def escapes(outside: Path) -> dict[str, tuple[str, str]]:
    """Ways out of the project: (a file path, a folder path) for each."""
    return {
        "dotdot": ("../outside/secret.txt", "../outside"),
        "absolute": (str(outside / "secret.txt"), str(outside)),
        "home": ("~/secret.txt", "~"),
        "symlinked folder": ("link/secret.txt", "link"),
        "symlinked file": ("leak.txt", "sub/../link"),
    }


@pytest.fixture
def linked(project: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    os.symlink(outside, project / "link")
    os.symlink(outside / "secret.txt", project / "leak.txt")
    (project / "sub").mkdir()
    monkeypatch.setenv("HOME", str(outside))
    return project


@pytest.mark.parametrize(
    "escape", ["dotdot", "absolute", "home", "symlinked folder", "symlinked file"]
)
@pytest.mark.parametrize(("tool", "arguments"), TOOLS, ids=TOOL_IDS)
def test_every_file_tool_refuses_to_leave_the_root(
    tool: Tool,
    arguments: Arguments,
    escape: str,
    linked: Path,
    outside: Path,
    ctx: ToolContext,
    call: Call,
) -> None:
    file, folder = escapes(outside)[escape]
    with pytest.raises(ToolError, match="outside the project root"):
        call(tool, ctx, **arguments(file, folder))
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert sorted(os.listdir(outside)) == ["secret.txt"]


def test_a_rule_lets_read_and_grep_reach_an_outside_folder(
    outside: Path, make_ctx: MakeContext, call: Call
) -> None:
    ctx = make_ctx(mode="headless", rules=[Rule("external_directory", f"{outside}*", "allow")])
    secret = str(outside / "secret.txt")
    assert call(Read(), ctx, path=secret).output == "     1\ttop secret"
    assert call(Grep(), ctx, pattern="secret", path=str(outside)).output == (
        f"{secret}:1: top secret"
    )
    elsewhere = outside.parent / "elsewhere"
    elsewhere.mkdir()
    with pytest.raises(ToolError, match="outside the project root"):
        call(Read(), ctx, path=str(elsewhere))


def test_searches_inside_do_not_follow_links_out(
    linked: Path, ctx: ToolContext, call: Call
) -> None:
    (linked / "own.txt").write_text("my secret\n")
    listed = call(Glob(), ctx, pattern="**/*.txt").output.splitlines()
    assert sorted(listed) == ["leak.txt", "own.txt"]  # names only; link/ is not entered
    for grep in (Grep(), Grep(ripgrep=False)):
        assert call(grep, ctx, pattern="secret").output == "own.txt:1: my secret"


def test_links_inside_the_root_work(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "real.txt").write_text("hello\n")
    os.symlink(project / "real.txt", project / "alias.txt")
    result = call(Read(), ctx, path="alias.txt")
    assert result.output == "     1\thello"
    assert result.title == "real.txt"
