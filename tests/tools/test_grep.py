from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from tests.support.tool_calls import Call
from totem.tools.base import ToolContext, ToolError
from totem.tools.grep import Grep, cut_lines, find_ripgrep

BOTH = [
    pytest.param(Grep(ripgrep=True), id="ripgrep"),
    pytest.param(Grep(ripgrep=False), id="builtin"),
]


@pytest.fixture
def tree(project: Path) -> Path:
    (project / "src" / "pkg").mkdir(parents=True)
    (project / "src" / "main.py").write_text("import os\n\ndef main():\n    return os.name\n")
    (project / "src" / "pkg" / "util.py").write_text("def helper():\n    pass  # TODO\n")
    (project / "README.md").write_text("# Demo\nTODO: write docs\n")
    (project / "image.bin").write_bytes(b"\x00TODO\x00")
    (project / "node_modules" / "lib").mkdir(parents=True)
    (project / "node_modules" / "lib" / "x.js").write_text("TODO\n")
    return project


def test_ripgrep_is_found() -> None:
    assert find_ripgrep() is not None


@pytest.mark.parametrize("grep", BOTH)
def test_matches_as_path_line_text(grep: Grep, tree: Path, ctx: ToolContext, call: Call) -> None:
    result = call(grep, ctx, pattern="TODO")
    assert result.output == (
        "README.md:2: TODO: write docs\nsrc/pkg/util.py:2:     pass  # TODO\n\n"
        "[2 matches in 2 files.]"  # counted: small models cannot count lines
    )


@pytest.mark.parametrize("grep", BOTH)
def test_path_and_include(grep: Grep, tree: Path, ctx: ToolContext, call: Call) -> None:
    assert call(grep, ctx, pattern=r"def \w+", path="src").output == (
        "src/main.py:3: def main():\nsrc/pkg/util.py:1: def helper():\n\n"
        "[2 matches in 2 files.]"
    )
    assert call(grep, ctx, pattern="TODO", include="*.md").output == "README.md:2: TODO: write docs"
    assert call(grep, ctx, pattern="os", path="src/main.py").output == (
        "src/main.py:1: import os\nsrc/main.py:4:     return os.name\n\n[2 matches in 1 file.]"
    )


@pytest.mark.parametrize("grep", BOTH)
def test_capped_at_100_matches(grep: Grep, project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "a.txt").write_text("hit\n" * 80)
    (project / "b.txt").write_text("hit\n" * 80)
    lines = call(grep, ctx, pattern="hit").output.splitlines()
    assert lines[0] == "a.txt:1: hit"
    assert lines[99] == "b.txt:20: hit"
    assert "Showing 100 of 160 matches" in lines[-1]


@pytest.mark.parametrize("grep", BOTH)
def test_no_match_and_bad_regex(grep: Grep, tree: Path, ctx: ToolContext, call: Call) -> None:
    assert call(grep, ctx, pattern="nothing-here").output == "No matches for nothing-here."
    with pytest.raises(ToolError, match="grep failed"):
        call(grep, ctx, pattern="(unclosed")
    with pytest.raises(ToolError, match="does not exist"):
        call(grep, ctx, pattern="x", path="missing")


def test_ripgrep_respects_gitignore(tree: Path, ctx: ToolContext, call: Call) -> None:
    (tree / ".gitignore").write_text("build/\n")
    (tree / "build").mkdir()
    (tree / "build" / "out.txt").write_text("TODO generated\n")
    assert "build/out.txt" not in call(Grep(), ctx, pattern="TODO").output
    assert "build/out.txt" in call(Grep(ripgrep=False), ctx, pattern="TODO").output


@pytest.mark.parametrize("grep", BOTH)
def test_a_huge_matching_line_is_cut_not_fatal(
    grep: Grep, project: Path, ctx: ToolContext, call: Call
) -> None:
    """A minified bundle (one 2 MB line) that matches must not hide the other matches."""
    (project / "bundle.min.js").write_text("var a=1;" * 250_000 + "TODO" + "x" * 1000 + "\n")
    (project / "notes.txt").write_text("plain line\nTODO: small\n")
    lines = call(grep, ctx, pattern="TODO").output.splitlines()
    assert len(lines) == 4 and lines[2:] == ["", "[2 matches in 2 files.]"]
    bundle, notes = lines[:2]
    assert bundle.startswith("bundle.min.js:1: var a=1;var a=1;")
    assert bundle.endswith(" [... long line cut]")
    assert len(bundle) < 600
    assert notes == "notes.txt:2: TODO: small"


def test_line_reader_cuts_lines_of_any_length(tmp_path: Path) -> None:
    """The reader over a process's output keeps the start of a line far over 64 KiB and
    goes on with the next lines (asyncio's own line reader raises on it)."""
    script = "import sys; sys.stdout.write('a' * 300_000 + '\\nshort\\n' + 'b' * 70_000)"

    async def read() -> list[bytes]:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", script, stdout=asyncio.subprocess.PIPE
        )
        assert process.stdout is not None
        lines = [line async for line in cut_lines(process.stdout, limit=1000)]
        await process.wait()
        return lines

    assert asyncio.run(read()) == [b"a" * 1000, b"short", b"b" * 1000]


@pytest.mark.parametrize("grep", BOTH)
def test_text_with_regex_characters_is_found_as_written(
    grep: Grep, project: Path, ctx: ToolContext, call: Call
) -> None:
    """The 1.5B searched for test lines as they are written ("assert 1 + 1 == 2") and
    found nothing: `+` is a regex operator. With no match as an expression, the text is
    searched as written."""
    (project / "test_a.py").write_text("def test_one():\n    assert 1 + 1 == 2\n"
                                       "    check(fn(\n")
    shown = call(grep, ctx, pattern="assert 1 + 1 == 2").output
    assert shown.startswith("[No match as a regular expression; these are the matches of "
                            "the pattern as plain text.]\ntest_a.py:2:")
    assert call(grep, ctx, pattern="fn(").output.endswith("test_a.py:3:     check(fn(")
    assert call(grep, ctx, pattern=r"assert \d").output == "test_a.py:2:     assert 1 + 1 == 2"
