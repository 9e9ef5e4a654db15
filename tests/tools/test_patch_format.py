"""Unit tests for the "*** Begin Patch" format engine (parsing and planning, no I/O)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import pytest

from totem.tools.patch_format import (
    AddFile,
    Chunk,
    DeleteFile,
    FileChange,
    PatchError,
    UpdateFile,
    affected_paths,
    parse_patch,
    plan_patch,
)


def P(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"])


def reader(files: dict[str, str]) -> Callable[[str], str | None]:
    def read_file(path: str) -> str | None:
        return files.get(path)

    return read_file


def apply(files: dict[str, str], patch: str) -> dict[str, str]:
    """Plan the patch and apply the changes, in order, to a copy of `files`."""
    result = dict(files)
    for change in plan_patch(patch, reader(files)):
        if change.new is None:
            del result[change.path]
        elif change.move_to is not None:
            del result[change.path]
            result[change.move_to] = change.new
        else:
            result[change.path] = change.new
    return result


def update(content: str, *lines: str) -> str:
    return apply({"f": content}, P("*** Update File: f", *lines))["f"]


# --------------------------------------------------------------------------- parsing


def test_parse_every_operation() -> None:
    ops = parse_patch(
        P(
            "*** Add File: path/new.txt",
            "+line one",
            "+line two",
            "*** Update File: path/a.py",
            "*** Move to: path/b.py",
            "@@ def foo():",
            " context",
            "-old",
            "+new",
            "@@",
            "-tail",
            "*** End of File",
            "*** Delete File: path/old.txt",
        )
    )
    assert ops == [
        AddFile("path/new.txt", "line one\nline two\n"),
        UpdateFile(
            "path/a.py",
            "path/b.py",
            (
                Chunk("def foo():", ((" ", "context"), ("-", "old"), ("+", "new"))),
                Chunk(None, (("-", "tail"),), end_of_file=True),
            ),
        ),
        DeleteFile("path/old.txt"),
    ]
    chunk = ops[1].chunks[0] if isinstance(ops[1], UpdateFile) else None
    assert chunk is not None
    assert chunk.old_lines == ["context", "old"]
    assert chunk.new_lines == ["context", "new"]


def test_parse_empty_line_is_empty_context_and_first_chunk_needs_no_marker() -> None:
    [op] = parse_patch(P("*** Update File: f", " a", "", "+b"))
    assert op == UpdateFile("f", None, (Chunk(None, ((" ", "a"), (" ", ""), ("+", "b"))),))


def test_parse_add_file_without_lines_is_empty() -> None:
    assert parse_patch(P("*** Add File: empty")) == [AddFile("empty", "")]


def test_parse_is_lenient_about_padding_crlf_and_heredoc() -> None:
    expected: list[AddFile | DeleteFile | UpdateFile] = [AddFile("f", "x\n")]
    padded = "  *** Begin Patch \n  *** Add File: f  \n+x\n *** End Patch\n\n"
    assert parse_patch(padded) == expected
    assert parse_patch(P("*** Add File: f", "+x").replace("\n", "\r\n")) == expected
    for start in ("<<EOF", "<<'EOF'", '<<"EOF"'):
        assert parse_patch(f"{start}\n{P('*** Add File: f', '+x')}\nEOF\n") == expected


def test_parse_markers_that_keep_their_text() -> None:
    [op] = parse_patch(P("*** Update File: f ", "*** Move to:  g \t", "@@   ctx  ", "-a"))
    assert isinstance(op, UpdateFile)
    assert (op.path, op.move_to, op.chunks[0].context) == ("f", " g", "  ctx")
    # An indented marker inside an update is an ordinary context line.
    [op] = parse_patch(P("*** Update File: f", "@@", "-a", " *** End of File"))
    assert isinstance(op, UpdateFile)
    assert op.chunks[0].lines == (("-", "a"), (" ", "*** End of File"))
    assert not op.chunks[0].end_of_file


def test_parse_blank_lines_after_end_of_file_are_skipped() -> None:
    [op] = parse_patch(P("*** Update File: f", "@@", "-a", "*** End of File", "", "\t", "@@", "+b"))
    assert isinstance(op, UpdateFile)
    assert len(op.chunks) == 2


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ("", "last line must be '*** End Patch'"),
        ("*** Add File: f\n+x\n*** End Patch", "first line must be '*** Begin Patch'"),
        ("*** Begin Patch\n*** Add File: f\n+x", "last line must be '*** End Patch'"),
        (P("*** Frob File: f"), "line 2: '*** Frob File: f' is not a valid file header"),
        (P("*** Add File: f", "+x", "", "*** Add File: g"), "line 4: '' is not a valid"),
        (P("*** Add File: f", "oops"), "every line starts with '+'"),
        (P("*** Update File: f"), "the update of 'f' has no changes"),
        (P("*** Update File: f", "@@"), "line 4: a chunk of an update contains no lines"),
        (P("*** Update File: f", "@@", "*** End of File"), "contains no lines"),
        (P("*** Update File: f", "zzz"), "line 3: unexpected line in an update: 'zzz'"),
        (P("*** Update File: f", "@@", "-a", "\tx"), "line 5: expected a chunk to start with '@@'"),
        (P("*** Update File: f", "\t", "@@", "-a"), "unexpected line in an update"),
        (P("*** Delete File: f", "+x"), "'+x' is not a valid file header"),
    ],
)
def test_parse_errors_say_what_is_wrong(patch: str, message: str) -> None:
    with pytest.raises(PatchError, match="Invalid patch") as caught:
        parse_patch(patch)
    assert message in str(caught.value)


def test_parse_errors_explain_the_format() -> None:
    with pytest.raises(PatchError, match=r"\*\*\* Update File: <path>"):
        parse_patch("just some text")


def test_affected_paths_includes_move_targets_once() -> None:
    ops = parse_patch(
        P(
            "*** Update File: a",
            "*** Move to: b",
            "@@",
            "-x",
            "*** Add File: c",
            "*** Delete File: a",
            "*** Update File: b",
            "@@",
            "-y",
        )
    )
    assert affected_paths(ops) == ["a", "b", "c"]


# --------------------------------------------------------------------------- planning


def test_plan_add_update_delete_move_in_one_patch() -> None:
    files = {"a.py": "x = 1\ny = 2\n", "old.txt": "bye\n", "m.txt": "keep\nme\n"}
    patch = P(
        "*** Add File: pkg/new.py",
        "+print(1)",
        "*** Update File: a.py",
        "@@",
        "-x = 1",
        "+x = 10",
        " y = 2",
        "*** Delete File: old.txt",
        "*** Update File: m.txt",
        "*** Move to: moved/m.txt",
        "@@",
        " keep",
        "-me",
        "+you",
    )
    changes = plan_patch(patch, reader(files))
    assert changes == [
        FileChange("pkg/new.py", None, None, "print(1)\n"),
        FileChange("a.py", None, "x = 1\ny = 2\n", "x = 10\ny = 2\n"),
        FileChange("old.txt", None, "bye\n", None),
        FileChange("m.txt", "moved/m.txt", "keep\nme\n", "keep\nyou\n"),
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        changes[0].path = "other"  # type: ignore[misc]


def test_plan_update_with_several_chunks_and_context_headers() -> None:
    content = "class A:\n    def f(self):\n        return 1\nclass B:\n    def f(self):\n" + (
        "        return 1\n"
    )
    result = update(
        content,
        "@@ class A:",
        "     def f(self):",
        "-        return 1",
        "+        return 0",
        "@@ class B:",
        "     def f(self):",
        "-        return 1",
        "+        return 2",
    )
    assert result == content.replace("1", "0", 1).replace("1", "2")
    result = update("1\n2\n3\n4\n5\n6\n", "@@", " 1", "-2", "+two", "@@", "-5", "+five", " 6")
    assert result == "1\ntwo\n3\n4\nfive\n6\n"


def test_plan_one_context_header_per_chunk() -> None:
    # Like the reference, a header must be followed by the chunk's lines.
    with pytest.raises(PatchError, match="one '@@ <context line>' per chunk"):
        update("class B:\n  def f():\n    pass\n", "@@ class B:", "@@   def f():", "-    pass")


def test_plan_end_of_file_chunk_matches_the_last_lines() -> None:
    assert update("b\nx\nb\n", "@@", "-b", "+B", "*** End of File") == "b\nx\nB\n"
    with pytest.raises(PatchError, match="Failed to find expected lines at the end of f"):
        update("a\nb\nc\n", "@@", "-b", "+B", "*** End of File")


def test_plan_uses_the_first_match_after_the_previous_chunk() -> None:
    assert update("x\ny\nx\n", "@@", "-x", "+X") == "X\ny\nx\n"
    assert update("x\ny\nx\n", "@@", "-x", "+X", "@@", "-x", "+Z") == "X\ny\nZ\n"
    assert update("x\ny\nx\n", "@@ y", "-x", "+X") == "x\ny\nX\n"


def test_plan_pure_addition_appends_at_the_end() -> None:
    assert update("a\nb\n", "@@ a", "+x") == "a\nb\nx\n"
    assert update("", "@@", "+x") == "x\n"
    assert update("a\nb\n", "@@", "+x", "@@", " a", "+y") == "a\ny\nb\nx\n"


def test_plan_lenient_matching_keeps_the_file_text_of_context_lines() -> None:
    # trailing whitespace, then surrounding whitespace, then typographic punctuation
    assert update("a  \nb\n", "@@", " a", "-b", "+B") == "a  \nB\n"
    assert update("  a  \nb\n", "@@", " a", "-b", "+B") == "  a  \nB\n"
    text = "it\u2019s \u201cso\u201d \u2014 fine\u00a0now\nb\n"
    assert update(text, "@@", ' it\'s "so" - fine now', "-b", "+B") == text.replace("b", "B")
    # an exact match later in the file wins over a fuzzy one earlier
    assert update("x \nx\n", "@@", "-x", "+y") == "x \ny\n"


def test_plan_keeps_line_endings() -> None:
    assert update("a\r\nb\r\nc\r\n", "@@", " a", "-b", "+B", "+X") == "a\r\nB\r\nX\r\nc\r\n"
    # new lines take the first line ending of the file; other lines keep their own
    assert update("a\nb\r\nc\r\n", "@@", " b", "+X", " c") == "a\nb\r\nX\nc\r\n"
    assert update("a\rb\nc\n", "@@", " a", "+X") == "a\rX\rb\nc\n"
    # a replaced line is a new line, even with the same text
    assert update("a\nb\r\n", "@@", "-b", "+b") == "a\nb\n"


def test_plan_adds_a_missing_final_newline() -> None:
    assert update("a\nb\nc", "@@", " a", "-b", "+B") == "a\nB\nc\n"
    assert update("a\r\nb", "@@", "-b", "+B") == "a\r\nB\r\n"
    assert update("a\n", "@@", "-a") == ""


def test_plan_trailing_empty_line_stands_for_the_final_newline() -> None:
    assert update("a\nb\n", "@@", " a", "-b", "+B", " ") == "a\nB\n"
    assert update("a\nb\n", "@@", "-b", "-", "+B", "+") == "a\nB\n"
    assert update("a\nb\n", "@@", "-b", "+B", "+") == "a\nB\n\n"


def test_plan_operations_apply_in_order() -> None:
    assert apply({}, P("*** Add File: f", "+a", "*** Update File: f", "@@", "-a", "+b")) == {
        "f": "b\n"
    }
    moved = P(
        "*** Update File: f",
        "*** Move to: g",
        "@@",
        "-a",
        "+A",
        "*** Update File: g",
        "@@",
        "-b",
        "+B",
    )
    assert apply({"f": "a\nb\n"}, moved) == {"g": "A\nB\n"}
    changes = plan_patch(P("*** Delete File: f", "*** Add File: f", "+new"), reader({"f": "old\n"}))
    assert changes == [FileChange("f", None, "old\n", None), FileChange("f", None, None, "new\n")]
    with pytest.raises(PatchError, match="Cannot update f"):
        plan_patch(P("*** Delete File: f", "*** Update File: f", "@@", "-a"), reader({"f": "a\n"}))


def test_plan_add_over_an_existing_file_replaces_it() -> None:
    # The reference overwrites silently; `old` lets the caller tell.
    assert plan_patch(P("*** Add File: f", "+new"), reader({"f": "old\n"})) == [
        FileChange("f", None, "old\n", "new\n")
    ]


def test_plan_move_onto_an_existing_file_replaces_it() -> None:
    files = {"f": "a\n", "g": "other\n"}
    assert apply(files, P("*** Update File: f", "*** Move to: g", "@@", "-a", "+b")) == {"g": "b\n"}


def test_plan_move_onto_itself_is_an_update_in_place() -> None:
    # The reference deletes the file here (it writes the target, then removes the source);
    # an update in place is what the patch means.
    changes = plan_patch(
        P("*** Update File: f", "*** Move to: ./f", "@@", "-a", "+b"), reader({"f": "a\n"})
    )
    assert changes == [FileChange("f", None, "a\n", "b\n")]


def test_plan_reads_each_path_as_written() -> None:
    seen: list[str] = []

    def read_file(path: str) -> str | None:
        seen.append(path)
        return "a\n" if path == "dir/f" else None

    plan_patch(P("*** Update File: dir/f", "*** Move to: g", "@@", "-a"), read_file)
    assert seen == ["dir/f"]


@pytest.mark.parametrize(
    ("files", "patch", "message"),
    [
        (
            {"f": "a\nb\n"},
            P("*** Update File: f", "@@", " a", "-c"),
            "Failed to find expected lines in f:\na\nc\n",
        ),
        ({"f": "a\n"}, P("*** Update File: f", "@@ nope", "-a"), "Failed to find context 'nope'"),
        ({"f": "a\nb\n"}, P("*** Update File: f", "@@ a", "-a"), "Failed to find expected lines"),
        ({}, P("*** Update File: f", "@@", "-a"), "Cannot update f: the file does not exist"),
        ({}, P("*** Delete File: f"), "Cannot delete f: the file does not exist"),
        ({}, P(), "The patch contains no file operations"),
        (
            {"f": "a\n"},
            P("*** Update File: f", "@@", "-a", "+b", "*** Update File: g", "@@", "-x"),
            "Cannot update g",
        ),
    ],
)
def test_plan_errors_name_the_file_and_the_fix(
    files: dict[str, str], patch: str, message: str
) -> None:
    with pytest.raises(PatchError) as caught:
        plan_patch(patch, reader(files))
    text = str(caught.value)
    assert message in text
    assert "no file was changed" in text.lower() or "nothing was changed" in text.lower()


def test_plan_is_fast_on_large_files() -> None:
    content = "".join(f"line {n}\n" for n in range(50_000))
    patch = P(
        "*** Update File: f",
        "@@ line 49000",
        "  line 49997 ",
        "-line 49998",
        "+changed",
        "@@",
        "-missing",
    )
    started = time.perf_counter()
    with pytest.raises(PatchError, match="missing"):
        plan_patch(patch, reader({"f": content}))
    assert update(content, "@@", " line 49997 ", "-line 49998", "+x").count("x\n") == 1
    assert time.perf_counter() - started < 5
