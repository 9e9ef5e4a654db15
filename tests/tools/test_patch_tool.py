from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tool_calls import Call, MakeContext, SnapshotLog, answering
from totem.policy.permission import PermissionDenied
from totem.tools.base import ToolContext, ToolError
from totem.tools.patch import Patch


def patch(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"])


def test_add_update_delete_move(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("def main():\n    print('hi')\n    return 0\n")
    (project / "old.txt").write_text("bye\n")
    (project / "name.txt").write_text("a\nb\n")
    text = patch(
        "*** Add File: docs/new.md",
        "+# New",
        "+text",
        "*** Update File: src/app.py",
        "@@ def main():",
        "-    print('hi')",
        "+    print('hello')",
        "     return 0",
        "*** Delete File: old.txt",
        "*** Update File: name.txt",
        "*** Move to: renamed/name.txt",
        "@@",
        " a",
        "-b",
        "+c",
    )
    result = call(Patch(), ctx, patch=text)
    assert result.output.splitlines() == [
        "A docs/new.md",
        "M src/app.py",
        "D old.txt",
        "R name.txt -> renamed/name.txt",
    ]
    assert (project / "docs/new.md").read_text() == "# New\ntext\n"
    assert "print('hello')" in (project / "src/app.py").read_text()
    assert not (project / "old.txt").exists()
    assert not (project / "name.txt").exists()
    assert (project / "renamed/name.txt").read_text() == "a\nc\n"
    assert isinstance(ctx.snapshots, SnapshotLog)
    assert dict(ctx.snapshots.saved) == {
        str(project / "docs/new.md"): None,
        str(project / "src/app.py"): b"def main():\n    print('hi')\n    return 0\n",
        str(project / "old.txt"): b"bye\n",
        str(project / "name.txt"): b"a\nb\n",
        str(project / "renamed/name.txt"): None,
    }


def test_nothing_changes_when_a_hunk_fails(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "a.txt").write_text("one\n")
    (project / "b.txt").write_text("two\n")
    text = patch(
        "*** Update File: a.txt",
        "@@",
        "-one",
        "+ONE",
        "*** Update File: b.txt",
        "@@",
        "-three",
        "+THREE",
    )
    with pytest.raises(ToolError, match="Failed to find expected lines in b.txt"):
        call(Patch(), ctx, patch=text)
    assert (project / "a.txt").read_text() == "one\n"
    assert isinstance(ctx.snapshots, SnapshotLog) and ctx.snapshots.saved == []


def test_malformed_patch(ctx: ToolContext, call: Call) -> None:
    with pytest.raises(ToolError, match="Begin Patch"):
        call(Patch(), ctx, patch="--- a/x\n+++ b/x\n")
    with pytest.raises(ToolError, match="no file operations"):
        call(Patch(), ctx, patch=patch())


def test_update_of_a_missing_file(ctx: ToolContext, call: Call) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        call(Patch(), ctx, patch=patch("*** Update File: nope.txt", "@@", "-a", "+b"))


def test_asks_edit_with_every_path(project: Path, make_ctx: MakeContext, call: Call) -> None:
    (project / "a.txt").write_text("one\n")
    ctx = make_ctx()
    asked = answering(ctx, "reject")
    text = patch("*** Add File: b.txt", "+x", "*** Update File: a.txt", "@@", "-one", "+1")
    with pytest.raises(PermissionDenied):
        call(Patch(), ctx, patch=text)
    assert asked[0].permission == "edit"
    assert asked[0].patterns == ["b.txt", "a.txt"]
    assert not (project / "b.txt").exists()


def test_keeps_crlf(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    call(Patch(), ctx, patch=patch("*** Update File: w.txt", "@@", " one", "-two", "+2"))
    assert (project / "w.txt").read_bytes() == b"one\r\n2\r\n"
