from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.support.tool_calls import Call, MakeContext
from totem.tools.base import ToolContext, ToolError, ToolSettings
from totem.tools.read import Read

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def test_numbers_lines_like_cat_n(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "a.py").write_text("import os\n\tprint(1)\r\n")
    result = call(Read(), ctx, path="a.py")
    assert result.output == "     1\timport os\n     2\t\tprint(1)"
    assert result.title == "a.py"


def test_offset_and_limit_say_how_to_read_on(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    result = call(Read(), ctx, path="long.txt", offset=3, limit=4)
    lines = result.output.splitlines()
    assert lines[:4] == ["     3\tline 3", "     4\tline 4", "     5\tline 5", "     6\tline 6"]
    assert "lines 3-6 of 10" in result.output
    assert "offset=7" in result.output


def test_default_limit_is_2000_lines(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "big.txt").write_text("x\n" * 2500)
    settings = ToolSettings(output_limit=1_000_000)
    ctx.settings = settings
    result = call(Read(), ctx, path="big.txt")
    assert "  2000\tx" in result.output
    assert "  2001\t" not in result.output
    assert "offset=2001" in result.output


def test_long_lines_are_cut(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "min.js").write_text("a" * 5000 + "\nshort\n")
    result = call(Read(), ctx, path="min.js")
    first, second = result.output.splitlines()[:2]
    assert len(first) < 2100 and "line cut at 2000 characters" in first
    assert second == "     2\tshort"


def test_output_limit_says_what_was_cut(project: Path, make_ctx: MakeContext, call: Call) -> None:
    (project / "f.txt").write_text("".join(f"{'y' * 40} {n}\n" for n in range(1, 101)))
    ctx = make_ctx(settings=ToolSettings(output_limit=500))
    result = call(Read(), ctx, path="f.txt")
    assert "Output limit reached" in result.output
    shown = [line for line in result.output.splitlines() if "\t" in line]
    assert 5 <= len(shown) < 100
    assert f"offset={len(shown) + 1}" in result.output


def test_empty_file(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "empty.txt").write_text("")
    assert call(Read(), ctx, path="empty.txt").output == "empty.txt is empty."


def test_offset_past_the_end(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "f.txt").write_text("one\ntwo\n")
    with pytest.raises(ToolError, match="offset 5 is past the end.*2 lines"):
        call(Read(), ctx, path="f.txt", offset=5)


def test_invalid_offset_is_a_tool_error(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "f.txt").write_text("one\n")
    with pytest.raises(ToolError, match="offset"):
        call(Read(), ctx, path="f.txt", offset=0)


def test_directory_listing(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "src").mkdir()
    (project / "b.txt").write_text("")
    (project / "a.txt").write_text("")
    assert call(Read(), ctx, path=".").output == "a.txt\nb.txt\nsrc/"
    assert call(Read(), ctx, path="src").output == "src/ is empty."


def test_binary_file_is_refused(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "data.bin").write_bytes(b"\x00\x01\x02binary")
    with pytest.raises(ToolError, match="binary file"):
        call(Read(), ctx, path="data.bin")


def test_image_comes_back_as_an_image_block(project: Path, ctx: ToolContext, call: Call) -> None:
    ctx.vision = True
    (project / "dot.png").write_bytes(PNG)
    result = call(Read(), ctx, path="dot.png")
    assert result.output == f"dot.png: an image (image/png, {len(PNG):,} bytes), attached."
    assert len(result.images) == 1
    assert result.images[0].media_type == "image/png"
    assert base64.b64decode(result.images[0].data) == PNG


def test_missing_file_suggests_similar_names(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "src").mkdir()
    (project / "src" / "config.py").write_text("")
    with pytest.raises(
        ToolError, match=r"src/confg.py does not exist. Did you mean: src/config.py"
    ):
        call(Read(), ctx, path="src/confg.py")
    with pytest.raises(ToolError, match="nor does its folder"):
        call(Read(), ctx, path="nowhere/x.py")


def test_read_can_be_denied_by_a_rule(project: Path, make_ctx: MakeContext, call: Call) -> None:
    from totem.policy.permission import PermissionDenied, Rule

    (project / ".env").write_text("KEY=1\n")
    ctx = make_ctx(mode="headless", rules=[Rule("read", ".env", "deny")])
    with pytest.raises(PermissionDenied):
        call(Read(), ctx, path=".env")


def test_subfolder_agents_md_is_appended_once_per_run(
    project: Path, make_ctx: MakeContext, call: Call
) -> None:
    (project / "AGENTS.md").write_text("root rules\n")
    sub = project / "sub" / "deep"
    sub.mkdir(parents=True)
    (project / "sub" / "AGENTS.md").write_text("use tabs\n")
    (sub / "AGENTS.md").write_text("deep rules\n")
    (sub / "x.py").write_text("x = 1\n")
    (sub / "y.py").write_text("y = 1\n")
    ctx = make_ctx()
    first = call(Read(), ctx, path="sub/deep/x.py").output
    assert "Instructions from sub/AGENTS.md:\nuse tabs" in first
    assert "Instructions from sub/deep/AGENTS.md:\ndeep rules" in first
    assert first.index("sub/AGENTS.md") < first.index("sub/deep/AGENTS.md")
    assert "root rules" not in first
    assert "Instructions" not in call(Read(), ctx, path="sub/deep/y.py").output
    # A new run (a new permission service) gets them again.
    assert "use tabs" in call(Read(), make_ctx(), path="sub/deep/y.py").output


def test_reading_agents_md_itself_counts_as_loaded(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "sub").mkdir()
    (project / "sub" / "AGENTS.md").write_text("use tabs\n")
    (project / "sub" / "x.py").write_text("x = 1\n")
    assert "Instructions" not in call(Read(), ctx, path="sub/AGENTS.md").output
    assert "Instructions" not in call(Read(), ctx, path="sub/x.py").output


def test_a_unique_case_variant_is_read_and_said(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "README.md").write_text("# Name\n")
    result = call(Read(), ctx, path="readme.md")
    assert result.output.startswith("[readme.md does not exist; showing README.md]")
    assert "# Name" in result.output


def test_image_for_a_model_without_vision_is_a_clear_text(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "pic.png").write_bytes(PNG)
    ctx.vision = None
    result = call(Read(), ctx, path="pic.png")
    assert result.images == [] and "does not take images" in result.output


