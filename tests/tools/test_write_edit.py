from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tool_calls import Call, MakeContext, SnapshotLog
from totem.policy.permission import PermissionDenied
from totem.tools.base import ToolContext, ToolError
from totem.tools.edit import Edit
from totem.tools.write import Write


def snapshots(ctx: ToolContext) -> list[tuple[str, bytes | None]]:
    assert isinstance(ctx.snapshots, SnapshotLog)
    return ctx.snapshots.saved


def test_write_creates_folders_and_says_so(project: Path, ctx: ToolContext, call: Call) -> None:
    result = call(Write(), ctx, path="src/new/mod.py", content="a = 1\nb = 2\n")
    assert result.output == "Created src/new/mod.py (2 lines)."
    assert (project / "src/new/mod.py").read_text() == "a = 1\nb = 2\n"
    assert snapshots(ctx) == [(str(project / "src/new/mod.py"), None)]


def test_write_overwrites_after_a_snapshot(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "f.txt").write_bytes(b"old\r\n")
    result = call(Write(), ctx, path="f.txt", content="new")
    assert result.output == "Overwrote f.txt (1 line)."
    assert (project / "f.txt").read_bytes() == b"new"
    assert snapshots(ctx) == [(str(project / "f.txt"), b"old\r\n")]


def test_write_to_a_folder_is_an_error(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "src").mkdir()
    with pytest.raises(ToolError, match="is a folder"):
        call(Write(), ctx, path="src", content="x")


def test_write_asks_edit_before_writing(project: Path, make_ctx: MakeContext, call: Call) -> None:
    ctx = make_ctx(mode="headless")
    with pytest.raises(PermissionDenied):
        call(Write(), ctx, path="f.txt", content="x")
    assert not (project / "f.txt").exists()
    assert snapshots(ctx) == []


def test_edit_replaces_a_unique_string(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "m.py").write_text("def f():\n    return 1\n")
    result = call(Edit(), ctx, path="m.py", old_string="return 1", new_string="x = 1\n    return x")
    assert result.output == "Edited m.py: replaced 1 occurrence (+1 lines)."
    assert (project / "m.py").read_text() == "def f():\n    x = 1\n    return x\n"
    assert snapshots(ctx) == [(str(project / "m.py"), b"def f():\n    return 1\n")]


def test_edit_missing_string(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "m.py").write_text("def f():\n    return 1\n")
    with pytest.raises(ToolError, match="not found in m.py — read the file and copy the exact"):
        call(Edit(), ctx, path="m.py", old_string="return 2", new_string="pass")
    assert snapshots(ctx) == []


def test_edit_ambiguous_string(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "m.py").write_text("a = 1\nb = 1\nc = 1\n")
    with pytest.raises(ToolError, match="appears 3 times in m.py; add more context.*replace_all"):
        call(Edit(), ctx, path="m.py", old_string=" = 1", new_string=" = 2")
    result = call(Edit(), ctx, path="m.py", old_string=" = 1", new_string=" = 2", replace_all=True)
    assert result.output == "Edited m.py: replaced 3 occurrences (+0 lines)."
    assert (project / "m.py").read_text() == "a = 2\nb = 2\nc = 2\n"


def test_edit_same_strings_is_an_error(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "m.py").write_text("a\n")
    with pytest.raises(ToolError, match="the same"):
        call(Edit(), ctx, path="m.py", old_string="a", new_string="a")


def test_edit_creates_a_missing_file_with_empty_old_string(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    result = call(Edit(), ctx, path="pkg/new.py", old_string="", new_string="x = 1\n")
    assert result.output == "Created pkg/new.py (1 line)."
    assert (project / "pkg/new.py").read_text() == "x = 1\n"
    # on a file that has text, an empty old_string adds new_string at the end
    added = call(Edit(), ctx, path="pkg/new.py", old_string="", new_string="y = 2")
    assert added.output.startswith("[old_string was empty, so new_string was added at the end")
    assert (project / "pkg/new.py").read_text() == "x = 1\ny = 2\n"


def test_edit_missing_file_suggests_names(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "main.py").write_text("x\n")
    with pytest.raises(ToolError, match="Did you mean: main.py"):
        call(Edit(), ctx, path="mian.py", old_string="x", new_string="y")


def test_edit_keeps_crlf_line_endings(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    call(Edit(), ctx, path="w.txt", old_string="one\ntwo", new_string="1\n2")
    assert (project / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_edit_refuses_binary_files(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "b.bin").write_bytes(b"\x00abc")
    with pytest.raises(ToolError, match="binary"):
        call(Edit(), ctx, path="b.bin", old_string="abc", new_string="x")
