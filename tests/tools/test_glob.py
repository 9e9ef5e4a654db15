from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.tool_calls import Call
from totem.tools.base import ToolContext, ToolError
from totem.tools.glob import Glob, compile_glob


def touch(path: Path, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    os.utime(path, (mtime, mtime))


def test_compile_glob() -> None:
    assert compile_glob("**/*.py").fullmatch("a.py")
    assert compile_glob("**/*.py").fullmatch("src/pkg/a.py")
    assert compile_glob("*.py").fullmatch("src/a.py")  # no '/': any depth
    assert not compile_glob("src/*.py").fullmatch("src/pkg/a.py")
    assert compile_glob("src/**/test_*.py").fullmatch("src/test_a.py")
    assert compile_glob("*.{ts,tsx}").fullmatch("ui/App.tsx")
    assert not compile_glob("*.{ts,tsx}").fullmatch("ui/App.js")
    assert compile_glob("file[0-9].txt").fullmatch("file3.txt")
    assert compile_glob("file[!0-9].txt").fullmatch("filex.txt")
    assert compile_glob("./docs/*.md").fullmatch("docs/a.md")
    assert not compile_glob("a?c").fullmatch("a/c")


def test_newest_first_relative_to_root(project: Path, ctx: ToolContext, call: Call) -> None:
    touch(project / "old.py", 1_000_000)
    touch(project / "src" / "new.py", 3_000_000)
    touch(project / "src" / "mid.py", 2_000_000)
    touch(project / "notes.md", 4_000_000)
    result = call(Glob(), ctx, pattern="**/*.py")
    assert result.output == "src/new.py\nsrc/mid.py\nold.py"
    assert call(Glob(), ctx, pattern="*.py", path="src").output == "src/new.py\nsrc/mid.py"


def test_skips_git_node_modules_and_venv(project: Path, ctx: ToolContext, call: Call) -> None:
    for folder in (".git", "node_modules", ".venv", "src"):
        touch(project / folder / "x.js", 1_000_000)
    assert call(Glob(), ctx, pattern="**/*.js").output == "src/x.js"


def test_capped_at_100_with_a_note(project: Path, ctx: ToolContext, call: Call) -> None:
    for n in range(130):
        touch(project / f"f{n:03}.txt", 1_000_000 + n)
    lines = call(Glob(), ctx, pattern="*.txt").output.splitlines()
    assert lines[0] == "f129.txt"
    assert len([line for line in lines if line.endswith(".txt")]) == 100
    assert "Showing the 100 newest of 130 files" in lines[-1]


def test_no_match_and_bad_input(project: Path, ctx: ToolContext, call: Call) -> None:
    assert "No files match *.rs" in call(Glob(), ctx, pattern="*.rs").output
    (project / "f.txt").write_text("")
    with pytest.raises(ToolError, match="not a folder"):
        call(Glob(), ctx, pattern="*", path="f.txt")
    with pytest.raises(ToolError, match="relative"):
        call(Glob(), ctx, pattern="/etc/*")
